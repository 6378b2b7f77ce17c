"""The event log, the tables' states and the records (schema 1 of the pre-Alembic store).

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A store made before Alembic already has these: create only what is missing.
    have = set(sa.inspect(op.get_bind()).get_table_names())
    if "flyswat_tables" not in have:
        op.create_table(
            "flyswat_tables",
            sa.Column("code", sa.String(16), primary_key=True),
            sa.Column("state", sa.String(16), nullable=False),
            sa.Column("created_at", sa.String(40), nullable=False),
        )
    if "flyswat_events" not in have:
        op.create_table(
            "flyswat_events",
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("code", sa.String(16), nullable=False),
            sa.Column("kind", sa.String(16), nullable=False),
            sa.Column("data", sa.Text, nullable=False),
            sa.Column("at", sa.String(40), nullable=False),
        )
        op.create_index("ix_flyswat_events_code", "flyswat_events", ["code"])
    if "flyswat_records" not in have:
        op.create_table(
            "flyswat_records",
            sa.Column("game_id", sa.String(40), primary_key=True),
            sa.Column("code", sa.String(16), nullable=False),
            sa.Column("record", sa.Text, nullable=False),
        )
        op.create_index("ix_flyswat_records_code", "flyswat_records", ["code"])
    if "flyswat_meta" in have:  # the hand-written migrations' own table, now Alembic's
        op.drop_table("flyswat_meta")


def downgrade() -> None:
    op.drop_table("flyswat_records")
    op.drop_table("flyswat_events")
    op.drop_table("flyswat_tables")
