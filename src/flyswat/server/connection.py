"""One WebSocket connection's I/O: its bounded outgoing queue, its writer, its pings.

The table never awaits a connection: the runner hands each message to :meth:`Link.send`,
which queues it, so a slow client delays nobody else and one broadcast is one synchronous
step (R10). The queue is bounded: a client that falls :data:`MAX_BEHIND_BYTES` behind is
dropped (its seat goes offline and plays on by auto-reveal). A ping goes out every second;
its pong gives a round-trip time, and :data:`MAX_MISSED_PINGS` unanswered pings in a row
drop the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from flyswat.protocol import Error, Ping
from flyswat.table.seats import Bucket

PING_EVERY_S = 1.0
#: Unanswered pings in a row after which the connection is dropped (``no_pong``).
MAX_MISSED_PINGS = 10
#: A connection whose unsent messages exceed this many bytes is dropped (``too_slow``).
MAX_BEHIND_BYTES = 256 * 1024
#: Seconds a new connection has to say ``hello`` (``hello_timeout``).
HELLO_TIMEOUT_S = 10.0

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
    ) -> None:
        self.id = id
        self.ws = ws
        self.clock = clock
        self.on_sent = on_sent
        self.queue: deque[tuple[str, int | None]] = deque()
        self.queued_bytes = 0
        self.wake = asyncio.Event()
        self.pings: dict[int, float] = {}
        self._ping_id = 0
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
        if self.queued_bytes > MAX_BEHIND_BYTES:
            self.queue.clear()
            self.queued_bytes = 0
            self.drop(CLOSE_TOO_SLOW, "too_slow", "you fell too far behind the table")
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
        a ping forgives the ones before it."""
        sent = self.pings.pop(ping_id, None)
        if sent is None:
            return None
        for older in [i for i in self.pings if i < ping_id]:
            del self.pings[older]
        return self.clock() - sent

    async def pinger(self) -> None:
        """Send a ``ping`` every second; drop the link after too many go unanswered."""
        while not self.closed and self.closing is None:
            if len(self.pings) >= MAX_MISSED_PINGS:
                self.drop(CLOSE_TIMEOUT, "no_pong", "pings went unanswered")
                return
            self._ping_id += 1
            self.pings[self._ping_id] = self.clock()
            self.send_text(Ping(id=self._ping_id).model_dump_json())
            await asyncio.sleep(PING_EVERY_S)

    async def hello_deadline(self) -> None:
        """Drop the link if it has not said ``hello`` in time."""
        await asyncio.sleep(HELLO_TIMEOUT_S)
        if not self.greeted:
            self.drop(CLOSE_TIMEOUT, "hello_timeout", f"no hello within {HELLO_TIMEOUT_S:g} s")

    def stop(self) -> None:
        """Nothing more is sent."""
        self.closed = True
        self.wake.set()


def scope_extension(ws: WebSocket, name: str) -> Any:
    """An object the transport put into the ASGI scope's ``extensions``, or None."""
    return (ws.scope.get("extensions") or {}).get(name)
