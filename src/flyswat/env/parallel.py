"""Flyswat as a PettingZoo ``ParallelEnv``: every seat acts at once, one slap round a step.

A thin adapter of the reference engine (:class:`flyswat.engine.Game`) over the one round
driver (:mod:`flyswat.sim.driver`, the simulator's too): it deals, reveals, and lays the hands the
agents choose, in the order their reaction times give.

- **Episode**: one game. ``reset(seed=...)`` deals (R5–R7) and plays the reveals that only
  place a fly (R10, R11), and the rounds with an empty centre (R15), up to the first slap round
  that has something to slap. The game ends by R22: then every agent is terminated.
- **Step**: one slap round. Each agent gives an action (``encoding``: a fly or none per hand,
  R16). Speed is not part of the action but of the agent: each seat has a reaction-time model
  (a :class:`flyswat.bots.Level`, by name or object), from which the env draws the time of
  each hand laid, as the bots draw theirs (:func:`flyswat.bots.reaction_times`). All hands
  are applied in the order of their times, ties by seat, those at or past the slap window
  dropped (R21) — by the simulator's own driver.
- **Reward**: the points (R23) each seat won or lost in the round: flies won, less flies given
  back as penalties (R19). The rewards of an episode add up to each seat's final points.
- **Bots**: seats named in ``bot_seats`` are played by :func:`flyswat.bots.decide` and are not
  agents; :class:`flyswat.env.single.SoloEnv` uses this for one learner against bots.

Randomness: ``reset(seed=s)`` seeds a ``numpy`` generator from which the deal's seed, the
start player, the reaction times and the bots' generators are drawn; ``reset()`` without a
seed goes on with the same generator. Same seed and actions, same episode.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from flyswat import bots
from flyswat.bots import reaction_times
from flyswat.cards import DECK, Card
from flyswat.engine import Game, Result
from flyswat.env import encoding
from flyswat.errors import MalformedError
from flyswat.rules import Rules
from flyswat.sim import driver
from flyswat.view import view

SpeedLike = str | bots.Level


def agent_name(seat: int) -> str:
    """The agent id of ``seat``: ``"seat_0"``, ``"seat_1"``, …"""
    return f"seat_{seat}"


class FlyswatParallelEnv(ParallelEnv):  # type: ignore[misc]
    """Flyswat for several learning agents at once (module docstring: episode, step, reward).

    ``seats`` and ``remove`` are the rule options (R4, R6); ``speeds`` gives each seat's
    reaction-time model (one for all, or one per seat, cycled); ``bot_seats`` maps the seats
    that are not agents to bot levels (names or :class:`flyswat.bots.Level`); ``helped`` adds
    the allowed colours to the observation (:mod:`flyswat.env.encoding`: by default an agent
    judges them from the centre, as people and bots do). Raises :class:`MalformedError` for
    bad options.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "flyswat_v0",
        "render_modes": ["ansi"],
        "is_parallelizable": True,
    }

    def __init__(
        self,
        seats: int = 4,
        *,
        remove: int = 0,
        speeds: SpeedLike | Sequence[SpeedLike] = "normal",
        bot_seats: Mapping[int, SpeedLike] | None = None,
        helped: bool = False,
        render_mode: str | None = None,
    ) -> None:
        self.rules = Rules(seats=seats, remove=remove)
        self.helped = helped
        if isinstance(speeds, str | bots.Level):
            speeds = [speeds]
        if not speeds:
            raise MalformedError("give at least one speed", "bad_level")
        self.speeds = [_level(speeds[k % len(speeds)]) for k in range(seats)]
        self.bot_levels: dict[int, bots.Level] = {}
        for seat, level in (bot_seats or {}).items():
            if not (isinstance(seat, int) and 0 <= seat < seats):
                raise MalformedError(f"no seat {seat!r} for a bot", "bad_seat")
            self.bot_levels[seat] = _level(level)
        self.possible_agents = [agent_name(k) for k in range(seats) if k not in self.bot_levels]
        if not self.possible_agents:
            raise MalformedError("at least one seat must be an agent", "bad_seat")
        self._seat = {agent_name(k): k for k in range(seats)}
        if render_mode not in (None, "ansi"):
            raise MalformedError(f"unknown render mode {render_mode!r}", "bad_render_mode")
        self.render_mode = render_mode
        self.agents: list[str] = []
        self.game: Game | None = None
        self._np_random = np.random.default_rng()
        self._times = random.Random(0)
        self._bot_rngs: dict[int, random.Random] = {}

    @functools.cache  # noqa: B019 - PettingZoo asks for the same object
    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The same :func:`encoding.observation_space` object for every call with ``agent``."""
        return encoding.observation_space(self.rules.hands)

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> spaces.Space[Any]:
        """The same :func:`encoding.action_space` object for every call with ``agent``."""
        return encoding.action_space(self.rules.hands)

    # -- the episode -------------------------------------------------------------------------

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """Deal a new game and play up to its first slap round; ``(observations, infos)``."""
        if seed is not None:
            self._np_random = np.random.default_rng(seed)
        draw = self._np_random.integers(2**63, size=3 + self.rules.seats)
        start = int(draw[1] % self.rules.seats)
        self.game = Game.new(self.rules, int(draw[0]), start)
        self._times = random.Random(int(draw[2]))
        self._bot_rngs = {s: random.Random(int(draw[3 + s])) for s in self.bot_levels}
        self.agents = list(self.possible_agents)
        self._advance()
        return self._observe(), self._infos()

    def step(
        self, actions: Mapping[str, Any]
    ) -> tuple[
        dict[str, Any],
        dict[str, float],
        dict[str, bool],
        dict[str, bool],
        dict[str, dict[str, Any]],
    ]:
        """Play the open slap round with the agents' ``actions``, then up to the next one.

        An agent missing from ``actions`` lays no hand. Returns PettingZoo's five dicts;
        after the last step ``agents`` is empty. Raises :class:`MalformedError` if called
        with no game going (before :meth:`reset` or after the end).
        """
        game = self.game
        if game is None or not self.agents:
            raise MalformedError("no game going: call reset()", "no_game")
        before = game.points()
        if game.round is not None:
            self._play_round(game, actions)
        self._advance()
        after = game.points()
        agents = list(self.agents)
        rewards = {a: float(after[self._seat[a]] - before[self._seat[a]]) for a in agents}
        observations, infos = self._observe(), self._infos()
        terminations = dict.fromkeys(agents, game.over)
        truncations = dict.fromkeys(agents, False)
        if game.over:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _play_round(self, game: Game, actions: Mapping[str, Any]) -> None:
        planned: list[driver.Planned] = []
        for agent in self.agents:
            seat = self._seat[agent]
            cards = self.targets(seat, actions.get(agent))
            times = reaction_times(self.speeds[seat], len(cards), self._times)
            planned += [(ms, seat, card) for ms, card in zip(times, cards, strict=True)]
        planned += driver.bot_hands(game, self.bot_levels, self._bot_rngs)
        driver.play_round(game, planned)

    def targets(self, seat: int, action: Any) -> list[Card]:
        """The flies that ``action`` lays ``seat``'s hands on: legal entries, in hand order."""
        if action is None or self.game is None:
            return []
        centre = set(self.game.centre)
        cards: list[Card] = []
        for entry in np.asarray(action).reshape(-1)[: self.rules.hands]:
            i = int(entry)
            if 0 <= i < encoding.FLIES and DECK[i] in centre and DECK[i] not in cards:
                cards.append(DECK[i])
        return cards

    def _game(self) -> Game:
        if self.game is None:
            raise MalformedError("no game going: call reset()", "no_game")
        return self.game

    def _advance(self) -> None:
        driver.advance(self._game())

    def _observe(self) -> dict[str, Any]:
        game = self._game()
        helped = self.helped
        return {a: encoding.observe(view(game, self._seat[a]), helped) for a in self.agents}

    def _infos(self) -> dict[str, dict[str, Any]]:
        game = self._game()
        points = game.points()
        infos: dict[str, dict[str, Any]] = {}
        for a in self.agents:
            info: dict[str, Any] = {"points": points[self._seat[a]], "turn": len(game.turns)}
            if game.over:
                info["place"] = game.result().places[self._seat[a]]
            infos[a] = info
        return infos

    def result(self) -> Result:
        """The result of the game just played (R23, R24); raises unless it is over."""
        return self._game().result()

    def render(self) -> str | None:
        """With ``render_mode="ansi"``, the centre and the scores as text."""
        if self.render_mode != "ansi" or self.game is None:
            return None
        game = self.game
        centre = " ".join(c.text for c in game.centre) or "(empty)"
        return f"turn {len(game.turns)}  centre: {centre}  points: {game.points()}"

    def close(self) -> None:
        """Nothing to release."""


def _level(speed: SpeedLike) -> bots.Level:
    return bots.params(speed)
