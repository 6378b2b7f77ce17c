"""Group commit: the store's writes on a thread of their own, many tables' events at a time.

The event loop never waits for the database. :meth:`Writer.submit` hands one command's events
to the writer thread and returns at once; the thread takes everything submitted since its
last commit and writes it in one transaction (:meth:`flyswat.server.store.Store.write_batch`),
so under load one commit carries the events of many tables, and when the loop is quiet a
lone event is written as soon as it comes. After the commit, each submission's ``done`` runs
on the event loop, a table's in the order of their submission: that is where the runner
tells players what the events did — nothing is told before it is stored.

A game's end (its ``over``: the record, every player's row and rating, a ms or more of the
thread's time where a round's events take tens of µs) waits in a lane of its own: each turn
commits what else came first, then :data:`ENDS_PER_COMMIT` game's end, so that when
many tables' games end at once no table's round waits behind their bookkeeping. A table's
later submissions follow its end in that lane (its order is kept).

A failed commit is retried (with a growing pause, and logged) until it succeeds or the writer
is stopped: what was submitted is neither lost nor told early while the process lives.
:meth:`Writer.stop` writes what is still queued, then ends the thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sqlalchemy.engine import Connection

from flyswat.server.store import Store, poll_for_lock
from flyswat.table.events import Event, Over

log = logging.getLogger("flyswat.server")

#: The longest pause between two tries of a failed commit, in seconds.
MAX_RETRY_S = 2.0
#: At most one commit this often (ms): what comes meanwhile waits for the next one. Each
#: commit has a fixed cost (a transaction, a write to the log, the writer's thread woken and
#: given the interpreter's lock by the busy loop, the loop woken for its report, a write of
#: every socket told); waiting shares it among many events. 10 ms against 3: 0.86 of the
#: node's CPU at 2,000 players, each result 4 ms later at the median (docs/BENCHMARKS.md,
#: *The compiled build's heap, and fewer commits*); games' ends are not held to it
#: (:meth:`Writer._run`).
COMMIT_EVERY_MS = 10.0

#: Games' ends a commit at most (:data:`_ends_game`): in a burst of them (every table of a
#: node ending within a second: docs/BENCHMARKS.md, *The 10-minute window*), the rest of a
#: turn's submissions are committed first, and these one at a time after them. One end is a
#: dozen statements, each a wait of up to the interpreter's switch interval (5 ms) for the
#: writer's thread while the loop is busy: the rest of the next turn waits for no more.
ENDS_PER_COMMIT = 1

#: SQLite: how often the write-ahead log is copied back into the database (s).
CHECKPOINT_EVERY_S = 1.0
#: SQLite: each second, passive checkpoints one after another, up to this many, until one finds
#: nothing new to copy, so that the log starts over (:func:`catch_up`). Every second rather
#: than once the log is long: each start costs a commit a sync of the log's head, dearer in
#: steady play at the held load, but over the 10-minute window at 3/4 of it, with its bursts of
#: games' ends, results came sooner and for less CPU (docs/BENCHMARKS.md, *The writer's long
#: commits* and *The log's catch-up, every second after all*).
CATCH_UP_PASSES = 8
#: SQLite: the write-ahead log's file is cut back to this size when the log starts over
#: (bytes). It starts over once every frame is copied back and no one is reading from it
#: (:func:`catch_up` sees to that each second); a burst between two such moments (a restart's
#: tables rebuilt, a reader holding frames back) leaves it as long as the burst made it, for
#: good without this limit (1 GB after 11 minutes of a 3,000-player soak before the catch-up).
WAL_LIMIT_BYTES = 64 * 1024 * 1024


#: One command's events of a table, and what runs on the loop once they are stored.
Submission = tuple[str, Sequence[Event], Callable[[], None]]


def _ends_game(events: Sequence[Event]) -> bool:
    return any(isinstance(e, Over) for e in events)


class _Ends:
    """The lane of games' ends: submissions waiting their turn, in order, each with whether
    it ends a game, and how many of each table's are in it (a table's later submissions join
    it behind its end)."""

    def __init__(self) -> None:
        self.waiting: deque[tuple[Submission, bool]] = deque()
        self.tables: Counter[str] = Counter()

    def sort(self, batch: list[Submission]) -> list[Submission]:
        """Put ``batch``'s games' ends (and whatever follows one of a table) in the lane;
        the rest, to commit now."""
        now = []
        for item in batch:
            ends = _ends_game(item[1])
            if ends or item[0] in self.tables:
                self.waiting.append((item, ends))
                self.tables[item[0]] += 1
            else:
                now.append(item)
        return now

    def take(self, ends: int) -> list[Submission]:
        """The lane's first submissions, up to ``ends`` games' ends among them."""
        out: list[Submission] = []
        while self.waiting and ends > 0:
            item, end = self.waiting.popleft()
            ends -= end
            self.tables[item[0]] -= 1
            if not self.tables[item[0]]:
                del self.tables[item[0]]
            out.append(item)
        return out


@dataclass
class WriterStats:
    """What the writer did: commits, events, and the time each commit took (ms)."""

    commits: int = 0
    events: int = 0
    failures: int = 0
    commit_ms: list[float] = field(default_factory=list)
    batch_sizes: list[int] = field(default_factory=list)
    keep: int = 10_000  # the latest samples kept

    def add(self, ms: float, events: int) -> None:
        self.commits += 1
        self.events += events
        self.commit_ms.append(ms)
        self.batch_sizes.append(events)
        if len(self.commit_ms) > 2 * self.keep:
            del self.commit_ms[: self.keep]
            del self.batch_sizes[: self.keep]


class Writer:
    """The writer thread of one store, reporting commits to one event loop."""

    def __init__(
        self,
        store: Store,
        loop: asyncio.AbstractEventLoop | None,
        every_ms: float = COMMIT_EVERY_MS,
        fenced: Callable[[set[str]], None] | None = None,
        observe: Callable[[float], None] | None = None,
        told: Callable[[], None] | None = None,
    ) -> None:
        self.store = store
        self.loop = loop  # None: a subclass reports its commits itself (:meth:`_report`)
        #: Told (on the loop) of tables whose events the store refused: this node no
        #: longer owns them (:meth:`Store.write_batch`); their ``done`` never runs.
        self.fenced = fenced
        self.observe = observe  # each commit's time, in s (the metrics)
        #: Runs on the loop after each commit's ``done`` callbacks: what they told goes out.
        self.told = told
        self.every_s = every_ms / 1000
        self.stats = WriterStats()
        #: Submissions, and one ``None`` that asks the thread to stop (a C queue: a put
        #: neither takes a lock in Python nor wakes a thread that is busy committing).
        self._queue: queue.SimpleQueue[Submission | None] = queue.SimpleQueue()
        self._stopping = False
        self._checkpoints = threading.Thread(
            target=self._checkpoint, name="flyswat-checkpoint", daemon=True
        )
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="flyswat-writer", daemon=True)
        self._thread.start()

    def submit(self, code: str, events: Sequence[Event], done: Callable[[], None]) -> None:
        """Store ``events`` of table ``code``; ``done()`` runs on the loop once they are."""
        if self._stopping:
            raise RuntimeError("the store's writer has stopped")
        self._queue.put((code, events, done))

    @property
    def queued(self) -> int:
        """Submissions not yet taken for a commit."""
        return self._queue.qsize()

    def stop(self, timeout: float = 10.0) -> None:
        """Write what is queued, then end the thread (its ``done`` callbacks are not run:
        the loop is shutting down)."""
        if not self._stopping:
            self._stopping = True
            self._queue.put(None)
        self._thread.join(timeout)
        self._stopped.set()
        if self._checkpoints.is_alive():
            self._checkpoints.join(timeout)

    def _checkpoint(self) -> None:
        """SQLite: copy the write-ahead log back into the database every
        :data:`CHECKPOINT_EVERY_S`, beside the writer (a passive checkpoint waits for nobody
        and holds no commit), so that the log neither grows nor is copied inside a commit."""
        while not self._stopped.wait(CHECKPOINT_EVERY_S):
            try:
                with self.store.engine.connect() as conn:
                    catch_up(conn)
            except Exception:
                log.exception("a checkpoint of the store failed; trying again")

    def _run(self) -> None:
        last = 0.0
        stopping = False
        with self.store.engine.connect() as conn:  # the writer's own, for good
            if self.store.node is not None:  # its transactions begin with the write lock
                poll_for_lock(conn)
            if conn.dialect.name == "sqlite":  # its commits never copy the log back
                conn.exec_driver_sql("PRAGMA wal_autocheckpoint=0")
                conn.exec_driver_sql(f"PRAGMA journal_size_limit={WAL_LIMIT_BYTES}")
                conn.commit()
                self._checkpoints.start()
            ends = _Ends()
            while not stopping or ends.waiting:
                if ends.waiting and not stopping and time.perf_counter() < last + self.every_s:
                    # The next commit of the rest is not due yet: a game's end meanwhile (a
                    # burst's ends go at the pace of their own commits, not of the interval).
                    self._commit(conn, ends.take(ENDS_PER_COMMIT), stopping)
                    continue
                batch: list[Submission] = []
                if not stopping:
                    stopping = self._gather(batch, last, wait=not ends.waiting)
                now = ends.sort(batch)
                if now:
                    last = time.perf_counter()
                    self._commit(conn, now, stopping)
                if ends.waiting:
                    self._commit(conn, ends.take(ENDS_PER_COMMIT), stopping)

    def _gather(self, batch: list[Submission], last: float, wait: bool) -> bool:
        """Take into ``batch`` what was submitted since the last commit (``last``): if
        ``wait``, once the next commit is due, waiting (in C) for a first one if none came;
        else at once, waiting for the next commit time only if one came. True when the
        writer was asked to stop.

        Under load the thread sleeps until the commit is due and finds its batch there: one
        wake-up a commit, where waiting for the first submission and then for the commit
        time took two, each a take of the interpreter's lock from the busy loop."""
        if wait:
            self._until_due(last)  # gather what comes, up to the next commit time
        try:
            first = self._queue.get_nowait()
        except queue.Empty:
            if not wait:
                return False
            first = self._queue.get()  # idle: the first to come is committed at once
        else:
            if not wait and first is not None:
                self._until_due(last)
        item = first
        while True:
            if item is None:
                return True
            batch.append(item)
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return False

    def _until_due(self, last: float) -> None:
        """Sleep until the commit after the one at ``last`` is due."""
        pause = last + self.every_s - time.perf_counter()
        if pause > 0:
            time.sleep(pause)

    def _commit(
        self,
        conn: Connection,
        batch: list[Submission],
        stopping: bool,
    ) -> None:
        pause = 0.01
        while True:
            started = time.perf_counter()
            try:
                batches = [(code, events) for code, events, _ in batch]
                fenced = self.store.write_batch(batches, conn) or set()
            except Exception:
                self.stats.failures += 1
                log.exception("storing %d submissions failed; trying again", len(batch))
                if stopping and self.stats.failures > 3:
                    return  # shutting down with a store that will not take them
                time.sleep(pause)
                pause = min(MAX_RETRY_S, pause * 2)
                continue
            break
        took = time.perf_counter() - started
        self.stats.add(took * 1000, sum(len(e) for _, e, _ in batch))
        if self.observe is not None:
            self.observe(took)
        if stopping:
            return
        self._report(fenced, [done for code, _, done in batch if code not in fenced])

    def _report(self, fenced: set[str], dones: list[Callable[[], None]]) -> None:
        """Tell the loop what a commit did: the ``fenced`` tables' events were refused, and
        ``dones`` (the stored submissions', in order) run there."""
        assert self.loop is not None
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody is left to tell
            if fenced and self.fenced is not None:
                self.loop.call_soon_threadsafe(self.fenced, fenced)
            self.loop.call_soon_threadsafe(run_all, dones, self.told)


def catch_up(conn: Connection, passes: int = CATCH_UP_PASSES) -> tuple[int, int]:
    """Copy SQLite's write-ahead log back into the database, with no wait for anyone: passive
    checkpoints, each at once after the last, until one finds no frame it did not see before
    (or a reader holds frames back, or ``passes`` ran). Returns the last pass's frames in the
    log and copied back.

    The writer starts the log over (writes from its beginning, and cuts its file back to
    :data:`WAL_LIMIT_BYTES`) only at a transaction that begins with every frame copied back.
    One pass copies the frames it finds at its start, and under load commits land while it
    copies (a second's frames take tens of ms; a commit comes every few): the log then almost
    never starts over — about once a minute at 3,000 players, by then hundreds of MB, whose
    file the commit that starts it over cut back for 20–80 ms (docs/BENCHMARKS.md). The next
    pass copies only those few frames, in far less time than a commit's interval."""
    seen = -1
    log = done = 0
    for _ in range(passes):
        row = conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)").one()
        busy, log, done = int(row[0]), int(row[1]), int(row[2])
        if busy or done < log or log <= seen:
            break  # held back by a reader; or nothing new
        seen = log
    return log, done


def run_all(dones: Sequence[Callable[[], None]], told: Callable[[], None] | None = None) -> None:
    """Run each stored submission's ``done``, in order; one's failure is logged and the
    others still run. Then ``told()``, once."""
    for done in dones:
        try:
            done()
        except Exception:  # one table's failure must not keep the others untold
            log.exception("telling a stored outcome failed")
    if told is not None:
        told()
