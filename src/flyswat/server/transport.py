"""The limits at the transport: uvicorn protocols that shed abusive sockets, and the HTTP guards.

HTTP is parsed by llhttp (``httptools``, uvicorn's parser of choice): a request costs the
process about half the CPU it did with h11 (``bench/http_cost.py``). uvicorn keeps a socket
that never completes its request head for good, reads request bodies into memory before the
application can refuse them, and accepts until the process runs out of file descriptors.
The protocol subclasses here (handed to uvicorn by :func:`uvicorn_config`) add what
``docs/PROTOCOL.md`` (*Limits*) promises:

- a request head must be complete within ``header_timeout_s`` of the connection (or of the
  first byte after a keep-alive pause), its body within ``body_timeout_s`` of the head;
  else the connection is aborted; a head over ``max_head_bytes`` is answered ``400`` and
  closed, however it arrives;
- at most ``connections_per_address`` open connections per client address (answered
  ``429 rate_limited``) and ``connection_cap`` in all, the descriptor limit less a reserve —
  at the cap the connection that has waited longest for a request is closed to make room,
  and only when every connection has a request in hand is a new one answered ``503 busy``;
  refusals are answered at once, before a byte is read, and closed;
- a response sent before a request body too big to read (``413 too_big``) is followed by a
  short lingering close: the rest of the body is read and dropped, never kept, so that the
  client sees the answer rather than a reset; after one sent before a small body (a ``404``
  for an unknown table) the rest is read and dropped and the connection kept, as uvicorn does;
- WebSocket connections carry their transport and socket in the ASGI scope's
  ``extensions`` (``flyswat.transport``, ``flyswat.socket``), for ``abort()`` and
  ``TCP_INFO``.

:func:`serve` runs uvicorn so, with one :class:`~flyswat.server.limits.RepeatFilter` on
uvicorn's, asyncio's and flyswat's log handlers. :class:`RequestRateLimit` (ASGI middleware)
and :func:`read_body` are the HTTP application's side: a request rate per address, and
bodies streamed under a cap.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
import logging
import resource
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Protocol, cast
from urllib.parse import unquote

from httptools import HttpParserInvalidURLError, parse_url
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.utils import accept_key

from flyswat.errors import CODES, MalformedError
from flyswat.protocol import MAX_MESSAGE_BYTES
from flyswat.server import frames
from flyswat.server.limits import (
    AddressBuckets,
    AddressCounter,
    Limits,
    RepeatFilter,
    address_key,
    ceil_seconds,
)

#: After an early answer (413), the rest of a request is read and dropped for at most this
#: long and this much, then the connection is closed.
LINGER_S = 2.0
LINGER_BYTES = 16 * 1024 * 1024

#: After the server's close frame, how long the client has to answer before the socket is
#: closed anyway.
CLOSE_WAIT_S = 2.0

TRANSPORT_KEY = "flyswat.transport"
PROTOCOL_KEY = "flyswat.protocol"
SOCKET_KEY = "flyswat.socket"
#: The key, in the application's lifespan state, of its :data:`Opener` of WebSockets.
OPENER_KEY = "flyswat.sockets"


def descriptor_limit() -> int:
    """The process's soft limit of open file descriptors."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = hard if hard != resource.RLIM_INFINITY else 1 << 20
    return int(soft)


def error_body(code: str, message: str) -> dict[str, str]:
    """The HTTP error shape, ``{"error": code, "message": text}``."""
    return {"error": code, "message": message}


def raw_response(code: str, message: str, retry_after: int | None = None) -> bytes:
    """A whole ``HTTP/1.1`` error response that closes the connection, for a socket
    refused before any request was read (so before uvicorn could write one)."""
    status = CODES[code].status
    body = json.dumps(error_body(code, message)).encode()
    head = [
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}",
        "content-type: application/json",
        f"content-length: {len(body)}",
        "connection: close",
    ]
    if retry_after is not None:
        head.append(f"retry-after: {retry_after}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


_REASONS = {
    400: "Bad Request",
    429: "Too Many Requests",
    503: "Service Unavailable",
    413: "Content Too Large",
}


class Gate:
    """What the protocols of one server share: its limits, who holds connections, and which
    connections are only waiting for a request (the first to go when the server is full)."""

    def __init__(self, limits: Limits, cap: int) -> None:
        self.limits = limits
        self.cap = cap
        self.per_address = AddressCounter(limits.connections_per_address, limits.exempt)
        self.waiting: dict[FlyswatHTTP, None] = {}  # oldest first
        self.refused = {"busy": 0, "rate_limited": 0}
        self.evicted = 0
        self.timed_out = 0

    def admit(self, address: str, open_now: int) -> tuple[str, str] | None:
        """Count a new connection from ``address`` with ``open_now`` open (itself included);
        ``(code, message)`` when it is refused instead (and nothing is counted).

        At the cap, the connection that has waited longest for a request (a socket that
        sent nothing, a slow head, a kept-alive connection between requests) is closed to
        make room; only when none is waiting is the new one refused ``busy``."""
        if not self.per_address.acquire(address):
            self.refused["rate_limited"] += 1
            return "rate_limited", "too many connections from this address"
        if open_now > self.cap and not self._evict():
            self.per_address.release(address)
            self.refused["busy"] += 1
            return "busy", "the server is at its connection limit: try again later"
        return None

    def wait(self, protocol: FlyswatHTTP) -> None:
        """``protocol`` is waiting for a request (now the newest to wait)."""
        self.waiting.pop(protocol, None)
        self.waiting[protocol] = None

    def busy(self, protocol: FlyswatHTTP) -> None:
        """``protocol`` has a request in hand, or is gone: it is waiting no more."""
        self.waiting.pop(protocol, None)

    def _evict(self) -> bool:
        if not self.waiting:
            return False
        oldest = next(iter(self.waiting))
        del self.waiting[oldest]
        self.evicted += 1
        oldest.transport.abort()
        return True


class FlyswatHTTP(HttpToolsProtocol):
    """uvicorn's httptools protocol (llhttp parses, in C) with request-head and body
    deadlines, connection caps, a bound on the request head and a lingering close after an
    early answer. A subclass made by :func:`uvicorn_config` sets :attr:`gate`.

    Its ``phase``: ``head`` (waiting for a request head), ``body``, ``serving`` (the request
    is in, the answer not yet out), ``kept`` (kept alive between requests), ``linger``,
    ``upgraded`` (to a WebSocket) or ``refused``. llhttp refuses a request that declares both
    a ``Content-Length`` and a ``Transfer-Encoding`` itself (RFC 9112, 6.1).
    """

    gate: ClassVar[Gate]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_head = self.gate.limits.max_head_bytes
        self.slot: str | None = None  # the address whose connection this counts as
        self.deadline: asyncio.TimerHandle | None = None
        self.phase = "head"
        self.dropped = 0
        #: Between a request's first byte and the end of its head; the head's size so far
        #: (its request line and whole headers) and the bytes read meanwhile.
        self.in_head = False
        self.head_size = 0
        self.unparsed = 0
        self.refusal: str | None = None  # why a request is answered 400 and closed

    # -- deadlines ------------------------------------------------------------------------

    def _arm(self, seconds: float, then: Callable[[], None]) -> None:
        self._disarm()
        self.deadline = self.loop.call_later(seconds, then)

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _await_body(self) -> None:
        """The body's deadline, from when its head was whole (armed once)."""
        if self.deadline is None:
            self._arm(self.gate.limits.body_timeout_s, self._timed_out)

    def _timed_out(self) -> None:
        self.deadline = None
        self.gate.timed_out += 1
        self.transport.abort()

    # -- asyncio.Protocol -----------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        address = address_key(self.client[0] if self.client else "")
        refusal = self.gate.admit(address, len(self.connections))
        if refusal is not None:
            self.phase = "refused"
            code, message = refusal
            self.transport.write(raw_response(code, message, 1))
            self.transport.close()
            return
        self.slot = address
        self.gate.wait(self)
        self._arm(self.gate.limits.header_timeout_s, self._timed_out)

    def data_received(self, data: bytes) -> None:
        phase = self.phase
        if phase == "refused":
            return
        if phase == "linger":
            self.dropped += len(data)
            if self.dropped > LINGER_BYTES:
                self.transport.abort()
            return
        if phase == "kept":
            self.phase = "head"  # the next request on a kept-alive connection
            self._arm(self.gate.limits.header_timeout_s, self._timed_out)
        super().data_received(data)
        phase = self.phase
        if phase == "body":
            self._await_body()
        elif self.in_head and phase not in ("refused", "upgraded", "linger"):
            # A head still incomplete: its bytes so far, counted by the reads it came in (a
            # read that began with the end of another request counts whole).
            self.unparsed += len(data)
            if self.unparsed > self.max_head:
                self.refusal = f"request head over {self.max_head} bytes"
                self.send_400_response(self.refusal)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.gate.busy(self)
        if self.slot is not None:
            self.gate.per_address.release(self.slot)
            self.slot = None
        super().connection_lost(exc)

    # -- llhttp's callbacks ---------------------------------------------------------------

    def on_message_begin(self) -> None:
        self.in_head, self.head_size, self.unparsed = True, 14, 0  # a request line's least
        super().on_message_begin()

    def on_url(self, url: bytes) -> None:
        self._grow(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._grow(len(name) + len(value) + 4)
        super().on_header(name, value)

    def _grow(self, size: int) -> None:
        """The head is ``size`` bytes longer; past the limit the request is refused (the
        error stops llhttp, and uvicorn answers through :meth:`send_400_response`)."""
        self.head_size += size
        if self.head_size > self.max_head:
            self.refusal = f"request head over {self.max_head} bytes"
            raise ValueError(self.refusal)

    def on_headers_complete(self) -> None:
        self.in_head, self.unparsed = False, 0
        if self.phase in ("head", "kept"):
            self.phase = "body"  # until the message is whole (at once, for most)
            self.gate.busy(self)
            self._disarm()
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        cycle = self.cycle
        if self.phase not in ("upgraded", "linger", "refused"):
            if cycle is not None and cycle.response_complete:
                self._kept()  # an early answer's small body read to its end
            else:
                self.phase = "serving"
                self._disarm()
        super().on_message_complete()

    # -- uvicorn's hooks ------------------------------------------------------------------

    def handle_websocket_upgrade(self) -> None:
        self._disarm()
        self.phase = "upgraded"
        self.gate.busy(self)
        if not self._open_here():
            super().handle_websocket_upgrade()
            protocol = self.transport.get_protocol()
            if isinstance(protocol, FlyswatWebSocket):  # it holds the slot from now on
                protocol.slot, self.slot = self.slot, None
        # llhttp's parser holds this protocol (its callbacks): a cycle, which uvicorn breaks
        # when the connection is lost — a loss this protocol no longer hears of.
        self.parser = None  # type: ignore[assignment]

    def _open_here(self) -> bool:
        """Answer the opening handshake here when the application's :data:`Opener` serves
        its path and the request is a plain one (:func:`handshake_accept`): the socket goes
        straight to an :class:`OpenSocket` and to the application's session, without the
        websockets library, an ASGI scope or a task (a set-up's sockets cost the loop about
        a fifth of its work through them: docs/BENCHMARKS.md). False: nothing was done."""
        opener = cast(Opener | None, self.app_state.get(OPENER_KEY))
        if opener is None or self.root_path:
            return False
        if self.cycle is not None and not self.cycle.response_complete:
            return False  # behind a request still being answered: its answer goes first
        scope = self.scope
        accept = handshake_accept(scope["method"], scope["http_version"], self.headers)
        if accept is None:
            return False
        try:
            path = parse_url(self.url).path.decode("ascii")
        except (HttpParserInvalidURLError, UnicodeDecodeError, AttributeError):
            return False  # the library answers it as it answers any request it cannot read
        serve_socket = opener(unquote(path) if "%" in path else path)
        if serve_socket is None:
            return False
        self.connections.discard(self)
        peer = self.client[0] if self.client else ""
        opened = OpenSocket(self.transport, self.gate, self.slot, self.config.ws_max_size,
                            self.connections, peer, self.headers)  # fmt: skip
        self.slot = None  # the socket holds it from now on
        self.transport.set_protocol(opened)
        self.transport.write(switching(accept))
        try:
            serve_socket(opened)
        except Exception:  # the session could not be made: the socket is failed, not the loop
            self.logger.exception("opening a WebSocket failed")
            opened.close(1011, "internal error")
        return True

    def send_400_response(self, msg: str) -> None:
        self.phase = "refused"
        self._disarm()
        if self.refusal is None:  # llhttp found the request malformed: uvicorn's answer
            super().send_400_response(msg)
            return
        self.transport.write(raw_response("malformed", self.refusal))
        self.transport.close()

    def on_response_complete(self) -> None:
        if self.phase in ("upgraded", "refused"):  # answered behind an upgrade, or too late
            self.server_state.total_requests += 1
            return
        cycle = self.cycle  # the request answered, unless another is queued behind it
        if (
            not self.pipeline
            and cycle.more_body
            and not self.transport.is_closing()
            and not self._body_small()
        ):
            # Answered before a body too big to read (413): drop the rest, then close.
            self.server_state.total_requests += 1
            self.phase = "linger"
            self._unset_keepalive_if_required()
            self.flow.resume_reading()
            if self.transport.can_write_eof():
                self.transport.write_eof()
            self._arm(LINGER_S, self.transport.close)
            return
        super().on_response_complete()
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if self.in_head:  # the next request's head has begun
            self._unset_keepalive_if_required()
            if self.phase != "head":
                self.phase = "head"
                self._arm(self.gate.limits.header_timeout_s, self._timed_out)
        elif cycle.more_body:  # the rest of a small body to come, or a pipelined request's:
            # the body's deadline holds, not the keep-alive's (which is for a quiet client)
            self._unset_keepalive_if_required()
            self.phase = "body"
            self._await_body()
        elif cycle.response_complete:
            self._kept()
        else:
            self.phase = "serving"  # a pipelined request, read whole, now served

    def _body_small(self) -> bool:
        """Is the request's body declared small enough to be read (and dropped) after an
        early answer, as uvicorn does, keeping the connection? (An answer that needs no body,
        a 404, may well be sent before the body is in: the client, told nothing else, sends
        its next request on the same connection.)"""
        for key, value in self.headers:
            if key == b"content-length":
                return value.isdigit() and int(value) <= MAX_MESSAGE_BYTES
        return False

    def _kept(self) -> None:
        """Between requests: uvicorn's keep-alive timer closes the connection if the next
        does not begin in time (armed here too when the last thing read was the rest of a
        body after an early answer: reading it stopped the timer)."""
        self.phase = "kept"
        self._disarm()
        if self.timeout_keep_alive_task is None:
            self.timeout_keep_alive_task = self.loop.call_later(
                self.timeout_keep_alive, self.timeout_keep_alive_handler
            )
        self.gate.wait(self)


class Receiver(frames.Receiving, Protocol):
    """What an accepted socket (:class:`Accepted`) tells as it reads, once taken over: each
    whole message (:meth:`~flyswat.server.frames.Receiving.message`), and its end."""

    def closed(self) -> None:
        """The connection is gone (once)."""


class Accepted(Protocol):
    """An accepted WebSocket, as the application holds it: its transport, and its frames read
    by a :class:`Receiver` from :meth:`take_over` on."""

    transport: asyncio.Transport

    def take_over(self, receiver: Receiver) -> None:
        """Tell ``receiver`` of every message read from now on, and of the end."""

    def close(self, code: int, reason: str = "") -> None:
        """Start the closing handshake after what was written."""

    def abort(self) -> None:
        """Drop the connection at once, unsent data and all."""


def handshake_accept(method: str, version: str, headers: list[tuple[bytes, bytes]]) -> bytes | None:
    """The ``Sec-WebSocket-Accept`` of a plain opening handshake (RFC 6455 §4.2.1: a
    ``GET`` over HTTP/1.1 with a ``Host``, version 13, one key of 16 bytes in base64, no
    sub-protocol asked), or None: a request that is not one is left to the websockets
    library, which answers it as it always did. (uvicorn has already checked the ``Upgrade``
    and ``Connection`` headers; extensions asked for are simply not granted.)"""
    if method != "GET" or version != "1.1":
        return None
    key: bytes | None = None
    versions = 0
    host = False
    for name, value in headers:
        if name == b"sec-websocket-key":
            if key is not None:
                return None
            key = value
        elif name == b"sec-websocket-version":
            if value != b"13":
                return None
            versions += 1
        elif name == b"host":
            host = True
        elif name == b"sec-websocket-protocol":
            return None
    if key is None or versions != 1 or not host:
        return None
    try:
        if len(base64.b64decode(key, validate=True)) != 16:
            return None
    except (binascii.Error, ValueError):
        return None
    return accept_key(key.decode("ascii")).encode("ascii")


def switching(accept: bytes) -> bytes:
    """The server's answer to an opening handshake it accepts (RFC 6455 §4.2.2)."""
    return (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n")  # fmt: skip


class _Frames:
    """An accepted socket's frames read by flyswat (:class:`~flyswat.server.frames.Reader`)
    and each message handed to the receiver as it is read — no ASGI queue, no task woken per
    message —, with the protocol's part (pongs to pings, the closing handshake) done on the
    spot. The part :class:`OpenSocket` and :class:`FlyswatWebSocket` share."""

    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    reader: frames.Reader | None
    receiver: Receiver | None
    close_sent: bool
    close_timer: asyncio.TimerHandle | None
    gone: bool

    def _read(self, reader: frames.Reader, data: bytes) -> None:
        frames.read(self, reader, self.receiver, data)

    def closing(self, payload: bytes) -> None:
        """The client's close frame: answer it (unless ours went first), then hang up."""
        try:
            code, _ = frames.close_code(payload)
        except frames.BadFrame as e:
            code = e.code
        if not self.close_sent:
            self.close_sent = True
            reply = frames.NORMAL if code == 1005 else code
            self.transport.write(frames.close_frame(reply))
        self.transport.close()

    def close(self, code: int, reason: str = "") -> None:
        """Start the closing handshake: a close frame after what was written; the socket is
        closed when the client answers, or :data:`CLOSE_WAIT_S` later."""
        if self.close_sent or self.transport.is_closing():
            return
        self.close_sent = True
        self.transport.write(frames.close_frame(code, reason))
        self.close_timer = self.loop.call_later(CLOSE_WAIT_S, self.transport.close)

    def abort(self) -> None:
        """Drop the connection at once, unsent data and all."""
        self.transport.abort()

    def _gone(self) -> None:
        if self.close_timer is not None:
            self.close_timer.cancel()
            self.close_timer = None
        if not self.gone and self.receiver is not None:
            self.gone = True
            receiver, self.receiver = self.receiver, None  # no cycle left behind
            receiver.closed()


class OpenSocket(_Frames, asyncio.Protocol):
    """A WebSocket whose opening handshake :class:`FlyswatHTTP` answered itself (the usual
    way in: a socket of a table this node runs). Nothing of the websockets library, the ASGI
    scope or the application's middleware is made for it; it holds its connection slot, is
    one of uvicorn's connections (closed ``1012`` at shutdown, as uvicorn's own), and is read
    as :class:`_Frames` reads from the first byte after the handshake."""

    def __init__(
        self,
        transport: asyncio.Transport,
        gate: Gate,
        slot: str | None,
        max_size: int,
        connections: set[Any],
        peer: str,
        headers: list[tuple[bytes, bytes]],
    ) -> None:
        self.transport = transport
        self.loop = asyncio.get_running_loop()
        self.gate = gate
        self.slot = slot
        self.connections = connections
        #: The peer's address (the socket's, never a forwarded one) and the request's
        #: headers: what :func:`flyswat.server.netinfo.rtt_reader` reads.
        self.peer = peer
        self.headers = headers
        self.reader: frames.Reader | None = frames.Reader(max_size)
        self.receiver: Receiver | None = None
        self.close_sent = False
        self.close_timer: asyncio.TimerHandle | None = None
        self.gone = False
        self.lost = False
        connections.add(self)

    def take_over(self, receiver: Receiver) -> None:
        self.receiver = receiver
        if self.lost:
            self._gone()
        elif self.reader is not None:  # every read from now on straight to compiled code
            # (duck-typed, as the transport reads it: a compiled class has no Python base)
            reading = frames.Reading(self, self.reader, receiver)
            self.transport.set_protocol(cast(asyncio.BaseProtocol, reading))

    def data_received(self, data: bytes) -> None:
        if self.reader is not None:
            self._read(self.reader, data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.connections.discard(self)
        if self.slot is not None:
            self.gate.per_address.release(self.slot)
            self.slot = None
        self._gone()

    def shutdown(self) -> None:
        """uvicorn's graceful shutdown: ``1012`` (service restart), then hang up."""
        if not self.close_sent and not self.transport.is_closing():
            self.close_sent = True
            self.transport.write(frames.close_frame(1012))
        self.transport.close()


#: What the application answers for a WebSocket upgrade of one path: how to serve the
#: socket once flyswat's own handshake has accepted it, or None to let the ASGI application
#: do the handshake (``docs/PROTOCOL.md``: the same socket either way).
Opener = Callable[[str], Callable[[OpenSocket], None] | None]


class FlyswatWebSocket(_Frames, WebSocketsSansIOProtocol):
    """uvicorn's websockets-sansio protocol, for the opening handshakes flyswat does not
    answer itself (:func:`handshake_accept`; a socket for a table this node does not run,
    which is told ``moved`` or ``not_found``): it puts itself, its transport and its socket
    into the ASGI scope's ``extensions`` and gives back its connection slot when it closes.

    Once the application has accepted the socket it calls :meth:`take_over`: from then on
    the frames are read as :class:`_Frames` reads them."""

    gate: ClassVar[Gate]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.slot: str | None = None
        self.receiver: Receiver | None = None
        self.reader: frames.Reader | None = None
        self.gone = False

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        scope = cast(dict[str, Any] | None, getattr(self, "scope", None))
        if scope is not None:  # the handshake was accepted: the app starts on the next tick
            extensions = scope.setdefault("extensions", {})
            extensions[TRANSPORT_KEY] = self.transport
            extensions[SOCKET_KEY] = self.transport.get_extra_info("socket")
            extensions[PROTOCOL_KEY] = self

    async def run_asgi(self) -> None:
        """uvicorn's, except that a socket taken over stays open when the application
        returns: the application hands the socket to its receiver and is done, so that no
        task and no stack of coroutines (the middlewares', the route's) lives as long as
        the socket — about a hundred objects each, which the collector walked once in a
        burst of new sockets."""
        try:
            result = await self.app(self.scope, self.receive, self.send)
        except ClientDisconnected:
            pass
        except BaseException:
            self.logger.exception("Exception in ASGI application\n")
            self.send_500_response()
        else:
            if not self.handshake_complete:
                self.logger.error("ASGI callable returned without completing handshake.")
                self.send_500_response()
            elif result is not None:
                self.logger.error("ASGI callable should return None, but returned '%s'.", result)
        if self.reader is None and self.close_timer is None:
            self.transport.close()

    def take_over(self, receiver: Receiver) -> None:
        """Read the accepted socket's frames from now on and tell ``receiver``. Call it right
        after ``accept`` (before the application awaits anything else), so that no frame
        has reached uvicorn's queue."""
        self.stop_keepalive()
        # websockets' parser (a generator that holds its protocol: a cycle) reads no more.
        with contextlib.suppress(AttributeError):
            self.conn.parser.close()
        self.reader = frames.Reader(self.config.ws_max_size)
        self.receiver = receiver
        if self.disconnected:
            self._gone()

    def data_received(self, data: bytes) -> None:
        reader = self.reader
        if reader is None:
            super().data_received(data)
        else:
            self._read(reader, data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.slot is not None:
            self.gate.per_address.release(self.slot)
            self.slot = None
        super().connection_lost(exc)
        scope = cast(dict[str, Any] | None, getattr(self, "scope", None))
        if scope is not None:  # they refer back to this protocol: no cycle left behind
            for key in (TRANSPORT_KEY, SOCKET_KEY, PROTOCOL_KEY):
                scope.get("extensions", {}).pop(key, None)
        if self.reader is not None:
            self._gone()


def uvicorn_config(
    limits: Limits, nofile: int | None = None, proxies: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Keyword arguments for ``uvicorn.run`` / ``uvicorn.Config`` that apply ``limits``.

    ``nofile`` is the descriptor limit the connection cap is derived from (default: this
    process's own). ``proxies``: the peers whose ``X-Forwarded-For`` is believed
    (``--trusted-proxies``); none by default — uvicorn's own default believes any
    loopback peer, so behind a proxy on the same host every client could name its own
    address for the per-address limits. Each call makes protocol classes of their own, so
    that two servers in one process share nothing.
    """
    nofile = nofile or descriptor_limit()
    gate = Gate(limits, limits.connection_cap(nofile))
    http = type("FlyswatHTTPBound", (FlyswatHTTP,), {"gate": gate})
    ws = type("FlyswatWebSocketBound", (FlyswatWebSocket,), {"gate": gate})
    return {
        "http": http,
        "ws": ws,  # websockets-sansio, subclassed
        "ws_max_size": limits.ws_max_size,
        # Frames are written uncompressed (docs/BENCHMARKS.md: the lean wire's messages are
        # small, and one frame serves every receiver of a broadcast).
        "ws_per_message_deflate": False,
        # The table pings every socket itself (a ``ping`` message, whose pong is a measure).
        "ws_ping_interval": None,
        "timeout_keep_alive": limits.keep_alive_s,
        "backlog": limits.accept_backlog(nofile),
        "proxy_headers": bool(proxies),
        "forwarded_allow_ips": list(proxies) or None,
    }


def gate_of(config: dict[str, Any]) -> Gate:
    """The :class:`Gate` of a :func:`uvicorn_config` (for tests and benchmarks)."""
    return cast(Gate, config["http"].gate)


#: The loggers whose handlers :func:`install_log_filter` guards ("" is the root).
LOG_TARGETS = ("", "uvicorn", "uvicorn.error", "uvicorn.access", "asyncio", "flyswat")


def install_log_filter(limits: Limits) -> RepeatFilter:
    """Put one :class:`RepeatFilter` on every handler of uvicorn's, asyncio's and flyswat's
    loggers (and the root's, which asyncio's and flyswat's records reach); gives the root a
    stderr handler if it has none, so that nothing goes around the filter."""
    repeat = RepeatFilter(limits.log_burst, limits.log_interval_s)
    root = logging.getLogger()
    if not root.handlers:
        stderr = logging.StreamHandler()
        stderr.setFormatter(logging.Formatter("%(levelname)s:     %(name)s: %(message)s"))
        root.addHandler(stderr)
    for name in LOG_TARGETS:
        for handler in logging.getLogger(name).handlers:
            handler.addFilter(repeat)
    return repeat


def serve(
    app: ASGIApp,
    host: str,
    port: int,
    limits: Limits,
    sockets: list[socket.socket] | None = None,
    before_shutdown: Callable[[], Awaitable[None]] | None = None,
    proxies: tuple[str, ...] = (),
) -> None:
    """Run uvicorn with ``limits`` until interrupted; its, asyncio's and flyswat's logs pass
    through one :class:`~flyswat.server.limits.RepeatFilter`.

    ``sockets``: listening sockets already bound (a worker's), instead of ``host:port``.
    ``before_shutdown``: awaited once the listening sockets are closed and before uvicorn
    closes the open connections (the tables' hand-over). ``proxies``: the reverse proxies
    whose ``X-Forwarded-For`` is believed (:func:`uvicorn_config`)."""
    import uvicorn

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            for server in self.servers:
                server.close()  # no new connections while the tables are handed over
            if before_shutdown is not None:
                try:
                    await before_shutdown()
                except Exception:
                    logging.getLogger("flyswat.server").exception("the hand-over failed")
            await super().shutdown(sockets)

    config = uvicorn.Config(app, host=host, port=port, log_level="warning",
                            **uvicorn_config(limits, proxies=proxies))  # fmt: skip
    repeat = install_log_filter(limits)  # after uvicorn set up its loggers
    stop = threading.Event()
    every_s = min(5.0, limits.log_interval_s)
    summaries = threading.Thread(target=_summarize, args=(repeat, stop, every_s), daemon=True)
    summaries.start()
    try:
        Server(config).run(sockets=sockets)
    finally:
        stop.set()
        repeat.flush(time.time())


def _summarize(repeat: RepeatFilter, stop: threading.Event, every_s: float) -> None:
    """Log the summaries of held-back records as their windows end, even with no new record
    to carry them (a thread: the log must not wait for the event loop)."""
    while not stop.wait(every_s):
        repeat.summarize(time.time())


# -- the HTTP application's side ----------------------------------------------------------


def client_address(scope: Scope) -> str:
    """The client address of an ASGI scope, as the per-address limits key it."""
    client = scope.get("client")
    return address_key(client[0] if client else "")


class RequestRateLimit:
    """ASGI middleware: HTTP requests per client address through a token bucket;
    past it, ``429 rate_limited`` with ``Retry-After``."""

    def __init__(
        self, app: ASGIApp, buckets: AddressBuckets, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.app = app
        self.buckets = buckets
        self.clock = clock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refused = refusal(self.buckets, client_address(scope), self.clock())
            if refused is not None:
                await refused(scope, receive, send)
                return
        await self.app(scope, receive, send)


def refusal(buckets: AddressBuckets, address: str, now: float) -> Response | None:
    """None when ``address`` may take a token from ``buckets``; else the reply that says it
    may not: ``429 rate_limited`` with ``Retry-After``."""
    if buckets.allow(address, now):
        return None
    return JSONResponse(
        error_body("rate_limited", "too many requests from this address: slow down"),
        status_code=CODES["rate_limited"].status,
        headers={"retry-after": str(ceil_seconds(buckets.retry_after(address, now)))},
    )


async def read_body(request: Request, cap: int) -> bytes:
    """The request body, read as it streams in and never more than ``cap`` bytes of it.

    Raises :class:`~flyswat.errors.MalformedError` ``too_big`` (HTTP 413) at once when the
    declared ``Content-Length`` is over ``cap`` (nothing is read), or as soon as more than
    ``cap`` bytes have come; ``malformed`` when the client goes away mid-body.
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > cap:
        raise MalformedError(f"request body over {cap} bytes", "too_big")
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > cap:
                raise MalformedError(f"request body over {cap} bytes", "too_big")
    except ClientDisconnect:
        raise MalformedError("the client went away before its body was complete") from None
    return bytes(body)
