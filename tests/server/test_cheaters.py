"""Cheaters against a real ``flyswat serve`` process, over real sockets (PROTOCOL.md, "Fair
arbitration"): none may turn a slower hand into a win by bending what the server measures.

Each scripted cheater races an honest peer on the same delayed loopback link (RTT 60 ms,
jitter 8 ms), whose proxy tells the server the link's round trip as a trusted front would. The
reaction times are fixed, so every race has the same true gap; the bounds leave wide margins
(on the code before this rule, each of these cheaters won every race).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect

from flyswat.arbiter import JITTER_MS, MIN_HUMAN_MS
from flyswat.record import verify_record
from flyswat.server.runner import monotonic_ms
from harness.fairness import Seat, TableRun, fixed, play_tables
from harness.server import running_server

from .conftest import Live

OPTIONS = {"remove": 70, "slap_window_ms": 2000, "turn_timeout_ms": 3000}
NET = {"rtt_ms": 60.0, "jitter_ms": 8.0}


def claims(ms: float) -> Callable[[float], float]:
    return lambda _: ms


def cheat(reaction: float, claim: float, pong_delay_ms: float | None = 0.0) -> Seat:
    return Seat(**NET, reaction=fixed(reaction), claim=claims(claim),
                pong_delay_ms=pong_delay_ms, label="cheat")  # fmt: skip


def honest(reaction: float) -> Seat:
    return Seat(**NET, reaction=fixed(reaction), label="honest")


LAYOUTS = {
    "no_pongs": [cheat(450, 100, None), honest(300)],
    "late_pongs": [cheat(450, 100, 245), honest(300)],
    "instant": [cheat(5, 100), honest(300)],
    "late_pongs_30_ms_slower": [cheat(200, 150, 245), honest(170)],
}


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory, once: Callable[..., Any]
) -> dict[str, tuple[list[TableRun], list]]:
    """Four tables per cheater (it sits in both seats), all at once; their runs and records.
    Played once a run, whichever worker runs these tests (``once``: tests/conftest.py)."""
    made: dict[str, tuple[list[TableRun], list]] = once(
        "cheaters", lambda: _tournament(tmp_path_factory)
    )
    return made


def _tournament(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[list[TableRun], list]]:
    db = tmp_path_factory.mktemp("cheaters") / "f.db"
    # A cheater that never answers pings would be dropped after 10 missed ones: here it is
    # let stay, so that its races can be counted.
    args = ["--rtt-header-from", "127.0.0.1", "--max-missed-pings", "100000"]
    with running_server(db, args=args) as (http, port, _pid):

        async def all_layouts() -> list[list[TableRun]]:
            return list(
                await asyncio.gather(
                    *(play_tables(http, port, [seats, seats[::-1]] * 2, concurrency=4,
                                  seed=20 + i, **OPTIONS)
                      for i, seats in enumerate(LAYOUTS.values()))
                )
            )  # fmt: skip

        played = asyncio.run(all_layouts())
        out = {}
        for name, tables in zip(LAYOUTS, played, strict=True):
            records = [httpx.get(http + t.record_url).json() for t in tables if t.record_url]
            out[name] = (tables, records)
    return out


def tally(tables: list[TableRun]) -> tuple[int, int]:
    """(races the cheater won, races decided)."""
    decided = [r for t in tables for r in t.races if r.winner is not None]
    return sum(1 for r in decided if r.labels[r.winner or 0] == "cheat"), len(decided)


@pytest.mark.parametrize("name", ["no_pongs", "late_pongs"])
def test_a_cheater_150_ms_slower_wins_no_race_by_silencing_or_delaying_its_pongs(
    runs: dict[str, tuple[list[TableRun], list]], name: str
) -> None:
    won, races = tally(runs[name][0])
    assert races >= 20
    assert won <= races // 20


def test_a_cheater_30_ms_slower_claiming_less_with_late_pongs_loses_its_races(
    runs: dict[str, tuple[list[TableRun], list]],
) -> None:
    won, races = tally(runs["late_pongs_30_ms_slower"][0])
    assert races >= 20
    assert won <= races // 5


def test_a_slap_5_ms_after_the_reveal_is_refused_whatever_it_claims(
    runs: dict[str, tuple[list[TableRun], list]],
) -> None:
    """Refused unless this busy test process itself delayed the slap past the floor (then the
    server rightly saw a human-like time): most are refused, and the cheater seldom wins."""
    tables, _ = runs["instant"]
    races = [r for t in tables for r in t.races]
    assert len(races) >= 20
    cheater = [r.labels.index("cheat") for r in races]
    refused = sum(r.refused[c] == "too_fast" for r, c in zip(races, cheater, strict=True))
    assert refused >= 0.8 * len(races)
    assert tally(tables)[0] <= len(races) // 5


def test_no_recorded_slap_is_faster_than_a_human(
    runs: dict[str, tuple[list[TableRun], list]],
) -> None:
    slaps = [
        s for _, records in runs.values() for rec in records for turn in rec["turns"]
        for s in (turn["round"]["slaps"] if "round" in turn else [])
    ]  # fmt: skip
    assert slaps
    assert min(s["ms"] for s in slaps) >= MIN_HUMAN_MS


@pytest.mark.anyio
async def test_a_clients_own_round_trip_header_and_late_pongs_buy_no_allowance(
    live: Live,
) -> None:
    """Straight to the server (no trusted front): the client says its network takes 250 ms
    and answers pings 245 ms late; the kernel's figure for the socket decides."""
    seated = live.post("/api/tables", {"name": "Eve", "seats": 2}).json()
    headers = {"X-Flyswat-Rtt-Us": "250000"}
    async with connect(live.ws + seated["ws_url"], additional_headers=headers) as ws:
        await ws.send(json.dumps({"type": "hello", "token": seated["token"]}))
        pongs = 0
        while pongs < 3:
            msg: dict[str, Any] = json.loads(await ws.recv())
            if msg["type"] == "ping":
                await asyncio.sleep(0.245)
                await ws.send(json.dumps({"type": "pong", "id": msg["id"]}))
                pongs += 1
        await asyncio.sleep(0.2)
        link = live.app.state.runner.directory.tables[seated["code"]].seats[seated["seat"]].link
        assert 0 < link.allowance(monotonic_ms()) < JITTER_MS + 5


def test_records_of_cheaters_games_verify(runs: dict[str, tuple[list[TableRun], list]]) -> None:
    records = [rec for _, recs in runs.values() for rec in recs]
    assert records and all(verify_record(r) == [] for r in records)
