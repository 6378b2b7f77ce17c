"""One node of a cluster, on the event loop: its beat, its share of orphaned tables, its
lobby entries, and the HTTP requests it passes to the node that owns their table.

:mod:`flyswat.server.cluster` says who owns what; this module keeps this node's part of it
up to date (:func:`keep`, a task of the server) and routes what reaches the wrong node:

- a WebSocket for a table owned elsewhere is answered ``moved`` with the owner's address
  (``docs/PROTOCOL.md``), the way the field does it: the client talks to the owner itself,
  and no node relays its messages;
- an HTTP command for such a table (join, start, a table's info) is forwarded to the owner
  and its answer passed back (:class:`Forwarder`), so a client needs one address only.

A forwarded request names its client's address in ``x-flyswat-client``, believed only with
the cluster's secret (:class:`TrustedForward`), so the per-address limits still see the
client rather than the node.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from flyswat import protocol as p
from flyswat.server.cluster import Cluster, Owner
from flyswat.server.runner import Runner
from flyswat.server.transport import error_body

log = logging.getLogger("flyswat.server")

CLIENT_HEADER = "x-flyswat-client"
SECRET_HEADER = "x-flyswat-secret"
#: The headers of a forwarded request's answer passed back to the client.
PASSED_HEADERS = ("content-type", "retry-after", "x-flyswat-node-url")


def _wild(host: str | None) -> bool:
    return host in (None, "", "0.0.0.0", "::", "[::]")


def internal_url(url: str) -> str:
    """Where another node reaches ``url``: a wildcard host is this machine."""
    parts = urlsplit(url)
    if _wild(parts.hostname):
        port = f":{parts.port}" if parts.port else ""
        return urlunsplit((parts.scheme, f"127.0.0.1{port}", parts.path, "", ""))
    return url.rstrip("/")


def socket_url(url: str, code: str, host: str | None) -> str:
    """The WebSocket address of table ``code`` at the node of ``url``, for a client that
    reached this node as ``host`` (the Host header): a wildcard host is the client's."""
    parts = urlsplit(url)
    scheme = "wss" if parts.scheme == "https" else "ws"
    netloc = parts.netloc
    if _wild(parts.hostname):
        name = (urlsplit(f"//{host}").hostname if host else None) or "127.0.0.1"
        name = f"[{name}]" if ":" in name else name  # an IPv6 address
        netloc = f"{name}:{parts.port}" if parts.port else name
    return urlunsplit((scheme, netloc, parts.path.rstrip("/") + f"/ws/{code}", "", ""))


class Forwarder:
    """Passes HTTP requests to the node that owns their table."""

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(10.0, connect=2.0))

    async def forward(
        self, request: Request, owner: Owner, body: bytes, path: str | None = None,
        method: str | None = None,
    ) -> Response:  # fmt: skip
        """Ask ``owner`` the same request (or ``method`` ``path`` with ``body``, for the
        same client); its answer, or ``503 moved`` if it cannot be reached (the table is
        being handed over: the client tries again)."""
        if request.headers.get(SECRET_HEADER) or owner.url is None:
            return _moved()  # forwarded once already: no loops between nodes
        client = request.scope.get("client")
        kind = request.headers.get("content-type", "application/json")
        headers = {SECRET_HEADER: self.secret, CLIENT_HEADER: client[0] if client else "",
                   "content-type": kind}  # fmt: skip
        url = internal_url(owner.url) + (path or request.url.path)
        if request.url.query and path is None:
            url += "?" + request.url.query
        try:
            reply = await self.client.request(
                method or request.method, url, content=body, headers=headers
            )
        except httpx.HTTPError:
            return _moved()
        kept = {k: v for k, v in reply.headers.items() if k in PASSED_HEADERS}
        return Response(reply.content, status_code=reply.status_code, headers=kept)

    async def close(self) -> None:
        await self.client.aclose()


def _moved() -> Response:
    body = error_body("moved", "the table is moving to another node: try again")
    return JSONResponse(body, status_code=503, headers={"retry-after": "1"})


class TrustedForward:
    """ASGI middleware: a request forwarded by a node of this cluster (it carries the
    cluster's secret) is taken to come from the client address the node names."""

    def __init__(self, app: ASGIApp, secret: str) -> None:
        self.app = app
        self.secret = secret.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(SECRET_HEADER.encode()) == self.secret:
                named = headers.get(CLIENT_HEADER.encode(), b"").decode()
                scope = dict(scope, client=(named, 0))
            elif SECRET_HEADER.encode() in headers:
                response = Response("wrong cluster secret", status_code=403)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def keep(runner: Runner, cluster: Cluster, beat_s: float | None = None) -> None:
    """This node's part of the cluster, for as long as it serves (its beats come from a
    thread: :meth:`Cluster.start_beating`): every ``beat_s`` (the timings' by default), its
    share of the tables whose node died; and, every ``check_every`` beats, the tables it
    lost let go (a lost table is found at its next write in any case: the store's fence)."""
    beat_s = beat_s or cluster.timings.beat_s
    beats = 0
    while True:
        await asyncio.sleep(beat_s)
        if runner.draining:
            return
        try:
            stalled = cluster.stale()  # paused past its lease: look at once, not in 5 beats
            peers = dict(cluster.peers)  # as the beat thread last saw them
            taken = await asyncio.to_thread(runner.adopt_orphans, peers)
            for code in taken:
                if code not in runner.tables:
                    log.info("adopted table %s", code)
                    runner.find(code)
            beats += 1
            if stalled or beats % cluster.timings.check_every == 0:
                await let_go(runner, cluster)
        except Exception:  # the store or Redis is away for a moment: beat again next time
            log.exception("the cluster's beat failed")


async def let_go(runner: Runner, cluster: Cluster) -> None:
    """Drop the tables another node owns now. Only tables whose creation is stored are
    asked about (a table made meanwhile is this node's whatever the answer), and each is
    asked again on its own before it is dropped. Once done, a lapse of this node's lease
    seen before it began is settled (:meth:`Cluster.checked`)."""
    lapses = cluster.lapses
    settled = runner.settled()
    mine = await asyncio.to_thread(cluster.mine)
    gone = set()
    for code in settled - mine:
        if code in runner.tables and not await asyncio.to_thread(cluster.mine_still, code):
            gone.add(code)
    if gone:
        runner.lost(gone)
    cluster.checked(lapses)


async def publish(runner: Runner, cluster: Cluster, every_s: float | None = None) -> None:
    """Keep this node's open public tables in the shared lobby list, published every
    ``every_s`` (the timings' ``publish_s`` by default)."""
    every_s = every_s or cluster.timings.publish_s
    while True:
        await asyncio.sleep(every_s)
        if not set(cluster.peers) - {cluster.node}:
            continue  # nobody else reads it: a node alone lists its own tables as they are
        changes = runner.lobby_changes()
        if not changes:
            continue
        try:
            await asyncio.to_thread(cluster.shared.publish, cluster.node, changes, time.time())
        except Exception:
            log.exception("publishing the lobby failed")
            continue
        runner.published(changes)


def lobby(
    runner: Runner, cluster: Cluster | None, listing: list[Any]
) -> list[tuple[float, dict[str, Any]]]:
    """The lobby's list, newest first, as ``(listed at, TableInfo's fields)``: this node's
    listed tables as they are now, and the other live nodes' as they published them
    (``listing``: the shared list)."""
    now, wall = runner.clock(), time.time()
    entries: list[tuple[float, dict[str, Any]]] = []
    for code, table in runner.tables.items():
        if table.listed():
            entries.append((runner.born.get(code, wall), table.info(now).model_dump()))
    peers = cluster.peers if cluster is not None else {}
    for x in listing:
        if x.code in runner.tables or x.node not in peers or x.info.get("state") != "lobby":
            continue  # (the shared list holds Live now's games too)
        info = dict(x.info)
        fill_at = info.pop("fill_at", None)
        info["fill_in_ms"] = None if fill_at is None else max(0, round((fill_at - wall) * 1000))
        entries.append((x.listed_at, info))
    entries.sort(key=lambda e: -e[0])
    return entries


def live(runner: Runner, cluster: Cluster | None, listing: list[Any]) -> list[p.LiveGame]:
    """Live now: the public games being played, the best-rated first, then the most
    watched: this node's as they are now, and the other live nodes' as they published them
    in the shared list (``listing``, as for :func:`lobby`)."""
    now = runner.clock()
    infos = [t.info(now).model_dump() for t in runner.tables.values() if t.live()]
    peers = cluster.peers if cluster is not None else {}
    infos += [x.info for x in listing if x.code not in runner.tables and x.node in peers
              and x.info.get("state") == "playing"]  # fmt: skip
    games = [live_game(info) for info in infos]
    games.sort(key=lambda g: (g.rating is None, -(g.rating or 0), -g.spectators, g.code))
    return games


def live_game(info: dict[str, Any]) -> p.LiveGame:
    """A table's entry in Live now, from its info (``TableInfo``'s fields)."""
    ratings = [x["rating"] for x in info["players"] if x.get("rating") is not None]
    rating = round(sum(ratings) / len(ratings)) if ratings else None
    return p.LiveGame(code=info["code"], rating=rating, players=info["players"],
                      spectators=info.get("spectators", 0), games=info.get("games", 0))  # fmt: skip


async def stop_tasks(tasks: list[asyncio.Task[Any]]) -> None:
    """Cancel ``tasks`` and wait for them."""
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
