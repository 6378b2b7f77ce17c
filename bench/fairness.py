"""Fairness under latency (F1–F4): real racers, a real server, delayed loopback links.

    uv run python bench/fairness.py [--tables 48] [--concurrency 12] [--plot FILE.png]
                                    [--only f1,f2,f3,trust] [--seed 1]

- F1: four equal-skill players on RTTs 15/60/120/180 ms (seats rotated between tables): each
  one's share of races won, beside what first-packet-wins would have given.
- F2: how often the truly faster hand is underneath, by the gap between true reaction times,
  at RTTs 20/80/140/200 ms with jitter.
- F3: a cheat who always claims 100 ms (the allowance then decides how much it gains) against
  an equal honest peer; and claims under 100 ms, which must all be refused.
- F4: how long after the last hand (and after the best hand) each round is decided.
- Trust: cheaters against an honest peer on the same network (RTT 60 ms, jitter 8 ms): one
  that never answers pings, one that answers them 245 ms late, one that slaps 5 ms after the
  reveal claiming the floor, ones truly 150, 30 and 20 ms slower claiming less, and one of
  equal skill that claims 100 ms with late pongs (F3 is the same cheat with prompt pongs,
  the one that rides every allowance it can get).

The server runs with ``--rtt-header-from 127.0.0.1``: each racer's delaying proxy is its
network and says so as a trusted front would (``X-Flyswat-Rtt-Us``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from harness.fairness import (
    Seat,
    TableRun,
    faster_underneath,
    fixed,
    play_tables,
    win_shares,
)
from harness.server import running_server

OPTIONS = {"slap_window_ms": 3000, "turn_timeout_ms": 4000}
#: The server believes the racers' proxies' round-trip header (they are the network here).
#: The racers' proxies are trusted fronts; a cheater that answers no ping is let stay (a real
#: server drops it after --max-missed-pings), so that its races can be counted.
SERVER_ARGS = ["--rtt-header-from", "127.0.0.1", "--max-missed-pings", "100000"]
LATE = 245.0


def trust_layouts() -> dict[str, tuple[list[Seat], float, dict[str, int]]]:
    """Each cheater against an honest peer on RTT 60 ms, jitter 8 ms; the most share of races
    the cheater may win; table options of its own."""

    def two(cheat: Seat, honest: Seat) -> list[Seat]:
        return [cheat, honest]

    def claims(ms: float) -> Callable[[float], float]:
        return lambda _: ms

    net = {"rtt_ms": 60.0, "jitter_ms": 8.0}
    honest300 = Seat(**net, reaction=fixed(300), label="honest")
    return {
        "no pongs, 150 ms slower, claims 100": (
            two(Seat(**net, reaction=fixed(450), claim=claims(100), pong_delay_ms=None,
                     label="cheat"), honest300), 0.02, {}),
        "pongs 245 ms late, 150 ms slower, claims 100": (
            two(Seat(**net, reaction=fixed(450), claim=claims(100), pong_delay_ms=LATE,
                     label="cheat"), honest300), 0.02, {}),
        # Short games: 20 refusals within 10 s close a socket as abusive (PROTOCOL.md, Errors).
        "slaps 5 ms after the reveal, claims 100": (
            two(Seat(**net, reaction=fixed(5), claim=claims(100), label="cheat"), honest300),
            0.02, {"remove": 80}),
        "sends at 200, claims 150, late pongs, vs 170": (
            two(Seat(**net, reaction=fixed(200), claim=claims(150), pong_delay_ms=LATE,
                     label="cheat"), Seat(**net, reaction=fixed(170), label="honest")),
            0.02, {}),
        "20 ms slower, claims 100, late pongs": (
            two(Seat(**net, reaction=fixed(320), claim=claims(100), pong_delay_ms=LATE,
                     label="cheat"), honest300), 0.02, {}),
        "20 ms slower, claims 100, pongs at once": (
            two(Seat(**net, reaction=fixed(320), claim=claims(100), label="cheat"), honest300),
            0.02, {}),
        # F3 is the same cheat answering pings at once (and so keeping its jitter margin).
        "equal skill, claims 100, late pongs": (
            two(Seat(**net, claim=claims(100), pong_delay_ms=LATE, label="cheat"),
                Seat(**net, label="honest")), 0.60, {}),
    }  # fmt: skip


def rotations(seats: list[Seat], n: int) -> list[list[Seat]]:
    """``n`` tables, the seats rotated so no RTT sits always at the same place."""
    k = len(seats)
    return [[seats[(i + j) % k] for j in range(k)] for i in range(n)]


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def f1(runs: list[TableRun]) -> dict[str, tuple[float, float, int]]:
    shares = win_shares(runs)
    print("\nF1  equal skill, RTTs 15/60/120/180 ms: share of races won")
    print(f"    {'RTT':>8} {'arbitrated':>11} {'first packet':>13}")
    for label, (won, fpw, _n) in sorted(shares.items(), key=lambda kv: float(kv[0][:-2])):
        print(f"    {label:>8} {pct(won):>11} {pct(fpw):>13}")
    n = next(iter(shares.values()))[2] if shares else 0
    worst = max((abs(w - 0.25) for w, _, _ in shares.values()), default=0)
    print(f"    races: {n}; largest gap from 25%: {100 * worst:.1f} points (target <= 2)")
    return shares


def f2(runs: list[TableRun]) -> list[tuple[str, int, int]]:
    print("\nF2  RTTs 20/80/140/200 ms with jitter: faster hand underneath, by reaction gap")
    rows = []
    for lo, hi, target in ((0, 10, None), (10, 20, 0.95), (20, 1e9, 0.99)):
        right, pairs = faster_underneath(runs, lo, hi)
        name = f"{lo}-{hi:g} ms" if hi < 1e9 else f">= {lo} ms"
        aim = f" (target >= {pct(target)})" if target else ""
        print(f"    gap {name:>10}: {pct(right / max(pairs, 1))} of {pairs} pairs{aim}")
        rows.append((name, right, pairs))
    return rows


def f3(liar: list[TableRun], too_fast: list[TableRun]) -> tuple[float, int, int]:
    shares = win_shares(liar)
    won, _, n = shares.get("cheat", (0.0, 0.0, 0))
    print("\nF3  a cheat claiming 100 ms vs an equal honest peer (RTT 60 ms, jitter 8 ms)")
    print(f"    cheat wins {pct(won)} of {n} races (target <= 60%)")
    claims = sum(1 for run in too_fast for r in run.races for c in r.claimed if c < 100)
    refused = sum(run.errors.get("too_fast", 0) for run in too_fast)
    print(f"    claims under 100 ms: {claims}, refused as too_fast: {refused}")
    return won, claims, refused


def trust(runs: dict[str, list[TableRun]]) -> dict[str, tuple[int, int, int]]:
    """Each cheater's races won, races, and slaps refused as too fast."""
    print("\nTrust  cheaters vs an honest peer, RTT 60 ms, jitter 8 ms: races the cheater won")
    out = {}
    for name, (_, most, _) in trust_layouts().items():
        rs = runs.get(name, [])
        decided = [r for run in rs for r in run.races if r.winner is not None]
        won = sum(1 for r in decided if r.labels[r.winner or 0] == "cheat")
        refused = sum(1 for run in rs for r in run.races for x in r.refused if x == "too_fast")
        share = won / max(len(decided), 1)
        ok = "ok" if share <= most else "FAIL"
        print(f"    {name:<46} {won:>4} of {len(decided):>4} ({pct(share):>6}; "
              f"at most {pct(most)}) {ok}; too_fast {refused}")  # fmt: skip
        out[name] = (won, len(decided), refused)
    return out


def f4(runs: list[TableRun]) -> tuple[float, float, float]:
    after_last = sorted(r.decision_after_last_ms for run in runs for r in run.races)
    after_best = sorted(r.decision_after_best_ms for run in runs for r in run.races)
    if not after_last:
        return 0.0, 0.0, 0.0
    q = statistics.quantiles(after_last, n=100)
    print("\nF4  decision time (all F1+F2 rounds)")
    print(
        f"    after the last hand arrived: p50 {q[49]:.1f} ms, p99 {q[98]:.1f} ms, "
        f"max {after_last[-1]:.1f} ms (target: every round within 250 ms)"
    )
    qb = statistics.quantiles(after_best, n=100)
    print(f"    after the best hand arrived: p50 {qb[49]:.0f} ms, p99 {qb[98]:.0f} ms")
    return q[49], q[98], after_last[-1]


def plot(path: Path, shares: dict[str, tuple[float, float, int]], rows: list, runs: list) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    labels = sorted(shares, key=lambda s: float(s[:-2]))
    xs = range(len(labels))
    axes[0].bar(
        [x - 0.2 for x in xs], [shares[s][0] * 100 for s in labels], 0.4, label="arbitrated"
    )
    axes[0].bar(
        [x + 0.2 for x in xs], [shares[s][1] * 100 for s in labels], 0.4, label="first packet"
    )
    axes[0].axhline(25, color="k", lw=0.8, ls="--")
    axes[0].set_xticks(list(xs), [f"RTT {s}" for s in labels])
    axes[0].set_ylabel("races won (%)")
    axes[0].set_title("F1: equal skill, different networks")
    axes[0].legend()
    axes[1].bar([r[0] for r in rows], [100 * r[1] / max(r[2], 1) for r in rows], color="tab:green")
    axes[1].set_ylim(50, 100)
    axes[1].set_ylabel("faster hand underneath (%)")
    axes[1].set_xlabel("gap between true reaction times")
    axes[1].set_title("F2: RTT 20-200 ms with jitter")
    delays = [r.decision_after_last_ms for run in runs for r in run.races]
    axes[2].hist(delays, bins=40, color="tab:purple")
    axes[2].set_xlabel("ms after the last hand arrived")
    axes[2].set_title("F4: when rounds are decided")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


async def experiments(
    http: str, port: int, tables: int, concurrency: int, only: set[str], seed: int
) -> dict:
    f1_seats = [Seat(r, 4, label=f"{r}ms") for r in (15, 60, 120, 180)]
    f2_seats = [Seat(r, r / 10, label=f"{r}ms") for r in (20, 80, 140, 200)]
    cheat = [Seat(60, 8, claim=lambda ms: 100, label="cheat"), Seat(60, 8, label="honest")]
    fast = [Seat(60, 8, claim=lambda ms: 60, label="too fast"), Seat(60, 8, label="honest")]
    small = max(2, tables // 4)
    kw = {"concurrency": concurrency, **OPTIONS}
    runs: dict[str, list[TableRun]] = {"f1": [], "f2": [], "f3": [], "fast": []}
    if "trust" in only:
        # One cheater at a time: a busy benchmark process delays its racers' slaps unevenly.
        for i, (name, (seats, _, more)) in enumerate(trust_layouts().items()):
            runs[f"trust:{name}"] = await play_tables(
                http, port, rotations(seats, tables), seed=seed + 10 + i, **kw, **more
            )
    if "f1" in only:
        runs["f1"] = await play_tables(http, port, rotations(f1_seats, tables), seed=seed, **kw)
    if "f2" in only:
        runs["f2"] = await play_tables(http, port, rotations(f2_seats, tables), seed=seed + 1, **kw)
    if "f3" in only:
        runs["f3"] = await play_tables(http, port, rotations(cheat, tables), seed=seed + 2, **kw)
        runs["fast"] = await play_tables(
            http, port, rotations(fast, small), seed=seed + 3, remove=80, **kw
        )
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=48, help="tables per experiment")
    parser.add_argument("--concurrency", type=int, default=12, help="tables at once")
    parser.add_argument("--plot", type=Path, default=None)
    parser.add_argument("--only", default="f1,f2,f3", help="experiments to run (F4 uses F1, F2)")
    parser.add_argument("--seed", type=int, default=1, help="seeds the racers and networks")
    parser.add_argument(
        "--server-src",
        type=Path,
        default=None,
        help="run the server from another checkout's src/ (an older rule, to compare); it is "
        "not told of trusted fronts",
    )
    args = parser.parse_args()
    only = set(args.only.split(","))
    started = time.monotonic()
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_server(
            Path(tmp) / "f.db",
            args=SERVER_ARGS if args.server_src is None else (),
            env=None if args.server_src is None else {"PYTHONPATH": str(args.server_src)},
            limit_loopback=args.server_src is not None,  # an older server has no --exempt
        ) as server,
    ):
        http, port, _pid = server
        runs = asyncio.run(experiments(http, port, args.tables, args.concurrency, only, args.seed))
    print(f"load average: {Path('/proc/loadavg').read_text().split()[:3]}")
    trust_runs = {k[6:]: v for k, v in runs.items() if k.startswith("trust:")}
    if trust_runs:
        trust(trust_runs)
    shares = f1(runs["f1"]) if runs["f1"] else {}
    rows = f2(runs["f2"]) if runs["f2"] else []
    if runs["f3"]:
        f3(runs["f3"], runs["fast"])
    f4(runs["f1"] + runs["f2"])
    if args.plot and shares and rows:
        plot(args.plot, shares, rows, runs["f1"] + runs["f2"])
        print(f"\nplot: {args.plot}")
    print(f"took {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
