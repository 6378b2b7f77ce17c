"""The cluster: the nodes serving one store, which of them owns each table, the lobby's list.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "flyswat_nodes",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("url", sa.String(255), nullable=False),
        sa.Column("seen", sa.Float, nullable=False),  # wall-clock seconds of its last beat
        sa.Column("state", sa.String(16), nullable=False),  # up, draining, down
    )
    op.create_table(
        "flyswat_owners",
        sa.Column("code", sa.String(16), primary_key=True),
        sa.Column("node", sa.String(64), nullable=True),  # none: handed over, free to adopt
        sa.Column("since", sa.Float, nullable=False),
        sa.Column("listing", sa.Text, nullable=True),  # the lobby's entry while listed
        sa.Column("listed_at", sa.Float, nullable=True),
    )
    op.create_index("ix_flyswat_owners_node", "flyswat_owners", ["node"])
    op.create_index("ix_flyswat_owners_listed", "flyswat_owners", ["listed_at"])
    # The nodes look for the tables in play whose owner died, every beat.
    op.create_index("ix_flyswat_tables_state", "flyswat_tables", ["state"])
    op.create_table(
        "flyswat_cluster",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("flyswat_cluster")
    op.drop_index("ix_flyswat_tables_state", "flyswat_tables")
    op.drop_index("ix_flyswat_owners_listed", "flyswat_owners")
    op.drop_index("ix_flyswat_owners_node", "flyswat_owners")
    op.drop_table("flyswat_owners")
    op.drop_table("flyswat_nodes")
