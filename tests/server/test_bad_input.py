"""Bad input over a real socket: one clear error each, nothing changed, the socket kept."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from .conftest import Live, Player, create_table, join_table, until_all_ready

SLOW = {"slap_window_ms": 8000, "turn_timeout_ms": 30000, "remove": 0}


async def error_of(player: Player, **msg: Any) -> str:
    """Send ``msg``; the code of the one error it gets."""
    await player.send(**msg)
    reply = await player.expect("error")
    return str(reply["code"])


@pytest.fixture
async def duo(live: Live) -> AsyncIterator[tuple[Player, Player, str]]:
    """Two humans at a two-seat table, in the lobby: Ana (host, seat 0) and Bruno."""
    seated = await create_table(live, seats=2, **SLOW)
    joined = await join_table(live, seated["code"], "Bruno")
    async with (
        Player.connect(live.ws, seated["code"], seated["token"]) as ana,
        Player.connect(live.ws, seated["code"], joined["token"]) as bruno,
    ):
        yield ana, bruno, seated["code"]


async def start(ana: Player, bruno: Player) -> dict[str, Any]:
    await bruno.send(type="ready")
    await until_all_ready(ana)
    await ana.send(type="start")
    await bruno.expect("started")
    return await ana.expect("started")


async def until_round(ana: Player, bruno: Player, v: dict[str, Any], least: int) -> dict[str, Any]:
    """Reveal in turn until a slap round opens over ``least`` centre cards; its reveal."""
    while True:
        mover = ana if v["to_move"] == ana.seat else bruno
        await mover.send(type="reveal")
        shown = await ana.expect("reveal")
        await bruno.expect("reveal")
        v = shown["view"]
        if shown["round"] and v["round"] is not None:
            if len(v["centre"]) >= least:
                return shown
            await ana.send(type="done")
            await bruno.send(type="done")
        if shown["round"]:
            v = (await ana.expect("round"))["view"]
            await bruno.expect("round")


@pytest.mark.anyio
async def test_lobby_refusals_each_get_one_error_and_change_nothing(
    duo: tuple[Player, Player, str], live: Live
) -> None:
    ana, bruno, code = duo
    before = (await asyncio.to_thread(live.get, f"/api/tables/{code}")).json()
    assert await error_of(ana, type="start") == "not_ready"
    assert await error_of(bruno, type="start") == "not_host"
    assert await error_of(ana, type="hello") == "already_hello"
    assert await error_of(ana, type="reveal") == "not_started"
    assert await error_of(ana, type="slap", card="R3-1", ms=300) == "not_started"
    assert await error_of(ana, type="reveal", seat=1) == "not_your_seat"
    after = (await asyncio.to_thread(live.get, f"/api/tables/{code}")).json()
    assert after == before
    await bruno.send(type="ready")
    await until_all_ready(ana)
    await ana.send(type="start")
    assert (await ana.expect("started"))["start"] in (0, 1)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ("{not json", "malformed"),
        ("[]", "malformed"),
        ('{"type": "shuffle"}', "unknown_type"),
        ('{"type": "slap", "card": 12}', "malformed"),
        (json.dumps({"type": "hello", "token": "x" * 5000}), "too_big"),
        (b"\x00\x01", "malformed"),
    ],
)
async def test_malformed_frames_get_one_error_and_the_socket_stays(
    duo: tuple[Player, Player, str], frame: str | bytes, code: str
) -> None:
    ana, bruno, _ = duo
    await ana.ws.send(frame)
    assert (await ana.expect("error"))["code"] == code
    await bruno.send(type="ready")  # the table still works for everyone, Ana included
    assert await error_of(ana, type="ready", ready="maybe") == "malformed"
    await ana.send(type="start")
    assert (await ana.expect("started"))["type"] == "started"


@pytest.mark.anyio
async def test_before_hello_with_a_bad_token_and_as_a_spectator_nobody_can_act(
    live: Live,
) -> None:
    seated = await create_table(live, seats=2, **SLOW)
    async with connect(f"{live.ws}/ws/{seated['code']}") as ws:
        anon = Player(ws, None)
        assert await error_of(anon, type="ready") == "hello_first"
        assert await error_of(anon, type="hello", token="not-a-token") == "bad_token"
        await anon.send(type="hello")
        assert (await anon.expect("welcome"))["seat"] is None
        assert await error_of(anon, type="start") == "spectator"
        assert await error_of(anon, type="reveal", seat=0) == "spectator"
    async with connect(f"{live.ws}/ws/NOSUCH") as ws:
        assert json.loads(await ws.recv())["code"] == "not_found"


@pytest.mark.anyio
async def test_slap_refusals_in_a_round_change_nothing(
    duo: tuple[Player, Player, str], live: Live
) -> None:
    ana, bruno, code = duo
    started = await start(ana, bruno)
    other = bruno if started["view"]["to_move"] == ana.seat else ana
    assert await error_of(other, type="reveal") == "not_your_turn"
    assert await error_of(ana, type="slap", card="R3-1", ms=300) == "no_round"
    shown = await until_round(ana, bruno, started["view"], least=3)
    turn, centre = shown["turn"], shown["view"]["centre"]
    a, b, c = centre[:3]
    assert await error_of(ana, type="slap", card="S-1", ms=300) == "not_in_centre"
    assert await error_of(ana, type="slap", card="R9-1", ms=300) == "bad_card"
    assert await error_of(ana, type="slap", card=a, ms=60) == "too_fast"
    info = (await asyncio.to_thread(live.get, f"/api/tables/{code}")).json()
    assert [p["too_fast"] for p in info["players"]] == [1, 0]  # counted against Ana
    assert await error_of(ana, type="slap", card=a, ms=300, seat=1) == "not_your_seat"
    assert await error_of(ana, type="slap", card=a, ms=300, turn=turn - 1) == "stale_round"
    assert await error_of(ana, type="reveal") == "round_open"
    await asyncio.sleep(0.1)  # no human slaps within 100 ms of the reveal, nor may a test
    await ana.send(type="slap", card=a, ms=300, turn=turn)
    assert (await ana.expect("accepted"))["card"] == a
    assert await error_of(ana, type="slap", card=a, ms=320) == "same_card"
    await ana.send(type="slap", card=b, ms=400)
    assert (await ana.expect("accepted"))["card"] == b
    assert await error_of(ana, type="slap", card=c, ms=500) == "no_hands_left"
    await bruno.send(type="done", turn=turn)
    closed = await ana.expect("round")
    assert closed["turn"] == turn
    assert closed["view"]["last_round"]["slaps"] == [
        {"seat": ana.seat, "card": a},
        {"seat": ana.seat, "card": b},
    ]
    assert await error_of(ana, type="slap", card=c, ms=300, turn=turn) == "stale_round"
    assert await error_of(ana, type="done") == "no_round"
    await bruno.expect("round")
    shown = await until_round(ana, bruno, closed["view"], least=1)
    await bruno.send(type="done")
    assert await error_of(bruno, type="slap", card=shown["view"]["centre"][0], ms=300) == "done"
    await ana.send(type="done")
    assert (await ana.expect("round"))["view"]["last_round"]["slaps"] == []


@pytest.mark.anyio
async def test_a_burst_is_rate_limited_and_a_flood_closes_the_socket(
    duo: tuple[Player, Player, str],
) -> None:
    ana, bruno, _ = duo
    for _ in range(50):
        await ana.send(type="pong", id=0)
    errors = 0
    with pytest.raises(TimeoutError):
        while True:
            errors += (await ana.recv(timeout=0.5))["type"] == "error"
    assert 1 <= errors <= 20
    await bruno.send(type="ready")
    await until_all_ready(ana)
    await ana.send(type="start")
    await ana.expect("started")  # still connected, still playing
    with pytest.raises(ConnectionClosed) as closed:
        for _ in range(500):
            await ana.send(type="pong", id=0)
        while True:
            await ana.recv(timeout=5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


@pytest.mark.anyio
async def test_deeply_nested_json_is_malformed_wherever_it_comes(live: Live) -> None:
    seated = await create_table(live, seats=2, **SLOW)
    nested = "[" * 2000 + "]" * 2000  # about 4 KB
    async with connect(f"{live.ws}/ws/{seated['code']}") as ws:  # before hello
        await ws.send(nested)
        assert json.loads(await ws.recv())["code"] == "malformed"
    async with Player.connect(live.ws, seated["code"], None) as watcher:  # a spectator
        await watcher.ws.send('{"type": "slap", "card": ' + nested + "}")
        assert (await watcher.expect("error"))["code"] == "malformed"
    async with Player.connect(live.ws, seated["code"], seated["token"]) as ana:  # a player
        await ana.ws.send(nested)
        assert (await ana.expect("error"))["code"] == "malformed"
        await ana.send(type="ready")  # the socket is still fine
        assert (await ana.expect("table"))["type"] == "table"


@pytest.mark.anyio
async def test_loose_types_are_refused_and_change_nothing(duo: tuple[Player, Player, str]) -> None:
    ana, bruno, _ = duo
    assert await error_of(bruno, type="ready", ready="yes") == "malformed"
    assert await error_of(bruno, type="ready", ready=1) == "malformed"
    v = (await start(ana, bruno))["view"]
    shown = await until_round(ana, bruno, v, 1)
    card = shown["view"]["centre"][0]
    for bad in ({"ms": "300"}, {"ms": True}, {"turn": str(shown["turn"])}, {"ms": 300.0}):
        assert await error_of(ana, type="slap", card=card, **bad) == "malformed"
    await ana.send(type="done")
    hands = await ana.expect("hands")
    assert hands["view"]["round"]["laid"] == [0, 0]  # none of them laid a hand
    table = await bruno.expect("hands")
    assert table["view"]["round"]["laid"] == [0, 0]
    assert await error_of(ana, type="done") == "done"  # done twice: refused, nothing sent


@pytest.mark.anyio
async def test_a_frame_over_64_kib_is_answered_too_big(duo: tuple[Player, Player, str]) -> None:
    ana, _, _ = duo
    await ana.ws.send(json.dumps({"type": "ready", "pad": "x" * 100_000}))
    assert (await ana.expect("error"))["code"] == "too_big"
    await ana.send(type="ready")
    assert (await ana.expect("table"))["type"] == "table"


def test_start_without_a_body_is_malformed_not_a_bad_token(live: Live) -> None:
    import httpx

    seated = httpx.post(live.http + "/api/tables", json={"name": "Ana", "seats": 2}).json()
    for body in (None, b"", b"{}", b'{"token": 5}'):
        reply = httpx.post(f"{live.http}/api/tables/{seated['code']}/start", content=body)
        assert (reply.status_code, reply.json()["error"]) == (400, "malformed"), body
    for bad in ({"seats": "4"}, {"seats": 4.0}):
        reply = httpx.post(live.http + "/api/tables", json={"name": "Ana", **bad})
        assert (reply.status_code, reply.json()["error"]) == (400, "malformed")
