"""Arenas: timed tournaments, their players' standings and the tables they were paired at.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "flyswat_arenas",
        sa.Column("id", sa.String(48), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("starts", sa.Float, nullable=False),
        sa.Column("ends", sa.Float, nullable=False),
        sa.Column("created", sa.Float, nullable=False),
        sa.Column("pairer", sa.String(200), nullable=True),
        sa.Column("lease", sa.Float, nullable=False, server_default="0"),
        sa.Column("final", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("winner", sa.String(64), nullable=True),
    )
    op.create_index("ix_flyswat_arenas_ends", "flyswat_arenas", ["ends"])
    op.create_table(
        "flyswat_arena_players",
        sa.Column("arena", sa.String(48), primary_key=True),
        sa.Column("player", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("joined", sa.Float, nullable=False),
        sa.Column("points", sa.Integer, nullable=False, server_default="0"),
        sa.Column("games", sa.Integer, nullable=False, server_default="0"),
        sa.Column("wins", sa.Integer, nullable=False, server_default="0"),
        sa.Column("streak", sa.Integer, nullable=False, server_default="0"),
        sa.Column("active", sa.Boolean, nullable=False, server_default=sa.true()),
        sa.Column("seen", sa.Float, nullable=False),
        sa.Column("code", sa.String(16), nullable=True),
        sa.Column("rank", sa.Integer, nullable=True),
    )
    # A player's arenas (their profile) are read by this.
    op.create_index("ix_flyswat_arena_players_player", "flyswat_arena_players", ["player"])
    op.create_table(
        "flyswat_arena_tables",
        sa.Column("code", sa.String(16), primary_key=True),
        sa.Column("arena", sa.String(48), nullable=False),
        sa.Column("paired", sa.Float, nullable=False),
        sa.Column("game_id", sa.String(64), nullable=True),
        sa.Column("counted", sa.Boolean, nullable=False, server_default=sa.false()),
    )
    op.create_index("ix_flyswat_arena_tables_arena", "flyswat_arena_tables", ["arena"])


def downgrade() -> None:
    op.drop_index("ix_flyswat_arena_tables_arena", "flyswat_arena_tables")
    op.drop_table("flyswat_arena_tables")
    op.drop_index("ix_flyswat_arena_players_player", "flyswat_arena_players")
    op.drop_table("flyswat_arena_players")
    op.drop_index("ix_flyswat_arenas_ends", "flyswat_arenas")
    op.drop_table("flyswat_arenas")
