"""A table's game in play: the start, turns, slap rounds and their timing, the end.

Functions of a table's :class:`~flyswat.table.context.Context`: each checks in full first
(raising :class:`~flyswat.errors.FlyswatError` changes nothing), then emits events (applied,
and listed for the store) and lists messages, as :class:`flyswat.table.core.Table`'s own
commands do.
"""

from __future__ import annotations

import contextlib
from typing import Any

from flyswat import bots
from flyswat import protocol as p
from flyswat.arbiter import MIN_HUMAN_MS, RoundClock
from flyswat.cards import Card
from flyswat.engine import Game
from flyswat.errors import FlyswatError, IllegalActionError
from flyswat.record import record_json, to_record
from flyswat.table import events as ev
from flyswat.table.context import Context
from flyswat.view import view
from flyswat.wire import encode


def begin(t: Context, now: float) -> None:
    """Start the game (checked by the caller: the host's start, a rematch, Play now)."""
    t.fill_due = None
    start = t.options.start
    t.emit(ev.Started(
        game_id=t.sources.game_id(), seed=t.sources.seed(),
        start=start if start is not None else t.sources.rng.randrange(t.options.seats),
        started_at=t.sources.wall(),
    ))  # fmt: skip
    info, game = t.info(), t.running()
    upcoming = t.upcoming_turn_ms()
    t.broadcast(lambda v: p.Started(
        commitment=info.commitment or "", start=game.start, table=info, view=v,
        turn_deadline_ms=upcoming,
    ))  # fmt: skip
    schedule_turn(t, now)


def reveal(t: Context, seat: int, now: float, auto: bool = False) -> None:
    game = t.running()
    if game.round is not None:
        raise IllegalActionError("a slap round is still open", "round_open")
    if seat != game.to_move:
        raise IllegalActionError(f"it is seat {game.to_move}'s turn", "not_your_turn")
    t.turn_due = None
    card = game.draw[seat][0]
    t.emit(ev.Revealed(turn=len(game.turns) + 1, seat=seat, card=card.text, auto=auto))
    turn = game.turns[-1]
    if t.running().round is not None:  # opened and still open (on an empty centre it closed)
        open_round(t, now, announce=auto)
        return
    opened, n = turn.round is not None, len(game.turns)
    upcoming = t.upcoming_turn_ms()
    t.tell_all({"type": "reveal", "turn": n, "seat": seat, "card": card.text, "round": opened,
                "window_ms": t.options.slap_window_ms if opened else None, "auto": auto,
                "turn_deadline_ms": None if opened else upcoming})  # fmt: skip
    if opened:  # an empty centre: the round closed at once (R15)
        t.tell_all({"type": "round", "turn": n, "turn_deadline_ms": upcoming})
    next(t, now)


def next(t: Context, now: float) -> None:
    if t.game is not None and t.game.over:
        finish(t)
    else:
        schedule_turn(t, now)


def schedule_turn(t: Context, now: float) -> None:
    game = t.game
    if game is None or game.over or game.round is not None:
        t.turn_due = None
        return
    seat = t.seats[game.to_move]
    if seat.is_bot and seat.level is not None:
        delay = bots.reveal_delay_ms(seat.level, t.sources.rng) * t.bot_pace
    else:
        delay = float(t.options.turn_timeout_ms)
    t.turn_due = now + delay


def tick(t: Context, now: float) -> None:
    while t.bot_plans and t.bot_plans[0][0] <= now:
        _, seat, card, ms, last = t.bot_plans.pop(0)
        bot_slap(t, seat, card, ms, last, now)
    if t.clock is not None:
        maybe_close(t, now)
    if t.hands_due is not None and now >= t.hands_due:
        t.hands_due = None
        game = t.game
        if game is not None and game.round is not None:
            t.tell_all({"type": "hands", "turn": len(game.turns)})
    if t.watch_due is not None and now >= t.watch_due:
        t.watch_due = None
        game = t.game
        if game is not None and game.round is not None and t.watchers:
            t.tell_watchers({"type": "hands", "turn": len(game.turns)}, t.view_of(None))
    game = t.game
    if t.turn_due is not None and now >= t.turn_due and game is not None:
        t.turn_due = None
        with contextlib.suppress(FlyswatError):  # nothing to reveal: the game moved on
            reveal(t, game.to_move, now, auto=not t.seats[game.to_move].is_bot)


# -- slap rounds -----------------------------------------------------------------------


def open_round(t: Context, now: float, *, everyone: bool = False, announce: bool = False) -> None:
    """Time the engine's open round and tell everyone; the reveal handed to each seat's
    socket starts that seat's clock. ``everyone``: after a restart, wait for every seat
    still to complete the round, connected yet or not."""
    game = t.game
    if game is None or game.round is None:
        return
    waited = [s.index for s in t.seats if (everyone or s.connected)
              and not game.seat_complete(s.index)]  # fmt: skip
    t.clock = RoundClock(
        rules=t.rules, opened_at=now, waited=waited,
        allowance_ms={s.index: s.link.allowance(now) for s in t.seats if not s.is_bot},
        sure_ms={s.index: s.link.sure_ms(now) for s in t.seats if not s.is_bot},
    )  # fmt: skip
    r, n = game.round, len(game.turns)
    t.tell_all({"type": "reveal", "turn": n, "seat": r.seat, "card": r.trigger.text,
                "round": True, "window_ms": t.options.slap_window_ms, "auto": announce,
                "turn_deadline_ms": None}, mark=n)  # fmt: skip
    plan_bots(t, now, waited)
    maybe_close(t, now)


def plan_bots(t: Context, now: float, waited: list[int]) -> None:
    game = t.running()
    plans = []
    for seat in t.seats:
        if not seat.is_bot or seat.level is None or seat.index not in waited:
            continue
        planned = bots.decide(seat.level, view(game, seat.index), t.sources.rng)
        planned = sorted((s for s in planned if t.rules.in_window(s.ms)), key=lambda s: s.ms)
        if not planned:
            t.emit(ev.SaidDone(turn=len(game.turns), seat=seat.index))
        for i, s in enumerate(planned):
            plans.append((now + s.ms, seat.index, s.card, s.ms, i == len(planned) - 1))
    t.bot_plans = sorted(plans, key=lambda t: t[0])


def bot_slap(t: Context, seat: int, card: Card, ms: int, last: bool, now: float) -> None:
    game, clock = t.game, t.clock
    if game is None or game.round is None or clock is None:
        return
    try:
        game.check_slap(seat, card)
        clock.planned(ms)
    except FlyswatError:  # a bot's plan that the table refuses is simply not played
        if last and not game.seat_complete(seat):
            t.emit(ev.SaidDone(turn=len(game.turns), seat=seat))
    else:  # its last hand says done with it, as a player's slap may
        t.emit(ev.Slapped(turn=len(game.turns), seat=seat, card=card.text, ms=ms, done=last))
    hands(t, now)


#: Hand counts changed by slaps and dones go out together, at most this often (ms): one
#: ``hands`` broadcast for the hands of many players rather than one for each.
HANDS_EVERY_MS = 100.0


def hands(t: Context, now: float) -> None:
    """The hands laid changed: tell everyone soon, with whatever else changes meanwhile."""
    if t.hands_due is None:
        t.hands_due = now + HANDS_EVERY_MS


#: Why a seat that was away for a round (not at the table when it opened, or dropped during
#: it and back only once its window had closed) lays no hand in it.
AWAY = "this round went on without you while you were away: you play again from the next one"


def current_round(t: Context, seat: int, turn: int | None) -> tuple[Game, RoundClock]:
    game, clock = t.running(), t.clock
    is_open = game.round is not None and clock is not None
    if turn is not None and (turn != len(game.turns) or not is_open):
        raise IllegalActionError(f"the round of turn {turn} is not open", "stale_round")
    if game.round is None or clock is None:
        raise IllegalActionError("no slap round is open", "no_round")
    if seat in game.round.away or not clock.waits_for(seat):
        raise IllegalActionError(AWAY, "done")
    if seat in game.round.done:
        raise IllegalActionError("you already said you are done this round", "done")
    return game, clock


def slap(t: Context, seat: int, text: str, client_ms: int | None, turn: int | None,
         now: float, done: bool = False) -> None:  # fmt: skip
    """Seat ``seat``'s hand on ``text`` (R16), judged (R17); with ``done``, once it counts,
    the seat's last hand of the round (R21)."""
    game, clock = current_round(t, seat, turn)
    card = Card.parse(text)
    game.check_slap(seat, card)
    n = len(game.turns)
    try:
        ms = clock.judge(seat, client_ms, now)
    except IllegalActionError as e:
        if e.code == "too_fast":
            t.emit(ev.TooFast(turn=n, seat=seat))
            t.table_update()
        raise
    t.emit(ev.Slapped(turn=n, seat=seat, card=card.text, ms=round(ms, 3), done=done))
    t.seats[seat].link.compensated(clock.elapsed(seat, now) - ms, now)
    conn = t.seats[seat].conn
    if conn is not None:
        # A p.Accepted, its bytes made as a broadcast's head is (a model costs ten times more)
        t.send(conn, encode({"type": "accepted", "turn": n, "card": card.text, "ms": round(ms)}))
    hands(t, now)
    maybe_close(t, now)


def done(t: Context, seat: int, turn: int | None, now: float) -> None:
    game, _ = current_round(t, seat, turn)
    t.emit(ev.SaidDone(turn=len(game.turns), seat=seat))
    hands(t, now)
    maybe_close(t, now)


def round_deadline(t: Context) -> float | None:
    game, clock = t.game, t.clock
    if game is None or game.round is None or clock is None:
        return None
    incomplete = game.incomplete(clock.sent_at)
    return clock.deadline(incomplete) if incomplete else None


def maybe_close(t: Context, now: float) -> None:
    """Decide the round if no slap still to come can count (R21)."""
    game, clock = t.game, t.clock
    if game is None or game.round is None or clock is None:
        return
    deadline = round_deadline(t)
    if deadline is not None and now < deadline:
        return
    n = len(game.turns)
    t.emit(ev.Closed(turn=n))
    upcoming = t.upcoming_turn_ms()
    t.tell_all({"type": "round", "turn": n, "turn_deadline_ms": upcoming})
    next(t, now)


# -- the end ---------------------------------------------------------------------------


def finish(t: Context) -> None:
    game = t.game
    if game is None or t.game_id is None:
        return
    entries = [s.record_entry() for s in t.seats]
    record = to_record(game, entries, id=t.game_id, started_at=t.started_at,
                       with_commitment=True, min_reaction_ms=MIN_HUMAN_MS)  # fmt: skip
    t.outcome().mark_end()
    t.emit(over(t, t.game_id, record))
    info = t.info()
    t.tell_all({"type": "over", "result": record["result"], "seed": str(game.seed),
                "commitment": record["commitment"], "record_url": info.record_url or "",
                "table": info.model_dump(mode="json")})  # fmt: skip


def over(t: Context, game_id: str, record: dict[str, Any]) -> ev.Over:
    """The ``over`` event, with what ratings need: each seat's player, too-fast count and
    reveals of its own."""
    return ev.Over(game_id=game_id, record=record_json(record),
                   players=[None if s.is_bot else s.player for s in t.seats],
                   too_fast=[s.too_fast for s in t.seats],
                   own_reveals=[s.reveals for s in t.seats],
                   takes_bots=t.options.bot_accounts, public=t.options.public)  # fmt: skip
