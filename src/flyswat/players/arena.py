"""The arena, pure: a timed tournament's phases, points by place, standings and pairing.

An arena (lichess's, adapted to tables of two to four) runs from ``starts`` to ``ends``.
Anyone joins while it has not ended. A player who is not at a table of it (just joined, or
their game just ended) *waits*; the waiting players are put at tables at once, in the order
of the standings, so that players of a like score meet, :func:`pair` choosing tables of two
to four (:func:`table_sizes`). A game gives each player with an identity who was rated in
it (PLAYERS.md) one **point for every player who finished behind them** (R22's places: on a
table of four 3, 2, 1, 0; a tie shares the place); a player who won their last two games is
**on fire** and scores double until a game they do not win (lichess's streak). A player
who is not rated in a game (out of rating by the fair-play rules) scores nothing for it and
loses their streak. A game counts for the arena only when it ends before the arena does:
at the end the standings are frozen (lichess: games still in progress do not count), and
the leader is its winner.

No clock, no I/O: ``now`` is an argument (seconds on the store's wall clock), as are the
standings; the store (:mod:`flyswat.server.arena_store`) keeps them and the routes
(:mod:`flyswat.server.arena_routes`) drive the same functions the tests do.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import Enum

#: A table of the arena holds this many players, at least and at most.
MIN_TABLE, MAX_TABLE = 2, 4
#: An arena lasts this many minutes, at least and at most; it starts at most this far ahead.
MIN_MINUTES, MAX_MINUTES = 1, 720
MAX_AHEAD_S = 7 * 24 * 3600
#: No table is paired in an arena's last seconds: a game started then could not end in time.
LAST_PAIRING_S = 30.0
#: A waiting player who has not asked for their arena this long is not paired (seconds):
#: they closed the page; asking again puts them back.
PRESENCE_S = 20.0
#: Wins in a row after which a player is on fire (their points doubled).
FIRE_AFTER = 2


class Phase(Enum):
    """Where an arena is in its life."""

    UPCOMING = "upcoming"
    """Not started: players may join; nobody is paired yet."""
    RUNNING = "running"
    """Between its start and its end: players join, wait and are paired."""
    ENDED = "ended"
    """Over: the standings are frozen, the leader is the winner."""


def phase(starts: float, ends: float, now: float) -> Phase:
    """The phase of an arena from ``starts`` to ``ends`` at ``now``."""
    if now < starts:
        return Phase.UPCOMING
    return Phase.RUNNING if now < ends else Phase.ENDED


def pairs_now(starts: float, ends: float, now: float) -> bool:
    """Does the arena put waiting players at tables at ``now``? While running, but not in
    its last :data:`LAST_PAIRING_S` seconds."""
    return starts <= now < ends - LAST_PAIRING_S


def counts(ends: float, game_ended: float) -> bool:
    """Does a game that ended at ``game_ended`` count for an arena that ends at ``ends``?"""
    return game_ended < ends


@dataclass(frozen=True, slots=True)
class Standing:
    """One player in an arena: points, games counted, wins (first places) and the wins in a
    row of their last games; ``joined`` (seconds) breaks the last tie."""

    player: str
    name: str
    joined: float
    points: int = 0
    games: int = 0
    wins: int = 0
    streak: int = 0

    @property
    def on_fire(self) -> bool:
        """Won the last :data:`FIRE_AFTER` games: the next game's points count double."""
        return self.streak >= FIRE_AFTER


def behind(places: Sequence[int], seat: int) -> int:
    """How many players finished behind ``seat`` (a larger place; a tie is not behind)."""
    mine = places[seat]
    return sum(1 for place in places if place > mine)


def scored(before: Standing, places: Sequence[int], seat: int, rated: bool) -> Standing:
    """``before`` after a counted game in which they sat at ``seat`` of a table whose places
    were ``places`` (1 is first); ``rated``: they were rated in that game (else it scores
    nothing and ends their streak)."""
    if not 0 <= seat < len(places):
        raise ValueError(f"seat {seat} is not one of the {len(places)} places")
    won = rated and places[seat] == 1
    gained = behind(places, seat) * (2 if before.on_fire else 1) if rated else 0
    return replace(before, points=before.points + gained, games=before.games + 1,
                   wins=before.wins + won, streak=before.streak + 1 if won else 0)  # fmt: skip


def order_key(s: Standing) -> tuple[int, int, int, float, str]:
    """The standings' order: points, then wins (more first), then fewer games (the same
    points in fewer games), then who joined first."""
    return (-s.points, -s.wins, s.games, s.joined, s.player)


def ranked(standings: Iterable[Standing]) -> list[Standing]:
    """The standings, best first (:func:`order_key`)."""
    return sorted(standings, key=order_key)


def winner(standings: Iterable[Standing]) -> Standing | None:
    """The leader of the standings who scored at all; None when nobody did."""
    best = next(iter(ranked(standings)), None)
    return best if best is not None and best.points > 0 else None


def table_sizes(waiting: int) -> list[int]:
    """The sizes of the tables ``waiting`` players are put at: as few tables as hold them
    all (at most :data:`MAX_TABLE` each), as even as can be (5 → 3 + 2, 9 → 3 + 3 + 3); none
    for fewer than :data:`MIN_TABLE` (a lone player waits for another)."""
    if waiting < MIN_TABLE:
        return []
    tables = math.ceil(waiting / MAX_TABLE)
    small, extra = divmod(waiting, tables)
    return [small + 1] * extra + [small] * (tables - extra)


def pair(waiting: Sequence[Standing]) -> list[list[str]]:
    """The tables (players' ids, each a list) of the players ``waiting``, in the order of
    the standings: neighbours in the standings meet."""
    queue = [s.player for s in ranked(waiting)]
    tables, at = [], 0
    for size in table_sizes(len(queue)):
        tables.append(queue[at : at + size])
        at += size
    return tables


# -- an operator's schedule -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Schedule:
    """``flyswat serve --arena-schedule EVERY:MINUTES``: an arena of ``minutes`` minutes every
    ``every`` minutes, the first of each day at 00:00 UTC (``60:30``: on the hour, for half
    an hour)."""

    every: int
    minutes: int

    @classmethod
    def parse(cls, text: str) -> Schedule:
        """``EVERY:MINUTES`` (whole minutes: ``MINUTES`` at most ``EVERY``, ``EVERY`` dividing
        a day); raises :class:`ValueError` naming what is wrong."""
        parts = text.strip().split(":")
        if len(parts) != 2 or not all(p.isascii() and p.isdigit() and len(p) <= 4 for p in parts):
            raise ValueError(f"an arena schedule is EVERY:MINUTES (e.g. 60:30), not {text!r}")
        every, minutes = int(parts[0]), int(parts[1])
        if not MIN_MINUTES <= minutes <= min(every, MAX_MINUTES):
            raise ValueError(f"an arena of the schedule lasts 1 to {every} minutes")
        if every < 1 or 1440 % every:
            raise ValueError("a schedule's EVERY divides a day (1440 minutes): 30, 60, 120 …")
        return cls(every, minutes)

    def __str__(self) -> str:
        return f"{self.every}:{self.minutes}"

    def due(self, now: float) -> list[tuple[float, float]]:
        """``(starts, ends)`` of the schedule's arenas that should exist at ``now``: the one
        whose period holds ``now`` (if not ended), and the next, so that players see it
        coming."""
        period = self.every * 60
        first = math.floor(now / period) * period
        out = []
        for start in (first, first + period):
            end = start + self.minutes * 60
            if now < end:
                out.append((float(start), float(end)))
        return out

    def arena_id(self, starts: float) -> str:
        """The id of the schedule's arena starting at ``starts``: the same on every node and
        after a restart, so that it is made once."""
        return f"s{self.every}m{self.minutes}t{int(starts)}"


def rank_of(standings: Sequence[Standing], player: str) -> int | None:
    """``player``'s place (1 first) in the ranked ``standings``, if they joined."""
    for i, s in enumerate(ranked(standings)):
        if s.player == player:
            return i + 1
    return None


def scored_table(
    standings: dict[str, Standing], seats: Sequence[str | None], places: Sequence[int],
    rated: frozenset[str] | set[str],
) -> dict[str, Standing]:  # fmt: skip
    """The standings changed by a counted game: ``seats`` the players at each seat (None for
    a seat without one of the arena's players: a bot), ``places`` the game's places,
    ``rated`` the players rated in it. Only the players of ``standings`` change; one player
    is scored once (a player never holds two seats of a table)."""
    if len(seats) != len(places):
        raise ValueError("a seat for every place")
    out: dict[str, Standing] = {}
    for seat, pid in enumerate(seats):
        if pid is None or pid not in standings or pid in out:
            continue
        out[pid] = scored(standings[pid], places, seat, pid in rated)
    return out
