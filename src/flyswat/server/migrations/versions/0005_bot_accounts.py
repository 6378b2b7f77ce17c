"""Bot accounts: a player marked as a program, and the human who registered it.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("flyswat_players") as batch:
        batch.add_column(sa.Column("bot", sa.Boolean, nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("owner", sa.String(64), nullable=True))
    # The two leaderboards, and an owner's bot accounts, are read by these.
    op.create_index("ix_flyswat_players_bot", "flyswat_players", ["bot", "rated"])
    op.create_index("ix_flyswat_players_owner", "flyswat_players", ["owner"])


def downgrade() -> None:
    op.drop_index("ix_flyswat_players_owner", "flyswat_players")
    op.drop_index("ix_flyswat_players_bot", "flyswat_players")
    with op.batch_alter_table("flyswat_players") as batch:
        batch.drop_column("owner")
        batch.drop_column("bot")
