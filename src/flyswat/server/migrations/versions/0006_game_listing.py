"""The list of finished games: whether a game's table was public, its seats and names, and
whether it was rated, kept on the game's row so that Replays can list and filter the recent
public games without reading a record or a table's events.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("flyswat_games") as batch:
        batch.add_column(sa.Column("public", sa.Boolean, nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("seats", sa.Integer, nullable=False, server_default="0"))
        batch.add_column(sa.Column("rated", sa.Boolean, nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("names", sa.Text, nullable=True))  # the record's seats
    op.create_index("ix_flyswat_games_listed", "flyswat_games", ["public", "seats", "id"])
    _fill(op.get_bind())


def _fill(bind: sa.engine.Connection) -> None:
    """The games kept before this revision: their listing read once from what the store has
    (the table's create event, the game's entries and record, its players' rows)."""
    games = sa.table("flyswat_games", sa.column("id"), sa.column("game_id"), sa.column("code"),
                     sa.column("entries"), sa.column("public"), sa.column("seats"),
                     sa.column("rated"), sa.column("names"))  # fmt: skip
    events = sa.table("flyswat_events", sa.column("code"), sa.column("kind"), sa.column("data"))
    records = sa.table("flyswat_records", sa.column("game_id"), sa.column("record"))
    rows = sa.table("flyswat_player_games", sa.column("game_id"), sa.column("rated"))
    private = {
        code
        for code, data in bind.execute(
            sa.select(events.c.code, events.c.data).where(events.c.kind == "create")
        )
        if json.loads(str(data)).get("options", {}).get("public") is False
    }
    rated = {g for (g,) in bind.execute(sa.select(rows.c.game_id).where(rows.c.rated))}
    for gid, code, entries in list(
        bind.execute(sa.select(games.c.game_id, games.c.code, games.c.entries))
    ):
        record = bind.execute(sa.select(records.c.record).where(records.c.game_id == gid)).scalar()
        names = json.dumps(json.loads(str(record))["seats"]) if record else None
        bind.execute(
            sa.update(games).where(games.c.game_id == gid).values(
                public=code not in private, seats=len(json.loads(str(entries))), rated=gid in rated,
                names=names,
            )
        )  # fmt: skip


def downgrade() -> None:
    op.drop_index("ix_flyswat_games_listed", "flyswat_games")
    with op.batch_alter_table("flyswat_games") as batch:
        for name in ("names", "rated", "seats", "public"):
            batch.drop_column(name)
