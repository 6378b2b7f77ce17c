"""The store's group commit in a process of its own (``flyswat serve``'s default;
``--writer thread`` keeps it in the node's process, :mod:`flyswat.server.writer`).

The writer thread (:mod:`flyswat.server.writer`) shares the interpreter's lock with the event
loop: each of a commit's statements lets the lock go while the database works, and gets it
back only when the busy loop hands it over, up to the switch interval (5 ms) later. A commit
of 1–3 ms of its own CPU took 25–50 ms so under load (docs/BENCHMARKS.md, *The writer apart*),
and every table's round result waits for its commit. Here the same :class:`Writer` runs in a
child process with its own interpreter; the event loop only hands it its submissions, at most
one batch every :data:`~flyswat.server.writer.COMMIT_EVERY_MS` (a lone one at once: one
``write`` on a socket pair, never blocking: what the socket does not take waits in a buffer),
the child commits each batch as it comes, and the loop reads back, after each commit, which
submissions are stored. The node keeps the commits' pace, so that the child wakes once a
commit, not once a turn of the loop (a batch each turn cost 1.20 times the thread's CPU at
3,000 players; paced, and read by the child's writer thread itself, 1.07: docs/BENCHMARKS.md,
*The writer apart, paced*).

The contract is :class:`Writer`'s: ``done`` runs on the loop once the events are stored, a
table's in order; the events of a table the node no longer owns are not stored and ``fenced``
is told. The child dies with the node: when the node stops, it says so and closes its end of
the socket, and the child stores what it has and exits; when the node dies (its end closes
without a word), the child exits at once, storing nothing more — none of that was told. A
node whose child has died cannot store, and tells nothing more: it stops (``os._exit``) rather
than play on unrecorded, and its tables are restored from the store as after any crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import pickle
import signal
import socket
import struct
from collections.abc import Callable, Sequence
from typing import Any, cast

from flyswat.server.store import Store
from flyswat.server.writer import COMMIT_EVERY_MS, Submission, Writer, run_all
from flyswat.table.events import Event

log = logging.getLogger("flyswat.server")

_HEAD = struct.Struct("!I")
#: Bytes read from the socket at a time.
READ_BYTES = 1 << 18


def _frames(buffer: bytearray) -> list[Any]:
    """Take the whole frames (a length, then a pickle) off the front of ``buffer``."""
    out = []
    at = 0
    while len(buffer) - at >= _HEAD.size:
        (size,) = _HEAD.unpack_from(buffer, at)
        if len(buffer) - at - _HEAD.size < size:
            break
        start = at + _HEAD.size
        out.append(pickle.loads(buffer[start : start + size]))
        at = start + size
    del buffer[:at]
    return out


def _frame(message: Any) -> bytes:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEAD.pack(len(body)) + body


class WriterProcess:
    """:class:`~flyswat.server.writer.Writer`'s interface (``submit``, ``queued``, ``stop``)
    over a child process that runs it."""

    def __init__(
        self,
        store: Store,
        loop: asyncio.AbstractEventLoop,
        every_ms: float = COMMIT_EVERY_MS,
        fenced: Callable[[set[str]], None] | None = None,
        observe: Callable[[float], None] | None = None,
        told: Callable[[], None] | None = None,
    ) -> None:
        self.loop = loop
        self.fenced = fenced
        self.observe = observe
        self.told = told
        self.every_s = every_ms / 1000
        self._sent_at = -self.every_s  # the loop's time of the last batch handed over
        self._pending: dict[int, tuple[str, Callable[[], None]]] = {}
        self._seq = 0
        self._batch: list[tuple[int, str, Sequence[Event]]] = []  # this loop turn's
        self._out = bytearray()  # what the socket did not take yet
        self._in = bytearray()
        self._stopping = False
        mine, theirs = socket.socketpair()
        spawn = multiprocessing.get_context("spawn")  # the loop's threads are not forked
        self._child = spawn.Process(
            target=_child_main,
            args=(store.url, store.node, theirs),
            name="flyswat-writer",
            daemon=True,
        )
        self._child.start()
        theirs.close()
        mine.setblocking(False)
        self._sock = mine
        loop.add_reader(mine.fileno(), self._readable)

    @property
    def queued(self) -> int:
        """Submissions not yet reported stored."""
        return len(self._pending)

    def submit(self, code: str, events: Sequence[Event], done: Callable[[], None]) -> None:
        """Store ``events`` of table ``code``; ``done()`` runs on the loop once they are."""
        if self._stopping:
            raise RuntimeError("the store's writer has stopped")
        self._seq += 1
        self._pending[self._seq] = (code, done)
        self._batch.append((self._seq, code, events))
        if len(self._batch) == 1:  # the first since the last batch: when it goes
            wait = self._sent_at + self.every_s - self.loop.time()
            if wait > 0:
                self.loop.call_later(wait, self._send_batch)
            else:  # at the end of this turn, with whatever else the turn submits
                self.loop.call_soon(self._send_batch)

    def _send_batch(self) -> None:
        if self._stopping or not self._batch:
            return  # stop() sent it
        self._sent_at = self.loop.time()
        idle = not self._out  # else the socket's writer callback is on, and sends it
        self._out += _frame(self._batch)
        self._batch = []
        if idle:
            self._writable()
            if self._out:
                self.loop.add_writer(self._sock.fileno(), self._writable)

    def _writable(self) -> None:
        """Send what the socket takes of what waits (never blocking)."""
        try:
            sent = self._sock.send(self._out)
        except BlockingIOError:
            return
        del self._out[:sent]
        if not self._out:
            self.loop.remove_writer(self._sock.fileno())

    def _readable(self) -> None:
        try:
            data = self._sock.recv(READ_BYTES)
        except BlockingIOError:
            return
        if not data:
            self._died()
            return
        self._in += data
        for seqs, fenced, took in _frames(self._in):  # one commit's report
            if self.observe is not None:
                self.observe(took)
            pending = self._pending
            if fenced:  # those tables are another node's now: nothing of theirs is told
                for seq in [s for s, (code, _) in pending.items() if code in fenced]:
                    del pending[seq]
                if self.fenced is not None:
                    self.fenced(fenced)
            run_all([pending.pop(seq)[1] for seq in seqs if seq in pending], self.told)

    def _died(self) -> None:
        self.loop.remove_reader(self._sock.fileno())
        if self._stopping:
            return
        log.critical("the store's writer process has died: this node stops (its tables are "
                     "restored from the store)")  # fmt: skip
        logging.shutdown()
        os._exit(70)

    def stop(self, timeout: float = 10.0) -> None:
        """Hand over what is still unsent, let the child store it, and wait for its end
        (what it stores now is not told: the loop is shutting down)."""
        if self._stopping:
            return
        self._stopping = True
        if self._batch:
            self._out += _frame(self._batch)
            self._batch = []
        self._out += _frame(None)  # the end, said: store all of it (not a node that died)
        fd = self._sock.fileno()
        self.loop.remove_reader(fd)
        self.loop.remove_writer(fd)  # (if on: what waited goes below, with the rest)
        self._sock.setblocking(True)
        with contextlib.suppress(OSError):
            self._sock.sendall(bytes(self._out))
            self._sock.shutdown(socket.SHUT_WR)  # the child's end of submissions
        self._child.join(timeout)
        self._sock.close()


class _ChildWriter(Writer):
    """The writer in the child: its thread reads the node's batches off ``sock`` itself (no
    thread of the child between the socket and the commits) and commits each as it comes
    (the node paces them), then reports it to the node — the stored submissions' numbers,
    the tables fenced, the commit's time."""

    def __init__(self, store: Store, sock: socket.socket) -> None:
        self.sock = sock
        self.took = 0.0
        self._in = bytearray()
        self._told_end = False  # the node said it stops (else its end closing is its death)
        super().__init__(store, None, every_ms=0.0, observe=self._took)

    def _gather(self, batch: list[Submission], last: float, wait: bool) -> bool:
        """Take into ``batch`` every submission the node has sent: if ``wait``, waiting for
        one if none came. True once the node's end is closed after it said it stops (what
        came is still stored). A node's end that closes without a word is a node that died:
        what it handed over since the last commit was told to nobody, and its tables are
        restored from the store by the node that takes them (the same node restarted, as
        often as not: a commit of this child's after that restore would write behind it),
        so the child ends at once, storing none of it — as a writer thread dies with its
        node."""
        closed, block = False, wait  # blocking until a whole batch came, if waiting
        while True:
            try:
                data = self.sock.recv(READ_BYTES, 0 if block else socket.MSG_DONTWAIT)
            except BlockingIOError:
                break  # nothing more there yet
            except OSError:
                data = b""
            if not data:
                if not self._told_end:
                    log.warning("the node is gone: its writer ends, storing nothing more")
                    logging.shutdown()
                    os._exit(0)
                closed = True
                break
            self._in += data
            for submissions in _frames(self._in):
                if submissions is None:
                    self._told_end = True
                    continue
                batch.extend((code, events, _Done(seq)) for seq, code, events in submissions)
                block = False  # and whatever else is there already
        return closed

    def _took(self, took: float) -> None:
        self.took = took  # reported with the commit, which follows at once

    def _report(self, fenced: set[str], dones: list[Callable[[], None]]) -> None:
        seqs = [cast(_Done, done).seq for done in dones]
        with contextlib.suppress(OSError):  # the node is gone: nobody is left to tell
            self.sock.sendall(_frame((seqs, fenced, self.took)))


class _Done:
    """A submission's ``done`` in the child: its number, reported once it is stored."""

    __slots__ = ("seq",)

    def __init__(self, seq: int) -> None:
        self.seq = seq

    def __call__(self) -> None:  # pragma: no cover - the child reports it, never runs it
        pass


def _child_main(url: str, node: str | None, sock: socket.socket) -> None:
    """The writer process: read submissions until the node's end closes, store them. A
    Ctrl-C in a terminal interrupts the whole process group, the child with its node: the
    child leaves its end to the node (which stops it, storing what it holds), rather than
    die first and make the node stop as if its store were lost."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s:     %(name)s: %(message)s")
    store = Store(url, node=node)
    writer = _ChildWriter(store, sock)
    writer._thread.join()  # it ends once the node's end is closed and all it sent is stored
    writer.stop()
    store.close()
    sock.close()
