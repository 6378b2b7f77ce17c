"""Fair play in the store: each player's hands weighed at each game's end, the players
under review, and what an operator reads and does about them.

Functions of an SQLAlchemy :class:`~sqlalchemy.engine.Connection`, run in the transaction of
the game's ``over`` event (:func:`flyswat.server.players_store.record_game`), so a player
flagged by a game is not rated by it. The detector is :mod:`flyswat.fairplay` (pure); the
schema is migration ``0004``. A flagged player is shown to nobody as one: no public answer
reads this table; their games are simply not rated while they are under review
(``docs/PLAYERS.md``, *Fair play*).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from sqlalchemy import Column, Float, Integer, MetaData, String, Table, Text, column, select
from sqlalchemy import table as table_of
from sqlalchemy.engine import Connection
from sqlalchemy.sql import TextClause, text

from flyswat.fairplay import WINDOW, GameHands, assess

metadata = MetaData()

fairplay = Table(
    "flyswat_fairplay",
    metadata,
    Column("player_id", String(64), primary_key=True),
    Column("state", String(16), nullable=False),
    Column("score", Float, nullable=False),
    Column("reason", Text, nullable=False),
    Column("games", Integer, nullable=False),
    Column("first_hands", Integer, nullable=False),
    Column("evidence", Text, nullable=False),
    Column("flagged_at", String(40), nullable=False),
    Column("updated_at", String(40), nullable=False),
)

#: Under review: not rated. Cleared: an operator looked and found nothing (rated again).
REVIEW, CLEARED = "review", "cleared"


#: Players' latest games' hands, and which of them are listed, in one row: read at every
#: game's end in the writer's transaction, where each statement, and each row SQLite's driver
#: steps to, lets the interpreter's lock go — a wait behind the busy loop each. Each player's
#: window is its own ``ORDER BY id DESC LIMIT`` (their index, not all their games), the
#: windows joined by ``UNION ALL``. (The players' games table is the players store's.)
_LATEST = ("SELECT * FROM (SELECT player_id, id, hands FROM flyswat_player_games"
           " WHERE player_id = :p{i} AND hands IS NOT NULL"
           " ORDER BY id DESC LIMIT :n) AS w{i}")  # fmt: skip
_WINDOWS = {
    "sqlite": ("SELECT json_array((SELECT json_group_array(json_array(player_id, id, json(hands)))"
               " FROM ({latest})), (SELECT json_group_array(json_array(player_id, state))"
               " FROM flyswat_fairplay WHERE player_id IN ({ids})))"),
    "postgresql": ("SELECT json_build_array((SELECT json_agg(json_build_array(player_id, id,"
                   " hands::json)) FROM ({latest}) AS h), (SELECT json_agg(json_build_array("
                   "player_id, state)) FROM flyswat_fairplay WHERE player_id IN ({ids})))"),
}  # fmt: skip


@functools.cache
def _windows_sql(dialect: str, count: int) -> TextClause:
    """:data:`_WINDOWS` for ``count`` players (``:p0`` …), made once for each count."""
    latest = " UNION ALL ".join(_LATEST.format(i=i) for i in range(count))
    ids = ", ".join(f":p{i}" for i in range(count))
    return text(_WINDOWS[dialect].format(latest=latest, ids=ids))


def windows(conn: Connection, player_ids: Sequence[str],
            limit: int = WINDOW) -> tuple[dict[str, list[GameHands]], dict[str, str]]:  # fmt: skip
    """Each player's latest ``limit`` games' hands as kept, oldest first (none: not in it),
    and the state of each one listed for fair play, in one statement."""
    ids = sorted(set(player_ids))
    if not ids:
        return {}, {}
    params: dict[str, Any] = {f"p{i}": pid for i, pid in enumerate(ids)}
    got = conn.execute(_windows_sql(conn.dialect.name, len(ids)), {**params, "n": limit}).scalar()
    games, listed = orjson.loads(got) if isinstance(got, str) else (got or (None, None))
    out: dict[str, list[GameHands]] = {}
    for pid, _, hands in sorted(games or [], key=lambda g: (g[0], g[1])):
        out.setdefault(pid, []).append(GameHands.from_json(hands))
    return out, {pid: state for pid, state in listed or []}


def history(conn: Connection, player_id: str, limit: int = WINDOW) -> list[GameHands]:
    """The player's latest ``limit`` games' hands as kept, oldest first."""
    return windows(conn, [player_id], limit)[0].get(player_id, [])


def weigh(conn: Connection, games: Mapping[str, GameHands], at: str) -> set[str]:
    """Weigh each player's games so far with their game in ``games`` (not kept yet); a
    player flagged for the first time is put under review, and the figures of one already
    listed are brought up to date (one an operator cleared stays cleared). The players
    under review now. One statement reads every window; one is written only for a player
    listed or flagged."""
    kept, listed = windows(conn, list(games), WINDOW - 1)
    review = set()
    for pid in sorted(games):
        verdict = assess([*kept.get(pid, []), games[pid]])
        state = listed.get(pid)
        if state is None and not verdict.flagged:
            continue  # nothing to keep of a player nobody listed
        figures = {"score": verdict.score, "reason": verdict.reason, "games": verdict.games,
                   "first_hands": verdict.first_hands,
                   "evidence": json.dumps(verdict.evidence), "updated_at": at}  # fmt: skip
        if state is None:
            conn.execute(fairplay.insert().values(player_id=pid, state=REVIEW, flagged_at=at,
                                                  **figures))  # fmt: skip
            state = REVIEW
        else:
            conn.execute(fairplay.update().where(fairplay.c.player_id == pid).values(**figures))
        if state == REVIEW:
            review.add(pid)
    return review


def listing(conn: Connection, everyone: bool = False) -> list[dict[str, Any]]:
    """The players under review (``everyone``: cleared ones too), highest score first, with
    their names: what an operator reads."""
    players = table_of("flyswat_players", column("id"), column("name"))
    query = (select(fairplay, players.c.name)
             .join(players, players.c.id == fairplay.c.player_id, isouter=True)
             .order_by(fairplay.c.score.desc(), fairplay.c.player_id))  # fmt: skip
    if not everyone:
        query = query.where(fairplay.c.state == REVIEW)
    out = []
    for r in conn.execute(query).mappings():
        row = dict(r)
        row["evidence"] = json.loads(row["evidence"])
        out.append(row)
    return out


def clear(conn: Connection, player_id: str, at: str) -> bool:
    """An operator found nothing: the player is rated again. False if they were not listed."""
    done = conn.execute(fairplay.update().where(fairplay.c.player_id == player_id)
                        .values(state=CLEARED, updated_at=at))  # fmt: skip
    return bool(done.rowcount)
