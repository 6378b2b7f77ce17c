"""A table's WebSocket opened by the transport's own handshake (flyswat.server.transport:
``handshake_accept``, ``OpenSocket``), and every other upgrade left to the websockets library
as before: raw sockets against a real server."""

from __future__ import annotations

import json
import socket
import struct
import time
from typing import Any

import httpx
import pytest

from flyswat.server.transport import handshake_accept

from .conftest import Live

#: RFC 6455 §1.3's example: this key is answered with that accept.
KEY, ACCEPT = b"dGhlIHNhbXBsZSBub25jZQ==", b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="


def headers(**given: bytes) -> list[tuple[bytes, bytes]]:
    base = {"host": b"127.0.0.1", "sec-websocket-key": KEY, "sec-websocket-version": b"13"}
    base.update({k.replace("_", "-"): v for k, v in given.items()})
    return [(k.encode(), v) for k, v in base.items()]


def test_a_plain_handshake_is_answered_with_the_rfcs_accept() -> None:
    assert handshake_accept("GET", "1.1", headers()) == ACCEPT


@pytest.mark.parametrize(
    ("method", "version", "given"),
    [
        ("POST", "1.1", headers()),
        ("GET", "1.0", headers()),
        ("GET", "1.1", headers(sec_websocket_version=b"8")),
        ("GET", "1.1", headers(sec_websocket_key=b"not base64!")),
        ("GET", "1.1", headers(sec_websocket_key=b"c2hvcnQ=")),  # 5 bytes, not 16
        ("GET", "1.1", headers(sec_websocket_protocol=b"chat")),
        ("GET", "1.1", [h for h in headers() if h[0] != b"host"]),
        ("GET", "1.1", [h for h in headers() if h[0] != b"sec-websocket-key"]),
        ("GET", "1.1", [*headers(), (b"sec-websocket-key", KEY)]),  # two keys
    ],
)
def test_anything_else_is_left_to_the_library(
    method: str, version: str, given: list[tuple[bytes, bytes]]
) -> None:
    assert handshake_accept(method, version, given) is None


def upgrade(port: int, path: str, **extra: str) -> tuple[socket.socket, bytes, bytes]:
    """Send an opening handshake for ``path``; the socket, the server's head and what came
    after it in the same reads."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    fields = {"host": "127.0.0.1", "upgrade": "websocket", "connection": "Upgrade",
            "sec-websocket-key": KEY.decode(), "sec-websocket-version": "13", **extra}  # fmt: skip
    request = f"GET {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items())
    sock.sendall(request.encode() + b"\r\n")
    seen = b""
    while b"\r\n\r\n" not in seen:
        chunk = sock.recv(65536)
        assert chunk, f"closed before an answer: {seen!r}"
        seen += chunk
    head, _, rest = seen.partition(b"\r\n\r\n")
    return sock, head, rest


def send_text(sock: socket.socket, text: str) -> None:
    """One masked text frame (a client's)."""
    data, mask = text.encode(), b"\x01\x02\x03\x04"
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
    assert len(data) < 126
    sock.sendall(bytes([0x81, 0x80 | len(data)]) + mask + masked)


def read_messages(
    sock: socket.socket, until: str, buffer: bytes = b"", within: float = 10.0
) -> list[Any]:
    """The server's text messages (unmasked frames, the first bytes of them ``buffer``) until
    one of type ``until``, or a close (``("close", code)``)."""
    out: list[Any] = []
    deadline = time.monotonic() + within
    sock.settimeout(within)
    while time.monotonic() < deadline:
        while len(buffer) >= 2:
            n, at = buffer[1] & 0x7F, 2
            if n == 126:
                if len(buffer) < 4:
                    break
                (n,), at = struct.unpack("!H", buffer[2:4]), 4
            if len(buffer) < at + n:
                break
            opcode, payload, buffer = buffer[0] & 0x0F, buffer[at : at + n], buffer[at + n :]
            if opcode == 0x8:
                return [*out, ("close", struct.unpack("!H", payload[:2])[0])]
            message = json.loads(payload)
            out.append(message)
            if message.get("type") == until:
                return out
        chunk = sock.recv(65536)
        if not chunk:
            break
        buffer += chunk
    return out


def test_a_tables_socket_is_opened_by_the_transport_itself_and_plays(live: Live) -> None:
    seated = httpx.post(f"{live.http}/api/tables", json={"name": "Ana"}).json()
    sock, head, rest = upgrade(int(live.http.rsplit(":", 1)[1]), f"/ws/{seated['code']}")
    with sock:
        status, *lines = head.split(b"\r\n")
        assert status == b"HTTP/1.1 101 Switching Protocols"
        # The transport's own answer: the handshake's three headers and nothing else (the
        # library's says who it is and when).
        assert sorted(line.split(b": ")[0].lower() for line in lines) == [
            b"connection", b"sec-websocket-accept", b"upgrade"]  # fmt: skip
        assert b"Sec-WebSocket-Accept: " + ACCEPT in lines
        send_text(sock, json.dumps({"type": "hello", "token": seated["token"]}))
        welcome = read_messages(sock, "welcome", rest)
        assert welcome[-1]["type"] == "welcome" and welcome[-1]["seat"] == seated["seat"]


def test_a_socket_for_no_table_is_still_told_not_found_and_closed_4404(live: Live) -> None:
    sock, head, rest = upgrade(int(live.http.rsplit(":", 1)[1]), "/ws/NOPE42")
    with sock:
        assert head.startswith(b"HTTP/1.1 101")
        said = read_messages(sock, "never", rest)
        assert said[0]["type"] == "error" and said[0]["code"] == "not_found"
        assert said[-1] == ("close", 4404)


def test_a_handshake_of_another_version_is_refused_by_the_library_as_before(live: Live) -> None:
    seated = httpx.post(f"{live.http}/api/tables", json={"name": "Ana"}).json()
    port = int(live.http.rsplit(":", 1)[1])
    sock, head, rest = upgrade(port, f"/ws/{seated['code']}", **{"sec-websocket-version": "8"})
    with sock:
        assert head.startswith(b"HTTP/1.1 400"), head
        assert b"invalid Sec-WebSocket-Version header: 8" in rest
