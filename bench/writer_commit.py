"""The writer thread's CPU per group commit on SQLite: ``--commits`` batches of ``--batch``
``done`` events over 500 tables, written as the writer writes them (one transaction each,
the write lock and the ownership fence included), timed with ``time.thread_time``.

    uv run python bench/writer_commit.py --batch 1
    uv run python bench/writer_commit.py --batch 3 --commits 5000
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time

from flyswat import protocol as p
from flyswat.server.store import Store, poll_for_lock
from flyswat.table import events as ev


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=3, help="events a commit")
    parser.add_argument("--commits", type=int, default=2000)
    args = parser.parse_args()
    store = Store(f"sqlite:///{tempfile.mkdtemp()}/writer.db", node="n1")
    codes = [f"T{i:05d}" for i in range(500)]
    rng = random.Random(1)
    with store.engine.connect() as conn:
        poll_for_lock(conn)
        for code in codes:
            store.write_batch([(code, [ev.Created(options=p.TableOptions(seats=4), host=0)])], conn)
        batches = [[(rng.choice(codes), [ev.SaidDone(seat=1, turn=3)]) for _ in range(args.batch)]
                   for _ in range(args.commits)]  # fmt: skip
        cpu, wall = time.thread_time(), time.perf_counter()
        for batch in batches:
            store.write_batch(batch, conn)
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    print(f"commits of {args.batch} events: {cpu / args.commits * 1e6:.0f} µs of CPU a commit, "
          f"{wall / args.commits * 1e6:.0f} µs of wall time")  # fmt: skip


if __name__ == "__main__":
    main()
