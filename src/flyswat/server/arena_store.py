"""Arenas in the store (Alembic revision ``0008``): each arena, its players' standings and
the tables its players were paired at. Plain functions over a connection, each in the
caller's transaction, as :mod:`flyswat.server.challenges_store` is; the rules are
:mod:`flyswat.players.arena`'s, the routes and the pairing loop
:mod:`flyswat.server.arena_routes`'s.

A game is counted for its arena in the transaction that keeps the game (:func:`count`,
called by :class:`~flyswat.server.store.Store` beside
:func:`~flyswat.server.players_store.record_game`, after it): the arena's table row takes
the game's id once, so a game written again (a table adopted by another node replays
nothing twice: the store is fenced) or a rematch at the same table is never counted twice.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    bindparam,
    func,
    or_,
    select,
    update,
)
from sqlalchemy.engine import Connection

from flyswat.errors import IllegalActionError
from flyswat.players import arena as core
from flyswat.server import players_store as ps

metadata = MetaData()

arenas = Table(
    "flyswat_arenas",
    metadata,
    Column("id", String(48), primary_key=True),
    Column("name", String(64), nullable=False),
    Column("starts", Float, nullable=False),
    Column("ends", Float, nullable=False),
    Column("created", Float, nullable=False),
    Column("pairer", String(200)),
    Column("lease", Float, nullable=False, default=0.0),
    Column("final", Boolean, nullable=False, default=False),
    Column("winner", String(64)),
)
arena_players = Table(
    "flyswat_arena_players",
    metadata,
    Column("arena", String(48), primary_key=True),
    Column("player", String(64), primary_key=True),
    Column("name", String(64), nullable=False),
    Column("joined", Float, nullable=False),
    Column("points", Integer, nullable=False, default=0),
    Column("games", Integer, nullable=False, default=0),
    Column("wins", Integer, nullable=False, default=0),
    Column("streak", Integer, nullable=False, default=0),
    Column("active", Boolean, nullable=False, default=True),
    Column("seen", Float, nullable=False),
    Column("code", String(16)),
    Column("rank", Integer),
)
arena_tables = Table(
    "flyswat_arena_tables",
    metadata,
    Column("code", String(16), primary_key=True),
    Column("arena", String(48), nullable=False),
    Column("paired", Float, nullable=False),
    Column("game_id", String(64)),
    Column("counted", Boolean, nullable=False, default=False),
)
# The store's own table of tables (their state), read to know who is still playing.
_tables = Table(
    "flyswat_tables",
    MetaData(),
    Column("code", String(16), primary_key=True),
    Column("state", String(16), nullable=False),
)

#: Ended arenas listed, the latest first; players shown in an arena's standings, at most.
SHOWN_ENDED, SHOWN_STANDINGS = 10, 100
#: Arenas not yet ended at once, at most (an operator's typo must not make thousands).
MAX_OPEN_ARENAS = 50


def _arena(conn: Connection, aid: str) -> dict[str, Any]:
    row = conn.execute(select(arenas).where(arenas.c.id == aid)).mappings().first()
    if row is None:
        raise IllegalActionError("no arena with that id", "no_arena")
    return dict(row)


def create(conn: Connection, aid: str, name: str, starts: float, ends: float, now: float) -> bool:
    """A new arena (False when one with ``aid`` exists: a schedule's, made by another node);
    raises ``too_many_arenas`` past :data:`MAX_OPEN_ARENAS` not yet ended, having written
    nothing. Two nodes making a schedule's arena at the same moment: one commits, the
    other's transaction fails on the key and finds it made on its next pass."""
    if conn.execute(select(arenas.c.id).where(arenas.c.id == aid)).first():
        return False
    running = conn.execute(select(func.count()).select_from(arenas)
                           .where(arenas.c.ends > now)).scalar_one()  # fmt: skip
    if running >= MAX_OPEN_ARENAS:
        raise IllegalActionError(
            f"at most {MAX_OPEN_ARENAS} arenas not yet ended", "too_many_arenas"
        )
    conn.execute(arenas.insert().values(id=aid, name=name, starts=starts, ends=ends,
                                        created=now, lease=0.0, final=False))  # fmt: skip
    return True


def _shown(row: Any, players: int, winner: dict[str, Any] | None, now: float) -> dict[str, Any]:
    """An arena as the protocol shows it (``ArenaInfo``)."""
    return {
        "id": row["id"], "name": row["name"],
        "phase": core.phase(row["starts"], row["ends"], now).value,
        "starts_in_s": max(0, round(row["starts"] - now)),
        "ends_in_s": max(0, round(row["ends"] - now)),
        "minutes": round((row["ends"] - row["starts"]) / 60),
        "players": players, "winner": winner,
    }  # fmt: skip


def _counts(conn: Connection, ids: Sequence[str]) -> dict[str, int]:
    if not ids:
        return {}
    rows = conn.execute(select(arena_players.c.arena, func.count()).where(
        arena_players.c.arena.in_(ids)).group_by(arena_players.c.arena))  # fmt: skip
    return {r[0]: int(r[1]) for r in rows}


def _winners(conn: Connection, rows: Sequence[Any]) -> dict[str, dict[str, Any]]:
    wanted = [(r["id"], r["winner"]) for r in rows if r["winner"]]
    out = {}
    for aid, pid in wanted:
        found = conn.execute(select(arena_players.c.name, arena_players.c.points).where(
            arena_players.c.arena == aid, arena_players.c.player == pid)).first()  # fmt: skip
        if found is not None:
            out[aid] = {"id": pid, "name": found[0], "points": int(found[1])}
    return out


def listing(conn: Connection, now: float) -> list[dict[str, Any]]:
    """The arenas not yet ended (the soonest to end first), then the latest ended ones."""
    a = arenas.c
    open_ = conn.execute(select(arenas).where(a.ends > now).order_by(a.ends, a.id)
                         .limit(MAX_OPEN_ARENAS)).mappings().all()  # fmt: skip
    ended = conn.execute(select(arenas).where(a.ends <= now).order_by(a.ends.desc(), a.id)
                         .limit(SHOWN_ENDED)).mappings().all()  # fmt: skip
    rows = [*open_, *ended]
    counts = _counts(conn, [r["id"] for r in rows])
    winners = _winners(conn, rows)
    return [_shown(r, counts.get(r["id"], 0), winners.get(r["id"]), now) for r in rows]


def one(conn: Connection, aid: str, now: float) -> dict[str, Any]:
    """Arena ``aid`` as the protocol shows it; raises ``no_arena``."""
    row = _arena(conn, aid)
    return _shown(row, _counts(conn, [aid]).get(aid, 0), _winners(conn, [row]).get(aid), now)


def _standing(r: Any) -> core.Standing:
    return core.Standing(r["player"], r["name"], r["joined"], r["points"], r["games"],
                         r["wins"], r["streak"])  # fmt: skip


def players_of(conn: Connection, aid: str) -> list[dict[str, Any]]:
    """Every player of arena ``aid``: their row, and whether the table they were last paired
    at is still unfinished (``playing``: a lobby or a game whose game is not yet kept)."""
    ap, at, t = arena_players.c, arena_tables.c, _tables.c
    unfinished = (at.game_id.is_(None) & t.state.in_(("lobby", "playing"))).label("playing")
    query = (select(arena_players, unfinished)
             .select_from(arena_players.outerjoin(arena_tables, at.code == ap.code)
                          .outerjoin(_tables, t.code == ap.code))
             .where(ap.arena == aid))  # fmt: skip
    return [dict(r) | {"playing": bool(r["playing"])} for r in conn.execute(query).mappings()]


def standings(rows: Sequence[dict[str, Any]]) -> list[core.Standing]:
    """The :class:`~flyswat.players.arena.Standing` of each of :func:`players_of`'s rows."""
    return [_standing(r) for r in rows]


def join(conn: Connection, aid: str, player: str, name: str, now: float) -> None:
    """``player`` takes part in arena ``aid`` from now (again, after leaving: their points
    stay); raises ``no_arena``, ``arena_over``."""
    row = _arena(conn, aid)
    if core.phase(row["starts"], row["ends"], now) is core.Phase.ENDED:
        raise IllegalActionError("this arena has ended", "arena_over")
    ap = arena_players.c
    mine = (ap.arena == aid) & (ap.player == player)
    if conn.execute(select(ap.player).where(mine)).first():
        conn.execute(update(arena_players).where(mine).values(active=True, seen=now))
        return
    conn.execute(arena_players.insert().values(arena=aid, player=player, name=name, joined=now,
                                               points=0, games=0, wins=0, streak=0, active=True,
                                               seen=now))  # fmt: skip


def leave(conn: Connection, aid: str, player: str) -> None:
    """``player`` is paired no more in arena ``aid`` (their points stay); raises
    ``no_arena``, ``not_in_arena``."""
    _arena(conn, aid)
    ap = arena_players.c
    done = conn.execute(update(arena_players).where(ap.arena == aid, ap.player == player)
                        .values(active=False))  # fmt: skip
    if done.rowcount == 0:
        raise IllegalActionError("you have not joined this arena", "not_in_arena")


def seen(conn: Connection, aid: str, players: Sequence[str], now: float) -> None:
    """``players`` of arena ``aid`` asked for it at ``now`` (they are there to be paired)."""
    if players:
        ap = arena_players.c
        conn.execute(update(arena_players).where(ap.arena == aid, ap.player.in_(players))
                     .values(seen=now))  # fmt: skip


def to_pair(conn: Connection, node: str, now: float, lease_s: float) -> list[dict[str, Any]]:
    """The arenas that pair now whose pairing this node holds (taken, or kept, for
    ``lease_s`` seconds: one node pairs an arena at a time; another takes it over when this
    one stops renewing, as when it dies)."""
    a = arenas.c
    mine = or_(a.pairer == node, a.lease < now, a.pairer.is_(None))
    cutoff = now + core.LAST_PAIRING_S
    conn.execute(update(arenas).where(a.starts <= now, a.ends > cutoff, mine)
                 .values(pairer=node, lease=now + lease_s))  # fmt: skip
    rows = conn.execute(select(arenas).where(a.starts <= now, a.ends > cutoff, a.pairer == node)
                        ).mappings().all()  # fmt: skip
    return [dict(r) for r in rows if core.pairs_now(r["starts"], r["ends"], now)]


def waiting(rows: Sequence[dict[str, Any]], now: float) -> list[core.Standing]:
    """Of :func:`players_of`'s rows, the players to pair: taking part, asked for the arena
    in the last :data:`~flyswat.players.arena.PRESENCE_S` seconds, at no unfinished table."""
    return [_standing(r) for r in rows if r["active"] and not r["playing"]
            and r["seen"] >= now - core.PRESENCE_S]  # fmt: skip


def seated(conn: Connection, aid: str, code: str, players: Sequence[str], now: float) -> None:
    """``players`` of arena ``aid`` were paired at table ``code``."""
    conn.execute(arena_tables.insert().values(code=code, arena=aid, paired=now, counted=False))
    ap = arena_players.c
    conn.execute(update(arena_players).where(ap.arena == aid, ap.player.in_(players))
                 .values(code=code))  # fmt: skip


_ARENA_TABLE = select(arena_tables).where(arena_tables.c.code == bindparam("code"))


def count(conn: Connection, code: str, game_id: str, seat_players: Sequence[str | None],
          places: Sequence[int], now: float) -> bool:  # fmt: skip
    """Count game ``game_id`` that ended at table ``code`` at ``now`` for the table's arena,
    in the caller's transaction (the one that keeps the game: its players' rated flags are
    read from it); True when it counted. Not a table of an arena, a second game at the same
    table (a rematch), a game kept again, or one that ended after its arena: nothing."""
    at = arena_tables.c
    row = conn.execute(_ARENA_TABLE, {"code": code}).mappings().first()
    if row is None or row["game_id"] is not None:
        return False
    arena = _arena(conn, row["arena"])
    counted = core.counts(arena["ends"], now) and not arena["final"]
    conn.execute(update(arena_tables).where(at.code == code, at.game_id.is_(None))
                 .values(game_id=game_id, counted=counted))  # fmt: skip
    if not counted:
        return False
    seats = [*seat_players[: len(places)], *[None] * (len(places) - len(seat_players))]
    ids = sorted({pid for pid in seats if pid is not None})
    ap, pg = arena_players.c, ps.player_games.c
    rows = conn.execute(select(arena_players).where(ap.arena == arena["id"], ap.player.in_(ids))
                        ).mappings().all()  # fmt: skip
    rated = {r[0] for r in conn.execute(select(pg.player_id).where(
        pg.game_id == game_id, pg.rated.is_(True)))}  # fmt: skip
    after = core.scored_table({r["player"]: _standing(r) for r in rows}, seats, places, rated)
    for pid, s in after.items():
        mine = (ap.arena == arena["id"]) & (ap.player == pid)
        conn.execute(update(arena_players).where(mine).values(
            points=s.points, games=s.games, wins=s.wins, streak=s.streak))  # fmt: skip
    return True


def to_finish(conn: Connection, now: float) -> list[str]:
    """The arenas that have ended and whose standings are not yet frozen."""
    a = arenas.c
    return [r[0] for r in conn.execute(select(a.id).where(a.ends <= now, a.final.is_(False)))]


def finish(conn: Connection, aid: str, now: float) -> None:
    """Freeze the standings of arena ``aid`` if it has ended: each player's final place,
    and the winner (the leader, if anybody scored)."""
    row = _arena(conn, aid)
    if row["final"] or core.phase(row["starts"], row["ends"], now) is not core.Phase.ENDED:
        return
    ranked = core.ranked(standings(players_of(conn, aid)))
    ap = arena_players.c
    for place, s in enumerate(ranked, start=1):
        conn.execute(update(arena_players).where(ap.arena == aid, ap.player == s.player)
                     .values(rank=place))  # fmt: skip
    best = core.winner(ranked)
    conn.execute(update(arenas).where(arenas.c.id == aid, arenas.c.final.is_(False))
                 .values(final=True, winner=best.player if best else None))  # fmt: skip


def results_of(conn: Connection, player: str, limit: int = 20) -> list[dict[str, Any]]:
    """``player``'s ended arenas, the latest first: name, place, points, games, players."""
    a, ap = arenas.c, arena_players.c
    rows = conn.execute(
        select(a.id, a.name, a.ends, a.winner, ap.rank, ap.points, ap.games)
        .join(arena_players, ap.arena == a.id)
        .where(ap.player == player, a.final.is_(True))
        .order_by(a.ends.desc()).limit(limit)
    ).mappings().all()  # fmt: skip
    counts = _counts(conn, [r["id"] for r in rows])
    return [{"id": r["id"], "name": r["name"], "place": r["rank"], "points": r["points"],
             "games": r["games"], "players": counts.get(r["id"], 0),
             "won": r["winner"] == player} for r in rows]  # fmt: skip


def wins_of(conn: Connection, player: str) -> int:
    """How many arenas ``player`` won."""
    return int(conn.execute(select(func.count()).select_from(arenas)
                            .where(arenas.c.winner == player)).scalar_one())  # fmt: skip


def tables_of(conn: Connection, aid: str) -> list[dict[str, Any]]:
    """Every table paired in arena ``aid``: code, the game kept there first, counted or not."""
    at = arena_tables.c
    rows = conn.execute(select(arena_tables).where(at.arena == aid).order_by(at.paired, at.code))
    return [dict(r) for r in rows.mappings()]


def now() -> float:
    """The wall clock an arena's times are on (seconds since the epoch)."""
    return time.time()
