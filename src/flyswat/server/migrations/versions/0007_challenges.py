"""Challenges: one player invites another to a private table of theirs.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "flyswat_challenges",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("challenger", sa.String(64), nullable=False),
        sa.Column("opponent", sa.String(64), nullable=False),
        sa.Column("code", sa.String(16), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("created", sa.Float, nullable=False),
        sa.Column("expires", sa.Float, nullable=False),
    )
    # A player's invitations, and a challenger's open challenges, are read by these.
    op.create_index("ix_flyswat_challenges_opponent", "flyswat_challenges", ["opponent", "state"])
    op.create_index(
        "ix_flyswat_challenges_challenger", "flyswat_challenges", ["challenger", "state"]
    )


def downgrade() -> None:
    op.drop_index("ix_flyswat_challenges_challenger", "flyswat_challenges")
    op.drop_index("ix_flyswat_challenges_opponent", "flyswat_challenges")
    op.drop_table("flyswat_challenges")
