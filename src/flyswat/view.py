"""What one seat may see (R25): the only thing a transport may send to a player.

A :class:`View` is built from the game state for one seat (or for a spectator, ``seat=None``)
and holds no reference to the game: nothing hidden is reachable from it. While the game runs:

- centre, box (the cards that left the game in play) and every pile's count: everyone
  (R8, R25); of the cards put back unseen before the deal (R6), only how many;
- the cards of a won pile: its owner only (R25);
- draw piles: never a card, only counts (R8);
- an open slap round: its trigger, how many hands each seat has laid, and the seat's own
  hands. Others' hands and the allowed colours are shown when the round resolves, in
  :attr:`View.last_round` — judging the colour is the player's own skill (R14).

When the game is over, everything is revealed: every draw and won pile, the removed cards and
the result.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from flyswat.cards import Card, colour_letters
from flyswat.engine import Game, Result, Round, check_seat


@dataclass(frozen=True, slots=True)
class OpenRoundView:
    """An open slap round as one seat sees it."""

    trigger: Card
    seat: int
    laid: tuple[int, ...]
    mine: tuple[Card, ...]
    done: bool


@dataclass(frozen=True, slots=True)
class RoundView:
    """A resolved slap round: everything about it is public once it has closed."""

    trigger: Card
    seat: int
    allowed: tuple[str, ...]
    slaps: tuple[tuple[int, Card], ...]
    won: tuple[tuple[int, Card], ...]
    penalties: tuple[tuple[int, Card], ...]

    @staticmethod
    def of(r: Round) -> RoundView:
        """The public view of a closed round."""
        return RoundView(
            r.trigger,
            r.seat,
            tuple(colour_letters(r.allowed)),
            tuple((s.seat, s.card) for s in r.slaps),
            tuple(r.won),
            tuple(r.penalties),
        )


@dataclass(frozen=True, slots=True)
class View:
    """One seat's view of a game (``seat`` is None for a spectator)."""

    seat: int | None
    seats: int
    hands: int
    to_move: int
    turn: int
    draw_counts: tuple[int, ...]
    won_counts: tuple[int, ...]
    won: tuple[Card, ...]
    centre: tuple[Card, ...]
    box: tuple[Card, ...]
    last_card: Card | None
    round: OpenRoundView | None
    last_round: RoundView | None
    over: bool
    result: Result | None
    revealed_draw: tuple[tuple[Card, ...], ...] | None
    revealed_won: tuple[tuple[Card, ...], ...] | None
    removed: int = 0
    revealed_removed: tuple[Card, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of this view, cards as their text form."""

        out: dict[str, Any] = {
            "seat": self.seat,
            "seats": self.seats,
            "hands": self.hands,
            "to_move": self.to_move,
            "turn": self.turn,
            "draw_counts": list(self.draw_counts),
            "won_counts": list(self.won_counts),
            "won": _texts(self.won),
            "centre": _texts(self.centre),
            "box": _texts(self.box),
            "last_card": self.last_card.text if self.last_card else None,
            "round": None,
            "last_round": None,
            "over": self.over,
            "result": self.result.to_json() if self.result else None,
            "revealed_draw": None,
            "revealed_won": None,
            "removed": self.removed,
            "revealed_removed": None,
        }
        if self.round:
            r = self.round
            out["round"] = {
                "trigger": r.trigger.text,
                "seat": r.seat,
                "laid": list(r.laid),
                "mine": _texts(r.mine),
                "done": r.done,
            }
        if self.last_round:
            lr = self.last_round
            out["last_round"] = {
                "trigger": lr.trigger.text,
                "seat": lr.seat,
                "allowed": list(lr.allowed),
                "slaps": _pairs(lr.slaps),
                "won": _pairs(lr.won),
                "penalties": _pairs(lr.penalties),
            }
        if self.revealed_draw is not None and self.revealed_won is not None:
            out["revealed_draw"] = [_texts(p) for p in self.revealed_draw]
            out["revealed_won"] = [_texts(p) for p in self.revealed_won]
        if self.revealed_removed is not None:
            out["revealed_removed"] = _texts(self.revealed_removed)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> View:
        """The view :meth:`to_json` wrote (what a client is sent, and puts back together
        from the lean wire: :class:`flyswat.wire.Assembler`). Raises :class:`MalformedError`
        for a card that is not one, and ``KeyError`` for a missing field."""

        def cards(texts: list[str]) -> tuple[Card, ...]:
            return tuple(Card.parse(c) for c in texts)

        def pairs(ps: list[dict[str, Any]]) -> tuple[tuple[int, Card], ...]:
            return tuple((int(x["seat"]), Card.parse(x["card"])) for x in ps)

        r, lr, res = data["round"], data["last_round"], data["result"]
        draw, won, removed = data["revealed_draw"], data["revealed_won"], data["revealed_removed"]
        return cls(
            seat=data["seat"], seats=int(data["seats"]), hands=int(data["hands"]),
            to_move=int(data["to_move"]), turn=int(data["turn"]),
            draw_counts=tuple(data["draw_counts"]), won_counts=tuple(data["won_counts"]),
            won=cards(data["won"]), centre=cards(data["centre"]), box=cards(data["box"]),
            last_card=Card.parse(data["last_card"]) if data["last_card"] else None,
            round=OpenRoundView(Card.parse(r["trigger"]), int(r["seat"]), tuple(r["laid"]),
                                cards(r["mine"]), bool(r["done"])) if r else None,
            last_round=RoundView(Card.parse(lr["trigger"]), int(lr["seat"]),
                                 tuple(lr["allowed"]), pairs(lr["slaps"]), pairs(lr["won"]),
                                 pairs(lr["penalties"])) if lr else None,
            over=bool(data["over"]),
            result=Result(tuple(res["points"]), tuple(res["flies"]), tuple(res["places"]))
            if res else None,
            revealed_draw=tuple(cards(p) for p in draw) if draw is not None else None,
            revealed_won=tuple(cards(p) for p in won) if won is not None else None,
            removed=int(data.get("removed", 0)),
            revealed_removed=cards(removed) if removed is not None else None,
        )  # fmt: skip


def _check_view_seat(game: Game, seat: object) -> int | None:
    """``seat`` if it is None (a spectator) or a seat of the table, else MalformedError."""
    return None if seat is None else check_seat(game.rules, seat)


def _texts(cards: Iterable[Card]) -> list[str]:
    return [c.text for c in cards]


def _pairs(ps: Iterable[tuple[int, Card]]) -> list[dict[str, Any]]:
    return [{"seat": s, "card": c.text} for s, c in ps]


class _Steady:
    """The fields of a game's view that only a reveal or a round's close changes, made once
    for every view between two such turns (:func:`view_json`): a table's broadcasts of the
    hands laid in a round share them, and :func:`flyswat.wire.delta` finds them unchanged by
    identity, without walking the centre's and the box's cards again."""

    __slots__ = ("box", "centre", "draw_counts", "key", "last_card", "last_round", "result",
                 "revealed_draw", "revealed_removed", "revealed_won", "won_counts")  # fmt: skip

    def __init__(self, game: Game, key: tuple[int, bool]) -> None:
        self.key = key
        over = game.over
        self.draw_counts = [len(p) for p in game.draw]
        self.won_counts = [len(p) for p in game.won]
        self.centre = _texts(game.centre)
        self.box = _texts(game.box[len(game.removed) :])
        self.last_card = game.turns[-1].card.text if game.turns else None
        self.last_round: dict[str, Any] | None = None
        for t in reversed(game.turns):
            lr = t.round
            if lr is not None and lr.closed:
                self.last_round = {
                    "trigger": lr.trigger.text,
                    "seat": lr.seat,
                    "allowed": colour_letters(lr.allowed),
                    "slaps": _pairs((x.seat, x.card) for x in lr.slaps),
                    "won": _pairs(lr.won),
                    "penalties": _pairs(lr.penalties),
                }
                break
        self.result = game.result().to_json() if over else None
        self.revealed_draw = [_texts(p) for p in game.draw] if over else None
        self.revealed_won = [_texts(p) for p in game.won] if over else None
        self.revealed_removed = _texts(game.removed) if over else None


def _steady(game: Game) -> _Steady:
    """``game``'s :class:`_Steady` fields as they are now (kept on the game, made anew after
    a reveal or a round's close: the only moves of its cards outside an open round's
    hands)."""
    key = (len(game.turns), game.round is None)
    memo = game.view_memo
    if isinstance(memo, _Steady) and memo.key == key:
        return memo
    steady = _Steady(game, key)
    game.view_memo = steady
    return steady


def view_json(game: Game, seat: object) -> dict[str, Any]:
    """``view(game, seat).to_json()``, made straight from the game: what a table sends, at
    every message of every round, without the :class:`View` in between (R25 as
    :func:`view` says it; ``tests/test_view.py`` holds the two equal). The fields that do not
    change within a turn are shared between the views made in it (:class:`_Steady`): a view
    is read, never changed."""
    seat = _check_view_seat(game, seat)
    r = game.round
    open_round = None
    if r is not None:
        laid = [r.laid_by.get(s, 0) for s in range(game.rules.seats)]
        mine = _texts(r.hands_of(seat)) if seat is not None else []
        open_round = {"trigger": r.trigger.text, "seat": r.seat, "laid": laid, "mine": mine,
                      "done": seat in r.done}  # fmt: skip
    s = _steady(game)
    return {
        "seat": seat,
        "seats": game.rules.seats,
        "hands": game.rules.hands,
        "to_move": game.to_move,
        "turn": len(game.turns),
        "draw_counts": s.draw_counts,
        "won_counts": s.won_counts,
        "won": _texts(game.won[seat]) if seat is not None else [],
        "centre": s.centre,
        "box": s.box,
        "last_card": s.last_card,
        "round": open_round,
        "last_round": s.last_round,
        "over": game.over,
        "result": s.result,
        "revealed_draw": s.revealed_draw,
        "revealed_won": s.revealed_won,
        "removed": len(game.removed),
        "revealed_removed": s.revealed_removed,
    }


def view(game: Game, seat: object) -> View:
    """What ``seat`` may see of ``game`` now (R25); ``None`` for a spectator.

    Raises :class:`MalformedError` (``bad_seat``) for a seat that is not at the table.
    """
    n = game.rules.seats
    seat = _check_view_seat(game, seat)
    r = game.round
    open_round = None
    if r is not None:
        open_round = OpenRoundView(
            r.trigger,
            r.seat,
            tuple(r.laid_by.get(s, 0) for s in range(n)),
            tuple(r.hands_of(seat)) if seat is not None else (),
            seat in r.done,
        )
    last_round = None
    for t in reversed(game.turns):
        if t.round is not None and t.round.closed:
            last_round = RoundView.of(t.round)
            break
    over = game.over
    # The box starts with the cards removed unseen before the deal (R6): never shown in play.
    removed = len(game.removed)
    return View(
        seat=seat,
        seats=n,
        hands=game.rules.hands,
        to_move=game.to_move,
        turn=len(game.turns),
        draw_counts=tuple(len(p) for p in game.draw),
        won_counts=tuple(len(p) for p in game.won),
        won=tuple(game.won[seat]) if seat is not None else (),
        centre=tuple(game.centre),
        box=tuple(game.box[removed:]),
        last_card=game.turns[-1].card if game.turns else None,
        round=open_round,
        last_round=last_round,
        over=over,
        result=game.result() if over else None,
        revealed_draw=tuple(tuple(p) for p in game.draw) if over else None,
        revealed_won=tuple(tuple(p) for p in game.won) if over else None,
        removed=removed,
        revealed_removed=tuple(game.removed) if over else None,
    )
