"""The leaderboard's order as an index: players by pool, ``mu - 3 sigma`` first.

A leaderboard page and a profile's rank read it instead of sorting (or counting through)
every rated player.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

#: The expression the queries order by (``players_store.ORDINAL``), written the same.
ORDINAL = "(mu - 3 * sigma)"


def upgrade() -> None:
    op.create_index(
        "ix_flyswat_players_board",
        "flyswat_players",
        [sa.text("bot"), sa.text(f"{ORDINAL} DESC"), sa.text("id")],
    )  # not partial (rated > 0): PostgreSQL keeps statistics of a whole index's expression


def downgrade() -> None:
    op.drop_index("ix_flyswat_players_board", "flyswat_players")
