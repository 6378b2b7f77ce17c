"""The server leaves no reference cycle behind a game: the collector never walks its live heap
(``flyswat.server.serve.collect`` walks the young generation alone and freezes its survivors),
so a finished table, a closed socket and its session must be freed by reference count alone,
or they would stay for good."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from flyswat.server import serve
from flyswat.server.transport import FlyswatWebSocket, OpenSocket

from .conftest import FAST, Live, Player, create_table, join_table, until


async def bot_game(live: Live) -> None:
    bots = [{"seat": s, "level": "hard"} for s in (1, 2, 3)]
    seated = await create_table(live, bots=bots, **FAST)
    async with Player.connect(live.ws, seated["code"], seated["token"]) as ana:
        await ana.send(type="start")
        await ana.play(timeout=120)


@contextlib.contextmanager
def cyclic_garbage() -> Iterator[list[Any]]:
    """What becomes cyclic garbage inside the block (the collector off meanwhile)."""
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    found: list[Any] = []
    try:
        yield found
        gc.collect()
        found += gc.garbage
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()


@pytest.mark.anyio
async def test_a_whole_game_and_its_sockets_leave_no_cycle_of_the_servers_objects(
    live: Live,
) -> None:
    await bot_game(live)  # warm: caches filled, lazy imports done
    runner = live.app.state.runner
    with cyclic_garbage() as garbage:
        await bot_game(live)
        for _ in range(100):  # the socket's close reaches the server, the table leaves memory
            if not runner.executor.links and not runner.directory.tables:
                break
            await asyncio.sleep(0.05)
    assert not runner.executor.links and not runner.directory.tables
    ours = sorted({f"{type(o).__module__}.{type(o).__qualname__}" for o in garbage
                   if type(o).__module__.startswith("flyswat")})  # fmt: skip
    assert ours == [], f"cycles of {ours} are freed only by a full collection"


@pytest.mark.anyio
async def test_set_ups_by_guests_and_by_players_leave_no_cycle_of_the_stores_statements(
    live: Live,
) -> None:
    """A burst of new tables is a burst of the set-ups' reads (is a guest's name a player's?
    whose is this identity?): a statement built anew for each with ``in_`` held cycles in its
    bound parameters — 50 a second at 12,000 players as games ended, enough to keep a node's
    collector walking (``serve.collect``)."""
    me = (await asyncio.to_thread(live.post, "/api/players", {"name": "Dee"})).json()
    caller = {"player": me["player"], "secret": me["secret"]}

    async def set_ups() -> None:
        seated = await create_table(live, "Ana")
        await join_table(live, seated["code"], "Bea")
        await join_table(live, seated["code"], "Dee")  # a player's name: given a tag
        mine = await asyncio.to_thread(
            live.post, "/api/tables", {**caller, "name": "Dee", "seats": 2}
        )
        assert mine.status_code == 201, mine.text

    await set_ups()  # warm: the statements compiled and cached
    with cyclic_garbage() as garbage:
        for _ in range(3):
            await set_ups()
    kinds = sorted({f"{type(o).__module__}.{type(o).__qualname__}" for o in garbage
                    if type(o).__module__.startswith(("flyswat", "sqlalchemy"))})  # fmt: skip
    assert kinds == [], f"set-ups left cycles of {kinds}"


@pytest.mark.anyio
async def test_an_open_socket_keeps_no_task_nor_coroutines_of_its_own(live: Live) -> None:
    """Once accepted, a socket lives in its protocol alone: the usual one was never handed to
    the application (the transport answered its handshake: an ``OpenSocket``), and one the
    application accepted (a handshake the transport leaves to the websockets library: here,
    one that asks for a sub-protocol) has seen it return — no task, no stack of the
    middlewares' coroutines for the socket's whole life: in a burst of new sockets the
    collector walked about a hundred objects each. Both carry the table's messages both ways,
    and close as ever."""
    seated = await create_table(live)
    joined = await join_table(live, seated["code"], "Bruno")
    executor = live.app.state.runner.executor
    async with (
        Player.connect(live.ws, seated["code"], seated["token"]) as ana,
        Player.connect(live.ws, seated["code"], joined["token"], subprotocols=["x"]) as bruno,
    ):
        await until(lambda: len(executor.links) == 2, "the two sockets were not linked")
        protocols = {link.protocol for link in executor.links.values()}
        opened = [p for p in protocols if isinstance(p, OpenSocket)]
        accepted = [p for p in protocols if isinstance(p, FlyswatWebSocket)]
        assert len(opened) == 1 and len(accepted) == 1
        # uvicorn's set of the ASGI applications still running, every connection's.
        tasks = accepted[0].tasks
        await until(lambda: not tasks, "an application still runs for an open socket", 5)
        await bruno.send(type="ready")
        while not (await ana.expect("table"))["table"]["players"][bruno.seat]["ready"]:
            pass  # (the table's updates of the connects came first)
    await until(lambda: not executor.links, "the closed sockets were not let go", 5)


class _Node:
    """A thing that can be part of a cycle."""

    me: object = None


@contextlib.contextmanager
def walks() -> Iterator[list[int]]:
    """The generation of each collection that starts inside the block."""
    walked: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            walked.append(info["generation"])

    gc.collect()
    gc.callbacks.append(note)
    try:
        yield walked
    finally:
        gc.callbacks.remove(note)
        gc.unfreeze()


def dead_cycle() -> weakref.ref[_Node]:
    """A cycle nothing refers to: only a collection frees it."""
    dead = _Node()
    dead.me = dead
    return weakref.ref(dead)


@pytest.mark.anyio
async def test_a_node_that_makes_no_cycles_walks_only_short_looks_and_freezes_the_rest() -> None:
    """Survivors of a second, as the views of every table in play: no collection walks them
    but a look's (a short slice: a pause of a few ms where a walk of every quarter second took
    10 at 6,000 players), and all are frozen out of every later walk; the collector does not
    run by itself, and is as it was once its job ends."""
    collector = serve.Collector(every_s=0.02, look_s=0.01, look_every=5)
    with walks() as walked:
        policy = asyncio.ensure_future(collector.run())
        await asyncio.sleep(0)  # the policy is set
        began = time.monotonic()
        kept = [[n] for n in range(200_000)]  # ten automatic collections' worth, at 20,000
        await asyncio.sleep(0.5)
        frozen = gc.get_freeze_count()
        stopped = time.monotonic()
        policy.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await policy
    assert gc.isenabled()
    assert collector.found == 0 and collector.walking == 0
    assert set(walked) == {0}, "an older generation was walked"
    looks = (stopped - began) / (0.01 + 5 * 0.02)
    assert 2 <= len(walked) <= looks + 2, "the young were walked by more than the looks"
    assert frozen >= len(kept)


@pytest.mark.anyio
async def test_a_node_that_makes_cycles_walks_every_slice_while_it_does_and_frees_them() -> None:
    """Cycles made steadily are found by a look; from then on every slice is walked before its
    freeze, so a cycle that dies is freed rather than frozen for good; once none has been found
    for ``walk_for`` slices, only the looks walk again."""
    collector = serve.Collector(every_s=0.02, look_s=0.02, look_every=5, walk_for=10)
    with walks() as walked:
        policy = asyncio.ensure_future(collector.run())
        try:
            for _ in range(2000):  # a cycle every ms or so, until a look finds them
                dead_cycle()
                if collector.walking:
                    break
                await asyncio.sleep(0.001)
            assert collector.walking, "no look found the cycles made"
            gone = dead_cycle()
            await until(lambda: gone() is None, "a cycle made while walking was not freed", 5)
            await until(lambda: not collector.walking, "the walks went on with no cycle", 5)
            count = len(walked)
            await asyncio.sleep(0.3)  # one look at most in that time, or two
            assert len(walked) - count <= 3
        finally:
            policy.cancel()
    assert collector.found >= 1
    assert set(walked) == {0}


def test_a_nodes_beats_lobby_list_and_checks_leave_no_cycle(tmp_path: Any) -> None:
    """Every second a node beats, reads who is alive and looks for orphaned tables; every
    half second, among several nodes, it publishes its lobby entries, and every few beats it
    checks what it owns: none of it may leave cycles (a statement built anew holds some, in
    its bound parameters), which only a collection frees and a freeze meanwhile keeps for
    good."""
    from flyswat.server.cluster import Cluster
    from flyswat.server.store import Store

    store = Store(f"sqlite:///{tmp_path / 'beat.db'}", node="a")
    try:
        cluster = Cluster(store.engine, "a", "http://127.0.0.1:1")
        assert cluster.adopt("LOBBY1")

        def round_of_the_cluster() -> None:
            cluster.beat()
            cluster.orphans(cluster.peers)
            cluster.shared.publish("a", {"LOBBY1": {"name": "Ana"}}, 1.0)
            assert [x.code for x in cluster.shared.listing()] == ["LOBBY1"]
            assert cluster.mine() == {"LOBBY1"} and cluster.mine_still("LOBBY1")
            cluster.shared.publish("a", {"LOBBY1": None}, 2.0)
            assert cluster.shared.listing() == []

        round_of_the_cluster()  # warm: the statements compiled and cached
        with cyclic_garbage() as garbage:
            for _ in range(5):
                round_of_the_cluster()
        kinds = sorted({f"{type(o).__module__}.{type(o).__qualname__}" for o in garbage
                        if type(o).__module__.startswith(("flyswat", "sqlalchemy"))})  # fmt: skip
        assert kinds == [], f"five rounds of the cluster left cycles of {kinds}"
    finally:
        store.close()
