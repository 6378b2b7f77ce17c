"""Nothing lost: a player who drops carries on; a server killed mid-game resumes it."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from flyswat.record import verify_record
from harness.server import START_S

from .conftest import Live, Player, create_table, free_port, join_table, until_all_ready


@pytest.mark.anyio
async def test_a_dropped_player_is_revealed_for_then_reconnects_with_its_token(
    live: Live,
) -> None:
    seated = await create_table(live, bots=[{"seat": 2, "level": "normal"}], seats=3, remove=70)
    code = seated["code"]
    joined = await join_table(live, code, "Bruno")
    async with Player.connect(live.ws, code, seated["token"]) as ana:
        async with Player.connect(live.ws, code, joined["token"]) as bruno:
            await bruno.send(type="ready")
            await until_all_ready(ana)
            await ana.send(type="start")
            await bruno.expect("started")
        # Bruno is gone: the table reveals for him after the turn timeout.
        auto = await ana.play(until=lambda m: m["type"] == "reveal" and m["auto"])
        assert auto["seat"] == bruno.seat
        table = (await asyncio.to_thread(live.get, f"/api/tables/{code}")).json()
        assert [p["connected"] for p in table["players"]] == [True, False, True]
        async with Player.connect(live.ws, code, joined["token"]) as back:
            welcome = back.received[0]
            assert welcome["seat"] == 1
            assert welcome["view"]["turn"] >= auto["turn"]
            overs = await asyncio.gather(ana.play(), back.play())
    assert overs[0]["result"] == overs[1]["result"]
    record = (await asyncio.to_thread(live.get, f"/api/tables/{code}/record")).json()
    assert verify_record(record) == []


class Process:
    """``flyswat serve`` as a real process on a free port."""

    def __init__(self, db: str, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.ws = f"ws://127.0.0.1:{port}"
        cmd = [sys.executable, "-m", "flyswat.cli", "serve", "--port", str(port), "--db", db]
        cmd += ["--workers", "1"]  # the crash of one process
        self.proc = subprocess.Popen(
            [*cmd, "--bot-pace", "0.05"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        deadline = time.monotonic() + START_S
        while True:
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.kill()
                said = self.output()
                if self.proc.stdout:  # nobody else will: this process is nobody's yet
                    self.proc.stdout.close()
                raise RuntimeError(f"the server did not start: {said}")
            time.sleep(0.05)

    def output(self) -> str:
        return self.proc.stdout.read().decode() if self.proc.stdout else ""

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)


@pytest.fixture
def processes() -> Iterator[list[Process]]:
    started: list[Process] = []
    yield started
    for p in started:
        p.kill()
        if p.proc.stdout:
            p.proc.stdout.close()


def first_server(path: Path, processes: list[Process]) -> tuple[str, int, Process]:
    """A server on a fresh SQLite file at ``path`` and a free port: its URL, port, process."""
    db, port = f"sqlite:///{path}", free_port()
    processes.append(Process(db, port))
    return db, port, processes[-1]


@pytest.mark.anyio
async def test_a_killed_server_restarts_from_its_store_and_the_game_goes_on(
    tmp_path: Path, processes: list[Process]
) -> None:
    db, port, first = first_server(tmp_path / "crash.db", processes)
    assert first.proc.stdout is not None
    assert "http://127.0.0.1:" in first.proc.stdout.readline().decode()  # the address to open
    live = Live(first.url, first.ws, None)
    bots = [{"seat": 1, "level": "hard"}, {"seat": 2, "level": "easy"}]
    seated = await create_table(live, seats=3, bots=bots, remove=76)
    code, token = seated["code"], seated["token"]
    async with Player.connect(live.ws, code, token) as ana:
        await ana.send(type="start")
        started = await ana.expect("started")
        await ana.play(until=lambda m: m["type"] == "reveal" and m["turn"] >= 8)
        seen = [(m["seat"], m["card"]) for m in ana.received if m["type"] == "reveal"]
        await asyncio.to_thread(first.kill)
    second = Process(db, port)
    processes.append(second)
    info = (await asyncio.to_thread(live.get, f"/api/tables/{code}")).json()
    assert info["state"] == "playing"
    assert info["commitment"] == started["commitment"]
    async with Player.connect(live.ws, code, token) as ana:
        assert ana.received[0]["view"]["turn"] >= len(seen)
        over = await ana.play()
    record: dict[str, Any] = (
        await asyncio.to_thread(live.get, f"/api/tables/{code}/record")
    ).json()
    assert verify_record(record) == []
    assert [(t["seat"], t["card"]) for t in record["turns"][: len(seen)]] == seen
    assert record["commitment"] == started["commitment"] == over["commitment"]
    await asyncio.to_thread(second.kill)
    third = Process(db, port)  # a finished game keeps its record
    processes.append(third)
    again = (await asyncio.to_thread(live.get, f"/api/tables/{code}/record")).json()
    assert again == record


@pytest.mark.anyio
@pytest.mark.parametrize("later_s", [0.0, 0.3])
async def test_a_slap_accepted_before_a_kill_is_in_the_resumed_round_and_the_record(
    tmp_path: Path, processes: list[Process], later_s: float
) -> None:
    db, port, first = first_server(tmp_path / "slap.db", processes)
    live = Live(first.url, first.ws, None)
    # Two humans and a long window: the round stays open until both have answered.
    seated = await create_table(live, seats=2, remove=80, slap_window_ms=30_000,
                                turn_timeout_ms=30_000)  # fmt: skip
    code = seated["code"]
    joined = await join_table(live, code, "Bruno")
    tokens = [seated["token"], joined["token"]]
    async with (
        Player.connect(live.ws, code, tokens[0], slaps=False) as ana,
        Player.connect(live.ws, code, tokens[1], slaps=False) as bruno,
    ):
        await bruno.send(type="ready")
        await until_all_ready(ana)
        await ana.send(type="start")
        opened = await asyncio.gather(
            ana.play(until=lambda m: m["type"] == "reveal" and m["round"] and m["view"]["round"]),
            bruno.play(until=lambda m: m["type"] == "reveal" and m["round"] and m["view"]["round"]),
        )
        card, turn = opened[0]["view"]["centre"][0], opened[0]["turn"]
        await asyncio.sleep(0.3)  # a human's hand lands after its reaction time
        await ana.send(type="slap", card=card, ms=300, turn=turn)
        accepted = await ana.expect("accepted")
        await asyncio.sleep(later_s)
        await asyncio.to_thread(first.kill)  # right after the accepted, or a little later
    assert accepted["card"] == card
    second = Process(db, port)
    processes.append(second)
    async with (
        Player.connect(live.ws, code, tokens[0]) as ana,
        Player.connect(live.ws, code, tokens[1]) as bruno,
    ):
        welcome = ana.received[0]
        assert welcome["view"]["turn"] == turn and welcome["view"]["round"]["mine"] == [card]
        assert welcome["window_left_ms"] is not None  # the round resumed, with a fresh window
        told = await ana.expect("accepted")  # and the player is told its hand again
        assert told["card"] == card
        # Her one hand is all she lays in this round: she says so (her play() picks up from
        # the accepted, past the welcome's round), and the round closes when Bruno is done
        # too rather than at its 30 s window.
        await ana.send(type="done", turn=turn)
        await asyncio.gather(ana.play(), bruno.play())
    record = (await asyncio.to_thread(live.get, f"/api/tables/{code}/record")).json()
    assert verify_record(record) == []
    slaps = record["turns"][turn - 1]["round"]["slaps"]
    assert {"seat": 0, "card": card} in [{"seat": s["seat"], "card": s["card"]} for s in slaps]


@pytest.mark.anyio
@pytest.mark.parametrize("workers", ["1", "2"])
async def test_a_second_server_on_a_port_in_use_stops_taking_nothing_from_the_first(
    tmp_path: Path, processes: list[Process], workers: str
) -> None:
    db, port, first = first_server(tmp_path / "one.db", processes)
    live = Live(first.url, first.ws, None)
    seated = await create_table(live, seats=2, bots=[{"seat": 1, "level": "easy"}], remove=80)
    code, token = seated["code"], seated["token"]
    async with Player.connect(live.ws, code, token) as ana:
        await ana.send(type="start")
        await ana.expect("started")
        cmd = [sys.executable, "-m", "flyswat.cli", "serve", "--port", str(port), "--db", db,
               "--workers", workers]  # fmt: skip
        second = await asyncio.to_thread(
            subprocess.run, cmd, capture_output=True, text=True, timeout=60
        )
        assert second.returncode == 1
        assert f"cannot listen on 127.0.0.1:{port}" in second.stderr
        # The first still runs the table: the game goes on on the same socket to its end.
        over = await ana.play()
        assert not [m for m in ana.received if m["type"] == "moved"]
    assert over["type"] == "over"
    record = (await asyncio.to_thread(live.get, f"/api/tables/{code}/record")).json()
    assert verify_record(record) == []
