"""The rule options of one game, as a frozen, validated value, and the two rules every
driver of a game needs outside the engine: the allowed colours (R14) and the slap window's
edge (R21). Each is written here once; the engine, the arbiter, the simulators and the
environments call these (the numba kernel and the browser hold copies checked by the golden
transcripts in ``tests/golden/``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from flyswat.cards import DECK, Card, Colour
from flyswat.errors import MalformedError

MIN_SEATS = 2
MAX_SEATS = 8
MIN_SLAP_WINDOW_MS = 500
MAX_SLAP_WINDOW_MS = 30_000


@dataclass(frozen=True, slots=True)
class Rules:
    """Options of one game.

    - ``seats``: 2 to 8 players (R4).
    - ``remove``: cards put back in the box unseen before the deal (R6); default 0. At least
      one card per seat must remain, so every seat has a draw pile.
    - ``slap_window_ms``: how long a slap round stays open at most (R21); default 3000,
      from 500 to 30000.
    - ``hands`` is derived, not chosen: two per player, one with 5 or more players (R16).

    Raises :class:`~flyswat.errors.MalformedError` for any value out of range.
    """

    seats: int = 4
    remove: int = 0
    slap_window_ms: int = 3000
    hands: int = field(init=False)

    def __post_init__(self) -> None:
        for name in ("seats", "remove", "slap_window_ms"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise MalformedError(f"{name} must be a whole number, not {value!r}", "bad_rules")
        if not MIN_SEATS <= self.seats <= MAX_SEATS:
            raise MalformedError(
                f"seats must be from {MIN_SEATS} to {MAX_SEATS}, not {self.seats}", "bad_rules"
            )
        most = len(DECK) - self.seats
        if not 0 <= self.remove <= most:
            raise MalformedError(
                f"remove must be from 0 to {most} with {self.seats} seats "
                f"(every seat needs a card), not {self.remove}",
                "bad_rules",
            )
        if not MIN_SLAP_WINDOW_MS <= self.slap_window_ms <= MAX_SLAP_WINDOW_MS:
            raise MalformedError(
                f"slap_window_ms must be from {MIN_SLAP_WINDOW_MS} to {MAX_SLAP_WINDOW_MS}, "
                f"not {self.slap_window_ms}",
                "bad_rules",
            )
        object.__setattr__(self, "hands", 2 if self.seats <= 4 else 1)

    def in_window(self, ms: float) -> bool:
        """Does a hand at reaction time ``ms`` (from the instant the trigger was shown) count?
        The window runs out at ``slap_window_ms``: a hand at exactly that time is too late
        (R21)."""
        return ms < self.slap_window_ms

    def to_json(self) -> dict[str, int]:
        """The record's ``rules`` object."""
        return {
            "seats": self.seats,
            "hands": self.hands,
            "remove": self.remove,
            "slap_window_ms": self.slap_window_ms,
        }


def most_numerous(counts: Mapping[Colour, int]) -> frozenset[Colour]:
    """The allowed colours for a centre with ``counts`` flies per colour: the most numerous,
    ties included; empty for an empty centre (R14, R15)."""
    present = {c: n for c, n in counts.items() if n > 0}
    if not present:
        return frozenset()
    most = max(present.values())
    return frozenset(c for c, n in present.items() if n == most)


def allowed(centre: Iterable[Card]) -> frozenset[Colour]:
    """The colours that may be taken from ``centre`` (R14); the trigger is not in it."""
    counts: dict[Colour, int] = {}
    for card in centre:
        if card.colour is not None:
            counts[card.colour] = counts.get(card.colour, 0) + 1
    return most_numerous(counts)
