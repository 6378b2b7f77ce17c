"""A table beyond one game: rematch, leaving, the host's controls, and Play now's bot fill.

Functions of :class:`flyswat.table.core.Table`, as :mod:`~flyswat.table.turns` is: each
checks in full first (raising :class:`~flyswat.errors.FlyswatError` changes nothing), then
emits typed events (:mod:`flyswat.table.events`: stored before anyone is told, and folded
again by :func:`apply` when a restarted server rebuilds the table), then lists messages.

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

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from flyswat import bots
from flyswat import protocol as p
from flyswat.errors import IllegalActionError, MalformedError
from flyswat.players.ratings import BOT_RATINGS
from flyswat.table import events as ev
from flyswat.table.io import Close

if TYPE_CHECKING:
    from flyswat.table.core import Table

#: The close code of a kicked player's socket.
CLOSE_KICKED = 4403


# -- applying stored events ---------------------------------------------------------------


def apply(t: Table, event: ev.Event) -> None:
    """Change the table by one of this module's events."""
    match event:
        case ev.RematchSet(seat=seat, accept=accept):
            t.seats[seat].rematch = accept
        case ev.Reset():
            t.state, t.game, t.game_id, t.record = "lobby", None, None, None
            t.clock, t.bot_plans, t.turn_due = None, [], None
            t.games_played += 1
            for s in t.seats:
                s.too_fast, s.rematch, s.reveals = 0, False, 0
        case ev.Left(seat=seat, host=host):
            _free(t, seat)
            t.host = host
        case ev.Kicked(seat=seat):
            _free(t, seat)
        case ev.SeatToBot(seat=seat, level=level):
            s = t.seats[seat]
            s.kind, s.level, s.name = "bot", level, f"Bot {seat + 1}"
            s.token_hash, s.player, s.rating, s.ready, s.away_since = None, None, None, True, None
            s.bot_account = False


def _free(t: Table, seat: int) -> None:
    s = t.seats[seat]
    s.name, s.token_hash, s.player, s.rating = None, None, None, None
    s.ready, s.rematch, s.away_since, s.bot_account = False, False, None, False


def rating_of(t: Table, seat: int) -> int | None:
    """The shown rating of a seat: its player's when they sat down, a bot's level's."""
    s = t.seats[seat]
    if s.is_bot:
        r = BOT_RATINGS.get(str(s.level))
        return r.shown if r is not None else None
    return s.rating


def over(t: Table, game_id: str, record: dict[str, Any]) -> ev.Over:
    """The ``over`` event, with what ratings need: each seat's player, too-fast count and
    reveals of its own."""
    return ev.Over(game_id=game_id, record=record,
                   players=[None if s.is_bot else s.player for s in t.seats],
                   too_fast=[s.too_fast for s in t.seats],
                   own_reveals=[s.reveals for s in t.seats],
                   takes_bots=t.options.bot_accounts)  # fmt: skip


def check_bot_account(t: Table, player: str | None, host: bool = False) -> None:
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


def arm(t: Table, now: float) -> None:
    """Start a Play now table's wait for bots (again, after a restart)."""
    ms = t.options.autofill_ms
    t.fill_due = now + ms if ms is not None and t.state == "lobby" else None


def wake_at(t: Table) -> float | None:
    """When the lobby's bots are due, if they are."""
    return t.fill_due if t.state == "lobby" else None


def fill_in_ms(t: Table, now: float) -> int | None:
    """ms left at ``now`` before the bots take the free seats (a Play now lobby), or None."""
    if t.state != "lobby" or t.fill_due is None:
        return None
    return max(0, round(t.fill_due - now))


def tick(t: Table, now: float) -> None:
    """The lobby's wait is over: bots take the free seats, the game starts."""
    if t.state == "lobby" and t.fill_due is not None and now >= t.fill_due:
        for s in t.seats:
            if not s.joined:
                t.emit(ev.SeatToBot(seat=s.index, level="normal"))
        _begin(t, now)


def joined(t: Table, now: float) -> None:
    """A Play now table full of players starts at once."""
    if t.state == "lobby" and t.fill_due is not None and all(s.joined for s in t.seats):
        _begin(t, now)


def start_now(t: Table, seat: int, now: float) -> None:
    """A Play now lobby's only player starts at once: bots take the free seats, as when the
    wait is over. With another player seated, the table waits for the wait or for a full table."""
    others = [s for s in t.seats if not s.is_bot and s.joined and s.index != seat]
    if others:
        raise IllegalActionError("another player is here: the table starts when full", "not_alone")
    t.fill_due = now
    tick(t, now)


def _begin(t: Table, now: float) -> None:
    t.fill_due = None
    t.begin_game(now)


# -- commands ---------------------------------------------------------------------------------


def act(t: Table, seat: int, msg: BaseModel, now: float) -> None:
    """One of :data:`flyswat.protocol.LIFECYCLE`'s messages from ``seat``."""
    if isinstance(msg, p.Rematch):
        rematch(t, seat, msg.accept, now)
    elif isinstance(msg, p.Leave):
        leave(t, seat, now)
    elif isinstance(msg, p.SeatBot):
        seat_bot(t, seat, msg.target, msg.level, now)
    elif isinstance(msg, p.Kick):
        kick(t, seat, msg.target, now)


def _check_seat(t: Table, target: int) -> None:
    if target >= len(t.seats):
        raise MalformedError(f"the table has no seat {target}", "bad_seat")


def _over(t: Table) -> None:
    if t.state == "expired":
        raise IllegalActionError("this lobby was left unused and has closed", "expired")
    if t.state != "over":
        raise IllegalActionError("the game is not over yet", "not_over")


def rematch(t: Table, seat: int, accept: bool, now: float) -> None:
    _over(t)
    if t.seats[seat].rematch != accept:
        t.emit(ev.RematchSet(seat=seat, accept=accept))
    t.table_update()
    maybe_rematch(t, now)


def maybe_rematch(t: Table, now: float) -> None:
    """Start the next game if every seated human has accepted and no seat is free."""
    humans = [s for s in t.seats if not s.is_bot]
    if t.state != "over" or not all(s.joined and s.rematch for s in humans) or not humans:
        return
    t.emit(ev.Reset())
    t.tell_everyone(p.Rematched(table=t.info()))
    t.begin_game(now)


def leave(t: Table, seat: int, now: float) -> None:
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


def seat_bot(t: Table, seat: int, target: int, level: str, now: float) -> None:
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


def kick(t: Table, seat: int, target: int, now: float) -> None:
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
        t.out.closes.append(Close(conn, CLOSE_KICKED, "kicked"))
        t.conns.pop(conn, None)
    t.table_update()
