"""``flyswat serve --workers N``: every core of one machine, with nothing to install.

The command becomes a supervisor of N worker processes, each a node of the cluster
(:mod:`flyswat.server.cluster`) over the same store. Every worker listens on the public
port (``SO_REUSEPORT``: the kernel spreads new connections over them) and on a port of its
own, ``port + 1 + i``, which it advertises: a table is run by the worker that created or
adopted it, an HTTP request for it that reaches another worker is passed on, and a
WebSocket is told to move to the owner's own port (``docs/DEPLOY.md``). Chosen by
measurement (``docs/BENCHMARKS.md``, *Every core*): a front process relaying every message
would cost about as much CPU as a worker spends serving it.

A worker that dies is started again (its tables are adopted meanwhile by the others, or
taken back by it if it is quicker); SIGTERM or SIGINT to the supervisor stops the workers
gracefully — each hands its tables over, the last one stores them for the next start.
Workers die with the supervisor (``PR_SET_PDEATHSIG``), even if it is killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time

#: A worker that dies is started again after this pause (seconds), doubled for each time
#: in a row it died within :data:`STEADY_S` of its start, up to :data:`MAX_RESTART_S`; past
#: :data:`MAX_QUICK_FAILURES` such deaths in a row the supervisor stops, with status 1.
RESTART_S = 1.0
MAX_RESTART_S = 30.0
STEADY_S = 60.0
MAX_QUICK_FAILURES = 5
#: ... and the supervisor waits this long for its workers to stop gracefully.
STOP_S = 30.0


def default_workers() -> int:
    """The number of cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def listening(host: str, port: int, shared: bool) -> socket.socket:
    """A bound, listening TCP socket; ``shared``: other workers bind the same port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if shared:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(4096)
    sock.set_inheritable(True)
    return sock


def die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its supervisor dies (a no-op elsewhere); if
    the supervisor is gone already (it died while this worker started), end now."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    supervisor = os.environ.get(SUPERVISOR_ENV)
    if supervisor and os.getppid() != int(supervisor):
        os._exit(1)


#: The supervisor's pid, in its workers' environment.
SUPERVISOR_ENV = "FLYSWAT_SUPERVISOR"


def supervise(argv: list[str], workers: int) -> int:
    """Run ``workers`` copies of ``flyswat serve`` (``argv``: the command's own arguments
    without ``--workers``), one per slot, until a signal stops them (status 0) or a worker
    keeps failing at its start (status 1)."""
    stopping = False

    def stop(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    def start(slot: int) -> subprocess.Popen[bytes]:
        cmd = [sys.executable, "-m", "flyswat.cli", "serve", *argv, "--workers", "1",
               "--worker-slot", str(slot)]  # fmt: skip
        env = {**os.environ, SUPERVISOR_ENV: str(os.getpid())}
        return subprocess.Popen(cmd, start_new_session=True, env=env)  # signals come from here

    procs = {slot: start(slot) for slot in range(workers)}
    began = dict.fromkeys(procs, time.monotonic())
    quick = dict.fromkeys(procs, 0)  # quick failures in a row, per slot
    due: dict[int, float] = {}  # slot -> when to start it again
    status = 0
    while not stopping:
        time.sleep(0.1)
        now = time.monotonic()
        for slot, proc in list(procs.items()):
            if slot in due or proc.poll() is None or stopping:
                continue
            quick[slot] = quick[slot] + 1 if now - began[slot] < STEADY_S else 1
            if quick[slot] > MAX_QUICK_FAILURES:
                why = f"ended {quick[slot] - 1} times within {STEADY_S:g} s of its start"
                print(f"flyswat: worker {slot} {why}; stopping", file=sys.stderr, flush=True)
                stopping, status = True, 1
                break
            pause = min(MAX_RESTART_S, RESTART_S * 2 ** (quick[slot] - 1))
            print(f"flyswat: worker {slot} ended ({proc.returncode}); starting it again in "
                  f"{pause:g} s", file=sys.stderr, flush=True)  # fmt: skip
            due[slot] = now + pause
        for slot, at in list(due.items()):
            if now >= at and not stopping:
                del due[slot]
                procs[slot], began[slot] = start(slot), time.monotonic()
    for proc in procs.values():
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_S
    for proc in procs.values():
        try:
            proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()  # gone, and its ports with it, before the supervisor says it stopped
    return status
