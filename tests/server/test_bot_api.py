"""The Bot API: bot accounts registered by their owners, marked as programs everywhere, seated
only where a table takes them or its host invited them, rated in their own pool; an example
agent (``examples/table_agent.py``, through :mod:`flyswat.client`) playing a whole game on a
real server process against a scripted human; and what a bot account may try (forged times, a
flood, tables it was not asked to)."""

from __future__ import annotations

import asyncio
import runpy
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from flyswat.client import Account, Client
from flyswat.record import verify_record
from flyswat.table.seats import BURST, MAX_ERRORS
from harness.server import running_server

from .conftest import Live, Player, until_all_ready
from .test_bad_input import SLOW, error_of, start, until_round
from .test_players import auth, register


def bot_of(live: Live, owner: dict[str, Any], name: str) -> dict[str, Any]:
    reply = live.post("/api/bots", {**auth(owner), "name": name})
    assert reply.status_code == 201, reply.text
    return dict(reply.json())


def refused(reply: httpx.Response) -> tuple[int, str]:
    return reply.status_code, reply.json()["error"]


def test_a_bot_account_is_registered_with_its_owners_identity_and_shown_as_a_program(
    live: Live,
) -> None:
    ana = register(live, "Ana")
    bot = bot_of(live, ana, "Swatter")
    assert bot["bot"] is True and bot["name"] == "Swatter" and bot["player"] != ana["player"]
    profile = live.get(f"/api/players/{bot['player']}").json()
    assert (profile["bot"], profile["owner"], profile["rating"]) == (True, ana["player"], 1000)
    person = live.get(f"/api/players/{ana['player']}").json()
    assert (person["bot"], person["owner"]) == (False, None)
    # Without the owner's secret, from a bot account, past the cap: refused, nothing made.
    assert refused(live.post("/api/bots", {"player": ana["player"], "secret": "x" * 32,
                                           "name": "Forged"})) == (403, "bad_secret")  # fmt: skip
    assert refused(live.post("/api/bots", {**auth(bot), "name": "Child"})) == (
        403,
        "not_a_person",
    )
    assert refused(live.post("/api/bots", {**auth(ana), "name": "Bot 2"})) == (400, "bad_name")
    for i in range(4):
        bot_of(live, ana, f"Swatter {i}")
    assert refused(live.post("/api/bots", {**auth(ana), "name": "One too many"})) == (
        409,
        "too_many_bots",
    )
    assert live.get("/api/leaderboard?pool=robots").json()["error"] == "malformed"


def test_a_bot_account_sits_only_where_the_table_takes_it_or_its_host_invited_it(
    live: Live,
) -> None:
    ana, bruno = register(live, "Ana"), register(live, "Bruno")
    bot, other = bot_of(live, ana, "Swatter"), bot_of(live, bruno, "Klatsch")
    plain = live.post("/api/tables", {**auth(ana), "name": "Ana", "seats": 3}).json()
    join = live.post(f"/api/tables/{plain['code']}/join", {**auth(bot), "name": "x"})
    assert refused(join) == (403, "bots_not_allowed")
    info = live.get(f"/api/tables/{plain['code']}").json()
    assert [p["joined"] for p in info["players"]] == [True, False, False]  # nothing changed
    # Play now seats people only; a bot account hosts only a table that takes bot accounts.
    assert refused(live.post("/api/play", auth(bot))) == (403, "bots_not_allowed")
    assert refused(live.post("/api/tables", {**auth(bot), "name": "x"})) == (
        403,
        "bots_not_allowed",
    )
    own = live.post("/api/tables", {**auth(bot), "name": "x", "bot_accounts": True})
    assert own.status_code == 201
    # A host invites one bot account by id: that one sits, no other.
    invited = live.post("/api/tables", {**auth(ana), "name": "Ana", "seats": 3,
                                        "invite": [bot["player"]]}).json()  # fmt: skip
    code = invited["code"]
    assert live.post(f"/api/tables/{code}/join", {**auth(bot), "name": "x"}).status_code == 201
    again = live.post(f"/api/tables/{code}/join", {**auth(other), "name": "x"})
    assert refused(again) == (403, "bots_not_allowed")
    assert live.post(f"/api/tables/{code}/join", {**auth(bruno), "name": "x"}).status_code == 201
    seats = live.get(f"/api/tables/{code}").json()["players"]
    assert [(p["name"], p["bot_account"]) for p in seats] == [
        ("Ana", False),
        ("Swatter", True),
        ("Bruno", False),
    ]
    bad = live.post("/api/tables", {**auth(ana), "name": "Ana", "invite": ["no!"]})
    assert refused(bad) == (400, "bad_options")


@pytest.fixture
async def bot_duo(live: Live) -> AsyncIterator[tuple[Player, Player, str]]:
    """A two-seat table that takes bot accounts, in the lobby, both connected: Ana (host,
    seat 0) and a bot account of hers (seat 1)."""
    ana = await asyncio.to_thread(register, live, "Ana")
    bot = await asyncio.to_thread(bot_of, live, ana, "Swatter")
    body = {**auth(ana), "name": "Ana", "seats": 2, "bot_accounts": True, **SLOW}
    host = (await asyncio.to_thread(live.post, "/api/tables", body)).json()
    path = f"/api/tables/{host['code']}/join"
    seat = (await asyncio.to_thread(live.post, path, {**auth(bot), "name": "x"})).json()
    async with (
        Player.connect(live.ws, host["code"], host["token"]) as ana_player,
        Player.connect(live.ws, host["code"], seat["token"]) as bot_player,
    ):
        yield ana_player, bot_player, host["code"]


@pytest.mark.anyio
async def test_a_bot_account_that_forges_its_times_is_refused_and_flagged_r21(
    live: Live, bot_duo: tuple[Player, Player, str]
) -> None:
    ana, bot, code = bot_duo
    started = await start(ana, bot)
    shown = await until_round(ana, bot, started["view"], least=2)
    a, b = shown["view"]["centre"][:2]
    # Claims under the human floor (100 ms), whenever they are sent: refused, counted.
    assert await error_of(bot, type="slap", card=a, ms=0, turn=shown["turn"]) == "too_fast"
    assert await error_of(bot, type="slap", card=b, ms=60, turn=shown["turn"]) == "too_fast"
    info = (await asyncio.to_thread(live.get, f"/api/tables/{code}")).json()
    assert [p["too_fast"] for p in info["players"]] == [0, 2]
    assert info["players"][1]["bot_account"] is True


@pytest.mark.anyio
async def test_a_bot_account_that_floods_is_rate_limited_as_anyone(
    bot_duo: tuple[Player, Player, str],
) -> None:
    ana, bot, _ = bot_duo
    # The seat's bucket holds BURST (less what its hello and start took) and takes
    # RATE_PER_S more a second, and a socket with more than MAX_ERRORS refusals in its window
    # is dropped: 55 overflow the bucket even when a busy machine spreads them over most of
    # a second (50 did not, once, on a clean clone's CI), and never earn the drop (60 do).
    flood = 55
    assert flood - BURST < MAX_ERRORS
    for _ in range(flood):
        await bot.send(type="ready")
    codes = []
    with pytest.raises(TimeoutError):
        while True:
            msg = await bot.recv(timeout=0.5)
            if msg["type"] == "error":
                codes.append(msg["code"])
    assert 1 <= len(codes) <= MAX_ERRORS and set(codes) == {"rate_limited"}
    await start(ana, bot)  # the table still plays
    with pytest.raises(ConnectionClosed) as closed:  # a flood closes its socket
        for _ in range(500):
            await bot.send(type="pong", id=0)
        while True:
            await bot.recv(timeout=5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


@pytest.mark.anyio
async def test_an_example_agent_plays_a_whole_game_against_a_scripted_human_on_a_real_server(
    tmp_path: Path,
) -> None:
    examples = Path(__file__).resolve().parents[2] / "examples"
    make_agent = runpy.run_path(str(examples / "table_agent.py"))["make_agent"]
    agent = make_agent("search", pace="hard", seed=7)
    # Its hands at a person's pace (the subject: never under the floor), its reveals quick:
    # a person's pause before each of its 26 reveals made most of this test's half a minute.
    agent.reveal_ms = lambda view: 50.0
    with running_server(tmp_path / "f.db", args=["--bot-pace", "0.05"]) as (base, port, _):
        owner = await asyncio.to_thread(Account.register, base, "Ana")
        bot = await asyncio.to_thread(Account.register_bot, base, owner, "Swatter")
        client = Client(base)
        # remove 60: long enough to be rated (at least 28 reveals, docs/PLAYERS.md)
        options = {"seats": 2, "remove": 60, "slap_window_ms": 2500, "turn_timeout_ms": 4000,
                   "bot_accounts": True}  # fmt: skip
        host = await client.create(owner, **options)
        seated = await client.join(host.code, bot)
        # Ana slaps as a person does (a spread of times): a script's steady ones would put her
        # under fair-play review, her game unrated.
        async with Player.connect(
            f"ws://127.0.0.1:{port}", host.code, host.token, reaction_ms=480, human=True
        ) as ana:
            playing = asyncio.create_task(client.play(seated, agent, timeout=120))
            await until_all_ready(ana)
            await ana.send(type="start")
            over, ended = await asyncio.gather(playing, ana.play(timeout=120))
        assert over["type"] == ended["type"] == "over"
        assert over["result"] == ended["result"]
        table = over["table"]
        assert [p["bot_account"] for p in table["players"]] == [False, True]
        assert table["players"][1]["too_fast"] == 0  # a person's pace: never under the floor
        hands = [m for m in client.received if m["type"] == "accepted"]
        rounds = [m for m in client.received if m["type"] == "round"]
        assert rounds and hands, "the game had slap rounds, and the agent laid hands in them"
        async with httpx.AsyncClient(base_url=base) as http:
            record = (await http.get(f"/api/tables/{host.code}/record")).json()
            summary = (await http.get(f"/api/games/{record['id']}")).json()
            people = (await http.get("/api/leaderboard")).json()
            programs = (await http.get("/api/leaderboard?pool=bots")).json()
            profile = (await http.get(f"/api/players/{bot.player}")).json()
        verify_record(record)
        laid = [s for t in record["turns"] for s in (t.get("round") or {}).get("slaps", [])]
        assert len([s for s in laid if s["seat"] == 1]) == len(hands)  # every hand it was told
        # The table took bot accounts: Ana chose it, so both ratings moved, in one field.
        assert [(s["bot"], s["rated"]) for s in summary["seats"]] == [(False, True), (True, True)]
        assert [p["id"] for p in people["players"]] == [owner.player]
        assert [(p["id"], p["bot"]) for p in programs["players"]] == [(bot.player, True)]
        assert (profile["bot"], profile["owner"], profile["rated_games"]) == (
            True,
            owner.player,
            1,
        )
