"""One WebSocket connection: its session with its table, its outgoing frames, its pings.

A :class:`Session` is what the socket's protocol (an :class:`~flyswat.server.transport.
Accepted` socket, once it has taken the socket over) tells of each client message as it is
read: parsed, and handed to the table in the same step. Nothing waits in a queue and no task
is woken per message.

The table never awaits a connection: the executor hands each message to :meth:`Link.send` as
a frame, which is written to the socket's transport at the end of the loop turn, so a slow
client delays nobody else and one broadcast is one synchronous step (R10). A client whose
unsent data passes ``max_behind_bytes`` is dropped at once, its unsent data and all (its seat
goes offline and plays on by auto-reveal). One :class:`Pinger` pings every link once a
second (a ping nearly due rides ahead of other frames instead: :data:`PING_EARLY_MS`); a pong
gives a round-trip time, and ``max_missed_pings`` unanswered pings in a row
drop the connection, as does no ``hello`` within ``hello_timeout_s``
(:class:`~flyswat.server.limits.Limits`).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from flyswat import protocol as p
from flyswat.errors import FlyswatError, IllegalActionError, MalformedError
from flyswat.server.frames import text_frame
from flyswat.server.limits import Limits
from flyswat.table.io import Message
from flyswat.table.seats import message_bucket

if TYPE_CHECKING:
    from flyswat.server.executor import Executor
    from flyswat.server.transport import Accepted
    from flyswat.table.core import Table

log = logging.getLogger("flyswat.server")

PING_EVERY_S = 1.0
#: Spectators are pinged less often: no arbiter needs their round trip, only their being
#: there (a spectator that does not read is dropped by ``max_behind_bytes`` anyway), and a
#: featured game's thousands of pings and pongs a second would cost the players' loop.
WATCHER_PING_EVERY_S = 10.0

#: A ping due this soon (ms) rides with whatever else a link writes, ahead of it, instead of
#: going alone at its time: one write to the socket instead of two (the pings are half the
#: messages, and each write a system call that on loopback does the receiver's TCP work too).
#: Still exactly one ping a period: the one that rode is not sent again when its time comes.
PING_EARLY_MS = 600.0
#: The pinger serves its links in this many groups a period, one a tick: at 7,500 players,
#: 150 pings every 20 ms. A tenth a tick (750 every 100 ms, and their pongs read back in one
#: turn soon after) made a turn of the loop that much longer ten times a second
#: (docs/BENCHMARKS.md, *A slow sitting's held load, and what a stall holds*).
PING_SLOTS = 50
#: A new link joins the emptiest of the groups served in this last share of a period after
#: its first ping: links greeted at once (a burst of games' ends opens hundreds of sockets in
#: a few ms) are spread over that much of the period, not pinged together from then on.
PING_SPREAD = 0.2

#: How often a link reads its network round trip from the kernel (ms): ``tcpi_min_rtt`` only
#: falls, and the smoothed figure moves slowly; a reading at every pong cost 3 % of a loaded
#: server's time.
NETWORK_EVERY_MS = 5_000.0

CLOSE_TIMEOUT = 4408
CLOSE_TOO_SLOW = 4413
CLOSE_NOT_FOUND = 4404
CLOSE_EXPIRED = 4410
CLOSE_MOVED = 4302

__all__ = ["Link", "Pinger", "Session"]


class Link:
    """A player's or spectator's socket as the executor sees it: connection id ``id``.

    Messages are handed over as WebSocket frames already made (:func:`text_frame`: a
    broadcast's frame is made once for all its receivers) and written straight to the
    socket's transport, all of a link's frames of one loop turn in one write: ``schedule``
    (the executor's) calls :meth:`flush` at the end of the turn. ``on_sent(mark)`` is called
    when a frame sent with a ``mark`` was handed to the socket. A client whose unsent data
    passes ``max_behind_bytes`` is dropped (``stalled``)."""

    def __init__(
        self,
        id: int,
        socket: Accepted,
        clock: Callable[[], float],
        on_sent: Callable[[int], None],
        limits: Limits,
        network_rtt: Callable[[], float | None] | None = None,
        schedule: Callable[[Link], None] | None = None,
        schedule_later: Callable[[Link], None] | None = None,
    ) -> None:
        self.id = id
        self.limits = limits
        #: Reads the network's round trip of this socket (:func:`.netinfo.rtt_reader`).
        self.network_rtt = network_rtt or (lambda: None)
        self._network: float | None = None  # its last reading (:meth:`network`)
        self._network_at = -NETWORK_EVERY_MS
        self.protocol = socket
        self.transport: asyncio.Transport = socket.transport
        self.clock = clock
        self.on_sent = on_sent
        self.schedule = schedule or (lambda link: asyncio.get_running_loop().call_soon(link.flush))
        #: How a frame fanned out to spectators is written: after the players' (the executor's
        #: :meth:`~flyswat.server.executor.Executor.flush_later`).
        self.schedule_later = schedule_later or self.schedule
        self.frames: list[bytes] = []
        self.marks: list[int] = []
        self.dirty = False
        self.stalled = False  # fell too far behind: nothing more can reach it
        self.pings: dict[int, float] = {}
        #: When the pinger next pings this link (ms, its clock), and whether a ping rode
        #: early with other frames since (:meth:`flush`): the pinger then skips it once.
        self.ping_due = float("inf")
        self.pinged_early = False
        self.bucket = message_bucket()  # pongs are rate-limited here, everything else by the table
        self.greeted = False
        self.closing: tuple[int, str] | None = None
        self.closed = False

    @property
    def socket(self) -> Any:
        """The operating system's socket (``TCP_INFO``, buffer sizes)."""
        return self.transport.get_extra_info("socket")

    # -- sending ---------------------------------------------------------------------------

    def send(self, frame: bytes, mark: int | None = None, later: bool = False) -> None:
        """Queue one frame for the end of this loop turn (never blocks); ``later``: a frame
        fanned out to many spectators, written after the players' frames."""
        if self.closed or self.closing:
            return
        self.frames.append(frame)
        if mark is not None:
            self.marks.append(mark)
        if not self.dirty:
            self.dirty = True
            (self.schedule_later if later else self.schedule)(self)

    def flush(self) -> None:
        """Write what was queued in one go; drop the client if it is too far behind."""
        self.dirty = False
        frames, marks = self.frames, self.marks
        if not frames or self.closed or self.transport.is_closing():
            frames.clear()
            marks.clear()
            return
        # The same two lists serve the link's whole life: a new pair at every flush would be
        # young objects alive at every collection (two a link, each second).
        if (not self.pinged_early and not self.pings
                and self.clock() >= self.ping_due - PING_EARLY_MS):  # fmt: skip
            # Its ping is nearly due and the last was answered: it goes now, first, so that
            # the client's answer waits for nothing that came with it.
            self.pinged_early = True
            frames.insert(0, self._new_ping())
        data = frames[0] if len(frames) == 1 else b"".join(frames)
        frames.clear()
        self.transport.write(data)
        if marks:
            sent = marks.copy()
            marks.clear()
            for mark in sent:
                self.on_sent(mark)
        if self.transport.get_write_buffer_size() > self.limits.max_behind_bytes:
            # The client does not read: let it go, unsent data and all (it would otherwise
            # hold its buffers until the kernel gives up on it).
            self.closing = (CLOSE_TOO_SLOW, "too_slow")
            self.stalled = True
            self.protocol.abort()

    def send_text(self, text: str, mark: int | None = None) -> None:
        """Queue one JSON text."""
        self.send(text_frame(text.encode()), mark)

    def close(self, code: int, reason: str) -> None:
        """Close after what is queued (the table asked for it)."""
        if self.closing is None and not self.closed:
            self.closing = (code, reason)
            asyncio.get_running_loop().call_soon(self._close_now)

    def _close_now(self) -> None:
        if not self.closed and self.closing is not None:
            self.flush()
            self.protocol.close(*self.closing)

    def drop(self, code: int, reason: str, message: str) -> None:
        """Tell the client why (an ``error`` with code ``reason``), then close."""
        if self.closing is None and not self.closed:
            self.send_text(p.Error(code=reason, message=message).model_dump_json())
            self.close(code, reason)

    def moved(self, url: str | None) -> None:
        """Send the client to the node that serves its table now (``url``; None: the
        address it first used, which finds the owner), then close."""
        if self.closing is None and not self.closed:
            self.send_text(p.Moved(url=url).model_dump_json())
            self.close(CLOSE_MOVED, "moved")

    def network(self, now: float) -> float | None:
        """A new reading at ``now`` of the network's round trip of this socket (ms), from the
        kernel (or a trusted front), at most every :data:`NETWORK_EVERY_MS`; None between two
        readings (nothing new for the arbiter, whose window keeps the last ones) and while
        there is no figure yet (asked again at the next pong)."""
        if self._network is not None and now - self._network_at < NETWORK_EVERY_MS:
            return None
        self._network, self._network_at = self.network_rtt(), now
        return self._network

    # -- pings -----------------------------------------------------------------------------

    def ping(self) -> None:
        """Send a ping; drop the link instead when too many went unanswered."""
        if len(self.pings) >= self.limits.max_missed_pings:
            self.drop(CLOSE_TIMEOUT, "no_pong", "pings went unanswered")
            return
        self.send(self._new_ping())

    def _new_ping(self) -> bytes:
        """A new ping's frame, its sending time kept. Its id is unpredictable: no pong can
        be sent before its ping arrived, so a round trip can be made to look longer than it
        is, never shorter."""
        ping_id = next_ping_id()
        self.pings[ping_id] = self.clock()
        return text_frame(b'{"type":"ping","id":%d}' % ping_id)

    def pong(self, ping_id: int, now: float) -> float | None:
        """The round-trip time (ms) of ping ``ping_id`` answered at ``now``; None for an
        unknown id. Answering a ping forgives the ones sent before it."""
        pings = self.pings
        sent = pings.get(ping_id)
        if sent is None:
            return None
        if len(pings) == 1:  # the common case: the one ping out
            pings.clear()
        else:
            for older in list(pings):  # in the order they were sent
                del pings[older]
                if older == ping_id:
                    break
        return now - sent

    def stop(self) -> None:
        """Nothing more is sent."""
        self.closed = True
        self.frames.clear()


class Pinger:
    """Pings every greeted link once every ``every_s``, from one timer: each tick serves one
    of ``slots`` groups of links, so the pings of many links are spread over the second and
    no link has a task or a timer of its own. A link is pinged at once when added."""

    def __init__(self, every_s: float = PING_EVERY_S, slots: int = PING_SLOTS) -> None:
        self.every_s = every_s
        self.every_ms = every_s * 1000
        self.slots: list[dict[int, Link]] = [{} for _ in range(slots)]
        self.at = 0  # the slot the next tick serves
        self.timer: asyncio.TimerHandle | None = None

    def add(self, link: Link) -> None:
        # In the emptiest group of the last fifth of the round: its next ping comes 0.8 to 1
        # period after this first one.
        n = len(self.slots)
        near = [self.slots[(self.at - 1 - k) % n] for k in range(max(1, int(n * PING_SPREAD)))]
        min(near, key=len)[link.id] = link
        link.ping_due = link.clock() + self.every_ms
        link.ping()
        if self.timer is None:
            self.timer = asyncio.get_running_loop().call_later(self._step(), self._tick)

    def remove(self, link: Link) -> None:
        for slot in self.slots:
            if slot.pop(link.id, None) is not None:
                return

    def _step(self) -> float:
        return self.every_s / len(self.slots)

    def _tick(self) -> None:
        slot = self.slots[self.at]
        self.at = (self.at + 1) % len(self.slots)
        if slot:
            for link in list(slot.values()):
                link.ping_due = link.clock() + self.every_ms
                if link.pinged_early:  # its ping of this period rode with other frames
                    link.pinged_early = False
                    continue
                try:
                    link.ping()
                except Exception:  # one socket's failure must not keep the others' pings
                    log.exception("pinging connection %d failed", link.id)
        if any(self.slots):
            self.timer = asyncio.get_running_loop().call_later(self._step(), self._tick)
        else:
            self.timer = None


#: A pong as the browser (``JSON.stringify``) and Python's ``json.dumps`` write it.
_PONG_HEADS = (b'{"type":"pong","id":', b'{"type": "pong", "id": ')


def pong_id(payload: bytes) -> int | None:
    """The id of a pong written in one of its two usual forms (:data:`_PONG_HEADS`, a
    decimal id of at most 10 digits, ``}``), or None: any other text goes through
    :func:`flyswat.protocol.parse_client`, which gives it the same meaning, or refuses it."""
    if payload[-1:] != b"}":
        return None
    for head in _PONG_HEADS:
        if payload.startswith(head):
            digits = payload[len(head) : -1]
            if 0 < len(digits) <= 10 and digits.isdigit():
                return int(digits)
    return None


def ping_ids(n: int) -> list[int]:
    """``n`` unpredictable 31-bit ping ids, from one read of the system's randomness."""
    raw = os.urandom(4 * n)
    return [int.from_bytes(raw[i : i + 4], "big") >> 1 for i in range(0, 4 * n, 4)]


_ping_pool: list[int] = []


def next_ping_id() -> int:
    """One unpredictable ping id, from a pool filled 256 at a time (:func:`ping_ids`)."""
    if not _ping_pool:
        _ping_pool.extend(ping_ids(256))
    return _ping_pool.pop()


class Session:
    """One WebSocket of one table, from the accepted handshake to the close: each client
    message is parsed and handed to the table as the socket's protocol reads it
    (:meth:`message`), and the end (:meth:`closed`) unlinks it. The protocol holds it (its
    receiver): no task waits on a socket."""

    def __init__(
        self,
        executor: Executor,
        table: Table,
        socket: Accepted,
        limits: Limits,
        clock: Callable[[], float],
        network: Callable[[], float | None] | None,
    ) -> None:
        self.executor = executor
        self.table = table
        self.clock = clock
        loop = asyncio.get_running_loop()
        self.link = executor.link(
            table,
            lambda conn, on_sent: Link(
                conn,
                socket,
                clock,
                on_sent,
                limits,
                network,
                executor.flush_soon,
                executor.flush_later,
            ),
        )
        self.hello_timer: asyncio.TimerHandle | None = loop.call_later(
            limits.hello_timeout_s, self._hello_expired
        )
        socket.take_over(self)

    def _hello_expired(self) -> None:
        self.hello_timer = None
        if not self.link.greeted:
            why = f"no hello within {self.link.limits.hello_timeout_s:g} s"
            self.link.drop(CLOSE_TIMEOUT, "hello_timeout", why)

    def message(self, payload: bytes, text: bool) -> None:
        """One client message, as it is read: parse it, hand it to the table."""
        executor, table, link = self.executor, self.table, self.link
        if link.closing is not None or link.closed:
            return
        if executor.draining:
            link.moved(None)  # the table is on its way to another node
            return
        if executor.tables.get(table.code) is not table:
            # The table was dropped here while this socket opened (another node took it, it
            # was handed over, or a finished one left memory): never answer from the copy
            # left behind; send the client to look again (it finds the owner, or a reload).
            link.moved(None)
            return
        executor.received += 1
        if text and link.greeted:
            ping_id = pong_id(payload)  # half the messages: past the parser's models
            if ping_id is not None and self._pong(ping_id):
                return
        try:
            if not text:
                raise MalformedError("binary frames are not accepted; send JSON text")
            message = Message(link.id, p.parse_client(payload))
        except FlyswatError as e:
            message = Message.refusing(link.id, e)
        try:
            if isinstance(message.message, p.Pong) and link.greeted:
                if self._pong(message.message.id):
                    return
                slow = IllegalActionError("too many messages: slow down", "rate_limited")
                message = Message.refusing(link.id, slow)
            executor.run(table, message)
            if not link.greeted and link.id in table.conns:
                link.greeted = True
                watching = link.id in table.watchers
                (executor.watch_pinger if watching else executor.pinger).add(link)
        except Exception:  # a table's bug must not stop the loop's other tables
            log.exception("table %s failed on a message", table.code)

    def _pong(self, ping_id: int) -> bool:
        """A greeted link's pong: its round trip to the table's arbiter (nothing to store,
        tell or wake for); False when the link's bucket refuses it."""
        link, now = self.link, self.clock()
        if not link.bucket.take(now):
            return False
        rtt = link.pong(ping_id, now)
        if rtt is not None:
            self.executor.observe(self.table, link.id, rtt, link.network(now))
        return True

    def closed(self) -> None:
        """The socket is gone: tell the table, stop everything of this link."""
        if self.hello_timer is not None:
            self.hello_timer.cancel()
            self.hello_timer = None
        link = self.link
        try:
            self.executor.unlink(self.table, link)
        finally:
            self.executor.pinger.remove(link)
            self.executor.watch_pinger.remove(link)
            link.stop()
