"""Run a real ``flyswat serve`` process on loopback for a benchmark or a smoke test."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
#: Seconds a server process has to answer /health: a second or two on a quiet machine, but
#: many times that on a busy one (every test process of a parallel run starting servers).
START_S = 60.0


#: Ports are handed out in blocks of this many; a test process under pytest-xdist takes only
#: the blocks of its own worker, so two workers never pick the same port between one's check
#: and its server's bind.
BLOCK = 16


def _worker() -> tuple[int, int]:
    """``(this worker's number, the number of workers)`` under pytest-xdist, else (0, 1)."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if name.startswith("gw") and name[2:].isdigit() and count > 1:
        return int(name[2:]) % count, count
    return 0, 1


def _ours(port: int, n: int = 1) -> bool:
    """Are ports ``port`` … ``port+n-1`` in one block of this worker's share?"""
    k, count = _worker()
    block = port // BLOCK
    return block % count == k and (port + n - 1) // BLOCK == block


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (of this test worker's share)."""
    return free_ports(1)


@contextlib.contextmanager
def running_server(
    db: str | Path,
    port: int | None = None,
    *,
    args: Sequence[str] = (),
    preexec_fn: Callable[[], object] | None = None,
    limit_loopback: bool = False,
    env: Mapping[str, str] | None = None,
) -> Iterator[tuple[str, int, int]]:
    """Start ``flyswat serve`` on 127.0.0.1 with the SQLite file ``db``; yield
    ``(http base, port, pid)`` once ``/health`` answers; stop it at the end.

    ``args``: more options for ``flyswat serve`` (its limits, say); ``env``: more of the
    environment; ``preexec_fn`` runs in the child before the server starts (to lower its
    descriptor limit, say). Every client of
    a benchmark comes from 127.0.0.1, so that address is exempt from the per-address limits
    (``--exempt``) unless ``limit_loopback``. The server's output goes to ``db`` with the
    suffix ``.log``."""
    port = port or free_port()
    cmd = [sys.executable, "-m", "flyswat.cli", "serve", "--port", str(port)]
    if "--workers" not in args:
        cmd += ["--workers", "1"]  # one process, unless asked: its limits, its pid
    cmd += ["--db", f"sqlite:///{db}", *args]
    if not limit_loopback:
        cmd += ["--exempt", "127.0.0.1"]
    log_path = Path(db).with_suffix(".log")
    log = log_path.open("ab")
    proc = subprocess.Popen(
        cmd,
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, **(env or {})},
        preexec_fn=preexec_fn,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_S
        while True:
            if proc.poll() is not None:
                err = log_path.read_text(errors="replace")
                raise RuntimeError(f"the server exited at once: {err[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(base + "/health", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not answer /health within {START_S:g} s")
            time.sleep(0.1)
        yield base, port, proc.pid
    finally:
        stop_process(proc)
        log.close()


def stop_process(proc: subprocess.Popen[Any]) -> None:
    """Ask ``proc`` to stop (SIGTERM); kill it if it has not within 10 s."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def pg_schema(url: str, prefix: str = "t_") -> Iterator[str]:
    """``url`` with a new PostgreSQL schema of its own as the search path (dropped after)."""
    import uuid

    import sqlalchemy as sa

    from flyswat.server.store import engine_url

    schema = prefix + uuid.uuid4().hex[:12]
    admin = sa.create_engine(engine_url(url))
    with admin.begin() as conn:
        conn.execute(sa.text(f"CREATE SCHEMA {schema}"))
    sep = "&" if "?" in url else "?"
    try:
        yield f"{url}{sep}options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


_GIVEN: set[int] = set()


def free_ports(n: int) -> int:
    """A port p with p .. p+n-1 all free (a supervisor's public port and its workers'),
    of this test worker's share, below the kernel's ephemeral range: a port there is never
    taken as the local end of some other test's outgoing connection in the moment a server
    restarting on it has let go of it (which an ephemeral port could be). Never one this
    process was given before: two asked for before either is bound are not the same."""
    if n > BLOCK:
        raise ValueError(f"at most {BLOCK} ports in a row")
    low, high = 10_000, _ephemeral_start()
    for _ in range(2000):
        base = low + secrets.randbelow(high - low - n)
        ports = range(base, base + n)
        if not _ours(base, n) or not _GIVEN.isdisjoint(ports):
            continue
        if all(_bindable(port) for port in ports):
            _GIVEN.update(ports)
            return base
    raise RuntimeError("no block of free ports")


def _ephemeral_start() -> int:
    """The first port the kernel hands out to outgoing connections (32768 if unknown)."""
    try:
        text = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text()
        return max(12_000, int(text.split()[0]))
    except (OSError, ValueError, IndexError):
        return 32_768


class Serve:
    """``flyswat serve`` as a process (a supervisor or one node), its output in a file."""

    def __init__(self, args: list[str], log: Path, wait: list[int]) -> None:
        cmd = [sys.executable, "-m", "flyswat.cli", "serve", "--bot-pace", "0.05", *args]
        self.log = log
        with log.open("ab") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1"})  # fmt: skip
        try:
            for port in wait:
                until_health(port, self)
        except BaseException:  # nobody holds it yet to stop it: stopped here
            self.kill()
            raise

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(40)


def until_health(
    port: int, serving: Serve | None = None, timeout: float = START_S
) -> dict[str, Any]:
    """``/health`` of the server on ``port`` once it answers (raises when ``serving``
    ended or after ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(httpx.HTTPError):
            reply = httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
            if reply.status_code == 200:
                return dict(reply.json())
        if serving is not None and serving.proc.poll() is not None:
            raise RuntimeError(f"the server ended: {serving.log.read_text()[-3000:]}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"nothing answers on {port}")
        time.sleep(0.1)


def metric(text: str, name: str) -> float | None:
    """One unlabelled sample ``name`` of a ``/metrics`` text (None when it has none)."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None
