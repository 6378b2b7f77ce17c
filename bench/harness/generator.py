"""The generator of the slap-table rhythm: many :class:`~harness.rhythm.Table` s on one loop.

A :class:`Generator` runs one :class:`~harness.rhythm.RhythmPlan`: it opens the tables
(``joins_in_flight`` create and join requests at once on a small pool of
:mod:`harness.http` connections), keeps them
going, notes the loop's own lag, and measures a window (:meth:`Generator.measure`).
:func:`generator_main` is one generator process, driven by ``bench/rhythm.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
from collections import Counter
from typing import Any
from urllib.parse import urlsplit

from flyswat.server.serve import collect
from harness.http import HttpPool
from harness.libclient import LibSocket, open_lib_socket
from harness.load import check_loopback, raise_fd_limit
from harness.rhythm import Player, RhythmPlan, Table
from harness.wire import WireSocket, open_socket


class Generator:
    """The tables of one :class:`RhythmPlan`, on the running loop."""

    def __init__(self, plan: RhythmPlan) -> None:
        check_loopback(plan.http)
        self.plan = plan
        parts = urlsplit(plan.http)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.loop = asyncio.get_running_loop()
        self.rng = random.Random(plan.seed)
        # The cheap client (harness.http): httpx cost the generator more CPU a player set up
        # than the server's own set-up (bench/table_setup.py).
        self.http = HttpPool(self.host, self.port, plan.joins_in_flight)
        self.gate = asyncio.Semaphore(plan.joins_in_flight)
        self.tables: list[Table] = []
        self.numbered = 0
        self.sent = 0
        self.received = 0
        self.count: Counter[str] = Counter()
        #: Messages received by their type's first three letters (``rou``: ``round``).
        self.kinds: Counter[bytes] = Counter()
        self.errors: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self.rounds: list[tuple[float, float]] = []  # (last action sent at, ms to its result)
        self.last_actions: list[float] = []
        self.games_over_at: list[float] = []  # when each game's end was seen
        self.timeouts: list[float] = []
        self.lag_ms: list[tuple[float, float]] = []
        self.stopping = False
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def seat_request(self, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """``POST`` a create or a join; the ``Seated`` reply, or None (counted as a failed
        join) when it was refused or took more than ``join_timeout_s``."""
        async with self.gate:
            try:
                reply = await asyncio.wait_for(self.http.post(path, body), self.plan.join_timeout_s)
            except (OSError, TimeoutError) as e:
                self.count["failed_joins"] += 1
                self.failures[type(e).__name__] += 1
                return None
        if reply.status_code != 201:
            self.count["failed_joins"] += 1
            self.failures[str(reply.status_code)] += 1
            return None
        self.count["joins"] += 1
        seated: dict[str, Any] = reply.json()
        return seated

    async def owner_port(self, code: str) -> int:
        """The port of the node that runs table ``code`` (a table's info names it): with
        ``--workers``, a client goes there as a ``moved`` would send it, once for all."""
        with contextlib.suppress(OSError, ValueError, IndexError):
            reply = await self.http.get(f"/api/tables/{code}")
            url = reply.headers.get("x-flyswat-node-url")
            if url:
                return int(url.rsplit(":", 1)[1].split("/")[0])
        return self.port

    async def connect(self, player: Player) -> WireSocket | LibSocket:
        """Open ``player``'s socket with the plan's client."""
        plan = self.plan
        port = getattr(player.table, "port", None) or self.port
        if plan.client == "websockets":
            url = f"ws://{self.host}:{port}{player.path}"
            return await open_lib_socket(url, player.on_message, player.on_lost,
                                         plan.join_timeout_s, plan.deflate)  # fmt: skip
        return await open_socket(self.host, port, player.path, player.on_message,
                                 player.on_lost, plan.join_timeout_s, plan.deflate)  # fmt: skip

    async def open_table(self) -> Table | None:
        """Open a table and seat its clients, trying a new table after a failure; None when
        the generator stops first."""
        while not self.stopping:
            self.numbered += 1
            table = Table(self, self.numbered)
            if await table.open():
                self.tables.append(table)
                self.count["tables"] += 1
                return table
            await asyncio.sleep(1.0)
        return None

    async def setup(self) -> None:
        """Open every table of the plan, ``joins_in_flight`` requests at once."""
        await asyncio.wait_for(
            asyncio.gather(*(self.open_table() for _ in range(self.plan.tables))),
            self.plan.setup_timeout_s,
        )

    async def watch_lag(self) -> None:
        """Note how late a 50 ms sleep wakes, with the time, until stopped."""
        while not self.stopping:
            t = self.loop.time()
            await asyncio.sleep(0.05)
            now = self.loop.time()
            self.lag_ms.append((t, (now - t - 0.05) * 1000))

    def snapshot(self) -> dict[str, Any]:
        """The running counts now."""
        return {"at": self.loop.time(), "sent": self.sent, "received": self.received,
                "count": dict(self.count), "errors": dict(self.errors),
                "kinds": {k.decode(): n for k, n in self.kinds.items()}}  # fmt: skip

    async def measure(self, t0: float) -> dict[str, Any]:
        """Play on through the window ``[t0, t0 + duration_s)`` of the loop's clock, wait
        ``timeout_s`` more for its last results, and return what was measured in it."""
        plan = self.plan
        lag = self.spawn(self.watch_lag())
        await asyncio.sleep(max(0.0, t0 - self.loop.time()))
        before = self.snapshot()
        await asyncio.sleep(max(0.0, t0 + plan.duration_s - self.loop.time()))
        after = self.snapshot()
        await asyncio.sleep(plan.timeout_s + 0.5)
        t1 = t0 + plan.duration_s
        lag.cancel()

        def inside(at: float) -> bool:
            return t0 <= at < t1

        window = after["at"] - before["at"]
        count = Counter(after["count"]) - Counter(before["count"])
        return {
            "name": plan.name,
            "tables": plan.tables,
            "players": plan.tables * plan.seats,
            "window_s": window,
            "sent_per_s": (after["sent"] - before["sent"]) / window,
            "received_per_s": (after["received"] - before["received"]) / window,
            "round_ms": [ms for at, ms in self.rounds if inside(at)],
            "rounds": sum(1 for at in self.last_actions if inside(at)),
            "timeouts": sum(1 for at in self.timeouts if inside(at)),
            "lag_ms": [ms for at, ms in self.lag_ms if inside(at)],
            # When in the window (s) the slow ones came: rounds over 100 ms, lags over 25.
            "slow_rounds": [(at - t0, ms) for at, ms in self.rounds if inside(at) and ms > 100],
            "slow_lags": [(at - t0, ms) for at, ms in self.lag_ms if inside(at) and ms > 25],
            "games_over_at": [at - t0 for at in self.games_over_at if inside(at)],
            "window": dict(count),
            "received_by_type": dict(Counter(after["kinds"]) - Counter(before["kinds"])),
            "window_errors": dict(Counter(after["errors"]) - Counter(before["errors"])),
            "total": after["count"],
            "errors": after["errors"],
            "failures": dict(self.failures),
            "loop": type(self.loop).__module__,
            "pid": os.getpid(),
        }

    async def close(self) -> None:
        """Stop: close every socket and the HTTP pool."""
        self.stopping = True
        for task in list(self._tasks):
            task.cancel()
        for table in self.tables:
            table.close()
        await self.http.aclose()
        await asyncio.sleep(0.1)


def new_loop() -> asyncio.AbstractEventLoop:
    """An event loop: uvloop's when it is installed, else asyncio's own."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
    return loop


def generator_main(plan: RhythmPlan, ready: Any, go: Any, t0: Any, stop: Any, out: Any) -> None:
    """A generator process: set up ``plan``, set ``ready``, wait for ``go`` (the window's
    start is then in ``t0.value``, on the machine's monotonic clock), measure, put the report
    on ``out``, play on until ``stop`` (multiprocessing objects). A failure is put on ``out``
    as ``{"name", "error"}``."""
    raise_fd_limit()

    async def run() -> dict[str, Any]:
        # The server's collector policy (young collections only, survivors frozen): under
        # Python's default a generator of 2,000 clients paused up to 320 ms in a full
        # collection and 50 ms in a young one, and every round it was waiting for then
        # counted as that slow (docs/BENCHMARKS.md, *The generator's own pauses*).
        collector = asyncio.ensure_future(collect())
        gen = Generator(plan)
        try:
            await gen.setup()
            ready.set()
            if not await asyncio.to_thread(go.wait, plan.setup_timeout_s):
                raise TimeoutError("no go from the orchestrator")
            report = await gen.measure(float(t0.value))
            out.put(report)
            await asyncio.to_thread(stop.wait, 600)
            return report
        finally:
            collector.cancel()
            await gen.close()

    try:
        with asyncio.Runner(loop_factory=new_loop) as runner:
            runner.run(run())
    except Exception as e:  # reported to the orchestrator, which prints it
        ready.set()
        out.put({"name": plan.name, "error": f"{type(e).__name__}: {e}"})


def end_generators(stop: Any, procs: list[Any]) -> None:
    """Tell the generator processes to stop (``stop``, the event they were given), and
    kill any that has not ended 20 s later."""
    stop.set()
    for proc in procs:
        proc.join(20)
        if proc.is_alive():
            proc.kill()
