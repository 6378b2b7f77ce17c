"""Colours, cards and the deck (R1–R3).

Every physical card has its own identity (R3), so there are exactly 112 :class:`Card`
objects, made once at import. :meth:`Card.parse` returns those same objects, which makes
equality and hashing identity-fast in the engine's hot loops.
"""

from __future__ import annotations

import enum
from typing import Any

from flyswat.errors import MalformedError


class Colour(enum.Enum):
    """The six fly colours (R2), in the rulebook's canonical order R Y G B P O."""

    RED = "R"
    """Red flies."""
    YELLOW = "Y"
    """Yellow flies."""
    GREEN = "G"
    """Green flies."""
    BLUE = "B"
    """Blue flies."""
    PURPLE = "P"
    """Purple flies."""
    ORANGE = "O"
    """Orange flies."""

    # Members are singletons compared by identity, so the identity hash is exact; Enum's own
    # __hash__ is Python code, and colours are dict keys and set members in every hot loop.
    __hash__ = object.__hash__

    @property
    def letter(self) -> str:
        """The one-letter text form: ``"R"``."""
        return self.value

    @property
    def order(self) -> int:
        """Position in the canonical order R Y G B P O (0–5)."""
        return _COLOUR_ORDER[self]

    @classmethod
    def parse(cls, letter: str) -> Colour:
        """The colour with this letter; raises :class:`MalformedError` otherwise."""
        try:
            return cls(letter)
        except ValueError:
            raise MalformedError(
                f"unknown colour {letter!r}: expected one of RYGBPO", "bad_colour"
            ) from None


_COLOUR_ORDER = {c: i for i, c in enumerate(Colour)}

#: How many copies of each fly value a colour has (R2): values 1 and 5 twice, 2–4 four times.
COPIES = {1: 2, 2: 4, 3: 4, 4: 4, 5: 2}
SWATTERS = 16


class Card:
    """One physical card: a fly (colour, value, copy) or a swatter (copy).

    Immutable and interned: use :meth:`parse` or :data:`DECK`, never the constructor.
    ``str(card)`` is the text form (``"R3-1"``, ``"S-16"``) and round-trips through
    :meth:`parse`; ``repr(card)`` is ``Card.parse('R3-1')``.
    """

    __slots__ = ("colour", "copy", "index", "text", "value")

    colour: Colour | None
    value: int
    copy: int
    index: int
    text: str

    def __init__(self, colour: Colour | None, value: int, copy: int, index: int) -> None:
        object.__setattr__(self, "colour", colour)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "copy", copy)
        object.__setattr__(self, "index", index)
        text = f"S-{copy}" if colour is None else f"{colour.value}{value}-{copy}"
        object.__setattr__(self, "text", text)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Card is immutable")

    def __delattr__(self, name: str) -> None:
        # Without this, ``del card.text`` would break the one shared object for everyone.
        raise AttributeError("Card is immutable")

    @property
    def is_swatter(self) -> bool:
        """True for the 16 flyswatter cards."""
        return self.colour is None

    @property
    def is_fly(self) -> bool:
        """True for the 96 fly cards."""
        return self.colour is not None

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Card.parse({self.text!r})"

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        # Unpickling yields the interned object again (multiprocessing relies on it).
        return (Card.parse, (self.text,))

    def __lt__(self, other: Card) -> bool:
        return self.index < other.index

    @staticmethod
    def parse(text: str) -> Card:
        """The card with this text form; raises :class:`MalformedError` if there is none."""
        try:
            return _BY_TEXT[text]
        except (KeyError, TypeError):
            raise MalformedError(
                f"not a card: {text!r} (expected e.g. 'R3-1' or 'S-16')", "bad_card"
            ) from None


def _make_deck() -> tuple[Card, ...]:
    cards: list[Card] = []
    for colour in Colour:
        for value, copies in COPIES.items():
            for copy in range(1, copies + 1):
                cards.append(Card(colour, value, copy, len(cards)))
    for copy in range(1, SWATTERS + 1):
        cards.append(Card(None, 0, copy, len(cards)))
    return tuple(cards)


#: All 112 cards in canonical order: flies by colour (R Y G B P O), value, copy; then swatters.
DECK: tuple[Card, ...] = _make_deck()
_BY_TEXT = {card.text: card for card in DECK}


def colour_letters(colours: frozenset[Colour] | set[Colour]) -> list[str]:
    """Colour letters sorted in the canonical order R Y G B P O."""
    return [c.value for c in sorted(colours, key=_COLOUR_ORDER.__getitem__)]
