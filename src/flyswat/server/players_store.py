"""The players' part of the store: identities, ratings, each player's games.

Functions of an SQLAlchemy :class:`~sqlalchemy.engine.Connection`, so that they run in the
transaction their caller holds: :func:`record_game` runs in the one that stores a game's
``over`` event (:meth:`flyswat.server.store.Store.append_all`), so a game's record, its rows
per player and the new ratings are committed together or not at all. The schema is
migrations ``0002`` and ``0005`` (bot accounts) (:mod:`flyswat.server.migrations`); the same
code runs on SQLite and PostgreSQL. Rating itself is :mod:`flyswat.players.ratings` (pure).
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    bindparam,
    column,
    func,
    insert,
    literal_column,
    select,
    table,
    update,
)
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import Select

from flyswat import fairplay
from flyswat.errors import IllegalActionError
from flyswat.players.identity import hash_secret, name_key, secret_matches
from flyswat.players.ratings import (
    Entry,
    Rating,
    ordinal,
    out_of_rating,
    provisional,
    rate_game,
    rated_in_pools,
    replay,
)
from flyswat.record import record_json
from flyswat.server import fairplay_store
from flyswat.table import events as ev

metadata = MetaData()

players = Table(
    "flyswat_players",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("name", String(64), nullable=False),
    Column("name_key", String(160), nullable=False, unique=True),
    Column("secret_hash", String(64), nullable=False),
    Column("created_at", String(40), nullable=False),
    Column("mu", Float, nullable=False),
    Column("sigma", Float, nullable=False),
    Column("games", Integer, nullable=False),
    Column("rated", Integer, nullable=False),
    Column("claim_hash", String(64)),
    Column("claim_until", Float),
    Column("bot", Boolean, nullable=False, default=False),  # a bot account: a program
    Column("owner", String(64)),  # a bot account's: the human who registered it
)
games = Table(
    "flyswat_games",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("game_id", String(40), nullable=False, unique=True),
    Column("code", String(16), nullable=False),
    Column("ended_at", String(40), nullable=False),
    Column("entries", Text, nullable=False),
    # The listing of Replays (revision 0006): the table was public, its seats, rated for
    # anyone, and the record's seats (names and kinds).
    Column("public", Boolean, nullable=False, default=False),
    Column("seats", Integer, nullable=False, default=0),
    Column("rated", Boolean, nullable=False, default=False),
    Column("names", Text),
)
player_games = Table(
    "flyswat_player_games",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("player_id", String(64), nullable=False),
    Column("game_id", String(40), nullable=False),
    Column("code", String(16), nullable=False),
    Column("ended_at", String(40), nullable=False),
    Column("seat", Integer, nullable=False),
    Column("seats", Integer, nullable=False),
    Column("place", Integer, nullable=False),
    Column("points", Integer, nullable=False),
    Column("flies", Integer, nullable=False),
    Column("too_fast", Integer, nullable=False),
    Column("slaps", Integer, nullable=False),
    Column("reaction_ms", Float),
    Column("rated", Boolean, nullable=False),
    Column("mu_before", Float, nullable=False),
    Column("sigma_before", Float, nullable=False),
    Column("mu_after", Float, nullable=False),
    Column("sigma_after", Float, nullable=False),
    Column("hands", Text),  # flyswat.fairplay.GameHands, for the detector (revision 0004)
)


def _not_found(player_id: str) -> IllegalActionError:
    return IllegalActionError(f"no player {player_id!r}", "no_player")


# -- identities -------------------------------------------------------------------------------


#: The most bot accounts one human may own.
MAX_BOTS_PER_OWNER = 5


def register(
    conn: Connection, player_id: str, name: str, secret: str, at: str, owner: str | None = None
) -> None:
    """A new player ``player_id`` called ``name`` (already cleaned), whose secret is kept only
    as its hash; with ``owner``, a bot account of that player (checked by the caller: a
    human). Raises ``name_taken`` when another player's name has the same key, and
    ``too_many_bots`` when the owner has :data:`MAX_BOTS_PER_OWNER` already."""
    if owner is not None:
        owned = conn.execute(select(func.count()).where(players.c.owner == owner)).scalar()
        if int(owned or 0) >= MAX_BOTS_PER_OWNER:
            raise IllegalActionError(
                f"a player owns at most {MAX_BOTS_PER_OWNER} bot accounts", "too_many_bots"
            )
    key = name_key(name)
    if conn.execute(select(players.c.id).where(players.c.name_key == key)).first():
        raise IllegalActionError(f"the name {name!r} is taken: choose another", "name_taken")
    row = {
        "id": player_id,
        "name": name,
        "name_key": key,
        "secret_hash": hash_secret(secret),
        "created_at": at,
        "mu": Rating().mu,
        "sigma": Rating().sigma,
        "games": 0,
        "rated": 0,
        "bot": owner is not None,
        "owner": owner,
    }
    try:
        conn.execute(insert(players).values(**row))
    except IntegrityError:  # the same name at the same moment from another request
        raise IllegalActionError(
            f"the name {name!r} is taken: choose another", "name_taken"
        ) from None


def name_taken(conn: Connection, name: str) -> bool:
    """Does a player hold a name with the key of ``name``?"""
    key = name_key(name)
    return conn.execute(select(players.c.id).where(players.c.name_key == key)).first() is not None


#: The set-ups' reads, built once: a statement built anew with ``in_`` holds reference cycles
#: (its bound parameters), which only a collection frees, and a node's collector walks only
#: while it finds some (:func:`flyswat.server.serve.collect`).
_NAMES_HELD = select(players.c.name_key).where(
    players.c.name_key.in_(bindparam("keys", expanding=True))
)
_PLAYERS_BY_ID = select(players).where(players.c.id.in_(bindparam("ids", expanding=True)))


def names_taken(conn: Connection, names: Sequence[str]) -> set[str]:
    """The keys of ``names`` that players hold (one statement)."""
    keys = sorted({name_key(name) for name in names})
    return set(conn.execute(_NAMES_HELD, {"keys": keys}).scalars())


def authenticate(conn: Connection, player_id: str, secret: str) -> dict[str, Any]:
    """The player ``player_id`` if ``secret`` is theirs; raises ``bad_secret`` otherwise
    (the same for an unknown id, so ids cannot be probed with it)."""
    found = authenticate_all(conn, [(player_id, secret)])[0]
    if isinstance(found, IllegalActionError):
        raise found
    return found


def authenticate_all(
    conn: Connection, asked: Sequence[tuple[str, str]]
) -> list[dict[str, Any] | IllegalActionError]:
    """:func:`authenticate` for each ``(player_id, secret)`` (one statement for them all):
    the player's row, or the ``bad_secret`` error to raise."""
    ids = sorted({player_id for player_id, _ in asked})
    found = conn.execute(_PLAYERS_BY_ID, {"ids": ids}).mappings()
    rows = {row["id"]: row for row in found}
    out: list[dict[str, Any] | IllegalActionError] = []
    for player_id, secret in asked:
        row = rows.get(player_id)
        if row is None or not secret_matches(row["secret_hash"], secret):
            out.append(IllegalActionError("that is not this player's secret", "bad_secret"))
        else:
            out.append(dict(row))
    return out


def set_claim(conn: Connection, player_id: str, code: str, until: float) -> None:
    """Let the one-time claim ``code`` (kept as its hash) move the identity until ``until``."""
    conn.execute(update(players).where(players.c.id == player_id)
                 .values(claim_hash=hash_secret(code), claim_until=until))  # fmt: skip


def claim(conn: Connection, code: str, new_secret: str, now: float) -> dict[str, Any]:
    """The player whose claim ``code`` this is: their secret becomes ``new_secret`` (the old
    device's stops working) and the code is spent. Raises ``bad_claim``."""
    hashed = hash_secret(code)
    row = conn.execute(select(players).where(players.c.claim_hash == hashed)).mappings().first()
    if row is None or row["claim_until"] is None or now > row["claim_until"]:
        raise IllegalActionError("no identity has that claim code (or it is spent)", "bad_claim")
    conn.execute(
        update(players)
        .where(players.c.id == row["id"])
        .values(secret_hash=hash_secret(new_secret), claim_hash=None, claim_until=None)
    )
    return dict(row)


# -- reads ------------------------------------------------------------------------------------


def bot_accounts(conn: Connection, ids: Sequence[str]) -> frozenset[str]:
    """The bot accounts among the players ``ids``."""
    if not ids:
        return frozenset()
    rows = conn.execute(select(players.c.id).where(players.c.id.in_(list(ids)), players.c.bot))
    return frozenset(r[0] for r in rows)


def ratings_of(conn: Connection, ids: Sequence[str]) -> dict[str, Rating]:
    """The current ratings of the players among ``ids`` that exist."""
    if not ids:
        return {}
    rows = conn.execute(select(players.c.id, players.c.mu, players.c.sigma)
                        .where(players.c.id.in_(list(ids))))  # fmt: skip
    return {r[0]: Rating(r[1], r[2]) for r in rows}


#: A profile's two statements, made once (a statement built at each read costs more of
#: SQLAlchemy's time than the database takes to answer it).
_PLAYER = select(players).where(players.c.id == bindparam("pid"))
_TOTALS = select(
    func.count(), func.sum(player_games.c.points), func.sum(player_games.c.flies),
    func.sum(player_games.c.too_fast), func.avg(player_games.c.reaction_ms),
    func.min(player_games.c.place), func.count().filter(player_games.c.place == 1),
).where(player_games.c.player_id == bindparam("pid"))  # fmt: skip


def profile(conn: Connection, player_id: str, standings: Standings | None = None) -> dict[str, Any]:
    """What ``GET /api/players/{id}`` answers; raises ``no_player``. The rank is from the
    ``standings`` when given (:class:`Standings`), else counted now."""
    row = conn.execute(_PLAYER, {"pid": player_id}).mappings().first()
    if row is None:
        raise _not_found(player_id)
    zero = (0, 0, 0, 0, None, None, 0)
    totals = conn.execute(_TOTALS, {"pid": player_id}).first()
    rating = Rating(row["mu"], row["sigma"])
    t = totals if totals is not None else zero
    mean = t[4]
    return {
        "id": row["id"], "name": row["name"], "created_at": row["created_at"],
        "rating": rating.shown, "mu": round(rating.mu, 3), "sigma": round(rating.sigma, 3),
        "provisional": rating.provisional,
        "rank": ((standings.rank if standings else rank)(conn, rating, bool(row["bot"]))
                 if row["rated"] else None),
        "bot": bool(row["bot"]), "owner": row["owner"],
        "games": row["games"], "rated_games": row["rated"], "wins": int(t[6] or 0),
        "points": int(t[1] or 0), "flies": int(t[2] or 0), "too_fast": int(t[3] or 0),
        "reaction_ms": round(float(mean)) if mean is not None else None,
    }  # fmt: skip


#: What the leaderboard orders by, ``mu - 3 sigma`` (:func:`flyswat.players.ratings.ordinal`),
#: written as the board's index is (migration 0009), so that the database reads it there.
ORDINAL = literal_column("(mu - 3 * sigma)", Float)


def rank(conn: Connection, rating: Rating, bot: bool = False) -> int:
    """The leaderboard place of a rated player with ``rating``: among the people, or among
    the bot accounts (``bot``)."""
    better = conn.execute(
        select(func.count()).where(
            players.c.rated > 0,
            players.c.bot == bot,
            rating.ordinal + 1e-9 < ORDINAL,
        )
    )
    return int(better.scalar() or 0) + 1


class Standings:
    """The rated players' places as of at most ``ttl_s`` ago: each pool's ordinals (``mu -
    3 sigma``, read as the board's index has them), sorted, so that a rating's rank and a
    pool's size are found in memory (a bisection) instead of by counting, on every read,
    the players better than it (a profile's rank counted half the pool: 3.7 ms of
    PostgreSQL's time at 20,000 players, every profile).

    For the players' pages served apart (``--role pages``), whose ranks and board size may
    lag the ratings by up to ``ttl_s``; a node counts exactly (no standings). A refresh reads
    every rated player's ordinal (O(players), once every ``ttl_s`` at most, by one thread
    while the others keep the last one)."""

    def __init__(self, ttl_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self.clock = clock
        self._pools: dict[bool, list[float]] = {False: [], True: []}
        self._at = -math.inf
        self._lock = threading.Lock()

    def fresh(self) -> bool:
        """Read less than ``ttl_s`` ago: :meth:`pool` reads nothing now."""
        return self.clock() - self._at < self.ttl_s

    def pool(self, conn: Connection, bot: bool) -> list[float]:
        """The people's (or the bot accounts') ordinals, lowest first, read again when older
        than ``ttl_s``."""
        if not self.fresh():
            with self._lock:
                if not self.fresh():
                    pools: dict[bool, list[float]] = {False: [], True: []}
                    rows = conn.execute(select(players.c.bot, ORDINAL).where(players.c.rated > 0))
                    for is_bot, value in rows:
                        pools[bool(is_bot)].append(cast(float, value))
                    for values in pools.values():
                        values.sort()
                    self._pools, self._at = pools, self.clock()
        return self._pools[bot]

    def rank(self, conn: Connection, rating: Rating, bot: bool = False) -> int:
        """:func:`rank` from the standings: 1 + the ordinals above ``rating``'s."""
        values = self.pool(conn, bot)
        return len(values) - bisect_right(values, rating.ordinal + 1e-9) + 1

    def total(self, conn: Connection, bot: bool = False) -> int:
        """The rated players of a pool."""
        return len(self.pool(conn, bot))


#: The store's event log, as far as a table's privacy is read from it (its ``create`` event).
_events = table("flyswat_events", column("code"), column("kind"), column("data"))
_CREATED = select(_events.c.code, _events.c.data).where(
    _events.c.kind == "create", _events.c.code.in_(bindparam("codes", expanding=True))
)


def private_codes(conn: Connection, codes: Sequence[str]) -> set[str]:
    """The codes among ``codes`` of private tables (created ``public: false``): a public read
    never names them, since a table's code opens it (and its rematches)."""
    if not codes:
        return set()
    rows = conn.execute(_CREATED, {"codes": sorted(set(codes))})
    return {r[0] for r in rows if json.loads(r[1]).get("options", {}).get("public") is False}


def record_url(game_id: str) -> str:
    """Where a finished game's record is read (``GET /api/games/{game_id}/record``)."""
    return f"/api/games/{game_id}/record"


def _game_row(r: Any, private: set[str] | frozenset[str] = frozenset()) -> dict[str, Any]:
    before, after = (
        Rating(r["mu_before"], r["sigma_before"]),
        Rating(r["mu_after"], r["sigma_after"]),
    )
    return {
        "game_id": r["game_id"], "code": None if r["code"] in private else r["code"],
        "ended_at": r["ended_at"], "seat": r["seat"],
        "seats": r["seats"], "place": r["place"], "points": r["points"], "flies": r["flies"],
        "too_fast": r["too_fast"], "slaps": r["slaps"],
        "reaction_ms": round(r["reaction_ms"]) if r["reaction_ms"] is not None else None,
        "rated": bool(r["rated"]), "rating_before": before.shown, "rating_after": after.shown,
        "provisional": after.provisional,
        "delta": after.shown - before.shown if r["rated"] else 0,
        "record_url": record_url(r["game_id"]),
    }  # fmt: skip


def _games_page(before: bool) -> Select[Any]:
    """A page of a player's games, with whether each game's table was public from the
    game's row (kept at its end), not from the tables' events: a table's log is hundreds of
    rows, read by code."""
    pg = player_games.c
    query = (select(player_games, games.c.public)
             .outerjoin(games, games.c.game_id == pg.game_id)
             .where(pg.player_id == bindparam("pid")))  # fmt: skip
    if before:
        query = query.where(pg.id < bindparam("before"))
    return query.order_by(pg.id.desc()).limit(bindparam("limit"))


_GAMES_PAGE, _GAMES_PAGE_BEFORE = _games_page(False), _games_page(True)


def games_page(
    conn: Connection, player_id: str, before: int | None, limit: int
) -> tuple[list[dict[str, Any]], int | None]:
    """One page of the player's games, newest first, from below the cursor ``before``; and
    the cursor of the next page (None at the end). Raises ``no_player``."""
    query, args = _GAMES_PAGE, {"pid": player_id, "limit": limit + 1}
    if before is not None:
        query, args = _GAMES_PAGE_BEFORE, {**args, "before": before}
    rows = list(conn.execute(query, args).mappings())
    known = select(players.c.id).where(players.c.id == player_id)
    if not rows and conn.execute(known).first() is None:  # a player with games is known
        raise _not_found(player_id)
    more = len(rows) > limit
    rows = rows[:limit]
    private = {r["code"] for r in rows if not r["public"]}
    return [_game_row(r, private) for r in rows], (rows[-1]["id"] if more and rows else None)


#: A page of the people's board and of the bot accounts', made once.
_BOARD_PAGES = {
    bots: select(players.c.id, players.c.name, players.c.mu, players.c.sigma, players.c.games,
                 players.c.rated)
    .where(players.c.rated > 0, players.c.bot == bots)
    .order_by(ORDINAL.desc(), players.c.id).limit(bindparam("limit")).offset(bindparam("offset"))
    for bots in (False, True)
}  # fmt: skip


def leaderboard(
    conn: Connection,
    limit: int,
    offset: int,
    bots: bool = False,
    standings: Standings | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """The rated players, best first by ``mu - 3 sigma``, one page; and how many there are
    (counted by the ``standings`` when given): the people's board, or with ``bots`` the bot
    accounts' own."""
    c = players.c
    if standings is not None:
        total = standings.total(conn, bots)
    else:
        total = int(conn.execute(select(func.count()).where(c.rated > 0, c.bot == bots))
                    .scalar() or 0)  # fmt: skip
    rows = conn.execute(_BOARD_PAGES[bots], {"limit": limit, "offset": offset})
    board = [{"rank": offset + i + 1, "id": r[0], "name": r[1], "rating": Rating(r[2], r[3]).shown,
              "conservative": round(ordinal(r[2], r[3]) * 40), "games": r[4], "rated_games": r[5],
              "provisional": provisional(r[3]), "bot": bots}
             for i, r in enumerate(rows)]  # fmt: skip
    return board, total


def game_summary(conn: Connection, game_id: str) -> dict[str, Any] | None:
    """Who played game ``game_id``, their places and what the game did to their ratings."""
    row = conn.execute(select(games).where(games.c.game_id == game_id)).mappings().first()
    if row is None:
        return None
    rows = conn.execute(select(player_games, players.c.name, players.c.bot)
                        .join(players, players.c.id == player_games.c.player_id)
                        .where(player_games.c.game_id == game_id))  # fmt: skip
    by_seat = {r["seat"]: {**_game_row(r), "player": r["player_id"], "name": r["name"],
                           "bot": bool(r["bot"])}
               for r in rows.mappings()}  # fmt: skip
    entries = [Entry.from_json(e) for e in json.loads(row["entries"])]
    code = row["code"] if row["public"] else None
    return {"game_id": game_id, "code": code, "ended_at": row["ended_at"],
            "record_url": record_url(game_id),
            "seats": [{"seat": e.seat, "place": e.place, "player": e.player, "level": e.level,
                       "flagged": e.flagged, **({k: by_seat[e.seat][k] for k in
                       ("name", "bot", "rated", "rating_before", "rating_after", "delta",
                        "provisional")}
                       if e.seat in by_seat else {})} for e in entries]}  # fmt: skip


class ListedQuery(NamedTuple):
    """The filters of :func:`listed_games`: each None when not asked for."""

    player: str | None = None
    name: str | None = None
    seats: int | None = None
    rated: bool | None = None


def listed_games(
    conn: Connection, query: ListedQuery, before: int | None, limit: int
) -> tuple[list[dict[str, Any]], int | None]:
    """One page of the recent public games, newest first, from below the cursor ``before``,
    as ``query`` filters them (a player by id or by name, a number of seats, rated or not);
    and the cursor of the next page (None at the end). A private table's game is never
    listed, whoever asks."""
    g = games.c
    where: list[ColumnElement[bool]] = [g.public.is_(True)]
    if query.seats is not None:
        where.append(g.seats == query.seats)
    if query.rated is not None:
        where.append(g.rated.is_(query.rated))
    if query.player is not None or query.name is not None:
        who = select(player_games.c.game_id)
        if query.player is not None:
            who = who.where(player_games.c.player_id == query.player)
        if query.name is not None:  # the names that begin so, compared as names are
            key = re.sub(r"([\\%_])", r"\\\1", name_key(query.name))
            named = select(players.c.id).where(players.c.name_key.like(key + "%", escape="\\"))
            who = who.where(player_games.c.player_id.in_(named))
        where.append(g.game_id.in_(who))
    if before is not None:
        where.append(g.id < before)
    rows = list(conn.execute(select(games).where(*where).order_by(g.id.desc())
                             .limit(limit + 1)).mappings())  # fmt: skip
    more = len(rows) > limit
    rows = rows[:limit]
    ids = [r["game_id"] for r in rows]
    seated: dict[tuple[str, int], Any] = {}
    if ids:
        found = conn.execute(
            select(player_games.c.game_id, player_games.c.seat, player_games.c.player_id,
                   player_games.c.points, players.c.name, players.c.bot, player_games.c.rated,
                   player_games.c.mu_after, player_games.c.sigma_after)
            .join(players, players.c.id == player_games.c.player_id)
            .where(player_games.c.game_id.in_(ids))
        )  # fmt: skip
        seated = {(r.game_id, r.seat): r for r in found}
    out = []
    for r in rows:
        names = json.loads(r["names"]) if r["names"] else []
        seats = []
        for e in json.loads(r["entries"]):
            shown = names[e["seat"]] if e["seat"] < len(names) else {}
            row = seated.get((r["game_id"], e["seat"]))
            seats.append({
                "seat": e["seat"], "place": e["place"], "name": shown.get("name"),
                "kind": shown.get("kind", "human"), "level": e.get("level"),
                "player": row.player_id if row is not None else None,
                "bot": bool(row.bot) if row is not None else None,
                "rating": Rating(row.mu_after, row.sigma_after).shown if row is not None else None,
            })  # fmt: skip
        out.append({"game_id": r["game_id"], "code": r["code"], "ended_at": r["ended_at"],
                    "seats": r["seats"], "rated": bool(r["rated"]), "players": seats,
                    "record_url": record_url(r["game_id"])})  # fmt: skip
    return out, (rows[-1]["id"] if more and rows else None)


records = Table(
    "flyswat_records",
    metadata,
    Column("game_id", String(40), primary_key=True),
    Column("code", String(16), nullable=False),
    Column("record", Text, nullable=False),
)


def record_of(conn: Connection, game_id: str) -> str | None:
    """The stored record of game ``game_id``, as JSON text."""
    row = conn.execute(select(records.c.record).where(records.c.game_id == game_id)).first()
    return str(row[0]) if row else None


def latest_game(conn: Connection, code: str) -> str | None:
    """The id of the last game that ended at table ``code``."""
    row = conn.execute(select(games.c.game_id).where(games.c.code == code)
                       .order_by(games.c.id.desc()).limit(1)).first()  # fmt: skip
    return row[0] if row else None


# -- a game ends ------------------------------------------------------------------------------


def entries_of(record: dict[str, Any], seat_players: Sequence[str | None],
               too_fast: Sequence[int], own_reveals: Sequence[int] | None = None,
               review: frozenset[str] | set[str] = frozenset(), *,
               programs: frozenset[str] = frozenset(),
               mixed: bool = False) -> list[Entry]:  # fmt: skip
    """The rating entries of a finished game's record: each seat's place, its player (humans
    with an identity) or bot level, whether it was flagged too fast, and why a player takes
    no part (:func:`~flyswat.players.ratings.out_of_rating`; ``review``: players under
    fair-play review); ``programs``: the players that are bot accounts; ``mixed``: the
    table took bot accounts."""
    places = record["result"]["places"]
    out = []
    for seat, info in enumerate(record["seats"]):
        bot = info.get("kind") == "bot"
        player = None if bot or seat >= len(seat_players) else seat_players[seat]
        flagged = seat < len(too_fast) and too_fast[seat] > 0
        why = None
        if player is not None:
            known = own_reveals is not None and seat < len(own_reveals)
            mine = own_reveals[seat] if own_reveals is not None and known else None
            why = out_of_rating(record, seat, mine) or ("review" if player in review else None)
        level = info.get("level") if bot else None
        out.append(Entry(seat, int(places[seat]), player, level, flagged,
                         bot=player in programs, mixed=mixed, out=why))  # fmt: skip
    return out


#: A game's end's statements, made once (the store's writer keeps hundreds of games' ends in
#: a few seconds when many games end together).
_GAME_KEPT = select(games.c.id).where(games.c.game_id == bindparam("gid"))
_NEW_GAME = insert(games)
_NEW_GAME_ONCE = {
    "sqlite": sqlite_insert(games).on_conflict_do_nothing(index_elements=["game_id"]),
    "postgresql": postgresql_insert(games).on_conflict_do_nothing(index_elements=["game_id"]),
}
_PLAYED = update(players).where(players.c.id == bindparam("pid")).values(
    games=players.c.games + 1, rated=players.c.rated + bindparam("rated_now"),
    mu=bindparam("new_mu"), sigma=bindparam("new_sigma"))  # fmt: skip


def record_game(conn: Connection, code: str, event: ev.Over, at: str,
                record: dict[str, Any] | None) -> None:  # fmt: skip
    """Keep what a finished game did for its players, in the caller's transaction: the game's
    entries, a row per player (place, points, flies, reactions, too-fast count, rating before
    and after) and the new ratings. A game already kept is left as it is. ``record``: the
    event's record, parsed (:meth:`~flyswat.table.events.Over.record_dict`)."""
    if record is None:
        return
    seat_players = list(getattr(event, "players", None) or [])
    # A game of nobody's identities writes one row, kept once by the store itself; one of
    # players is looked for first (their rows and ratings are written once). Each statement
    # is a wait for the interpreter's lock behind the busy loop (docs/BENCHMARKS.md).
    anonymous = all(p is None for p in seat_players)
    if not anonymous and conn.execute(_GAME_KEPT, {"gid": event.game_id}).first():
        return
    too_fast = list(getattr(event, "too_fast", None) or [])
    known = ratings_of(conn, sorted({p for p in seat_players if p is not None}))
    programs = bot_accounts(conn, sorted(known))
    hands = {}  # each player's hands in this game, weighed with their earlier games first
    bits = fairplay.round_bits(record) if known else {}  # the record replayed once, not a seat
    for seat, pid in enumerate(seat_players):
        if pid in known and pid not in hands:
            count = too_fast[seat] if seat < len(too_fast) else 0
            hands[pid] = fairplay.from_record(record, seat, count, bits)
    review = fairplay_store.weigh(conn, hands, at)
    mixed = bool(getattr(event, "takes_bots", False))
    entries = entries_of(record, seat_players, too_fast, event.own_reveals, review,
                         programs=programs, mixed=mixed)  # fmt: skip
    ids = sorted({e.player for e in entries if e.player is not None})
    before = {pid: known[pid] for pid in ids if pid in known}
    # A seat whose id the store does not know takes no part (as a seat without one).
    entries = [e if e.player is None or e.player in before
               else Entry(e.seat, e.place, None, e.level, e.flagged, mixed=mixed)
               for e in entries]  # fmt: skip
    after = rate_game(before, entries)
    rated = set(rated_in_pools(entries))
    public = event.public if event.public is not None else not private_codes(conn, [code])
    conn.execute(_NEW_GAME_ONCE[conn.dialect.name] if anonymous else _NEW_GAME, {
        "game_id": event.game_id, "code": code, "ended_at": at,
        "entries": record_json([e.to_json() for e in entries]),
        "public": public, "seats": len(entries),
        "rated": bool(rated), "names": record_json(record["seats"]),
    })  # fmt: skip
    slaps = _slaps_by_seat(record) if ids else {}
    done: set[str] = set()
    games_rows: list[dict[str, Any]] = []
    played: list[dict[str, Any]] = []
    for e in entries:
        if e.player is None or e.player in done:
            continue  # no identity; or one player at two seats (never from a table)
        done.add(e.player)
        old = before[e.player]
        new = after.get(e.player, old)
        mine = slaps.get(e.seat, [])
        games_rows.append({
            "player_id": e.player, "game_id": event.game_id, "code": code, "ended_at": at,
            "seat": e.seat, "seats": len(entries), "place": e.place,
            "points": record["result"]["points"][e.seat],
            "flies": record["result"]["flies"][e.seat],
            "too_fast": too_fast[e.seat] if e.seat < len(too_fast) else 0, "slaps": len(mine),
            "reaction_ms": sum(mine) / len(mine) if mine else None, "rated": e.player in rated,
            "mu_before": old.mu, "sigma_before": old.sigma, "mu_after": new.mu,
            "sigma_after": new.sigma,
            "hands": record_json(hands[e.player].to_json()) if e.player in hands else None,
        })  # fmt: skip
        played.append({"pid": e.player, "rated_now": 1 if e.player in rated else 0,
                       "new_mu": new.mu, "new_sigma": new.sigma})  # fmt: skip
    if games_rows:  # the players' rows in one statement
        conn.execute(insert(player_games).values(games_rows))
        conn.execute(_PLAYED, played)


def _slaps_by_seat(record: dict[str, Any]) -> dict[int, list[float]]:
    out: dict[int, list[float]] = {}
    for turn in record.get("turns", []):
        for s in (turn.get("round") or {}).get("slaps", []):
            if s.get("ms") is not None:
                out.setdefault(int(s["seat"]), []).append(float(s["ms"]))
    return out


def replay_ratings(conn: Connection) -> dict[str, Rating]:
    """Every player's rating rated again from the stored games' entries, in the order the
    games ended (:func:`flyswat.players.ratings.replay`)."""
    stored = conn.execute(select(games.c.entries).order_by(games.c.id))
    return replay([Entry.from_json(e) for e in json.loads(r[0])] for r in stored)
