"""A cheap WebSocket client for load generators: an ``asyncio.Protocol`` and a tiny codec.

Thousands of clients in one Python process cost what their per-message work costs, so this
client does the least RFC 6455 allows a client to do (the ``websockets`` library does far
more per frame, and costs about a core for 8,000 clients on the slap-table rhythm):

- the upgrade is one fixed request written by hand, and its answer is only checked for
  ``101`` (the server is our own, on loopback);
- server frames are unmasked: a frame is its two-byte head, an optional 16- or 64-bit
  length, and the payload, handed on as ``bytes`` (a text message is never decoded here);
- client frames must be masked, and any key is legal: this client uses the zero key, so
  the payload goes out as it is (no masking work at all);
- a ``ping`` frame is answered with a ``pong`` at once, a ``close`` frame with a close and
  the end of the connection; messages sent in fragments are put back together.

No compression is offered unless asked (``deflate``): then ``permessage-deflate`` is offered
as browsers offer it, and what the server compresses is inflated here (one ``zlib`` stream a
connection); the client's own frames go out uncompressed, which the extension allows. Only
loopback addresses are meant.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Callable
from typing import Any, cast

#: The ``Sec-WebSocket-Key`` of every upgrade: the RFC's own sample nonce (the server only
#: echoes a digest of it; nothing here relies on it being secret).
KEY = "dGhlIHNhbXBsZSBub25jZQ=="

#: Opcodes (RFC 6455, 5.2).
CONT, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA

_ZERO_KEY = b"\x00\x00\x00\x00"
#: What a deflated message lacks at its end (RFC 7692, 7.2.2).
_TAIL = b"\x00\x00\xff\xff"


def frame(payload: bytes, opcode: int = TEXT) -> bytes:
    """One whole client frame (FIN set, masked with the zero key) carrying ``payload``."""
    n = len(payload)
    if n < 126:
        head = bytes((0x80 | opcode, 0x80 | n))
    elif n < 1 << 16:
        head = bytes((0x80 | opcode, 0x80 | 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x80 | opcode, 0x80 | 127)) + n.to_bytes(8, "big")
    return head + _ZERO_KEY + payload


def upgrade_request(host: str, port: int, path: str, deflate: bool = False) -> bytes:
    """The HTTP/1.1 upgrade request of a WebSocket on ``path`` (offering
    ``permessage-deflate`` when ``deflate``, as a browser does)."""
    offer = "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"
    return (
        f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n"
        + (offer if deflate else "")
        + "\r\n"
    ).encode()


class WireSocket(asyncio.Protocol):
    """One WebSocket client connection.

    ``on_message(payload, now)`` is called for each whole text (or binary) message, with the
    loop's clock as the bytes arrived; ``on_lost(by_us)`` once when the connection ends,
    ``by_us`` True when :meth:`close` ended it. :attr:`opened` is set when the upgrade
    succeeded; a refused upgrade ends the connection with ``upgrade_error`` set.
    """

    def __init__(
        self,
        request: bytes,
        on_message: Callable[[bytes, float], None],
        on_lost: Callable[[bool], None],
    ) -> None:
        self.request = request
        self.on_message = on_message
        self.on_lost = on_lost
        self.opened = asyncio.get_running_loop().create_future()
        self.upgrade_error: str | None = None
        self.transport: asyncio.Transport | None = None
        self.closing = False
        self._time = asyncio.get_running_loop().time
        self._head = True
        self._rest = b""
        self._parts: list[bytes] = []
        self._compressed = False  # the message being put together is deflated
        self.inflate: Any = None  # a zlib stream once the server accepted permessage-deflate

    # -- asyncio.Protocol ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self.transport.write(self.request)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(ConnectionError(self.upgrade_error or "connection lost"))
        self.transport = None
        self.on_lost(self.closing)

    def data_received(self, data: bytes) -> None:
        now = self._time()
        if self._rest:
            data = self._rest + data
            self._rest = b""
        if self._head:
            end = data.find(b"\r\n\r\n")
            if end < 0:
                self._rest = data
                return
            if not data.startswith(b"HTTP/1.1 101"):
                self.upgrade_error = data[: data.find(b"\r\n")].decode(errors="replace")
                self.close()
                return
            self._head = False
            if b"permessage-deflate" in data[:end].lower():
                self.inflate = zlib.decompressobj(-zlib.MAX_WBITS)
            if not self.opened.done():  # (cancelled: its opener was given up meanwhile)
                self.opened.set_result(None)
            data = data[end + 4 :]
        self._frames(data, now)

    # -- frames -------------------------------------------------------------------------------

    def _frames(self, data: bytes, now: float) -> None:
        i, n = 0, len(data)
        while n - i >= 2:
            b0, size = data[i], data[i + 1] & 0x7F  # a server's frames are never masked
            start = i + 2
            if size == 126:
                if n - i < 4:
                    break
                size, start = int.from_bytes(data[i + 2 : i + 4], "big"), i + 4
            elif size == 127:
                if n - i < 10:
                    break
                size, start = int.from_bytes(data[i + 2 : i + 10], "big"), i + 10
            end = start + size
            if end > n:
                break
            i = end
            opcode = b0 & 0x0F
            if opcode == TEXT and b0 & 0xC0 == 0x80:  # whole, not deflated: the usual case
                self.on_message(data[start:end], now)
            elif opcode == PING:
                self._write(frame(data[start:end], PONG))
            elif opcode == CLOSE:  # the server closes: answer, and end (not "by us")
                self._write(frame(data[start : start + 2], CLOSE))
                if self.transport is not None:
                    self.transport.close()
                return
            elif opcode in (TEXT, BINARY, CONT):
                if opcode != CONT:
                    self._compressed = bool(b0 & 0x40)
                self._parts.append(data[start:end])
                if b0 & 0x80:
                    whole, self._parts = b"".join(self._parts), []
                    if self._compressed and self.inflate is not None:
                        whole = self.inflate.decompress(whole + _TAIL)
                    self.on_message(whole, now)
        if i < n:
            self._rest = data[i:]

    def _write(self, data: bytes) -> None:
        if self.transport is not None:
            self.transport.write(data)

    # -- the client's side --------------------------------------------------------------------

    def send(self, payload: bytes) -> bool:
        """Send one text message (UTF-8 JSON, say); False when the connection is gone."""
        if self.transport is None or self.closing:
            return False
        self.transport.write(frame(payload))
        return True

    def send_many(self, payloads: list[bytes]) -> bool:
        """Send several text messages in one write; False when the connection is gone."""
        if self.transport is None or self.closing:
            return False
        self.transport.write(b"".join(frame(p) for p in payloads))
        return True

    def close(self) -> None:
        """End the connection from this side (no close handshake is waited for)."""
        self.closing = True
        if self.transport is not None:
            self.transport.close()


async def open_socket(
    host: str,
    port: int,
    path: str,
    on_message: Callable[[bytes, float], None],
    on_lost: Callable[[bool], None],
    timeout: float = 20.0,
    deflate: bool = False,
) -> WireSocket:
    """Connect to ``ws://host:port/path`` and wait for the upgrade; raises
    :class:`ConnectionError` (or :class:`OSError`, :class:`TimeoutError`) when it fails.
    ``deflate``: offer ``permessage-deflate``."""
    loop = asyncio.get_running_loop()
    request = upgrade_request(host, port, path, deflate)

    async def connect() -> WireSocket:
        _, sock = await loop.create_connection(
            lambda: WireSocket(request, on_message, on_lost), host, port
        )
        await sock.opened
        return sock

    return await asyncio.wait_for(connect(), timeout)
