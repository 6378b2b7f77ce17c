"""Research environments over the reference engine: the same rules, driven by agents.

- :class:`FlyswatParallelEnv` — PettingZoo ``ParallelEnv``: every seat an agent (or some
  seats bots), one slap round per step, reward = points won or lost in the round;
- :class:`SoloEnv` — Gymnasium ``Env``: one learning seat against bots, registered as
  :data:`SOLO_ID`;
- :class:`flyswat.env.vector.SoloVectorEnv` — the same, many games at once in the compiled
  kernel, behind the Gymnasium vector API (its vector entry point);
- :mod:`flyswat.env.encoding` — the observation vector, the action space and its mask.

Both pass their library's own conformance checks (``tests/test_env.py``).
"""

from typing import Any

import gymnasium

from flyswat.bots import reaction_times
from flyswat.env.encoding import NO_HAND, OBS_SIZE, action_mask, encode, observe
from flyswat.env.parallel import FlyswatParallelEnv, agent_name
from flyswat.env.single import SoloEnv


def parallel_env(**kwargs: Any) -> FlyswatParallelEnv:
    """PettingZoo's conventional constructor: ``FlyswatParallelEnv(**kwargs)``."""
    return FlyswatParallelEnv(**kwargs)


#: The Gymnasium id of :class:`SoloEnv`: ``gymnasium.make("flyswat/Solo-v0", seats=4, ...)``;
#: ``gymnasium.make_vec(SOLO_ID, num_envs=n, vectorization_mode="vector_entry_point")`` makes
#: the compiled :class:`flyswat.env.vector.SoloVectorEnv`.
SOLO_ID = "flyswat/Solo-v0"
if SOLO_ID not in gymnasium.registry:
    gymnasium.register(
        id=SOLO_ID,
        entry_point="flyswat.env.single:SoloEnv",
        vector_entry_point="flyswat.env.vector:SoloVectorEnv",
    )

__all__ = [
    "NO_HAND",
    "OBS_SIZE",
    "SOLO_ID",
    "FlyswatParallelEnv",
    "SoloEnv",
    "action_mask",
    "agent_name",
    "encode",
    "observe",
    "parallel_env",
    "reaction_times",
]
