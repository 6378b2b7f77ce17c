"""The store: events in order, records kept, schema migrated; SQLite and PostgreSQL alike."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import warnings
from collections.abc import Iterator

import msgspec
import pytest
from sqlalchemy import event, select

from flyswat import protocol as p
from flyswat.record import record_json, verify_record
from flyswat.server import fairplay_store as fs
from flyswat.server import players_store as ps
from flyswat.server.store import Store, engine_url, head_revision
from flyswat.table import events as ev

from .conftest import Player, create_table, serve


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, db_url: str) -> Iterator[str]:
    if request.param == "sqlite":
        yield db_url
    else:
        yield request.getfixturevalue("pg_url")


def test_postgresql_urls_use_psycopg() -> None:
    assert engine_url("postgresql://u:p@h/db") == "postgresql+psycopg://u:p@h/db"
    assert engine_url("sqlite:///x.db") == "sqlite:///x.db"


def test_events_come_back_in_order_per_table(url: str) -> None:
    store = Store(url)
    try:
        store.append("AAAAAA", "create", {"options": {"seats": 2}, "host": 0})
        store.append("BBBBBB", "create", {"options": {"seats": 3}, "host": 0})
        for i in range(5):
            store.append("AAAAAA", "reveal", {"turn": i + 1, "card": "R3-1"})
        store.append("AAAAAA", "start", {"seed": "x"})
        events = store.events("AAAAAA")
        assert [k for k, _ in events] == ["create"] + ["reveal"] * 5 + ["start"]
        assert [d["turn"] for k, d in events if k == "reveal"] == [1, 2, 3, 4, 5]
        assert dict(store.codes()) == {"AAAAAA": "playing", "BBBBBB": "lobby"}
        assert store.record("AAAAAA") is None
        store.save_record("g1", "AAAAAA", {"id": "g1"})
        assert store.record("AAAAAA") == {"id": "g1"}
    finally:
        store.close()


def test_a_slap_row_says_done_only_when_it_is_and_an_older_row_reads_as_not_done(
    url: str,
) -> None:
    store = Store(url)
    try:
        slaps = [ev.Slapped(turn=3, seat=0, card="R3-1", ms=210.5),
                 ev.Slapped(turn=3, seat=1, card="O2-1", ms=250.0, done=True)]  # fmt: skip
        store.append_all("AAAAAA", [ev.Created(options=p.TableOptions(seats=2), host=0), *slaps])
        rows = [d for k, d in store.events("AAAAAA") if k == "slap"]
        plain = {"turn": 3, "seat": 0, "card": "R3-1", "ms": 210.5}  # as protocol 3 wrote it
        assert rows == [plain, {"turn": 3, "seat": 1, "card": "O2-1", "ms": 250.0, "done": True}]
        assert [ev.parse("slap", d) for d in rows] == slaps
    finally:
        store.close()


def test_a_game_of_nobodys_identities_ends_in_three_statements_of_its_own_and_is_kept_once(
    url: str,
) -> None:
    """A game's end is the writer's costliest commit; each statement is a wait for the
    interpreter's lock behind a busy loop. One of guests keeps its record, its game and asks
    after an arena's table, nothing else; kept again, its record is the last one and its game
    still one row. A private table's game is not public (its code opens the table)."""
    store = Store(url)
    statements: list[str] = []
    event.listen(store.engine, "before_cursor_execute",
                 lambda *args: statements.append(args[2]))  # fmt: skip
    created = ev.Created(options=p.TableOptions(seats=2, public=False), host=0,
                         created_at="2026-12-01T00:00:00Z")  # fmt: skip
    record = {"seats": [{"name": "Ana"}, {"name": "Bo"}], "turns": [],
              "result": {"places": [1, 2], "points": [3, 1], "flies": [3, 1]}}  # fmt: skip
    try:
        store.write_batch([("PRIV01", [created]), ("PRIV02", [created])])
        statements.clear()
        store.write_batch([("PRIV02", [ev.Expired()])])
        plain = len(statements)
        statements.clear()
        over = ev.Over(game_id="g1", record=record, players=[None, None], too_fast=[0, 0],
                       public=False)  # fmt: skip
        store.write_batch([("PRIV01", [over])])
        assert len(statements) - plain == 3, statements  # the record, the game, the arena's
        again = msgspec.structs.replace(over, record=record_json({**record, "turns": [1]}))
        store.write_batch([("PRIV01", [again])])
        assert store.record("PRIV01") == {**record, "turns": [1]}
        with store.engine.connect() as conn:
            games = conn.execute(select(ps.games.c.game_id, ps.games.c.public)).all()
        assert [tuple(g) for g in games] == [("g1", False)]
    finally:
        store.close()


def test_a_game_of_players_reads_every_window_at_once_and_writes_only_the_listed(
    url: str,
) -> None:
    """A game's end of players weighs each one's window: all of them read in one statement
    (each is a wait for the interpreter's lock behind a busy loop), a fair-play row written
    only for a player already listed (brought up to date; one an operator cleared stays
    cleared) or flagged by this game — none for the others."""
    from harness.seed import one_record

    store = Store(url)
    record = one_record()
    ids = ["a" * 32, "b" * 32, "c" * 32, "d" * 32]
    statements: list[str] = []
    event.listen(store.engine, "before_cursor_execute",
                 lambda *args: statements.append(" ".join(args[2].split())))  # fmt: skip
    try:
        with store.engine.begin() as conn:
            for pid in ids:
                ps.register(conn, pid, pid[:3], "secret", "2026-12-01T00:00:00Z")
            conn.execute(fs.fairplay.insert().values(
                player_id=ids[1], state=fs.CLEARED, score=0.5, reason="looked at", games=1,
                first_hands=1, evidence="{}", flagged_at="2026-12-01T00:00:00Z",
                updated_at="2026-12-01T00:00:00Z"))  # fmt: skip
        over = ev.Over(game_id="g1", record={**record, "id": "g1"}, players=ids,
                       too_fast=[0] * 4, own_reveals=[9] * 4, public=True)  # fmt: skip
        statements.clear()
        store.write_batch([("T00001", [over])])
        reads = [s for s in statements if "flyswat_player_games" in s and s.startswith("SELECT")]
        updates = [s for s in statements if s.startswith("UPDATE flyswat_fairplay")]
        inserts = [s for s in statements if s.startswith("INSERT INTO flyswat_fairplay")]
        with store.engine.connect() as conn:
            rows = {r.player_id: r for r in conn.execute(select(fs.fairplay))}
        assert len(reads) == 1, reads
        assert len(updates) == 1 and rows[ids[1]].state == fs.CLEARED
        assert rows[ids[1]].updated_at != "2026-12-01T00:00:00Z"  # its figures brought up to date
        assert len(inserts) == len(rows) - 1  # the others: a row only for one this game flagged
        assert all(rows[pid].state == fs.REVIEW for pid in rows if pid != ids[1])
    finally:
        store.close()


def test_a_players_fair_play_history_is_their_latest_games_oldest_first(url: str) -> None:
    """What the detector weighs at a game's end (read in one row: each row SQLite's driver
    steps to is a wait for the interpreter's lock): the player's own latest games, in the
    order they were played, and one player's games are theirs alone."""
    from harness.seed import one_record

    store = Store(url)
    record = one_record()
    try:
        with store.engine.begin() as conn:
            for pid in ("a" * 32, "b" * 32):
                ps.register(conn, pid, pid[:3], "secret", "2026-12-01T00:00:00Z")
        for i in range(6):  # each game tells itself by the first seat's too-fast count
            over = ev.Over(game_id=f"g{i}", record={**record, "id": f"g{i}"},
                           players=["a" * 32, "b" * 32 if i % 2 else None, None, None],
                           too_fast=[i, 0, 0, 0], own_reveals=[9] * 4, public=True)  # fmt: skip
            store.write_batch([(f"T{i:05d}", [over])])
        with store.engine.connect() as conn:
            assert [g.too_fast for g in fs.history(conn, "a" * 32, 4)] == [2, 3, 4, 5]
            assert [g.too_fast for g in fs.history(conn, "a" * 32)] == [0, 1, 2, 3, 4, 5]
            assert len(fs.history(conn, "b" * 32)) == 3
            assert fs.history(conn, "c" * 32) == []
            rows = conn.execute(select(ps.player_games.c.player_id)).all()
            games = conn.execute(select(ps.players.c.id, ps.players.c.games)).all()
        assert len(rows) == 9 and sorted(tuple(g) for g in games) == [("a" * 32, 6), ("b" * 32, 3)]
    finally:
        store.close()


def test_opening_again_keeps_everything_and_the_schema_version(url: str) -> None:
    first = Store(url)
    first.append("CCCCCC", "create", {"options": {}, "host": 0})
    first.close()
    second = Store(url)
    try:
        assert second.migrate() == head_revision()
        assert second.events("CCCCCC") == [("create", {"options": {}, "host": 0})]
    finally:
        second.close()


def test_closing_waits_for_a_connection_still_lent_to_a_thread(url: str) -> None:
    """A query still running in a worker thread when the server stops (a task cancelled
    while its ``asyncio.to_thread`` runs on): the store closes that connection too once it
    is back, rather than leave it to the collector (psycopg warns of a connection deleted
    open, at some later test's collection)."""
    store = Store(url)
    engine, lent = store.engine, threading.Event()

    def query() -> None:
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")
            lent.set()
            time.sleep(0.3)

    worker = threading.Thread(target=query)
    worker.start()
    assert lent.wait(10)
    store.close()
    worker.join(10)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del store
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)], caught


@pytest.mark.anyio
async def test_a_game_on_the_store_is_rebuilt_by_a_new_server(url: str) -> None:
    with serve(url) as live:
        seated = await create_table(live, seats=2, bots=[{"seat": 1, "level": "hard"}], remove=90)
        async with Player.connect(live.ws, seated["code"], seated["token"]) as ana:
            await ana.send(type="start")
            await ana.play(until=lambda m: m["type"] == "reveal" and m["turn"] >= 5)
    with serve(url) as live:
        async with Player.connect(live.ws, seated["code"], seated["token"]) as ana:
            assert ana.received[0]["view"]["turn"] >= 5
            await ana.play()
        reply = await asyncio.to_thread(live.get, f"/api/tables/{seated['code']}/record")
        assert verify_record(reply.json()) == []


def test_a_store_made_before_alembic_is_taken_up_with_its_events(tmp_path) -> None:
    import sqlite3

    path = tmp_path / "old.db"
    old = sqlite3.connect(path)  # the schema the hand-written migration made (version 1)
    old.executescript(
        """
        CREATE TABLE flyswat_meta (key VARCHAR(64) PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO flyswat_meta VALUES ('schema', '1');
        CREATE TABLE flyswat_tables (code VARCHAR(16) PRIMARY KEY, state VARCHAR(16) NOT NULL,
                                     created_at VARCHAR(40) NOT NULL);
        CREATE TABLE flyswat_events (id INTEGER PRIMARY KEY AUTOINCREMENT,
            code VARCHAR(16) NOT NULL, kind VARCHAR(16) NOT NULL, data TEXT NOT NULL,
            at VARCHAR(40) NOT NULL);
        CREATE TABLE flyswat_records (game_id VARCHAR(40) PRIMARY KEY,
            code VARCHAR(16) NOT NULL, record TEXT NOT NULL);
        INSERT INTO flyswat_tables VALUES ('OLDOLD', 'lobby', '2026-01-01T00:00:00Z');
        INSERT INTO flyswat_events (code, kind, data, at)
            VALUES ('OLDOLD', 'create', '{"host": 0}', '2026-01-01T00:00:00Z');
        """
    )
    old.commit()
    old.close()
    store = Store(f"sqlite:///{path}")
    try:
        assert store.migrate() == head_revision()
        assert store.events("OLDOLD") == [("create", {"host": 0})]
        assert dict(store.codes()) == {"OLDOLD": "lobby"}
        with store.engine.connect() as conn:
            from sqlalchemy import inspect

            assert "flyswat_meta" not in inspect(conn).get_table_names()
    finally:
        store.close()


def test_stored_name_keys_are_made_again_by_the_key_that_sees_through_look_alikes(
    url: str,
) -> None:
    """Migration 0010: a name stored with a character drawn as nothing or a Cyrillic
    look-alike gets the key a name typed now gets; one whose new key is another player's
    keeps its old key (nobody loses a name)."""
    import sqlalchemy as sa
    from alembic import command

    from flyswat.server.store import alembic_config

    engine = sa.create_engine(engine_url(url))
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "0009")
        rows = [("p1", "Zed", "zed"), ("p2", "Z\u0435d", "z\u0435d"),
                ("p3", "Bo\ufe0f", "bo\ufe0f"), ("p4", "Eva\u3164", "eva\u3164")]  # fmt: skip
        for pid, name, key in rows:
            conn.execute(
                sa.text("INSERT INTO flyswat_players (id, name, name_key, secret_hash, created_at,"
                        " mu, sigma) VALUES (:id, :name, :key, :h, '2026-01-01T00:00:00Z', 25, 8)"),
                {"id": pid, "name": name, "key": key, "h": "0" * 64},
            )  # fmt: skip
    engine.dispose()
    store = Store(url)
    try:
        with store.engine.connect() as conn:
            keys = dict(conn.execute(sa.text("SELECT id, name_key FROM flyswat_players")).all())
    finally:
        store.close()
    assert keys == {"p1": "zed", "p2": "z\u0435d", "p3": "bo", "p4": "eva"}
