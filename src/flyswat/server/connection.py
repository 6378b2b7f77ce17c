"""One WebSocket connection: its outgoing queue, its pings, its rate limit and abuse count.

The table only ever queues messages (:meth:`Connection.send`); a writer task per connection
hands them to the network, so a slow client delays nobody else and one broadcast is one
synchronous step (R10). A pinger task sends ``ping`` every second; the ``pong`` gives a
round-trip time for the seat's arbitration allowance.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections import deque
from collections.abc import Callable

from pydantic import BaseModel
from starlette.websockets import WebSocket, WebSocketDisconnect

from flyswat.server.protocol import Error, Ping

PING_EVERY_S = 1.0
#: Token bucket: sustained messages per second and burst size.
RATE_PER_S = 20.0
BURST = 40.0
#: More errors than this within ERROR_WINDOW_S closes the connection (policy violation).
MAX_ERRORS = 20
ERROR_WINDOW_S = 10.0
POLICY_VIOLATION = 1008

_Item = tuple[str, Callable[[float], None] | None] | None


class Connection:
    """A player's or spectator's socket, as the table's :class:`~.seats.Client`."""

    def __init__(
        self,
        ws: WebSocket,
        clock: Callable[[], float],
        network_rtt: Callable[[], float | None] | None = None,
    ) -> None:
        self.ws = ws
        self.clock = clock
        #: Reads the network's round trip of this socket (:func:`.netinfo.rtt_reader`).
        self.network_rtt = network_rtt or (lambda: None)
        self.seat: int | None = None
        self.greeted = False
        self.queue: asyncio.Queue[_Item] = asyncio.Queue()
        self.pings: dict[int, float] = {}
        self._tokens = BURST
        self._refilled = clock()
        self._errors: deque[float] = deque()
        self.closed = False

    def send(self, message: BaseModel, on_sent: Callable[[float], None] | None = None) -> None:
        """Queue ``message`` (never blocks); ``on_sent`` gets the time it went to the socket."""
        if not self.closed:
            self.queue.put_nowait((message.model_dump_json(), on_sent))

    def error(self, code: str, message: str) -> bool:
        """Send one ``error``; returns False when the client has now abused the connection
        too often and it should be closed."""
        self.send(Error(code=code, message=message))
        now = self.clock()
        self._errors.append(now)
        while self._errors and self._errors[0] < now - ERROR_WINDOW_S * 1000:
            self._errors.popleft()
        return len(self._errors) <= MAX_ERRORS

    def allow(self) -> bool:
        """Take one token from the rate limiter; False when the client floods."""
        now = self.clock()
        self._tokens = min(BURST, self._tokens + (now - self._refilled) / 1000 * RATE_PER_S)
        self._refilled = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True

    def pong(self, ping_id: int) -> float | None:
        """The round-trip time (ms) of ping ``ping_id``; None for an unknown id."""
        sent = self.pings.pop(ping_id, None)
        return None if sent is None else self.clock() - sent

    async def writer(self) -> None:
        """Hand queued messages to the socket until :meth:`stop`."""
        with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
            while (item := await self.queue.get()) is not None:
                text, on_sent = item
                if on_sent is not None:
                    on_sent(self.clock())
                await self.ws.send_text(text)

    async def pinger(self) -> None:
        """Send a ``ping`` every second; keep the last few unanswered ones. Ids are random,
        so that no pong can be sent before its ping arrived (a round trip cannot be made to
        look shorter than it is)."""
        while not self.closed:
            ping_id = secrets.randbits(31)
            self.pings[ping_id] = self.clock()
            while len(self.pings) > 10:
                del self.pings[next(iter(self.pings))]
            self.send(Ping(id=ping_id))
            await asyncio.sleep(PING_EVERY_S)

    def stop(self) -> None:
        """Stop the writer after what is queued; nothing more is queued."""
        if not self.closed:
            self.closed = True
            self.queue.put_nowait(None)
