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

from sqlalchemy import Column, Float, Integer, MetaData, String, Table, Text, column, select
from sqlalchemy import table as table_of
from sqlalchemy.engine import Connection

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
#: The players' games, as far as their hands are read here (the table is the players store's).
_games = table_of("flyswat_player_games", column("id"), column("player_id"), column("hands"))

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


def history(conn: Connection, player_id: str, limit: int = WINDOW) -> list[GameHands]:
    """The player's latest ``limit`` games' hands as kept, oldest first."""
    rows = conn.execute(select(_games.c.hands)
                        .where(_games.c.player_id == player_id, _games.c.hands.is_not(None))
                        .order_by(_games.c.id.desc()).limit(limit))  # fmt: skip
    return [GameHands.from_json(json.loads(r[0])) for r in reversed(list(rows))]


def weigh(conn: Connection, player_id: str, game: GameHands, at: str) -> Verdict:
    """Weigh the player's games so far and ``game`` (not kept yet); a player flagged for
    the first time is put under review, and the figures of one already listed are brought
    up to date (one an operator cleared stays cleared)."""
    verdict = assess([*history(conn, player_id, WINDOW - 1), game])
    row = conn.execute(select(fairplay.c.state).where(fairplay.c.player_id == player_id)).first()
    figures = {"score": verdict.score, "reason": verdict.reason, "games": verdict.games,
               "first_hands": verdict.first_hands, "evidence": json.dumps(verdict.evidence),
               "updated_at": at}  # fmt: skip
    if row is not None:
        conn.execute(fairplay.update().where(fairplay.c.player_id == player_id).values(**figures))
    elif verdict.flagged:
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
