"""Shared helpers for the rules tests: hand-made deals and a snapshot of a game's state.

The helpers are plain functions, handed to tests by session-scoped fixtures (so that
hypothesis tests may use them too):

- ``stage(seats, reveals, start=0, sizes=None)`` builds a :class:`Game` whose first reveals
  are exactly ``reveals`` (card texts, in turn order from ``start``), every other card being
  filled in below them; ``sizes`` fixes the length of some draw piles.
- ``snapshot(game)`` is everything about a game's state, as comparable values, to check that a
  refused action changed nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from flyswat import DECK, Card, Game, Rules

Stage = Callable[..., Game]
Snapshot = Callable[[Game], Any]


def build_piles(
    seats: int,
    tops: Sequence[Sequence[str]],
    sizes: Mapping[int, int] | None = None,
    removed: Sequence[str] = (),
) -> list[list[Card]]:
    """Draw piles (top card first) with ``tops[seat]`` on top of each seat's pile.

    Every card not named in ``tops`` or ``removed`` is dealt below, round robin over the seats
    whose size is not fixed; a seat in ``sizes`` gets filler only up to that many cards.
    """
    sizes = dict(sizes or {})
    named = [Card.parse(t) for pile in tops for t in pile] + [Card.parse(t) for t in removed]
    placed = set(named)
    if len(placed) != len(named):
        raise ValueError("a card is named twice in the staged deal")
    piles = [[Card.parse(t) for t in pile] for pile in tops]
    piles += [[] for _ in range(seats - len(piles))]
    filler = [c for c in DECK if c not in placed]
    open_seats = [s for s in range(seats) if s not in sizes]
    for seat, size in sizes.items():
        while len(piles[seat]) < size:
            piles[seat].append(filler.pop())
        if len(piles[seat]) != size:
            raise ValueError(f"seat {seat} has more than {size} staged cards")
    for k, card in enumerate(filler):
        piles[open_seats[k % len(open_seats)]].append(card)
    return piles


def stage(
    seats: int,
    reveals: Sequence[str],
    *,
    start: int = 0,
    sizes: Mapping[int, int] | None = None,
    remove: int = 0,
) -> Game:
    """A game whose reveals begin with ``reveals``, in turn order (seat ``start``, then the
    next clockwise, …). The first ``remove`` filler cards are the removed ones."""
    tops: list[list[str]] = [[] for _ in range(seats)]
    for k, text in enumerate(reveals):
        tops[(start + k) % seats].append(text)
    named = set(reveals)
    removed = [c.text for c in DECK if c.text not in named][:remove]
    piles = build_piles(seats, tops, sizes, removed)
    return Game(
        Rules(seats=seats, remove=remove),
        piles,
        start=start,
        removed=[Card.parse(t) for t in removed],
    )


def snapshot(game: Game) -> Any:
    """Everything about the game's state, as plain comparable values."""
    r = game.round
    return (
        [list(p) for p in game.draw],
        [list(p) for p in game.won],
        list(game.centre),
        list(game.box),
        [(t.seat, t.card) for t in game.turns],
        game.to_move,
        game.over,
        game.allowed_colours(),
        None if r is None else (r.trigger, list(r.slaps), set(r.done), r.closed, r.allowed),
    )


@pytest.fixture(scope="session")
def staged() -> Stage:
    """The :func:`stage` helper."""
    return stage


@pytest.fixture(scope="session")
def state() -> Snapshot:
    """The :func:`snapshot` helper."""
    return snapshot
