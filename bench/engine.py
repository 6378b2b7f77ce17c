"""Engine throughput: whole 4-seat games between ``normal`` bots per second, on one core.

Each game is :func:`flyswat.sim.reference.play_game` — shuffle, deal, every reveal, every bot
decision from its seat's view, every slap and round — in this one process, no parallelism.
The figure is printed last, as ``<number> games/s``.

    uv run python bench/engine.py                 # the figure (best of 3 runs)
    uv run python bench/engine.py --profile       # where the time goes (cProfile)
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

from flyswat.rules import Rules
from flyswat.sim.reference import play_game

RULES = Rules(seats=4)
LEVELS = ("normal",)


def play(games: int, offset: int = 0) -> None:
    """Play ``games`` bot games, seeds ``bench-<offset>`` onwards."""
    for i in range(offset, offset + games):
        play_game(RULES, LEVELS, f"bench-{i}")


def main() -> None:
    """Measure and print games per second (best of ``--repeat`` runs), or profile."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000, help="games per run (default 1000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs; the best counts (default 3)")
    parser.add_argument("--profile", action="store_true", help="profile one run with cProfile")
    args = parser.parse_args()
    play(20)  # warm up: imports, caches
    if args.profile:
        profiler = cProfile.Profile()
        start = time.perf_counter()
        profiler.runcall(play, args.games)
        elapsed = time.perf_counter() - start
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
        print(f"(under the profiler) {args.games / elapsed:.0f} games/s")
        return
    best = 0.0
    for run in range(args.repeat):
        start = time.perf_counter()
        play(args.games, offset=run * args.games)
        rate = args.games / (time.perf_counter() - start)
        print(f"run {run + 1}: {rate:.0f} games/s")
        best = max(best, rate)
    fast_figure()
    print(f"{best:.0f} games/s")


def fast_figure(games: int = 100_000) -> None:
    """Print the fast simulator's figure on the same workload, for comparison (bench/fast.py)."""
    from flyswat.sim.fast import simulate_fast

    simulate_fast(100, RULES.seats, LEVELS, 0)  # compile, or load the compiled cache
    start = time.perf_counter()
    simulate_fast(games, RULES.seats, LEVELS, 1)
    print(f"fast simulator (bench/fast.py): {games / (time.perf_counter() - start):.0f} games/s")


if __name__ == "__main__":
    main()
