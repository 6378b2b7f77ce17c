"""Two servers side by side in one window: each its own store and its own generator, the
rhythm of ``shared/LOAD-RHYTHM.md`` on both at once, so that whatever the shared machine does
meanwhile (a slower minute, a neighbour's load) it does to both.

``bench/rhythm.py`` runs its servers one after another, and on this machine two runs of the
same server a minute apart differ by several points of a core (and the first of a run is
often the slower): a difference of a few points between two versions needs many runs there.
Here each round runs both servers (``--server-src``, a ``src`` folder or a commit) at the
same time with ``--players`` each; the rounds alternate which one starts first. The figure is
the ratio of their CPU in the same window, round by round.

    flock -x -o /tmp/bench.lock uv run python bench/pair.py --server-src <A> --server-src <B>
    flock -x -o /tmp/bench.lock uv run python bench/pair.py --players 2000 --rounds 4 \\
        --duration 45 --server-src main --server-src src --out docs/bench/pair.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.generator import end_generators, generator_main
from harness.procs import ServerProcess, cpu_times
from harness.rhythm import RhythmPlan
from harness.server import free_port
from rhythm import (
    JOINS_IN_FLIGHT,
    ROOT,
    figures,
    has_limits,
    hot_path,
    source,
    stall_args,
    tree_cpu,
)


def one_round(srcs: list[Any], args: argparse.Namespace, workdir: Path, k: int,
              interpreter: dict[str, str]) -> list[dict[str, Any]]:  # fmt: skip
    """Both servers at once, each with its own generator; each one's figures."""
    ctx = mp.get_context("spawn")
    go, stop, reports = ctx.Event(), ctx.Event(), ctx.Queue()
    t0_value = ctx.Value("d", 0.0)
    servers, procs, readies = [], [], []
    try:
        for i, src in enumerate(srcs):
            env = {"PYTHONPATH": str(src.path)} if src.path != ROOT / "src" else None
            db = f"sqlite:///{workdir}/pair-{k}-{i}.db"
            server = ServerProcess(
                db,
                free_port(),
                workdir / f"pair-{k}-{i}.log",
                env=env,
                args=stall_args(src.path),
                exempt=has_limits(src.path),
                python=interpreter[src.label],
            )
            server.start()
            servers.append(server)
        hot = [hot_path(server) for server in servers]
        for i, server in enumerate(servers):
            plan = RhythmPlan(server.http, args.players // 4, duration_s=args.duration,
                              joins_in_flight=JOINS_IN_FLIGHT // 2, seed=args.seed + 10 * k + i,
                              name=f"g{i}", setup_timeout_s=args.setup_timeout)  # fmt: skip
            ready = ctx.Event()
            readies.append(ready)
            procs.append(ctx.Process(target=generator_main, daemon=True, name=plan.name,
                                     args=(plan, ready, go, t0_value, stop, reports)))  # fmt: skip
        for proc in procs:
            proc.start()
        began = time.monotonic()
        while not all(r.is_set() for r in readies):
            if time.monotonic() - began > args.setup_timeout + 30:
                raise TimeoutError(f"set-up took over {args.setup_timeout} s")
            time.sleep(0.1)
        t0 = time.monotonic()
        t0_value.value = t0
        go.set()
        cpu0 = [tree_cpu(s) for s in servers] + [cpu_times(p.pid or 0) for p in procs]
        time.sleep(args.duration)
        cpu1 = [tree_cpu(s) for s in servers] + [cpu_times(p.pid or 0) for p in procs]
        window = time.monotonic() - t0
        got = {r["name"]: r for r in (reports.get(timeout=args.duration + 60) for _ in procs)}
        out = []
        for i, src in enumerate(srcs):
            report = got[f"g{i}"]
            if "error" in report:
                raise RuntimeError(f"{src.label}: {report['error']}")
            n = len(servers)
            cpu = {"server": (sum(cpu1[i]) - sum(cpu0[i])) / window,
                   f"g{i}": (sum(cpu1[n + i]) - sum(cpu0[n + i])) / window}  # fmt: skip
            fig = figures([report], cpu)
            fig |= {"server": src.label, "commit": src.commit, "round": k, "players": args.players,
                    "hot_path": hot[i]}  # fmt: skip
            out.append(fig)
        return out
    finally:
        end_generators(stop, procs)
        for server in servers:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server-src", action="append", required=True,
                        help="a src folder or a commit; give two")  # fmt: skip
    parser.add_argument("--python", action="append",
                        help="the interpreter of each server, in the order of --server-src "
                             "(a virtual environment's, with flyswat installed); default: "
                             "this one's")  # fmt: skip
    parser.add_argument("--players", type=int, default=2000, help="players on each server")
    parser.add_argument("--duration", type=float, default=45.0, help="seconds measured")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--setup-timeout", type=float, default=120.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if len(args.server_src) != 2:
        raise SystemExit("give --server-src twice: the two servers compared")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        pythons = args.python or [sys.executable] * 2
        if len(pythons) != 2:
            raise SystemExit("give --python twice, or not at all")
        a, b = (source(s, workdir) for s in args.server_src)
        if args.python:  # the same code on two interpreters, say: told apart by them
            a, b = (replace(s, label=f"{s.label} on {py}")
                    for s, py in zip((a, b), pythons, strict=True))  # fmt: skip
        if a.label == b.label:  # the same twice: a check of the bench's own spread
            b = replace(b, label=f"{b.label} (B)")
        interpreter = {a.label: pythons[0], b.label: pythons[1]}
        rows: list[dict[str, Any]] = []
        ratios: list[float] = []
        print(f"{'round':>5} {'server':<28} {'CPU':>6} {'µs/msg':>7} {'p99 ms':>7} "
              f"{'in/out per player':>18}   B/A CPU")  # fmt: skip
        for k in range(args.rounds):
            order = [a, b] if k % 2 == 0 else [b, a]  # who starts first alternates
            figs = {f["server"]: f for f in one_round(order, args, workdir, k, interpreter)}
            rows += figs.values()
            fa, fb = figs[a.label], figs[b.label]
            ratio = fb["server_cpu"] / fa["server_cpu"]
            ratios.append(ratio)
            for f in (fa, fb):
                print(f"{k:>5} {f['server'][-28:]:<28} {f['server_cpu']:>6.1%} "
                      f"{f['server_us_per_msg']:>7.1f} {f['last_action_ms']['p99']:>7.1f} "
                      f"{f['msgs_in_per_player']:>8.2f}/{f['msgs_out_per_player']:.2f}"
                      f"{'' if f is fa else f'   {ratio:.3f}'}", flush=True)  # fmt: skip
        print(
            f"B/A CPU by round: {', '.join(f'{r:.3f}' for r in ratios)}; "
            f"median {statistics.median(ratios):.3f}"
        )
        if args.out:
            args.out.write_text(json.dumps({"rounds": rows, "ratios": ratios}, indent=1) + "\n")


if __name__ == "__main__":
    main()
