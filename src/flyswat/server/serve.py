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

log = logging.getLogger("flyswat.server")

#: Allocations less deallocations between young collections (Python's default is 700): fewer
#: of them, each walking what was made since the last (docs/BENCHMARKS.md, *A burst of
#: games' ends*). Only where the collector runs by itself (:func:`young_only`).
GC_THRESHOLD0 = 20_000
#: Collections between two of the next generation: so many that none of the older two runs.
NEVER = 10**9
#: While the node makes cyclic garbage, how often what was made since is walked and frozen out
#: of every later walk (s) (:class:`Collector`).
COLLECT_EVERY_S = 0.25
#: How long a look lasts (s): what it walks is what was made in it, so its pause is short.
LOOK_S = 0.1
#: A look every this many :data:`COLLECT_EVERY_S` while no garbage is found.
LOOK_EVERY = 4
#: Slices walked after the last cyclic garbage found (10 minutes at a quarter of a second).
WALK_FOR = 2400


def young_only() -> None:
    """Young collections every :data:`GC_THRESHOLD0` allocations, the older generations
    never: a collector that runs by itself, without :class:`Collector`'s freezes (the bench's
    writer, ``bench/writer_commit.py``)."""
    gc.set_threshold(GC_THRESHOLD0, NEVER, NEVER)


class Collector:
    """Keep the garbage collector's pauses, and its CPU, off the players' critical path.

    A full collection walks every live object and holds up every table meanwhile (hundreds of
    ms with thousands of players: docs/BENCHMARKS.md, Load and soak), and so does a
    collection of the middle generation, everything that survived the young collections of
    the last few seconds. So nothing is walked twice: what was made and still lives is frozen
    out of every later walk (a list splice), at least every second. Objects
    that die by reference count are freed at once as ever, frozen or not; the server makes no
    reference cycles (a finished table, a closed socket and its session, a node's beat and the
    set-ups' reads are freed by reference count: ``tests/server/test_heap.py``).

    Nor is a young walk cheap: what lives a quarter of a second — each table's last views,
    the turns and slaps of the games in play — is 19,000 objects at 6,000 players, 10 ms to
    walk (median; 29 at worst), 4 % of a core, and it found no garbage at all in steady play.
    So the collector does not run by itself, and walks only to look: every
    :data:`LOOK_EVERY` slices, a slice of :data:`LOOK_S` is collected before its freeze (a
    pause of a few ms). Where a look finds cyclic garbage (a path that makes cycles: a library's
    statement built anew, say), every slice is collected before its freeze, as long as
    garbage was found in the last :data:`WALK_FOR` slices: a node that makes cycles steadily
    frees them, and a cycle made between two looks of a clean node is frozen (kept for good),
    so ``flyswat_gc_collected_total`` and ``flyswat_heap_blocks`` are the figures to watch.
    """

    def __init__(
        self,
        every_s: float = COLLECT_EVERY_S,
        look_s: float = LOOK_S,
        look_every: int = LOOK_EVERY,
        walk_for: int = WALK_FOR,
    ) -> None:
        self.every_s = every_s
        self.look_s = look_s
        self.look_every = look_every
        self.walk_for = walk_for
        self.walking = 0  # slices still to be walked before each freeze
        self.found = 0  # cyclic garbage found, in objects

    def _walk(self) -> None:
        """Collect what was made since the last freeze, then freeze what survived."""
        found = gc.collect(0)
        gc.freeze()
        if found:
            if not self.walking:
                log.info("the collector found %d objects of cyclic garbage: it walks every "
                         "slice until it finds none for %d", found, self.walk_for)  # fmt: skip
            self.found += found
            self.walking = self.walk_for
        elif self.walking:
            self.walking -= 1

    async def run(self) -> None:
        """Freeze, look and walk as the class says, until cancelled (the collector is then
        as it was)."""
        was = gc.isenabled()
        gc.disable()
        try:
            while True:
                if not self.walking:
                    gc.freeze()  # what was made since the last look, unwalked
                await asyncio.sleep(self.every_s if self.walking else self.look_s)
                self._walk()
                if not self.walking:
                    await asyncio.sleep(self.every_s * self.look_every)
        finally:
            if was:
                gc.enable()


async def collect() -> None:
    """The node's collector (:class:`Collector`), as a job of its loop."""
    await Collector().run()


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
