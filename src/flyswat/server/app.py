"""The transports: HTTP routes and the WebSocket endpoint (Starlette), and ``flyswat serve``.

Thin on purpose: each handler parses input with the :mod:`.protocol` models, calls one
:class:`~flyswat.server.play.Table` method, and turns a :class:`~flyswat.errors.FlyswatError`
into one ``error`` (WebSocket) or a 4xx ``{"error", "message"}`` (HTTP). See
``docs/PROTOCOL.md``.

Tests start a server in-process with ``build_app(db_url, bot_pace=...)`` (Starlette's
``TestClient`` or uvicorn on a free port), or as a process: ``flyswat serve --port N --db URL``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket

from flyswat.bots import LEVELS
from flyswat.errors import FlyswatError, IllegalActionError, MalformedError
from flyswat.server import protocol as p
from flyswat.server.connection import POLICY_VIOLATION, Connection
from flyswat.server.netinfo import NetInfoWebSocketProtocol, rtt_reader
from flyswat.server.play import Table
from flyswat.server.seats import new_code
from flyswat.server.store import Store
from flyswat.server.table import monotonic_ms

log = logging.getLogger("flyswat.server")

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
DEFAULT_DB = "sqlite:///flyswat.db"

#: uvicorn's WebSocket settings: frames past 64 KiB close the socket before being read; the
#: protocol's own 4 KiB limit answers smaller oversized messages with an error. The protocol
#: is uvicorn's websockets-sansio one that also hands the socket's TCP_INFO to the app.
UVICORN_WS: dict[str, Any] = {"ws": NetInfoWebSocketProtocol, "ws_max_size": 65536}

_STATUS = {"not_found": 404, "bad_token": 403, "not_host": 403}


class Server:
    """The tables of one server process, and the store they live in.

    Memory holds the tables in the lobby or in play, and finished ones while somebody is
    still connected to them. A finished table nobody watches is dropped from memory
    (:meth:`forget`); the store keeps it, and :meth:`find` rebuilds it on demand.
    """

    def __init__(
        self, db_url: str, *, bot_pace: float = 1.0, rtt_fronts: frozenset[str] = frozenset()
    ) -> None:
        self.store = Store(db_url)
        self.bot_pace = bot_pace
        #: Peer addresses whose X-Flyswat-Rtt-Us header is believed (:mod:`.netinfo`).
        self.rtt_fronts = rtt_fronts
        self.tables: dict[str, Table] = {}

    def _load(self, code: str) -> Table | None:
        events = self.store.events(code)
        if not events:
            return None
        try:
            table = Table.restore(code, events, store=self.store, bot_pace=self.bot_pace)
        except FlyswatError:
            log.exception("table %s cannot be restored", code)
            return None
        self.tables[code] = table
        table.resume()
        return table

    def restore(self) -> None:
        """Rebuild every stored table not yet over by replaying its events, and resume play."""
        for code, state in self.store.codes():
            if state != "over":
                self._load(code)

    def find(self, code: str) -> Table | None:
        """The table with this code, rebuilt from the store if it is not in memory."""
        return self.tables.get(code) or self._load(code)

    def table(self, code: str) -> Table:
        """The table with this code; raises ``not_found``."""
        table = self.find(code)
        if table is None:
            raise IllegalActionError(f"no table {code!r}", "not_found")
        return table

    def forget(self, table: Table) -> None:
        """Drop ``table`` from memory if its game is over and nobody is connected to it."""
        if table.state == "over" and not table.clients():
            table.cancel_timers()
            self.tables.pop(table.code, None)

    def sweep(self) -> None:
        """Forget every finished table that nobody watches (games that ended unwatched)."""
        for table in list(self.tables.values()):
            self.forget(table)

    def seated(self, table: Table, seat: int, token: str) -> p.Seated:
        """The reply to create and join."""
        code = table.code
        return p.Seated(
            code=code,
            seat=seat,
            token=token,
            host=seat == table.host,
            ws_url=f"/ws/{code}",
            table_url=f"/?table={code}",
        )

    def create(self, body: p.CreateTable) -> p.Seated:
        """A new table with its host seated."""
        options = p.TableOptions(**body.model_dump(exclude={"name"}))
        code = new_code()
        while code in self.tables or self.store.exists(code):
            code = new_code()
        table, token = Table.create(code, options, body.name, store=self.store,
                                    bot_pace=self.bot_pace)  # fmt: skip
        self.tables[code] = table
        return self.seated(table, table.host, token)

    def close(self) -> None:
        """Stop every timer and release the store."""
        for table in self.tables.values():
            table.cancel_timers()
        self.store.close()


# -- HTTP ---------------------------------------------------------------------------------------


def _error(e: FlyswatError) -> JSONResponse:
    status = _STATUS.get(e.code, 400 if isinstance(e, MalformedError) else 409)
    return JSONResponse({"error": e.code, "message": e.message}, status_code=status)


async def _body(request: Request, model: type[BaseModel]) -> Any:
    raw = await request.body()
    if len(raw) > p.MAX_MESSAGE_BYTES:
        raise MalformedError("request body over 4096 bytes", "too_big")
    try:
        return model.model_validate_json(raw or b"{}")
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "body"
        raise MalformedError(f"{where}: {first['msg']}") from None


def _routes(server: Server) -> list[Route | WebSocketRoute]:
    async def health(_: Request) -> JSONResponse:
        return JSONResponse({"ok": True, "tables": len(server.tables)})

    async def create(request: Request) -> JSONResponse:
        try:
            seated = server.create(await _body(request, p.CreateTable))
        except FlyswatError as e:
            return _error(e)
        return JSONResponse(seated.model_dump(), status_code=201)

    async def list_tables(_: Request) -> JSONResponse:
        infos = [t.info() for t in server.tables.values() if t.state != "over"]
        return JSONResponse(p.TableList(tables=infos, levels=list(LEVELS)).model_dump())

    async def get_table(request: Request) -> JSONResponse:
        try:
            return JSONResponse(server.table(request.path_params["code"]).info().model_dump())
        except FlyswatError as e:
            return _error(e)

    async def join(request: Request) -> JSONResponse:
        try:
            table = server.table(request.path_params["code"])
            body = await _body(request, p.JoinTable)
            seat, token = table.join(body.name)
        except FlyswatError as e:
            return _error(e)
        return JSONResponse(server.seated(table, seat, token).model_dump(), status_code=201)

    async def start(request: Request) -> JSONResponse:
        try:
            table = server.table(request.path_params["code"])
            raw = await request.body()
            token = json.loads(raw).get("token") if raw else None
            seat = next((s.index for s in table.seats if isinstance(token, str) and s.holds(token)),
                        None)  # fmt: skip
            if seat is None:
                raise IllegalActionError("no seat at this table has that token", "bad_token")
            table.start(seat)
        except FlyswatError as e:
            return _error(e)
        except (ValueError, AttributeError):
            return _error(MalformedError('the body is {"token": "..."}'))
        return JSONResponse(table.info().model_dump())

    async def record(request: Request) -> JSONResponse:
        code = request.path_params["code"]
        table = server.tables.get(code)
        found = table.record if table is not None else None
        if found is None:
            found = server.store.record(code)
        if found is not None:
            return JSONResponse(found)
        if table is None and not server.store.exists(code):
            return _error(IllegalActionError(f"no table {code!r}", "not_found"))
        return _error(IllegalActionError("the game is not over yet", "not_over"))

    async def ws(websocket: WebSocket) -> None:
        await play(server, websocket)

    return [
        Route("/health", health),
        Route("/api/tables", create, methods=["POST"]),
        Route("/api/tables", list_tables, methods=["GET"]),
        Route("/api/tables/{code}", get_table),
        Route("/api/tables/{code}/join", join, methods=["POST"]),
        Route("/api/tables/{code}/start", start, methods=["POST"]),
        Route("/api/tables/{code}/record", record),
        WebSocketRoute("/ws/{code}", ws),
    ]


# -- WebSocket ----------------------------------------------------------------------------------


def _dispatch(table: Table, conn: Connection, msg: BaseModel) -> None:
    """Carry out one parsed client message; raises :class:`FlyswatError` to refuse it."""
    if isinstance(msg, p.Hello):
        if conn.greeted:
            raise IllegalActionError("hello was already said on this connection", "already_hello")
        table.hello(conn, msg.token)
        conn.greeted = True
        return
    if not conn.greeted:
        raise IllegalActionError('send {"type": "hello"} first', "hello_first")
    if isinstance(msg, p.Pong):
        rtt = conn.pong(msg.id)
        if rtt is not None:
            table.pong(conn.seat, rtt, conn.network_rtt())
        return
    seat = conn.seat
    if seat is None:
        raise IllegalActionError("spectators watch; they cannot act", "spectator")
    claimed = getattr(msg, "seat", None)
    if claimed is not None and claimed != seat:
        raise IllegalActionError(f"you hold seat {seat}, not seat {claimed}", "not_your_seat")
    if isinstance(msg, p.Ready):
        table.ready(seat, msg.ready)
    elif isinstance(msg, p.Start):
        table.start(seat)
    elif isinstance(msg, p.Reveal):
        table.reveal(seat)
    elif isinstance(msg, p.Slap):
        table.slap(seat, msg.card, msg.ms, msg.turn)
    elif isinstance(msg, p.Done):
        table.done(seat, msg.turn)


async def play(server: Server, ws: WebSocket) -> None:
    """Serve one WebSocket until it closes: read, check, dispatch, answer errors."""
    await ws.accept()
    conn = Connection(ws, monotonic_ms, rtt_reader(ws.scope, server.rtt_fronts))
    writer = asyncio.create_task(conn.writer())
    pinger: asyncio.Task[None] | None = None
    table = server.find(ws.path_params["code"])
    abusive = False
    try:
        if table is None:
            conn.error("not_found", f"no table {ws.path_params['code']!r}")
            return
        while True:
            event = await ws.receive()
            if event["type"] == "websocket.disconnect":
                break
            try:
                if not conn.allow():
                    raise IllegalActionError("too many messages: slow down", "rate_limited")
                text = event.get("text")
                if text is None:
                    raise MalformedError("binary frames are not accepted; send JSON text")
                _dispatch(table, conn, p.parse_client(text))
            except FlyswatError as e:
                if not conn.error(e.code, e.message):
                    abusive = True
                    break
            if conn.greeted and pinger is None:
                pinger = asyncio.create_task(conn.pinger())
    finally:
        if table is not None and conn.greeted:
            table.leave(conn)
            server.forget(table)
        conn.stop()
        if pinger is not None:
            pinger.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(writer, 2)
        if abusive or table is None:
            with contextlib.suppress(Exception):
                await ws.close(POLICY_VIOLATION if abusive else 4404)


# -- the application and the command ------------------------------------------------------------


async def _sweep(server: Server, every_s: float = 30.0) -> None:
    while True:
        await asyncio.sleep(every_s)
        server.sweep()


#: Allocations between young collections (Python's default is 700). Each young collection of
#: the server costs tens of ms whatever its size, so fewer of them (docs/BENCHMARKS.md).
GC_THRESHOLD0 = 20_000


async def _collect(freeze_every_s: float = 5.0, full_every_s: float = 120.0) -> None:
    """Keep the garbage collector's pauses off the players' critical path.

    A full collection walks every live object and holds up every table meanwhile (hundreds of
    ms with thousands of players: docs/BENCHMARKS.md, Load and soak). So every few seconds
    the objects that survived are frozen out of the collector's walks (objects that die by
    reference count are still freed at once), and every couple of minutes everything is
    unfrozen and collected once, so cyclic garbage cannot pile up. Young collections cost
    tens of ms each however young the heap, so they run every :data:`GC_THRESHOLD0`
    allocations rather than every 700.
    """
    gc.set_threshold(GC_THRESHOLD0, 10, 10)
    gc.freeze()
    loop = asyncio.get_running_loop()
    last_full = loop.time()
    while True:
        await asyncio.sleep(freeze_every_s)
        if loop.time() - last_full >= full_every_s:
            gc.unfreeze()
            gc.collect()
            last_full = loop.time()
        gc.freeze()


def build_app(
    db_url: str = DEFAULT_DB,
    *,
    bot_pace: float = 1.0,
    own_process: bool = False,
    rtt_fronts: frozenset[str] = frozenset(),
) -> Starlette:
    """The whole server as an ASGI app: tables restored from ``db_url`` on start-up.

    ``own_process``: the app runs alone in its process (``flyswat serve``), so it may set the
    process-wide garbage collector as it needs (:func:`_collect`); not in a test process.
    ``rtt_fronts``: peer addresses of trusted fronts whose round-trip header is believed.
    """
    server = Server(db_url, bot_pace=bot_pace, rtt_fronts=rtt_fronts)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        server.restore()
        tasks = [asyncio.create_task(_sweep(server))]
        if own_process:
            tasks.append(asyncio.create_task(_collect()))
        try:
            yield
        finally:
            for task in tasks:
                task.cancel()
            server.close()

    routes: list[Any] = list(_routes(server))
    if WEB_DIR.is_dir():
        routes.append(Mount("/", StaticFiles(directory=WEB_DIR, html=True), name="web"))
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.server = server
    return app


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``flyswat serve``."""
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on")
    parser.add_argument("--db", default=DEFAULT_DB, help="sqlite:///FILE or postgresql://...")
    parser.add_argument(
        "--bot-pace", type=float, default=1.0, help="scale bots' pauses before revealing"
    )
    parser.add_argument(
        "--rtt-header-from",
        default="",
        metavar="ADDRS",
        help="comma-separated addresses of trusted reverse proxies whose X-Flyswat-Rtt-Us "
        "header (their round trip to the client, in us) is believed; off by default",
    )


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; returns the exit status."""
    import uvicorn
    from sqlalchemy.engine import make_url

    fronts = frozenset(a.strip() for a in args.rtt_header_from.split(",") if a.strip())
    app = build_app(args.db, bot_pace=args.bot_pace, own_process=True, rtt_fronts=fronts)
    db = make_url(args.db).render_as_string(hide_password=True)
    print(f"flyswat: open http://{args.host}:{args.port}/  (store: {db})", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", **UVICORN_WS)
    return 0
