"""The group commit in a process of its own (``--writer process``): the writer thread's
contract kept across a socket pair — told in order once stored, fenced tables told and never
stored, the child gone with its node — and a whole game served so, over a real server."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path

import httpx
import pytest

from flyswat.server.store import Store
from flyswat.server.writer_process import WriterProcess
from flyswat.table import events as ev
from harness.server import running_server

from .conftest import FAST, Player
from .test_writer import CREATED, Told


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.anyio
async def test_submissions_are_stored_by_the_child_and_told_in_order(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'apart.db'}", node="here")
    writer = WriterProcess(store, asyncio.get_running_loop())
    told = Told(3 * 40)
    for i in range(40):
        writer.submit(f"T{i:03d}", [CREATED], told.of((i, "created")))
        writer.submit(f"T{i:03d}", [ev.SaidDone(seat=0, turn=1)], told.of((i, "done")))
        writer.submit(f"T{i:03d}", [ev.SaidDone(seat=1, turn=1), ev.Over(game_id=f"G{i}")],
                      told.of((i, "over")))  # fmt: skip
    assert writer.queued == 120
    await asyncio.wait_for(told.all.wait(), 30)
    assert writer.queued == 0
    for i in range(40):  # each table's in the order it was submitted
        mine = [what for n, what in told.done if n == i]
        assert mine == ["created", "done", "over"]
    child = writer._child.pid
    writer.stop()
    assert child is not None and not _alive(child)
    assert len(store.codes()) == 40
    assert [e.kind for e in store.load("T007")] == ["create", "done", "done", "over"]
    store.close()


@pytest.mark.anyio
async def test_a_ctrl_c_that_reaches_the_child_too_leaves_the_stop_to_its_node(
    tmp_path: Path,
) -> None:
    """A Ctrl-C interrupts the terminal's whole process group: the child lives on, and
    stores what its node still hands it when the node stops (it died of the interrupt
    before, and its node stopped as if its store were lost)."""
    store = Store(f"sqlite:///{tmp_path / 'ctrl-c.db'}", node="here")
    writer = WriterProcess(store, asyncio.get_running_loop())
    told = Told(1)
    writer.submit("T000", [CREATED], told.of("first"))
    await asyncio.wait_for(told.all.wait(), 30)  # the child is up, its handlers set
    child = writer._child.pid
    assert child is not None
    os.kill(child, signal.SIGINT)
    await asyncio.sleep(0.3)
    assert _alive(child), "the child died of the interrupt"
    writer.submit("T001", [CREATED], lambda: None)
    writer.stop()
    assert not _alive(child) and writer._child.exitcode == 0
    assert [code for code, _ in store.codes()] == ["T000", "T001"]
    store.close()


@pytest.mark.anyio
async def test_a_table_another_node_owns_is_fenced_and_never_stored(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fence.db'}"
    theirs = Store(url, node="there")
    theirs.write_batch([("THEIRS", [CREATED])])
    store = Store(url, node="here")
    fenced: list[set[str]] = []
    writer = WriterProcess(store, asyncio.get_running_loop(), fenced=fenced.append)
    told = Told(1)
    writer.submit("THEIRS", [ev.SaidDone(seat=0, turn=1)], told.of("theirs"))
    writer.submit("MINE", [CREATED], told.of("mine"))
    await asyncio.wait_for(told.all.wait(), 30)
    deadline = time.monotonic() + 10
    while not fenced and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    writer.stop()
    assert fenced == [{"THEIRS"}] and told.done == ["mine"]
    assert writer.queued == 0
    assert [e.kind for e in store.load("THEIRS")] == ["create"]
    store.close()
    theirs.close()


@pytest.mark.anyio
async def test_submissions_are_handed_over_at_the_commits_pace_not_once_a_turn(
    tmp_path: Path,
) -> None:
    store = Store(f"sqlite:///{tmp_path / 'paced.db'}", node="here")
    writer = WriterProcess(store, asyncio.get_running_loop(), every_ms=200.0)
    frames: list[int] = []
    send = writer._send_batch

    def counted() -> None:
        frames.append(len(writer._batch))
        send()

    writer._send_batch = counted  # type: ignore[method-assign]
    told = Told(1 + 2 * 60)
    writer.submit("LONE", [CREATED], told.of("lone"))  # idle: handed over at once
    await asyncio.wait_for(told.all_of(1), 10)
    for i in range(60):  # a submission a turn of the loop, for far less than 200 ms
        writer.submit(f"T{i:03d}", [CREATED], told.of(i))
        writer.submit(f"T{i:03d}", [ev.SaidDone(seat=0, turn=1)], told.of(i))
        await asyncio.sleep(0)
    await asyncio.wait_for(told.all.wait(), 30)
    writer.stop()
    assert frames[0] == 1 and sum(frames) == 121
    assert len(frames) <= 3, f"a batch a turn: {frames}"
    assert len(store.codes()) == 61
    store.close()


@pytest.mark.anyio
async def test_a_batch_longer_than_one_read_reaches_the_child_whole(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'long.db'}", node="here")
    writer = WriterProcess(store, asyncio.get_running_loop())
    tables, each = 40, 250  # one turn's batch of about 400 KB: more than a read takes
    told = Told(tables * each)
    for i in range(tables):
        writer.submit(f"T{i:03d}", [CREATED], told.of((i, 0)))
        for turn in range(1, each):
            writer.submit(f"T{i:03d}", [ev.SaidDone(seat=0, turn=turn)], told.of((i, turn)))
    await asyncio.wait_for(told.all.wait(), 60)
    writer.stop()
    for i in (0, 17, 39):  # each table's in the order it was submitted
        assert [turn for n, turn in told.done if n == i] == list(range(each))
    assert [e.turn for e in store.load("T017")[1:]] == list(range(1, each))  # type: ignore[attr-defined]
    store.close()


@pytest.mark.anyio
async def test_a_node_that_dies_leaves_nothing_to_be_stored_behind_its_restart(
    tmp_path: Path,
) -> None:
    store = Store(f"sqlite:///{tmp_path / 'died.db'}", node="here")
    writer = WriterProcess(store, asyncio.get_running_loop())
    writer.submit("T000", [CREATED], lambda: None)
    writer._send_batch()  # handed over, never told; then the node's end closes without a word,
    writer._stopping = True  # as the kernel closes a killed node's (the child still starting)
    writer.loop.remove_reader(writer._sock.fileno())
    writer._sock.close()
    writer._child.join(30)
    assert writer._child.exitcode == 0
    assert store.codes() == [], "the child stored what its dead node had told nobody"
    store.close()


def _children(pid: int) -> list[int]:
    """The processes ``pid`` spawned to run code of its own (not multiprocessing's tracker)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) != pid:
                continue
            with contextlib.suppress(OSError):
                if b"spawn_main" in (entry / "cmdline").read_bytes():
                    out.append(int(entry.name))
    return out


@pytest.mark.anyio
async def test_a_game_served_with_the_writer_apart_is_stored_and_its_child_dies_with_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "served.db"
    apart = ["--writer", "process", "--bot-pace", "0.02"]
    with running_server(db, args=apart) as (http, port, pid):
        deadline = time.monotonic() + 20
        while not (children := _children(pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(children) == 1  # the writer
        seated = httpx.post(f"{http}/api/tables", timeout=10, json={
            "name": "Ana", "seats": 2, "bots": [{"seat": 1, "level": "easy"}], "remove": 100,
            **FAST,
        }).json()  # fmt: skip
        async with Player.connect(f"ws://127.0.0.1:{port}", seated["code"], seated["token"]) as ana:
            await ana.send(type="start")
            ana.received.append(await ana.expect("started", timeout=20))
            over = await ana.play(timeout=120)
        assert over["type"] == "over"
        record = httpx.get(f"{http}/api/tables/{seated['code']}/record", timeout=10)
        assert record.status_code == 200
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 20
        while _alive(children[0]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(children[0]), "the writer outlived its node"
    store = Store(f"sqlite:///{db}")
    assert store.load(seated["code"])[-1].kind == "over"
    store.close()


def _running(pid: int) -> bool:
    """``pid`` exists and has not exited (a zombie, not yet reaped by its parent, has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def test_a_node_whose_writer_dies_stops_rather_than_play_on_unrecorded(tmp_path: Path) -> None:
    db = tmp_path / "orphan.db"
    with running_server(db, args=["--writer", "process"]) as (http, _, pid):
        deadline = time.monotonic() + 20
        while not (children := _children(pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert httpx.post(f"{http}/api/tables", json={"name": "Ana", "seats": 2},
                          timeout=10).status_code == 201  # fmt: skip
        os.kill(children[0], signal.SIGKILL)
        deadline = time.monotonic() + 20
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _running(pid), "the node played on without its writer"
    assert "writer process has died" in db.with_suffix(".log").read_text()
