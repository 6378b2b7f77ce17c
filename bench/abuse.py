"""Abuse at the transport: what idle, slow and oversized clients cost ``flyswat serve``.

Each scenario starts a fresh ``flyswat serve`` on 127.0.0.1 (its own SQLite file), attacks it
from loopback addresses 127.0.0.x (at most 50 sockets an address, under the default cap of 64
per address), and prints what it measured:

- ``idle``: ``--sockets`` sockets that never send a byte. The server's RSS before and while
  they are open, how many are still open after the header timeout (plus 3 s), when the
  server closed them (seconds after each connected), and ``/health`` latency meanwhile, from
  an address of its own.
- ``loris``: ``--loris`` sockets that send a request head one byte a second, never ending it:
  the same figures.
- ``body``: a 50 MB request body (``Content-Length`` declared) to ``POST /api/tables``: the
  answer, how long it took, and the server's RSS and peak RSS (``VmHWM``) before and after.
- ``nofile``: the server started with ``RLIMIT_NOFILE`` 256, flooded with 400 idle sockets
  (8 addresses): how ``/health`` is answered meanwhile and after, how many of the flood the
  server closed, its open descriptors, and the log's size.

``--tree DIR`` runs the server from another source tree (e.g. an older commit exported with
``git archive``), to compare; it then gets no limit options, only ``--port`` and ``--db``.

    uv run python bench/abuse.py
    uv run python bench/abuse.py --only idle loris --sockets 2000
    git archive 6140b6f | tar -x -C /tmp/before && uv run python bench/abuse.py --tree /tmp/before

Bounded: every scenario ends by itself within about 30 s and targets 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from harness.server import free_port

HEALTH_FROM = "127.0.0.250"


@dataclass
class Server:
    port: int
    pid: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def rss_mb(self, field: str = "VmRSS") -> float:
        """Resident set size now (``VmRSS``) or at its highest so far (``VmHWM``), in MB."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
        raise RuntimeError(f"no {field}")


@contextlib.contextmanager
def serve(
    tree: Path | None, args: list[str], preexec: Callable[[], None] | None = None
) -> Iterator[Server]:
    """A fresh ``flyswat serve`` process until the block ends."""
    with tempfile.TemporaryDirectory() as tmp:
        port, log = free_port(), Path(tmp) / "serve.log"
        cmd = [sys.executable, "-m", "flyswat.cli", "serve", "--port", str(port)]
        cmd += ["--db", f"sqlite:///{tmp}/abuse.db", *([] if tree else [*args, "--workers", "1"])]
        env = {**os.environ}
        if tree is not None:
            env["PYTHONPATH"] = str(tree / "src")
        with log.open("wb") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,
                                    preexec_fn=preexec)  # fmt: skip
        try:
            deadline = time.monotonic() + 30
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                        break
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(log.read_text()[-2000:])
                time.sleep(0.1)
            yield Server(port, proc.pid, log)
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def open_idle(port: int, count: int, first: int = 10, per_address: int = 50) -> list[socket.socket]:
    """``count`` connected sockets, ``per_address`` from each of 127.0.0.<first>, ..."""
    socks = []
    for i in range(count):
        source = (f"127.0.0.{first + i // per_address}", 0)
        socks.append(socket.create_connection(("127.0.0.1", port), 10, source))
        if i % 10 == 9:
            time.sleep(0.002)
    return socks


def watch_closes(
    socks: list[socket.socket], opened: float, seconds: float, feed: bool = False
) -> list[float]:
    """Seconds after ``opened`` at which the server closed each socket, for ``seconds``;
    with ``feed``, every open socket sends one more byte of its head each second."""
    sel = selectors.DefaultSelector()
    for sock in socks:
        sock.setblocking(False)
        sel.register(sock, selectors.EVENT_READ)
    closed: list[float] = []
    deadline, next_feed = time.monotonic() + seconds, time.monotonic() + 1
    while time.monotonic() < deadline and len(closed) < len(socks):
        for key, _ in sel.select(0.1):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            try:
                gone = sock.recv(4096) == b""
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                gone = True
            if gone:
                closed.append(time.monotonic() - opened)
                sel.unregister(sock)
        if feed and time.monotonic() >= next_feed:
            next_feed += 1
            for key in list(sel.get_map().values()):
                with contextlib.suppress(OSError):
                    key.fileobj.send(b"x")  # type: ignore[union-attr]
    sel.close()
    return closed


def health_latency(server: Server, n: int = 20, timeout: float = 2.0) -> str:
    """``/health`` ``n`` times from an address of its own: latency and answers."""
    times, answers = [], {}
    transport = httpx.HTTPTransport(local_address=HEALTH_FROM)
    with httpx.Client(transport=transport, timeout=timeout) as http:
        for _ in range(n):
            t = time.perf_counter()
            try:
                code = str(http.get(server.url + "/health").status_code)
                times.append((time.perf_counter() - t) * 1000)
            except httpx.HTTPError as e:
                code = type(e).__name__
            answers[code] = answers.get(code, 0) + 1
            time.sleep(0.05)
    said = ", ".join(f"{k}: {v}" for k, v in sorted(answers.items()))
    if not times:
        return f"no answer ({said})"
    q = sorted(times)
    p99 = q[min(len(q) - 1, round(0.99 * (len(q) - 1)))]
    return f"p50 {statistics.median(q):.1f} ms, p99 {p99:.1f} ms, max {q[-1]:.1f} ms ({said})"


def drops(closed: list[float], total: int) -> str:
    if not closed:
        return f"none of {total} closed"
    q = sorted(closed)
    return (f"{len(q)} of {total} closed, at {q[0]:.1f} / {statistics.median(q):.1f} / "
            f"{q[-1]:.1f} s (first / median / last)")  # fmt: skip


def flood(server: Server, count: int, header_timeout: float, feed: bool) -> None:
    before = server.rss_mb()
    opened = time.monotonic()
    socks = open_idle(server.port, count)
    if feed:
        for sock in socks:
            sock.sendall(b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: ")
    time.sleep(1)
    held = server.rss_mb()
    print(f"  opened {count} in {time.monotonic() - opened:.1f} s; RSS {before:.1f} -> "
          f"{held:.1f} MB ({(held - before) * 1024 / count:.1f} KB a socket)")  # fmt: skip
    print(f"  /health meanwhile: {health_latency(server)}")
    closed = watch_closes(socks, opened, header_timeout + 3 - (time.monotonic() - opened), feed)
    print(f"  {drops(closed, count)}; RSS then {server.rss_mb():.1f} MB")
    for sock in socks:
        sock.close()


def scenario_idle(tree: Path | None, sockets: int, header_timeout: float) -> None:
    print(f"idle: {sockets} sockets that never send a byte")
    with serve(tree, ["--header-timeout", str(header_timeout)]) as server:
        print(f"  /health before: {health_latency(server)}")
        flood(server, sockets, header_timeout, feed=False)


def scenario_loris(tree: Path | None, loris: int, header_timeout: float) -> None:
    print(f"loris: {loris} sockets sending their request head a byte a second")
    with serve(tree, ["--header-timeout", str(header_timeout)]) as server:
        flood(server, loris, header_timeout, feed=True)


def scenario_body(tree: Path | None) -> None:
    size = 50 * 1024 * 1024
    print("body: 50 MB to POST /api/tables (Content-Length declared)")
    with serve(tree, []) as server:
        httpx.post(server.url + "/api/tables", content=b"{}")  # warm up
        before, peak = server.rss_mb(), server.rss_mb("VmHWM")
        t = time.perf_counter()
        reply = httpx.post(server.url + "/api/tables", content=b"x" * size, timeout=60,
                           headers={"content-type": "application/json"})  # fmt: skip
        took = time.perf_counter() - t
        print(f"  answered {reply.status_code} {reply.text[:60]!r} in {took * 1000:.0f} ms; "
              f"RSS {before:.1f} -> {server.rss_mb():.1f} MB, peak RSS {peak:.1f} -> "
              f"{server.rss_mb('VmHWM'):.1f} MB")  # fmt: skip


def _nofile_256() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


def scenario_nofile(tree: Path | None, header_timeout: float) -> None:
    print("nofile: RLIMIT_NOFILE 256, 400 idle sockets from 8 addresses")
    with serve(tree, ["--header-timeout", str(header_timeout)], _nofile_256) as server:
        opened = time.monotonic()
        socks = open_idle(server.port, 400)
        print(f"  opened 400 in {time.monotonic() - opened:.1f} s; "
              f"/health meanwhile: {health_latency(server, n=10)}")  # fmt: skip
        closed = watch_closes(socks, opened, 1.0)
        print(f"  {len(closed)} of the 400 closed by the server to make room, "
              f"{len(os.listdir(f'/proc/{server.pid}/fd'))} descriptors open")  # fmt: skip
        for sock in socks:
            sock.close()
        time.sleep(1.5)
        print(f"  /health after closing them: {health_latency(server, n=10)}")
        size = server.log.stat().st_size
        print(f"  log: {size} bytes")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sockets", type=int, default=2000, help="idle sockets")
    parser.add_argument("--loris", type=int, default=500, help="slow-loris sockets")
    parser.add_argument("--header-timeout", type=float, default=10.0)
    parser.add_argument("--tree", type=Path, help="run the server from this source tree")
    parser.add_argument("--only", nargs="+", choices=["idle", "loris", "body", "nofile"])
    args = parser.parse_args(argv)
    only = set(args.only or ["idle", "loris", "body", "nofile"])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    print(f"server from {args.tree or 'this tree'}; header timeout {args.header_timeout} s")
    if "idle" in only:
        scenario_idle(args.tree, args.sockets, args.header_timeout)
    if "loris" in only:
        scenario_loris(args.tree, args.loris, args.header_timeout)
    if "body" in only:
        scenario_body(args.tree)
    if "nofile" in only:
        scenario_nofile(args.tree, args.header_timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
