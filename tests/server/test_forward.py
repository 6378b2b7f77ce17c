"""A node passes a request for another node's table on (``flyswat.server.node.Forwarder``)
over kept-alive connections. It lets one go before the peer's own keep-alive ends: else the
peer may close it just as a request is sent on it, and the request fails — under load, a
join answered ``503 moved`` (seen in ``bench/rhythm.py --workers-each 2``: httpx's
``ReadError`` on a connection the other worker had just closed)."""

from __future__ import annotations

import time

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from flyswat.server.cluster import Owner
from flyswat.server.limits import Limits
from flyswat.server.node import Forwarder
from flyswat.server.transport import uvicorn_config

from .conftest import in_thread

KEEP_ALIVE_S = 1


def _request(path: str) -> Request:
    scope = {"type": "http", "method": "GET", "path": path, "query_string": b"",
             "headers": [(b"host", b"127.0.0.1")], "client": ("127.0.0.1", 1),
             "server": ("127.0.0.1", 80), "scheme": "http"}  # fmt: skip
    return Request(scope)


@pytest.mark.anyio
async def test_a_kept_alive_connection_is_let_go_before_the_peers_keep_alive_ends() -> None:
    seen: list[int] = []

    async def where(request: Request) -> JSONResponse:
        assert request.client is not None
        seen.append(request.client.port)
        return JSONResponse({"ok": True})

    peer = Starlette(routes=[Route("/where", where)])
    limits = Limits(keep_alive_s=KEEP_ALIVE_S)
    with in_thread(peer, uvicorn_config(limits)) as port:
        # (a connect given long: on a machine loaded by the whole suite, a new connection
        # once took over the node's 2 s, and the late request was answered 503)
        forwarder = Forwarder("secret", limits.keep_alive_s, connect_s=10.0)
        owner = Owner("peer", f"http://127.0.0.1:{port}", True)
        try:
            first = await forwarder.forward(_request("/where"), owner, b"")
            again = await forwarder.forward(_request("/where"), owner, b"")  # at once: kept
            time.sleep(0.7 * KEEP_ALIVE_S)  # the peer still keeps it; the forwarder does not
            late = await forwarder.forward(_request("/where"), owner, b"")
        finally:
            await forwarder.close()
    assert [first.status_code, again.status_code, late.status_code] == [200, 200, 200]
    assert seen[0] == seen[1], "a connection is kept alive between requests close together"
    assert seen[2] != seen[1], "a connection near the peer's keep-alive is not used again"
