"""What one read of the players' pages costs where they are served apart: a store of
``--seed-games`` finished games in a fresh PostgreSQL schema (seeded once), a ``flyswat serve
--role pages`` process over it, and the rhythm's reader (``harness.seed.reader_main``: a
random leaderboard page, profile or player's games) at ``--rate`` reads a second for
``--seconds``; prints the pages process's and the database's CPU a read and the reads' times.
Each ``--server-src`` (a ``src`` folder or a commit, as ``bench/rhythm.py`` takes them) is run
in turn, ``--rounds`` times, over the same store.

    flock -x -o /tmp/bench.lock uv run python bench/pages_cost.py \\
        --db postgresql://postgres:postgres@127.0.0.1:5432/postgres \\
        --server-src src --server-src HEAD~1
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import tempfile
import time
from pathlib import Path

from harness.procs import ServerProcess, cpu_times
from harness.seed import reader_main, seed_games
from harness.server import free_port, pg_schema
from rhythm import read_figures, service_pids, services_cpu, source


def one(url: str, src_path: Path, ids: list[str], rate: float, seconds: float,
        log: Path) -> dict[str, float]:  # fmt: skip
    """One pages process from ``src_path`` over ``url``, read at ``rate`` for ``seconds``."""
    server = ServerProcess(url, free_port(), log, args=["--role", "pages", "--workers", "1"],
                           env={"PYTHONPATH": str(src_path)})  # fmt: skip
    server.start()
    try:
        ctx = mp.get_context("spawn")
        ready, go, stop, reports = ctx.Event(), ctx.Event(), ctx.Event(), ctx.Queue()
        reader = ctx.Process(target=reader_main, daemon=True,
                             args=(server.http, rate, ids, ready, go, stop, reports))  # fmt: skip
        reader.start()
        ready.wait(60)
        go.set()
        time.sleep(3)  # the reader's connections open, and the pages process's to the database
        pids = service_pids()
        pages0, db0, t0 = sum(cpu_times(server.pid)), services_cpu(pids), time.monotonic()
        time.sleep(seconds)
        took = time.monotonic() - t0
        pages, db = sum(cpu_times(server.pid)) - pages0, services_cpu(pids) - db0
        stop.set()
        report = read_figures(reports.get(timeout=60), rate)
        reader.join(10)
    finally:
        server.stop()
    reads = report["answered_per_s"] * took
    return {"pages_ms": pages / reads * 1000, "db_ms": db / reads * 1000,
            "pages_cpu": pages / took, "db_cpu": db / took, "errors": report["errors"],
            **{f"{k}_p50": v["p50"] for k, v in report["ms"].items()},
            **{f"{k}_p99": v["p99"] for k, v in report["ms"].items()}}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="postgresql://... (a fresh schema in it)")
    parser.add_argument("--seed-games", type=int, default=100_000)
    parser.add_argument("--rate", type=float, default=200.0, help="reads a second")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--server-src", action="append", default=[])
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="pages-cost-"))
    sources = [source(s, workdir) for s in args.server_src or ["src"]]
    with pg_schema(args.db, "pages_") as url:
        print(f"seeding {args.seed_games:,} games ...", flush=True)
        ids = seed_games(url, args.seed_games)
        for k in range(args.rounds):
            for src in sources:
                fig = one(url, src.path, ids, args.rate, args.seconds, workdir / "pages.log")
                print(f"round {k + 1} {src.label:>10}: pages process {fig['pages_ms']:.2f} ms "
                      f"of CPU a read ({fig['pages_cpu']:.0%} of a core), the database "
                      f"{fig['db_ms']:.2f} ms ({fig['db_cpu']:.0%}); p50/p99 ms: leaderboard "
                      f"{fig['leaderboard_p50']:.1f}/{fig['leaderboard_p99']:.1f}, profile "
                      f"{fig['profile_p50']:.1f}/{fig['profile_p99']:.1f}, games "
                      f"{fig['games_p50']:.1f}/{fig['games_p99']:.1f}; errors {fig['errors']}",
                      flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
