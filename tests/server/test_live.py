"""Live now on a real server: ``GET /api/live`` lists the public games being played, the
best-rated first, and a game leaves it when it is over; spectators are capped per node, over
all its tables; with two workers each lists the other's games too."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect

from flyswat.server.app import build_app
from flyswat.server.limits import Limits
from flyswat.server.transport import uvicorn_config
from harness.server import Serve

from .conftest import FAST, Live, Player, in_thread, until
from .test_cluster import node, two_workers

#: A game that lasts a few seconds, its human's turns revealed for them by the server.
QUICK_GAME = {**FAST, "remove": 96}


@contextlib.contextmanager
def serving(db_url: str, **kw: Any) -> Iterator[Live]:
    limits = Limits(exempt=frozenset({"127.0.0.1"}))
    app = build_app(db_url, bot_pace=0.02, limits=limits, **kw)
    with in_thread(app, uvicorn_config(limits)) as port:
        yield Live(f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}", app)


def table(at: Live, level: str, **options: Any) -> str:
    """A two-seat table of a person and a bot of ``level``, started: its code."""
    body = {"name": "Ana", "seats": 2, "bots": [{"seat": 1, "level": level}], **QUICK_GAME}
    seated = at.post("/api/tables", {**body, **options}).json()
    started = at.post(f"/api/tables/{seated['code']}/start", {"token": seated["token"]})
    assert started.status_code == 200, started.text
    return str(seated["code"])


def live_codes(at: Live) -> list[str]:
    reply = at.get("/api/live")
    assert reply.status_code == 200, reply.text
    return [g["code"] for g in reply.json()["games"]]


@pytest.mark.anyio
async def test_a_public_game_is_live_while_played_best_rated_first_and_leaves_when_over(
    db_url: str,
) -> None:
    with serving(db_url) as live:
        lobby = live.post("/api/tables", {"name": "Lee", "seats": 2}).json()["code"]
        hidden = table(live, "hard", public=False)  # by its link only: never listed
        easy = table(live, "easy")
        hard = table(live, "hard")
        games = live.get("/api/live").json()
        assert [g["code"] for g in games["games"]] == [hard, easy]  # 2420, then 140
        assert [g["rating"] for g in games["games"]] == [2420, 140] and games["total"] == 2
        assert lobby not in live_codes(live) and hidden not in live_codes(live)
        assert live.get("/api/live?limit=1").json()["games"][0]["code"] == hard
        for bad in ("0", "101", "x", "1.5"):
            assert live.get(f"/api/live?limit={bad}").status_code == 400
        # A game that ends leaves the list.
        state = lambda code: live.get(f"/api/tables/{code}").json()["state"]  # noqa: E731
        await until(lambda: state(hard) == "over", "the hard table's game never ended")
        assert hard not in live_codes(live)
        await until(lambda: state(easy) == "over", "the easy table's game never ended")
        assert live_codes(live) == []


async def _refused(live: Live, code: str) -> tuple[dict[str, Any], int | None]:
    """A spectator's hello refused: the error it gets and its close code."""
    async with connect(f"{live.ws}/ws/{code}") as ws:
        await ws.send(json.dumps({"type": "hello"}))
        while True:
            msg = json.loads(await asyncio.wait_for(ws.recv(), 10))
            if msg["type"] != "ping":
                break
        with contextlib.suppress(Exception):
            await asyncio.wait_for(ws.recv(), 10)
        return msg, ws.close_code


@pytest.mark.anyio
async def test_spectators_are_capped_per_node_over_all_its_tables(db_url: str) -> None:
    with serving(db_url, max_spectators=2) as live:
        one = live.post("/api/tables", {"name": "Ana", "seats": 2}).json()["code"]
        two = live.post("/api/tables", {"name": "Bo", "seats": 2}).json()["code"]
        async with Player.connect(live.ws, one, None), Player.connect(live.ws, two, None) as w:
            assert w.seat is None
            error, code = await _refused(live, one)  # table one has a single spectator
            assert error["code"] == "spectators_full" and code == 1013
            assert live.get(f"/api/tables/{one}").json()["spectators"] == 1
        # Both gone: there is room again.
        audience = live.app.state.runner.directory.audience
        await until(lambda: audience.count == 0, "spectators still counted")
        async with Player.connect(live.ws, one, None) as again:
            assert again.seat is None


@pytest.mark.slow
@pytest.mark.anyio
async def test_each_worker_lists_the_other_workers_live_games(
    tmp_path: Path, started: list[Serve]
) -> None:
    port = two_workers(tmp_path, started)
    first, second = node(port + 1), node(port + 2)
    long_game = {"remove": 0, "turn_timeout_ms": 4000}  # long enough to be seen everywhere
    codes = {table(first, "hard", **long_game), table(second, "easy", **long_game)}

    def both_listed() -> bool:
        return all(set(live_codes(at)) == codes for at in (first, second))

    await until(both_listed, "a worker does not list the other's game")
    for at in (first, second):
        ratings = [g["rating"] for g in httpx.get(at.http + "/api/live").json()["games"]]
        assert ratings == [2420, 140]


def test_the_spectator_cap_is_a_setting_of_the_node_flag_or_variable() -> None:
    from .test_settings import parse

    assert parse([], {}).max_spectators == 10_000
    assert parse([], {"FLYSWAT_MAX_SPECTATORS": "5100"}).max_spectators == 5100
    assert parse(["--max-spectators", "7"], {"FLYSWAT_MAX_SPECTATORS": "5100"}).max_spectators == 7
    with pytest.raises(SystemExit):
        parse(["--max-spectators", "-1"], {})
