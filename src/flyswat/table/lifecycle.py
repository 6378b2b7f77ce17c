"""A table beyond one game: rematch, leaving, the host's controls, and Play now's bot fill.

Functions of a table's :class:`~flyswat.table.context.Context`, as :mod:`~flyswat.table.turns`'
are: each checks in full first (raising :class:`~flyswat.errors.FlyswatError` changes
nothing), then emits typed events (:mod:`flyswat.table.events`: stored before anyone is told,
and folded again by :meth:`~flyswat.table.context.Context.apply` when a restarted server
rebuilds the table), then lists messages.

- ``rematch`` (at the end): a human accepts another game at the same seats; bots always do.
  When every seated human has accepted and no seat is free, the table is reset (``reset``)
  and the next game starts at once.
- ``leave`` (lobby or end): the seat is given up; when it was the host's, the host is the
  next seated human.
- ``seat_bot`` (host; lobby or end): a bot takes a free seat, or one whose player is absent.
- ``kick`` (host; lobby): a player is removed from the table; their socket is closed with
  ``kicked`` (4403), and their token no longer opens the seat.
- A table made with ``autofill_ms`` (Play now) waits that long in the lobby; then bots take
  every free seat and the game starts, nobody needing to press start. Full of humans sooner,
  it starts sooner; its only player may start it at once (``start``), with bots.
"""

from __future__ import annotations

from flyswat import bots
from flyswat import protocol as p
from flyswat.errors import IllegalActionError, MalformedError
from flyswat.table import events as ev
from flyswat.table import turns
from flyswat.table.context import Context

#: The close code of a kicked player's socket.
CLOSE_KICKED = 4403


# -- checks -----------------------------------------------------------------------------------


def check_bot_account(t: Context, player: str | None, host: bool = False) -> None:
    """May the bot account ``player`` sit here? At a table that takes bot accounts, or whose
    host invited it (a host of its own table must make it take them); raises
    ``bots_not_allowed``."""
    if t.options.bot_accounts or (not host and player is not None and player in t.options.invite):
        return
    raise IllegalActionError(
        "this table does not take bot accounts, nor did its host invite this one",
        "bots_not_allowed",
    )


# -- timers -----------------------------------------------------------------------------------


def arm(t: Context, now: float) -> None:
    """Start a Play now table's wait for bots (again, after a restart)."""
    ms = t.options.autofill_ms
    t.fill_due = now + ms if ms is not None and t.state == "lobby" else None


def wake_at(t: Context) -> float | None:
    """When the lobby's bots are due, if they are."""
    return t.fill_due if t.state == "lobby" else None


def tick(t: Context, now: float) -> None:
    """The lobby's wait is over: bots take the free seats, the game starts."""
    if t.state == "lobby" and t.fill_due is not None and now >= t.fill_due:
        for s in t.seats:
            if not s.joined:
                t.emit(ev.SeatToBot(seat=s.index, level="normal"))
        _begin(t, now)


def joined(t: Context, now: float) -> None:
    """A Play now table full of players starts at once."""
    if t.state == "lobby" and t.fill_due is not None and all(s.joined for s in t.seats):
        _begin(t, now)


def start_now(t: Context, seat: int, now: float) -> None:
    """A Play now lobby's only player starts at once: bots take the free seats, as when the
    wait is over. With another player seated, the table waits for the wait or for a full table."""
    others = [s for s in t.seats if not s.is_bot and s.joined and s.index != seat]
    if others:
        raise IllegalActionError("another player is here: the table starts when full", "not_alone")
    t.fill_due = now
    tick(t, now)


def _begin(t: Context, now: float) -> None:
    t.fill_due = None
    turns.begin(t, now)


# -- commands ---------------------------------------------------------------------------------


def _check_seat(t: Context, target: int) -> None:
    if target >= len(t.seats):
        raise MalformedError(f"the table has no seat {target}", "bad_seat")


def _over(t: Context) -> None:
    if t.state == "expired":
        raise IllegalActionError("this lobby was left unused and has closed", "expired")
    if t.state != "over":
        raise IllegalActionError("the game is not over yet", "not_over")


def rematch(t: Context, seat: int, accept: bool, now: float) -> None:
    _over(t)
    if t.seats[seat].rematch != accept:
        t.emit(ev.RematchSet(seat=seat, accept=accept))
    t.table_update()
    maybe_rematch(t, now)


def maybe_rematch(t: Context, now: float) -> None:
    """Start the next game if every seated human has accepted and no seat is free."""
    humans = [s for s in t.seats if not s.is_bot]
    if t.state != "over" or not all(s.joined and s.rematch for s in humans) or not humans:
        return
    t.emit(ev.Reset())
    t.tell_everyone(p.Rematched(table=t.info()))
    turns.begin(t, now)


def leave(t: Context, seat: int, now: float) -> None:
    if t.state == "playing":
        raise IllegalActionError("the game is on: your turns are played for you", "already_started")
    if t.state == "expired":
        raise IllegalActionError("this lobby was left unused and has closed", "expired")
    others = [s.index for s in t.seats if not s.is_bot and s.joined and s.index != seat]
    host = t.host if seat != t.host else (others[0] if others else t.host)
    conn = t.seats[seat].conn
    t.emit(ev.Left(seat=seat, host=host))
    t.seats[seat].conn = None
    if conn is not None and conn in t.conns:
        t.conns[conn].seat = None  # the socket watches from now on
        t.watchers[conn] = t.conns[conn]
        t.audience.add()
    if t.state == "lobby" and not others:
        t.emit(ev.Expired())
    t.table_update()
    maybe_rematch(t, now)


def seat_bot(t: Context, seat: int, target: int, level: str, now: float) -> None:
    if t.state not in ("lobby", "over"):
        raise IllegalActionError("the game has already started", "already_started")
    if seat != t.host:
        raise IllegalActionError("only the host can give a seat to a bot", "not_host")
    _check_seat(t, target)
    bots.params(level)  # bad_level
    s = t.seats[target]
    if s.is_bot:
        raise MalformedError(f"seat {target + 1} is a bot already", "bad_seat")
    if s.joined and s.connected:
        raise IllegalActionError(f"{s.name} is here: only an absent player's seat", "not_absent")
    t.emit(ev.SeatToBot(seat=target, level=level))
    t.table_update()
    maybe_rematch(t, now)
    joined(t, now)


def kick(t: Context, seat: int, target: int, now: float) -> None:
    if t.state != "lobby":
        raise IllegalActionError("the game has already started", "already_started")
    if seat != t.host:
        raise IllegalActionError("only the host can remove a player", "not_host")
    _check_seat(t, target)
    s = t.seats[target]
    if target == t.host or s.is_bot or not s.joined:
        raise MalformedError(f"seat {target + 1} holds no other player", "bad_seat")
    conn = s.conn
    t.emit(ev.Kicked(seat=target))
    s.conn = None
    if conn is not None and conn in t.conns:
        t.send(conn, p.Error(code="kicked", message="the host removed you from this table"))
        t.close(conn, CLOSE_KICKED, "kicked")
        t.conns.pop(conn, None)
    t.table_update()
