"""The slap-table rhythm (``shared/LOAD-RHYTHM.md``): a ramp of players, a fresh server a step.

Each step starts a fresh ``flyswat serve`` process on 127.0.0.1 (its own SQLite file, or a
fresh schema of ``--db postgresql://...``; the per-address limits lifted with ``--exempt
127.0.0.1``) and ``--procs`` generator processes (:mod:`harness.generator`), each owning whole
tables of four connected clients. Once every client has joined, a ``--duration`` window
(60 s) is measured:

- (a) last action → result: the client whose hand or ``done`` completed a round, from its own
  send to its ``round`` message; p50/p95/p99/max;
- (b) joins, failed joins (refused, or over 20 s), disconnects, ``error`` messages by code;
- (c) timeouts: rounds whose result had not come 3 s after their last action;
- (d) the server's CPU (utime + stime, ``/proc``; 100 % = one core), per 1,000 players and
  per message (in + out), its peak RSS; the generator's own CPU (its processes and this one)
  and each generator's event-loop lag; the machine's busy cores; messages per second per
  player in (to the server) and out.

A step passes when p99 of (a) ≤ 100 ms, timeouts ≤ 1 % of the rounds, no join failed and the
server is alive. The ramp stops at its first failing step (``--keep-going`` runs on); at that
step (or every step with ``--profile``) py-spy samples the server for ``--profile-seconds``
just after the window, under the same load, and the top functions are printed.

The row's ``GC`` column is the server's full garbage collections in the window and the
longest pause (ms). The server since issue 20 runs none (``flyswat.server.serve.collect``
freezes what survives young collections); an older one (``--server-src``) ran one every 2
minutes, which a 60-s window holds or not depending on when it falls (``--warmup`` moves the
window later), some 400–500 ms at 2,000 players, enough to decide a p99.

    uv run python bench/rhythm.py                                 # 1000 2000 ... 8000
    uv run python bench/rhythm.py --players 1000 1500 2000 --out rhythm.json
    uv run python bench/rhythm.py --players 1500 2000 --server-src src --server-src 1c322f4
    uv run python bench/rhythm.py --players 1000 --db postgresql://user:pw@127.0.0.1/flyswat

``--server-src`` (repeatable) runs the server from another checkout's ``src`` folder, or from
a commit of this repository (its ``src`` exported with ``git archive``), first on the
``PYTHONPATH``; a server too old for ``--exempt`` runs without it. With several, each step
runs each of them in turn, so that two versions are compared side by side on the same
machine in one run, each ramp stopping on its own.
Run it under the benchmark lock: ``flock -x /work/bench.lock uv run python bench/rhythm.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
import multiprocessing as mp
import os
import queue
import re
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from harness.generator import end_generators, generator_main
from harness.load import percentile, raise_fd_limit
from harness.procs import (
    ServerProcess,
    cpu_times,
    gc_pauses,
    machine_cpu,
    peak_rss_bytes,
    rss_bytes,
)
from harness.profile import profile, summarize_profile
from harness.rhythm import RhythmPlan
from harness.seed import reader_main, seed_games
from harness.server import free_port, pg_schema

ROOT = Path(__file__).resolve().parent.parent
STEPS = [1000, 2000, 3000, 4000, 6000, 8000]
P99_MS = 100.0
#: The longest stall of the event loop issue 20 allows (ms): every longer one is counted.
STALL_MS = 25.0
TIMEOUT_SHARE = 0.01
JOINS_IN_FLIGHT = 50
#: Before a step, the machine is quiet when it is busy less than this many cores.
QUIET_CORES = 0.3


def split(total: int, parts: int) -> list[int]:
    """``total`` over ``parts``, as evenly as can be."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def commit_of(src: Path) -> str:
    """The last commit that changed ``src`` in its checkout (with ``+`` when it has changes
    not committed): the server's code, whatever the harness's commit."""

    def git(*args: str) -> str:
        out = subprocess.run(["git", "-C", str(src), *args], capture_output=True, text=True)
        return out.stdout.strip()

    head = git("log", "-1", "--format=%h", "--", ".") or "?"  # the last commit of the code
    return head + ("+" if git("status", "--porcelain", "--untracked-files=no", ".") else "")


@functools.cache
def serve_help(src: Path) -> str:
    """``flyswat serve --help`` of the server in ``src``: which options it has (an older
    server has fewer)."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    cmd = [sys.executable, "-m", "flyswat.cli", "serve", "--help"]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60).stdout


def has_limits(src: Path) -> bool:
    """Does the server in ``src`` have per-address limits (``flyswat serve --exempt``)? An
    older one has neither the limits nor the option."""
    return "--exempt" in serve_help(src)


def stall_args(src: Path) -> list[str]:
    """The server logs every stall of its loop over :data:`STALL_MS` with its length and
    where the loop was (an older server only those over 100 ms, with where, or none)."""
    return ["--stall-log-ms", f"{STALL_MS:g}"] if "--stall-log-ms" in serve_help(src) else []


_STALLED = re.compile(
    r"the event loop stalled for (\d+) ms(?: \(of the last \d+ ms: ran (\d+), "
    r"waited for a core (\d+), asleep (\d+)\))?"
)
#: What a stall's loop thread mostly did, as its end's line tells (a newer server).
PARTS = ("ran", "waited for a core", "asleep")
#: What the loop did over a stall's span, as a newer server's line tells (its counts, in
#: ``flyswat.server.metrics.SPAN_COUNTS``' order).
_SPAN = re.compile(
    r"the event loop stalled for (\d+) ms \(of the last (\d+) ms: ran (\d+), waited for a "
    r"core \d+, asleep \d+\); meanwhile (\d+) messages in, (\d+) out, (\d+) commands, (\d+) "
    r"sockets written, (\d+) commits told, (\d+) set-ups(?:; it ended at (\S+))?"
)
SPAN_KEYS = ("ms", "span_ms", "ran_ms", "in", "out", "commands", "writes", "commits", "setups")
_CAUGHT = re.compile(r"the event loop (?:has not run for|is) \d+ ms(?: late)?(, idle)?")
_FRAME = re.compile(r'File ".*?(flyswat/[\w/]+\.py)", line \d+, in (\S+)')


def read_from(path: Path, offset: int) -> str:
    """What was written to ``path`` from byte ``offset`` on (a log's lines of the window)."""
    if not path.exists():
        return ""
    with path.open("rb") as f:
        f.seek(offset)
        return f.read().decode("utf-8", "replace")


#: A stall the server's watch caught with no frame of flyswat's on the loop's thread: it looks
#: when it gets the interpreter's lock, which the loop lets go between two callbacks — in a
#: burst, a turn of many callbacks one after another (docs/BENCHMARKS.md, *A quarter of a
#: second*: perf found the loop running Python through such stalls), else no core, the
#: sockets or the lock.
BETWEEN_CALLBACKS = "between callbacks (a long turn of them, no core, sockets or the GIL)"


def stalls_in(text: str) -> tuple[list[float], Counter[str], Counter[str]]:
    """The stalls a server's log tells of (its lines written in the window): their lengths
    (ms); where the loop was caught in each: the innermost frame of flyswat's own code,
    or :data:`BETWEEN_CALLBACKS`; and how
    many stalls the loop's thread mostly ran through, waited for a core through, or slept
    through (:data:`PARTS`, from the kernel's count: a newer server's lines only)."""
    ends = list(_STALLED.finditer(text))
    lengths = [float(m.group(1)) for m in ends]
    mostly: Counter[str] = Counter()
    for m in ends:
        if m.group(2) is not None:
            parts = [float(m.group(i)) for i in (2, 3, 4)]
            mostly[PARTS[parts.index(max(parts))]] += 1
    causes: Counter[str] = Counter()
    for block in text.split("flyswat.stall:")[1:]:
        caught = _CAUGHT.search(block)
        if caught is None:
            continue
        if caught.group(1):
            causes[BETWEEN_CALLBACKS] += 1
            continue
        frames = _FRAME.findall(block)
        causes[f"{frames[-1][1]} ({frames[-1][0]})" if frames else "outside flyswat"] += 1
    return lengths, causes, mostly


def stall_spans(
    text: str, looks: Sequence[tuple[float, float]] = (), since: float = 0.0
) -> list[dict[str, float]]:
    """What each stall's span held, as a newer server's lines tell (:data:`SPAN_KEYS`): its
    length, the span's, the loop thread's time on a core, and the node's counts of messages
    in and out, commands, sockets written, commits told and set-ups over it; with when it
    ended, ``at_s`` (seconds after the wall time ``since``: the window's start), and
    ``look_ms``: the pauses of the server's young collections (``looks``: wall time and ms of
    each, its ``gc_log``) that ended in the span."""
    spans: list[dict[str, float]] = []
    for m in _SPAN.finditer(text):
        *counts, ended = m.groups()
        span: dict[str, float] = dict(zip(SPAN_KEYS, map(int, counts), strict=True))
        if ended:
            end = datetime.fromisoformat(ended).timestamp()
            start = end - span["span_ms"] / 1000
            span["at_s"] = round(end - since, 3)
            span["look_ms"] = sum(ms for t, ms in looks if start <= t <= end + 0.005)
        spans.append(span)
    return spans


def spans_line(fig: dict[str, Any]) -> list[str]:
    """The stalls' spans against the window: how many messages (in and out) a ms of the loop
    thread's run they held, and the window's own rate a ms of the server's CPU — about the
    same when a stall is a long turn of the usual small things, far fewer when it is a few
    long ones."""
    spans = fig.get("stall_spans") or []
    if not spans:
        return []
    rate = [(s["in"] + s["out"]) / max(1, s["ran_ms"]) for s in spans]
    per_s = (fig["msgs_in_per_player"] + fig["msgs_out_per_player"]) * fig["players"]
    usual = per_s / max(1e-9, fig["server_cpu"] * 1000)

    def mid(key: str) -> float:
        return statistics.median(s[key] for s in spans)

    looked = [s["look_ms"] for s in spans if s.get("look_ms")]
    return [
        f"  what the stalls' spans held (median of {len(spans)}): {mid('span_ms'):.0f} ms, the "
        f"loop's thread on a core {mid('ran_ms'):.0f}; messages in {mid('in'):.0f}, out "
        f"{mid('out'):.0f}, commands {mid('commands'):.0f}, sockets written {mid('writes'):.0f},"
        f" commits told {mid('commits'):.0f}, set-ups {mid('setups'):.0f}; messages a ms on a "
        f"core: {statistics.median(rate):.0f} (min {min(rate):.0f}, max {max(rate):.0f}), the "
        f"window's a ms of the server's CPU {usual:.0f}; a young collection in {len(looked)} of "
        f"them ({', '.join(f'{ms:.1f}' for ms in looked) or '-'} ms); when (s into the window): "
        + (", ".join(f"{s['at_s']:.0f}" for s in spans if "at_s" in s) or "-")
    ]


def busy_cores(seconds: float) -> float:
    """How many cores the machine keeps busy over the next ``seconds``."""
    b0, t0 = machine_cpu()
    time.sleep(seconds)
    b1, t1 = machine_cpu()
    return (b1 - b0) / (t1 - t0) * (os.cpu_count() or 1)


def wait_quiet(limit_s: float = 30.0) -> float:
    """Wait (up to ``limit_s``) until the machine is busy less than :data:`QUIET_CORES`;
    returns the busy cores last seen."""
    end = time.monotonic() + limit_s
    busy = busy_cores(2)
    while busy >= QUIET_CORES and time.monotonic() < end:
        busy = busy_cores(2)
    return busy


@contextlib.contextmanager
def fresh_db(url: str | None, workdir: Path, name: str) -> Iterator[str]:
    """A database nobody used: a new SQLite file in ``workdir``, or a new schema of the
    PostgreSQL database ``url`` (dropped afterwards)."""
    if url is None or url.startswith("sqlite"):
        path = workdir / f"{name}.db"
        path.unlink(missing_ok=True)
        yield f"sqlite:///{path}"
        return
    with pg_schema(url, "rhythm_") as fresh:
        yield fresh


def alive(server: ServerProcess | Servers) -> bool:
    """Is the server still running and answering ``/health``?"""
    if server.proc is None or server.proc.poll() is not None:
        return False
    try:
        return httpx.get(server.http + "/health", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def hot_path(server: ServerProcess) -> str:
    """How the server runs its hot path (``/health``'s ``hot_path``: compiled, or not; a
    server from before ``hatch_build.py`` says nothing: interpreted)."""
    return str(httpx.get(server.http + "/health", timeout=5).json().get("hot_path", "interpreted"))


def tree_cpu(server: ServerProcess | Servers) -> tuple[float, float]:
    """``(user, system)`` CPU seconds of the server and its workers (``--workers``)."""
    times = [cpu_times(pid) for pid in server.pids()]
    return sum(t[0] for t in times), sum(t[1] for t in times)


def self_cpu() -> tuple[float, float]:
    """This process's own ``(user, system)`` CPU seconds."""
    t = os.times()
    return t.user, t.system


@dataclass(frozen=True)
class Source:
    """Where a server's code is: a ``src`` folder, how the table names it, its commit;
    ``workers``: ``flyswat serve --workers`` (none: as ``--serve-arg`` says, else one);
    ``anchor``: ``path`` is an anchor's folder (``--anchor``), not flyswat's."""

    path: Path
    label: str
    commit: str
    workers: int | None = None
    anchor: bool = False
    reads: float = 0.0  # players' pages read a second beside the rhythm (--reads-each)


def source(arg: str, workdir: Path) -> Source:
    """A ``--server-src``: a checkout's ``src`` folder, or a commit of this repository (its
    ``src`` is exported into ``workdir``)."""
    path = Path(arg)
    if path.is_dir():
        path = path.resolve()
        label = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
        return Source(path, label, commit_of(path))
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "--verify",
                          f"{arg}^{{commit}}"], capture_output=True, text=True)  # fmt: skip
    if rev.returncode:
        raise SystemExit(f"--server-src {arg}: neither a folder nor a commit")
    commit = rev.stdout.strip()
    out = workdir / f"src-{commit}"
    if not out.exists():
        out.mkdir(parents=True)
        has = ["git", "-C", str(ROOT), "cat-file", "-e", f"{commit}:hatch_build.py"]
        hook = subprocess.run(has, capture_output=True).returncode == 0
        paths = ["src", "hatch_build.py"] if hook else ["src"]
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, *paths],
                                 capture_output=True, check=True)  # fmt: skip
        subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True)
        if hook:  # its hot path compiled, as its install would (flyswat.native loads it)
            subprocess.run([sys.executable, str(out / "hatch_build.py")], check=True)
    return Source(out / "src", commit, commit)


def step(players: int, src: Source, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """One step: a fresh server from ``src``, the generators, the window; the figures."""
    if src.anchor:
        return anchor_step(players, src, args, workdir)
    label = src.label
    tables = players // 4
    fig = step_head(tables, src, args)
    name = f"rhythm-{label.replace('/', '_')}-{players}"
    with fresh_db(args.db, workdir, name) as db:
        env = {"PYTHONPATH": str(src.path)} if src.path != ROOT / "src" else None
        gc_log = workdir / f"{name}.gc"
        gc_log.unlink(missing_ok=True)
        ids = seed_games(db, args.seed_games, args.seed) if args.seed_games else []
        fig["seeded_games"] = args.seed_games
        servers = []
        if args.nodes > 1:
            import redis

            redis.Redis.from_url(args.redis).flushdb()
        for k in range(args.nodes):  # one, or nodes sharing the store and Redis
            port = free_port()
            node_args = [] if args.nodes == 1 else [
                "--workers", "1", "--node-id", f"n{k}", "--redis", args.redis,
                "--advertise", f"http://127.0.0.1:{port}"]  # fmt: skip
            workers = [] if src.workers is None else ["--workers", str(src.workers)]
            servers.append(ServerProcess(db, port, workdir / f"{name}-{k}.log", env=env,
                                         args=[*args.serve_arg, *workers, *node_args,
                                               *stall_args(src.path)],
                                         exempt=has_limits(src.path),
                                         gc_log=gc_log if k == 0 else None))  # fmt: skip
        if src.reads and args.pages_apart:  # the pages read from a process of their own
            servers.append(ServerProcess(db, free_port(), workdir / f"{name}-pages.log", env=env,
                                         args=["--role", "pages", "--workers", "1"],
                                         exempt=has_limits(src.path)))  # fmt: skip
        try:
            for server in servers:
                server.start()
            fig["hot_path"] = hot_path(servers[0])
            nodes = servers[:-1] if src.reads and args.pages_apart else servers
            pages = servers[-1] if len(nodes) < len(servers) else None
            if pages is not None and args.pages_nice:  # its SQL threads, made later, inherit it
                os.setpriority(os.PRIO_PROCESS, pages.pid, args.pages_nice)
            fig |= run_step(Servers(nodes), tables, args, workdir / f"{name}.prof", gc_log,
                            src.reads, ids, pages)  # fmt: skip
        finally:
            for server in servers:
                server.stop()
    return fig


def step_head(tables: int, src: Source, args: argparse.Namespace) -> dict[str, Any]:
    """What a step's figures say first: who, how many, the machine before (once quiet)."""
    quiet = wait_quiet()
    return {
        "server": src.label, "commit": src.commit, "players": tables * 4, "tables": tables,
        "procs": args.procs, "deflate": args.deflate, "client": args.client,
        "db": "sqlite" if not args.db else args.db.split(":", 1)[0],
        "loadavg_before": Path("/proc/loadavg").read_text().split()[:3],
        "busy_cores_before": quiet,
    }  # fmt: skip


def anchor_step(players: int, src: Source, args: argparse.Namespace,
                workdir: Path) -> dict[str, Any]:  # fmt: skip
    """One step of the anchor (``--anchor``): its own server and generators
    (:mod:`harness.anchor`), the same window, figures and verdict as flyswat's."""
    from harness.anchor import run_anchor

    tables = players // 4
    fig = step_head(tables, src, args) | {"deflate": False, "client": "sdk", "db": "none"}
    parts = max(1, args.procs)
    shares = list(zip(split(tables, parts), split(JOINS_IN_FLIGHT, parts), strict=True))
    out, reports, cpu = run_anchor(src.path, shares, workdir, duration=args.duration,
                                   warmup=args.warmup, setup_timeout=args.setup_timeout,
                                   seed=args.seed)  # fmt: skip
    fig |= out | figures(reports, cpu)
    fig["other_cores"] = fig["busy_cores"] - fig["server_cpu"] - fig["generator_cpu"]
    fig["pass"], fig["why"] = verdict(fig)
    fig["rooms_not_full"] = sum(r["total"].get("rooms_not_full", 0) for r in reports)
    if fig["rooms_not_full"]:  # their clients joined, and never played
        fig["pass"] = False
        fig["why"].append(f"{fig['rooms_not_full']} rooms with fewer than 4")
    return fig


def anchor_source(name: str) -> Source:
    """The anchor ``name`` as a source of the ramp, its packages installed."""
    from harness.anchor import KNOWN, install

    return Source(KNOWN[name], name, install(KNOWN[name]), anchor=True)


def against(fig: dict[str, Any], base: dict[str, Any]) -> str:
    """``fig``'s costs as multiples of the anchor's step ``base`` (kept in ``fig``), a line."""
    from harness.anchor import ratio_line, ratios

    fig["against_anchor"] = {"server": base["server"], **ratios(fig, base)}
    return ratio_line(fig, base)


class Servers:
    """The server processes of a step (one, or ``--nodes``), as one for the figures."""

    def __init__(self, servers: list[ServerProcess]) -> None:
        self.servers = servers
        self.http = servers[0].http
        self.proc = servers[0].proc
        self.pid = servers[0].pid

    def pids(self) -> list[int]:
        return [pid for s in self.servers for pid in s.pids()]

    def urls(self) -> list[str]:
        return [s.http for s in self.servers]

    def running(self) -> bool:
        return all(s.proc is not None and s.proc.poll() is None for s in self.servers)


def service_pids() -> list[int]:
    """The PostgreSQL and Redis server processes of this machine (the shared parts)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/comm"):
        with contextlib.suppress(OSError):
            if stat.read_text().strip() in ("postgres", "redis-server"):
                found.append(int(stat.parent.name))
    return found


def services_cpu(pids: list[int]) -> float:
    """CPU seconds so far of the processes ``pids`` still running."""
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            total += sum(cpu_times(pid))
    return total


#: The server's own histograms read over the window (``/metrics``, a server since issue 20):
#: a slap round's close to its result queued (the store's commit included), each group
#: commit of the store, the loop's lateness every 50 ms.
HISTOGRAMS = (
    "flyswat_round_result_seconds",
    "flyswat_store_commit_seconds",
    "flyswat_loop_stall_seconds",
)


#: The collector's counters in ``/metrics`` by generation, by the name :func:`histograms`
#: gives them; and the door of new tables' set-up (:mod:`flyswat.server.admission`).
GC_COUNTERS = {"flyswat_gc_collections_total": "collections", "flyswat_gc_collected_total": "found"}
DOOR_COUNTERS = {"flyswat_setups_waited_total": "waited", "flyswat_setups_refused_total": "busy"}


def histograms(servers: Servers) -> tuple[dict[str, dict[float, float]], dict[str, float]]:
    """Every node's :data:`HISTOGRAMS`, summed: cumulative counts by bucket bound (s); empty
    for a server without them. And the collector's counters by generation (``collections
    <g>``, and ``found <g>``: the cyclic garbage it freed) and the set-ups that waited at the
    door (``setups waited``, ``setups busy``), summed."""
    from prometheus_client.parser import text_string_to_metric_families

    out: dict[str, dict[float, float]] = {name: {} for name in HISTOGRAMS}
    collector: dict[str, float] = {}
    for url in servers.urls():
        try:
            text = httpx.get(url + "/metrics", timeout=10).text
        except httpx.HTTPError:
            continue
        with contextlib.suppress(ValueError):
            for family in text_string_to_metric_families(text):
                for sample in family.samples:
                    name = sample.name.removesuffix("_bucket")
                    if sample.name.endswith("_bucket") and name in out:
                        le = float(sample.labels["le"])
                        out[name][le] = out[name].get(le, 0.0) + sample.value
                    elif name in GC_COUNTERS:
                        key = f"{GC_COUNTERS[name]} {sample.labels['generation']}"
                        collector[key] = collector.get(key, 0.0) + sample.value
                    elif name in DOOR_COUNTERS:
                        key = f"setups {DOOR_COUNTERS[name]}"
                        collector[key] = collector.get(key, 0.0) + sample.value
    return out, collector


def over_window(
    before: dict[str, dict[float, float]], after: dict[str, dict[float, float]]
) -> dict[str, dict[str, float]]:
    """What each histogram counted in the window: how many, how many over 25, 50, 100 and
    250 ms (NaN where the server has no bucket with that bound: an older one's over 200 ms
    is not its over 250), and the bound of the bucket of the slowest (ms; inf past the last
    bound)."""
    out = {}
    for name, counts in after.items():
        if not counts:
            continue
        delta = {le: n - before.get(name, {}).get(le, 0.0) for le, n in sorted(counts.items())}
        total = delta[math.inf]
        fig: dict[str, float] = {"count": total}
        for ms in (25, 50, 100, 250):
            at = delta.get(ms / 1000)
            fig[f"over_{ms}"] = math.nan if at is None else total - at
        fig["max_le_ms"] = next((le * 1000 for le, n in delta.items() if n >= total), math.inf)
        out[name.removeprefix("flyswat_")] = fig
    return out


def run_step(server: Servers, tables: int, args: argparse.Namespace, prof: Path, gc_log: Path,
             reads: float = 0.0, ids: list[str] | None = None,
             pages: ServerProcess | None = None) -> dict[str, Any]:  # fmt: skip
    """Set up the generators against ``server``, measure the window, maybe profile;
    ``reads``: players' pages read a second meanwhile (of the players ``ids``), from
    ``pages`` (a ``flyswat serve --role pages`` process: ``--pages-apart``) if given, else
    from the first node."""
    ctx = mp.get_context("spawn")
    go, stop, reports = ctx.Event(), ctx.Event(), ctx.Queue()
    t0_value = ctx.Value("d", 0.0)
    urls = server.urls()
    plans = [
        RhythmPlan(urls[i % len(urls)], n, duration_s=args.duration, joins_in_flight=max(1, joins),
                   seed=args.seed + i, name=f"g{i}", setup_timeout_s=args.setup_timeout,
                   deflate=args.deflate, client=args.client)
        for i, (n, joins) in enumerate(zip(split(tables, max(args.procs, len(urls))),
                                           split(JOINS_IN_FLIGHT, max(args.procs, len(urls))),
                                           strict=True))
        if n
    ]  # fmt: skip
    readies = [ctx.Event() for _ in plans]
    procs = [
        ctx.Process(target=generator_main, args=(plan, ready, go, t0_value, stop, reports),
                    daemon=True, name=plan.name)
        for plan, ready in zip(plans, readies, strict=True)
    ]  # fmt: skip
    read_reports = ctx.Queue()
    if reads:  # its CPU is the generator's: it is load, not server
        readies.append(ctx.Event())
        procs.append(ctx.Process(target=reader_main, daemon=True, name="reader", args=(
            pages.http if pages else urls[0], reads, ids or [], readies[-1], go, stop,
            read_reports)))  # fmt: skip
    began = time.monotonic()
    for proc in procs:
        proc.start()
    out: dict[str, Any] = {}
    try:
        while not all(r.is_set() for r in readies):
            if time.monotonic() - began > args.setup_timeout + 30:
                raise TimeoutError(f"set-up took over {args.setup_timeout} s")
            time.sleep(0.1)
        with contextlib.suppress(queue.Empty):
            early = reports.get(timeout=0.5)  # a report this soon is a failure
            raise RuntimeError(f"generator {early.get('name')}: {early.get('error', early)}")
        out["setup_s"] = time.monotonic() - began
        pids = {p.name: p.pid for p in procs if p.pid is not None}
        if pages is not None:
            pids[PAGES] = pages.pid
        t0 = time.monotonic() + args.warmup
        t0_value.value = t0
        go.set()
        time.sleep(max(0.0, t0 - time.monotonic()))
        wall0 = time.time()
        logs0 = [s.log.stat().st_size if s.log.exists() else 0 for s in server.servers]
        cpu0 = {"server": tree_cpu(server), "self": self_cpu()}
        cpu0 |= {k: cpu_times(pid) for k, pid in pids.items()}
        machine0 = machine_cpu()
        services = service_pids()
        services0 = services_cpu(services)
        hist0, gc0 = histograms(server)
        rss_max = 0
        while time.monotonic() < t0 + args.duration:
            time.sleep(min(1.0, max(0.0, t0 + args.duration - time.monotonic())))
            if not server.running():
                break
            rss_max = max(rss_max, sum(rss_bytes(pid) for pid in server.pids()))
        window = time.monotonic() - t0
        wall1 = time.time()
        hist1, gc1 = histograms(server)
        out["server_histograms"] = over_window(hist0, hist1)
        out["server_gc"] = {k: n - gc0.get(k, 0.0) for k, n in gc1.items()}
        logs = [read_from(s.log, at) for s, at in zip(server.servers, logs0, strict=True)]
        machine1 = machine_cpu()
        # A backend born in the window (the pages process connects at its first read) is
        # counted whole: it had used nothing before the window began.
        services += [pid for pid in service_pids() if pid not in services]
        out["services_cpu"] = (services_cpu(services) - services0) / (time.monotonic() - t0)
        out["alive"] = server.running() and all(alive(s) for s in server.servers)
        cpu1 = {"server": tree_cpu(server) if out["alive"] else cpu0["server"],
                "self": self_cpu()}  # fmt: skip
        cpu1 |= {k: cpu_times(pid) for k, pid in pids.items()}
        peak = sum(peak_rss_bytes(p) for p in server.pids()) if out["alive"] else rss_max
        out["server_peak_rss_mb"] = peak / 2**20
        out["window_s"] = window
        cpu = {k: (sum(cpu1[k]) - sum(cpu0[k])) / window for k in cpu0}
        out["system_share"] = {
            k: (cpu1[k][1] - cpu0[k][1]) / max(1e-9, sum(cpu1[k]) - sum(cpu0[k])) for k in cpu0
        }
        out["busy_cores"] = (
            (machine1[0] - machine0[0]) / (machine1[1] - machine0[1]) * (os.cpu_count() or 1)
        )
        got = [reports.get(timeout=args.duration + 60) for _ in plans]
        failed = [g for g in got if "error" in g]
        if failed:
            raise RuntimeError("; ".join(f"{g['name']}: {g['error']}" for g in failed))
        out |= figures(got, cpu)
        log_text = "".join(logs)
        lengths, causes, mostly = stalls_in(log_text)
        out["stalls_ms"], out["stall_causes"] = lengths, dict(causes.most_common())
        out["stalls_mostly"] = dict(mostly.most_common())
        looks = [(t, ms) for t, ms in gc_pauses(gc_log, 0) if wall0 <= t <= wall1]
        out["stall_spans"] = stall_spans(log_text, looks, since=wall0)  # as slow_by_time's s
        out["gc_full_ms"] = [ms for t, ms in gc_pauses(gc_log, 2) if wall0 <= t <= wall1]
        out["gc_gen0_ms"] = [ms for _, ms in looks]
        out["gc_young_ms"] = [ms for t, ms in gc_pauses(gc_log, 1) if wall0 <= t <= wall1]
        out["other_cores"] = (out["busy_cores"] - out["server_cpu"] - out["generator_cpu"]
                              - (out["pages_cpu"] or 0.0))  # fmt: skip
        out["pass"], out["why"] = verdict(out)
        if out["alive"] and (args.profile or (not out["pass"] and not args.no_profile)):
            spy = profile(server.pid, args.profile_seconds, prof)
            if spy is not None:
                spy.wait(args.profile_seconds + 30)
                out["profile"] = summarize_profile(prof, args.profile_seconds, top=args.top)
        if reads:  # read on through the profile: it samples the server with its reads
            stop.set()
            out["reads"] = read_figures(read_reports.get(timeout=60), reads)
    finally:
        end_generators(stop, procs)
    return out


#: The pages process's key among the step's CPU shares (``--pages-apart``).
PAGES = "pages"


def figures(reports: list[dict[str, Any]], cpu: dict[str, float]) -> dict[str, Any]:
    """The step's figures from the generators' reports and the CPU shares of the window."""
    rounds_ms = [ms for r in reports for ms in r["round_ms"]]
    players = sum(r["players"] for r in reports)
    sent = sum(r["sent_per_s"] for r in reports)  # to the server: its messages in
    received = sum(r["received_per_s"] for r in reports)
    total: Counter[str] = sum((Counter(r["total"]) for r in reports), Counter())
    errors: Counter[str] = sum((Counter(r["errors"]) for r in reports), Counter())
    rounds = sum(r["rounds"] for r in reports)
    timeouts = sum(r["timeouts"] for r in reports)
    # (The anchor's clients count no types.)
    by_type: Counter[str] = sum((Counter(r.get("received_by_type", {})) for r in reports),
                                Counter())  # fmt: skip
    window = max(r.get("window_s", 0.0) for r in reports) or 1.0
    server = cpu["server"]
    generator = sum(v for k, v in cpu.items() if k not in ("server", PAGES))
    return {
        "rounds": rounds,
        "rounds_measured": len(rounds_ms),
        "timeouts": timeouts,
        "timeout_share": timeouts / rounds if rounds else 0.0,
        "last_action_ms": {f"p{q}": percentile(rounds_ms, q) for q in (50, 95, 99, 99.9, 100)},
        "joins": total["joins"],
        "failed_joins": total["failed_joins"],
        "join_failures": dict(sum((Counter(r["failures"]) for r in reports), Counter())),
        "connects_failed": total["connects_failed"],
        "disconnects": total["disconnects"],
        "errors": dict(errors),
        "games_over": total["games_over"],
        "late_hands": total["late_hands"],
        "rounds_closed_before_last_hand": total["rounds_closed_before_last_hand"],
        "auto_reveals": total["auto_reveals"],
        "server_cpu": server,
        "server_cpu_per_1000": server / players * 1000,
        "server_us_per_msg": server / (sent + received) * 1e6 if sent + received else 0.0,
        "generator_cpu": generator,
        "generator_cpu_per_1000": generator / players * 1000,
        "generator_cpu_by_process": {k: v for k, v in cpu.items() if k not in ("server", PAGES)},
        "pages_cpu": cpu.get(PAGES),  # the pages process (--pages-apart): server, not load
        "generator_lag_ms": {
            r["name"]: {f"p{q}": percentile(r["lag_ms"], q) for q in (50, 99, 100)} for r in reports
        },
        "event_loop": reports[0]["loop"],
        "msgs_in_per_player": sent / players,
        "msgs_out_per_player": received / players,
        # A player's messages out a second by type (its first three letters: ``han`` hands).
        "msgs_out_by_type": {k: round(n / window / players, 3) for k, n in sorted(by_type.items())},
        # When the slow things happened (s into the window): rounds over 100 ms, the
        # generators' lags over 25 ms, the games' ends; by 5-s bins where any was.
        "slow_by_time": slow_by_time(reports),
    }


def slow_by_time(reports: list[dict[str, Any]], bin_s: float = 5.0) -> list[dict[str, Any]]:
    """Per ``bin_s`` of the window with a round over 100 ms or a generator's lag over 25 ms:
    its start (s), how many such rounds and the slowest (ms), the longest lag (ms), and how
    many games ended in it (a generator too old to tell: none)."""
    bins: dict[int, dict[str, Any]] = {}

    def at(t: float) -> dict[str, Any]:
        return bins.setdefault(int(t // bin_s), {"slow_rounds": 0, "slowest_ms": 0.0,
                                                 "lag_ms": 0.0, "games_over": 0})  # fmt: skip

    for r in reports:
        for t, ms in r.get("slow_rounds", []):
            b = at(t)
            b["slow_rounds"] += 1
            b["slowest_ms"] = max(b["slowest_ms"], ms)
        for t, ms in r.get("slow_lags", []):
            b = at(t)
            b["lag_ms"] = max(b["lag_ms"], ms)
    slow = set(bins)
    for r in reports:
        for t in r.get("games_over_at", []):
            if int(t // bin_s) in slow:
                bins[int(t // bin_s)]["games_over"] += 1
    return [{"at_s": k * bin_s, **v} for k, v in sorted(bins.items())]


def read_figures(report: dict[str, Any], rate: float) -> dict[str, Any]:
    """The reader's figures: what was asked, what was answered, how long each kind took."""
    if "error" in report:
        raise RuntimeError(f"reader: {report['error']}")
    done = [ms for kind in report["ms"].values() for ms in kind]
    return {
        "rate": rate,
        "answered_per_s": len(done) / max(1e-9, report["seconds"]),
        "errors": report["errors"],
        "late": report["late"],
        "ms": {k: {f"p{q}": percentile(v, q) for q in (50, 99)} for k, v in report["ms"].items()},
    }


def verdict(fig: dict[str, Any]) -> tuple[bool, list[str]]:
    """Does the step pass (LOAD-RHYTHM.md), and if not, why not."""
    why = []
    p99 = fig.get("last_action_ms", {}).get("p99", float("nan"))
    if not p99 <= P99_MS:
        why.append(f"p99 {p99:.1f} ms > {P99_MS:g}")
    if fig.get("timeout_share", 1.0) > TIMEOUT_SHARE:
        why.append(f"timeouts {fig.get('timeout_share', 1.0):.1%} > {TIMEOUT_SHARE:.0%}")
    if fig.get("failed_joins", 1):
        why.append(f"{fig.get('failed_joins')} joins failed")
    if not fig.get("alive", False):
        why.append("server dead")
    if not fig.get("rounds_measured"):
        why.append("no round measured")
    return not why, why


HEADER = (
    f"{'server':<10} {'commit':<9} {'players':>7} {'p50/p95/p99/max ms':>26} {'rounds':>6} "
    f"{'t/o':>5} {'joins':>6} {'fail':>4} {'disc':>4} {'err':>4} {'CPU':>5} {'/1k':>5} "
    f"{'µs/msg':>6} {'RSS MB':>6} {'gen':>5} {'gen/1k':>6} {'lag99':>6} {'busy':>4} {'GC':>7} "
    f"{'in/out per player':>17}  pass"
)


def row(fig: dict[str, Any]) -> str:
    """One step as one line of the table."""
    ms = fig["last_action_ms"]
    lat = f"{ms['p50']:.1f}/{ms['p95']:.1f}/{ms['p99']:.1f}/{ms['p100']:.0f}"
    lag = max(v["p99"] for v in fig["generator_lag_ms"].values())
    full = fig["gc_full_ms"]
    gc = f"{len(full)}/{max(full):.0f}" if full else "0"
    return (
        f"{fig['server'][:10]:<10} {fig['commit']:<9} {fig['players']:>7} {lat:>26} "
        f"{fig['rounds']:>6} {fig['timeouts']:>5} {fig['joins']:>6} {fig['failed_joins']:>4} "
        f"{fig['disconnects']:>4} {sum(fig['errors'].values()):>4} {fig['server_cpu']:>5.0%} "
        f"{fig['server_cpu_per_1000']:>5.0%} {fig['server_us_per_msg']:>6.0f} "
        f"{fig['server_peak_rss_mb']:>6.0f} {fig['generator_cpu']:>5.0%} "
        f"{fig['generator_cpu_per_1000']:>6.1%} {lag:>6.1f} {fig['busy_cores']:>4.2f} {gc:>7} "
        f"{fig['msgs_in_per_player']:>8.2f}/{fig['msgs_out_per_player']:<8.2f} "
        f" {'yes' if fig['pass'] else 'no: ' + '; '.join(fig['why'])}"
    )


def details(fig: dict[str, Any]) -> list[str]:
    """The step's other figures, a few lines."""
    lags = ", ".join(f"{k} {v['p50']:.1f}/{v['p99']:.1f}/{v['p100']:.0f}"
                     for k, v in fig["generator_lag_ms"].items())  # fmt: skip
    causes = list(fig.get("stall_causes", {}).items())
    gen0 = fig.get("gc_gen0_ms", [])
    counts = fig.get("server_gc", {})
    reads = fig.get("reads")
    read_line = [] if not reads else [
        f"  reads beside it ({fig['seeded_games']:,} games stored): {reads['rate']:g}/s asked, "
        f"{reads['answered_per_s']:.0f}/s answered, {reads['errors']} errors, {reads['late']} "
        "not sent (every connection busy); p50/p99 ms: "
        + ", ".join(f"{k} {v['p50']:.0f}/{v['p99']:.0f}" for k, v in reads["ms"].items())
        + ("" if fig.get("pages_cpu") is None else
           f"; from a pages process apart, its CPU {fig['pages_cpu']:.0%}")
    ]  # fmt: skip
    lines = [
        f"  set up in {fig['setup_s']:.0f} s; window {fig['window_s']:.0f} s; "
        f"load average before {' '.join(fig['loadavg_before'])}, busy cores before "
        f"{fig['busy_cores_before']:.2f}; generator loop lag p50/p99/max ms: {lags} "
        f"({fig['event_loop']}); busy cores besides the server and the generator: "
        f"{fig['other_cores']:.2f}"
        + (" (the machine was not quiet)" if fig["other_cores"] > QUIET_CORES else "")
        + f"; PostgreSQL and Redis used {fig.get('services_cpu', 0.0):.0%} of a core",
        f"  errors {fig['errors'] or 'none'}; connects failed {fig['connects_failed']}; "
        f"join failures {fig['join_failures'] or 'none'}; games over {fig['games_over']}; "
        f"auto reveals {fig['auto_reveals']}; hands too late {fig['late_hands']}; rounds "
        f"closed before their last hand {fig['rounds_closed_before_last_hand']}",
        f"  the server's garbage collections in the window: full {len(fig['gc_full_ms'])} "
        f"(pauses ms: {', '.join(f'{ms:.0f}' for ms in fig['gc_full_ms']) or '-'}), young "
        f"{len(fig['gc_young_ms'])} (max {max(fig['gc_young_ms'], default=0):.0f} ms); "
        f"generation 0: {len(gen0)}, max {max(gen0, default=0):.1f} ms, over 25 ms "
        f"{sum(ms > 25 for ms in gen0)}; by generation, collections and the cyclic garbage "
        "they found: "
        + (", ".join(f"{k} {n:.0f}" for k, n in sorted(counts.items()) if k[0] != "s") or "-")
        + "; creates and joins that waited for the loop (admission), and told busy: "
        + " / ".join(f"{counts.get(k, 0):.0f}" for k in ("setups waited", "setups busy")),
        f"  p99.9 of (a) {fig['last_action_ms'].get('p99.9', float('nan')):.1f} ms; the server's "
        f"event-loop stalls over {STALL_MS:g} ms in the window: {len(fig.get('stalls_ms', []))}"
        f" (longest {max(fig.get('stalls_ms', []), default=0):.0f} ms); caught in: "
        + (", ".join(f"{k} ×{n}" for k, n in causes[:6]) or "-")
        + "; the loop's thread mostly: "
        + (", ".join(f"{k} ×{n}" for k, n in fig.get("stalls_mostly", {}).items()) or "-"),
        *spans_line(fig),
        "  CPU in the kernel (share of each process's CPU): "
        + ", ".join(f"{k} {v:.0%}" for k, v in fig["system_share"].items())
        + "; generator CPU by process: "
        + ", ".join(f"{k} {v:.1%}" for k, v in fig["generator_cpu_by_process"].items()),
    ]
    slow = fig.get("slow_by_time") or []
    if slow:
        lines.append("  when the slow came (s into the window: rounds over 100 ms, the slowest, "
                     "the generator's longest lag, games ended in those 5 s): " + "; ".join(
                         f"{b['at_s']:.0f}: {b['slow_rounds']}, {b['slowest_ms']:.0f}, "
                         f"{b['lag_ms']:.0f}, {b['games_over']}" for b in slow[:20]))  # fmt: skip
    hist = fig.get("server_histograms") or {}
    if hist:
        lines.append("  the server's own counts in the window (how many; over 25/50/100/250 ms; "
                     "the slowest's bucket): " + "; ".join(
                         f"{name} {h['count']:.0f}; {h['over_25']:.0f}/{h['over_50']:.0f}/"
                         f"{h['over_100']:.0f}/{h['over_250']:.0f}; ≤ {h['max_le_ms']:g} ms"
                         for name, h in hist.items()))  # fmt: skip
    return lines + read_line + ["  " + line for line in fig.get("profile", [])]


def main() -> None:
    """Run the ramp for each server and print a row per step."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--players",
        type=int,
        nargs="+",
        default=STEPS,
        help="players per step, 4 a table (default 1000 2000 3000 4000 6000 8000)",
    )
    parser.add_argument("--procs", type=int, default=1, help="generator processes (default 1)")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds measured")
    parser.add_argument("--warmup", type=float, default=0.0,
                        help="seconds of play between the last join and the window (default 0, "
                        "as the pattern says)")  # fmt: skip
    parser.add_argument("--setup-timeout", type=float, default=300.0)
    parser.add_argument("--keep-going", action="store_true", help="run on past a failing step")
    parser.add_argument("--profile", action="store_true", help="py-spy the server every step")
    parser.add_argument("--no-profile", action="store_true", help="not even at a failing step")
    parser.add_argument("--profile-seconds", type=float, default=20.0)
    parser.add_argument("--top", type=int, default=15, help="functions of the profile shown")
    parser.add_argument("--db", help="postgresql://... (a fresh schema a step); default: a "
                        "fresh SQLite file a step")  # fmt: skip
    parser.add_argument("--server-src", action="append", default=[],
                        help="run the server from this checkout's src folder, or from this "
                        "commit's src (repeatable: each step runs each)")  # fmt: skip
    parser.add_argument(
        "--seed-games",
        type=int,
        default=0,
        help="store this many finished games before each step (harness/seed.py)",
    )
    parser.add_argument(
        "--reads-each",
        type=float,
        nargs="+",
        default=[],
        help="run each step with each of these rates of players' pages read a "
        "second (leaderboard, profile, games) beside the rhythm",
    )
    parser.add_argument("--pages-apart", action="store_true",
                        help="with --reads-each: read the pages from a flyswat serve --role "
                        "pages process beside the node, over the same store")  # fmt: skip
    parser.add_argument("--pages-nice", type=int, default=0,
                        help="with --pages-apart: the pages process's nice value, as "
                        "DEPLOY.md advises beside nodes (default 0)")  # fmt: skip
    parser.add_argument("--workers-each", type=int, nargs="+", default=[],
                        help="run each step with each of these serve --workers")  # fmt: skip
    parser.add_argument("--nodes", type=int, default=1,
                        help="server nodes sharing the store (--db postgresql://…) and Redis "
                        "(--redis); the generators spread over them")  # fmt: skip
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13",
                        help="Redis for --nodes (emptied before each step)")  # fmt: skip
    parser.add_argument("--serve-arg", action="append", default=[],
                        help="one more flyswat serve argument (repeatable)")  # fmt: skip
    parser.add_argument("--deflate", action="store_true",
                        help="the clients offer permessage-deflate, as browsers do (default: "
                        "no compression)")  # fmt: skip
    parser.add_argument("--client", choices=("wire", "websockets"), default="wire",
                        help="the generator's WebSocket client: the cheap one (default) or the "
                        "websockets library (to see what it costs)")  # fmt: skip
    parser.add_argument("--anchor", choices=("colyseus",),
                        help="run this anchor (bench/anchors/) in each step too, beside "
                        "flyswat, and print flyswat's costs as multiples of its")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="write every figure here (JSON)")
    parser.add_argument("--keep", type=Path, help="keep the databases, logs, profiles here")
    args = parser.parse_args()
    print(f"open files allowed: {raise_fd_limit()}; load average "
          f"{' '.join(Path('/proc/loadavg').read_text().split()[:3])}", flush=True)  # fmt: skip
    figures_all: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="flyswat-rhythm-") as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        sources = [source(s, workdir) for s in args.server_src or [str(ROOT / "src")]]
        if args.workers_each:  # each source with each number of workers, side by side
            sources = [replace(s, label=f"{s.label}/w{n}", workers=n)
                       for s in sources for n in args.workers_each]  # fmt: skip
        if args.reads_each:  # each source with each rate of reads, side by side
            sources = [replace(s, label=f"{s.label}/r{r:g}", reads=r)
                       for s in sources for r in args.reads_each]  # fmt: skip
        if args.anchor:  # first in each step, so that flyswat's rows can be its multiples
            sources.insert(0, anchor_source(args.anchor))
        running = set(sources)
        anchor_of: dict[int, dict[str, Any]] = {}
        print(HEADER, flush=True)
        for players in args.players:
            for src in sources:
                if src not in running and not (src.anchor and len(running) > 0):
                    continue  # the anchor runs on while a flyswat does, for its multiples
                try:
                    fig = step(players, src, args, workdir)
                except Exception as e:  # the step could not run: say so, and stop this ramp
                    where = traceback.extract_tb(e.__traceback__)[-1]
                    print(f"{src.label}: {players} players: {type(e).__name__}: {e} "
                          f"({Path(where.filename).name}:{where.lineno})", flush=True)  # fmt: skip
                    running.discard(src)
                    continue
                figures_all.append(fig)
                print(row(fig), flush=True)
                for line in details(fig):
                    print(line, flush=True)
                if src.anchor:
                    anchor_of[players] = fig
                elif players in anchor_of:
                    print(against(fig, anchor_of[players]), flush=True)
                if not fig["pass"] and not args.keep_going:
                    running.discard(src)
                if args.out:
                    args.out.write_text(json.dumps(figures_all, indent=1, default=str))
            if not running:
                break
    if args.anchor and figures_all:
        from harness.anchor import held_line

        print(held_line(figures_all), flush=True)
    if not figures_all:
        sys.exit(1)


if __name__ == "__main__":
    main()
