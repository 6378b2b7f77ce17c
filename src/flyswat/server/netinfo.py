"""What the network says of a connection's round-trip time, where the client cannot bend it.

Two sources (docs/PROTOCOL.md, "Fair arbitration"):

- **the socket's own kernel** (Linux ``TCP_INFO``): ``tcpi_min_rtt``, the smallest round
  trip the kernel measured on the connection (its handshake included), else ``tcpi_rtt``
  (smoothed). The kernel's TCP stack times its own segments and acknowledgements, so the
  peer's application cannot delay them. Right for clients that connect to the server
  directly; behind a reverse proxy it measures the hop to the proxy (about 0 ms).
- **a trusted front** (opt-in, off by default): a reverse proxy that passes its own
  measurement of the client's connection in the :data:`RTT_HEADER` header of the WebSocket
  upgrade, in microseconds (nginx: ``proxy_set_header X-Flyswat-Rtt-Us $tcpinfo_rtt;``). It
  is believed only from the peer addresses the operator lists (``flyswat serve
  --rtt-header-from``); from anywhere else the header is ignored.

:func:`network_reader` turns a connection's peer, its upgrade's headers and its socket into
the one callable the connection uses; the peer is always the socket's own address, so a proxy
named both ``--trusted-proxies`` and ``--rtt-header-from`` is believed for its header although
its ``X-Forwarded-For`` names the player. A socket whose handshake the transport answered
itself (:class:`flyswat.server.transport.OpenSocket`) gives them directly; for one accepted by
the ASGI application, uvicorn does not hand the socket over: the server's own WebSocket
protocol (:class:`flyswat.server.transport.FlyswatWebSocket`) puts it into the scope's
``extensions`` (:data:`~flyswat.server.transport.SOCKET_KEY`), and :func:`rtt_reader` reads
them from the scope. A scope may instead carry a reader of its own under :data:`SCOPE_KEY`
(``{"tcp_rtt_ms": () -> float | None}``).
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable, Collection, Mapping
from functools import partial
from typing import Any, Protocol

from flyswat.server.transport import SOCKET_KEY

#: The header a trusted front sets: its measured round trip to the client, in microseconds.
RTT_HEADER = "x-flyswat-rtt-us"
#: The key of the scope's ``extensions`` entry: ``{"tcp_rtt_ms": () -> float | None}``.
SCOPE_KEY = "flyswat.netinfo"
#: A front's value past this (µs) is not a measurement but a mistake, and is ignored.
MAX_HEADER_US = 10_000_000

# Linux <linux/tcp.h> ``struct tcp_info``: 8 bytes of u8 fields, then u32 fields from offset 8;
# tcpi_rtt at 68 and tcpi_min_rtt at 148 (since Linux 4.6), both in microseconds.
_TCP_INFO = getattr(socket, "TCP_INFO", 11)
_TCP_INFO_LEN = 152
_RTT_AT = 68
_MIN_RTT_AT = 148


class _Socket(Protocol):
    def getsockopt(self, level: int, optname: int, buflen: int) -> bytes: ...


def tcp_rtt_ms(sock: _Socket) -> float | None:
    """The kernel's round-trip time of a connected TCP socket (ms): ``tcpi_min_rtt``, else
    ``tcpi_rtt``; None where ``TCP_INFO`` is not available or has no sample yet."""
    try:
        raw = sock.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, _TCP_INFO_LEN)
    except (OSError, ValueError):
        return None
    if len(raw) < _RTT_AT + 4:
        return None
    (srtt,) = struct.unpack_from("=I", raw, _RTT_AT)
    (low,) = struct.unpack_from("=I", raw, _MIN_RTT_AT) if len(raw) >= _MIN_RTT_AT + 4 else (0,)
    best = low or srtt
    return best / 1000.0 if best else None


def header_rtt_ms(headers: list[tuple[bytes, bytes]]) -> float | None:
    """A trusted front's :data:`RTT_HEADER` (µs) in an ASGI header list, in ms; None when it is
    missing, repeated or not a whole number of µs within :data:`MAX_HEADER_US`."""
    values = [v for k, v in headers if k.lower() == RTT_HEADER.encode()]
    if len(values) != 1 or not values[0].isdigit():
        return None
    us = int(values[0])
    return us / 1000.0 if us <= MAX_HEADER_US else None


def rtt_reader(
    scope: Mapping[str, Any], trusted_fronts: Collection[str] = ()
) -> Callable[[], float | None] | None:
    """How to read the network's round trip (ms) of the connection ``scope`` describes
    (:func:`network_reader`, with the scope's socket, or the reader it carries under
    :data:`SCOPE_KEY`). The peer is the socket's own address, never the client a trusted
    proxy named (``X-Forwarded-For`` rewrites the scope's ``client``): a front is believed
    for what it is, the peer of the connection."""
    extensions = scope.get("extensions") or {}
    sock = extensions.get(SOCKET_KEY)
    client = scope.get("client")
    peer = _peer(sock) if sock is not None else (client[0] if client else None)
    info = extensions.get(SCOPE_KEY)
    reader = info.get("tcp_rtt_ms") if isinstance(info, dict) else None
    own = reader if callable(reader) else None
    return network_reader(peer, list(scope.get("headers", [])), sock, trusted_fronts, own)


def network_reader(
    peer: str | None,
    headers: list[tuple[bytes, bytes]],
    sock: _Socket | None,
    trusted_fronts: Collection[str] = (),
    own: Callable[[], float | None] | None = None,
) -> Callable[[], float | None] | None:
    """How to read the network's round trip (ms) of a WebSocket: the trusted front's
    header when the ``peer`` is one of ``trusted_fronts`` and sent it; else ``own`` (a
    reader of its own), else the socket's ``TCP_INFO``; None when there is none of these
    (an in-process test client, or another server)."""
    if peer is not None and peer in trusted_fronts:
        front = header_rtt_ms(headers)
        if front is not None:
            return lambda: front
    if own is not None:
        return own
    return partial(tcp_rtt_ms, sock) if sock is not None else None


def _peer(sock: Any) -> str | None:
    try:
        return str(sock.getpeername()[0])
    except (OSError, AttributeError, IndexError, TypeError):
        return None
