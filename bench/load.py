"""Load: how many players one ``flyswat serve`` process holds, and how fast it answers them.

For each size in ``--tables``, a fresh server process (``flyswat serve`` on 127.0.0.1, its own
SQLite file) and, in other processes, load players on real WebSockets
(:mod:`harness.load`): ``--workers`` bulk worker processes share the tables, and one
*probe* worker plays ``--probe`` more tables with nothing else to do, so that its latency
figures are the server's and loopback's, not a busy client's. Every human seat is a load
player; ``--bots B`` makes the last B seats of each table server bots.

Timeline of a step: tables opened and every player connected and ready (the server's RSS is
read: *lobby*), every game started at once, ``--warmup`` seconds, then ``--duration`` seconds
measured: messages per second both ways (counted by the clients), the server's and each
worker's CPU (``/proc``), the server's RSS (*play*), and per round the time from the last
``done`` to the ``round`` message (``round``), per reveal the time from ``reveal`` sent to
its broadcast received (``reveal``). Games are not finished: a step measures a steady state.

    uv run python bench/load.py --tables 125 250 500          # the figures, one line a size
    uv run python bench/load.py --tables 500 --profile        # and py-spy on the server

``--profile`` needs ``py-spy`` (``uv tool install py-spy``); it samples the server during the
measured window without pausing it and prints the functions with the most samples. The
server's full garbage collections in the window are always listed with their pauses (a
``gc.callbacks`` hook in a ``python -c`` prelude; the server's code is untouched);
``--gc no-full`` runs the same server with them put off, ``--gc off`` with no collector at
all, to see what they cost.

The CPU figures are shares of one core from ``/proc``; "waiting for a CPU" is the run-queue
time (``/proc/PID/schedstat``): when it is high, other jobs on the machine set the latency.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from harness.load import (
    Plan,
    percentile,
    raise_fd_limit,
    worker_main,
)
from harness.procs import (
    GC_MODES,
    ServerProcess,
    cpu_seconds,
    cpu_wait_seconds,
    gc_pauses,
    rss_bytes,
)
from harness.profile import profile, summarize_profile
from harness.server import free_port


def split(total: int, parts: int) -> list[int]:
    """``total`` tables over ``parts`` workers, as evenly as can be."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def quiet_samples(
    seconds: list[tuple[float, float]], outs: list[dict[str, Any]], limit: float
) -> dict[str, list[float]]:
    """The latency samples taken in the seconds when the server waited for a CPU less than
    ``limit`` of the time: what the server does when the machine's other jobs let it run."""
    quiet = [(t - 1, t) for t, wait in seconds if wait < limit]

    def inside(at: float) -> bool:
        return any(a <= at < b for a, b in quiet)

    found: dict[str, list[float]] = {"round": [], "reveal": []}
    for kind, samples in found.items():
        for o in outs:
            pairs = zip(o[f"{kind}_ms"], o[f"{kind}_at"], strict=True)
            samples += [ms for ms, at in pairs if inside(at)]
    return found


def step(tables: int, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """One size: a fresh server, the workers, the measurement; returns the figures."""
    db = workdir / f"load-{tables}.db"
    gc_log = workdir / f"gc-{tables}.log"
    gc_log.unlink(missing_ok=True)
    server = ServerProcess(f"sqlite:///{db}", free_port(), workdir / f"server-{tables}.log",
                           gc_log=gc_log, gc_mode=args.gc)  # fmt: skip
    server.start()
    rss0 = rss_bytes(server.pid)
    ctx = mp.get_context("spawn")
    go, results = ctx.Event(), ctx.Queue()
    options = {"turn_timeout_ms": args.turn_timeout_ms}
    plans = [Plan(server.http, args.probe, bots=args.bots, options=options, seed=0,
                  warmup_s=args.warmup, duration_s=args.duration, name="probe")]  # fmt: skip
    plans += [
        Plan(server.http, n, bots=args.bots, options=options, seed=i + 1,
             warmup_s=args.warmup, duration_s=args.duration, name=f"bulk{i}", nice=args.nice)
        for i, n in enumerate(split(tables - args.probe, args.workers))
    ]  # fmt: skip
    timeout = args.setup_timeout + args.warmup + args.duration + 60
    readies = [ctx.Event() for _ in plans]
    procs = [
        ctx.Process(target=worker_main, args=(plan, timeout, ready, go, results), daemon=True)
        for plan, ready in zip(plans, readies, strict=True)
    ]
    for proc in procs:
        proc.start()
    t0 = time.monotonic()
    try:
        while not all(r.is_set() for r in readies):
            if time.monotonic() - t0 > args.setup_timeout:
                raise TimeoutError(f"setup took over {args.setup_timeout} s")
            time.sleep(0.2)
        setup_s = time.monotonic() - t0
        time.sleep(1)
        rss_lobby = rss_bytes(server.pid)
        go.set()
        time.sleep(args.warmup)
        pids = {"server": server.pid} | {p.name: pr.pid for p, pr in zip(plans, procs, strict=True)}
        cpu0 = {k: cpu_seconds(pid) for k, pid in pids.items()}
        wait0 = {k: cpu_wait_seconds(pid) for k, pid in pids.items()}
        load0 = os.getloadavg()[0]
        w0 = time.monotonic()
        spy = profile(server.pid, args.duration, workdir / f"prof-{tables}.txt") if args.profile \
            else None  # fmt: skip
        rss_samples = []
        seconds: list[tuple[float, float]] = []  # (wall time, server's CPU wait share)
        last = (time.time(), cpu_wait_seconds(server.pid))
        wall0 = last[0]
        while time.monotonic() - w0 < args.duration:
            time.sleep(1)
            rss_samples.append(rss_bytes(server.pid))
            now = (time.time(), cpu_wait_seconds(server.pid))
            seconds.append((now[0], (now[1] - last[1]) / (now[0] - last[0])))
            last = now
        wall1 = time.time()
        cpu1 = {k: cpu_seconds(pid) for k, pid in pids.items()}
        wait1 = {k: cpu_wait_seconds(pid) for k, pid in pids.items()}
        load1 = os.getloadavg()[0]
        window = time.monotonic() - w0
        outs = [results.get(timeout=120) for _ in plans]
    finally:
        for proc in procs:
            proc.join(30)
            if proc.is_alive():
                proc.kill()
        server.stop()
    errors = [o["error"] for o in outs if "error" in o]
    if errors:
        raise RuntimeError("; ".join(errors))
    players = tables * (4 - args.bots)
    probe = next(o for o in outs if o["name"] == "probe")
    bulk = [o for o in outs if o["name"] != "probe"]
    every = outs
    bulk_round = [ms for o in bulk for ms in o["round_ms"]]
    bulk_reveal = [ms for o in bulk for ms in o["reveal_ms"]]
    quiet = quiet_samples(seconds, outs, args.quiet)
    rss_play = max(rss_samples)
    fig: dict[str, Any] = {
        "tables": tables,
        "players": players,
        "bots": tables * args.bots,
        "setup_s": round(setup_s, 1),
        "rss_start_mb": rss0 / 2**20,
        "rss_lobby_mb": rss_lobby / 2**20,
        "rss_play_mb": rss_play / 2**20,
        "kb_per_player_lobby": (rss_lobby - rss0) / 1024 / players,
        "kb_per_player_play": (rss_play - rss0) / 1024 / players,
        "cpu": {k: (cpu1[k] - cpu0[k]) / window for k in pids},
        "cpu_wait": {k: (wait1[k] - wait0[k]) / window for k in pids},
        "quiet": args.quiet,
        "gc": args.gc,
        "gc_pauses_ms": [ms for t, ms in gc_pauses(gc_log) if wall0 <= t <= wall1],
        "gc1_pauses_ms": [ms for t, ms in gc_pauses(gc_log, 1) if wall0 <= t <= wall1],
        "loadavg": (load0, load1),
        "msgs_out_per_s": sum(o["received_per_s"] for o in every),
        "msgs_in_per_s": sum(o["sent_per_s"] for o in every),
        "probe_round_ms": [percentile(probe["round_ms"], q) for q in (50, 99, 100)],
        "probe_reveal_ms": [percentile(probe["reveal_ms"], q) for q in (50, 99, 100)],
        "probe_rounds": len(probe["round_ms"]),
        "bulk_round_ms": [percentile(bulk_round, q) for q in (50, 99, 100)],
        "bulk_reveal_ms": [percentile(bulk_reveal, q) for q in (50, 99, 100)],
        "bulk_rounds": sum(len(o["round_ms"]) for o in bulk),
        "lag_p99_ms": {o["name"]: percentile(o["lag_ms"], 99) for o in every},
        "quiet_seconds": sum(1 for _, w in seconds if w < args.quiet),
        "window_seconds": len(seconds),
        "quiet_round_ms": [percentile(quiet["round"], q) for q in (50, 99, 100)],
        "quiet_reveal_ms": [percentile(quiet["reveal"], q) for q in (50, 99, 100)],
        "quiet_rounds": len(quiet["round"]),
        "errors": sum((Counter(o["errors"]) for o in every), Counter()),
        "reconnects": sum(o["reconnects"] + o["failed_connects"] for o in every),
    }
    if spy is not None:
        spy.wait(args.duration + 30)
        fig["profile"] = summarize_profile(workdir / f"prof-{tables}.txt", args.duration)
    return fig


def show(fig: dict[str, Any]) -> None:
    """Print one step's figures."""
    cpu = ", ".join(f"{k} {v:.0%}" for k, v in fig["cpu"].items())
    wait = ", ".join(f"{k} {v:.0%}" for k, v in fig["cpu_wait"].items())
    pr, pv = fig["probe_round_ms"], fig["probe_reveal_ms"]
    br, bv = fig["bulk_round_ms"], fig["bulk_reveal_ms"]
    qr, qv = fig["quiet_round_ms"], fig["quiet_reveal_ms"]
    gcs, gc1 = fig["gc_pauses_ms"], fig["gc1_pauses_ms"]
    print(
        f"{fig['tables']} tables, {fig['players']} players, {fig['bots']} bots "
        f"(set up in {fig['setup_s']} s)\n"
        f"  messages/s: {fig['msgs_out_per_s']:.0f} out, {fig['msgs_in_per_s']:.0f} in\n"
        f"  round  ms p50/p99/max: probe {pr[0]:.1f}/{pr[1]:.1f}/{pr[2]:.1f} "
        f"({fig['probe_rounds']} rounds), bulk {br[0]:.1f}/{br[1]:.1f}/{br[2]:.1f} "
        f"({fig['bulk_rounds']})\n"
        f"  reveal ms p50/p99/max: probe {pv[0]:.1f}/{pv[1]:.1f}/{pv[2]:.1f}, "
        f"bulk {bv[0]:.1f}/{bv[1]:.1f}/{bv[2]:.1f}\n"
        f"  in the {fig['quiet_seconds']} of {fig['window_seconds']} seconds when the server "
        f"waited for a CPU < {fig['quiet']:.0%} of the time (all workers):\n"
        f"    round  ms p50/p99/max {qr[0]:.1f}/{qr[1]:.1f}/{qr[2]:.1f} "
        f"({fig['quiet_rounds']} rounds); reveal ms p50/p99/max {qv[0]:.1f}/{qv[1]:.1f}/"
        f"{qv[2]:.1f}\n"
        f"  server's full garbage collections in the window: {len(gcs)}, pauses ms "
        f"{', '.join(f'{ms:.0f}' for ms in gcs) or '-'}"
        f"{'' if fig['gc'] == 'on' else ' (collector: --gc ' + fig['gc'] + ')'}; "
        f"generation-1 collections: {len(gc1)}, pauses ms p50/max "
        f"{percentile(gc1, 50):.1f}/{max(gc1, default=float('nan')):.1f}\n"
        f"  client loop lag p99 ms: "
        + ", ".join(f"{k} {v:.1f}" for k, v in fig["lag_p99_ms"].items())
        + f"\n  server RSS MB: start {fig['rss_start_mb']:.0f}, lobby {fig['rss_lobby_mb']:.0f}, "
        f"play {fig['rss_play_mb']:.0f}; per player {fig['kb_per_player_lobby']:.0f} KB "
        f"(lobby), {fig['kb_per_player_play']:.0f} KB (play)\n"
        f"  CPU (share of one core): {cpu}\n"
        f"  waiting for a CPU (share of the window): {wait}; load average "
        f"{fig['loadavg'][0]:.1f} -> {fig['loadavg'][1]:.1f}\n"
        f"  errors: {dict(fig['errors']) or 'none'}; reconnects {fig['reconnects']}",
        flush=True,
    )
    for line in fig.get("profile", []):
        print("  " + line)


def plot(figures: list[dict[str, Any]], path: Path) -> None:
    """Latency (p50, p99 of all workers' rounds) and the server's CPU against players."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.2), dpi=110)
    players = [f["players"] for f in figures]
    for key, label, style in (("probe_round_ms", "probe", "o-"), ("bulk_round_ms", "bulk", "s--")):
        for i, q in ((0, "p50"), (1, "p99")):
            ax.plot(players, [f[key][i] for f in figures], style, ms=4,
                    label=f"{label} round {q}")  # fmt: skip
    ax.axhline(20, color="grey", lw=0.8, ls=":", label="20 ms")
    ax.set_yscale("log")
    ax.set_xlabel("connected players (4 per table)")
    ax.set_ylabel("last done -> round received (ms)")
    ax2 = ax.twinx()
    ax2.plot(players, [100 * f["cpu"]["server"] for f in figures], "k^-", ms=4, lw=0.8,
             label="server CPU (% of a core)")  # fmt: skip
    ax2.set_ylabel("server CPU (% of one core)")
    ax2.set_ylim(0, 110)
    handles = ax.get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
    ax.legend(handles, [str(h.get_label()) for h in handles], fontsize=7, loc="upper left")
    ax.set_title("one flyswat serve process, load players on loopback", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)


def main() -> None:
    """Run every size in ``--tables`` and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, nargs="+", default=[125, 250, 500],
                        help="tables per step, 4 seats each (default 125 250 500)")  # fmt: skip
    parser.add_argument("--bots", type=int, default=0, help="server bots per table (0-3)")
    parser.add_argument("--workers", type=int, default=1, help="bulk worker processes")
    parser.add_argument("--probe", type=int, default=5, help="tables of the probe worker")
    parser.add_argument("--warmup", type=float, default=15.0, help="seconds before measuring")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds measured")
    parser.add_argument("--setup-timeout", type=float, default=300.0)
    parser.add_argument("--turn-timeout-ms", type=int, default=4000)
    parser.add_argument("--profile", action="store_true", help="py-spy the server")
    parser.add_argument("--quiet", type=float, default=0.1,
                        help="a second is quiet when the server waited for a CPU less than "
                        "this share of it (default 0.1)")  # fmt: skip
    parser.add_argument("--gc", choices=GC_MODES, default="on",
                        help="the server's garbage collector: on, no-full (generation 2 "
                        "put off) or off (an experiment)")  # fmt: skip
    parser.add_argument("--nice", type=int, default=0, help="niceness of the bulk workers")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--keep", type=Path, help="keep the databases, logs and profiles here")
    parser.add_argument("--plot", type=Path, help="plot latency and CPU against players (PNG)")
    parser.add_argument("--replot", type=Path, help="only plot the figures of this --json file")
    args = parser.parse_args()
    if args.replot:
        plot(json.loads(args.replot.read_text()), args.plot or Path("load.png"))
        return
    print(f"open files allowed: {raise_fd_limit()}")
    figures = []
    with tempfile.TemporaryDirectory(prefix="flyswat-load-") as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for tables in args.tables:
            fig = step(tables, args, workdir)
            show(fig)
            figures.append(fig)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1, default=str))
    if args.plot:
        plot(figures, args.plot)


if __name__ == "__main__":
    main()
