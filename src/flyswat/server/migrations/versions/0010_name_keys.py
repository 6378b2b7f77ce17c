"""Players' name keys made again by the key that drops characters drawn as nothing, takes
blank-looking ones as spaces and Cyrillic and Greek look-alikes as Latin letters
(:func:`flyswat.players.identity.name_key`), so that a name typed now is compared with
every stored one in the same form. A stored key that the new one would make equal to
another player's is left as it was (that player keeps the name; a new one is tagged).

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from flyswat.players.identity import name_key

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

_players = sa.table("flyswat_players", sa.column("id"), sa.column("name"), sa.column("name_key"))


def upgrade() -> None:
    conn = op.get_bind()
    rows = conn.execute(sa.select(_players.c.id, _players.c.name, _players.c.name_key)).all()
    taken = {key for _, _, key in rows}
    for pid, name, key in rows:
        new = name_key(str(name))
        if new != key and new not in taken:
            conn.execute(_players.update().where(_players.c.id == pid).values(name_key=new))
            taken.discard(key)
            taken.add(new)


def downgrade() -> None:
    pass  # the new keys compare as the old ones did for every name without such characters
