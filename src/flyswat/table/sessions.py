"""A table's connections: hello (one live socket per seat; spectators while the node's
:class:`~flyswat.table.seats.Audience` has room), closing one, and what a seat's leaving does
to an open round. Functions of a table's :class:`~flyswat.table.context.Context`, as
:mod:`~flyswat.table.turns`' are.

Spectators come and go without a word to the others: a ``table`` message to everyone for each
of thousands of watchers would cost the table a broadcast per watcher (their count is in
:meth:`~flyswat.table.context.Context.info`, read when asked)."""

from __future__ import annotations

from typing import Any

from flyswat import protocol as p
from flyswat.errors import IllegalActionError
from flyswat.table import events as ev
from flyswat.table import turns
from flyswat.table.context import Context
from flyswat.table.seats import Conn
from flyswat.wire import private_of

#: WebSocket close codes the table asks for.
CLOSE_REPLACED = 4409
CLOSE_POLICY = 1008
CLOSE_FULL = 1013


def hello(t: Context, conn_id: int, token: str | None, now: float) -> None:
    if token is None:
        if not t.audience.admit():
            full = p.Error(code="spectators_full", message="this server has no room to watch")
            t.send(conn_id, full)
            t.close(conn_id, CLOSE_FULL, "spectators_full")
            return
        seat = None
    else:
        found = next((s for s in t.seats if s.holds(token)), None)
        if found is None:
            raise IllegalActionError("no seat at this table has that token", "bad_token")
        if not found.bucket.take(now):
            raise IllegalActionError("too many messages: slow down", "rate_limited")
        old, found.conn, seat = found.conn, conn_id, found.index
        found.away_since = None
        if old is not None:  # one live socket per seat: the new one takes it over
            why = p.Error(code="replaced", message="this seat was opened on another connection")
            drop(t, old, CLOSE_REPLACED, "replaced", now, error=why)
    t.strangers.pop(conn_id, None)
    if seat is not None:
        back(t, seat, now)
    game = t.game
    seated = seat is not None
    if (
        seated
        and game is not None
        and t.deltas.public is not None
        and t.deltas.pending(t.view_of(None))
    ):
        # What the others have not been told yet goes out first: a delta after this welcome
        # is then taken against the very view it carries (flyswat.wire).
        t.tell_all({"type": "hands", "turn": len(game.turns)})
    conn = t.conns[conn_id] = Conn(conn_id, seat)
    if seat is None:
        t.watchers[conn_id] = conn
    t.idle_since = None
    if game is not None and seat is None and len(t.watchers) == 1:  # nobody else watches
        t.watch_deltas.public, t.watch_due = t.view_of(None), None
    # A spectator is shown what the spectators were last told (their hands may be held
    # back a moment: WATCH_HANDS_MS): the next message to them all is taken against it.
    view: Any = t.view_of(seat) if seat is not None or game is None else t.watch_deltas.public
    t.send(conn_id, p.Welcome(
        seat=seat, table=t.info(), view=view,
        window_left_ms=t.clock.window_left(now) if t.clock else None,
        turn_deadline_ms=t.turn_left(now),
    ))  # fmt: skip
    if game is not None:
        if t.deltas.public is None:  # restored, and nobody told anything yet
            t.deltas.public = t.view_of(None)
        if seat is not None:
            t.deltas.sent_whole(seat, private_of(game, seat))
    if game is not None and game.round is not None and seat is not None:
        turn = len(game.turns)
        for s in game.round.slaps:
            if s.seat == seat:
                t.send(conn_id, p.Accepted(turn=turn, card=s.card.text, ms=round(s.ms or 0)))
    if seat is not None:
        t.table_update()


def drop(
    t: Context, conn_id: int, code: int, reason: str, now: float, error: p.Error | None = None
) -> None:
    """Close ``conn_id`` (after ``error``, if given) and forget it."""
    if error is not None:
        t.send(conn_id, error)
    t.close(conn_id, code, reason)
    forget(t, conn_id, now)


def gone(t: Context, conn_id: int, now: float) -> None:
    t.strangers.pop(conn_id, None)
    conn = t.conns.get(conn_id)
    if conn is not None:
        forget(t, conn_id, now)
        if conn.seat is not None:
            t.table_update()


def forget(t: Context, conn_id: int, now: float) -> None:
    """``conn_id`` is no more; a seat left with no connection during a round is not
    waited for."""
    t.strangers.pop(conn_id, None)
    conn = t.conns.pop(conn_id, None)
    if t.watchers.pop(conn_id, None) is not None:
        t.audience.release()
    if not t.conns:
        t.idle_since = now
    if conn is None or conn.seat is None or t.seats[conn.seat].conn != conn_id:
        return
    seat = t.seats[conn.seat]
    seat.conn = None
    seat.away_since = now
    game, clock = t.game, t.clock
    waited = game and game.round and clock and clock.waits_for(seat.index)
    if waited and game is not None and not game.seat_complete(seat.index):
        t.emit(ev.Away(turn=len(game.turns), seat=seat.index))
        turns.maybe_close(t, now)


#: How many times a seat may come back into one round it dropped out of: each drop and
#: return is stored, and a seat that drops over and over must not fill the table's log.
BACKS_A_ROUND = 2


def back(t: Context, seat: int, now: float) -> None:
    """``seat``, not waited for since it dropped, is back while the round's window is still
    open for it (and it has not come back :data:`BACKS_A_ROUND` times already): it lays hands
    again (its window is the one it had)."""
    game, clock = t.game, t.clock
    r = game.round if game is not None else None
    if game is None or r is None or clock is None or seat not in r.away:
        return
    if r.backs.get(seat, 0) >= BACKS_A_ROUND:
        return
    end = clock.deadline([seat])
    if end is not None and now < end:
        t.emit(ev.Back(turn=len(game.turns), seat=seat))
