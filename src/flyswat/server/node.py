"""One node of a cluster, on the event loop: which tables are its own (:class:`Node`: its
beat, its share of orphaned tables, the tables it lost, its lobby entries, its hand-over),
and the HTTP requests it passes to the node that owns their table.

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
import hashlib
import logging
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from flyswat import protocol as p
from flyswat.errors import IllegalActionError
from flyswat.server.cluster import Cluster, Owner
from flyswat.server.directory import Directory
from flyswat.server.transport import error_body
from flyswat.table.core import Table

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

    def __init__(self, secret: str, peer_keep_alive_s: float = 5.0,
                 connect_s: float = 2.0) -> None:  # fmt: skip
        self.secret = secret
        # A kept-alive connection is let go well before the peer's own keep-alive ends
        # (``--keep-alive``, the same on every node): else the peer may close it just as a
        # request is sent on it, and that request fails (a join answered 503 under load).
        limits = httpx.Limits(keepalive_expiry=peer_keep_alive_s / 2)
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(10.0, connect=connect_s),
                                        limits=limits)  # fmt: skip

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
        except httpx.HTTPError as e:
            log.warning("node %s did not answer %s %s: %s", owner.node, method or request.method,
                        path or request.url.path, type(e).__name__)  # fmt: skip
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


class Node:
    """This node's part of the cluster for its tables (:class:`Directory`): which it runs,
    adopts and lets go, its entries in the shared lists, and its hand-over. Without a
    cluster (a test of the tables alone), every stored table is this node's."""

    def __init__(self, directory: Directory, cluster: Cluster | None) -> None:
        self.directory = directory
        self.executor = directory.executor
        self.cluster = cluster
        self._orphaned: dict[str, float] = {}  # when each unowned table was first seen
        #: The lobby entries last published. A live game's, made again only when it changed
        #: (``_entries``), is the same object until then: found unchanged without a compare.
        self._published: dict[str, dict[str, Any]] = {}
        #: A live game's entry as last made, by its :meth:`~flyswat.table.core.Table.
        #: listing_key`: made again only when the key changes.
        self._entries: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}

    # -- which tables are this node's ------------------------------------------------------

    def restore(self) -> None:
        """Rebuild every stored table in the lobby or in play that this node may run (its
        own from before a restart, and those nobody live owns) and resume it."""
        directory, store = self.directory, self.directory.store
        if self.cluster is None:
            for code, state in store.codes():
                if state in ("lobby", "playing"):
                    directory.load(code)
            return
        peers = self.cluster.beat()
        mine = self.cluster.mine()
        for code, state in store.codes():
            if state in ("lobby", "playing") and code in mine:
                directory.load(code)
        self.adopt_orphans(peers, everyone=True)

    def adopt_orphans(self, peers: dict[str, str], everyone: bool = False) -> list[str]:
        """Adopt tables whose owner is gone: this node's share of them (spread by code over
        the live nodes), or any left unadopted for a while, or all (``everyone``).
        Synchronous: call it on a thread, or at start-up. Returns the codes adopted; the
        tables are rebuilt on the loop."""
        assert self.cluster is not None
        live = sorted(peers)
        rank = live.index(self.cluster.node) if self.cluster.node in live else 0
        now = time.time()
        patience = 2 * self.cluster.timings.dead_after_s  # then anyone takes it
        taken = []
        seen = set()
        for code, owner in self.cluster.orphans(live):
            seen.add(code)
            first = self._orphaned.setdefault(code, now)
            share = _spread(code, len(live)) == rank
            if (everyone or share or now - first > patience) and self.cluster.adopt(
                code, dead=[owner] if owner is not None else []
            ):
                taken.append(code)
        for code in list(self._orphaned):
            if code not in seen or code in taken:
                del self._orphaned[code]
        if everyone:
            for code in taken:
                self.directory.load(code)
        return taken

    def here(self, code: str) -> Table | None:
        """Table ``code`` if this node runs it and knows so without asking anyone (in
        memory, and its lease not stale); else None: :meth:`locate` finds out."""
        table = self.directory.tables.get(code)
        if table is None or self.cluster is None or not self.cluster.stale():
            return table
        return None

    async def locate(self, code: str) -> Table | Owner | None:
        """Table ``code`` if this node runs it — adopting it if nobody live does, and
        rebuilding it from the store —, else its live owner; None if there is no such table."""
        directory = self.directory
        table = directory.tables.get(code)
        if self.cluster is None:
            return table or await directory.find(code)
        cluster = self.cluster
        if table is not None and not cluster.stale():
            return table
        if table is not None:  # this node was paused past its lease: is the table still its?
            if await asyncio.to_thread(cluster.mine_still, code):
                return table
            self.lost({code})
        owner = await asyncio.to_thread(cluster.owner, code)
        if owner.alive and owner.node != cluster.node:
            return owner
        if self.executor.draining or not await asyncio.to_thread(directory.store.exists, code):
            return None
        if await asyncio.to_thread(cluster.adopt, code):
            return await directory.find(code)
        owner = await asyncio.to_thread(cluster.owner, code)  # another node was faster
        return owner if owner.alive else None

    async def table(self, code: str) -> Table | Owner:
        """:meth:`locate`; raises ``not_found``."""
        found = await self.locate(code)
        if found is None:
            raise IllegalActionError(f"no table {code!r}", "not_found")
        return found

    def lost(self, codes: set[str]) -> None:
        """Another node owns these tables now (the store refused their events): drop them
        without telling anything not stored, and send their players to look again."""
        for code in codes:
            table = self.directory.drop(code)
            self._published.pop(code, None)  # its entry is the new owner's to change now
            self._entries.pop(code, None)
            if table is None:
                continue
            table.let_go()
            log.warning("table %s is owned by another node now: dropped here", code)
            links = self.executor.links
            for conn in list(table.conns) + list(table.strangers):
                link = links.get(conn)
                if link is not None:
                    link.moved(None)

    def settled(self) -> set[str]:
        """The tables in memory with nothing waiting to be stored (their creation included)."""
        pending = self.executor.pending
        return {code for code in self.directory.tables if not pending(code)}

    async def hand_over(self) -> None:
        """Stop taking commands, store what is pending, give every table up for another
        node to adopt, and send every client there (a graceful shutdown)."""
        executor = self.executor
        executor.draining = True
        executor.stop_timers()
        for table in list(self.directory.tables.values()):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(executor.stored(table), 5)
        if self.cluster is not None:
            await asyncio.to_thread(self.cluster.leave)
        for link in list(executor.links.values()):
            link.moved(None)

    # -- the cluster's loops ---------------------------------------------------------------

    async def keep(self, beat_s: float | None = None) -> None:
        """This node's part of the cluster, for as long as it serves (its beats come from a
        thread: :meth:`Cluster.start_beating`): every ``beat_s`` (the timings' by default),
        its share of the tables whose node died; and, every ``check_every`` beats, the
        tables it lost let go (a lost table is found at its next write in any case: the
        store's fence)."""
        cluster = self.cluster
        assert cluster is not None
        beat_s = beat_s or cluster.timings.beat_s
        beats = 0
        while True:
            await asyncio.sleep(beat_s)
            if self.executor.draining:
                return
            try:
                stalled = cluster.stale()  # paused past its lease: look at once, not in 5 beats
                peers = dict(cluster.peers)  # as the beat thread last saw them
                taken = await asyncio.to_thread(self.adopt_orphans, peers)
                for code in taken:
                    if code not in self.directory.tables:
                        log.info("adopted table %s", code)
                        await self.directory.find(code)
                beats += 1
                if stalled or beats % cluster.timings.check_every == 0:
                    await self.let_go()
            except Exception:  # the store or Redis is away for a moment: beat again next time
                log.exception("the cluster's beat failed")

    async def let_go(self) -> None:
        """Drop the tables another node owns now. Only tables whose creation is stored are
        asked about (a table made meanwhile is this node's whatever the answer), and each is
        asked again on its own before it is dropped. Once done, a lapse of this node's lease
        seen before it began is settled (:meth:`Cluster.checked`)."""
        cluster = self.cluster
        assert cluster is not None
        lapses = cluster.lapses
        settled = self.settled()
        mine = await asyncio.to_thread(cluster.mine)
        gone = set()
        for code in settled - mine:
            if code in self.directory.tables and not await asyncio.to_thread(
                cluster.mine_still, code
            ):
                gone.add(code)
        if gone:
            self.lost(gone)
        cluster.checked(lapses)

    async def publish(self, every_s: float | None = None) -> None:
        """Keep this node's open public tables in the shared lobby list, published every
        ``every_s`` (the timings' ``publish_s`` by default)."""
        cluster = self.cluster
        assert cluster is not None
        every_s = every_s or cluster.timings.publish_s
        while True:
            await asyncio.sleep(every_s)
            if not set(cluster.peers) - {cluster.node}:
                continue  # nobody else reads it: a node alone lists its own tables as they are
            changes = self.lobby_changes()
            if not changes:
                continue
            try:
                await asyncio.to_thread(cluster.shared.publish, cluster.node, changes, time.time())
            except Exception:
                log.exception("publishing the lobby failed")
                continue
            self.published(changes)

    # -- the shared lists ------------------------------------------------------------------

    def lobby_changes(self) -> dict[str, dict[str, Any] | None]:
        """The entries of this node's tables in the shared list that changed since they were
        last published (:meth:`published`): the info of a listed table (the lobby's) or of a
        live one (Live now's: its ``state`` tells them apart), or None for one no longer
        listed. ``fill_at`` (wall-clock s) stands for the bots' countdown."""
        now, wall = self.executor.clock(), time.time()
        tables = self.directory.tables
        changes: dict[str, dict[str, Any] | None] = {}
        for code, table in tables.items():
            if table.listed():  # a lobby's entry has a countdown in it: made every time
                info = _entry(table, now, wall)
            elif table.live():
                key, made = table.listing_key(), self._entries.get(code)
                if made is None or made[0] != key:
                    made = self._entries[code] = (key, _entry(table, now, wall))
                info = made[1]
            else:
                self._entries.pop(code, None)
                if code in self._published:
                    changes[code] = None
                continue
            was = self._published.get(code)
            if was is not info and was != info:
                changes[code] = info
        for code in self._published:
            if code not in tables:
                changes[code] = None
        for code in [c for c in self._entries if c not in tables]:
            del self._entries[code]  # the table left this node
        return changes

    def published(self, changes: dict[str, dict[str, Any] | None]) -> None:
        """``changes`` (:meth:`lobby_changes`) are published."""
        for code, info in changes.items():
            if info is None:
                self._published.pop(code, None)
            else:
                self._published[code] = info

    def lobby(self, listing: list[Any]) -> list[tuple[float, dict[str, Any]]]:
        """The lobby's list, newest first, as ``(listed at, TableInfo's fields)``: this
        node's listed tables as they are now, and the other live nodes' as they published
        them (``listing``: the shared list)."""
        now, wall = self.executor.clock(), time.time()
        tables, born = self.directory.tables, self.directory.born
        entries: list[tuple[float, dict[str, Any]]] = []
        for code, table in tables.items():
            if table.listed():
                entries.append((born.get(code, wall), table.info(now).model_dump()))
        peers = self.cluster.peers if self.cluster is not None else {}
        for x in listing:
            if x.code in tables or x.node not in peers or x.info.get("state") != "lobby":
                continue  # (the shared list holds Live now's games too)
            info = dict(x.info)
            fill_at = info.pop("fill_at", None)
            info["fill_in_ms"] = None if fill_at is None else max(0, round((fill_at - wall) * 1000))
            entries.append((x.listed_at, info))
        entries.sort(key=lambda e: -e[0])
        return entries

    def live(self, listing: list[Any]) -> list[p.LiveGame]:
        """Live now: the public games being played, the best-rated first, then the most
        watched: this node's as they are now, and the other live nodes' as they published
        them in the shared list (``listing``, as for :meth:`lobby`)."""
        now, tables = self.executor.clock(), self.directory.tables
        infos = [t.info(now).model_dump() for t in tables.values() if t.live()]
        peers = self.cluster.peers if self.cluster is not None else {}
        infos += [x.info for x in listing if x.code not in tables and x.node in peers
                  and x.info.get("state") == "playing"]  # fmt: skip
        games = [live_game(info) for info in infos]
        games.sort(key=lambda g: (g.rating is None, -(g.rating or 0), -g.spectators, g.code))
        return games


def _entry(table: Table, now: float, wall: float) -> dict[str, Any]:
    """``table``'s entry in the shared list: its info, ``fill_at`` for the countdown."""
    info = table.info(now).model_dump()
    fill = info.pop("fill_in_ms", None)
    info["fill_at"] = None if fill is None else round(wall + fill / 1000, 1)
    return info


def _spread(code: str, nodes: int) -> int:
    """Which of ``nodes`` live nodes (in the order of their ids) adopts an orphan table."""
    return int.from_bytes(hashlib.blake2b(code.encode(), digest_size=4).digest(), "big") % max(
        1, nodes
    )


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
