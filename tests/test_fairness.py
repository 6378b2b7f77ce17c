"""A short run of the fairness harness (bench/fairness.py) against a real server process."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from flyswat.record import verify_record
from harness.fairness import Seat, faster_underneath, play_tables, win_shares
from harness.server import running_server


def test_racers_on_delayed_links_play_whole_games_that_verify(tmp_path: Path) -> None:
    seats = [Seat(20, 2, label="near"), Seat(160, 2, label="far")]
    cheat = [Seat(40, 2, claim=lambda ms: 60, label="too fast"), Seat(40, 2, label="honest")]
    # The racers' proxies are their networks and say so as a trusted front would.
    with running_server(tmp_path / "f.db", args=["--rtt-header-from", "127.0.0.1"]) as (
        http,
        port,
        _pid,
    ):

        async def both() -> tuple[list, list]:
            options = {"remove": 85, "slap_window_ms": 2000, "turn_timeout_ms": 3000}
            fair = await play_tables(
                http, port, [seats, seats[::-1]], concurrency=2, seed=7, warmup_s=1.2, **options
            )
            fast = await play_tables(
                http, port, [cheat], concurrency=1, seed=8, warmup_s=1.2, **options
            )
            return fair, fast

        fair, fast = asyncio.run(both())
        records = [httpx.get(http + run.record_url).json() for run in fair + fast]
    assert all(verify_record(r) == [] for r in records)
    races = [race for run in fair for race in run.races]
    assert races, "no slap round was raced"
    shares = win_shares(fair)
    assert set(shares) == {"near", "far"}
    assert sum(won for won, _, _ in shares.values()) > 0.99
    right, pairs = faster_underneath(fair, 20, 1e9)
    assert pairs == 0 or right / pairs > 0.8
    claims = [c for run in fast for r in run.races for c in r.claimed if c < 100]
    assert claims and sum(run.errors.get("too_fast", 0) for run in fast) == len(claims)
