"""One learning seat against bots, as a Gymnasium ``Env``.

A thin wrapper of :class:`~flyswat.env.parallel.FlyswatParallelEnv` in which every seat but
``seat`` is a bot (:func:`flyswat.bots.decide`). Observations, actions and rewards are those
of that seat (:mod:`flyswat.env.encoding`); an episode is one game, ``terminated`` when it
ends (R22), never truncated. ``info`` holds the seat's ``points`` and, at the end, its
``place`` (R24).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym

from flyswat.bots import Level
from flyswat.env.parallel import FlyswatParallelEnv, SpeedLike, agent_name
from flyswat.errors import MalformedError


class SoloEnv(gym.Env[Any, Any]):
    """Seat ``seat`` learns; the others are bots at ``levels`` (cycled over them in seat
    order; names or :class:`flyswat.bots.Level`); ``speed`` is the learner's reaction-time
    model (R21 applies to it as to all); ``helped`` as in :class:`FlyswatParallelEnv`.

    Raises :class:`MalformedError` for bad options.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012 - Gymnasium's shape

    def __init__(
        self,
        seats: int = 4,
        *,
        seat: int = 0,
        levels: Sequence[SpeedLike] | SpeedLike = "normal",
        speed: SpeedLike = "normal",
        remove: int = 0,
        helped: bool = False,
        render_mode: str | None = None,
    ) -> None:
        if isinstance(levels, str | Level):
            levels = [levels]
        if not levels:
            raise MalformedError("give at least one bot level", "bad_level")
        if not (isinstance(seat, int) and 0 <= seat < seats):
            raise MalformedError(f"no seat {seat!r} at a table of {seats}", "bad_seat")
        others = [k for k in range(seats) if k != seat]
        self.env = FlyswatParallelEnv(
            seats,
            remove=remove,
            speeds=speed,
            bot_seats={k: levels[i % len(levels)] for i, k in enumerate(others)},
            helped=helped,
            render_mode=render_mode,
        )
        self.seat = seat
        self.agent = agent_name(seat)
        self.observation_space = self.env.observation_space(self.agent)
        self.action_space = self.env.action_space(self.agent)
        self.render_mode = render_mode

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Deal a new game and play up to the learner's first slap round."""
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(2**63))
        obs, infos = self.env.reset(seed=seed, options=options)
        return obs[self.agent], infos[self.agent]

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Play the open round with ``action``; ``(obs, reward, terminated, False, info)``."""
        obs, rewards, terms, truncs, infos = self.env.step({self.agent: action})
        return (
            obs[self.agent],
            rewards[self.agent],
            terms[self.agent],
            truncs[self.agent],
            infos[self.agent],
        )

    def render(self) -> str | None:
        """With ``render_mode="ansi"``, the centre and the scores as text."""
        return self.env.render()
