"""The server as a child process, and what Linux's ``/proc`` says of a process.

:class:`ServerProcess` runs ``flyswat serve`` on 127.0.0.1 with this Python, so that its pid is
the server's own: for its CPU time, its wait for a CPU, its resident memory, and ``kill -9``.
Optionally it logs the server's full garbage collections, or puts them off, from a
``python -c`` prelude: the server's code is not touched.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import httpx


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of process ``pid`` so far, in seconds (Linux ``/proc``)."""
    return sum(cpu_times(pid))


def cpu_times(pid: int) -> tuple[float, float]:
    """``(user, system)`` CPU seconds of process ``pid`` so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def cpu_wait_seconds(pid: int) -> float:
    """Seconds the main thread of ``pid`` has spent runnable but waiting for a CPU (the
    scheduler's run queue: ``/proc/PID/schedstat``); high when other jobs take the cores."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9


def descendants(pid: int) -> list[int]:
    """``pid`` and every process under it (Linux ``/proc``: each thread's children)."""
    out, todo = [], [pid]
    while todo:
        here = todo.pop()
        out.append(here)
        for task in Path(f"/proc/{here}/task").glob("*"):
            with contextlib.suppress(OSError):
                todo.extend(int(k) for k in (task / "children").read_text().split())
    return out


def rss_bytes(pid: int) -> int:
    """The resident set size of process ``pid``, in bytes (``VmRSS``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def peak_rss_bytes(pid: int) -> int:
    """The largest resident set size process ``pid`` has had so far, in bytes (``VmHWM``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def machine_cpu() -> tuple[float, float]:
    """``(busy, total)`` CPU seconds of the whole machine so far, all cores (``/proc/stat``);
    idle and waiting for I/O count as not busy. Two readings give the busy cores between."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    tick = os.sysconf("SC_CLK_TCK")
    total = sum(fields[:8])  # guest time is already inside user time
    idle = fields[3] + fields[4]
    return (total - idle) / tick, total / tick


#: How the server's garbage collector runs: as Python sets it (``on``), with full (generation
#: 2) collections put off (``no-full``), or not at all (``off``: an experiment, not a setting).
#: "on": the server's own (tuned) policy; "python": ``serve --gc python``, Python's defaults;
#: "no-full" and "off": the collector changed from outside (:func:`_gc_prelude`).
GC_MODES = ("on", "python", "no-full", "off")


class ServerProcess:
    """``flyswat serve`` on 127.0.0.1 as a child process (this Python, no wrapper), so that
    its pid is the server's own for ``/proc`` and for ``kill -9``.

    ``args``: more ``flyswat serve`` options; ``env``: more of the environment (a
    ``PYTHONPATH`` naming another checkout's ``src`` runs that checkout's server);
    ``exempt``: free 127.0.0.1 of the per-address limits (False for a server too old to
    have them)."""

    def __init__(
        self,
        db_url: str,
        port: int,
        log: Path,
        *,
        bot_pace: float = 1.0,
        gc_log: Path | None = None,
        gc_mode: str = "on",
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        exempt: bool = True,
        python: str = sys.executable,
    ) -> None:
        self.db_url = db_url
        self.python = python  # the interpreter it runs on (with flyswat's dependencies)
        self.exempt = exempt
        self.args = list(args)
        self.env = {**os.environ, **env} if env else None
        self.bot_pace = bot_pace
        self.gc_log = gc_log
        if gc_mode not in GC_MODES:
            raise ValueError(f"gc_mode is one of {', '.join(GC_MODES)}, not {gc_mode!r}")
        self.gc_mode = gc_mode
        self.port = port
        self.log = log
        self.http = f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        """The server's process id; raises when it is not running."""
        if self.proc is None:
            raise RuntimeError("the server is not running")
        return self.proc.pid

    def start(self, timeout: float = 120) -> float:
        """Start the server and wait for ``/health``; returns the seconds that took."""
        args = ["serve", "--host", "127.0.0.1", "--port", str(self.port), "--db", self.db_url,
                "--bot-pace", str(self.bot_pace)]  # fmt: skip
        # Every load player comes from 127.0.0.1: the per-address limits are not under test.
        args += ["--exempt", "127.0.0.1"] if self.exempt else []
        if self.gc_mode == "python":
            args += ["--gc", "python"]
        if "--workers" not in self.args and has_workers(self.env):
            args += ["--workers", "1"]  # one process unless asked (its pid is the server)
        args += self.args
        cmd = [self.python, "-m", "flyswat.cli", *args]
        if self.gc_log is not None or self.gc_mode not in ("on", "python"):
            cmd = [self.python, "-c", _gc_prelude(self.gc_log, self.gc_mode), *args]
        t0 = time.monotonic()
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=self.env)
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}; see {self.log}")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(self.http + "/health", timeout=2).status_code == 200:
                    return time.monotonic() - t0
            time.sleep(0.1)
        self.kill()
        raise TimeoutError(f"the server did not answer /health within {timeout} s")

    def pids(self) -> list[int]:
        """The server's processes: itself and every process under it (its workers if it
        supervises some, each node's store writer)."""
        return descendants(self.pid)

    def kill(self) -> None:
        """``kill -9``: no clean-up of any kind."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        """Stop as Ctrl-C does (uvicorn shuts down cleanly); kill after 15 s."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()


def _gc_prelude(log: Path | None, gc_mode: str) -> str:
    """Python that runs ``flyswat`` with its command-line arguments after, optionally logging
    each garbage collection as ``<wall time> <generation> <pause ms>`` to ``log``, and with
    the collector as ``gc_mode`` says (the server's code is not touched)."""
    lines = ["import gc, sys, time"]
    if log is not None:
        lines += [
            f"out = open({str(log)!r}, 'a', buffering=1)",
            "began = [0.0]",
            "def note(phase, info):",
            "    if phase == 'start':",
            "        began[0] = time.perf_counter()",
            "        return",
            "    pause = (time.perf_counter() - began[0]) * 1000",
            "    out.write(f\"{time.time():.3f} {info['generation']} {pause:.1f}\\n\")",
            "gc.callbacks.append(note)",
        ]
    if gc_mode == "no-full":
        lines.append("gc.set_threshold(700, 10, 10**9)")
    elif gc_mode == "off":
        lines.append("gc.disable()")
    lines += ["from flyswat.cli import main", "sys.exit(main(sys.argv[1:]))"]
    return "\n".join(lines)


def gc_pauses(log: Path, generation: int = 2) -> list[tuple[float, float]]:
    """The ``(wall time, pause ms)`` of each collection of ``generation`` in a ``gc_log``."""
    if not log.exists():
        return []
    rows = [line.split() for line in log.read_text().splitlines() if line.strip()]
    return [(float(t), float(ms)) for t, g, ms in rows if int(g) == generation]


@functools.cache
def _serve_help(pythonpath: str | None) -> str:
    env = {**os.environ, **({"PYTHONPATH": pythonpath} if pythonpath else {})}
    cmd = [sys.executable, "-m", "flyswat.cli", "serve", "--help"]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60).stdout


def has_workers(env: dict[str, str] | None) -> bool:
    """Does the server that ``env`` runs (an older tree on ``PYTHONPATH``, say) know
    ``flyswat serve --workers``?"""
    return "--workers" in _serve_help((env or {}).get("PYTHONPATH"))
