"""The fast simulator: bot games by the million, for balance studies and research.

- :func:`simulate_fast` plays many games in a compiled kernel (:mod:`flyswat.sim.fast.kernel`)
  with the bots' own parameters and returns arrays (:class:`FastResult`);
- :func:`records` turns traced fast games into game records, by replaying their facts
  (deal, ordered slaps) through the reference engine — so every fast game can be verified;
- :func:`summary` condenses a result into :class:`flyswat.sim.summary.Summary`, the table
  ``flyswat simulate`` prints.

It agrees with the reference simulator (:mod:`flyswat.sim.reference`) in distribution, not game
for game: see ``tests/test_fast.py`` and ``docs/BALANCE.md``.
"""

from flyswat.sim.kernel_cache import keep_fresh

keep_fresh()  # before any kernel is loaded from numba's cache

from flyswat.sim.fast.batch import (  # noqa: E402
    FastResult,
    game,
    records,
    simulate_fast,
    with_faster_hand,
)
from flyswat.sim.fast.summary import summary  # noqa: E402

__all__ = ["FastResult", "game", "records", "simulate_fast", "summary", "with_faster_hand"]
