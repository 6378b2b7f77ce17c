"""A cheap HTTP/1.1 client for load generators: keep-alive connections, one request each at
a time, on ``asyncio.Protocol`` s.

A generator opens thousands of tables, each a create, three joins and a look at the table:
on ``httpx`` that cost the generator more CPU a player than the server's own set-up (its
pool checks every idle connection's socket for each request, and its async backend is
looked up anew each time; ``bench/table_setup.py`` prints the generator's CPU a player), so
that in a burst of new tables the generator, late itself, took its lateness for the
server's. This client does what the generator needs of HTTP and no more: a request is one
write of a fixed head and a JSON body; a reply is read by its ``Content-Length`` (the
server's JSON replies all carry one; anything else fails the request). A connection idle for
:data:`IDLE_S` is closed before it is reused, well inside the server's keep-alive (5 s), so
that no request is written to a connection the server is closing. Only loopback is meant.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: A kept-alive connection unused this long (s) is closed rather than reused.
IDLE_S = 2.0
#: The longest reply head read (bytes).
MAX_HEAD = 16 * 1024


class HttpError(ConnectionError):
    """The request failed: the connection broke, or its reply was not one this client reads."""


@dataclass(frozen=True)
class Reply:
    """A reply: its status, its headers (names in lower case), its body."""

    status_code: int
    headers: Mapping[str, str]
    content: bytes

    def json(self) -> Any:
        return json.loads(self.content)

    @property
    def text(self) -> str:
        return self.content.decode()


class _Connection(asyncio.Protocol):
    """One kept-alive connection: one request at a time (:meth:`exchange`)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.reply: asyncio.Future[Reply] | None = None
        self.closed = False
        self.used_at = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        reply = self.reply
        if reply is None or reply.done():
            return
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > MAX_HEAD:
                self._fail("a reply head past its size limit")
            return
        lines = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = headers.get("content-length")
        if len(parts) < 2 or not parts[1].isdigit() or length is None or not length.isdigit():
            self._fail(f"a reply this client does not read: {lines[0]!r}")
            return
        size = end + 4 + int(length)
        if len(self.buffer) < size:
            return
        body = bytes(self.buffer[end + 4 : size])
        del self.buffer[:size]
        if headers.get("connection", "").lower() == "close":
            self.closed = True
        reply.set_result(Reply(int(parts[1]), headers, body))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._fail("the connection closed")

    def _fail(self, why: str) -> None:
        self.closed = True
        if self.reply is not None and not self.reply.done():
            self.reply.set_exception(HttpError(why))
        if self.transport is not None:
            self.transport.close()

    async def exchange(self, request: bytes) -> Reply:
        assert self.transport is not None
        self.reply = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return await self.reply

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class HttpPool:
    """At most ``size`` kept-alive connections to ``host:port``; :meth:`post` and
    :meth:`get` wait for a free one."""

    def __init__(self, host: str, port: int, size: int) -> None:
        self.host, self.port = host, port
        self.gate = asyncio.Semaphore(size)
        self.idle: list[_Connection] = []
        self.loop = asyncio.get_running_loop()
        self._host = f"{host}:{port}".encode()

    async def post(self, path: str, json_body: Any) -> Reply:
        body = json.dumps(json_body, separators=(",", ":")).encode()
        head = b"POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n" % (
            path.encode(),
            self._host,
        )
        return await self._send(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def get(self, path: str) -> Reply:
        head = b"GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (path.encode(), self._host)
        return await self._send(head)

    async def _send(self, request: bytes) -> Reply:
        async with self.gate:
            conn = self._take()
            if conn is None:
                _, conn = await self.loop.create_connection(_Connection, self.host, self.port)
            try:
                reply = await conn.exchange(request)
            except BaseException:
                conn.close()
                raise
            if not conn.closed:
                conn.used_at = self.loop.time()
                self.idle.append(conn)
            return reply

    def _take(self) -> _Connection | None:
        """The most recently used idle connection still fresh; the stale ones closed."""
        now = self.loop.time()
        while self.idle:
            conn = self.idle.pop()
            if not conn.closed and now - conn.used_at < IDLE_S:
                return conn
            conn.close()
        return None

    async def aclose(self) -> None:
        for conn in self.idle:
            conn.close()
        self.idle.clear()
