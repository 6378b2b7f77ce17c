"""Play now by rating, pure: which open table a player joins.

A Play now table that is waiting for players accepts a newcomer whose shown rating is
within its **band** of the table's players' mean rating: :data:`BAND_START` points at
first, widening by :data:`BAND_PER_S` points for every second the table has waited, and
open to anyone once it has waited :data:`ANY_AFTER_MS` (its bots sit down later still, at
the table's wait for bots). The table waits for whoever sits at it, so its wait is theirs:
the longer they have waited, the farther they look. Of the tables whose band takes the
newcomer, the one whose players' ratings are closest to theirs is chosen (the one waiting
longest on a tie); with none, the newcomer opens a table of their own and waits there.

No clock, no I/O: the wait is an argument (``now`` and each table's ``opened``, in ms on
one clock), so a test and the benchmark (``bench/play_now_wait.py``) drive the same rule
the server does (:mod:`flyswat.server.players_routes`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: The band at first (shown rating points either side of the table's mean).
BAND_START = 100.0
#: How much it widens per second the table has waited.
BAND_PER_S = 60.0
#: After this long waiting, a table takes anyone (ms).
ANY_AFTER_MS = 10_000.0


@dataclass(frozen=True, slots=True)
class OpenTable:
    """A Play now table that is waiting: its code, its players' shown ratings, and when it
    opened (ms, on the caller's clock)."""

    code: str
    ratings: tuple[int, ...]
    opened: float


def band(wait_ms: float) -> float:
    """The band of a table that has waited ``wait_ms``: rating points either side."""
    if wait_ms >= ANY_AFTER_MS:
        return math.inf
    return BAND_START + BAND_PER_S * max(0.0, wait_ms) / 1000


def gap(rating: int, ratings: Sequence[int]) -> float:
    """How far ``rating`` is from a table's players: from their mean (0 for an empty one)."""
    return abs(rating - sum(ratings) / len(ratings)) if ratings else 0.0


def choose(rating: int, tables: Iterable[OpenTable], now: float) -> OpenTable | None:
    """The table a player rated ``rating`` joins at ``now``: the closest whose band takes
    them, the one waiting longest on a tie; None when no band does (they open one)."""
    fits = [
        (gap(rating, t.ratings), t.opened, i, t)
        for i, t in enumerate(tables)
        if gap(rating, t.ratings) <= band(now - t.opened)
    ]
    return min(fits)[3] if fits else None
