"""The balance study of ``docs/BALANCE.md``: millions of fast bot games, figures and tables.

Five questions, each answered from :func:`flyswat.sim.fast.simulate_fast` games (the fifth also
from the vectorised environment, :class:`flyswat.env.vector.SoloVectorEnv`):

1. ``positions`` — is there an advantage in the seat position (from the start player, R9),
   for 2 to 8 players? (all ``normal`` bots)
2. ``short`` — what does the shorter game (R6, ``remove``) change: length, the start
   player's edge, and how much a faster hand still counts?
3. ``faster`` — how much is a hand 50 ms faster worth? (one seat's bot made faster or
   slower by 25 ms steps, the others ``normal``; and at other table sizes and levels)
4. ``rules`` — how often does each rule fire: swatter and fifth-colour rounds (R12, R13),
   the empty centre (R15), wrong hands and penalties (R19), late hands (R21)?
5. ``levels`` — how does one seat of each level fare against three bots of each level, and
   the example policy of ``examples/policy_search.py`` (searched, then measured), from the
   honest observation and from the helped one?

Writes ``docs/balance/*.png`` (matplotlib, Agg) and ``docs/balance/results.json``, and prints
the tables that ``docs/BALANCE.md`` quotes. Every figure there comes from::

    nice uv run python bench/balance.py               # about 6.6 million games, one core
    uv run python bench/balance.py --scale 0.01       # the same at 1/100 size: a quick look
    uv run python bench/balance.py --ray              # the fast games on a local Ray cluster
    uv run python bench/balance.py --ray auto         # ... or on the cluster this node is in

With ``--ray`` (or ``--jobs N``), every ``simulate_fast`` call spreads its chunks of 50,000
games over the cluster (or N processes); the numbers are the same (:mod:`flyswat.sim.pool`).
The example policy's search (question 5) stays in this process.

Seeds are fixed, so the same command gives the same numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from flyswat.sim.fast import FastResult, with_faster_hand
from flyswat.sim.fast import simulate_fast as _simulate_fast
from flyswat.sim.pool import ray_session

#: Where the fast games are played: ``jobs`` and ``ray`` for every simulate_fast (main sets).
WHERE: dict[str, Any] = {}


def simulate_fast(*args: Any, **kwargs: Any) -> FastResult:
    """:func:`flyswat.sim.fast.simulate_fast`, played where :data:`WHERE` says."""
    return _simulate_fast(*args, **kwargs, **WHERE)


OUT = Path(__file__).resolve().parent.parent / "docs" / "balance"
Z = 1.96  # 95 % confidence intervals


def mean_ci(values: np.ndarray) -> tuple[float, float]:
    """The mean of ``values`` and the half-width of its 95 % confidence interval."""
    return float(values.mean()), float(Z * values.std(ddof=1) / np.sqrt(len(values)))


def position_shares(r: FastResult) -> list[tuple[float, float]]:
    """Win share (mean, ±CI) of each position from the start player."""
    wins = r.win_shares()
    rows = np.arange(r.games)
    return [mean_ci(wins[rows, (r.starts + k) % r.rules.seats]) for k in range(r.rules.seats)]


def seat0(r: FastResult) -> dict[str, Any]:
    """What seat 0 came to: win share, and its points minus the mean of the others'."""
    others = np.delete(r.points, 0, axis=1).mean(axis=1)
    return {
        "win_share": mean_ci(r.win_shares()[:, 0]),
        "points_edge": mean_ci(r.points[:, 0] - others),
    }


def rule_rates(r: FastResult) -> dict[str, float]:
    """Per-game means of the kernel's counters."""
    from flyswat.sim.fast.kernel import COUNTERS

    return {name: float(r.counters[:, i].mean()) for i, name in enumerate(COUNTERS)}


def study_positions(n: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for seats in range(2, 9):
        r = simulate_fast(n, seats, "normal", seed=100 + seats)
        out[str(seats)] = {"shares": position_shares(r), "rules": rule_rates(r), "games": n}
    return out


REMOVES = (0, 16, 32, 48, 64, 80)


def study_short(n: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    fast = with_faster_hand("normal", 50)
    for remove in REMOVES:
        fair = simulate_fast(n, 4, "normal", seed=200 + remove, remove=remove)
        edge = simulate_fast(n, 4, [fast, *["normal"] * 3], seed=300 + remove, remove=remove)
        out[str(remove)] = {
            "shares": position_shares(fair),
            "rules": rule_rates(fair),
            "faster": seat0(edge),
            "games": n,
        }
    return out


DELTAS = (-100, -75, -50, -25, 0, 25, 50, 75, 100)


def study_faster(n: int) -> dict[str, Any]:
    out: dict[str, Any] = {"deltas": {}, "tables": {}}
    for d in DELTAS:
        levels = [with_faster_hand("normal", d), *["normal"] * 3]
        r = simulate_fast(n, 4, levels, seed=500 + d)
        out["deltas"][str(d)] = seat0(r)
    for seats, level in ((2, "normal"), (6, "normal"), (4, "easy"), (4, "hard")):
        levels = [with_faster_hand(level, 50), *[level] * (seats - 1)]
        r = simulate_fast(n, seats, levels, seed=700 + seats)
        out["tables"][f"{seats} {level}"] = seat0(r)
    return out


LEVELS = ("easy", "normal", "hard")


def _policy_search() -> Any:
    """``examples/policy_search.py`` as a module: the example policy and its measurement."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "examples" / "policy_search.py"
    spec = importlib.util.spec_from_file_location("policy_search", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def study_levels(n: int, search: int) -> dict[str, Any]:
    """One seat of each level (and the example policy) against three bots of each level."""
    out: dict[str, Any] = {}
    for k, mine in enumerate(LEVELS):
        for j, theirs in enumerate(LEVELS):
            r = simulate_fast(n, 4, [mine, theirs, theirs, theirs], seed=900 + 3 * k + j)
            out[f"{mine} vs {theirs}"] = seat0(r)
    ps = _policy_search()
    for theirs in LEVELS:
        for helped in (False, True):
            scores = {
                r: ps.win_share(r, search, theirs, 0, theirs, helped)[0] for r in ps.CANDIDATES
            }
            best = max(scores, key=lambda r: scores[r])
            share = ps.win_share(best, n // 10, theirs, 10**6, theirs, helped)
            name = "example" + (" helped" if helped else "")
            out[f"{name} vs {theirs}"] = {"win_share": share, "policy": list(best)}
    return out


# -- figures ---------------------------------------------------------------------------------


def plot_positions(data: dict[str, Any], path: Path) -> None:
    fig = Figure(figsize=(8, 4.5), layout="constrained")
    ax = fig.subplots()
    for seats, row in data.items():
        k = int(seats)
        shares = np.array(row["shares"])
        x = np.arange(k) + (k - 5) * 0.04
        ax.errorbar(x, (shares[:, 0] * k - 1) * 100, yerr=shares[:, 1] * k * 100,
                    marker="o", capsize=3, label=f"{k} players")  # fmt: skip
    ax.axhline(0, color="grey", lw=0.8)
    ax.set(title="Win share by seat position (all normal bots), relative to a fair 1/n",
           xlabel="position after the start player (0 = start player)",
           ylabel="win share − 1/n, % of 1/n (95 % CI)")  # fmt: skip
    ax.legend(ncol=4, fontsize=8)
    fig.savefig(path, dpi=100)


def plot_short(data: dict[str, Any], path: Path) -> None:
    fig = Figure(figsize=(12, 4), layout="constrained")
    a, b, c = fig.subplots(1, 3)
    removes = [int(x) for x in data]
    turns = [data[x]["rules"]["turns"] for x in data]
    rounds = [data[x]["rules"]["rounds"] for x in data]
    a.plot(removes, turns, "o-", label="reveals")
    a.plot(removes, rounds, "s-", label="slap rounds")
    a.set(title="Game length", xlabel="cards removed (R6)", ylabel="per game")
    a.legend()
    start = np.array([data[x]["shares"][0] for x in data])
    b.errorbar(removes, start[:, 0] * 100, yerr=start[:, 1] * 100, marker="o", capsize=3)
    b.axhline(25, color="grey", lw=0.8)
    b.set(title="Start player's win share (4 normal)", xlabel="cards removed", ylabel="%")
    fast = np.array([data[x]["faster"]["win_share"] for x in data])
    c.errorbar(removes, fast[:, 0] * 100, yerr=fast[:, 1] * 100, marker="o", capsize=3)
    c.axhline(25, color="grey", lw=0.8)
    c.set(title="Win share of one seat 50 ms faster\nthan 3 normal bots",
          xlabel="cards removed", ylabel="%")  # fmt: skip
    fig.savefig(path, dpi=100)


def plot_faster(data: dict[str, Any], path: Path) -> None:
    fig = Figure(figsize=(10, 4), layout="constrained")
    a, b = fig.subplots(1, 2)
    deltas = [int(d) for d in data["deltas"]]
    share = np.array([data["deltas"][d]["win_share"] for d in data["deltas"]])
    edge = np.array([data["deltas"][d]["points_edge"] for d in data["deltas"]])
    a.errorbar(deltas, share[:, 0] * 100, yerr=share[:, 1] * 100, marker="o", capsize=3)
    a.axhline(25, color="grey", lw=0.8)
    a.set(title="One seat faster (+) or slower (−) than 3 normal bots",
          xlabel="ms faster, every hand", ylabel="its win share, % (95 % CI)")  # fmt: skip
    b.errorbar(deltas, edge[:, 0], yerr=edge[:, 1], marker="o", capsize=3)
    b.axhline(0, color="grey", lw=0.8)
    b.set(title="Its points minus the others' mean", xlabel="ms faster", ylabel="points")
    fig.savefig(path, dpi=100)


def plot_rules(data: dict[str, Any], path: Path) -> None:
    fig = Figure(figsize=(10, 4), layout="constrained")
    ax = fig.subplots()
    names = ["swatter_rounds", "fifth_colour_rounds", "empty_rounds", "wrong_hands",
             "penalties", "late_slaps"]  # fmt: skip
    seats = list(data)
    x = np.arange(len(seats))
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        ax.bar(x + i * width, [data[s]["rules"][name] for s in seats], width, label=name)
    ax.set_xticks(x + 0.4 - width / 2, [f"{s} players" for s in seats])
    ax.set(title="How often each rule fires, per game (all normal bots)", ylabel="per game")
    ax.legend(fontsize=8)
    fig.savefig(path, dpi=100)


# -- tables ----------------------------------------------------------------------------------


def pct(m: tuple[float, float]) -> str:
    return f"{m[0] * 100:.2f} ± {m[1] * 100:.2f} %"


def print_tables(results: dict[str, Any]) -> None:
    pos = results["positions"]
    print("\n## Win share by position (start player first), all normal\n")
    for seats, row in pos.items():
        print(f"| {seats} | " + " | ".join(pct(tuple(s)) for s in row["shares"]) + " |")
    print("\n## Rule frequencies per game, all normal\n")
    for seats, row in pos.items():
        r = row["rules"]
        print(f"| {seats} | " + " | ".join(f"{r[k]:.2f}" for k in (
            "turns", "rounds", "swatter_rounds", "fifth_colour_rounds", "empty_rounds",
            "wins", "wrong_hands", "penalties", "late_slaps")) + " |")  # fmt: skip
    print("\n## Shorter game (4 normal; last column: one seat 50 ms faster)\n")
    for remove, row in results["short"].items():
        r = row["rules"]
        print(f"| {remove} | {r['turns']:.1f} | {r['rounds']:.1f} | {pct(row['shares'][0])} "
              f"| {pct(row['faster']['win_share'])} |")  # fmt: skip
    print("\n## One seat faster than 3 normal\n")
    for d, row in results["faster"]["deltas"].items():
        e = row["points_edge"]
        print(f"| {d} | {pct(row['win_share'])} | {e[0]:+.2f} ± {e[1]:.2f} |")
    print("\n## 50 ms faster at other tables\n")
    for t, row in results["faster"]["tables"].items():
        e = row["points_edge"]
        print(f"| {t} | {pct(row['win_share'])} | {e[0]:+.2f} ± {e[1]:.2f} |")


def print_levels(levels: dict[str, Any]) -> None:
    print("\n## One seat against three bots of a level (columns), at the bots' speed for the "
          "example policy\n")  # fmt: skip
    for mine in (*LEVELS, "example", "example helped"):
        cells = []
        for theirs in LEVELS:
            row = levels[f"{mine} vs {theirs}"]
            policy = f" {tuple(row['policy'])}" if "policy" in row else ""
            cells.append(pct(row["win_share"]) + policy)
        print(f"| {mine} | " + " | ".join(cells) + " |")


def main() -> None:
    """Run the five studies, write the figures and the numbers, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the full size")
    parser.add_argument("--out", type=Path, default=OUT, help="folder for figures and JSON")
    parser.add_argument("--jobs", type=int, default=None, help="processes, or Ray tasks at once")
    parser.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                        help="on a Ray cluster: a local one, or the one at ADDRESS")  # fmt: skip
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    WHERE.update(jobs=args.jobs or (None if args.ray else 1), ray=args.ray)
    with ray_session(args.ray, args.jobs) if args.ray else contextlib.nullcontext():
        study(args)


def study(args: argparse.Namespace) -> None:
    """The studies at ``args.scale``, written to ``args.out``."""
    started = time.perf_counter()
    n = max(100, int(400_000 * args.scale))
    results = {
        "positions": study_positions(n),
        "short": study_short(n // 2),
        "faster": study_faster(n // 2),
        "levels": study_levels(n // 2, max(200, n // 200)),
    }
    games = 7 * n + 2 * len(REMOVES) * (n // 2) + (len(DELTAS) + 4 + 9) * (n // 2)
    results["games"] = games
    plot_positions(results["positions"], args.out / "positions.png")
    plot_short(results["short"], args.out / "short_game.png")
    plot_faster(results["faster"], args.out / "faster_hand.png")
    plot_rules(results["positions"], args.out / "rules.png")
    (args.out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    print_tables(results)
    print_levels(results["levels"])
    elapsed = time.perf_counter() - started
    print(f"\n{games} games in {elapsed:.0f} s: {games / elapsed:.0f} games/s")


if __name__ == "__main__":
    main()
