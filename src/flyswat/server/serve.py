"""``flyswat serve``: the command line, the workers' boot, the collector's policy, the logs.

The application itself is wired by :func:`flyswat.server.app.build_app`; this module runs it
in this process (one node), or supervises one process per core sharing the public port
(:mod:`flyswat.server.workers`), each a node of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import gc
import logging
import socket
import sys

from flyswat import native
from flyswat.server import operator, settings
from flyswat.server.app import build_app, build_pages_app
from flyswat.server.store import Store
from flyswat.server.transport import serve

#: Allocations less deallocations between young collections (Python's default is 700): fewer
#: of them, each walking what was made since the last (docs/BENCHMARKS.md, *A burst of
#: games' ends*).
GC_THRESHOLD0 = 20_000
#: Collections between two of the next generation: so many that none of the older two runs.
NEVER = 10**9
#: How often the young generation is collected and its survivors frozen (s): each walk is of
#: what was made since the last and still lives, so the shorter the interval, the shorter the
#: pause (the longest at 4,000 players 11–13 ms every second, 7–8 ms every quarter second:
#: docs/BENCHMARKS.md, *A quarter of a second*).
COLLECT_EVERY_S = 0.25


def young_only() -> None:
    """The collector's policy (:func:`collect`): young collections every
    :data:`GC_THRESHOLD0` allocations, the older generations never."""
    gc.set_threshold(GC_THRESHOLD0, NEVER, NEVER)


async def collect(every_s: float = COLLECT_EVERY_S) -> None:
    """Keep the garbage collector's pauses off the players' critical path.

    A full collection walks every live object and holds up every table meanwhile (hundreds of
    ms with thousands of players: docs/BENCHMARKS.md, Load and soak), and so does a
    collection of the middle generation, everything that survived the young collections of
    the last few seconds (20–150 ms, *The hot path*, *A burst of games' ends*). Nor is a
    young collection as small as its threshold says: the threshold counts allocations less
    deallocations, and the old objects that die when many games end together pay for as many
    new ones, so the young generation held 160,000 objects at 20,000 counted, a pause of 50 ms.

    So the collector walks only what was made since its last walk: young collections run
    every :data:`GC_THRESHOLD0` allocations as usual, the older generations never, and every
    :data:`COLLECT_EVERY_S` a young collection frees the cyclic garbage made meanwhile and
    what survived it is frozen out of every later walk (a list splice). Objects that die by
    reference count are freed at once as ever, frozen or not; a cycle still alive at its
    freeze would stay, so the server makes none (a finished table, a closed socket and its
    session are freed by reference count, and so is what a node's beat makes:
    ``tests/server/test_heap.py``), and ``/metrics`` counts the live heap's blocks
    (``flyswat_heap_blocks``).
    """
    young_only()
    while True:
        gc.collect(0)
        gc.freeze()
        await asyncio.sleep(every_s)


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
    slot = args.worker_slot
    if slot is None and port_in_use(conf.host, conf.port):
        # Before the store is opened and its tables taken: a second server started by
        # mistake on a running one's port stops here, taking nothing from the first.
        print(f"flyswat: cannot listen on {conf.host}:{conf.port}: the address is in use (is "
              "another server running there?)", file=sys.stderr)  # fmt: skip
        return 1
    if count > 1 and slot is None:
        db = make_url(conf.db).render_as_string(hide_password=True)
        print(f"flyswat: open http://{conf.host}:{conf.port}/  (store: {db}; {count} workers "
              f"on ports {conf.port + 1}-{conf.port + count}; {_hot_path()})",
              flush=True)  # fmt: skip
        Store(conf.db).close()  # the schema migrated once, before the workers open it
        argv = sys.argv[sys.argv.index("serve") + 1 :] if "serve" in sys.argv else []
        return workers.supervise(_without_workers(argv), count)
    listen: list[sockets.socket] | None = None
    port = conf.port
    if slot is not None:  # a worker: the shared public port, and its own
        workers.die_with_parent()
        port = conf.port + 1 + slot
        listen = [workers.listening(conf.host, conf.port, shared=True),
                  workers.listening(conf.host, port, shared=False)]  # fmt: skip
    _logging(conf.log_format)
    if conf.role == "pages":
        if slot is None:
            db = make_url(conf.db).render_as_string(hide_password=True)
            print(f"flyswat: the players' pages on http://{conf.host}:{conf.port}/  (store: "
                  f"{db}; no tables)", flush=True)  # fmt: skip
        serve(build_pages_app(conf.db, conf.limits), conf.host, conf.port, conf.limits,
              sockets=listen, proxies=tuple(sorted(conf.trusted_proxies)))  # fmt: skip
        return 0
    node_id = conf.node_id or f"{sockets.gethostname()}:{port}"
    if conf.node_id and slot is not None:
        node_id = f"{conf.node_id}/{slot}"
    url = (conf.advertise or "http://{host}:{port}").format(
        host=conf.host, port=port, slot="" if slot is None else slot
    )
    app = build_app(conf.db, bot_pace=conf.bot_pace, jobs=[collect] if conf.gc == "tuned" else [],
                    limits=conf.limits, rtt_fronts=conf.rtt_header_from,
                    play_now_wait_ms=round(conf.play_now_wait_s * 1000), node_id=node_id,
                    node_url=url, redis_url=conf.redis, redis_prefix=conf.redis_prefix,
                    timings=conf.timings, max_spectators=conf.max_spectators,
                    operator_secret=operator.operator_secret(conf.operator_secret),
                    arena_schedule=conf.arena_schedule,
                    stall_log_ms=conf.stall_log_ms, writer=conf.writer)  # fmt: skip
    if slot is None:
        db = make_url(conf.db).render_as_string(hide_password=True)
        print(f"flyswat: open http://{conf.host}:{conf.port}/  (store: {db}; node {node_id}; "
              f"{_hot_path()})", flush=True)  # fmt: skip
    serve(app, conf.host, conf.port, conf.limits, sockets=listen,
          before_shutdown=app.state.hand_over,
          proxies=tuple(sorted(conf.trusted_proxies)))  # fmt: skip
    return 0


def port_in_use(host: str, port: int) -> bool:
    """Is ``host:port`` held by a listening socket already? Tried on each address the host
    names, as the server will bind them; any other failure is left for the server's own bind
    to report."""
    try:
        found = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)  # fmt: skip
    except OSError:
        return False
    for family, kind, proto, _, address in found:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # as asyncio binds it: IPv6 alone
                probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                probe.bind(address)
            except OSError as e:
                if e.errno == errno.EADDRINUSE:
                    return True
    return False


def _hot_path() -> str:
    """How the hot path runs here (:mod:`flyswat.native`), for the first line a node prints."""
    state = native.STATE
    return "hot path compiled" if state.compiled else f"hot path interpreted: {state.why}"


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
