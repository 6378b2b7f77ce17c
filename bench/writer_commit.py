"""The writer thread's CPU per group commit on SQLite: ``--commits`` batches of ``--batch``
``done`` events over 500 tables, written as the writer writes them (one transaction each,
the write lock and the ownership fence included), timed with ``time.thread_time``; with
``--ends``, each commit one game's end instead (its ``over``: the record of a game of four
``hard`` bots at Play now's length, the game's row, its players' rows). With ``--busy``, a
second thread runs Python all the while, as a busy event loop does, and each commit's wall
time and its thread's voluntary context switches (Linux: its waits, mostly for the
interpreter's lock, which the busy thread hands back only every switch interval) are told.

    uv run python bench/writer_commit.py --batch 1
    uv run python bench/writer_commit.py --batch 8 --commits 200 --busy
    uv run python bench/writer_commit.py --batch 3 --commits 5000
    uv run python bench/writer_commit.py --ends --commits 500
    uv run python bench/writer_commit.py --ends --commits 200 --busy
    uv run python bench/writer_commit.py --ends --commits 200 --busy --identified 100

With ``--identified G``, the four seats of every game's end are players with an identity,
each with ``G`` games kept before (the fair-play window reads up to 99 of them).

The collector runs as in ``flyswat serve`` (:func:`flyswat.server.serve.collect`: young
collections only, what was made before the commits frozen out of them); under the default
policy a game's end of players, thousands of small objects each, paid for full collections
of the benchmark's own heap (46 ms of CPU a commit where the server's policy gives 28).
"""

from __future__ import annotations

import argparse
import gc
import random
import tempfile
import threading
import time
from typing import Any

from flyswat import protocol as p
from flyswat.server import players_store as ps
from flyswat.server.serve import young_only
from flyswat.server.store import Store, poll_for_lock
from flyswat.table import events as ev
from harness.seed import one_record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=3, help="events a commit")
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--ends", action="store_true", help="a game's end a commit")
    parser.add_argument("--busy", action="store_true",
                        help="commit on a thread beside one that runs Python")  # fmt: skip
    parser.add_argument("--identified", type=int, default=None, metavar="G",
                        help="with --ends: four players with identities, G games each")  # fmt: skip
    args = parser.parse_args()
    if args.busy:
        busy(args)
        return
    store, codes = stored_tables()
    rng = random.Random(1)
    with store.engine.connect() as conn:
        poll_for_lock(conn)
        if args.ends:
            batches = ends(store, codes, args.commits, args.identified)
        else:
            batches = [[(rng.choice(codes), [ev.SaidDone(seat=1, turn=3)])
                        for _ in range(args.batch)] for _ in range(args.commits)]  # fmt: skip
        as_served()
        cpu, wall = time.thread_time(), time.perf_counter()
        for batch in batches:
            store.write_batch(batch, conn)
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    what = "a game's end" if args.ends else f"{args.batch} events"
    print(f"commits of {what}: {cpu / args.commits * 1e6:.0f} µs of CPU a commit, "
          f"{wall / args.commits * 1e6:.0f} µs of wall time")  # fmt: skip


def ends(store: Store, codes: list[str], n: int, identified: int | None) -> list[Any]:
    """``n`` batches of one game's end each (its players': with ``identified``, four
    players, that many games of theirs kept first)."""
    record = one_record()
    players: list[str | None] = [None] * 4
    if identified is not None:
        ids = [f"{i:032x}" for i in range(4)]
        with store.engine.begin() as conn:
            for i, pid in enumerate(ids):
                ps.register(conn, pid, f"P{i}", f"secret-{i}", "2026-12-01T00:00:00Z")
        players = list(ids)
    # (an older server's event may not carry ``public``: its store reads it back)
    fields = getattr(ev.Over, "__struct_fields__", None) or getattr(ev.Over, "model_fields", ())
    public = {"public": True} if "public" in fields else {}

    def over(i: int) -> ev.Over:
        return ev.Over(game_id=f"g{i}", record={**record, "id": f"g{i}"}, players=players,
                       too_fast=[0] * 4, own_reveals=[9] * 4, **public)  # fmt: skip

    for i in range(identified or 0):  # the players' earlier games
        store.write_batch([(codes[i % len(codes)], [over(-1 - i)])])
    return [[(codes[i % len(codes)], [over(i)])] for i in range(n)]


def stored_tables() -> tuple[Store, list[str]]:
    """A node's store on a new SQLite file, with 500 tables created in it."""
    store = Store(f"sqlite:///{tempfile.mkdtemp()}/writer.db", node="n1")
    codes = [f"T{i:05d}" for i in range(500)]
    for code in codes:
        store.write_batch([(code, [ev.Created(options=p.TableOptions(seats=4), host=0)])])
    return store, codes


def as_served() -> None:
    """The server's collector policy (:func:`flyswat.server.serve.collect`): young
    collections only, and everything made so far frozen out of them."""
    young_only()
    gc.collect()
    gc.freeze()


def waits() -> int:
    """This thread's voluntary context switches so far (Linux)."""
    with open(f"/proc/self/task/{threading.get_native_id()}/status") as f:
        return int(f.read().split("voluntary_ctxt_switches:")[1].split()[0])


def busy(args: argparse.Namespace) -> None:
    """``--busy``: the commits on a thread of their own, as the writer's, a commit every 3
    ms, beside a thread that runs Python all the while."""
    out: dict[str, float] = {}
    running = True

    def spin() -> None:
        n = 0
        while running:
            n += 1

    def write() -> None:
        store, codes = stored_tables()
        rng = random.Random(1)
        with store.engine.connect() as conn:
            poll_for_lock(conn)
            batches = (ends(store, codes, args.commits, args.identified) if args.ends else
                       [[(rng.choice(codes), [ev.SaidDone(seat=1, turn=3)])
                         for _ in range(args.batch)] for _ in range(args.commits)])  # fmt: skip
            as_served()
            first, wall = waits(), time.perf_counter()
            for batch in batches:
                time.sleep(0.003)
                store.write_batch(batch, conn)
            out["wall"] = time.perf_counter() - wall - 0.003 * args.commits
            out["waits"] = waits() - first

    spinner = threading.Thread(target=spin)
    spinner.start()
    writer = threading.Thread(target=write)
    writer.start()
    writer.join()
    running = False
    spinner.join()
    what = ("a game's end" + (f" of four players with {args.identified} games each"
                               if args.identified is not None else " of guests")
            if args.ends else f"{args.batch} events")  # fmt: skip
    print(f"commits of {what} beside a busy thread: "
          f"{out['wall'] / args.commits * 1e3:.1f} ms of wall time a commit (its 3-ms pause "
          f"apart), {out['waits'] / args.commits:.1f} waits a commit")  # fmt: skip


if __name__ == "__main__":
    main()
