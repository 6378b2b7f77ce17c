"""The generator's cheap HTTP client (``bench/harness/http.py``) against a real server.

A ``flyswat`` app served in this process: creates and joins through one pool reuse their
connections; a connection left idle past ``IDLE_S`` is not reused; a reply the client does
not read (no ``Content-Length``) fails its request with :class:`HttpError`, never a wrong
answer.
"""

from __future__ import annotations

import asyncio

import pytest

from harness import http
from harness.http import HttpError, HttpPool

from .conftest import Live


def test_creates_and_joins_share_kept_alive_connections(live: Live) -> None:
    port = int(live.http.rsplit(":", 1)[1])

    async def main() -> tuple[list[int], set[int], str]:
        pool = HttpPool("127.0.0.1", port, size=2)
        made, used = [], set()
        for i in range(3):
            reply = await pool.post("/api/tables", {"name": f"Ana{i}", "seats": 2})
            made.append(reply.status_code)
            code = reply.json()["code"]
            joined = await pool.post(f"/api/tables/{code}/join", {"name": "Bea"})
            made.append(joined.status_code)
            used |= {id(c) for c in pool.idle}
        info = await pool.get(f"/api/tables/{code}")
        await pool.aclose()
        return made, used, info.json()["players"][1]["name"]

    made, used, name = asyncio.run(main())
    assert made == [201] * 6
    assert len(used) == 1  # one after another: one connection
    assert name == "Bea"


def test_one_connection_serves_one_request_after_another_and_a_stale_one_is_not_reused(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = int(live.http.rsplit(":", 1)[1])

    async def main() -> tuple[bool, bool, int]:
        pool = HttpPool("127.0.0.1", port, size=1)
        await pool.get("/health")
        first = pool.idle[0]
        await pool.get("/health")
        reused = pool.idle[0] is first
        monkeypatch.setattr(http, "IDLE_S", 0.0)
        await pool.get("/health")
        fresh = pool.idle[0] is not first and first.closed
        await pool.aclose()
        return reused, fresh, len(pool.idle)

    assert asyncio.run(main()) == (True, True, 0)


def test_a_reply_without_a_length_fails_its_request() -> None:
    async def main() -> None:
        answered = asyncio.Event()

        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"
            )
            await writer.drain()
            await reader.read()  # until the client gives up on it
            writer.close()
            await writer.wait_closed()
            answered.set()

        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        pool = HttpPool("127.0.0.1", port, size=1)
        with pytest.raises(HttpError, match="does not read"):
            await pool.get("/")
        assert pool.idle == []  # a broken connection is never kept
        await answered.wait()
        server.close()
        await server.wait_closed()

    asyncio.run(main())
