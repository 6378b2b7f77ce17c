"""What Ray workers give on this machine: the reference simulator's games over 1 and 2 Ray
workers of a local cluster, against one process and two local processes (``--jobs``).

Each way plays the same ``--games`` (4 seats of ``normal`` bots, the same seed, so the same
games: checked), timed from the first chunk handed out to the last result back; the Ray
cluster's start-up is timed apart (it is paid once per command, not per game).

    flock -x -o /tmp/bench.lock uv run python bench/ray_scaling.py --games 1200
"""

from __future__ import annotations

import argparse
import os
import time

from flyswat.rules import Rules
from flyswat.sim.pool import ray_session
from flyswat.sim.reference import simulate


def timed(games: int, jobs: int, ray: str | None = None) -> tuple[float, list[object]]:
    """Seconds to play ``games`` games over ``jobs`` processes or Ray tasks, and their stats."""
    started = time.perf_counter()
    stats = simulate(Rules(seats=4), ["normal"], "ray-bench", games, jobs=jobs, ray=ray)
    return time.perf_counter() - started, list(stats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1200)
    games = parser.parse_args().games
    print(f"{games} games, 4 normal bots, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    rows: list[tuple[str, float]] = []
    one, base = timed(games, 1)
    rows.append(("one process", one))
    two, stats = timed(games, 2)
    assert stats == base
    rows.append(("--jobs 2 (processes)", two))
    for workers in (1, 2):
        started = time.perf_counter()
        with ray_session("local", workers):
            up = time.perf_counter() - started
            seconds, stats = timed(games, workers, "local")
        assert stats == base, "Ray played other games"
        label = f"--ray, {workers} worker{'s' * (workers > 1)} (start-up {up:.1f} s)"
        rows.append((label, seconds))
    for label, seconds in rows:
        print(f"| {label} | {seconds:.1f} s | {games / seconds:.0f} games/s | "
              f"{one / seconds:.2f}x |")  # fmt: skip


if __name__ == "__main__":
    main()
