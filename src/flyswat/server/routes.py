"""The tables' routes: HTTP (create, list, join, start, a table's info and record, health)
and the WebSocket endpoint, each thin on purpose.

A handler parses its input with the :mod:`flyswat.protocol` models and hands one command to
its table through the :class:`~flyswat.server.runner.Runner`; a refused request raises
:class:`~flyswat.errors.FlyswatError`, answered by the application's handler
(:func:`flyswat.server.replies.refused`). A refused WebSocket message is answered by the
table itself. See ``docs/PROTOCOL.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from flyswat import native
from flyswat import protocol as p
from flyswat.bots import LEVELS
from flyswat.errors import FlyswatError, IllegalActionError, MalformedError
from flyswat.server import node, players_store, replies
from flyswat.server.cluster import Owner
from flyswat.server.connection import CLOSE_EXPIRED, CLOSE_MOVED, CLOSE_NOT_FOUND, Session
from flyswat.server.limits import AddressBuckets, Limits
from flyswat.server.netinfo import network_reader, rtt_reader
from flyswat.server.players_routes import Players
from flyswat.server.runner import Runner, monotonic_ms
from flyswat.server.store import Store
from flyswat.server.transport import PROTOCOL_KEY, OpenSocket, client_address, read_body
from flyswat.table.core import Table
from flyswat.table.io import Join, StartBy

#: Tables listed per page of ``GET /api/tables``, by default and at most.
PAGE, MAX_PAGE = 50, 200
#: Games listed by ``GET /api/live``, by default and at most.
LIVE, MAX_LIVE = 20, 100


class TableRoutes:
    """The routes of the tables of one node (``runner``)."""

    def __init__(
        self, runner: Runner, creates: AddressBuckets, limits: Limits, rtt_fronts: frozenset[str],
        players: Players, forwarder: node.Forwarder | None = None,
    ) -> None:  # fmt: skip
        """``creates``: the new tables each address may make; ``rtt_fronts``: the fronts
        whose round-trip header is believed (:mod:`flyswat.server.netinfo`); ``forwarder``:
        passes a request for a table of another node to its owner."""
        self.runner = runner
        self.creates = creates
        self.limits = limits
        self.rtt_fronts = rtt_fronts
        self.players = players
        self.forwarder = forwarder

    def routes(self) -> list[Route | WebSocketRoute]:
        return [
            Route("/health", self.health),
            Route("/ready", self.ready),
            Route("/api/tables", self.create, methods=["POST"]),
            Route("/api/tables", self.list_tables, methods=["GET"]),
            Route("/api/live", self.live_games),
            Route("/api/tables/{code}", self.get_table),
            Route("/api/tables/{code}/join", self.join, methods=["POST"]),
            Route("/api/tables/{code}/start", self.start, methods=["POST"]),
            Route("/api/tables/{code}/record", self.record),
            WebSocketRoute("/ws/{code}", self.ws),
        ]

    async def health(self, _: Request) -> JSONResponse:
        cluster, tables = self.runner.cluster, self.runner.directory.tables
        return JSONResponse({"ok": True, "tables": len(tables), "pid": os.getpid(),
                             "node": cluster.node if cluster else None,
                             "nodes": len(cluster.peers) if cluster else 1,
                             "hot_path": native.STATE.how})  # fmt: skip

    async def ready(self, _: Request) -> JSONResponse:
        """Ready: started, its store reachable, not shutting down."""
        if self.runner.executor.draining or self.runner.executor.writer is None:
            return JSONResponse({"ready": False}, status_code=503)
        return JSONResponse({"ready": True})

    async def _here(self, request: Request) -> Table | Response:
        """The request's table if this node runs it; else the owner's answer to it."""
        found = await self.runner.node.table(request.path_params["code"])
        if isinstance(found, Table):
            return found
        if self.forwarder is None:
            raise IllegalActionError("the table is on another node", "moved")
        return await self.forwarder.forward(
            request, found, await read_body(request, p.MAX_MESSAGE_BYTES)
        )

    async def create(self, request: Request) -> Response:
        body = await replies.body(request, p.CreateTable)  # a refused body costs no table
        address = client_address(request.scope)
        # The address's budget is taken before the door, where a flood past it would hold
        # others' set-ups up; a create refused after it (busy, a wrong secret) gives it back.
        if not self.creates.allow(address, time.monotonic()):
            raise IllegalActionError("too many new tables from this address", "too_many_tables")
        try:
            table, seat, token = await self._create(body)
        except FlyswatError:
            self.creates.give_back(address)
            raise
        return replies.seated(table, seat, token)

    async def _create(self, body: p.CreateTable) -> tuple[Table, int, str]:
        await self.runner.admission.enter()
        players = self.players
        me = await players.who(body.player, body.secret)
        name = me[1] if me else await players.anonymous_name(body.name)
        if body.reserved is not None:  # a table kept for nobody could never be filled
            await players.check_player(body.reserved)
        body = body.model_copy(update={"name": name})
        player, rating = (me[0], me[2]) if me else (None, None)
        key = body.secret if me else None  # the host's token, as a join's (idempotent)
        bot = bool(me and me.bot)
        return await self.runner.directory.create(body, player, rating, key=key, bot=bot)

    async def list_tables(self, request: Request) -> JSONResponse:
        runner = self.runner
        after = request.query_params.get("after")
        try:
            limit = min(MAX_PAGE, max(1, int(request.query_params.get("limit", PAGE))))
        except ValueError:
            raise MalformedError("limit is a whole number") from None
        newest = runner.node.lobby(await self._shared())
        if after is not None:  # the page after that table, whether it is still listed or not
            born = runner.directory.born.get(after)
            at = next((t for t, info in newest if info["code"] == after), born)
            if at is None and not await asyncio.to_thread(runner.store.exists, after):
                raise MalformedError(f"after={after!r} is no table of this list", "malformed")
            newest = [] if at is None else [(t, i) for t, i in newest if t < at]
        page = [info for _, info in newest[:limit]]
        more = len(newest) > limit
        listed = p.TableList(tables=[p.TableInfo.model_validate(t) for t in page],
                             levels=list(LEVELS),
                             next=page[-1]["code"] if more and page else None)  # fmt: skip
        return JSONResponse(listed.model_dump())

    async def _shared(self) -> list[Any]:
        """The other nodes' entries in the shared list (none when this node is alone)."""
        cluster = self.runner.cluster
        if cluster is not None and len(cluster.peers) > 1:
            return await asyncio.to_thread(cluster.shared.listing)
        return []

    async def live_games(self, request: Request) -> JSONResponse:
        raw = request.query_params.get("limit", str(LIVE))
        if not raw.isdigit() or not 1 <= int(raw) <= MAX_LIVE:
            raise MalformedError(f"limit is a whole number from 1 to {MAX_LIVE}")
        games = self.runner.node.live(await self._shared())
        return JSONResponse(p.LiveList(games=games[: int(raw)], total=len(games)).model_dump())

    async def get_table(self, request: Request) -> Response:
        table = await self._here(request)
        if not isinstance(table, Table):
            return table
        if table.state == "expired":
            raise IllegalActionError("this lobby was left unused and has closed", "expired")
        cluster = self.runner.cluster
        headers = {"x-flyswat-node-url": cluster.url if cluster else ""}
        return JSONResponse(table.info(self.runner.executor.clock()).model_dump(), headers=headers)

    async def join(self, request: Request) -> Response:
        table = await self._here(request)
        if not isinstance(table, Table):
            return table
        body = await replies.body(request, p.JoinTable)
        await self.runner.admission.enter()
        players = self.players
        me = await players.who(body.player, body.secret)
        # A resent join gets the seat it already holds: by the identity, or the key.
        if me:
            join = Join(me[1], me[0], me[2], key=body.secret, bot=me.bot)
        else:
            join = Join(await players.anonymous_name(body.name), key=body.request)
        seat, token = (await self.runner.executor.act(table, join)).reply
        return replies.seated(table, seat, token)

    async def start(self, request: Request) -> Response:
        table = await self._here(request)
        if not isinstance(table, Table):
            return table
        body = await replies.body(request, p.StartTable)
        await self.runner.executor.act(table, StartBy(body.token))
        return JSONResponse(table.info().model_dump())

    async def record(self, request: Request) -> Response:
        code = request.path_params["code"]
        table = self.runner.directory.tables.get(code)
        if table is not None and table.record is not None:  # its JSON text, as it is
            return Response(table.record, media_type="application/json")
        # The last game of the table (a rematch plays more than one), from the store.
        found, exists = await asyncio.to_thread(_stored_record, self.runner.store, code)
        if found is not None:
            return JSONResponse(found)
        if table is None and not exists:
            raise IllegalActionError(f"no table {code!r}", "not_found")
        raise IllegalActionError("the game is not over yet", "not_over")

    async def ws(self, websocket: WebSocket) -> None:
        runner = self.runner
        code = websocket.path_params["code"]
        found = None if runner.executor.draining else await runner.node.locate(code)
        if runner.executor.draining or isinstance(found, Owner):
            url = None
            if isinstance(found, Owner) and found.url is not None:
                url = node.socket_url(found.url, code, websocket.headers.get("host"))
            await websocket.accept()
            await websocket.send_text(p.Moved(url=url).model_dump_json())
            with contextlib.suppress(Exception):  # its hello, which crossed the message
                await asyncio.wait_for(websocket.receive(), 1.0)
            with contextlib.suppress(Exception):
                await websocket.close(CLOSE_MOVED)
            return
        await self.play(websocket, found)

    def opener(self, path: str) -> Callable[[OpenSocket], None] | None:
        """How to serve a WebSocket at ``path`` whose handshake the transport answers itself
        (:data:`flyswat.server.transport.Opener`): one of a live table this node runs, the
        usual way in. Every other (a table elsewhere, expired or unknown, a node handing its
        tables over) is left to :meth:`ws`, which answers it as the protocol says."""
        if not path.startswith("/ws/") or self.runner.executor.draining:
            return None
        table = self.runner.node.here(path[len("/ws/") :])
        if table is None or table.state == "expired":
            return None
        return partial(self._open, table)

    def _open(self, table: Table, socket: OpenSocket) -> None:
        sock = socket.transport.get_extra_info("socket")
        network = network_reader(socket.peer, socket.headers, sock, self.rtt_fronts)
        Session(self.runner.executor, table, socket, self.limits, monotonic_ms, network)

    async def play(self, ws: WebSocket, table: Table | None) -> None:
        """Serve one WebSocket of ``table`` (None: no such table): once accepted, its
        protocol hands every message to a :class:`Session` as it reads it, and this returns
        (the socket lives on in its protocol, with no task of its own)."""
        await ws.accept()
        code = ws.path_params["code"]
        if table is None or table.state == "expired":
            gone = p.Error(code="not_found", message=f"no table {code!r}")
            if table is not None:
                gone = p.Error(code="expired", message="this lobby was left unused and has closed")
            await ws.send_text(gone.model_dump_json())
            await ws.close(CLOSE_NOT_FOUND if table is None else CLOSE_EXPIRED)
            return
        socket = ws.scope.get("extensions", {}).get(PROTOCOL_KEY)
        if socket is None:
            raise RuntimeError("serve the app with flyswat.server.transport.uvicorn_config")
        network = rtt_reader(ws.scope, self.rtt_fronts)
        Session(self.runner.executor, table, socket, self.limits, monotonic_ms, network)


def _stored_record(store: Store, code: str) -> tuple[dict[str, Any] | None, bool]:
    """The record of table ``code``'s last game in the store (None: none finished), and
    whether the table exists at all (a worker thread's job: SQL never runs on the loop)."""
    with store.engine.connect() as conn:
        last = players_store.latest_game(conn, code)
        text = players_store.record_of(conn, last) if last else None
    found = json.loads(text) if text else store.record(code)
    return found, found is not None or store.exists(code)
