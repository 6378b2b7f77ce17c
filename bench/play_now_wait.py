"""Play now by rating: how long players wait, and how close their tables are rated.

    uv run python bench/play_now_wait.py [--players 4000] [--rates 0.1,0.5,2,10]
                                         [--sd 350] [--seed 1] [--json FILE]

Players arrive at random (a Poisson process of ``rate`` players a second) with shown
ratings drawn from a normal of mean 1000 and ``--sd`` (clipped to 100–2600), and ask Play
now. Each arrival is seated by the server's own rule (``flyswat.players.matching.choose``,
the function ``/api/play`` calls), or by the rule before it (the newest open table, any
rating) for comparison; a table with nobody in band is opened by the newcomer. A table
starts when its four seats are taken, or when its wait for bots (15 s, Play now's) is over.

Reported per rule and rate: a player's **wait** (arrival to their game's start: median and
p95), the **gap** (how far each player is from the mean of the others at their table, for
those who met another person: median and p95), and the share who played bots alone.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flyswat.players.matching import OpenTable, choose
from flyswat.server.players_routes import PLAY_NOW_SEATS, PLAY_NOW_WAIT_MS

Rule = Callable[[int, list[OpenTable], float], OpenTable | None]


def newest(rating: int, tables: list[OpenTable], now: float) -> OpenTable | None:
    """The rule before issue 23: the newest open table, whatever its ratings."""
    return max(tables, key=lambda t: t.opened, default=None)


@dataclass
class Waiting:
    code: str
    opened: float
    players: list[tuple[float, int]] = field(default_factory=list)  # (arrived, rating)


def simulate(rule: Rule, rate: float, players: int, sd: float, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    now, alone = 0.0, 0
    waits: list[float] = []
    gaps: list[float] = []
    tables: dict[str, Waiting] = {}

    def start(t: Waiting, at: float) -> None:
        nonlocal alone
        del tables[t.code]
        ratings = [r for _, r in t.players]
        for arrived, r in t.players:
            waits.append((at - arrived) / 1000)
            if len(ratings) > 1:  # how far from the mean of the others
                gaps.append(abs(r - (sum(ratings) - r) / (len(ratings) - 1)))
        alone += len(t.players) == 1

    for n in range(players):
        now += rng.expovariate(rate) * 1000
        for t in sorted(tables.values(), key=lambda t: t.opened):
            if now >= t.opened + PLAY_NOW_WAIT_MS:  # the bots sat down meanwhile
                start(t, t.opened + PLAY_NOW_WAIT_MS)
        rating = round(min(2600, max(100, rng.gauss(1000, sd))))
        views = [OpenTable(t.code, tuple(r for _, r in t.players), t.opened)
                 for t in tables.values()]  # fmt: skip
        found = rule(rating, views, now)
        if found is None:
            table = tables[str(n)] = Waiting(str(n), now)
        else:
            table = tables[found.code]
        table.players.append((now, rating))
        if len(table.players) == PLAY_NOW_SEATS:
            start(table, now)
    for t in list(tables.values()):
        start(t, t.opened + PLAY_NOW_WAIT_MS)
    return {
        "wait_median_s": statistics.median(waits),
        "wait_p95_s": quantile(waits, 0.95),
        "gap_median": statistics.median(gaps) if gaps else None,
        "gap_p95": quantile(gaps, 0.95) if gaps else None,
        "alone_share": alone / players,
    }


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=4000)
    parser.add_argument("--rates", default="0.1,0.5,2,10", help="arrivals per second")
    parser.add_argument("--sd", type=float, default=350.0, help="the ratings' spread")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = []
    print("| arrivals/s | rule | wait median | wait p95 | gap median | gap p95 | alone |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for rate in (float(r) for r in args.rates.split(",")):
        for name, rule in (("newest", newest), ("by rating", choose)):
            got = simulate(rule, rate, args.players, args.sd, args.seed)
            rows.append({"rate": rate, "rule": name, **got})
            gap_m, gap_p = got["gap_median"], got["gap_p95"]
            print(
                f"| {rate:g} | {name} | {got['wait_median_s']:.1f} s | {got['wait_p95_s']:.1f}"
                f" s | {'-' if gap_m is None else round(gap_m)} | "
                f"{'-' if gap_p is None else round(gap_p)} | {got['alone_share']:.0%} |"
            )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
