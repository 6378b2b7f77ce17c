"""Failover: how soon a node's tables play again elsewhere after the node is killed.

Tables of one human seat (nobody connects: the server reveals for it after each turn
timeout) and three bots are opened on one node, started, and left to play. The node is
then stopped — SIGKILL, or SIGTERM for a graceful hand-over — and the store is watched: a
table plays again when an event of it is stored after the stop. Reported per table: from the
stop to its first event after it (min / median / max), the tables that played again, and
which nodes run them now. Every record of the games that then end is verified.

    uv run python bench/failover.py --tables 30                  # --workers 2, SQLite
    uv run python bench/failover.py --tables 30 --nodes 3 --db postgresql://… --redis redis://…
    uv run python bench/failover.py --tables 30 --nodes 3 --db … --redis … --stop term

With ``--workers 2`` (the default mode) the supervisor starts the killed worker again, which
takes its own tables back if it is quicker than the other worker's adoption.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa

from flyswat.record import verify_record
from flyswat.server.store import engine_url
from harness.server import free_ports, pg_schema, until_health

TABLE = {"seats": 4, "bots": [{"seat": s, "level": "normal"} for s in (1, 2, 3)],
         "turn_timeout_ms": 1000, "slap_window_ms": 1000, "remove": 70}  # fmt: skip


def start(
    args: argparse.Namespace, db: str, tmp: Path
) -> tuple[list[subprocess.Popen[bytes]], list[int]]:
    """The servers: one supervisor of two workers, or ``--nodes`` nodes; the nodes' ports."""
    serve = [sys.executable, "-m", "flyswat.cli", "serve", "--db", db, "--exempt", "127.0.0.1",
             "--bot-pace", "0.2"]  # fmt: skip
    procs, ports = [], []
    if args.nodes == 0:
        port = free_ports(3)
        with (tmp / "serve.log").open("ab") as log:
            procs.append(subprocess.Popen([*serve, "--port", str(port), "--workers", "2"],
                                          stdout=log, stderr=subprocess.STDOUT))  # fmt: skip
        ports = [port + 1, port + 2]
    else:
        for k in range(args.nodes):
            port = free_ports(1)
            cmd = [*serve, "--port", str(port), "--workers", "1", "--node-id", f"n{k}",
                   "--redis", args.redis, "--advertise", f"http://127.0.0.1:{port}"]  # fmt: skip
            with (tmp / f"n{k}.log").open("ab") as log:
                procs.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT))
            ports.append(port)
    try:
        for port in ports:
            until_health(port, timeout=60)
    except RuntimeError:
        for proc in procs:
            proc.kill()
        raise
    return procs, ports


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def run(args: argparse.Namespace, db: str, tmp: Path) -> dict[str, Any]:
    procs, ports = start(args, db, tmp)
    engine = sa.create_engine(engine_url(db))
    try:
        victim = ports[0]
        codes = []
        with httpx.Client(base_url=f"http://127.0.0.1:{victim}", timeout=10) as http:
            for i in range(args.tables):
                seated = http.post("/api/tables", json={"name": f"h{i}", **TABLE}).json()
                codes.append(seated["code"])
                reply = http.post(f"/api/tables/{seated['code']}/start",
                                  json={"token": seated["token"]})  # fmt: skip
                assert reply.status_code == 200, reply.text
        time.sleep(args.play_before)
        pid = until_health(victim)["pid"]
        stopped = time.time()
        os.kill(pid, signal.SIGKILL if args.stop == "kill" else signal.SIGTERM)
        first: dict[str, float] = {}
        deadline = time.monotonic() + args.wait
        query = sa.text("SELECT code, MIN(at) FROM flyswat_events WHERE at > :t GROUP BY code")
        while len(first) < len(codes) and time.monotonic() < deadline:
            time.sleep(0.05)
            with engine.connect() as conn:
                for code, at in conn.execute(query, {"t": iso(stopped)}):
                    if code in codes and code not in first:
                        t = datetime.strptime(at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
                        first[code] = t.timestamp() - stopped
        gaps = sorted(first.values())
        with engine.connect() as conn:
            owners = conn.execute(sa.text("SELECT node, COUNT(*) FROM flyswat_owners "
                                          "GROUP BY node")).all()  # fmt: skip
        # Let the games end, then verify their records.
        end = time.monotonic() + args.wait * 4
        verified = failed = 0
        pending = set(codes)
        while pending and time.monotonic() < end:
            time.sleep(1)
            with engine.connect() as conn:
                done = conn.execute(sa.text("SELECT code, record FROM flyswat_records")).all()
            for code, text in done:
                if code in pending:
                    pending.discard(code)
                    if verify_record(json.loads(text)) == []:
                        verified += 1
                    else:
                        failed += 1
        return {"tables": len(codes), "played_again": len(first),
                "s_min": gaps[0] if gaps else None,
                "s_median": statistics.median(gaps) if gaps else None,
                "s_max": gaps[-1] if gaps else None,
                "owners_after": {str(n): c for n, c in owners},
                "records_verified": verified, "records_failed": failed,
                "unfinished": len(pending)}  # fmt: skip
    finally:
        engine.dispose()
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(40)
            except subprocess.TimeoutExpired:
                proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=30)
    parser.add_argument(
        "--nodes",
        type=int,
        default=0,
        help="nodes over PostgreSQL and Redis (default: --workers 2 on SQLite)",
    )
    parser.add_argument("--db", default=None, help="postgresql://… (a fresh schema)")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/12")
    parser.add_argument("--stop", choices=("kill", "term"), default="kill")
    parser.add_argument("--play-before", type=float, default=4.0)
    parser.add_argument("--wait", type=float, default=30.0)
    args = parser.parse_args()
    if args.nodes:
        import redis

        redis.Redis.from_url(args.redis).flushdb()
    with tempfile.TemporaryDirectory(prefix="flyswat-failover-") as tmp:
        if args.db:
            with pg_schema(args.db, "failover_") as db:
                out = run(args, db, Path(tmp))
        else:
            out = run(args, f"sqlite:///{tmp}/failover.db", Path(tmp))
    mode = f"{args.nodes} nodes" if args.nodes else "--workers 2"
    print(f"failover ({mode}, {args.stop}): {out}")


if __name__ == "__main__":
    main()
