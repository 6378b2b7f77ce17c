"""Group commit: many tables' events in one transaction, off the event loop, and nothing told
before its batch is on disk — the runner's rule, with the writer thread held back at will."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import pytest

from flyswat import protocol as p
from flyswat.server.runner import Runner
from flyswat.server.store import Store
from flyswat.server.writer import CATCH_UP_PASSES, ENDS_PER_COMMIT, Writer, catch_up
from flyswat.table import events as ev
from flyswat.table.events import Event
from flyswat.table.io import Message, Sources


class HeldStore(Store):
    """A real SQLite store whose commits wait while ``hold`` is clear, and each take at
    least ``slow_s``."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.hold = threading.Event()
        self.hold.set()
        self.held = threading.Event()  # set once a commit waits on ``hold``
        self.batches: list[int] = []
        self.slow_s = 0.0

    def write_batch(self, batch: Sequence[tuple[str, Sequence[Event]]], conn: Any = None) -> None:
        if not self.hold.is_set():
            self.held.set()
        self.hold.wait(10)
        time.sleep(self.slow_s)
        super().write_batch(batch, conn)
        self.batches.append(len(batch))


class Recorder:
    """A connection's link as the runner sees it: what was sent, and whether the event log
    held the table's events at that moment."""

    def __init__(self, store: Store, code: str) -> None:
        self.store, self.code = store, code
        self.sent: list[dict[str, Any]] = []
        self.stored_then: list[int] = []

    def bind(self, conn: int) -> Recorder:
        self.id = conn
        return self

    def send(self, frame: bytes, mark: int | None = None) -> None:
        n = frame[1]  # a text frame of the server: unmasked, short here
        payload = frame[4:] if n == 126 else frame[2:]
        self.sent.append(json.loads(payload))
        self.stored_then.append(len(self.store.events(self.code)))

    def close(self, code: int, reason: str) -> None:
        pass


@pytest.fixture
def store(tmp_path: Any) -> Any:
    held = HeldStore(f"sqlite:///{tmp_path / 'held.db'}")
    yield held
    held.hold.set()
    held.close()


class Told:
    """What a writer reported stored, in order; :attr:`all` is set once ``expected`` are."""

    def __init__(self, expected: int) -> None:
        self.done: list[Any] = []
        self.expected = expected
        self.all = asyncio.Event()
        self._reached: list[tuple[int, asyncio.Event]] = []

    def of(self, what: Any) -> Callable[[], None]:
        def told() -> None:
            self.done.append(what)
            for n, reached in self._reached:
                if len(self.done) >= n:
                    reached.set()
            if len(self.done) == self.expected:
                self.all.set()

        return told

    async def all_of(self, n: int) -> None:
        """Return once ``n`` are told."""
        reached = asyncio.Event()
        self._reached.append((n, reached))
        if len(self.done) >= n:
            return
        await reached.wait()


CREATED = ev.Created(options=p.TableOptions(seats=2), host=0, created_at="2026-12-01T00:00:00Z")


@pytest.mark.anyio
async def test_many_submissions_are_committed_together_and_reported_in_order(
    store: HeldStore,
) -> None:
    writer = Writer(store, asyncio.get_running_loop())
    told = Told(50)
    store.hold.clear()
    for i in range(50):
        writer.submit(f"T{i:05d}", [CREATED], told.of(i))
    await asyncio.sleep(0.05)
    assert told.done == []  # nothing is reported before its commit
    store.hold.set()
    await asyncio.wait_for(told.all.wait(), 10)
    writer.stop()
    assert told.done == list(range(50))
    assert len(store.batches) <= 2  # the first lone one, then the 49 that queued meanwhile
    assert writer.stats.events == 50
    assert len(store.codes()) == 50


@pytest.mark.anyio
async def test_games_ending_together_wait_behind_the_other_tables_a_few_a_commit(
    store: HeldStore,
) -> None:
    writer = Writer(store, asyncio.get_running_loop())
    ends = [f"E{i}" for i in range(10)]
    told = Told(1 + len(ends) + 2)
    for code in ["L0", *ends]:
        store.write_batch([(code, [CREATED])])
    store.hold.clear()
    writer.submit("L0", [ev.SaidDone(seat=0, turn=1)], told.of("first"))
    assert await asyncio.to_thread(store.held.wait, 10)  # the writer holds it alone
    for code in ends:
        writer.submit(code, [ev.SaidDone(seat=0, turn=9), ev.Over(game_id=code)], told.of(code))
    writer.submit("E0", [ev.RematchSet(seat=0)], told.of("E0 after its end"))
    writer.submit("L0", [ev.SaidDone(seat=1, turn=1)], told.of("L0 again"))
    store.batches.clear()
    store.hold.set()
    await asyncio.wait_for(told.all.wait(), 10)
    writer.stop()
    # The other table's submission first, then the games' ends a few at a time, a table's
    # later submission behind its end.
    assert told.done == ["first", "L0 again", *ends, "E0 after its end"]
    lane = store.batches[2:]
    assert store.batches[:2] == [1, 1] and sum(lane) == len(ends) + 1
    assert len(lane) >= len(ends) / ENDS_PER_COMMIT and max(lane) <= ENDS_PER_COMMIT + 1
    assert [e.kind for e in store.load("E0")][-3:] == ["done", "over", "rematch"]


@pytest.mark.anyio
async def test_a_bursts_games_ends_are_not_paced_by_the_commit_interval(store: HeldStore) -> None:
    """While other tables' submissions keep coming (one during every commit), the writer
    commits them at most once an interval, and the games' ends waiting in their lane one
    after another between those commits: five ends take one interval, not five
    (docs/BENCHMARKS.md, *The compiled build's heap, and fewer commits*)."""
    loop = asyncio.get_running_loop()
    writer = Writer(store, loop, every_ms=1000)
    ends = [f"E{i}" for i in range(5)]
    for code in ["L0", *ends]:
        store.write_batch([(code, [CREATED])])
    store.slow_s = 0.05  # a submission of the others comes during every commit
    told_at: dict[str, float] = {}
    store.hold.clear()
    writer.submit("L0", [ev.SaidDone(seat=0, turn=1)], lambda: None)  # committed at once, held
    assert await asyncio.to_thread(store.held.wait, 10)
    for code in ends:
        over = [ev.SaidDone(seat=0, turn=9), ev.Over(game_id=code)]
        writer.submit(code, over, lambda code=code: told_at.setdefault(code, loop.time()))
    store.hold.set()
    turn = 0
    while len(told_at) < len(ends) and turn < 400:  # the other tables go on meanwhile
        turn += 1
        writer.submit("L0", [ev.SaidDone(seat=1, turn=turn)], lambda: None)
        await asyncio.sleep(0.02)
    writer.stop()
    assert sorted(told_at) == ends
    assert max(told_at.values()) - min(told_at.values()) < 1.0  # paced: 4 intervals at least
    assert [e.kind for e in store.load("E4")][-2:] == ["done", "over"]


@pytest.mark.anyio
async def test_what_a_commit_told_is_sent_right_after_its_report(store: HeldStore) -> None:
    """After each commit's ``done`` callbacks the writer runs its ``told`` hook, in the same
    callback on the loop (the runner writes the sockets there, not a turn later)."""
    seen: list[str] = []
    writer = Writer(store, asyncio.get_running_loop(), told=lambda: seen.append("told"))
    told = Told(3)
    store.hold.clear()
    writer.submit("T1", [CREATED], lambda: (seen.append("T1"), told.of(1)()))
    assert await asyncio.to_thread(store.held.wait, 10)
    for code in ("T2", "T3"):
        writer.submit(code, [CREATED], lambda code=code: (seen.append(code), told.of(code)()))
    store.hold.set()
    await asyncio.wait_for(told.all.wait(), 10)
    writer.stop()
    assert seen == ["T1", "told", "T2", "T3", "told"]  # once a commit, after its callbacks


@pytest.mark.anyio
async def test_a_message_goes_out_only_once_its_event_is_stored(store: HeldStore) -> None:
    runner = Runner(store, sources=Sources.fixed)
    runner.start()
    try:
        create = p.CreateTable(name="Ana", seats=2)
        table, _, token = await runner.directory.create(create)
        rec = Recorder(store, table.code)
        link: Any = runner.executor.link(table, lambda conn, _: rec.bind(conn))  # type: ignore[arg-type,return-value]
        runner.executor.run(table, Message(link.id, p.Hello(token=token)))
        assert [m["type"] for m in rec.sent] == ["welcome", "table"]  # nothing to store
        store.hold.clear()
        runner.executor.run(table, Message(link.id, p.Ready(ready=True)))
        # The table moved on at once; its players hear of it only after the commit.
        assert table.seats[0].ready
        await asyncio.sleep(0.05)
        assert len(rec.sent) == 2
        before = len(store.events(table.code))
        store.hold.set()
        await runner.executor.stored(table)
        assert rec.sent[2]["type"] == "table" and rec.sent[2]["table"]["players"][0]["ready"]
        assert rec.stored_then[2] == before + 1  # told after its commit
    finally:
        runner.close()


@pytest.mark.anyio
async def test_a_refusal_waits_behind_an_outcome_still_being_stored(store: HeldStore) -> None:
    runner = Runner(store, sources=Sources.fixed)
    runner.start()
    try:
        table, _, token = await runner.directory.create(p.CreateTable(name="Ana", seats=2))
        rec = Recorder(store, table.code)
        link: Any = runner.executor.link(table, lambda conn, _: rec.bind(conn))  # type: ignore[arg-type,return-value]
        runner.executor.run(table, Message(link.id, p.Hello(token=token)))
        store.hold.clear()
        runner.executor.run(table, Message(link.id, p.Ready(ready=True)))
        runner.executor.run(table, Message(link.id, p.Reveal()))  # refused: no game
        await asyncio.sleep(0.05)
        assert [m["type"] for m in rec.sent] == ["welcome", "table"]
        store.hold.set()
        await runner.executor.stored(table)
        assert [m["type"] for m in rec.sent][2:] == ["table", "error"]  # in the order they came
    finally:
        runner.close()


@pytest.mark.anyio
async def test_the_logs_file_is_cut_back_when_it_starts_over_after_a_burst(
    store: HeldStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """SQLite's write-ahead log grows through a burst of commits; once copied back and
    started over, its file is cut back to ``WAL_LIMIT_BYTES`` rather than kept at the
    burst's size for good (a node runs for weeks on its disk)."""
    from flyswat.server import writer as writer_module

    limit = 128 * 1024
    monkeypatch.setattr(writer_module, "WAL_LIMIT_BYTES", limit)
    monkeypatch.setattr(writer_module, "CHECKPOINT_EVERY_S", 0.05)
    wal = tmp_path / "held.db-wal"
    writer = Writer(store, asyncio.get_running_loop())
    options = p.TableOptions(seats=2)
    created = ev.Created(options=options, host=0, created_at="2026-12-01T00:00:00Z")

    async def burst(tag: str, n: int) -> None:
        left = asyncio.Event()
        done: list[int] = []

        def report() -> None:
            done.append(1)
            if len(done) == n:
                left.set()

        for i in range(n):
            writer.submit(f"{tag}{i:05d}", [created], report)
        await asyncio.wait_for(left.wait(), 30)

    store.hold.clear()  # one burst, held: the log grows far past the limit
    waiting = asyncio.create_task(burst("B", 4000))
    await asyncio.sleep(0.05)
    store.hold.set()
    await waiting
    grown = wal.stat().st_size
    assert grown > 4 * limit
    for i in range(100):  # a trickle after it: the log is copied back and starts over
        await asyncio.sleep(0.06)
        await burst(f"T{i:02d}", 1)
        if wal.stat().st_size <= limit:
            break
    writer.stop()
    assert wal.stat().st_size <= limit


class Passes:
    """A connection whose checkpoints answer as scripted, ``(busy, frames in the log, frames
    copied back)`` each, counting them: commits landing while each pass copies."""

    def __init__(self, answers: list[tuple[int, int, int]]) -> None:
        self.answers, self.ran = answers, 0

    def exec_driver_sql(self, sql: str) -> Any:
        assert sql == "PRAGMA wal_checkpoint(PASSIVE)"  # never one that waits for anyone
        self.ran += 1
        answer = self.answers[self.ran - 1]
        return SimpleNamespace(one=lambda: answer)


@pytest.mark.parametrize(
    "answers, ran, last",
    [
        # commits landed during the first two passes; the third found nothing new
        ([(0, 9000, 9000), (0, 9012, 9012), (0, 9013, 9013), (0, 9013, 9013)], 4, (9013, 9013)),
        # the log started over between two passes (the writer saw it all copied back)
        ([(0, 9000, 9000), (0, 4, 4)], 2, (4, 4)),
        # a reader holds frames back: stop, the next second's passes copy them
        ([(0, 9000, 6400)], 1, (9000, 6400)),
        # another checkpoint holds the lock
        ([(1, -1, -1)], 1, (-1, -1)),
        # commits keep landing: at most CATCH_UP_PASSES passes
        ([(0, 100 + i, 100 + i) for i in range(20)], CATCH_UP_PASSES, (107, 107)),
    ],
)  # fmt: skip
def test_passes_follow_the_commits_that_land_while_the_log_is_copied_back(
    answers: list[tuple[int, int, int]], ran: int, last: tuple[int, int]
) -> None:
    """The writer starts SQLite's log over only at a transaction that begins with every frame
    copied back, and under load commits land while a checkpoint copies: ``catch_up`` copies
    them by another pass, until one finds nothing new."""
    conn = Passes(answers)
    assert catch_up(conn) == last  # type: ignore[arg-type]
    assert conn.ran == ran


def write_one(store: Store, conn: Any, code: str) -> None:
    """One table's creation, committed on ``conn`` by the store's own write path."""
    created = ev.Created(options=p.TableOptions(seats=2), host=0,
                         created_at="2026-12-01T00:00:00Z")  # fmt: skip
    store.write_batch([(code, [created])], conn)


def frames_in_log(conn: Any) -> int:
    """The frames in the write-ahead log now (a passive checkpoint's count)."""
    return int(conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)").one()[1])


def test_the_log_is_not_copied_past_a_reader_and_nobody_waits(tmp_path: Any) -> None:
    """A reader in the middle of a transaction holds its frames back: the passes stop at
    once (passive: nobody waits), and go on once it has read; then the next commit writes
    the log from its start (on SQLite itself)."""
    store = Store(f"sqlite:///{tmp_path}/wal.db")
    with store.engine.connect() as writer, store.engine.connect() as reader, \
            store.engine.connect() as checkpoints:  # fmt: skip
        write_one(store, writer, "A0000")
        reader.exec_driver_sql("BEGIN")  # a read transaction: its snapshot is held
        reader.exec_driver_sql("SELECT count(*) FROM flyswat_events").all()
        for i in range(20):
            write_one(store, writer, f"B{i:04d}")
        log, done = catch_up(checkpoints)
        assert done < log  # the reader's snapshot holds the frames written after it
        reader.rollback()
        log, done = catch_up(checkpoints)
        assert done == log
        write_one(store, writer, "NEXT0")
        assert frames_in_log(checkpoints) < 10
    store.close()
