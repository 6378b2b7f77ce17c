"""Attacks on the cluster (``flyswat serve --workers N``, nodes over PostgreSQL and Redis):
each test asserts what the documents promise, and fails while the defect it aims at exists.

``docs/DEPLOY.md`` (*The parts*): "the store refuses, in the same transaction, the events of
a node that no longer owns their table: a node that was paused past its lease (a stopped VM,
a long stall) cannot write over the node that took its tables"; "each table is run by
exactly one node"; one lobby on every node; Play now seats the players who ask at the same
moment together.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from flyswat import protocol as p
from flyswat.server.cluster import Cluster
from flyswat.server.store import Store
from flyswat.table.core import Table
from flyswat.table.events import Joined
from flyswat.table.io import Join, Sources
from harness.server import Serve, free_ports, until_health

from .conftest import FAST, empty_redis, until
from .test_cluster import (
    BEAT_S,
    DEAD_AFTER_S,
    QUICK,
    game,
    node,
    owner_port,
    play_through,
    record,
)

# -- the write fence -----------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def any_db(request: pytest.FixtureRequest, db_url: str) -> Iterator[str]:
    if request.param == "sqlite":
        yield db_url
    else:
        yield request.getfixturevalue("pg_url")


def test_a_commit_writes_only_the_tables_its_node_owns(any_db: str) -> None:
    """The fence, table by table in one commit: a table adopted by another node, and a code
    nobody owns, are refused (nothing of theirs stored); the node's own table is written."""
    a, b = Store(any_db, node="a"), Store(any_db, node="b")
    try:
        options = p.TableOptions(seats=3, **FAST)
        mine, made = Table.create("OWNED1", options, "Ana", Sources(), 0.0)
        lost, made_lost = Table.create("LOST01", options, "Eve", Sources(), 0.0)
        assert a.write_batch([("OWNED1", made.events), ("LOST01", made_lost.events)]) == set()
        assert Cluster(b.engine, "b", "http://127.0.0.1:1").adopt("LOST01", dead=["a"])
        joins = [(code, t.handle(Join("Bruno"), 1.0).events)
                 for code, t in (("OWNED1", mine), ("LOST01", lost))]  # fmt: skip
        nobody = ("NOBODY", joins[0][1])  # no owner row at all
        assert a.write_batch([*joins, nobody]) == {"LOST01", "NOBODY"}
        assert len(a.load("OWNED1")) == len(made.events) + len(joins[0][1])
        assert len(a.load("LOST01")) == len(made_lost.events)
        assert a.load("NOBODY") == []
    finally:
        a.close()
        b.close()


def test_a_node_that_lost_its_table_mid_commit_cannot_write_behind_the_adopter(any_db: str) -> None:
    """Attacks the fence: an adoption that commits between the owner's fence check and its
    insert (a VM paused mid-commit) must not leave events the adopter never loaded. (A
    commit that creates a table is a transaction of several statements on either store.)"""
    a, b = Store(any_db, node="a"), Store(any_db, node="b")
    try:
        options = p.TableOptions(seats=3, **FAST)
        table, created = Table.create("FENCE1", options, "Ana", Sources(), 0.0)
        assert a.write_batch([("FENCE1", created.events)]) == set()
        joined = table.handle(Join("Bruno"), 1.0)
        assert joined.events
        _, other = Table.create("FENCE2", options, "Eve", Sources(), 1.0)
        adopter = Cluster(b.engine, "b", "http://127.0.0.1:1")
        loaded: list[int] = []

        def adopt_and_load() -> None:  # node b: a is dead (paused past its lease)
            if adopter.adopt("FENCE1", dead=["a"]):
                loaded.append(len(b.load("FENCE1")))

        real = a._fenced

        def paused_between(conn: Any, batch: Any) -> set[str]:
            fenced: set[str] = real(conn, batch)  # the check says: a owns it ...
            other = threading.Thread(target=adopt_and_load, daemon=True)
            other.start()  # ... and node a stops here while b adopts (or waits for a's lock)
            other.join(1.5)
            return fenced

        a._fenced = paused_between
        refused = a.write_batch([("FENCE1", joined.events), ("FENCE2", other.events)])
        deadline = time.monotonic() + 10
        while not loaded and time.monotonic() < deadline:
            time.sleep(0.05)
        assert loaded, "b adopted the table of a dead node"
        stored = len(a.load("FENCE1"))
        # Either a's events were refused, or b's adoption waited for them and loaded them.
        assert "FENCE1" in refused or loaded[0] == stored, (
            f"a wrote {len(joined.events)} event(s) after b adopted and loaded the table "
            f"({loaded[0]} events loaded, {stored} stored): b runs a table without them"
        )
    finally:
        a.close()
        b.close()


def test_a_commit_of_plain_events_reads_the_fence_only_once_the_adopter_has_committed(
    any_db: str,
) -> None:
    """Attacks the one-statement commit of plain events (SQLite: the fence inside the
    ``INSERT``): an adoption holding the write lock while the owner commits. The owner's
    statement waits for it, then sees it: its events are refused, and the adopter's table is
    as it loaded it."""
    a, b = Store(any_db, node="a"), Store(any_db, node="b")
    try:
        options = p.TableOptions(seats=3, **FAST)
        table, created = Table.create("FENCE3", options, "Ana", Sources(), 0.0)
        assert a.write_batch([("FENCE3", created.events)]) == set()
        joined = table.handle(Join("Bruno"), 1.0).events
        assert joined
        adopting = threading.Event()

        def adopt() -> None:  # node b's adoption, its transaction held open a while
            with b.engine.begin() as conn:
                conn.exec_driver_sql(
                    "UPDATE flyswat_owners SET node = 'b' WHERE code = 'FENCE3'"
                )  # the write lock (SQLite), the row's (PostgreSQL)
                adopting.set()
                time.sleep(0.5)

        other = threading.Thread(target=adopt, daemon=True)
        other.start()
        try:
            assert adopting.wait(5)
            # Refused: the owner read the adoption, which it can only have seen committed.
            assert a.write_batch([("FENCE3", joined)]) == {"FENCE3"}
        finally:
            other.join(5)
        assert len(b.load("FENCE3")) == len(created.events)
    finally:
        a.close()
        b.close()


def test_a_commit_of_plain_events_keeps_their_order_and_tells_which_tables_it_refused(
    any_db: str,
) -> None:
    """Many tables' plain events in one commit, one of them adopted before it: the others'
    rows are stored in the order given, the adopted one's not at all."""
    a, b = Store(any_db, node="a"), Store(any_db, node="b")
    try:
        options = p.TableOptions(seats=4, **FAST)
        tables = {}
        for i in range(5):
            code = f"ORDER{i}"
            tables[code], made = Table.create(code, options, "Ana", Sources(), 0.0)
            assert a.write_batch([(code, made.events)]) == set()
        assert Cluster(b.engine, "b", "http://127.0.0.1:1").adopt("ORDER2", dead=["a"])
        batch = []
        for name in ("Bruno", "Caio", "Duda"):  # interleaved: a table's rows not together
            for code, t in tables.items():
                batch.append((code, t.handle(Join(name), 1.0).events))
        assert all(isinstance(e, Joined) for _, events in batch for e in events)
        assert a.write_batch(batch) == {"ORDER2"}
        for code in tables:
            names = [e.name for e in a.load(code) if isinstance(e, Joined)]
            assert names == ["Ana"] + ([] if code == "ORDER2" else ["Bruno", "Caio", "Duda"])
    finally:
        a.close()
        b.close()


# -- nodes as processes --------------------------------------------------------------------


def cluster_of(
    n: int, db: str, redis_url: str, tmp: Path, started: list[Serve], *extra: str
) -> list[int]:
    ports = [free_ports(1) for _ in range(n)]
    for i, port in enumerate(ports):
        args = ["--workers", "1", "--port", str(port), "--db", db, "--redis", redis_url,
                "--node-id", f"n{i}", "--advertise", f"http://127.0.0.1:{port}",
                *QUICK, *extra]  # fmt: skip
        started.append(Serve(args, tmp / f"n{i}.log", [port]))
    until_peers(ports, n)
    return ports


def until_peers(ports: list[int], n: int, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not all(until_health(p)["nodes"] == n for p in ports):
        assert time.monotonic() < deadline, "the nodes do not see one another"
        time.sleep(0.05)


def listed(port: int) -> set[str]:
    reply = httpx.get(f"http://127.0.0.1:{port}/api/tables", timeout=10)
    assert reply.status_code == 200, reply.text
    return {t["code"] for t in reply.json()["tables"]}


def state(port: int, code: str) -> str:
    reply = httpx.get(f"http://127.0.0.1:{port}/api/tables/{code}", timeout=10)
    assert reply.status_code == 200, reply.text
    return str(reply.json()["state"])


def identity(port: int, name: str) -> dict[str, Any]:
    reply = httpx.post(f"http://127.0.0.1:{port}/api/players", json={"name": name}, timeout=10)
    assert reply.status_code == 201, reply.text
    return dict(reply.json())


# -- Play now ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_play_now_seats_two_players_asking_at_once_at_one_table(
    tmp_path: Path, started: list[Serve], pg_url: str, redis_url: str
) -> None:
    """Attacks Play now across nodes: two players asking at the same moment (to one node,
    then to two) must sit at the same table (docs/DEPLOY.md)."""
    ports = cluster_of(2, pg_url, redis_url, tmp_path, started, "--play-now-wait", "3")
    split = []
    for round_, pair in enumerate([(0, 0), (0, 1), (1, 1), (1, 0)]):
        who = [identity(ports[0], f"P{round_}x{i}") for i in range(2)]
        async with httpx.AsyncClient(timeout=20) as client:
            replies = await asyncio.gather(*(
                client.post(f"http://127.0.0.1:{ports[k]}/api/play",
                            json={"player": w["player"], "secret": w["secret"]})
                for k, w in zip(pair, who, strict=True)
            ))  # fmt: skip
        for r in replies:
            assert r.status_code == 201, r.text
        codes = {r.json()["code"] for r in replies}
        if len(codes) > 1:
            split.append((pair, sorted(codes)))
        for code in codes:  # the bots fill those tables and they start: none open now
            await until(lambda c=code: state(ports[0], c) != "lobby", f"{code} never started")
    assert not split, f"players who asked at once were seated apart: {split}"


# -- who is alive --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_redis_restart_does_not_make_live_nodes_take_each_others_tables(
    tmp_path: Path, started: list[Serve], pg_url: str, redis_url: str
) -> None:
    """Attacks liveness: Redis restarted empty (here every key of this cluster deleted)
    while every node beats on; no node was silent for its lease, so no table may change
    hands (docs/DEPLOY.md: one silent for 3 s — here 1.5 s — is dead)."""
    ports = cluster_of(2, pg_url, redis_url, tmp_path, started)
    at = [node(p) for p in ports]
    codes = {}
    for i, a in enumerate(at):
        for _ in range(3):
            seated = a.post("/api/tables", {"name": f"H{i}", "seats": 3, **FAST})
            assert seated.status_code == 201, seated.text
            codes[seated.json()["code"]] = ports[i]
    before = {c: owner_port(c, ports) for c in codes}
    assert before == codes
    for _ in range(3):  # a restart, and two more (a Redis failover, an operator's flush)
        assert empty_redis(redis_url) > 0, "the nodes keep their keys under the test's prefix"
        await asyncio.sleep(DEAD_AFTER_S + BEAT_S)  # a lease and a beat: adopted by now, if
    await asyncio.sleep(DEAD_AFTER_S)
    after = {c: owner_port(c, ports) for c in codes}
    moved = {c: (before[c], after[c]) for c in codes if before[c] != after[c]}
    assert not moved, f"tables taken from a live node: {moved}"


# -- a node paused past its lease ----------------------------------------------------------


async def first_message(ws_base: str, code: str, token: str) -> dict[str, Any]:
    import json

    from websockets.asyncio.client import connect

    async with connect(f"{ws_base}/ws/{code}", open_timeout=5) as ws:
        with contextlib.suppress(Exception):
            await ws.send(json.dumps({"type": "hello", "token": token}))
        deadline = time.monotonic() + 5
        while True:
            msg = json.loads(await asyncio.wait_for(ws.recv(), deadline - time.monotonic()))
            if msg["type"] != "ping":
                return dict(msg)


@pytest.mark.anyio
async def test_a_node_paused_past_its_lease_neither_runs_nor_unlists_the_adopted_table(
    tmp_path: Path, started: list[Serve], pg_url: str, redis_url: str
) -> None:
    """Attacks split brain in the lobby: SIGSTOP the owner of an open table until the other
    node adopts it, SIGCONT; the adopter alone runs it (the woken node sends a player on)
    and every node lists it."""
    ports = cluster_of(2, pg_url, redis_url, tmp_path, started)
    seated = node(ports[0]).post("/api/tables", {"name": "Ana", "seats": 3, **FAST})
    assert seated.status_code == 201, seated.text
    code, token = seated.json()["code"], seated.json()["token"]
    deadline = time.monotonic() + 10
    while not all(code in listed(p) for p in ports):
        assert time.monotonic() < deadline, "the table is listed on every node"
        await asyncio.sleep(0.05)
    pid = started[0].proc.pid
    os.kill(pid, signal.SIGSTOP)
    # Dead after its lease; the other node adopts it at its next beat.
    await until(lambda: until_health(ports[1])["tables"] == 1, "nobody adopted the table")
    assert owner_port(code, [ports[1]]) == ports[1]
    os.kill(pid, signal.SIGCONT)
    wrong = []
    said = await first_message(f"ws://127.0.0.1:{ports[0]}", code, token)
    if said["type"] != "moved":
        wrong.append(f"the woken node still runs the table: it answered {said['type']}")
    # The woken node has let the table go, and published what it had to (or wrongly not).
    await until(lambda: until_health(ports[0])["tables"] == 0, "the woken node keeps the table")
    await asyncio.sleep(3 * 0.1 + BEAT_S)  # three publications (--publish-every 0.1) and a beat
    lists = {p: code in listed(p) for p in ports}
    if not all(lists.values()):
        wrong.append(f"the open table is listed by only some nodes: {lists}")
    assert not wrong, wrong


@pytest.mark.anyio
async def test_a_node_paused_mid_game_and_woken_leaves_one_game_that_verifies(
    tmp_path: Path, started: list[Serve], pg_url: str, redis_url: str
) -> None:
    """Attacks split brain mid-game: SIGSTOP the owner past its lease (and a few beats,
    for the other node to adopt the table) while both players are on it, SIGCONT; the game
    finishes once, its record verifies, both players see one result."""
    from flyswat.record import verify_record

    ports = cluster_of(2, pg_url, redis_url, tmp_path, started)
    at = [node(p) for p in ports]
    code, a, b = (str(x) for x in await game(at[0], at[1]))
    victim = owner_port(code, ports)
    index = ports.index(victim)
    pid = started[index].proc.pid

    def pause() -> None:
        os.kill(pid, signal.SIGSTOP)
        time.sleep(DEAD_AFTER_S + 4 * BEAT_S)
        os.kill(pid, signal.SIGCONT)

    first, second = await play_through([at[index], at[index]], code, [a, b], kill=pause,
                                       again=[at[index], at[1 - index]])  # fmt: skip
    assert first["result"] == second["result"]
    assert verify_record(record(at[1 - index], code)) == []


@pytest.mark.anyio
async def test_a_table_filled_after_its_node_died_is_not_listed_when_that_node_returns(
    tmp_path: Path, started: list[Serve], pg_url: str, redis_url: str
) -> None:
    """Attacks the shared lobby: a node killed with an open table, the table adopted and
    filled elsewhere, the node restarted under its own id (as DEPLOY.md advises); its stale
    entry must not come back as a joinable table."""
    ports = cluster_of(2, pg_url, redis_url, tmp_path, started)
    seated = node(ports[0]).post("/api/tables", {"name": "Ana", "seats": 2, **FAST})
    assert seated.status_code == 201, seated.text
    code = seated.json()["code"]
    deadline = time.monotonic() + 10
    while not all(code in listed(p) for p in ports):
        assert time.monotonic() < deadline, "the table is listed on every node"
        await asyncio.sleep(0.05)
    started[0].kill()
    deadline = time.monotonic() + 20
    while True:  # 503 moved while the dead node still counts as alive: try again
        joined = node(ports[1]).post(f"/api/tables/{code}/join", {"name": "Bruno"})
        if joined.status_code == 201:
            break
        assert joined.status_code == 503 and time.monotonic() < deadline, joined.text
        await asyncio.sleep(BEAT_S)
    args = ["--workers", "1", "--port", str(ports[0]), "--db", pg_url, "--redis", redis_url,
            "--node-id", "n0", "--advertise", f"http://127.0.0.1:{ports[0]}", *QUICK]  # fmt: skip
    started.append(Serve(args, tmp_path / "n0-again.log", [ports[0]]))
    until_peers(ports, 2)
    await asyncio.sleep(DEAD_AFTER_S)  # a stale entry would be back by now (six beats)
    lists = {p: code in listed(p) for p in ports}
    assert not any(lists.values()), f"a full table is listed as joinable: {lists}"
    reply = httpx.post(f"http://127.0.0.1:{ports[0]}/api/tables/{code}/join",
                       json={"name": "Carla"}, timeout=10)  # fmt: skip
    assert reply.status_code == 409, reply.text


# -- the supervisor ------------------------------------------------------------------------


def test_a_worker_that_cannot_start_is_not_restarted_in_a_tight_loop(
    tmp_path: Path, started: list[Serve]
) -> None:
    """Attacks the supervisor (a careless operator): worker 1's own port is taken; the
    supervisor must back off or give up, not restart it every 0.5 s forever. Backing off
    (1 s, 2 s, 4 s …, docs/DEPLOY.md) starts it again twice in 8 s; a loop of 0.5 s, with
    about a second to fail each time, five times."""
    port = free_ports(3)
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", port + 2))
    squatter.listen(1)
    try:
        db = f"sqlite:///{tmp_path / 'loop.db'}"
        sup = Serve(["--workers", "2", "--port", str(port), "--db", db], tmp_path / "loop.log",
                    [port + 1])  # fmt: skip
        started.append(sup)
        time.sleep(8)
        restarts = sup.log.read_text().count("starting it again")
        ended = sup.proc.poll()
        assert (ended is not None and ended != 0) or restarts <= 3, (
            f"worker 1 was started again {restarts} times in 8 s and the supervisor "
            f"{'ended ' + str(ended) if ended is not None else 'runs on'}"
        )
    finally:
        squatter.close()


# -- Redis away ----------------------------------------------------------------------------


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[tuple[str, Any]]:
    """A Redis server of this test's own (to stop and start again): its URL, and a function
    that stops it (``start=True``: starts it again, empty, on the same port)."""
    port = free_ports(1)
    procs: list[subprocess.Popen[bytes]] = []

    def start() -> None:
        cmd = ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
               "--dir", str(tmp_path)]  # fmt: skip
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                return
            assert time.monotonic() < deadline, "redis-server does not start"
            time.sleep(0.05)

    def switch(start_again: bool = False) -> None:
        if start_again:
            start()
            return
        proc = procs[-1]
        proc.terminate()
        proc.wait(10)

    start()
    try:
        yield f"redis://127.0.0.1:{port}/0", switch
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)


@pytest.mark.anyio
async def test_redis_away_for_a_moment_costs_no_error_and_no_node(
    tmp_path: Path, started: list[Serve], pg_url: str, own_redis: tuple[str, Any]
) -> None:
    """Attacks a Redis blip: while Redis is away the lobby and a table's info still answer
    (200, or 503 moved to try again: never a 500), and no node ends."""
    url, switch = own_redis
    ports = cluster_of(2, pg_url, url, tmp_path, started)
    seated = node(ports[0]).post("/api/tables", {"name": "Ana", "seats": 3, **FAST})
    assert seated.status_code == 201, seated.text
    code = seated.json()["code"]
    await until(lambda: all(code in listed(p) for p in ports), "the table is listed everywhere")
    switch()
    await asyncio.sleep(2 * BEAT_S)  # every node has beaten into the void
    answers = {}
    for port in ports:
        for path in ("/api/tables", f"/api/tables/{code}"):
            reply = httpx.get(f"http://127.0.0.1:{port}{path}", timeout=10)
            answers[f"{port} GET {path}"] = reply.status_code
    switch(start_again=True)
    await asyncio.sleep(DEAD_AFTER_S + BEAT_S)  # long enough for a node to die of it
    alive = [s.proc.poll() is None for s in started]
    bad = {k: v for k, v in answers.items() if v not in (200, 503)}
    assert not bad and all(alive), f"while Redis was away: {bad}; nodes alive: {alive}"


# -- the owner's own check -----------------------------------------------------------------


@pytest.mark.anyio
async def test_a_table_created_while_the_node_checks_what_it_owns_is_not_dropped(
    db_url: str,
) -> None:
    """Attacks the periodic ownership check (``Node.keep``): a table created on this node
    while its ``mine()`` query is on its way must not be taken for lost and dropped (its
    timers stopped, its players sent away, gone from the lobby)."""
    from flyswat.server import node as node_mod
    from flyswat.server.runner import Runner

    store = Store(db_url, node="a")
    cluster = Cluster(store.engine, "a", "http://127.0.0.1:1")
    runner = Runner(store, bot_pace=0.05, cluster=cluster)
    runner.start()
    runner.node.restore()
    asking = threading.Event()
    real = cluster.mine

    def slow_mine() -> set[str]:
        found: set[str] = real()  # the store answered: what this node owned at that instant ...
        asking.set()
        time.sleep(0.3)  # ... on its way back to the loop (a busy store, a busy thread pool)
        return found

    cluster.mine = slow_mine
    keeping = asyncio.create_task(runner.node.keep(beat_s=0.02))
    try:
        while not asking.is_set():
            await asyncio.sleep(0.005)
        body = p.CreateTable(name="Ana", seats=3, **FAST)
        table, _, _ = await runner.directory.create(body)
        await asyncio.sleep(0.6)  # that check has come back, and the next one too
        assert table.code in runner.directory.tables, "a table just made here was dropped as lost"
        assert cluster.owner(table.code).node == "a"
    finally:
        await node_mod.stop_tasks([keeping])
        runner.close()


# -- forwarded requests ----------------------------------------------------------------------


def test_a_client_cannot_name_its_own_address_to_dodge_the_limits(
    tmp_path: Path, started: list[Serve]
) -> None:
    """Attacks the forwarding headers: a client that names another address in
    x-flyswat-client (with no secret, or a guessed one) is still limited as itself."""
    port = free_ports(1)
    db = f"sqlite:///{tmp_path / 'f.db'}"
    started.append(Serve(["--workers", "1", "--port", str(port), "--db", db,
                          "--table-burst", "2", "--tables-per-minute", "1"],
                         tmp_path / "f.log", [port]))  # fmt: skip
    url = f"http://127.0.0.1:{port}/api/tables"
    body = {"name": "Ana", "seats": 2, **FAST}
    statuses = []
    for i in range(4):
        forged = {"x-flyswat-client": f"10.0.0.{i}"}
        statuses.append(httpx.post(url, json=body, headers=forged, timeout=10).status_code)
    guessed = {"x-flyswat-client": "10.0.1.1", "x-flyswat-secret": "guess"}
    statuses.append(httpx.post(url, json=body, headers=guessed, timeout=10).status_code)
    empty = {"x-flyswat-client": "10.0.1.2", "x-flyswat-secret": ""}
    statuses.append(httpx.post(url, json=body, headers=empty, timeout=10).status_code)
    assert statuses[:2] == [201, 201] and statuses[2:4] == [429, 429], statuses
    assert statuses[4:] == [403, 403], statuses


# -- a graceful stop of everything -----------------------------------------------------------


@pytest.mark.anyio
async def test_the_supervisor_stopped_mid_game_and_started_again_loses_no_game(
    tmp_path: Path, started: list[Serve]
) -> None:
    """Attacks the graceful stop of every worker at once (SIGTERM to the supervisor) in the
    middle of a game: started again, the game resumes and its record verifies."""
    from flyswat.record import verify_record

    port = free_ports(3)
    db = f"sqlite:///{tmp_path / 'g.db'}"
    args = ["--workers", "2", "--port", str(port), "--db", db, *QUICK]
    started.append(Serve(args, tmp_path / "g.log", [port, port + 1, port + 2]))
    public = node(port)
    code, a, b = (str(x) for x in await game(node(port + 1), node(port + 2)))

    def restart() -> None:
        started[0].kill(signal.SIGTERM)
        assert started[0].proc.returncode == 0, started[0].proc.returncode
        started.append(Serve(args, tmp_path / "g2.log", [port, port + 1, port + 2]))

    first, second = await play_through([node(port + 1), node(port + 2)], code, [a, b],
                                       kill=restart, again=[public])  # fmt: skip
    assert first["result"] == second["result"]
    assert verify_record(record(public, code)) == []
