"""The server's store: an append-only event log per table, and finished games' records.

One SQLAlchemy Core schema serves SQLite (the default, an embedded file) and PostgreSQL
(``postgresql://…`` uses the psycopg driver). The schema is created, or migrated to the
newest Alembic revision (:mod:`flyswat.server.migrations`), when a :class:`Store` opens.

Everything a table does that changes it is an event (:mod:`flyswat.table.events`, a
discriminated union), stored before anyone is told of it, so that a table can be rebuilt after
a crash by folding its events (:meth:`flyswat.table.core.Table.restore`). The events of one
command are stored in one transaction (:meth:`Store.append_all`). A table's row keeps its
state (lobby, playing, over, expired); an ``over`` event's record goes to the records table.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from alembic import command
from alembic.config import Config as AlembicConfig
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import (
    Column,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    bindparam,
    create_engine,
    event,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import QueuePool

from flyswat.extras import require
from flyswat.record import record_json
from flyswat.server import arena_store, players_store
from flyswat.table import events as ev
from flyswat.table.events import Event, parse

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
#: The PostgreSQL advisory lock under which a node migrates the schema (any number).
MIGRATION_LOCK = 0x666C79

#: The schema as the code uses it; the migrations (not this) create and change it.
metadata = MetaData()

tables = Table(
    "flyswat_tables",
    metadata,
    Column("code", String(16), primary_key=True),
    Column("state", String(16), nullable=False),
    Column("created_at", String(40), nullable=False),
)
events = Table(
    "flyswat_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("code", String(16), nullable=False, index=True),
    Column("kind", String(16), nullable=False),
    Column("data", Text, nullable=False),
    Column("at", String(40), nullable=False),
)
records = Table(
    "flyswat_records",
    metadata,
    Column("game_id", String(40), primary_key=True),
    Column("code", String(16), nullable=False, index=True),
    Column("record", Text, nullable=False),
)

#: The cluster (:mod:`flyswat.server.cluster`): its nodes, who owns each table (the
#: writer's fence, below), and what they share.
nodes = Table(
    "flyswat_nodes",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("url", String(255), nullable=False),
    Column("seen", Float, nullable=False),
    Column("state", String(16), nullable=False),
)
owners = Table(
    "flyswat_owners",
    metadata,
    Column("code", String(16), primary_key=True),
    Column("node", String(64), nullable=True),
    Column("since", Float, nullable=False),
    Column("listing", Text, nullable=True),
    Column("listed_at", Float, nullable=True),
)
meta = Table(
    "flyswat_cluster",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)


_NEW_TABLE = insert(tables)
_NEW_EVENT = insert(events)
_SET_STATE = update(tables).where(tables.c.code == bindparam("key"))
#: A record kept, or kept again (the last stands): one statement on both stores.
_KEEP_RECORD = text(
    "INSERT INTO flyswat_records (game_id, code, record) VALUES (:game_id, :code, :record) "
    "ON CONFLICT (game_id) DO UPDATE SET code = excluded.code, record = excluded.record"
)


def engine_url(url: str) -> str:
    """The SQLAlchemy URL for ``url``: ``postgresql://`` goes through psycopg (version 3),
    which the ``postgres`` extra installs (raises ``missing_extra`` naming it if absent)."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            require("postgres", "a PostgreSQL store (--db postgresql://…)", "psycopg")
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def now_iso() -> str:
    """The wall-clock time now, ISO 8601 in UTC (for records and logs, never for play)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def alembic_config(connection: Connection | None = None) -> AlembicConfig:
    """Alembic's configuration for the store's migrations, on ``connection`` if given."""
    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest revision of the schema."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None, "the migrations have a head"
    return head


class Store:
    """The event log and records of every table, in one database.

    Opening migrates the schema. Every method is a short transaction of its own; a write
    that returned is on disk (SQLite in WAL mode survives a killed process).
    """

    def __init__(self, url: str, node: str | None = None) -> None:
        self.url = url
        #: The node this store writes for (:mod:`flyswat.server.cluster`): a new table is
        #: owned by it, and the events of a table it does not own are refused. None: no
        #: ownership (tools and tests that write a store directly).
        self.node = node
        self.engine: Engine = create_engine(engine_url(url))
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self.migrate()

    def migrate(self) -> str:
        """Create or upgrade the schema to the newest revision; returns the revision."""
        with self.engine.begin() as conn:
            if conn.dialect.name == "postgresql":  # nodes starting together: one at a time
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
            command.upgrade(alembic_config(conn), "head")
            revision = MigrationContext.configure(conn).get_current_revision()
        assert revision is not None
        return revision

    def append(self, code: str, kind: str, data: dict[str, Any]) -> None:
        """Store one event of table ``code``; ``create``, ``start`` and ``over`` also set the
        table's state."""
        at = now_iso()
        with self.engine.begin() as conn:
            if kind == "create":
                conn.execute(_NEW_TABLE, {"code": code, "state": "lobby", "created_at": at})
            elif kind in ("start", "over"):
                state = "playing" if kind == "start" else "over"
                conn.execute(_SET_STATE, {"key": code, "state": state})
            # One statement built once: SQLAlchemy compiles it once and caches it.
            conn.execute(
                _NEW_EVENT, {"code": code, "kind": kind, "data": json.dumps(data), "at": at}
            )

    def append_all(self, code: str, batch: Sequence[Event]) -> None:
        """Store the events of one command of table ``code``, in one transaction."""
        self.write_batch([(code, batch)])

    def write_batch(
        self, batch: Sequence[tuple[str, Sequence[Event]]], conn: Connection | None = None
    ) -> set[str]:
        """Store the events of many commands, ``(table code, events)`` each, in one
        transaction: all of them or none (:mod:`flyswat.server.writer`'s group commit, on
        its own connection ``conn``; without one, a connection of the pool).

        With a :attr:`node`, the events of a table that node does not own are not written
        (another node took it over): returns those tables' codes, the *fenced* ones."""
        if conn is None:
            with self.engine.connect() as own:
                return self.write_batch(batch, own)
        at = now_iso()
        alone = _insert_alone(conn, batch, at, self.node)
        if alone is not None:
            return alone
        with conn.begin():
            if self.node is not None:
                write_lock(conn)  # the fence holds until the commit
            fenced = self._fenced(conn, batch)
            kept = [(code, evs) for code, evs in batch if code not in fenced]
            # Few statements a commit, whatever its size: each is a round trip for the
            # writer thread's interpreter lock, which a busy event loop hands back only
            # every few ms (docs/BENCHMARKS.md, *A game's end in a lane of its own*).
            created = [code for code, evs in kept for e in evs if isinstance(e, ev.Created)]
            insert_rows(conn, tables.name, ("code", "state", "created_at"),
                        [(code, "lobby", at) for code in created])  # fmt: skip
            if self.node is not None:
                since = time.time()
                insert_rows(conn, owners.name, ("code", "node", "since"),
                            [(code, self.node, since) for code in created])  # fmt: skip
            states: dict[str, str] = {}
            rows: list[tuple[str, str, str, str]] = []
            for code, evs in kept:
                rows.extend(self._append(conn, code, evs, at, states))
            set_states(conn, states)
            insert_rows(conn, events.name, ("code", "kind", "data", "at"), rows)
        return fenced

    def _fenced(self, conn: Connection, batch: Sequence[tuple[str, Sequence[Event]]]) -> set[str]:
        if self.node is None:
            return set()
        new = {code for code, events in batch if events and isinstance(events[0], ev.Created)}
        codes = {code for code, _ in batch} - new
        if not codes:
            return set()
        return codes - owned_of(conn, sorted(codes), self.node)

    def _append(self, conn: Connection, code: str, batch: Sequence[Event], at: str,
                states: dict[str, str]) -> list[tuple[str, str, str, str]]:  # fmt: skip
        """The log's rows of table ``code``'s events; its new state into ``states``; what a
        game's end changes besides (its record, its players' games and ratings) written."""
        rows: list[tuple[str, str, str, str]] = []
        for e in batch:
            if isinstance(e, ev.Started | ev.Expired):
                states[code] = "playing" if isinstance(e, ev.Started) else "expired"
            if not isinstance(e, ev.Over):  # the common case: its JSON made in one step
                rows.append(event_row(code, e, at))
                continue
            states[code] = "over"
            record = e.record_dict()  # parsed here, on the writer's thread, for this commit
            if e.record is not None:
                keep_record(conn, e.game_id, code, e.record)
            players_store.record_game(conn, code, e, at, record)
            if record is not None:  # after its ratings: the arena reads who was rated
                arena_store.count(conn, code, e.game_id, e.players or [],
                                  record["result"]["places"], time.time())  # fmt: skip
            # The log keeps the event without its record (the records' table has it).
            data = ev.data_of(e)
            del data["record"]
            rows.append((code, e.kind, orjson.dumps(data).decode(), at))
        return rows

    def load(self, code: str) -> list[Event]:
        """Table ``code``'s events, parsed; raises :class:`~flyswat.table.events.NotAnEvent`
        for a stored event that is not one."""
        return [parse(kind, data) for kind, data in self.events(code)]

    def exists(self, code: str) -> bool:
        """Has a table with this code ever been stored?"""
        with self.engine.connect() as conn:
            row = conn.execute(select(tables.c.code).where(tables.c.code == code)).first()
        return row is not None

    def codes(self) -> list[tuple[str, str]]:
        """Every table's ``(code, state)``, oldest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(tables.c.code, tables.c.state).order_by(tables.c.created_at))
            return [(r[0], r[1]) for r in rows]

    def events(self, code: str) -> list[tuple[str, dict[str, Any]]]:
        """Table ``code``'s events in the order they happened, as ``(kind, data)``."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(events.c.kind, events.c.data)
                .where(events.c.code == code)
                .order_by(events.c.id)
            )
            return [(r[0], json.loads(r[1])) for r in rows]

    def save_record(self, game_id: str, code: str, record: dict[str, Any]) -> None:
        """Keep a finished game's record (again: the last one written stands)."""
        with self.engine.begin() as conn:
            keep_record(conn, game_id, code, record_json(record))

    def record(self, code: str) -> dict[str, Any] | None:
        """The record of the game played at table ``code``, if it is over."""
        with self.engine.connect() as conn:
            row = conn.execute(select(records.c.record).where(records.c.code == code)).first()
        return json.loads(row[0]) if row else None

    def close(self, wait_s: float = 5.0) -> None:
        """Release the database connections, those lent out too once they are back (a query
        still running in a worker thread for a task cancelled as the server stops) or after
        ``wait_s``: one given back after the pool is gone would be left to the collector."""
        pool = self.engine.pool
        deadline = time.monotonic() + wait_s
        while isinstance(pool, QueuePool) and pool.checkedout() and time.monotonic() < deadline:
            time.sleep(0.005)
        self.engine.dispose()


def keep_record(conn: Connection, game_id: str, code: str, record: str) -> None:
    """Keep game ``game_id``'s record (its JSON text), in the caller's transaction (again: the
    last stands)."""
    conn.execute(_KEEP_RECORD, {"game_id": game_id, "code": code, "record": record})


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA busy_timeout=5000")
    cur.close()


# -- the cluster's fence: ownership checked in the writer's transaction --------------------


@contextlib.contextmanager
def raw_cursor(conn: Connection) -> Iterator[tuple[Any, str]]:
    """The DB-API's own cursor of ``conn`` and its parameter mark (``?`` or ``%s``): the
    writer's statements of every commit, where SQLAlchemy's statements, parameters and rows
    cost more than the SQL, and each statement is a wait for the interpreter's lock."""
    dbapi: Any = conn.connection.dbapi_connection
    cur = dbapi.cursor()
    try:
        yield cur, "?" if conn.dialect.name == "sqlite" else "%s"
    finally:
        cur.close()


def owned_of(conn: Connection, codes: list[str], node: str) -> set[str]:
    """The tables among ``codes`` that ``node`` owns: the store's write fence, checked once a
    commit (the others' events are not written).

    Through :func:`raw_cursor`, by the primary key only (with an indexed ``node = ?`` SQLite
    walks the node's index: every table of the node; ``+node`` keeps it off). SQLite answers
    in one row (the codes as a JSON array): each row fetched is a wait for the interpreter's
    lock, which a busy event loop hands back only every few ms — a row a table was half of a
    commit's time under load. ``FOR SHARE`` on PostgreSQL (which takes no aggregate there):
    an adoption's UPDATE of these rows waits for this commit and then loads what it wrote
    (SQLite: the writer's transaction holds the write lock from its start)."""
    with raw_cursor(conn) as (cur, mark):
        marks = ",".join(mark for _ in codes)
        if mark == "?":
            cur.execute(f"SELECT json_group_array(code) FROM flyswat_owners "
                        f"WHERE code IN ({marks}) AND +node = ?", [*codes, node])  # fmt: skip
            return set(json.loads(cur.fetchone()[0]))  # an aggregate: always one row
        cur.execute(f"SELECT code, node FROM flyswat_owners WHERE code IN ({marks}) FOR SHARE",
                    codes)  # fmt: skip
        return {row[0] for row in cur.fetchall() if row[1] == node}


#: Rows of one multi-row ``INSERT`` at most (SQLite's oldest limit of bound values is 999).
ROWS_A_STATEMENT = 999 // 5


def insert_rows(conn: Connection, table: str, columns: Sequence[str],
                rows: Sequence[Sequence[Any]]) -> None:  # fmt: skip
    """Append ``rows`` (values of ``columns``, in order) to ``table`` in as few statements as
    SQLite's limits allow, through :func:`raw_cursor` (an ``executemany`` would be a statement,
    and a wait for the interpreter's lock, a row)."""
    if not rows:
        return
    with raw_cursor(conn) as (cur, mark):
        one = "(" + ", ".join(mark for _ in columns) + ")"
        head = f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
        for i in range(0, len(rows), ROWS_A_STATEMENT):
            chunk = rows[i : i + ROWS_A_STATEMENT]
            cur.execute(head + ", ".join(one for _ in chunk), [v for row in chunk for v in row])


def event_row(code: str, e: Event, at: str) -> tuple[str, str, str, str]:
    """The log's row of table ``code``'s event ``e``: its JSON made in one step (a slap's
    ``done`` only when true: the row an older node writes and reads)."""
    return (code, e.kind, ev.data_json(e).decode(), at)


def _insert_alone(
    conn: Connection, batch: Sequence[tuple[str, Sequence[Event]]], at: str, node: str | None
) -> set[str] | None:
    """Store a batch of plain events (no table created, no state changed, no game's end) as
    one statement that is its own transaction, the write fence in it (a row is written only
    if ``node`` owns its table), and return the fenced tables' codes; None (nothing done)
    for any other batch.

    A commit is then one call into the database where it was four (the write lock or the
    transaction's start, the fence's query, the ``INSERT``, the ``COMMIT``): each is a wait
    for the interpreter's lock, which a busy event loop hands back only every few ms
    (docs/BENCHMARKS.md, *One statement a commit*), and on PostgreSQL a round trip. All of
    its rows or none, as a transaction's. The fence holds as in a transaction: SQLite's
    statement takes the write lock at its start; PostgreSQL's reads each owner row ``FOR
    SHARE`` (an adoption's ``UPDATE`` of it waits for this statement, or this statement
    for the adoption, and then reads its new owner)."""
    if conn.in_transaction() or any(
        not evs or any(isinstance(e, _STATEFUL) for e in evs) for _, evs in batch
    ):
        return None
    plain = [(code, e) for code, evs in batch for e in evs]
    dbapi: Any = conn.connection.dbapi_connection
    if len(plain) > ROWS_A_STATEMENT or dbapi is None:
        return None
    # Each row with its place, which orders the statement's rows as given.
    rows = [v for i, (code, e) in enumerate(plain) for v in (*event_row(code, e, at), i)]
    codes = {code for code, _ in batch}
    if conn.dialect.name == "sqlite":
        return None if dbapi.in_transaction else _insert_alone_sqlite(dbapi, rows, node, codes)
    if dbapi.info.transaction_status != 0:  # psycopg: not idle
        return None
    return _insert_alone_postgresql(dbapi, rows, node, codes)


def _insert_alone_sqlite(dbapi: Any, rows: list[Any], node: str | None,
                         codes: set[str]) -> set[str]:  # fmt: skip
    count = len(rows) // 5
    values = ", ".join("(?, ?, ?, ?, ?)" for _ in range(count))
    fence = "" if node is None else (
        " WHERE EXISTS (SELECT 1 FROM flyswat_owners WHERE code = column1 AND node = ?)"
    )  # fmt: skip
    sql = (f"INSERT INTO {events.name} (code, kind, data, at) SELECT column1, column2, column3,"
           f" column4 FROM (VALUES {values}){fence} ORDER BY column5")  # fmt: skip
    level = dbapi.isolation_level
    dbapi.isolation_level = None  # the driver begins no transaction: the statement is one
    cur = dbapi.cursor()
    try:
        until_unlocked(lambda: cur.execute(sql, rows if node is None else [*rows, node]))
        written, last = cur.rowcount, cur.lastrowid
        if written == count:
            return set()
        if written <= 0:
            return codes
        # Some tables are another node's now: which were written (this statement's rows
        # have the ids up to its last, one after another: it held the write lock).
        cur.execute(f"SELECT json_group_array(DISTINCT code) FROM {events.name} "
                    "WHERE id BETWEEN ? AND ?", [last - written + 1, last])  # fmt: skip
        return codes - set(json.loads(cur.fetchone()[0]))
    finally:
        cur.close()
        dbapi.isolation_level = level


def _insert_alone_postgresql(dbapi: Any, rows: list[Any], node: str | None,
                             codes: set[str]) -> set[str]:  # fmt: skip
    values = ", ".join("(%s, %s, %s, %s, %s::int)" for _ in range(len(rows) // 5))
    fence = "" if node is None else (
        " WHERE EXISTS (SELECT 1 FROM flyswat_owners o WHERE o.code = v.code AND o.node = %s"
        " FOR SHARE)"
    )  # fmt: skip
    sql = (f"INSERT INTO {events.name} (code, kind, data, at) SELECT v.code, v.kind, v.data,"
           f" v.at FROM (VALUES {values}) AS v (code, kind, data, at, n){fence} ORDER BY v.n"
           " RETURNING code")  # fmt: skip
    dbapi.autocommit = True  # the statement is its own transaction
    try:
        with dbapi.cursor() as cur:
            cur.execute(sql, rows if node is None else [*rows, node])
            return codes - {row[0] for row in cur.fetchall()}
    finally:
        with contextlib.suppress(Exception):  # a connection lost: the statement's error tells
            dbapi.autocommit = False


#: Events that change a table's state or rows beside the log (:meth:`Store._append`).
_STATEFUL = (ev.Created, ev.Started, ev.Expired, ev.Over)


def set_states(conn: Connection, states: Mapping[str, str]) -> None:
    """Set each table's state (``{code: state}``): one ``UPDATE`` a state."""
    by_state: dict[str, list[str]] = {}
    for code, state in states.items():
        by_state.setdefault(state, []).append(code)
    with raw_cursor(conn) as (cur, mark):
        for state, codes in by_state.items():
            for i in range(0, len(codes), ROWS_A_STATEMENT):
                chunk = codes[i : i + ROWS_A_STATEMENT]
                marks = ", ".join(mark for _ in chunk)
                cur.execute(f"UPDATE {tables.name} SET state = {mark} WHERE code IN ({marks})",
                            [state, *chunk])  # fmt: skip


def write_lock(conn: Connection) -> None:
    """Take the database's write lock at the start of this transaction (SQLite: ``BEGIN
    IMMEDIATE``, so that a check made in it still holds at its commit; PostgreSQL locks
    rows instead).

    SQLite's own busy handler sleeps 1, 2, 5, 10 … ms between its tries, so a writer that
    finds another process's writer at its commit may wait tens of ms for a lock held for a
    fraction of one: the lock is asked for here every :data:`LOCK_POLL_S` instead (the
    sleep releases the GIL), for up to :data:`LOCK_WAIT_S`."""
    if conn.dialect.name != "sqlite":
        return
    dbapi: Any = conn.connection.dbapi_connection
    if dbapi is None or dbapi.in_transaction:
        return
    polling = conn.info.get(POLLING, False)  # a connection kept without a busy timeout
    if not polling:
        dbapi.execute("PRAGMA busy_timeout=0")
    try:
        until_unlocked(lambda: dbapi.execute("BEGIN IMMEDIATE"))
    finally:
        if not polling:
            dbapi.execute(f"PRAGMA busy_timeout={round(LOCK_WAIT_S * 1000)}")


def until_unlocked(statement: Callable[[], Any]) -> None:
    """Run a SQLite ``statement`` that takes the write lock, again every :data:`LOCK_POLL_S`
    while another process's writer holds it, for up to :data:`LOCK_WAIT_S` (the sleep
    releases the GIL)."""
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            statement()
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(LOCK_POLL_S)


def poll_for_lock(conn: Connection) -> None:
    """Keep ``conn`` (the writer's own, whose every transaction begins with
    :func:`write_lock`) without SQLite's busy timeout, rather than set and reset it at each
    commit."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("PRAGMA busy_timeout=0")
        conn.commit()
        conn.info[POLLING] = True


POLLING = "flyswat.polls_for_lock"


#: How often a writer asks for SQLite's write lock while another process holds it, and for
#: how long at most (the busy timeout of every connection).
LOCK_POLL_S = 0.0003
LOCK_WAIT_S = 5.0
