"""What opening a table costs the server: the rhythm's set-up alone, per player.

One fresh ``flyswat serve --workers 1`` (its own SQLite file, ``--exempt 127.0.0.1``) and the
rhythm's generator (``harness.generator``) opening ``--tables`` tables of four as
``shared/LOAD-RHYTHM.md`` does — a create, three joins, the table's info for its node, four
sockets, four ``hello`` and three ``ready`` — ``joins_in_flight`` requests at once. No game is
started (the host never sends ``start``), so what the server spends between the first request
and the last ``welcome`` is the set-up's, less the lobbies' pings. Each round opens new tables
and closes them after; the figure is the server's CPU (every thread, ``/proc``) per player.

    uv run python bench/table_setup.py --tables 750 --rounds 3
    uv run python bench/table_setup.py --src /tmp/old/src      # an older server's src
    uv run python bench/table_setup.py --profile /tmp/setup.txt  # py-spy over the rounds
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import tempfile
import time
from pathlib import Path

from harness import rhythm
from harness.generator import Generator, new_loop
from harness.load import raise_fd_limit
from harness.procs import cpu_seconds
from harness.server import metric, running_server


async def rounds(http: str, pid: int, tables: int, n: int) -> list[dict[str, float]]:
    out = []
    for i in range(n):
        gen = Generator(
            rhythm.RhythmPlan(http=http, tables=tables, name=f"s{i}", seed=i, start=False)
        )
        await asyncio.sleep(1.0)
        cpu0, t0, own0 = cpu_seconds(pid), time.monotonic(), time.process_time()
        await gen.setup()
        cpu1, t1, own1 = cpu_seconds(pid), time.monotonic(), time.process_time()
        players = tables * 4
        failed = gen.count["failed_joins"] + gen.count["connects_failed"]
        waited = await _metric(gen, "flyswat_setups_waited_total")
        out.append({"players": players, "wall_s": t1 - t0, "cpu_s": cpu1 - cpu0,
                    "us_per_player": (cpu1 - cpu0) / players * 1e6, "failed": failed,
                    "generator_us_per_player": (own1 - own0) / players * 1e6,
                    "waited_so_far": waited})  # fmt: skip
        print(
            f"round {i + 1}: {players} players in {t1 - t0:.1f} s, server CPU "
            f"{cpu1 - cpu0:.2f} s = {out[-1]['us_per_player']:.0f} µs a player (the generator's "
            f"{out[-1]['generator_us_per_player']:.0f}), "
            f"failed {failed}; creates and joins that waited so far: {waited}",
            flush=True,
        )
        await gen.close()
        await asyncio.sleep(2.0)
    return out


async def _metric(gen: Generator, name: str) -> float | None:
    """One sample of the server's ``/metrics`` (None when it has no such metric)."""
    return metric((await gen.http.get("/metrics")).text, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=750)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--src", help="run the server from this src folder")
    parser.add_argument("--profile", help="py-spy the server (--gil) into this text file")
    args = parser.parse_args()
    raise_fd_limit()
    env = {"PYTHONPATH": str(Path(args.src).resolve())} if args.src else {}
    with tempfile.TemporaryDirectory() as tmp, running_server(Path(tmp) / "s.db", env=env) as (
        http, _port, pid,
    ):  # fmt: skip
        spy = None
        if args.profile:
            spy = subprocess.Popen(
                ["py-spy", "record", "--gil", "--format", "raw", "--rate", "200",
                 "--pid", str(pid), "--output", args.profile],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            time.sleep(1.0)
        loop = new_loop()
        try:
            out = loop.run_until_complete(rounds(http, pid, args.tables, args.rounds))
        finally:
            loop.close()
            if spy is not None:
                spy.send_signal(2)
                spy.wait()
    per = sorted(r["us_per_player"] for r in out)
    print(
        f"server CPU a player set up: median {per[len(per) // 2]:.0f} µs "
        f"(rounds {', '.join(f'{x:.0f}' for x in per)})"
    )


if __name__ == "__main__":
    main()
