"""Compile the kernels once, into numba's cache on disk (``python tests/numba_cache.py``).

numba compiles each kernel on its first call in a process, and keeps it in ``__pycache__``
(``cache=True``) for every later process. A fresh checkout has no cache: CI compiles it here
before the tests start in parallel, so that no two test processes compile the same kernel at
once. ``kernel`` warms the game kernel, its traced games and its replay; ``vector`` the
vector environment; the default, both, one after the other.
"""

from __future__ import annotations

import sys


def kernel() -> None:
    """The game kernel, traced games replayed into records, and the record replay."""
    from flyswat.sim.fast import records, simulate_fast
    from flyswat.sim.fast.replay import replay_record

    result = simulate_fast(2, 4, ["normal", "hard"], seed=1, trace=True)
    for record in records(result):
        replay_record(record)


def vector() -> None:
    """The vector environment: a reset and a few steps of two games."""
    import numpy as np

    from flyswat.env.vector import SoloVectorEnv

    env = SoloVectorEnv(2, 4)
    env.reset(seed=1)
    for _ in range(5):
        env.step(np.zeros(env.action_space.shape, dtype=env.action_space.dtype))


PARTS = {"kernel": kernel, "vector": vector}


def main(argv: list[str]) -> int:
    """Warm the parts named in ``argv`` (all by default); 2 for an unknown one."""
    names = argv or list(PARTS)
    unknown = [n for n in names if n not in PARTS]
    if unknown:
        print(f"unknown part(s) {unknown}: choose from {sorted(PARTS)}", file=sys.stderr)
        return 2
    for name in names:
        PARTS[name]()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
