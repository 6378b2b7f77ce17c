"""Many games of one learner against bots, stepped at once: a Gymnasium ``VectorEnv``.

:class:`SoloVectorEnv` ``(num_envs, ...)`` is ``gymnasium.vector.SyncVectorEnv`` over
``num_envs`` :class:`~flyswat.env.single.SoloEnv` — the same options, spaces, observations,
masks, rewards, terminations and infos, with the same autoreset (``NEXT_STEP``) — but every
game lives in the compiled kernel (:mod:`flyswat.sim.fast.vector`), so one core steps well over
100,000 slap rounds a second (``bench/vector.py``).

Same seeds, same games: a reset with a seed deals exactly what ``SoloEnv`` deals (the same
seed chain, the reference shuffle of R5) and picks the same start player. The reaction times
and the bots' choices are drawn from the kernel's generator, not Python's, so the games then
agree in distribution; with deterministic reaction models and bots (every hand at its floor,
no lapse, no misjudging, temperature 0) they agree step for step, which
``tests/test_vector.py`` checks against ``SyncVectorEnv`` itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from flyswat import bots
from flyswat.engine import Result
from flyswat.env import encoding
from flyswat.errors import MalformedError
from flyswat.rules import Rules
from flyswat.shuffle import shuffled
from flyswat.sim.fast import kernel, policy
from flyswat.sim.fast import vector as fv
from flyswat.sim.fast.batch import seat_params

SpeedLike = bots.LevelLike


class SoloVectorEnv(VectorEnv):
    """``num_envs`` games of ``SoloEnv(seats, seat=..., levels=..., speed=..., remove=...,
    helped=...)``, stepped together (module docstring). Raises :class:`MalformedError` for
    bad options."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}  # noqa: RUF012 - Gymnasium's shape

    def __init__(
        self,
        num_envs: int,
        seats: int = 4,
        *,
        seat: int = 0,
        levels: Sequence[SpeedLike] | SpeedLike = "normal",
        speed: SpeedLike = "normal",
        remove: int = 0,
        helped: bool = False,
    ) -> None:
        self.rules = Rules(seats=seats, remove=remove)
        if not (isinstance(num_envs, int) and num_envs >= 1):
            raise MalformedError(f"num_envs must be 1 or more, not {num_envs!r}", "bad_count")
        if not (isinstance(seat, int) and 0 <= seat < seats):
            raise MalformedError(f"no seat {seat!r} at a table of {seats}", "bad_seat")
        if isinstance(levels, str | bots.Level):
            levels = [levels]
        if not levels:
            raise MalformedError("give at least one bot level", "bad_level")
        others = [k for k in range(seats) if k != seat]
        per_seat: list[SpeedLike] = [speed] * seats
        for i, k in enumerate(others):
            per_seat[k] = levels[i % len(levels)]
        _, params = seat_params(per_seat, seats)
        self.num_envs = num_envs
        self.seat = seat
        self.helped = helped
        self._wf = np.zeros(policy.WF_SIZE, dtype=np.float64)
        policy.setup(self._wf, params)
        self._wi = np.zeros((num_envs, kernel.ROW), dtype=np.int64)
        hands = self.rules.hands
        self.single_observation_space = encoding.observation_space(hands)
        self.single_action_space = encoding.action_space(hands)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._obs = np.zeros((num_envs, encoding.OBS_SIZE), dtype=np.float32)
        self._masks = np.zeros((num_envs, hands, encoding.ACTIONS), dtype=np.int8)
        self._rewards = np.zeros(num_envs, dtype=np.float64)
        self._over = np.zeros(num_envs, dtype=np.bool_)
        self._autoreset = np.zeros(num_envs, dtype=np.bool_)
        self._rngs: list[np.random.Generator | None] = [None] * num_envs

    # -- the episode ---------------------------------------------------------------------------

    def _deal(self, g: int, seed: int | None) -> None:
        """Deal game ``g`` as ``SoloEnv.reset(seed=seed)`` does, and play to its first round."""
        if seed is not None:
            self._rngs[g] = seeding.np_random(seed)[0]
        rng = self._rngs[g]
        if rng is None:
            rng = self._rngs[g] = seeding.np_random()[0]
        if seed is None:
            seed = int(rng.integers(2**63))
        draw = np.random.default_rng(seed).integers(2**63, size=3 + self.rules.seats)
        deck = np.array([c.index for c in shuffled(int(draw[0]))], dtype=np.int64)
        fv.start(
            self._wi, g, self.rules.seats, deck, self.rules.remove,
            int(draw[1] % self.rules.seats), int(draw[2]), self.seat, self.rules.hands,
            self.helped, self._obs, self._masks,
        )  # fmt: skip

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Deal every game (game ``g`` seeded ``seed + g``, or ``seed[g]``) and play up to
        its first slap round; ``(observations, infos)``."""
        if seed is None or isinstance(seed, int):
            seeds = [None if seed is None else seed + g for g in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise MalformedError(f"{len(seeds)} seeds for {self.num_envs} games", "bad_seed")
        for g, s in enumerate(seeds):
            self._deal(g, s)
        self._autoreset[:] = False
        return self._observations(), self._infos(np.zeros(self.num_envs, dtype=np.bool_))

    def step(
        self, actions: Any
    ) -> tuple[dict[str, Any], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Play each game's open round with its row of ``actions``, then up to its next round;
        a game that ended on the previous step is dealt anew instead (reward 0)."""
        actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs, -1)
        restart = self._autoreset.copy()
        fv.step(
            self._wf, self._wi, ~restart, actions, self.rules.seats, self.rules.hands,
            self.rules.slap_window_ms, self.seat, self.helped, self._rewards, self._over,
            self._obs, self._masks,
        )  # fmt: skip
        for g in np.flatnonzero(restart):
            self._deal(int(g), None)
            self._rewards[g] = 0.0
            self._over[g] = False
        self._autoreset = self._over.copy()
        truncated = np.zeros(self.num_envs, dtype=np.bool_)
        return (
            self._observations(),
            self._rewards.copy(),
            self._over.copy(),
            truncated,
            self._infos(self._over),
        )

    # -- what the learner sees -------------------------------------------------------------------

    def _observations(self) -> dict[str, Any]:
        masks = tuple(self._masks[:, h].copy() for h in range(self.rules.hands))
        return {"observation": self._obs.copy(), "action_mask": masks}

    def _infos(self, over: np.ndarray) -> dict[str, Any]:
        n = self.num_envs
        points = np.array([kernel.points(self._wi[g], self.seat) for g in range(n)])
        infos: dict[str, Any] = {
            "points": points,
            "_points": np.ones(n, dtype=np.bool_),
            "turn": self._wi[:, kernel.TURN].copy(),
            "_turn": np.ones(n, dtype=np.bool_),
        }
        if over.any():
            places = np.zeros(n, dtype=np.int64)
            for g in np.flatnonzero(over):
                places[g] = self.result(int(g)).places[self.seat]
            infos |= {"place": places, "_place": over.copy()}
        return infos

    def result(self, g: int) -> Result:
        """Game ``g``'s points and places so far (R23, R24), as :class:`Result` ranks them."""
        row = self._wi[g]
        seats = range(self.rules.seats)
        return Result.rank(
            [kernel.points(row, s) for s in seats], [int(row[kernel.N_WON + s]) for s in seats]
        )
