"""Beside a ``bench/rhythm.py`` run: its server's RSS, tables, live heap (``flyswat_heap_blocks``)
and players, every 10 s, one line each into a text file (docs/BENCHMARKS.md, *A table's socket
opened by the transport itself*: the compiled build's heap after a generation of games).

    uv run python bench/memwatch.py OUT.txt SAMPLES &
    uv run python bench/rhythm.py --players 2000 --duration 300 --procs 2 --no-profile
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx

from harness.procs import rss_bytes
from harness.server import metric

EVERY_S = 10.0


def sample() -> str:
    """One line about the rhythm's server (found by its ``--exempt 127.0.0.1``)."""
    found = subprocess.check_output(["pgrep", "-f", "--", "--exempt 127.0.0.1"]).split()
    pid = int(found[0])
    cmd = Path(f"/proc/{pid}/cmdline").read_text().split("\0")
    port = cmd[cmd.index("--port") + 1]
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).json()
    return (f"{time.strftime('%H:%M:%S')} rss {rss_bytes(pid) // 2**20} tables {health['tables']} "
            f"heap {metric(text, 'flyswat_heap_blocks')} players {metric(text, 'flyswat_players')} "
            f"{health.get('hot_path')}")  # fmt: skip


def main() -> None:
    out, samples = Path(sys.argv[1]), int(sys.argv[2])
    with out.open("w") as f:
        for _ in range(samples):
            time.sleep(EVERY_S)
            try:
                line = sample()
            except (subprocess.CalledProcessError, httpx.HTTPError, OSError, ValueError) as e:
                line = f"err {e}"
            print(line, file=f, flush=True)


if __name__ == "__main__":
    main()
