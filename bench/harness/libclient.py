"""The rhythm's client on the ``websockets`` library, to measure what a load generator costs
when it uses the usual client rather than :mod:`harness.wire`.

:class:`LibSocket` offers what :class:`~harness.wire.WireSocket` offers the rhythm's players
(``send``, ``send_many``, ``close``; ``on_message(payload, now)`` and ``on_lost(by_us)``
callbacks), on a ``websockets`` client connection: the library parses, unmasks, masks and
(with ``deflate``) compresses for it; each send is a task, as the library's sends are
coroutines. Only loopback addresses are meant.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import WebSocketException


class LibSocket:
    """One ``websockets`` client connection, driven like a :class:`~harness.wire.WireSocket`."""

    def __init__(
        self,
        ws: ClientConnection,
        on_message: Callable[[bytes, float], None],
        on_lost: Callable[[bool], None],
    ) -> None:
        self.ws = ws
        self.on_message = on_message
        self.on_lost = on_lost
        self.closing = False
        self.inflate: Any = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        time = asyncio.get_running_loop().time
        try:
            async for msg in self.ws:
                self.on_message(msg.encode() if isinstance(msg, str) else msg, time())
        except (WebSocketException, OSError):
            pass
        finally:
            self.on_lost(self.closing)

    async def _send(self, payloads: list[bytes]) -> None:
        with contextlib.suppress(WebSocketException, OSError):
            for payload in payloads:
                await self.ws.send(payload.decode())

    def send_many(self, payloads: list[bytes]) -> bool:
        """Send several text messages (in one task); False when the connection is gone."""
        if self.closing or self.ws.close_code is not None:
            return False
        task = asyncio.ensure_future(self._send(payloads))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    def send(self, payload: bytes) -> bool:
        """Send one text message; False when the connection is gone."""
        return self.send_many([payload])

    def close(self) -> None:
        """End the connection from this side, without waiting for the close handshake."""
        self.closing = True
        self.ws.transport.abort()


async def open_lib_socket(
    url: str,
    on_message: Callable[[bytes, float], None],
    on_lost: Callable[[bool], None],
    timeout: float = 20.0,
    deflate: bool = False,
) -> LibSocket:
    """Connect with the ``websockets`` library (its own pings off: the server's are the
    heartbeat); ``deflate``: let it negotiate ``permessage-deflate`` (its default)."""
    ws = await connect(
        url, ping_interval=None, open_timeout=timeout, close_timeout=1, max_size=2**20,
        compression="deflate" if deflate else None,
    )  # fmt: skip
    return LibSocket(ws, on_message, on_lost)
