"""The writer thread's CPU per group commit on SQLite: ``--commits`` batches of ``--batch``
``done`` events over 500 tables, written as the writer writes them (one transaction each,
the write lock and the ownership fence included), timed with ``time.thread_time``; with
``--ends``, each commit one game's end instead (its ``over``: the record of a game of four
``hard`` bots at Play now's length, the game's row, its players' rows).

    uv run python bench/writer_commit.py --batch 1
    uv run python bench/writer_commit.py --batch 3 --commits 5000
    uv run python bench/writer_commit.py --ends --commits 500
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time

from flyswat import protocol as p
from flyswat.server.store import Store, poll_for_lock
from flyswat.table import events as ev
from harness.seed import one_record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=3, help="events a commit")
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--ends", action="store_true", help="a game's end a commit")
    args = parser.parse_args()
    store = Store(f"sqlite:///{tempfile.mkdtemp()}/writer.db", node="n1")
    codes = [f"T{i:05d}" for i in range(500)]
    rng = random.Random(1)
    with store.engine.connect() as conn:
        poll_for_lock(conn)
        for code in codes:
            store.write_batch([(code, [ev.Created(options=p.TableOptions(seats=4), host=0)])], conn)
        if args.ends:
            record = one_record()
            batches = [[(codes[i % len(codes)], [ev.Over(
                game_id=f"g{i}", record={**record, "id": f"g{i}"}, players=[None] * 4,
                too_fast=[0] * 4, own_reveals=[9] * 4)])] for i in range(args.commits)]  # fmt: skip
        else:
            batches = [[(rng.choice(codes), [ev.SaidDone(seat=1, turn=3)])
                        for _ in range(args.batch)] for _ in range(args.commits)]  # fmt: skip
        cpu, wall = time.thread_time(), time.perf_counter()
        for batch in batches:
            store.write_batch(batch, conn)
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    what = "a game's end" if args.ends else f"{args.batch} events"
    print(f"commits of {what}: {cpu / args.commits * 1e6:.0f} µs of CPU a commit, "
          f"{wall / args.commits * 1e6:.0f} µs of wall time")  # fmt: skip


if __name__ == "__main__":
    main()
