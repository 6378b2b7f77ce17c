"""Group commit: the store's writes on a thread of their own, many tables' events at a time.

The event loop never waits for the database. :meth:`Writer.submit` hands one command's events
to the writer thread and returns at once; the thread takes everything submitted since its
last commit and writes it in one transaction (:meth:`flyswat.server.store.Store.write_batch`),
so under load one commit carries the events of many tables, and when the loop is quiet a
lone event is written as soon as it comes. After the commit, each submission's ``done`` runs
on the event loop, in the order of submission: that is where the runner tells players what
the events did — nothing is told before it is stored.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sqlalchemy.engine import Connection

from flyswat.server.store import Store, poll_for_lock
from flyswat.table.events import Event

log = logging.getLogger("flyswat.server")

#: The longest pause between two tries of a failed commit, in seconds.
MAX_RETRY_S = 2.0
#: At most one commit this often (ms): what comes meanwhile waits for the next one. Each
#: commit has a fixed cost (a transaction, a write to the log); a few ms of waiting shares it
#: among many events (docs/BENCHMARKS.md, The store).
COMMIT_EVERY_MS = 3.0

#: SQLite: how often the write-ahead log is copied back into the database (s).
CHECKPOINT_EVERY_S = 1.0
#: SQLite: the write-ahead log's file is cut back to this size when the log starts over
#: (bytes). It starts over once every frame is copied back and no one is reading from it:
#: under a steady load, every minute or so; a burst between two such moments (a restart's
#: tables rebuilt, thousands of games ending) leaves it as long as the burst made it, for
#: good without this limit (1 GB after 11 minutes of a 3,000-player soak).
WAL_LIMIT_BYTES = 64 * 1024 * 1024


_Submission = tuple[str, Sequence[Event], Callable[[], None]]


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
        loop: asyncio.AbstractEventLoop,
        every_ms: float = COMMIT_EVERY_MS,
        fenced: Callable[[set[str]], None] | None = None,
        observe: Callable[[float], None] | None = None,
    ) -> None:
        self.store = store
        self.loop = loop
        #: Told (on the loop) of tables whose events the store refused: this node no
        #: longer owns them (:meth:`Store.write_batch`); their ``done`` never runs.
        self.fenced = fenced
        self.observe = observe  # each commit's time, in s (the metrics)
        self.every_s = every_ms / 1000
        self.stats = WriterStats()
        #: Submissions, and one ``None`` that asks the thread to stop (a C queue: a put
        #: neither takes a lock in Python nor wakes a thread that is busy committing).
        self._queue: queue.SimpleQueue[_Submission | None] = queue.SimpleQueue()
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
                    conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")
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
            while not stopping:
                first = self._queue.get()  # waits, in C, for something to store
                pause = last + self.every_s - time.perf_counter()
                if pause > 0 and first is not None:
                    time.sleep(pause)  # gather what else comes, up to the next commit time
                batch: list[_Submission] = []
                item = first
                while True:
                    if item is None:
                        stopping = True
                    else:
                        batch.append(item)
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                if batch:
                    last = time.perf_counter()
                    self._commit(conn, batch, stopping)

    def _commit(
        self,
        conn: Connection,
        batch: list[_Submission],
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
        dones = [done for code, _, done in batch if code not in fenced]
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody is left to tell
            if fenced and self.fenced is not None:
                self.loop.call_soon_threadsafe(self.fenced, fenced)
            self.loop.call_soon_threadsafe(_run_all, dones)


def _run_all(dones: list[Callable[[], None]]) -> None:
    for done in dones:
        try:
            done()
        except Exception:  # one table's failure must not keep the others untold
            log.exception("telling a stored outcome failed")
