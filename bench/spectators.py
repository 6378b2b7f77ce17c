"""Watching at scale (issue 23): thousands of spectators of one featured game on one process.

One fresh ``flyswat serve --workers 1`` (its own SQLite file, ``--exempt 127.0.0.1``,
``--max-spectators`` above the count) and, on the machine's one monotonic clock:

- the **featured table**: four clients of the slap-table rhythm (:mod:`harness.rhythm`, a
  generator process of its own) playing a whole game (112 cards) that outlasts the window;
  its process notes when each reveal was sent and when the table's first player got it;
- ``--spectators`` sockets (5,000) watching it, spread over ``--procs`` processes (the cheap
  client of :mod:`harness.wire`; each answers its pings), each noting when it got each
  ``reveal``;
- ``--tables`` other tables of the rhythm (a generator process) playing meanwhile.

Measured over a ``--duration`` window (60 s), per reveal of the featured game:

- **reveal → last spectator**: from the moment the revealing player sent its ``reveal`` (an
  automatic reveal has none: left out) to the moment the last of the spectators got it —
  an upper bound of "from the server's reveal", which comes between the two; and from the
  moment the table's first player got it (the same broadcast: the players' frames go first);
- the fan-out itself: first spectator → last spectator;
- every spectator got every reveal (``missed`` counts the ones that did not);

and the players' own latency, as the rhythm benchmark measures it (the last action of a
round → its result, at the featured table and at the others), the server's CPU (100 % = one
core) and RSS, and the loop lag of each generator. Target: reveal → last spectator p99 ≤
200 ms while the players' p99 stays within the hot path's 100 ms.

    flock -x -o /tmp/bench.lock uv run python bench/spectators.py --out docs/bench/spectators.json
    uv run python bench/spectators.py --spectators 500 --tables 4 --duration 20   # a smoke run
    uv run python bench/spectators.py --floor       # the kernel's share: 5,000 writes, no server
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import queue
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from harness import rhythm
from harness.generator import Generator, end_generators, generator_main, new_loop
from harness.load import percentile, raise_fd_limit
from harness.procs import ServerProcess, cpu_seconds, machine_cpu, peak_rss_bytes
from harness.rhythm import RhythmPlan
from harness.server import free_port
from harness.wire import WireSocket, open_socket

_REVEAL_HEAD = b'{"type":"reveal","turn":'
_PING = b'{"type":"ping","id":'
_PONG = b'{"type":"pong","id":'
_WELCOME = b'{"type":"welcome"'


def _turn_of(data: bytes) -> int | None:
    """The ``turn`` of a ``reveal`` as the server encodes it (``type`` then ``turn``)."""
    if not data.startswith(_REVEAL_HEAD):
        return None
    end = data.find(b",", len(_REVEAL_HEAD))
    digits = data[len(_REVEAL_HEAD) : end]
    return int(digits) if digits.isdigit() else None


# -- the featured table -----------------------------------------------------------------------


def featured_main(plan: RhythmPlan, codes: Any, ready: Any, go: Any, t0: Any, stop: Any,
                  out: Any) -> None:  # fmt: skip
    """The featured table's generator: as :func:`generator_main`, and also, per turn, when
    its reveal was sent and when the table's first player got it (``time.monotonic``)."""
    raise_fd_limit()
    sent: dict[int, float] = {}
    got: dict[int, float] = {}
    on_message, send = rhythm.Player.on_message, rhythm.Player.send

    def noted_message(self: rhythm.Player, data: bytes, now: float) -> None:
        turn = _turn_of(data)
        if turn is not None and turn not in got:
            got[turn] = time.monotonic()
        on_message(self, data, now)

    def noted_send(self: rhythm.Player, payload: bytes) -> None:
        if payload == rhythm._REVEAL:
            sent.setdefault(int(self.view.get("turn") or 0) + 1, time.monotonic())
        send(self, payload)

    rhythm.Player.on_message = noted_message  # type: ignore[method-assign]
    rhythm.Player.send = noted_send  # type: ignore[method-assign]

    async def run() -> None:
        gen = Generator(plan)
        try:
            await gen.setup()
            codes.put(gen.tables[0].players[0].path.rsplit("/", 1)[1])
            ready.set()
            if not await asyncio.to_thread(go.wait, plan.setup_timeout_s):
                raise TimeoutError("no go from the orchestrator")
            report = await gen.measure(float(t0.value))
            report["sent"], report["got"] = sent, got
            out.put(report)
            await asyncio.to_thread(stop.wait, 600)
        finally:
            await gen.close()

    try:
        with asyncio.Runner(loop_factory=new_loop) as runner:
            runner.run(run())
    except Exception as e:
        ready.set()
        out.put({"name": plan.name, "error": f"{type(e).__name__}: {e}"})


# -- the spectators ---------------------------------------------------------------------------


class Watchers:
    """``n`` spectators of one table on this process's loop: per turn, when the first and
    the last of them got its ``reveal``, and how many did."""

    def __init__(self, port: int, code: str, n: int) -> None:
        self.port, self.code, self.n = port, code, n
        self.socks: list[WireSocket] = []
        self.welcomed = 0
        self.lost = 0
        self.errors: Counter[str] = Counter()
        self.first: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self.count: Counter[int] = Counter()
        self.all_welcomed = asyncio.Event()

    def on_message(self, sock: list[WireSocket], data: bytes) -> None:
        now = time.monotonic()
        if data.startswith(_PING):
            sock[0].send(_PONG + data[len(_PING) :])
            return
        turn = _turn_of(data)
        if turn is not None:
            if turn not in self.first:
                self.first[turn] = now
            self.last[turn] = now
            self.count[turn] += 1
        elif data.startswith(_WELCOME):
            self.welcomed += 1
            if self.welcomed == self.n:
                self.all_welcomed.set()
        elif data.startswith(b'{"type":"error"'):
            self.errors[json.loads(data).get("code", "?")] += 1

    def on_lost(self, by_us: bool) -> None:
        if not by_us:
            self.lost += 1

    async def open_one(self, gate: asyncio.Semaphore) -> None:
        holder: list[WireSocket] = []
        async with gate:
            sock = await open_socket("127.0.0.1", self.port, f"/ws/{self.code}",
                                     lambda data, _: self.on_message(holder, data),
                                     self.on_lost, 60.0)  # fmt: skip
        holder.append(sock)
        self.socks.append(sock)
        sock.send(b'{"type":"hello"}')

    async def open(self) -> None:
        gate = asyncio.Semaphore(64)
        await asyncio.gather(*(self.open_one(gate) for _ in range(self.n)))
        await asyncio.wait_for(self.all_welcomed.wait(), 120)


def watchers_main(port: int, code: str, n: int, ready: Any, go: Any, t0: Any, stop: Any,
                  duration: float, out: Any, nice: int = 0) -> None:  # fmt: skip
    """One spectators' process: open ``n`` sockets watching ``code``, set ``ready``, and
    report what they got of each reveal in the window. ``nice``: its scheduling priority
    lowered by that much (the spectators' machines are not the server's)."""
    raise_fd_limit()
    os.nice(nice)

    async def run() -> None:
        w = Watchers(port, code, n)
        try:
            await w.open()
            ready.set()
            if not await asyncio.to_thread(go.wait, 600):
                raise TimeoutError("no go from the orchestrator")
            start = float(t0.value)
            await asyncio.sleep(max(0.0, start + duration + 3.0 - time.monotonic()))
            turns = [t for t, at in w.first.items() if start <= at < start + duration]
            out.put({"name": f"watchers-{os.getpid()}", "n": n, "welcomed": w.welcomed,
                     "lost": w.lost, "errors": dict(w.errors),
                     "turns": {t: (w.first[t], w.last[t], w.count[t]) for t in turns}})  # fmt: skip
            await asyncio.to_thread(stop.wait, 600)
        finally:
            for sock in w.socks:
                sock.close()

    try:
        with asyncio.Runner(loop_factory=new_loop) as runner:
            runner.run(run())
    except Exception as e:
        ready.set()
        out.put({"name": "watchers", "error": f"{type(e).__name__}: {e}"})


# -- the floor: what the kernel's loopback takes per write -------------------------------------


def floor(n: int, rounds: int = 5, size: int = 300) -> dict[str, Any]:
    """One process, no server: ``n`` loopback TCP connections and, ``rounds`` times, one
    ``size``-byte write to each through its asyncio transport (uvloop's, as the server's),
    the readers draining between rounds. The time of one pass is what a fan-out to ``n``
    sockets costs at least on this machine, whatever the server does around it."""
    import socket

    raise_fd_limit()

    async def run() -> list[float]:
        loop = asyncio.get_running_loop()
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(n)
        readers, transports = [], []
        for _ in range(n):
            readers.append(socket.create_connection(listener.getsockname()))
            accepted, _ = listener.accept()
            transport, _ = await loop.connect_accepted_socket(asyncio.Protocol, accepted)
            transports.append(transport)
        payload, passes = b"x" * size, []
        for _ in range(rounds):
            t = time.perf_counter()
            for tr in transports:
                tr.write(payload)
            passes.append((time.perf_counter() - t) * 1000)
            for r in readers:
                r.recv(65536)
        for tr in transports:
            tr.close()
        for r in readers:
            r.close()
        listener.close()
        return passes

    with asyncio.Runner(loop_factory=new_loop) as runner:
        passes = runner.run(run())
    command = " ".join(["uv run python bench/spectators.py", *sys.argv[1:]])
    per = [p * 1000 / n for p in passes]
    return {"command": command, "sockets": n, "pass_ms": passes, "us_per_write": per}


# -- the orchestra ----------------------------------------------------------------------------


def _stats(samples: list[float]) -> dict[str, float]:
    return {"n": len(samples), "p50": percentile(samples, 50), "p95": percentile(samples, 95),
            "p99": percentile(samples, 99), "max": max(samples, default=float("nan"))}  # fmt: skip


def _collect(reports: Any, n: int, timeout: float) -> list[dict[str, Any]]:
    got = []
    deadline = time.monotonic() + timeout
    while len(got) < n:
        try:
            got.append(reports.get(timeout=max(0.1, deadline - time.monotonic())))
        except queue.Empty:
            break
    for r in got:
        if "error" in r:
            raise RuntimeError(f"{r['name']}: {r['error']}")
    return got


def run(args: argparse.Namespace) -> dict[str, Any]:
    raise_fd_limit()
    ctx = mp.get_context("spawn")
    go, stop, reports, codes = ctx.Event(), ctx.Event(), ctx.Queue(), ctx.Queue()
    t0 = ctx.Value("d", 0.0)
    workdir = Path(tempfile.mkdtemp(prefix="flyswat-spectators-"))
    port = free_port()
    extra = ["--workers", "1", "--max-spectators", str(args.spectators + 100)]
    server = ServerProcess(f"sqlite:///{workdir / 'flyswat.db'}", port, workdir / "serve.log",
                           args=extra)  # fmt: skip
    server.start()
    http = server.http
    procs: list[Any] = []
    try:
        tv = RhythmPlan(http, tables=1, name="featured", duration_s=args.duration,
                        options={"remove": 0}, reveal_s=args.reveal_s)  # fmt: skip
        others = RhythmPlan(http, tables=args.tables, name="others", duration_s=args.duration,
                            seed=1)  # fmt: skip
        tv_ready, others_ready = ctx.Event(), ctx.Event()
        procs.append(ctx.Process(target=featured_main,
                                 args=(tv, codes, tv_ready, go, t0, stop, reports)))  # fmt: skip
        if args.tables:
            rest = (others, others_ready, go, t0, stop, reports)
            procs.append(ctx.Process(target=generator_main, args=rest))
        for p in procs:
            p.start()
        code = codes.get(timeout=120)
        per = [args.spectators // args.procs + (i < args.spectators % args.procs)
               for i in range(args.procs)]  # fmt: skip
        readies = [ctx.Event() for _ in per]
        for n, ready in zip(per, readies, strict=True):
            proc = ctx.Process(
                target=watchers_main,
                args=(
                    port,
                    code,
                    n,
                    ready,
                    go,
                    t0,
                    stop,
                    args.duration,
                    reports,
                    args.watcher_nice,
                ),
            )
            proc.start()
            procs.append(proc)
        t_setup = time.monotonic()
        for ready in [tv_ready, *([others_ready] if args.tables else []), *readies]:
            if not ready.wait(600):
                raise TimeoutError("a client process never got ready")
        setup_s = time.monotonic() - t_setup
        listed = httpx.get(http + "/api/live", timeout=10).json()
        featured = next((g for g in listed["games"] if g["code"] == code), None)
        t0.value = time.monotonic() + 2.0
        go.set()
        time.sleep(2.0)
        cpu0, busy0, wall0 = cpu_seconds(server.pid), machine_cpu(), time.monotonic()
        time.sleep(args.duration)
        cpu1, busy1, wall1 = cpu_seconds(server.pid), machine_cpu(), time.monotonic()
        got = _collect(reports, len(procs), args.duration + 120)
        rss = peak_rss_bytes(server.pid)
    finally:
        end_generators(stop, procs)
        server.stop()
    return _report(args, code, got, featured, setup_s,
                   (cpu1 - cpu0) / (wall1 - wall0), (busy0, busy1), rss)  # fmt: skip


def _report(
    args: argparse.Namespace, code: str, got: list[dict[str, Any]], featured: Any,
    setup_s: float, server_cpu: float, busy: Any, rss: int,
) -> dict[str, Any]:  # fmt: skip
    tv = next(r for r in got if r["name"] == "featured")
    others = next((r for r in got if r["name"] == "others"), None)
    watchers = [r for r in got if r["name"].startswith("watchers")]
    welcomed = sum(w["welcomed"] for w in watchers)
    turns: dict[int, list[float]] = {}
    for w in watchers:
        for turn, (first, last, n) in w["turns"].items():
            row = turns.setdefault(int(turn), [first, last, 0])
            row[0], row[1], row[2] = min(row[0], first), max(row[1], last), row[2] + n
    sent = {int(k): v for k, v in tv["sent"].items()}
    first_player = {int(k): v for k, v in tv["got"].items()}
    from_sent = [(last - sent[t]) * 1000 for t, (_, last, _) in turns.items() if t in sent]
    from_player = [(last - first_player[t]) * 1000 for t, (_, last, _) in turns.items()
                   if t in first_player]  # fmt: skip
    spread = [(last - first) * 1000 for first, last, _ in turns.values()]
    missed = sum(welcomed - n for _, _, n in turns.values())
    (b0, t0), (b1, t1) = busy
    players = tv["round_ms"] + (others["round_ms"] if others else [])
    return {
        "command": " ".join(["uv run python bench/spectators.py", *sys.argv[1:]]),
        "spectators": args.spectators,
        "welcomed": welcomed,
        "lost": sum(w["lost"] for w in watchers),
        "errors": dict(sum((Counter(w["errors"]) for w in watchers), Counter())),
        "spectator_procs": args.procs,
        "watcher_nice": args.watcher_nice,
        "other_tables": args.tables,
        "players": 4 * (1 + args.tables),
        "duration_s": args.duration,
        "setup_s": round(setup_s, 1),
        "featured": code,
        "featured_in_live": featured and {k: featured[k] for k in ("code", "rating", "spectators")},
        "reveals": len(turns),
        "missed": missed,
        "reveal_to_last_spectator_ms": _stats(from_sent),
        "first_player_to_last_spectator_ms": _stats(from_player),
        "fan_out_ms": _stats(spread),
        "players_round_ms": _stats(players),
        "featured_players_round_ms": _stats(tv["round_ms"]),
        "player_timeouts": tv["timeouts"] + (others["timeouts"] if others else 0),
        "player_errors": {**tv["window_errors"], **(others["window_errors"] if others else {})},
        "generator_lag_p99_ms": {r["name"]: percentile(r["lag_ms"], 99) for r in (tv, others) if r},
        "server_cpu": round(server_cpu, 3),
        "machine_busy_cores": round((b1 - b0) / max(1e-9, t1 - t0) * (os.cpu_count() or 1), 2),
        "server_peak_rss_mb": round(rss / 2**20, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spectators", type=int, default=5000)
    parser.add_argument("--procs", type=int, default=4, help="spectator processes")
    parser.add_argument("--tables", type=int, default=24, help="other tables playing")
    parser.add_argument("--duration", type=float, default=60.0, help="window, seconds")
    parser.add_argument("--reveal-s", type=float, default=1.0,
                        help="the featured table's pause before each reveal")  # fmt: skip
    nice = "lower the spectators' priority by this much (as if they were on other machines)"
    parser.add_argument("--watcher-nice", type=int, default=0, help=nice)
    parser.add_argument("--out", type=Path, default=None, help="write the JSON here")
    only = "only time one write to each of --spectators loopback sockets (no server)"
    parser.add_argument("--floor", action="store_true", help=only)
    args = parser.parse_args()
    report = floor(args.spectators) if args.floor else run(args)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
