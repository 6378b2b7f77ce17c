"""The server as an ASGI application: the wiring of its parts, nothing else.

:func:`build_app` makes one node: its store, its place in the cluster, the
:class:`~flyswat.server.runner.Runner` of its tables, the routes (the tables'
:mod:`~flyswat.server.routes`, the players', the arenas', the operator's, the metrics, the
browser client's files), the middleware, the refusals' handler
(:func:`flyswat.server.replies.refused`) and the background jobs. ``flyswat serve``
(:mod:`flyswat.server.serve`) runs it; :func:`build_pages_app` is ``flyswat serve --role
pages``: the players' pages and the browser client's files alone, over the same store.

Tests start a server in-process with ``build_app(db_url, bot_pace=...)`` (Starlette's
``TestClient`` or uvicorn on a free port), or as a process: ``flyswat serve --port N --db URL``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

from flyswat.errors import FlyswatError
from flyswat.players import arena
from flyswat.server import node, operator, replies, settings
from flyswat.server.arena_routes import ArenaRoutes
from flyswat.server.cluster import Cluster, RedisShared, Shared
from flyswat.server.limits import Limits, request_buckets, scrape_buckets, table_buckets
from flyswat.server.metrics import Metrics
from flyswat.server.pages import Pages
from flyswat.server.players_routes import PLAY_NOW_WAIT_MS, Players
from flyswat.server.routes import TableRoutes
from flyswat.server.runner import Runner
from flyswat.server.settings import Timings
from flyswat.server.static import WebFiles
from flyswat.server.store import Store
from flyswat.server.transport import OPENER_KEY, RequestRateLimit

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
DEFAULT_DB = settings.DEFAULT_DB


async def _sweep(runner: Runner, every_s: float = 30.0) -> None:
    while True:
        await asyncio.sleep(every_s)
        runner.directory.sweep()


def build_app(
    db_url: str = DEFAULT_DB,
    *,
    bot_pace: float = 1.0,
    jobs: Sequence[Callable[[], Coroutine[Any, Any, None]]] = (),
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
    stall_log_ms: float = 100.0,
    writer: str = "thread",
) -> Starlette:
    """The whole server as an ASGI app: tables restored from ``db_url`` on start-up.

    ``jobs``: more background jobs for the app's life (``flyswat serve`` runs the
    collector's policy, :func:`flyswat.server.serve.collect`, which is process-wide).
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
    server makes by itself (:class:`flyswat.players.arena.Schedule`). ``stall_log_ms``: an
    event-loop stall longer than this is logged (:mod:`flyswat.server.metrics`). ``writer``:
    ``thread`` or ``process``, where the store's group commit runs
    (:mod:`flyswat.server.writer_process`; ``flyswat serve --writer``).
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
    forwarder = node.Forwarder(secret, limits.keep_alive_s)
    metrics = Metrics(runner, scrape_buckets(limits))
    players = Players(runner, table_buckets(limits), play_now_wait_ms, forwarder)
    schedule = arena.Schedule.parse(arena_schedule) if arena_schedule else None
    arenas = ArenaRoutes(players, operator_secret, schedule)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[dict[str, Any]]:
        runner.start(writer)
        runner.node.restore()
        cluster.start_beating()
        background = [_sweep(runner), runner.node.keep(), runner.node.publish(),
                      metrics.watch_loop(tell_s=stall_log_ms / 1000), arenas.loop()]  # fmt: skip
        tasks = [asyncio.create_task(job) for job in (*background, *(job() for job in jobs))]
        try:
            yield {OPENER_KEY: tables.opener}  # the transport's own way in for a table's sockets
        finally:
            await node.stop_tasks(tasks)
            cluster.stop_beating()
            if not runner.executor.draining:  # no hand-over: a test's server, or a second signal
                with contextlib.suppress(Exception):
                    cluster.leave()
            runner.close()
            players.close()
            cluster.close()
            await forwarder.close()

    tables = TableRoutes(runner, table_buckets(limits), limits, rtt_fronts, players, forwarder)
    routes: list[Any] = [*tables.routes(), *players.routes(), *arenas.routes()]
    routes.append(Route("/metrics", metrics.endpoint))
    routes.extend(operator.routes(store.engine, operator_secret))
    if WEB_DIR.is_dir():
        routes.append(Mount("/", WebFiles(WEB_DIR), name="web"))
    middleware = [Middleware(node.TrustedForward, secret=secret),
                  Middleware(RequestRateLimit, buckets=request_buckets(limits))]  # fmt: skip
    app = Starlette(routes=routes, lifespan=lifespan, middleware=middleware,
                    exception_handlers={FlyswatError: replies.refused})  # fmt: skip
    app.state.runner = runner
    app.state.hand_over = runner.node.hand_over
    return app


def build_pages_app(db_url: str, limits: Limits | None = None) -> Starlette:
    """The players' pages (:mod:`flyswat.server.pages`) and the browser client's files over
    the store at ``db_url``, with ``/health`` and ``/ready``: a process that holds no table,
    for the proxy to send those paths to (``docs/DEPLOY.md``, *The players' pages apart*)."""
    limits = limits or Limits()
    store = Store(db_url)
    pages = Pages(store.engine, apart=True)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            pages.close()
            store.close()

    async def health(_: Request) -> JSONResponse:
        return JSONResponse({"ok": True, "role": "pages", "tables": 0})

    async def ready(_: Request) -> JSONResponse:
        return JSONResponse({"ready": True})

    routes: list[Any] = [*pages.routes(), Route("/health", health), Route("/ready", ready)]
    if WEB_DIR.is_dir():
        routes.append(Mount("/", WebFiles(WEB_DIR), name="web"))
    return Starlette(routes=routes, lifespan=lifespan,
                     middleware=[Middleware(RequestRateLimit, buckets=request_buckets(limits))],
                     exception_handlers={FlyswatError: replies.refused})  # fmt: skip
