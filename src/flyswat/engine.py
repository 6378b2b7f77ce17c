"""The rules engine: one game of flyswat, exactly as ``docs/RULES.md`` R5–R24 say.

Pure: no I/O, no clock, no global random state. The shuffle takes a seed (R5); slaps are
applied in the arrival order the caller decides (the arbiter lives outside the engine); the
caller decides when a slap round closes (R21). Every method that refuses an action raises
:class:`~flyswat.errors.IllegalActionError` or :class:`~flyswat.errors.MalformedError` and
changes nothing.

Piles: a draw pile is a deque whose left end is its top (R7); a won pile is a list whose end
is its top (R18); the centre keeps the order in which flies were placed (R11).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import cast

from flyswat.cards import Card, Colour
from flyswat.errors import IllegalActionError, MalformedError
from flyswat.rules import Rules, most_numerous
from flyswat.shuffle import Seed, shuffled


@dataclass(frozen=True, slots=True)
class Slap:
    """One accepted hand: ``seat`` laid it on ``card``; ``ms`` is its reaction time from the
    instant the trigger was shown, if known (for a table, the arbiter's effective time)."""

    seat: int
    card: Card
    ms: float | None = None


@dataclass(slots=True)
class Round:
    """A slap round (R14–R21), opened by ``trigger`` revealed by ``seat``.

    While open, ``slaps`` holds the accepted hands in arrival order. Closing orders them
    (:meth:`Game.close_round`): by reaction time, ties by arrival, when every hand has one.
    Once closed, ``slaps`` is that order (the first hand on a card is its bottom hand, R17),
    and ``won`` and ``penalties`` hold what was applied, in order (R20), as ``(seat, card)``.
    """

    trigger: Card
    seat: int
    allowed: frozenset[Colour]
    slaps: list[Slap] = field(default_factory=list)
    #: How many hands each seat has laid (kept by :meth:`Game.slap`): asked after every
    #: message of a round (is a seat complete?), where counting ``slaps`` walks them all.
    laid_by: dict[int, int] = field(default_factory=dict)
    done: set[int] = field(default_factory=set)
    #: Seats done because their player dropped (:meth:`Game.away`), who may come back.
    away: set[int] = field(default_factory=set)
    #: How many times each seat came back into the round (:meth:`Game.back`).
    backs: dict[int, int] = field(default_factory=dict)
    closed: bool = False
    won: list[tuple[int, Card]] = field(default_factory=list)
    penalties: list[tuple[int, Card]] = field(default_factory=list)

    def hands_of(self, seat: int) -> list[Card]:
        """The cards on which ``seat`` has laid a hand, in order."""
        return [s.card for s in self.slaps if s.seat == seat]

    def laid(self, seats: int) -> list[int]:
        """How many hands each of ``seats`` seats has laid so far."""
        counts = [0] * seats
        for s in self.slaps:
            counts[s.seat] += 1
        return counts

    def ordered(self) -> list[Slap]:
        """The hands in the order they stack: by reaction time, ties by arrival, when every
        hand has a time; otherwise as they arrived."""
        if any(s.ms is None for s in self.slaps):
            return list(self.slaps)
        return sorted(self.slaps, key=lambda s: s.ms or 0.0)  # stable: ties keep arrival


@dataclass(frozen=True, slots=True)
class Turn:
    """One reveal (R10): who revealed which card, and the slap round it opened, if any."""

    seat: int
    card: Card
    round: Round | None = None


@dataclass(frozen=True, slots=True)
class Result:
    """The end of a game, per seat in seat order: points (R23), flies won, place (R24)."""

    points: tuple[int, ...]
    flies: tuple[int, ...]
    places: tuple[int, ...]

    @staticmethod
    def rank(points: Sequence[int], flies: Sequence[int]) -> Result:
        """Places by points, then flies; tied seats share a place and the next skips."""
        keys = list(zip(points, flies, strict=True))
        places = tuple(1 + sum(1 for other in keys if other > key) for key in keys)
        return Result(tuple(points), tuple(flies), places)

    def to_json(self) -> dict[str, list[int]]:
        """The record's ``result`` object."""
        return {"points": list(self.points), "flies": list(self.flies), "places": list(self.places)}


def deal(rules: Rules, seed: object, start: object = 0) -> tuple[list[Card], list[list[Card]]]:
    """Shuffle (R5), remove (R6) and deal (R7): ``(removed, piles)``, piles top card first.

    The k-th card after the removed ones goes to seat ``(start + k) % seats``; each seat's
    cards keep the order in which it got them, so the first card it receives is its top card.
    """
    start = check_seat(rules, start)
    deck = shuffled(seed)  # it checks the seed (bad_seed)
    removed, rest = deck[: rules.remove], deck[rules.remove :]
    piles: list[list[Card]] = [[] for _ in range(rules.seats)]
    for k, card in enumerate(rest):
        piles[(start + k) % rules.seats].append(card)
    return removed, piles


# The public entry points take ``object`` where a caller may pass anything (a seat, a card,
# a time, a seed from a message or a record) and check it here: compiled (hatch_build.py),
# a parameter typed ``int`` would turn ``True`` into 1 and answer ``"1"`` with a TypeError
# instead of the engine's own MalformedError.


def check_seat(rules: Rules, seat: object) -> int:
    """``seat`` if it is a seat of the table (an int, not a bool), else MalformedError
    (``bad_seat``). A negative seat would otherwise index another seat's pile from the end."""
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < rules.seats:
        raise MalformedError(f"no seat {seat!r} at a table of {rules.seats}", "bad_seat")
    return seat


def _is_reaction_time(ms: object) -> bool:
    # A float is tolerated: an arbiter's clock may measure fractions of a millisecond.
    if isinstance(ms, bool) or not isinstance(ms, int | float):
        return False
    return 0 <= ms < math.inf


class Game:
    """One game in progress, from the deal (R7) to the result (R24).

    Build it with :meth:`new` (shuffle by seed) or directly from a known deal (a record).
    Then repeat: :meth:`reveal`; if that opened a round, :meth:`slap` / :meth:`done` as slaps
    arrive, and :meth:`close_round`. Stop when :attr:`over`.
    """

    def __init__(
        self,
        rules: Rules,
        piles: Sequence[Iterable[Card]],
        *,
        start: object = 0,
        removed: Sequence[Card] = (),
        seed: object = None,
    ) -> None:
        """Raises :class:`MalformedError` unless the deal and removed cards hold each card once."""
        start = check_seat(rules, start)
        self.rules = rules
        self.seed = cast(Seed | None, seed)
        self.start: int = start
        self.removed: tuple[Card, ...] = tuple(removed)
        self.dealt: tuple[tuple[Card, ...], ...] = tuple(tuple(p) for p in piles)
        self._check_deal()
        self.draw: list[deque[Card]] = [deque(p) for p in self.dealt]
        self.won: list[list[Card]] = [[] for _ in range(rules.seats)]
        self.centre: list[Card] = []
        self.box: list[Card] = list(self.removed)
        self.turns: list[Turn] = []
        self.to_move = start
        self.round: Round | None = None
        self.over = False
        self._counts: dict[Colour, int] = {}
        self._ending = False
        #: :mod:`flyswat.view`'s memo of the view's fields that change only with a turn.
        self.view_memo: object = None

    @classmethod
    def new(cls, rules: Rules, seed: object, start: object = 0) -> Game:
        """A fresh game: the deck shuffled by ``seed`` and dealt from ``start`` (R5–R7, R9)."""
        removed, piles = deal(rules, seed, start)
        return cls(rules, piles, start=start, removed=removed, seed=seed)

    def _check_deal(self) -> None:
        rules = self.rules
        if len(self.dealt) != rules.seats:
            raise MalformedError(
                f"the deal has {len(self.dealt)} piles for {rules.seats} seats", "bad_deal"
            )
        if len(self.removed) != rules.remove:
            raise MalformedError(
                f"{len(self.removed)} cards removed, rules say {rules.remove}", "bad_deal"
            )
        cards = [*self.removed, *(c for p in self.dealt for c in p)]
        if not all(isinstance(c, Card) for c in cards):
            raise MalformedError("the deal must hold Card objects", "bad_deal")
        if len(cards) != 112 or len(set(cards)) != 112:
            raise MalformedError(
                "removed + deal must hold each of the 112 cards exactly once", "bad_deal"
            )
        if any(not p for p in self.dealt):
            raise MalformedError("every seat needs at least one card", "bad_deal")

    # -- turns -----------------------------------------------------------------------------

    def allowed_colours(self) -> frozenset[Colour]:
        """The most numerous colours in the centre now, ties included (R14); empty if none."""
        return most_numerous(self._counts)

    def triggers_round(self, card: Card) -> bool:
        """Would revealing ``card`` now open a slap round? A swatter (R12), a fifth colour (R13)."""
        colour = card.colour
        return colour is None or (len(self._counts) == 4 and colour not in self._counts)

    def reveal(self) -> Turn:
        """The player to move reveals the top card of their draw pile (R10).

        A fly goes to the centre (R11, R13a); a swatter or a fifth colour opens a slap round
        (R12, R13) — with an empty centre that round closes at once (R15). After the last card
        of a draw pile is played out, the game is over (R22).
        """
        if self.over:
            raise IllegalActionError("the game is over", "game_over")
        if self.round is not None:
            raise IllegalActionError("a slap round is still open", "round_open")
        seat = self.to_move
        pile = self.draw[seat]
        card = pile.popleft()
        self._ending = not pile
        self.to_move = (seat + 1) % self.rules.seats
        colour = card.colour
        if colour is None or self.triggers_round(card):
            turn = Turn(seat, card, Round(card, seat, self.allowed_colours()))
            self.round = turn.round
            self.turns.append(turn)
            if not self.centre:
                self.close_round()
            return turn
        self.centre.append(card)
        self._counts[colour] = self._counts.get(colour, 0) + 1
        turn = Turn(seat, card)
        self.turns.append(turn)
        if self._ending:
            self.over = True
        return turn

    # -- slap rounds -----------------------------------------------------------------------

    def check_slap(self, seat: object, card: object) -> Round:
        """The open round if ``seat`` may lay a hand on ``card`` now; raises if not (R16, R21)."""
        seat = check_seat(self.rules, seat)
        if not isinstance(card, Card):
            raise MalformedError(f"not a card: {card!r}", "bad_card")
        r = self.round
        if r is None:
            raise IllegalActionError("no slap round is open", "no_round")
        if card not in self.centre:
            raise IllegalActionError(f"{card} is not in the centre", "not_in_centre")
        if seat in r.done:
            raise IllegalActionError("you already said you are done this round", "done")
        mine = r.hands_of(seat)
        if card in mine:
            raise IllegalActionError(f"you already have a hand on {card}", "same_card")
        if len(mine) >= self.rules.hands:
            raise IllegalActionError(
                f"all your hands are laid ({self.rules.hands} per player)", "no_hands_left"
            )
        return r

    def slap(self, seat: object, card: object, ms: object = None) -> Slap:
        """``seat`` lays a hand on ``card`` (R16); where it stacks is decided when the round
        closes (R17: by ``ms``, ties by arrival).

        ``ms``, the reaction time, is None or a number of milliseconds, at least 0.
        """
        if ms is not None and not _is_reaction_time(ms):
            raise MalformedError(f"a reaction time is a number of ms >= 0, not {ms!r}", "bad_ms")
        r = self.check_slap(seat, card)
        s = Slap(cast(int, seat), cast(Card, card), cast(float | None, ms))
        r.slaps.append(s)
        r.laid_by[s.seat] = r.laid_by.get(s.seat, 0) + 1
        return s

    def done(self, seat: object) -> None:
        """``seat`` says it will lay no more hands this round (R21)."""
        seat = check_seat(self.rules, seat)
        if self.round is None:
            raise IllegalActionError("no slap round is open", "no_round")
        self.round.done.add(seat)

    def away(self, seat: int) -> None:
        """``seat``'s player dropped during the round: it is not waited for, as if done."""
        self.done(seat)
        assert self.round is not None
        self.round.away.add(seat)

    def back(self, seat: int) -> None:
        """``seat``'s player, done only by dropping (:meth:`away`), is back in the round and
        may lay hands again."""
        r = self.round
        if r is None or seat not in r.away:
            raise IllegalActionError("this seat did not drop out of an open round", "not_away")
        r.away.discard(seat)
        r.done.discard(seat)
        r.backs[seat] = r.backs.get(seat, 0) + 1

    def round_complete(self) -> bool:
        """True when every seat has laid all its hands or said it is done (R21).

        A seat with a hand on every centre fly has no hand left to lay, so it counts as done.
        """
        return self.round is not None and not self.incomplete(range(self.rules.seats))

    def incomplete(self, seats: Iterable[int]) -> list[int]:
        """Those of ``seats`` not complete in the open round (:meth:`seat_complete`); none
        when no round is open."""
        r = self.round
        if r is None:
            return []
        hands, laid, done = min(self.rules.hands, len(self.centre)), r.laid_by, r.done
        return [s for s in seats if s not in done and laid.get(s, 0) < hands]

    def seat_complete(self, seat: int) -> bool:
        """Has ``seat`` laid all its hands in the open round, one on every centre fly, or
        said it is done (R16, R21)? False when no round is open."""
        return self.round is not None and not self.incomplete([seat])

    def close_round(self, *, by_time: bool = True) -> Round:
        """Resolve the open round: wins (R18), then penalties (R19), in stacking order (R20).

        The hands stack by reaction time, ties by arrival (:meth:`Round.ordered`);
        ``by_time=False`` keeps them as they arrived (a replay of facts already in order).
        The trigger card goes to the box (R12, R13). Returns the closed round.
        """
        r = self.round
        if r is None:
            raise IllegalActionError("no slap round is open", "no_round")
        if by_time:
            r.slaps = r.ordered()
        allowed = r.allowed
        bottom: dict[Card, Slap] = {}
        for s in r.slaps:
            bottom.setdefault(s.card, s)
        for s in r.slaps:
            if s.card.colour in allowed and bottom[s.card] is s:
                self._take_from_centre(s.card)
                self.won[s.seat].append(s.card)
                r.won.append((s.seat, s.card))
        for s in r.slaps:
            if s.card.colour not in allowed and self.won[s.seat]:
                paid = self.won[s.seat].pop()
                self.draw[s.seat].append(paid)
                r.penalties.append((s.seat, paid))
        self.box.append(r.trigger)
        r.closed = True
        self.round = None
        if self._ending:
            self.over = True
        return r

    def play_turn(self, slaps: Iterable[Slap] = ()) -> Turn:
        """Replay one turn from its facts: reveal (R10), lay ``slaps`` in the order given (the
        stacking order already decided), close the round if one opened. The one replay of
        facts: records, tables, the fast path and the tests all go through it.

        Raises :class:`IllegalActionError` (``no_round`` for a slap when no round opened or the
        centre was empty, or any refusal of :meth:`slap`) after the reveal.
        """
        turn = self.reveal()
        for s in slaps:
            self.slap(s.seat, s.card, s.ms)
        if self.round is not None:
            self.close_round(by_time=False)
        return turn

    def _take_from_centre(self, card: Card) -> None:
        self.centre.remove(card)
        colour = card.colour
        if colour is None:  # pragma: no cover - the centre only ever holds flies (R11)
            return
        left = self._counts[colour] - 1
        if left:
            self._counts[colour] = left
        else:
            del self._counts[colour]

    # -- scoring ---------------------------------------------------------------------------

    def points(self) -> list[int]:
        """Each seat's points so far: the values of its won flies (R23)."""
        return [sum(c.value for c in pile) for pile in self.won]

    def result(self) -> Result:
        """The final score and places (R23, R24); raises unless the game is over."""
        if not self.over:
            raise IllegalActionError("the game is not over yet", "not_over")
        return Result.rank(self.points(), [len(p) for p in self.won])

    def where(self) -> dict[Card, str]:
        """Where each of the 112 cards is: ``draw:<seat>``, ``won:<seat>``, ``centre``, ``box``
        or ``trigger`` (the card of the open round). For invariant checks."""
        places: dict[Card, str] = {}
        for seat, pile in enumerate(self.draw):
            places.update((c, f"draw:{seat}") for c in pile)
        for seat, won in enumerate(self.won):
            places.update((c, f"won:{seat}") for c in won)
        places.update((c, "centre") for c in self.centre)
        places.update((c, "box") for c in self.box)
        if self.round is not None:
            places[self.round.trigger] = "trigger"
        return places
