"""The anchor: another server under the same rhythm, measured in the same run as flyswat.

``bench/anchors/colyseus/`` holds the Colyseus room of ``shared/LOAD-RHYTHM.md``
(``server.js``) and its load generator on ``@colyseus/sdk`` clients (``generator.js``), run on
the machine's Node. Its packages are pinned in its ``package.json`` and installed on first use
(:func:`install`: ``npm install --legacy-peer-deps --no-package-lock`` into its own
``node_modules``, never committed). :func:`run_anchor` plays one step of a ramp: a fresh
``node server.js``, ``procs`` generator processes, the window; it measures what
``bench/rhythm.py`` measures of flyswat (the processes' CPU from ``/proc``, the server's peak
RSS and V8's garbage collections, the machine's busy cores) and returns the generators'
reports, whose shape is :meth:`harness.generator.Generator.measure`'s, so that the same
``figures``, ``verdict`` and table row serve both servers.

The generator speaks JSON lines: ``{"event": "ready"}`` once its clients have joined, then
``{"t0": ...}`` from us on its stdin (the window's start on ``CLOCK_MONOTONIC``, which is
Python's :func:`time.monotonic` and Node's ``process.hrtime``), then ``{"event": "report"}``;
it plays on until its stdin closes.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import httpx

from harness.procs import cpu_times, gc_pauses, machine_cpu, peak_rss_bytes, rss_bytes
from harness.server import free_port

ANCHORS = Path(__file__).resolve().parents[1] / "anchors"
#: The anchors ``bench/rhythm.py --anchor`` knows: name → folder.
KNOWN = {"colyseus": ANCHORS / "colyseus"}


class AnchorUnavailable(RuntimeError):
    """Node or npm is missing, or the anchor's packages could not be installed."""


def pinned(folder: Path) -> dict[str, str]:
    """The anchor's dependencies and their exact versions (its ``package.json``)."""
    deps: dict[str, str] = json.loads((folder / "package.json").read_text())["dependencies"]
    return deps


def installed(folder: Path) -> dict[str, str | None]:
    """The version of each pinned package in the anchor's ``node_modules`` (None: absent)."""
    found: dict[str, str | None] = {}
    for name in pinned(folder):
        meta = folder / "node_modules" / name / "package.json"
        found[name] = json.loads(meta.read_text())["version"] if meta.exists() else None
    return found


def install(folder: Path, timeout: float = 600) -> str:
    """Install the anchor's pinned packages unless they are there already; returns the
    version of its main package (its first: ``@colyseus/core``'s ``0.18.17``). Raises
    :class:`AnchorUnavailable` when Node or npm is missing or the install fails."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise AnchorUnavailable(f"{tool} is not on the PATH: the anchor needs Node")
    want = pinned(folder)
    # One install at a time (test processes side by side in a fresh checkout each ask for
    # it): npm writes a package's package.json before the rest of its files, so another
    # process that found it there would start a half-written package.
    with (folder / "node_modules.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed(folder) != want:
            _npm_install(folder, want, timeout)
    return next(iter(want.values()))


def _npm_install(folder: Path, want: Mapping[str, str], timeout: float) -> None:
    """``npm install`` of the pinned packages into ``folder`` (under the lock)."""
    cmd = ["npm", "install", "--legacy-peer-deps", "--no-package-lock", "--no-audit",
           "--no-fund", "--no-save", *(f"{n}@{v}" for n, v in want.items())]  # fmt: skip
    try:
        done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True,
                              timeout=timeout)  # fmt: skip
    except subprocess.TimeoutExpired as e:
        raise AnchorUnavailable(f"npm install took over {timeout:g} s") from e
    if done.returncode or installed(folder) != want:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise AnchorUnavailable("npm install failed: " + " | ".join(tail))


class NodeServer:
    """``node server.js`` of an anchor on 127.0.0.1, a child process (its pid is the
    server's own, for ``/proc``)."""

    def __init__(
        self, folder: Path, log: Path, gc_log: Path | None = None, args: Sequence[str] = ()
    ) -> None:
        self.folder = folder
        self.args = list(args)
        self.log = log
        self.gc_log = gc_log
        self.port = free_port()
        self.http = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        if self.proc is None:
            raise RuntimeError("the anchor's server is not running")
        return self.proc.pid

    def pids(self) -> list[int]:
        return [self.pid]

    def start(self, timeout: float = 60) -> None:
        """Start the server and wait until ``/health`` answers."""
        cmd = ["node", "server.js", "--port", str(self.port)]
        cmd += ["--gc-log", str(self.gc_log)] if self.gc_log else []
        cmd += self.args
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(cmd, cwd=self.folder, stdout=out,
                                         stderr=subprocess.STDOUT)  # fmt: skip
        end = time.monotonic() + timeout
        while not self.alive():
            if self.proc.poll() is not None:
                raise RuntimeError(f"the anchor's server exited with {self.proc.returncode}; "
                                   f"see {self.log}")  # fmt: skip
            if time.monotonic() > end:
                self.stop()
                raise TimeoutError(f"the anchor's server did not answer within {timeout} s")
            time.sleep(0.2)

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def alive(self) -> bool:
        """Running and answering ``/health``."""
        if not self.running():
            return False
        try:
            return httpx.get(self.http + "/health", timeout=5).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        """Ctrl-C (Colyseus shuts down gracefully), ``kill -9`` after 15 s."""
        _stop(self.proc, signal.SIGINT)


class NodeGenerator:
    """One ``node generator.js`` process and its JSON lines."""

    def __init__(self, folder: Path, plan: dict[str, Any], log: Path) -> None:
        self.name = str(plan.get("name", "g0"))
        self._err = log.open("ab")
        self.proc = subprocess.Popen(["node", "generator.js", json.dumps(plan)], cwd=folder,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._err, text=True)  # fmt: skip
        self.lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True)
        self._reader.start()

    def _read(self, out: IO[str] | None) -> None:
        for line in out or ():
            self.lines.put(line)
        self.lines.put(None)

    def expect(self, event: str, timeout: float) -> dict[str, Any]:
        """The next line, which must be ``event``; raises on an error, an exit or a wait
        longer than ``timeout``."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"generator {self.name}: no {event} within {timeout:g} s") from None
        if line is None:
            raise RuntimeError(f"generator {self.name} exited ({self.proc.wait()}) before {event}")
        got: dict[str, Any] = json.loads(line)
        if got.get("event") != event:
            raise RuntimeError(f"generator {self.name}: {got.get('error', got)}")
        return got

    def go(self, t0: float) -> None:
        """Start the window at ``t0`` (:func:`time.monotonic`)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"t0": t0}) + "\n")
        self.proc.stdin.flush()

    def stop(self) -> None:
        """Close its stdin (it leaves its rooms and exits); terminate after 15 s."""
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        _stop(self.proc, None)
        self._reader.join(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._err.close()


def _stop(proc: subprocess.Popen[Any] | None, sig: signal.Signals | None) -> None:
    """Stop ``proc`` (with ``sig`` first, if any): wait 15 s, then ``kill -9``."""
    if proc is None or proc.poll() is not None:
        return
    if sig is not None:
        proc.send_signal(sig)
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def run_anchor(
    folder: Path,
    shares: list[tuple[int, int]],
    workdir: Path,
    *,
    duration: float = 60.0,
    warmup: float = 0.0,
    setup_timeout: float = 300.0,
    seed: int = 0,
    server_args: Sequence[str] = (),
    plan: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, float]]:
    """One step of the anchor: a fresh server, a generator process for each of ``shares``
    (its tables, its joins in flight), the ``duration`` window ``warmup`` seconds after the
    last join; ``server_args`` for ``server.js``, ``plan``: more of each generator's plan
    (``react_s``, say, for a quick test). Returns the window's own figures (set-up time,
    alive, peak RSS, busy cores, kernel shares, the server's garbage collections), the
    generators' reports, and the CPU shares of the window (``server``, one per generator,
    ``self``: this process) for ``bench/rhythm.py``'s ``figures``."""
    name = f"anchor-{folder.name}-{sum(n for n, _ in shares) * 4}"
    gc_log = workdir / f"{name}.gc"
    gc_log.unlink(missing_ok=True)
    server = NodeServer(folder, workdir / f"{name}.log", gc_log, server_args)
    gens: list[NodeGenerator] = []
    began = time.monotonic()
    server.start()
    try:
        for i, (n, joins) in enumerate(shares):
            if n:
                one = {"endpoint": server.http, "tables": n, "duration_s": duration,
                       "joins_in_flight": max(1, joins), "setup_timeout_s": setup_timeout,
                       "seed": seed + i, "name": f"g{i}", **(plan or {})}  # fmt: skip
                gens.append(NodeGenerator(folder, one, workdir / f"{name}-g{i}.log"))
        ready = [g.expect("ready", setup_timeout + 30) for g in gens]
        out: dict[str, Any] = {"setup_s": time.monotonic() - began, "ready": ready}
        t0 = time.monotonic() + warmup
        for g in gens:
            g.go(t0)
        time.sleep(max(0.0, t0 - time.monotonic()))
        procs_of = {"server": server.pid, **{g.name: g.proc.pid for g in gens}}
        out |= _window(procs_of, server, t0, duration)
        reports = [g.expect("report", duration + 60) for g in gens]
        out["gc_full_ms"] = [ms for t, ms in gc_pauses(gc_log, 2)
                             if out["wall"][0] <= t <= out["wall"][1]]  # fmt: skip
        out["gc_young_ms"] = [ms for t, ms in gc_pauses(gc_log, 1)
                              if out["wall"][0] <= t <= out["wall"][1]]  # fmt: skip
        cpu = out.pop("cpu")
        return out, reports, cpu
    finally:
        for g in gens:
            g.stop()
        server.stop()


def _window(pids: dict[str, int], server: NodeServer, t0: float, duration: float) -> dict[str, Any]:
    """Watch the window ``[t0, t0 + duration)``: the processes' CPU (``/proc``), the
    server's RSS and life, the machine's busy cores."""
    wall0 = time.time()
    times0 = {k: cpu_times(pid) for k, pid in pids.items()} | {"self": _self_cpu()}
    machine0 = machine_cpu()
    rss_max = 0
    while time.monotonic() < t0 + duration and server.running():
        time.sleep(min(1.0, max(0.0, t0 + duration - time.monotonic())))
        with contextlib.suppress(OSError):
            rss_max = max(rss_max, rss_bytes(server.pid))
    window = time.monotonic() - t0
    machine1 = machine_cpu()
    alive = server.alive()
    times1 = {k: cpu_times(pid) if alive or k != "server" else times0[k]
              for k, pid in pids.items()} | {"self": _self_cpu()}  # fmt: skip
    used = {k: sum(times1[k]) - sum(times0[k]) for k in times0}
    busy = machine1[0] - machine0[0]
    return {
        "alive": alive,
        "window_s": window,
        "wall": (wall0, time.time()),
        "server_peak_rss_mb": (peak_rss_bytes(server.pid) if alive else rss_max) / 2**20,
        "cpu": {k: v / window for k, v in used.items()},
        "system_share": {k: (times1[k][1] - times0[k][1]) / max(1e-9, used[k]) for k in used},
        "busy_cores": busy / (machine1[1] - machine0[1]) * (os.cpu_count() or 1),
        "services_cpu": 0.0,
    }


def _self_cpu() -> tuple[float, float]:
    t = os.times()
    return t.user, t.system


def ratios(fig: dict[str, Any], anchor: dict[str, Any]) -> dict[str, float]:
    """``fig``'s costs as multiples of the anchor's in the same step: CPU per 1,000 players,
    µs per message, messages per player, p99 of last action → result."""

    def per(key: str) -> float:
        base = anchor[key]
        return fig[key] / base if base else float("nan")

    msgs = fig["msgs_in_per_player"] + fig["msgs_out_per_player"]
    base = anchor["msgs_in_per_player"] + anchor["msgs_out_per_player"]
    p99 = anchor["last_action_ms"]["p99"]
    return {
        "cpu_per_1000": per("server_cpu_per_1000"),
        "us_per_msg": per("server_us_per_msg"),
        "msgs_per_player": msgs / base if base else float("nan"),
        "p99": fig["last_action_ms"]["p99"] / p99 if p99 else float("nan"),
    }


def ratio_line(fig: dict[str, Any], anchor: dict[str, Any]) -> str:
    """One line of :func:`ratios` for the table."""
    r = ratios(fig, anchor)
    return (
        f"  {fig['server']} against {anchor['server']} at {fig['players']} players: "
        f"CPU per 1,000 players ×{r['cpu_per_1000']:.2f}, µs per message ×{r['us_per_msg']:.2f}, "
        f"messages per player ×{r['msgs_per_player']:.2f}, p99 ×{r['p99']:.2f}"
    )


def held(figs: list[dict[str, Any]]) -> dict[str, int]:
    """The largest passing step of each server, in order of appearance (0: none passed)."""
    out: dict[str, int] = {}
    for fig in figs:
        best = out.setdefault(fig["server"], 0)
        if fig["pass"]:
            out[fig["server"]] = max(best, fig["players"])
    return out


def held_line(figs: list[dict[str, Any]]) -> str:
    """Who held how many players (the first server is the anchor), and as a multiple."""
    most = held(figs)
    anchor, base = next(iter(most.items()))
    parts = [f"{anchor} {base}"] + [
        f"{k} {n}" + (f" (×{n / base:.2f})" if base else "")
        for k, n in most.items() if k != anchor
    ]  # fmt: skip
    return f"held at p99 ≤ 100 ms (the largest passing step): {', '.join(parts)}"
