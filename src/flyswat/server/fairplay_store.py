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

import json
from collections.abc import Sequence
from typing import Any

import orjson
from sqlalchemy import Column, Float, Integer, MetaData, String, Table, Text, column, select
from sqlalchemy import table as table_of
from sqlalchemy.engine import Connection
from sqlalchemy.sql import text

from flyswat.fairplay import WINDOW, GameHands, Verdict, assess

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


def under_review(conn: Connection, ids: Sequence[str]) -> set[str]:
    """The players among ``ids`` under review now."""
    if not ids:
        return set()
    rows = conn.execute(select(fairplay.c.player_id)
                        .where(fairplay.c.player_id.in_(sorted(set(ids))),
                               fairplay.c.state == REVIEW))  # fmt: skip
    return {r[0] for r in rows}


#: A player's latest games' hands in one row, ``[id, hands]`` each: read at every game's end
#: in the writer's transaction, where SQLite's driver lets the interpreter's lock go at each
#: row it steps to — a hundred waits behind the busy loop, where one row is one.
#: (The players' games table is the players store's.)
_LATEST = ("SELECT id, hands FROM flyswat_player_games WHERE player_id = :pid"
           " AND hands IS NOT NULL ORDER BY id DESC LIMIT :n")  # fmt: skip
_HISTORY = {
    "sqlite": text(f"SELECT json_group_array(json_array(id, json(hands))) FROM ({_LATEST})"),
    "postgresql": text(f"SELECT json_agg(json_build_array(id, hands::json)) FROM ({_LATEST}) AS h"),
}


def history(conn: Connection, player_id: str, limit: int = WINDOW) -> list[GameHands]:
    """The player's latest ``limit`` games' hands as kept, oldest first."""
    got = conn.execute(_HISTORY[conn.dialect.name], {"pid": player_id, "n": limit}).scalar()
    games = orjson.loads(got) if isinstance(got, str) else (got or [])
    return [GameHands.from_json(hands) for _, hands in sorted(games, key=lambda g: g[0])]


def weigh(conn: Connection, player_id: str, game: GameHands, at: str) -> Verdict:
    """Weigh the player's games so far and ``game`` (not kept yet); a player flagged for
    the first time is put under review, and the figures of one already listed are brought
    up to date (one an operator cleared stays cleared)."""
    verdict = assess([*history(conn, player_id, WINDOW - 1), game])
    figures = {"score": verdict.score, "reason": verdict.reason, "games": verdict.games,
               "first_hands": verdict.first_hands, "evidence": json.dumps(verdict.evidence),
               "updated_at": at}  # fmt: skip
    listed = conn.execute(fairplay.update().where(fairplay.c.player_id == player_id)
                          .values(**figures)).rowcount  # fmt: skip
    if not listed and verdict.flagged:
        conn.execute(fairplay.insert().values(player_id=player_id, state=REVIEW, flagged_at=at,
                                              **figures))  # fmt: skip
    return verdict


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
