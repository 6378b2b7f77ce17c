"""Players: identities, their ratings, the games each played, and every rated game.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "flyswat_players",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("name_key", sa.String(160), nullable=False, unique=True),
        sa.Column("secret_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("mu", sa.Float, nullable=False),
        sa.Column("sigma", sa.Float, nullable=False),
        sa.Column("games", sa.Integer, nullable=False, server_default="0"),
        sa.Column("rated", sa.Integer, nullable=False, server_default="0"),
        sa.Column("claim_hash", sa.String(64), nullable=True),
        sa.Column("claim_until", sa.Float, nullable=True),
    )
    op.create_index("ix_flyswat_players_claim", "flyswat_players", ["claim_hash"])
    op.create_table(
        "flyswat_games",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("game_id", sa.String(40), nullable=False, unique=True),
        sa.Column("code", sa.String(16), nullable=False),
        sa.Column("ended_at", sa.String(40), nullable=False),
        sa.Column("entries", sa.Text, nullable=False),
    )
    op.create_index("ix_flyswat_games_code", "flyswat_games", ["code"])
    op.create_table(
        "flyswat_player_games",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("player_id", sa.String(64), nullable=False),
        sa.Column("game_id", sa.String(40), nullable=False),
        sa.Column("code", sa.String(16), nullable=False),
        sa.Column("ended_at", sa.String(40), nullable=False),
        sa.Column("seat", sa.Integer, nullable=False),
        sa.Column("seats", sa.Integer, nullable=False),
        sa.Column("place", sa.Integer, nullable=False),
        sa.Column("points", sa.Integer, nullable=False),
        sa.Column("flies", sa.Integer, nullable=False),
        sa.Column("too_fast", sa.Integer, nullable=False),
        sa.Column("slaps", sa.Integer, nullable=False),
        sa.Column("reaction_ms", sa.Float, nullable=True),
        sa.Column("rated", sa.Boolean, nullable=False),
        sa.Column("mu_before", sa.Float, nullable=False),
        sa.Column("sigma_before", sa.Float, nullable=False),
        sa.Column("mu_after", sa.Float, nullable=False),
        sa.Column("sigma_after", sa.Float, nullable=False),
        sa.UniqueConstraint("game_id", "player_id", name="uq_flyswat_player_games"),
    )
    op.create_index("ix_flyswat_player_games_player", "flyswat_player_games", ["player_id", "id"])


def downgrade() -> None:
    op.drop_table("flyswat_player_games")
    op.drop_table("flyswat_games")
    op.drop_table("flyswat_players")
