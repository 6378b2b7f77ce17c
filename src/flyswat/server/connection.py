"""One WebSocket connection's I/O: its bounded outgoing queue, its writer, its pings.

The table never awaits a connection: the runner hands each message to :meth:`Link.send` as
a frame, which is written to the socket's transport at the end of the loop turn, so a slow
client delays nobody else and one broadcast is one synchronous step (R10). A client whose
unsent data passes ``max_behind_bytes`` is dropped at once, its unsent data and all (its seat
goes offline and plays on by auto-reveal). A ping
goes out every second; its pong gives a round-trip time, and ``max_missed_pings`` unanswered
pings in a row drop the connection, as does no ``hello`` within ``hello_timeout_s``
(:class:`~flyswat.server.limits.Limits`).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from flyswat.protocol import Error, Moved
from flyswat.server.limits import Limits
from flyswat.server.transport import TRANSPORT_KEY
from flyswat.table.seats import message_bucket

PING_EVERY_S = 1.0

CLOSE_TIMEOUT = 4408
CLOSE_TOO_SLOW = 4413
CLOSE_NOT_FOUND = 4404
CLOSE_EXPIRED = 4410
CLOSE_MOVED = 4302


class Link:
    """A player's or spectator's socket as the runner sees it: connection id ``id``.

    Messages are handed over as WebSocket frames already made (:func:`text_frame`: a
    broadcast's frame is made once for all its receivers) and written straight to the
    socket's transport, all of a link's frames of one loop turn in one write: ``schedule``
    (the runner's) calls :meth:`flush` at the end of the turn. ``on_sent(mark)`` is called
    when a frame sent with a ``mark`` was handed to the socket. A client whose unsent data
    passes ``max_behind_bytes`` is dropped (``stalled``)."""

    def __init__(
        self,
        id: int,
        ws: WebSocket,
        clock: Callable[[], float],
        on_sent: Callable[[int], None],
        limits: Limits,
        network_rtt: Callable[[], float | None] | None = None,
        schedule: Callable[[Link], None] | None = None,
    ) -> None:
        self.id = id
        self.limits = limits
        #: Reads the network's round trip of this socket (:func:`.netinfo.rtt_reader`).
        self.network_rtt = network_rtt or (lambda: None)
        self.ws = ws
        transport = scope_extension(ws, TRANSPORT_KEY)
        if transport is None:
            raise RuntimeError("serve the app with flyswat.server.transport.uvicorn_config")
        self.transport: asyncio.Transport = transport
        self.clock = clock
        self.on_sent = on_sent
        self.schedule = schedule or (lambda link: asyncio.get_running_loop().call_soon(link.flush))
        self.frames: list[bytes] = []
        self.marks: list[int] = []
        self.dirty = False
        self.wake = asyncio.Event()  # a close was asked for
        self.stalled = asyncio.Event()  # fell too far behind: nothing more can reach it
        self.pings: dict[int, float] = {}
        self.bucket = message_bucket()  # pongs are rate-limited here, everything else by the table
        self.greeted = False
        self.closing: tuple[int, str] | None = None
        self.closed = False

    # -- sending ---------------------------------------------------------------------------

    def send(self, frame: bytes, mark: int | None = None) -> None:
        """Queue one frame for the end of this loop turn (never blocks)."""
        if self.closed or self.closing:
            return
        self.frames.append(frame)
        if mark is not None:
            self.marks.append(mark)
        if not self.dirty:
            self.dirty = True
            self.schedule(self)

    def flush(self) -> None:
        """Write what was queued in one go; drop the client if it is too far behind."""
        self.dirty = False
        frames, marks = self.frames, self.marks
        if not frames or self.closed or self.transport.is_closing():
            frames.clear()
            marks.clear()
            return
        self.frames, self.marks = [], []
        self.transport.write(frames[0] if len(frames) == 1 else b"".join(frames))
        for mark in marks:
            self.on_sent(mark)
        if self.transport.get_write_buffer_size() > self.limits.max_behind_bytes:
            self.closing = (CLOSE_TOO_SLOW, "too_slow")  # the client does not read: let it go
            self.stalled.set()

    def send_text(self, text: str, mark: int | None = None) -> None:
        """Queue one JSON text."""
        self.send(text_frame(text.encode()), mark)

    def close(self, code: int, reason: str) -> None:
        """Close after what is queued (the table asked for it)."""
        if self.closing is None:
            self.closing = (code, reason)
            self.wake.set()

    def drop(self, code: int, reason: str, message: str) -> None:
        """Tell the client why (an ``error`` with code ``reason``), then close."""
        if self.closing is None and not self.closed:
            self.send_text(Error(code=reason, message=message).model_dump_json())
            self.close(code, reason)

    def moved(self, url: str | None) -> None:
        """Send the client to the node that serves its table now (``url``; None: the
        address it first used, which finds the owner), then close."""
        if self.closing is None and not self.closed:
            self.send_text(Moved(url=url).model_dump_json())
            self.close(CLOSE_MOVED, "moved")

    async def closer(self) -> None:
        """Once a close is asked for: write what is queued, then close the socket."""
        with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
            await self.wake.wait()
            self.flush()
            if self.closing is not None and not self.closed:
                code, reason = self.closing
                await self.ws.close(code, reason)

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
            self.send(text_frame(b'{"type":"ping","id":%d}' % ping_id))
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
        self.frames.clear()
        self.wake.set()

    def abort(self) -> None:
        """Drop the connection at once, unsent data and all (a client that does not read
        would otherwise hold its buffers until the kernel gives up on it)."""
        transport = scope_extension(self.ws, TRANSPORT_KEY)
        if transport is not None:
            transport.abort()


def text_frame(payload: bytes) -> bytes:
    """An unfragmented, unmasked WebSocket text frame (RFC 6455 5.2) of ``payload``, which
    is UTF-8: the bytes a server writes, the same for every receiver."""
    n = len(payload)
    if n < 126:
        head = bytes((0x81, n))
    elif n < 65536:
        head = bytes((0x81, 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x81, 127)) + n.to_bytes(8, "big")
    return head + payload


def scope_extension(ws: WebSocket, name: str) -> Any:
    """An object the transport put into the ASGI scope's ``extensions``, or None."""
    return (ws.scope.get("extensions") or {}).get(name)
