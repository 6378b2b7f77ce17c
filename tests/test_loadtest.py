"""The load and soak harness against a real ``flyswat serve`` process: a handful of players
play whole (short) games, drop and reconnect with their tokens, and outlive a ``kill -9``.

These check that the harness works and that games complete with valid records; the figures
are the benchmarks' (``bench/load.py``, ``bench/soak.py``), never asserted here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from flyswat.record import verify_record
from harness.load import (
    QUICK,
    Plan,
    Worker,
    check_loopback,
    percentile,
    run_plan,
)
from harness.procs import (
    ServerProcess,
    cpu_seconds,
    rss_bytes,
)
from harness.server import free_port

#: Short games: 22 cards in play, quick rounds.
SHORT = {"remove": 90, "slap_window_ms": 800, "turn_timeout_ms": 1000}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    db = f"sqlite:///{tmp_path / 'load.db'}"
    running = ServerProcess(db, free_port(), tmp_path / "log", bot_pace=0.05)
    running.start()
    try:
        yield running
    finally:
        running.stop()


def records_of(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


def test_load_players_play_whole_games_whose_records_verify(
    server: ServerProcess, tmp_path: Path
) -> None:
    plan = Plan(server.http, tables=3, bots=0, options=SHORT, pace=QUICK, warmup_s=0.5,
                duration_s=2, drain_s=30, records=str(tmp_path))  # fmt: skip
    out = asyncio.run(run_plan(plan, timeout=60))
    assert out["games_started"] == out["games_over"] == out["records"] == 3
    assert out["unfinished"] == []
    assert out["received"] > out["sent"] > 0
    assert out["round_ms"] and out["reveal_ms"], "rounds and reveals were timed"
    # Only a refusal that depends on timing alone (a loaded machine) may happen.
    assert set(out["errors"]) <= {"too_late"}, out["error_examples"]
    records = records_of(tmp_path)
    assert len(records) == 3
    assert all(verify_record(r) == [] for r in records)


def test_a_table_with_server_bots_completes_too(server: ServerProcess, tmp_path: Path) -> None:
    plan = Plan(server.http, tables=2, bots=2, options=SHORT, pace=QUICK, warmup_s=0.5,
                duration_s=1, drain_s=30, records=str(tmp_path))  # fmt: skip
    out = asyncio.run(run_plan(plan, timeout=60))
    assert out["games_over"] == 2
    assert all(verify_record(r) == [] for r in records_of(tmp_path))


def test_players_who_drop_come_back_with_their_token_and_finish(
    server: ServerProcess, tmp_path: Path
) -> None:
    plan = Plan(server.http, tables=2, options=SHORT, pace=QUICK, drop_per_min=30,
                warmup_s=0.5, duration_s=1, drain_s=150, records=str(tmp_path))  # fmt: skip
    # The drain ends as the games do; its bound is for a machine so busy that a dropped
    # player's turns, played by the 1 s turn timer, take most of a minute (a CI run did).
    out = asyncio.run(run_plan(plan, timeout=180))
    assert out["drops"] > 0
    assert out["reconnects"] > 0
    assert out["games_over"] == 2
    assert all(verify_record(r) == [] for r in records_of(tmp_path))


def test_games_survive_a_kill_9_and_restart_on_the_same_store(
    server: ServerProcess, tmp_path: Path
) -> None:
    async def scenario() -> dict[str, object]:
        loop = asyncio.get_running_loop()
        plan = Plan(server.http, tables=2, options=SHORT, pace=QUICK, records=str(tmp_path))
        worker = Worker(plan)
        async with httpx.AsyncClient(base_url=server.http, timeout=30) as http:
            worker.http = http
            deadline = loop.time() + 180  # ends as the games do
            await worker.setup(deadline)
            await asyncio.gather(*(worker.start_table(t) for t in worker.tables))
            await asyncio.sleep(1.0)
            assert any(t.over is None for t in worker.tables)
            await asyncio.to_thread(server.kill)
            await asyncio.to_thread(server.start)
            while loop.time() < deadline and any(t.over is None for t in worker.tables):
                await asyncio.sleep(0.2)
            for table in worker.tables:
                await worker.fetch_record(table)
            await worker.close()
        return worker.stats.to_json()

    out = asyncio.run(scenario())
    assert out["games_over"] == out["records"] == 2
    assert out["reconnects"] > 0
    assert all(verify_record(r) == [] for r in records_of(tmp_path))


def test_the_harness_talks_to_loopback_only() -> None:
    check_loopback("http://127.0.0.1:8000")
    check_loopback("ws://localhost:1/ws/X")
    for url in ("http://10.0.0.1:80", "http://example.org", "http://192.168.1.2:8000"):
        with pytest.raises(ValueError):
            check_loopback(url)


def test_percentiles_by_nearest_rank() -> None:
    samples = [float(x) for x in range(1, 101)]
    assert percentile(samples, 50) == 50
    assert percentile(samples, 99) == 99
    assert percentile(samples, 100) == 100
    assert percentile([], 50) != percentile([], 50)  # NaN


def test_process_readings_come_from_proc(server: ServerProcess) -> None:
    assert rss_bytes(server.pid) > 10 * 2**20
    assert cpu_seconds(server.pid) > 0
