"""The transports: HTTP routes and the WebSocket endpoint (Starlette), and ``flyswat serve``.

Thin on purpose: each handler parses input with the :mod:`flyswat.protocol` models and hands
one command to its table through the :class:`~flyswat.server.runner.Runner`; a refused HTTP
command becomes a 4xx ``{"error", "message"}`` with the status of its code in
:data:`flyswat.errors.CODES` (a refused message is answered by the table itself). See
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
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.websockets import WebSocket

from flyswat import protocol as p
from flyswat.bots import LEVELS
from flyswat.errors import FlyswatError, IllegalActionError, MalformedError
from flyswat.players import arena
from flyswat.server import node, operator, players_store, settings
from flyswat.server.arena_routes import ArenaRoutes
from flyswat.server.cluster import Cluster, Owner, RedisShared, Shared
from flyswat.server.connection import CLOSE_EXPIRED, CLOSE_MOVED, CLOSE_NOT_FOUND, Session
from flyswat.server.limits import AddressBuckets, Limits, request_buckets, table_buckets
from flyswat.server.metrics import Metrics
from flyswat.server.netinfo import rtt_reader
from flyswat.server.players_routes import PLAY_NOW_WAIT_MS, Players
from flyswat.server.runner import Runner, monotonic_ms
from flyswat.server.settings import Timings
from flyswat.server.static import WebFiles
from flyswat.server.store import Store
from flyswat.server.transport import (
    PROTOCOL_KEY,
    RequestRateLimit,
    client_address,
    read_body,
    serve,
)
from flyswat.table.core import Table
from flyswat.table.io import Join, StartBy

log = logging.getLogger("flyswat.server")

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
DEFAULT_DB = settings.DEFAULT_DB

#: Tables listed per page of ``GET /api/tables``, by default and at most.
PAGE, MAX_PAGE = 50, 200
#: Games listed by ``GET /api/live``, by default and at most.
LIVE, MAX_LIVE = 20, 100


# -- HTTP ---------------------------------------------------------------------------------------


def _error(e: FlyswatError) -> JSONResponse:
    return JSONResponse({"error": e.code, "message": e.message}, status_code=e.status)


async def _body(request: Request, model: type[BaseModel]) -> Any:
    raw = await read_body(request, p.MAX_MESSAGE_BYTES)  # streamed, refused past the cap
    return _parse_body(raw, model)


def _parse_body(raw: bytes, model: type[BaseModel]) -> Any:
    try:
        return model.model_validate_json(raw or b"{}")
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "body"
        raise MalformedError(f"{where}: {first['msg']}") from None


def seated(table: Table, seat: int, token: str) -> p.Seated:
    """The reply to create and join."""
    code = table.code
    return p.Seated(code=code, seat=seat, token=token, host=seat == table.host,
                    ws_url=f"/ws/{code}", table_url=f"/?table={code}")  # fmt: skip


async def _page(runner: Runner, request: Request) -> p.TableList:
    after = request.query_params.get("after")
    try:
        limit = min(MAX_PAGE, max(1, int(request.query_params.get("limit", PAGE))))
    except ValueError:
        raise MalformedError("limit is a whole number") from None
    newest = node.lobby(runner, runner.cluster, await _shared(runner))
    if after is not None:  # the page after that table, whether it is still listed or not
        at = next((t for t, info in newest if info["code"] == after), runner.born.get(after))
        if at is None and not await asyncio.to_thread(runner.store.exists, after):
            raise MalformedError(f"after={after!r} is no table of this list", "malformed")
        newest = [] if at is None else [(t, i) for t, i in newest if t < at]
    page = [info for _, info in newest[:limit]]
    more = len(newest) > limit
    return p.TableList(tables=[p.TableInfo.model_validate(t) for t in page], levels=list(LEVELS),
                       next=page[-1]["code"] if more and page else None)  # fmt: skip


async def _shared(runner: Runner) -> list[Any]:
    """The other nodes' entries in the shared list (none when this node is alone)."""
    cluster = runner.cluster
    if cluster is not None and len(cluster.peers) > 1:
        return await asyncio.to_thread(cluster.shared.listing)
    return []


async def _live(runner: Runner, request: Request) -> p.LiveList:
    raw = request.query_params.get("limit", str(LIVE))
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_LIVE:
        raise MalformedError(f"limit is a whole number from 1 to {MAX_LIVE}")
    games = node.live(runner, runner.cluster, await _shared(runner))
    return p.LiveList(games=games[: int(raw)], total=len(games))


def _routes(
    runner: Runner, tables: AddressBuckets, limits: Limits, rtt_fronts: frozenset[str],
    players: Players, arenas: ArenaRoutes, forwarder: node.Forwarder | None = None,
) -> list[Route | WebSocketRoute]:  # fmt: skip

    async def health(_: Request) -> JSONResponse:
        cluster = runner.cluster
        return JSONResponse({"ok": True, "tables": len(runner.tables), "pid": os.getpid(),
                             "node": cluster.node if cluster else None,
                             "nodes": len(cluster.peers) if cluster else 1})  # fmt: skip

    async def ready(_: Request) -> JSONResponse:
        """Ready: started, its store reachable, not shutting down."""
        if runner.draining or runner.writer is None:
            return JSONResponse({"ready": False}, status_code=503)
        return JSONResponse({"ready": True})

    async def here(request: Request) -> Table | Response:
        """The request's table if this node runs it; else the owner's answer to it."""
        found = await runner.table(request.path_params["code"])
        if isinstance(found, Table):
            return found
        if forwarder is None:
            raise IllegalActionError("the table is on another node", "moved")
        return await forwarder.forward(
            request, found, await read_body(request, p.MAX_MESSAGE_BYTES)
        )

    async def create(request: Request) -> JSONResponse:
        try:
            body = await _body(request, p.CreateTable)  # a refused body costs no table
            me = await players.who(body.player, body.secret)
            name = me[1] if me else await players.anonymous_name(body.name)
            if not tables.allow(client_address(request.scope), time.monotonic()):
                raise IllegalActionError("too many new tables from this address", "too_many_tables")
            body = body.model_copy(update={"name": name})
            player, rating = (me[0], me[2]) if me else (None, None)
            key = body.secret if me else None  # the host's token, as a join's (idempotent)
            bot = bool(me and me.bot)
            table, seat, token = await runner.create(body, player, rating, key=key, bot=bot)
        except FlyswatError as e:
            return _error(e)
        return JSONResponse(seated(table, seat, token).model_dump(), status_code=201)

    async def list_tables(request: Request) -> JSONResponse:
        try:
            return JSONResponse((await _page(runner, request)).model_dump())
        except FlyswatError as e:
            return _error(e)

    async def live_games(request: Request) -> JSONResponse:
        try:
            return JSONResponse((await _live(runner, request)).model_dump())
        except FlyswatError as e:
            return _error(e)

    async def get_table(request: Request) -> Response:
        try:
            table = await here(request)
            if not isinstance(table, Table):
                return table
            if table.state == "expired":
                raise IllegalActionError("this lobby was left unused and has closed", "expired")
            node_url = runner.cluster.url if runner.cluster else ""
            return JSONResponse(table.info(runner.clock()).model_dump(),
                                headers={"x-flyswat-node-url": node_url})  # fmt: skip
        except FlyswatError as e:
            return _error(e)

    async def join(request: Request) -> Response:
        try:
            table = await here(request)
            if not isinstance(table, Table):
                return table
            body = await _body(request, p.JoinTable)
            me = await players.who(body.player, body.secret)
            # A resent join gets the seat it already holds: by the identity, or the key.
            if me:
                join = Join(me[1], me[0], me[2], key=body.secret, bot=me.bot)
            else:
                join = Join(await players.anonymous_name(body.name), key=body.request)
            seat, token = (await runner.act(table, join)).reply
        except FlyswatError as e:
            return _error(e)
        return JSONResponse(seated(table, seat, token).model_dump(), status_code=201)

    async def start(request: Request) -> Response:
        try:
            table = await here(request)
            if not isinstance(table, Table):
                return table
            body = await _body(request, p.StartTable)
            await runner.act(table, StartBy(body.token))
        except FlyswatError as e:
            return _error(e)
        return JSONResponse(table.info().model_dump())

    async def record(request: Request) -> JSONResponse:
        code = request.path_params["code"]
        table = runner.tables.get(code)
        found = table.record if table is not None else None
        if found is not None and table is not None and found.get("id") != table.game_id:
            found = None  # a rebuilt table's record from the store may be an earlier game's
        if found is None:  # the last game of the table (a rematch plays more than one)
            found, exists = await asyncio.to_thread(_stored_record, runner.store, code)
        else:
            exists = True
        if found is not None:
            return JSONResponse(found)
        if table is None and not exists:
            return _error(IllegalActionError(f"no table {code!r}", "not_found"))
        return _error(IllegalActionError("the game is not over yet", "not_over"))

    async def ws(websocket: WebSocket) -> None:
        code = websocket.path_params["code"]
        found = None if runner.draining else await runner.locate(code)
        if runner.draining or isinstance(found, Owner):
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
        await play(runner, websocket, found, limits, rtt_fronts)

    return [
        Route("/health", health),
        Route("/ready", ready),
        Route("/api/tables", create, methods=["POST"]),
        Route("/api/tables", list_tables, methods=["GET"]),
        Route("/api/live", live_games),
        Route("/api/tables/{code}", get_table),
        Route("/api/tables/{code}/join", join, methods=["POST"]),
        Route("/api/tables/{code}/start", start, methods=["POST"]),
        Route("/api/tables/{code}/record", record),
        *players.routes(),
        *arenas.routes(),
        WebSocketRoute("/ws/{code}", ws),
    ]


def _stored_record(store: Store, code: str) -> tuple[dict[str, Any] | None, bool]:
    """The record of table ``code``'s last game in the store (None: none finished), and
    whether the table exists at all (a worker thread's job: SQL never runs on the loop)."""
    with store.engine.connect() as conn:
        last = players_store.latest_game(conn, code)
        text = players_store.record_of(conn, last) if last else None
    found = json.loads(text) if text else store.record(code)
    return found, found is not None or store.exists(code)


# -- WebSocket ----------------------------------------------------------------------------------


async def play(
    runner: Runner,
    ws: WebSocket,
    table: Table | None,
    limits: Limits,
    rtt_fronts: frozenset[str] = frozenset(),
) -> None:
    """Serve one WebSocket of ``table`` (None: no such table) until it closes: once
    accepted, its protocol hands every message to a :class:`Session` as it reads it."""
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
    network = rtt_reader(ws.scope, rtt_fronts)
    session = Session(runner, table, socket, limits, monotonic_ms, network)
    await session.ended


# -- the application and the command ------------------------------------------------------------


async def _sweep(runner: Runner, every_s: float = 30.0) -> None:
    while True:
        await asyncio.sleep(every_s)
        runner.sweep()


#: Allocations between young collections (Python's default is 700). Each young collection of
#: the server costs tens of ms whatever its size, so fewer of them (docs/BENCHMARKS.md).
GC_THRESHOLD0 = 20_000
#: Generation-1 collections between two full ones: so many that none runs by itself.
NO_FULL = 10**9


async def _collect(freeze_every_s: float = 5.0) -> None:
    """Keep the garbage collector's pauses off the players' critical path.

    A full collection walks every live object and holds up every table meanwhile (hundreds of
    ms with thousands of players: docs/BENCHMARKS.md, Load and soak), and so does a
    collection of everything that survived the last few seconds (20–90 ms at 2,000 players,
    *The hot path*). So the collector never walks the live heap: young collections run every
    :data:`GC_THRESHOLD0` allocations as usual, and every few seconds what survived them is
    frozen out of every later walk (a list splice: no pause). Objects that die by reference
    count are freed at once as ever, frozen or not; a cycle among frozen objects would stay,
    so the server makes none that outlive a young collection (a finished table, a closed
    socket and its session are freed by reference count: ``tests/server/test_heap.py``), and
    ``/metrics`` counts the frozen objects (``flyswat_gc_frozen_objects``).
    """
    gc.set_threshold(GC_THRESHOLD0, 10, NO_FULL)
    gc.freeze()
    while True:
        await asyncio.sleep(freeze_every_s)
        gc.freeze()


def build_app(
    db_url: str = DEFAULT_DB,
    *,
    bot_pace: float = 1.0,
    own_process: bool = False,
    limits: Limits | None = None,
    rtt_fronts: frozenset[str] = frozenset(),
    play_now_wait_ms: int = PLAY_NOW_WAIT_MS,
    node_id: str = "local",
    node_url: str = "http://127.0.0.1:8000",
    redis_url: str | None = None,
    operator_secret: str | None = None,
    redis_prefix: str = "flyswat:",
    timings: Timings | None = None,
    max_spectators: int = settings.MAX_SPECTATORS,
    arena_schedule: str | None = None,
) -> Starlette:
    """The whole server as an ASGI app: tables restored from ``db_url`` on start-up.

    ``own_process``: the app runs alone in its process (``flyswat serve``), so it may set the
    process-wide garbage collector as it needs (:func:`_collect`); not in a test process.
    ``limits``: what one client may take (:class:`~flyswat.server.limits.Limits`; the
    transport's own limits are applied by the uvicorn protocols, :func:`uvicorn_config`).
    ``rtt_fronts``: peer addresses of trusted fronts whose round-trip header is believed
    (:mod:`flyswat.server.netinfo`). ``play_now_wait_ms``: how long a Play now table waits
    for players before bots take its free seats. ``node_id``, ``node_url``: this node of
    the cluster serving the store (:mod:`flyswat.server.cluster`), and where the others and
    the clients reach it; ``redis_url``: who is alive and the lobby's list kept in Redis,
    under keys that begin with ``redis_prefix``; ``timings``: the cluster's beat and lease
    (:class:`flyswat.server.settings.Timings`). ``operator_secret``: opens the operator's
    routes (:mod:`flyswat.server.operator`). ``max_spectators``: the spectators this node
    takes, over all its tables. ``arena_schedule``: ``EVERY:MINUTES``, the arenas this
    server makes by itself (:class:`flyswat.players.arena.Schedule`).
    """
    limits = limits or Limits()
    store = Store(db_url, node=node_id)
    timings = timings or Timings()
    shared = (
        RedisShared(store.engine, redis_url, timings, redis_prefix)
        if redis_url
        else Shared(store.engine, timings)
    )
    cluster = Cluster(store.engine, node_id, node_url, shared)
    runner = Runner(store, bot_pace=bot_pace, limits=limits, cluster=cluster,
                    max_spectators=max_spectators)  # fmt: skip
    secret = cluster.secret()
    forwarder = node.Forwarder(secret)
    metrics = Metrics(runner)
    players = Players(runner, table_buckets(limits), _body, play_now_wait_ms, forwarder)
    schedule = arena.Schedule.parse(arena_schedule) if arena_schedule else None
    arenas = ArenaRoutes(players, operator_secret, schedule)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        runner.start()
        runner.restore()
        cluster.start_beating()
        jobs = [_sweep(runner), node.keep(runner, cluster), node.publish(runner, cluster),
                metrics.watch_loop(), arenas.loop()]  # fmt: skip
        tasks = [asyncio.create_task(job) for job in jobs]
        if own_process:
            tasks.append(asyncio.create_task(_collect()))
        try:
            yield
        finally:
            await node.stop_tasks(tasks)
            cluster.stop_beating()
            if not runner.draining:  # no hand-over: a test's server, or a second signal
                with contextlib.suppress(Exception):
                    cluster.leave()
            runner.close()
            cluster.close()
            await forwarder.close()

    async def hand_over() -> None:
        await runner.hand_over()

    routes: list[Any] = list(
        _routes(runner, table_buckets(limits), limits, rtt_fronts, players, arenas, forwarder)
    )
    routes.append(Route("/metrics", metrics.endpoint))
    routes.extend(operator.routes(store.engine, operator_secret))
    if WEB_DIR.is_dir():
        routes.append(Mount("/", WebFiles(WEB_DIR), name="web"))
    middleware = [Middleware(node.TrustedForward, secret=secret),
                  Middleware(RequestRateLimit, buckets=request_buckets(limits))]  # fmt: skip
    app = Starlette(routes=routes, lifespan=lifespan, middleware=middleware)
    app.state.runner = runner
    app.state.hand_over = hand_over
    return app


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``flyswat serve``: every field of :class:`flyswat.server.settings.Settings`,
    each also read from its ``FLYSWAT_`` variable."""
    settings.add_arguments(parser)
    parser.add_argument("--worker-slot", type=int, default=None, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; returns the exit status."""
    import socket as sockets

    from sqlalchemy.engine import make_url

    from flyswat.server import workers

    conf = settings.Settings.from_args(args)
    conf.check_extras()
    count = conf.workers or workers.default_workers()
    if count > 1 and args.worker_slot is None:
        db = make_url(conf.db).render_as_string(hide_password=True)
        print(f"flyswat: open http://{conf.host}:{conf.port}/  (store: {db}; {count} workers "
              f"on ports {conf.port + 1}-{conf.port + count})", flush=True)  # fmt: skip
        Store(conf.db).close()  # the schema migrated once, before the workers open it
        argv = sys.argv[sys.argv.index("serve") + 1 :] if "serve" in sys.argv else []
        return workers.supervise(_without_workers(argv), count)
    slot = args.worker_slot
    listen: list[sockets.socket] | None = None
    port = conf.port
    if slot is not None:  # a worker: the shared public port, and its own
        workers.die_with_parent()
        port = conf.port + 1 + slot
        listen = [workers.listening(conf.host, conf.port, shared=True),
                  workers.listening(conf.host, port, shared=False)]  # fmt: skip
    node_id = conf.node_id or f"{sockets.gethostname()}:{port}"
    if conf.node_id and slot is not None:
        node_id = f"{conf.node_id}/{slot}"
    url = (conf.advertise or "http://{host}:{port}").format(
        host=conf.host, port=port, slot="" if slot is None else slot
    )
    _logging(conf.log_format)
    app = build_app(conf.db, bot_pace=conf.bot_pace, own_process=conf.gc == "tuned",
                    limits=conf.limits, rtt_fronts=conf.rtt_header_from,
                    play_now_wait_ms=round(conf.play_now_wait_s * 1000), node_id=node_id,
                    node_url=url, redis_url=conf.redis, redis_prefix=conf.redis_prefix,
                    timings=conf.timings, max_spectators=conf.max_spectators,
                    operator_secret=operator.operator_secret(conf.operator_secret),
                    arena_schedule=conf.arena_schedule)  # fmt: skip
    if slot is None:
        db = make_url(conf.db).render_as_string(hide_password=True)
        print(f"flyswat: open http://{conf.host}:{conf.port}/  (store: {db}; node {node_id})",
              flush=True)  # fmt: skip
    serve(app, conf.host, conf.port, conf.limits, sockets=listen,
          before_shutdown=app.state.hand_over,
          proxies=tuple(sorted(conf.trusted_proxies)))  # fmt: skip
    return 0


def _without_workers(argv: list[str]) -> list[str]:
    """The command's arguments without ``--workers N`` (the supervisor sets it)."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--workers":
            skip = True
        elif not arg.startswith("--workers="):
            out.append(arg)
    return out


def _logging(kind: str) -> None:
    """Structured logs: every record one JSON object on stderr (python-json-logger)."""
    if kind != "json":
        return
    from pythonjsonlogger.json import JsonFormatter

    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
