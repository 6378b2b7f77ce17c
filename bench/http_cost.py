"""What one HTTP request costs the server's process: a fresh ``flyswat serve --workers 1``
from each ``--server-src`` (a ``src`` folder or a commit, as ``bench/rhythm.py`` takes them),
one lobby made on it, and ``--requests`` reads of that table's info (``GET
/api/tables/{code}``, a route of a few µs of its own) over ``--connections`` kept-alive
connections, each request sent when the last answer is in. Prints the server's CPU (every
thread, ``/proc``) per request: what HTTP itself costs there (the parser, uvicorn's protocol,
Starlette's middleware and routing, the JSON reply), paid by every create, join, page and
WebSocket upgrade. The sources run in turn, ``--rounds`` times, so that a slow minute of the
machine falls on both.

    flock -x -o /tmp/bench.lock uv run python bench/http_cost.py \\
        --server-src src --server-src HEAD~1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
import urllib.request
from pathlib import Path

from harness.procs import cpu_seconds
from harness.server import running_server
from rhythm import source


async def _reads(port: int, path: str, each: int) -> None:
    request = f"GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: */*\r\n\r\n".encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for _ in range(each):
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))  # fmt: skip
            await reader.readexactly(length)
    finally:
        writer.close()


def one(src: Path, requests: int, connections: int) -> float:
    """µs of the server's CPU a request, for a fresh server from ``src``."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_server(Path(tmp) / "s.db", env={"PYTHONPATH": str(src)}) as (http, port, pid),
    ):
        made = urllib.request.Request(f"{http}/api/tables", data=b'{"name": "Ana"}',
                                      headers={"content-type": "application/json"})  # fmt: skip
        with urllib.request.urlopen(made) as reply:
            code = json.load(reply)["code"]
        path, each = f"/api/tables/{code}", requests // connections

        async def run() -> None:
            await asyncio.gather(*(_reads(port, path, each) for _ in range(connections)))

        asyncio.run(_reads(port, path, 200))  # warm up
        cpu0, t0 = cpu_seconds(pid), time.monotonic()
        asyncio.run(run())
        cpu1, t1 = cpu_seconds(pid), time.monotonic()
    done = each * connections
    print(f"  {done} requests in {t1 - t0:.1f} s: {(cpu1 - cpu0) / done * 1e6:.0f} µs a request",
          flush=True)  # fmt: skip
    return (cpu1 - cpu0) / done * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server-src", action="append", default=None,
                        help="a src folder or a commit; repeat (default: src)")  # fmt: skip
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--connections", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        sources = [source(s, Path(work)) for s in args.server_src or ["src"]]
        figures: dict[str, list[float]] = {s.label: [] for s in sources}
        for _ in range(args.rounds):
            for src in sources:
                print(src.label, flush=True)
                figures[src.label].append(one(src.path, args.requests, args.connections))
    for label, each in figures.items():
        print(f"{label}: {', '.join(f'{x:.0f}' for x in each)} µs of the server's CPU a request")


if __name__ == "__main__":
    main()
