"""Soak: one ``flyswat serve`` for many minutes, players dropping and coming back, a ``kill -9``.

Two worker processes keep ``--tables`` tables in play between them (all-human tables, and
tables with two server bots), opening a new table whenever a game ends. Every player drops
its connection at random (``--drops`` times a minute on average: half a clean close, half a
cut with no close handshake) and reconnects with its token 0.3-2 s later. At ``--kill-at``
of the run the server is killed with SIGKILL and started again on the same SQLite file and
port; the players reconnect by themselves. After ``--minutes`` no new table is opened and the
games in play finish (at most ``--drain`` seconds).

Then it checks: every game started has ended (none lost), every record — fetched over HTTP
by the players' worker, and every record in the store — passes
:func:`flyswat.record.verify_record`, and no table is left ``playing`` in the store. The
server's RSS is sampled every second and plotted (``--plot``), with the number of tables it
holds (``/health``).

    uv run python bench/soak.py --minutes 10 --plot docs/bench/soak-rss.png
    uv run python bench/soak.py --minutes 2 --tables 20 --quick      # a quick trial
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sqlite3
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from flyswat.record import verify_record
from harness.load import (
    QUICK,
    Pace,
    Plan,
    raise_fd_limit,
    worker_main,
)
from harness.procs import (
    ServerProcess,
    cpu_seconds,
    rss_bytes,
)
from harness.server import free_port, metric

SHORT = {"remove": 60, "slap_window_ms": 1500, "turn_timeout_ms": 2000}


class Sampler(threading.Thread):
    """Reads the server's RSS every second, and every five its table count and its live
    heap as the server counts it (``flyswat_heap_blocks`` in ``/metrics``)."""

    def __init__(self, server: ServerProcess) -> None:
        super().__init__(daemon=True)
        self.server = server
        self.t0 = time.monotonic()
        self.rss: list[tuple[float, float]] = []
        self.tables: list[tuple[float, int]] = []
        self.heap: list[tuple[float, float]] = []  # thousands of blocks
        self.stop = threading.Event()

    def run(self) -> None:
        n = 0
        while not self.stop.wait(1.0):
            t = time.monotonic() - self.t0
            try:
                self.rss.append((t, rss_bytes(self.server.pid) / 2**20))
            except (OSError, RuntimeError):
                continue  # between the kill and the restart
            n += 1
            if n % 5 == 0:
                try:
                    health = httpx.get(self.server.http + "/health", timeout=5).json()
                    self.tables.append((t, int(health["tables"])))
                    text = httpx.get(self.server.http + "/metrics", timeout=5).text
                    self.heap.append((t, heap_blocks(text) / 1000))
                except (httpx.HTTPError, ValueError, KeyError):
                    pass


def heap_blocks(metrics: str) -> float:
    """``flyswat_heap_blocks`` from a ``/metrics`` text; raises ValueError without it."""
    blocks = metric(metrics, "flyswat_heap_blocks")
    if blocks is None:
        raise ValueError("no flyswat_heap_blocks in /metrics")
    return blocks


def store_check(db: Path) -> dict[str, Any]:
    """Every table's state and every record in the store, each record verified."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        states = dict(con.execute("SELECT code, state FROM flyswat_tables").fetchall())
        records = con.execute("SELECT code, record FROM flyswat_records").fetchall()
    finally:
        con.close()
    bad = [code for code, text in records if verify_record(json.loads(text))]
    return {"states": states, "record_codes": {c for c, _ in records}, "bad_records": bad}


def slope_per_min(samples: list[tuple[float, float]]) -> float:
    """Least-squares slope of ``(s, value)`` samples (RSS in MB, the heap in thousands of
    blocks), per minute."""
    n = len(samples)
    if n < 2:
        return float("nan")
    mx = sum(t for t, _ in samples) / n
    my = sum(r for _, r in samples) / n
    sxx = sum((t - mx) ** 2 for t, _ in samples)
    sxy = sum((t - mx) * (r - my) for t, r in samples)
    return sxy / sxx * 60 if sxx else float("nan")


def net_of_tables(
    heap: list[tuple[float, float]], tables: list[tuple[float, int]]
) -> tuple[float, float]:
    """The heap's growth per minute with the tables held taken out, and its size per table:
    ``heap = a + b·tables + c·t`` fitted by least squares to samples taken together; returns
    ``(c per minute, b)``. The heap follows the tables the server holds, which swing by
    hundreds as games end together: its plain slope says more about where the swing was
    when the window closed than about a leak."""
    import numpy as np

    held = dict(tables)
    pairs = [(t, h, held[t]) for t, h in heap if t in held]
    if len(pairs) < 4:
        return float("nan"), float("nan")
    t, h, n = (np.array(col, dtype=float) for col in zip(*pairs, strict=True))
    fit = np.linalg.lstsq(np.column_stack([np.ones_like(t), n, t]), h, rcond=None)[0]
    return float(fit[2] * 60), float(fit[1])


def by_minute(samples: list[tuple[float, float]], t0: float) -> list[tuple[int, float]]:
    """The mean RSS of each whole minute after ``t0``: ``(minute, MB)``, minutes with no
    sample (the server down) left out."""
    minutes: dict[int, list[float]] = {}
    for t, r in samples:
        if t >= t0:
            minutes.setdefault(int((t - t0) // 60), []).append(r)
    return [(m, sum(rs) / len(rs)) for m, rs in sorted(minutes.items())]


def plot(sampler: Sampler, kill_t: float, restart_t: float, end_t: float, path: Path,
         title: str) -> None:  # fmt: skip
    """RSS over time, the kill and the restart marked, and the tables the server holds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, low) = plt.subplots(2, 1, figsize=(9, 6.4), dpi=110, sharex=True,
                                  height_ratios=(3, 2))  # fmt: skip
    for part in ([s for s in sampler.rss if s[0] < kill_t],
                 [s for s in sampler.rss if s[0] >= restart_t]):  # fmt: skip
        ax.plot([t / 60 for t, _ in part], [r for _, r in part], lw=1.2, color="tab:blue",
                label="server RSS (MB)" if part and part[0][0] < kill_t else None)  # fmt: skip
    ax.axvline(kill_t / 60, color="tab:red", ls="--", lw=1, label="kill -9")
    ax.axvline(restart_t / 60, color="tab:green", ls=":", lw=1, label="restarted")
    ax.axvline(end_t / 60, color="grey", ls="-.", lw=1, label="no new tables; drain")
    low.set_xlabel("minutes")
    ax.set_ylabel("RSS (MB)")
    for part in ([s for s in sampler.heap if s[0] < kill_t],
                 [s for s in sampler.heap if s[0] >= restart_t]):  # fmt: skip
        low.plot([t / 60 for t, _ in part], [h / 1000 for _, h in part], lw=1.2,
                 color="tab:purple")  # fmt: skip
    for at in (kill_t, restart_t, end_t):
        low.axvline(at / 60, color="grey", ls=":", lw=1)
    low.set_ylabel("live heap (M blocks)")
    low.set_ylim(bottom=0)
    ax.set_ylim(bottom=0)
    ax2 = ax.twinx()
    ax2.plot([t / 60 for t, _ in sampler.tables], [n for _, n in sampler.tables],
             color="tab:orange", lw=1, label="tables held (/health)")  # fmt: skip
    ax2.set_ylabel("tables held by the server")
    ax2.set_ylim(bottom=0)
    lines = ax.get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
    ax.legend(lines, [str(h.get_label()) for h in lines], loc="lower right", fontsize=8)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)


def main() -> None:
    """Run the soak and print what it found."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--tables", type=int, default=120, help="tables kept in play")
    parser.add_argument("--mixed", type=float, default=0.4, help="share with 2 server bots")
    parser.add_argument("--drops", type=float, default=0.3, help="drops per player per minute")
    parser.add_argument("--kill-at", type=float, default=0.5, help="kill -9 at this share")
    parser.add_argument("--down", type=float, default=3.0, help="seconds the server is down")
    parser.add_argument("--drain", type=float, default=300.0, help="seconds to finish games")
    parser.add_argument("--quick", action="store_true", help="quick players, short games")
    parser.add_argument("--plot", type=Path, help="write the RSS plot here (PNG)")
    parser.add_argument("--json", type=Path, help="write the series and figures here")
    parser.add_argument("--keep", type=Path, help="keep the database, records and log here")
    parser.add_argument(
        "--warmup",
        type=float,
        default=2.0,
        help="minutes after the start and after the restart left out of the RSS slopes "
        "(tables filling, the heap growing to its working size)",
    )
    args = parser.parse_args()
    raise_fd_limit()
    with tempfile.TemporaryDirectory(prefix="flyswat-soak-") as tmp:
        work = args.keep or Path(tmp)
        records = work / "records"
        records.mkdir(parents=True, exist_ok=True)
        db = work / "soak.db"
        server = ServerProcess(f"sqlite:///{db}", free_port(), work / "server.log")
        server.start()
        sampler = Sampler(server)
        sampler.start()
        pace = QUICK if args.quick else Pace()
        options = SHORT if args.quick else {}
        mixed = round(args.tables * args.mixed)
        run_s = args.minutes * 60
        common: dict[str, Any] = {
            "pace": pace, "options": options, "drop_per_min": args.drops, "replace": True,
            "warmup_s": 0.0, "duration_s": run_s, "drain_s": args.drain,
            "records": str(records),
        }  # fmt: skip
        plans = [
            Plan(server.http, args.tables - mixed, seed=1, name="human", **common),
            Plan(server.http, mixed, bots=2, seed=2, name="mixed", **common),
        ]
        ctx = mp.get_context("spawn")
        go, results = ctx.Event(), ctx.Queue()
        readies = [ctx.Event() for _ in plans]
        timeout = run_s + args.drain + 300
        procs = [ctx.Process(target=worker_main, args=(p, timeout, r, go, results), daemon=True)
                 for p, r in zip(plans, readies, strict=True)]  # fmt: skip
        for proc in procs:
            proc.start()
        while not all(r.wait(1) for r in readies):
            pass
        t_go = time.monotonic() - sampler.t0
        go.set()
        time.sleep(args.kill_at * run_s)
        cpu_before_kill = cpu_seconds(server.pid)
        kill_t = time.monotonic() - sampler.t0
        server.kill()
        time.sleep(args.down)
        restart_s = server.start()
        restart_t = time.monotonic() - sampler.t0
        print(f"killed at {kill_t / 60:.1f} min (server CPU {cpu_before_kill:.0f} s so far); "
              f"back in {restart_s:.1f} s", flush=True)  # fmt: skip
        outs = [results.get(timeout=timeout) for _ in plans]
        end_t = t_go + run_s
        sampler.stop.set()
        sampler.join()
        for proc in procs:
            proc.join(30)
        server.stop()
        errors = [o["error"] for o in outs if "error" in o]
        if errors:
            raise SystemExit("; ".join(errors))
        check = store_check(db)
        started = {c for o in outs for c in o["started_codes"]}
        fetched = {p.stem for p in records.glob("*.json")}
        bad_fetched = [p.stem for p in records.glob("*.json")
                       if verify_record(json.loads(p.read_text()))]  # fmt: skip
        playing = [c for c, s in check["states"].items() if s == "playing"]
        lost = sorted(started - fetched)
        total = {k: sum(o[k] for o in outs) for k in
                 ("games_started", "games_over", "records", "drops", "reconnects",
                  "failed_connects", "tables_opened", "received", "sent")}  # fmt: skip
        warm = args.warmup * 60
        before = [(t, r) for t, r in sampler.rss if t_go + warm < t < kill_t]
        after = [(t, r) for t, r in sampler.rss if restart_t + warm < t < end_t]
        minutes = by_minute(sampler.rss, t_go)
        heap_before = [(t, h) for t, h in sampler.heap if t_go + warm < t < kill_t]
        heap_after = [(t, h) for t, h in sampler.heap if restart_t + warm < t < end_t]
        net_before = net_of_tables(heap_before, sampler.tables)
        net_after = net_of_tables(heap_after, sampler.tables)
        errors_seen: dict[str, int] = {}
        for o in outs:
            for k, v in o["errors"].items():
                errors_seen[k] = errors_seen.get(k, 0) + v
        print(
            f"soak: {args.minutes:g} min of play + drain, {args.tables} tables kept in play "
            f"({mixed} with 2 server bots), {args.drops:g} drops/player/min\n"
            f"  games started {len(started)}, ended {total['games_over']}, records fetched "
            f"{len(fetched)} ({len(bad_fetched)} invalid); lost {len(lost)} {lost[:5]}\n"
            f"  store: {len(check['states'])} tables, {len(check['record_codes'])} records "
            f"({len(check['bad_records'])} invalid), still playing {len(playing)}\n"
            f"  drops {total['drops']}, reconnections {total['reconnects']} "
            f"(failed attempts {total['failed_connects']}); messages {total['received']} out, "
            f"{total['sent']} in\n"
            f"  server RSS MB: first {sampler.rss[0][1]:.0f}, before the kill "
            f"{before[-1][1] if before else float('nan'):.0f}, max "
            f"{max(r for _, r in sampler.rss):.0f}, end {sampler.rss[-1][1]:.0f}; slope "
            f"{slope_per_min(before):+.2f} MB/min before the kill, "
            f"{slope_per_min(after):+.2f} MB/min after the restart (each after "
            f"{args.warmup:g} min of warm-up)\n"
            f"  live heap (thousands of blocks, the server's count): after warm-up "
            f"{heap_before[0][1] if heap_before else float('nan'):.0f} -> "
            f"{heap_before[-1][1] if heap_before else float('nan'):.0f} before the kill, "
            f"slope {slope_per_min(heap_before):+.1f}k/min; after the restart "
            f"{heap_after[0][1] if heap_after else float('nan'):.0f} -> "
            f"{heap_after[-1][1] if heap_after else float('nan'):.0f}, slope "
            f"{slope_per_min(heap_after):+.1f}k/min; net of the tables held (heap = a + "
            f"b·tables + c·t): c {net_before[0]:+.1f}k/min before the kill, "
            f"{net_after[0]:+.1f}k/min after the restart (b {net_before[1]:.2f}k and "
            f"{net_after[1]:.2f}k blocks a table)\n"
            f"  server RSS MB by minute of play: "
            + " ".join(f"{m}:{r:.0f}" for m, r in minutes)
            + f"\n  kill -9 at {(kill_t - t_go) / 60:.1f} min of play; back on /health "
            f"{restart_s:.1f} s after starting again\n"
            f"  counted by the players: {errors_seen or 'nothing'}",
            flush=True,
        )
        if args.plot:
            title = (f"soak: {args.tables} tables, {len(started)} games, kill -9 at "
                     f"{kill_t / 60:.1f} min")  # fmt: skip
            plot(sampler, kill_t, restart_t, end_t, args.plot, title)
            print(f"  plot: {args.plot}")
        if args.json:
            args.json.write_text(json.dumps({
                "minutes": args.minutes, "tables": args.tables, "games_started": len(started),
                "lost": lost, "bad_records": check["bad_records"], "playing": playing,
                "kill_t": kill_t, "restart_t": restart_t, "end_t": end_t, "t_go": t_go,
                "rss_mb": sampler.rss, "tables_held": sampler.tables,
                "heap_k_blocks": sampler.heap,
                "heap_net_k_per_min": [net_before[0], net_after[0]],
                "rss_slope_mb_per_min": [slope_per_min(before), slope_per_min(after)],
            }))  # fmt: skip
        ok = not lost and not bad_fetched and not check["bad_records"] and not playing
        raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
