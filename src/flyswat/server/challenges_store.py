"""Challenges in the store (Alembic revision ``0007``): who challenged whom, to which private
table, and what became of it (``open``, ``accepted``, ``declined``; an open one past its
``expires`` is over). Plain functions over a connection, each in the caller's transaction,
as :mod:`flyswat.server.players_store` is; the routes are in
:mod:`flyswat.server.players_routes`."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, Float, MetaData, String, Table, func, select, update
from sqlalchemy.engine import Connection

from flyswat.errors import IllegalActionError
from flyswat.server import players_store as ps

metadata = MetaData()

challenges = Table(
    "flyswat_challenges",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("challenger", String(64), nullable=False),
    Column("opponent", String(64), nullable=False),
    Column("code", String(16), nullable=False),
    Column("state", String(16), nullable=False),
    Column("created", Float, nullable=False),
    Column("expires", Float, nullable=False),
)

#: A player's open challenges at once, at most; an open challenge expires after this long
#: (seconds: the private lobby it opened expires after 30 minutes with nobody in it).
MAX_OPEN = 5
TTL_S = 30 * 60
#: Decided challenges a challenger still sees (the latest), to learn the answer.
SHOWN_DECIDED = 10


def _open(now: float) -> Any:
    return (challenges.c.state == "open") & (challenges.c.expires > now)


def opponent_for(conn: Connection, challenger: dict[str, Any], opponent: str) -> dict[str, Any]:
    """The player ``opponent`` if ``challenger`` (an authenticated row) may challenge them;
    raises ``no_player``, ``cannot_challenge`` (yourself, a bot account either side)."""
    row = conn.execute(select(ps.players).where(ps.players.c.id == opponent)).mappings().first()
    if row is None:
        raise IllegalActionError("no player with that id", "no_player")
    if row["id"] == challenger["id"] or row["bot"] or challenger["bot"]:
        raise IllegalActionError(
            "a person challenges another person: not themself, nor a bot account",
            "cannot_challenge",
        )
    return dict(row)


def pending(conn: Connection, challenger: str, opponent: str, now: float) -> dict[str, Any] | None:
    """The open challenge of ``challenger`` to ``opponent``, if there is one; raises
    ``too_many_challenges`` when there is none and the challenger has :data:`MAX_OPEN`."""
    c = challenges.c
    mine = (c.challenger == challenger) & (c.opponent == opponent)
    found = conn.execute(select(challenges).where(_open(now), mine)).mappings().first()
    if found is not None:
        return dict(found)
    count = conn.execute(select(func.count()).select_from(challenges)
                         .where(_open(now), c.challenger == challenger)).scalar_one()  # fmt: skip
    if count >= MAX_OPEN:
        raise IllegalActionError(
            f"at most {MAX_OPEN} open challenges at once", "too_many_challenges"
        )
    return None


def add(conn: Connection, cid: str, challenger: str, opponent: str, code: str, now: float) -> None:
    conn.execute(challenges.insert().values(id=cid, challenger=challenger, opponent=opponent,
                                            code=code, state="open", created=now,
                                            expires=now + TTL_S))  # fmt: skip


def open_to(conn: Connection, cid: str, opponent: str, now: float) -> dict[str, Any]:
    """Challenge ``cid``, open and to ``opponent``; raises ``no_challenge`` otherwise (the
    same whether it does not exist, is another's or is decided: ids cannot be probed)."""
    c = challenges.c
    row = conn.execute(select(challenges).where(c.id == cid, c.opponent == opponent, _open(now))
                       ).mappings().first()  # fmt: skip
    if row is None:
        raise IllegalActionError("no open challenge with that id for you", "no_challenge")
    return dict(row)


def decide(conn: Connection, cid: str, opponent: str, state: str, now: float) -> None:
    """Challenge ``cid`` to ``opponent`` is ``state`` (accepted, declined) from now; raises
    ``no_challenge`` when no open one is theirs by that id."""
    open_to(conn, cid, opponent, now)
    conn.execute(update(challenges).where(challenges.c.id == cid).values(state=state))


def _named() -> Any:
    """Challenges with both players' names, newest first."""
    c, me, them = challenges.c, ps.players.alias("me"), ps.players.alias("them")
    cols = [*c, me.c.name.label("challenger_name"), them.c.name.label("opponent_name")]
    return (select(*cols).join(me, me.c.id == c.challenger).join(them, them.c.id == c.opponent)
            .order_by(c.created.desc()))  # fmt: skip


def one(conn: Connection, cid: str, now: float) -> dict[str, Any]:
    """Challenge ``cid`` as the protocol shows it (``Challenge``)."""
    return _shown(conn.execute(_named().where(challenges.c.id == cid)).mappings().one(), now)


def of(
    conn: Connection, player: str, now: float
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(incoming, outgoing)`` of ``player``: the open challenges to them, and theirs (open,
    and the latest decided), newest first, each with both players' names."""
    c = challenges.c
    incoming = conn.execute(_named().where(c.opponent == player, _open(now))).mappings().all()
    outgoing = conn.execute(_named().where(c.challenger == player)
                            .limit(MAX_OPEN + SHOWN_DECIDED)).mappings().all()  # fmt: skip
    return [_shown(r, now) for r in incoming], [_shown(r, now) for r in outgoing]


def _shown(row: Any, now: float) -> dict[str, Any]:
    state = row["state"] if row["state"] != "open" or row["expires"] > now else "expired"
    return {
        "id": row["id"], "code": row["code"], "state": state,
        "challenger": {"id": row["challenger"], "name": row["challenger_name"]},
        "opponent": {"id": row["opponent"], "name": row["opponent_name"]},
        "expires_in_s": max(0, round(row["expires"] - now)) if state == "open" else 0,
    }  # fmt: skip
