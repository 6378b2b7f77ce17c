"""The store's group commit: commit latency and events per second, SQLite against PostgreSQL.

An asyncio loop submits the events of ``--tables`` tables (a ``Slapped`` event each, as a
round's hands are) through :class:`flyswat.server.writer.Writer`, at ``--rate`` events per
second in all, for ``--seconds``; then as fast as the writer takes them (``max``). For each
store it prints: events per second stored, commits per second, events per commit, the commit
time (p50/p99, the writer thread's own), and the time from submitting an event to being told
it is stored (p50/p99/max) — what a player's message waits for on top of the table's work.

    uv run python bench/store.py                                  # SQLite, a temporary file
    uv run python bench/store.py --db postgresql://postgres:postgres@127.0.0.1:5432/postgres
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from sqlalchemy import text

from flyswat.server.store import Store, engine_url
from flyswat.server.writer import Writer
from flyswat.table import events as ev
from harness.load import percentile


async def drive(store: Store, tables: int, rate: float | None, seconds: float) -> dict[str, float]:
    """Submit events for ``seconds`` (at ``rate`` a second, or as fast as they are taken)."""
    loop = asyncio.get_running_loop()
    writer = Writer(store, loop)
    waits: list[float] = []
    pending = 0
    codes = [f"B{i:05d}" for i in range(tables)]

    def submit(i: int) -> None:
        nonlocal pending
        sent = time.perf_counter()
        event = ev.Slapped(turn=i, seat=i % 4, card="R3-1", ms=321.5)

        def told() -> None:
            nonlocal pending
            pending -= 1
            waits.append((time.perf_counter() - sent) * 1000)

        pending += 1
        writer.submit(codes[i % tables], [event], told)

    started = time.perf_counter()
    i = 0
    while (now := time.perf_counter()) - started < seconds:
        if rate is None:
            while pending < 2000:  # keep the writer busy, never the loop's memory
                submit(i)
                i += 1
            await asyncio.sleep(0)
            continue
        due = int((now - started) * rate)
        while i < due:
            submit(i)
            i += 1
        await asyncio.sleep(0.001)
    while pending:
        await asyncio.sleep(0.001)
    elapsed = time.perf_counter() - started
    writer.stop()
    s = writer.stats
    return {
        "events_s": s.events / elapsed,
        "commits_s": s.commits / elapsed,
        "per_commit": s.events / max(1, s.commits),
        "commit_p50": percentile(s.commit_ms, 50),
        "commit_p99": percentile(s.commit_ms, 99),
        "told_p50": percentile(waits, 50),
        "told_p99": percentile(waits, 99),
        "told_max": max(waits),
    }


def fresh(url: str | None, folder: Path) -> Store:
    """A store with an empty event log: a new SQLite file, or the PostgreSQL tables emptied."""
    if url is None:
        return Store(f"sqlite:///{folder / 'bench.db'}")
    store = Store(url)
    with store.engine.begin() as conn:
        conn.execute(text("DELETE FROM flyswat_events"))
    return store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default=None, help="postgresql://… (default: a SQLite file)")
    parser.add_argument("--tables", type=int, default=2000)
    parser.add_argument("--rate", type=float, nargs="+", default=[1000, 5000, 10000])
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    name = "sqlite" if args.db is None else engine_url(args.db).split(":")[0]
    print(f"store {name}, {args.tables} tables, {args.seconds:g} s a step")
    print(
        "rate ev/s | stored ev/s | commits/s | ev/commit | commit p50/p99 ms | told p50/p99/max ms"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for rate in [*args.rate, None]:
            store = fresh(args.db, Path(tmp))
            try:
                r = asyncio.run(drive(store, args.tables, rate, args.seconds))
            finally:
                store.close()
            print(f"{'max' if rate is None else f'{rate:,.0f}':>9} | {r['events_s']:>11,.0f} | "
                  f"{r['commits_s']:>9,.0f} | {r['per_commit']:>9.1f} | "
                  f"{r['commit_p50']:>6.2f} / {r['commit_p99']:>6.2f} | "
                  f"{r['told_p50']:.2f} / {r['told_p99']:.2f} / {r['told_max']:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
