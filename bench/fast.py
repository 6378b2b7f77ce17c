"""Fast simulator throughput: whole bot games per second (:func:`flyswat.sim.fast.simulate_fast`).

The same workload as ``bench/engine.py`` by default — 4 seats, ``normal`` bots — played by
the compiled kernel. Compilation is cached and done before timing. The figure is printed
last, as ``<number> games/s`` of wall-clock time; with ``--jobs N`` it is the figure of N
processes together. Each run also prints its rate per second of this process's CPU time:
on a machine shared with other jobs, that is the fairer "per core" figure.

    uv run python bench/fast.py                          # one core, best of 3 runs
    uv run python bench/fast.py --bots easy,normal,hard  # another table
    uv run python bench/fast.py --jobs 2 --games 1000000 # over two processes
"""

from __future__ import annotations

import argparse
import time

from flyswat.sim.fast import simulate_fast


def rate(games: int, seats: int, levels: list[str], jobs: int, seed: int) -> tuple[float, float]:
    """Games per second of one :func:`simulate_fast` call: of wall-clock time, and of this
    process's CPU time (meaningful with ``jobs=1`` only)."""
    start, cpu = time.perf_counter(), time.process_time()
    simulate_fast(games, seats, levels, seed, jobs=jobs)
    return games / (time.perf_counter() - start), games / (time.process_time() - cpu)


def main() -> None:
    """Measure and print games per second (best of ``--repeat`` runs)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200_000, help="games per run (200000)")
    parser.add_argument("--seats", type=int, default=4, help="players per game (default 4)")
    parser.add_argument("--bots", default="normal", help="levels per seat, cycled (normal)")
    parser.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--repeat", type=int, default=3, help="runs; the best counts (3)")
    args = parser.parse_args()
    levels = [s.strip() for s in args.bots.split(",") if s.strip()]
    simulate_fast(100, args.seats, levels, 0)  # compile, or load the compiled cache
    best = 0.0
    for run in range(args.repeat):
        figure, per_cpu = rate(args.games, args.seats, levels, args.jobs, seed=run + 1)
        cpu = f" ({per_cpu:.0f} per CPU-second)" if args.jobs == 1 else ""
        print(f"run {run + 1}: {figure:.0f} games/s{cpu}")
        best = max(best, figure)
    print(f"{best:.0f} games/s")


if __name__ == "__main__":
    main()
