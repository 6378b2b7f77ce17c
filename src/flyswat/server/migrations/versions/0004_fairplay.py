"""Fair play: each game's hands of a player, compact, and the players under review.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The player's hands in that game (flyswat.fairplay.GameHands.to_json): what the
    # detector reads, so that a game's end does not parse a hundred records.
    with op.batch_alter_table("flyswat_player_games") as batch:
        batch.add_column(sa.Column("hands", sa.Text, nullable=True))
    op.create_table(
        "flyswat_fairplay",
        sa.Column("player_id", sa.String(64), primary_key=True),
        sa.Column("state", sa.String(16), nullable=False),  # review, cleared
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("games", sa.Integer, nullable=False),
        sa.Column("first_hands", sa.Integer, nullable=False),
        sa.Column("evidence", sa.Text, nullable=False),  # JSON: each item's strength
        sa.Column("flagged_at", sa.String(40), nullable=False),
        sa.Column("updated_at", sa.String(40), nullable=False),
    )
    op.create_index("ix_flyswat_fairplay_state", "flyswat_fairplay", ["state"])


def downgrade() -> None:
    op.drop_index("ix_flyswat_fairplay_state", "flyswat_fairplay")
    op.drop_table("flyswat_fairplay")
    with op.batch_alter_table("flyswat_player_games") as batch:
        batch.drop_column("hands")
