"""One WebSocket connection's I/O: its bounded outgoing queue, its writer, its pings.

The table never awaits a connection: the runner hands each message to :meth:`Link.send`,
which queues it, so a slow client delays nobody else and one broadcast is one synchronous
step (R10). The queue is bounded: a client that falls ``max_behind_bytes`` behind is dropped
at once, its unsent data and all (its seat goes offline and plays on by auto-reveal). A ping
goes out every second; its pong gives a round-trip time, and ``max_missed_pings`` unanswered
pings in a row drop the connection, as does no ``hello`` within ``hello_timeout_s``
(:class:`~flyswat.server.limits.Limits`).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections import deque
from collections.abc import Callable
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from flyswat.protocol import Error, Ping
from flyswat.server.limits import Limits
from flyswat.server.transport import TRANSPORT_KEY
from flyswat.table.seats import Bucket

PING_EVERY_S = 1.0

CLOSE_TIMEOUT = 4408
CLOSE_TOO_SLOW = 4413
CLOSE_NOT_FOUND = 4404
CLOSE_EXPIRED = 4410


class Link:
    """A player's or spectator's socket as the runner sees it: connection id ``id``.

    ``on_sent(mark)`` is called when a message sent with a ``mark`` was handed to the
    socket; ``on_drop(code, reason)`` when the link drops itself (too slow, no pongs)."""

    def __init__(
        self,
        id: int,
        ws: WebSocket,
        clock: Callable[[], float],
        on_sent: Callable[[int], None],
        limits: Limits,
        network_rtt: Callable[[], float | None] | None = None,
    ) -> None:
        self.id = id
        self.limits = limits
        #: Reads the network's round trip of this socket (:func:`.netinfo.rtt_reader`).
        self.network_rtt = network_rtt or (lambda: None)
        self.ws = ws
        self.clock = clock
        self.on_sent = on_sent
        self.queue: deque[tuple[str, int | None]] = deque()
        self.queued_bytes = 0
        self.wake = asyncio.Event()
        self.stalled = asyncio.Event()  # fell too far behind: nothing more can reach it
        self.pings: dict[int, float] = {}
        self.bucket = Bucket()  # pongs are rate-limited here, everything else by the table
        self.greeted = False
        self.closing: tuple[int, str] | None = None
        self.closed = False

    # -- sending ---------------------------------------------------------------------------

    def send_text(self, text: str, mark: int | None = None) -> None:
        """Queue one JSON text (never blocks); drops the link when it is too far behind."""
        if self.closed or self.closing:
            return
        self.queue.append((text, mark))
        self.queued_bytes += len(text)
        if self.queued_bytes > self.limits.max_behind_bytes:  # the client does not read: let it go
            self.queue.clear()
            self.queued_bytes = 0
            self.closing = (CLOSE_TOO_SLOW, "too_slow")
            self.stalled.set()
            return
        self.wake.set()

    def close(self, code: int, reason: str) -> None:
        """Close after what is queued (the table asked for it)."""
        if self.closing is None:
            self.closing = (code, reason)
            self.wake.set()

    def drop(self, code: int, reason: str, message: str) -> None:
        """Tell the client why (an ``error`` with code ``reason``), then close."""
        if self.closing is None and not self.closed:
            self.queue.append((Error(code=reason, message=message).model_dump_json(), None))
            self.close(code, reason)

    async def writer(self) -> None:
        """Hand queued messages to the socket, then close it if asked."""
        with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
            while not self.closed:
                while self.queue:
                    text, mark = self.queue.popleft()
                    self.queued_bytes -= len(text)
                    await self.ws.send_text(text)
                    if mark is not None:
                        self.on_sent(mark)
                if self.closing is not None:
                    code, reason = self.closing
                    await self.ws.close(code, reason)
                    return
                self.wake.clear()
                await self.wake.wait()

    # -- pings -----------------------------------------------------------------------------

    def pong(self, ping_id: int) -> float | None:
        """The round-trip time (ms) of ping ``ping_id``; None for an unknown id. Answering
        a ping forgives the ones sent before it."""
        sent = self.pings.get(ping_id)
        if sent is None:
            return None
        for older in list(self.pings):  # in the order they were sent
            del self.pings[older]
            if older == ping_id:
                break
        return self.clock() - sent

    async def pinger(self) -> None:
        """Send a ``ping`` every second; drop the link after too many go unanswered."""
        while not self.closed and self.closing is None:
            if len(self.pings) >= self.limits.max_missed_pings:
                self.drop(CLOSE_TIMEOUT, "no_pong", "pings went unanswered")
                return
            # Random ids: no pong can be sent before its ping arrived, so a round trip can be
            # made to look longer than it is, never shorter (docs/PROTOCOL.md).
            ping_id = secrets.randbits(31)
            self.pings[ping_id] = self.clock()
            self.send_text(Ping(id=ping_id).model_dump_json())
            await asyncio.sleep(PING_EVERY_S)

    async def hello_deadline(self) -> None:
        """Drop the link if it has not said ``hello`` in time."""
        await asyncio.sleep(self.limits.hello_timeout_s)
        if not self.greeted:
            why = f"no hello within {self.limits.hello_timeout_s:g} s"
            self.drop(CLOSE_TIMEOUT, "hello_timeout", why)

    def stop(self) -> None:
        """Nothing more is sent."""
        self.closed = True
        self.wake.set()

    def abort(self) -> None:
        """Drop the connection at once, unsent data and all (a client that does not read
        would otherwise hold its buffers until the kernel gives up on it)."""
        transport = scope_extension(self.ws, TRANSPORT_KEY)
        if transport is not None:
            transport.abort()


def scope_extension(ws: WebSocket, name: str) -> Any:
    """An object the transport put into the ASGI scope's ``extensions``, or None."""
    return (ws.scope.get("extensions") or {}).get(name)
