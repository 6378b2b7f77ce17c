"""Players over HTTP and the socket: identities, Play now, rematch, profiles, ratings, and
what an adversary tries (forged ids, someone else's secret, names posing as bots, huge pages,
a rematch by someone who did not play)."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from websockets.asyncio.client import connect

from flyswat.players.identity import name_key
from flyswat.record import verify_record

from .conftest import Live, Player


def register(live: Live, name: str) -> dict[str, Any]:
    reply = live.post("/api/players", {"name": name})
    assert reply.status_code == 201, reply.text
    return dict(reply.json())


def auth(who: dict[str, Any]) -> dict[str, str]:
    return {"player": who["player"], "secret": who["secret"]}


def test_a_name_is_chosen_once_and_a_second_one_is_shown_with_a_tag(live: Live) -> None:
    ana = register(live, "  Ana  ")
    assert ana["name"] == "Ana" and len(ana["secret"]) >= 24
    names = {"Ana"}
    for same in ["ana", "ANA", "Ána", "Ａｎａ"]:
        other = register(live, same)
        assert re.fullmatch(r".{3} #[A-Z2-9]{3}", other["name"]), other["name"]
        names.add(name_key(other["name"]))
    assert len(names) == 5  # every one of them told apart
    register(live, "W" * 32)
    assert register(live, "w" * 32)["name"].startswith("w" * 27 + " #")  # fits in 32
    invisible = live.post("/api/players", {"name": "A\u200bna"})  # not printable at all
    assert (invisible.status_code, invisible.json()["error"]) == (400, "bad_name")
    profile = live.get(f"/api/players/{ana['player']}").json()
    assert profile["name"] == "Ana" and profile["rating"] == 1000 and profile["games"] == 0
    assert "secret" not in str(profile) and ana["secret"] not in str(profile)


def test_a_name_that_looks_like_a_taken_one_is_tagged_and_a_blank_one_refused(live: Live) -> None:
    """Characters drawn as nothing (a variation selector), blank-looking letters (Hangul
    fillers, the braille blank) and Cyrillic look-alikes do not make a new name: each is
    shown with a tag beside "Zed"; a name of blanks alone is refused, for a table too."""
    register(live, "Zed")
    for same in ["Zed\ufe0f", "Zed\u3164", "Zed\u2800", "Z\u0435d", "Z\u0415d"]:
        other = register(live, same)
        assert re.fullmatch(r"Z.d\ufe0f? #[A-Z2-9]{3}", other["name"]), (same, other["name"])
    for blank in ["\u3164", "\u2800", "\u115f\u1160", "\uffa0 \u3164"]:
        for path in ("/api/players", "/api/tables"):
            reply = live.post(path, {"name": blank})
            assert (reply.status_code, reply.json()["error"]) == (400, "bad_name"), (path, blank)
    register(live, "Lea Bo")  # a blank-looking letter between two words is a space between them
    assert re.fullmatch(r"Lea Bo #[A-Z2-9]{3}", register(live, "Lea\u3164Bo")["name"])
    numbered = live.post("/api/players", {"name": "Ana \u2116K7Q"})  # reads as a tag
    assert (numbered.status_code, numbered.json()["error"]) == (400, "bad_name")


@pytest.mark.parametrize(
    "name",
    [
        "Bot 2",
        "bot",
        "BOT3",
        "Bot Hard",
        "Máy 2",
        "Seat 1",
        "Platz 4",
        "B\u043et 2",
        "\u0412\u041e\u0422 2",
    ],
)
def test_nobody_can_pose_as_a_bot_or_a_seat(live: Live, name: str) -> None:
    reply = live.post("/api/players", {"name": name})
    assert (reply.status_code, reply.json()["error"]) == (400, "bad_name")
    anon = live.post("/api/tables", {"name": name})  # nor without an identity
    assert (anon.status_code, anon.json()["error"]) == (400, "bad_name")


def test_a_players_name_cannot_be_used_without_their_secret(live: Live) -> None:
    ana = register(live, "Ana")
    anon = live.post("/api/tables", {"name": "ana"})  # without the identity: a tagged guest
    shown = live.get(f"/api/tables/{anon.json()['code']}").json()["players"][0]
    assert shown["name"].startswith("ana #") and shown["player"] is None
    bruno = register(live, "Bruno")
    forged = live.post(
        "/api/tables", {"name": "x", "player": ana["player"], "secret": bruno["secret"]}
    )
    assert (forged.status_code, forged.json()["error"]) == (403, "bad_secret")
    half = live.post("/api/play", {"player": ana["player"], "secret": ""})
    assert (half.status_code, half.json()["error"]) == (403, "bad_secret")
    made_up = live.post("/api/play", {"player": "A" * 16, "secret": ana["secret"]})
    assert (made_up.status_code, made_up.json()["error"]) == (403, "bad_secret")
    # With the identity, the table uses the player's own name, whatever the body says.
    seated = live.post("/api/tables", {"name": "Bot 9", **auth(ana)})
    assert seated.status_code == 201
    info = live.get(f"/api/tables/{seated.json()['code']}").json()
    assert info["players"][0]["name"] == "Ana" and info["players"][0]["player"] == ana["player"]
    assert info["players"][0]["rating"] == 1000
    assert info["players"][1]["kind"] == "human" or info["players"][1]["rating"] is not None


@pytest.mark.parametrize(
    ("path", "status", "error"),
    [
        ("/api/players/nope", 400, "malformed"),
        ("/api/players/" + "x" * 65, 400, "malformed"),
        ("/api/players/%27%3B--%20drop", 400, "malformed"),
        ("/api/players/AAAAAAAAAAAAAAAA", 404, "no_player"),
        ("/api/players/AAAAAAAAAAAAAAAA/games", 404, "no_player"),
        ("/api/leaderboard?limit=100000", 400, "malformed"),
        ("/api/leaderboard?limit=0", 400, "malformed"),
        ("/api/leaderboard?offset=-1", 400, "malformed"),
        ("/api/leaderboard?offset=99999999999", 400, "malformed"),
        ("/api/leaderboard?limit=1e3", 400, "malformed"),
        ("/api/games/nope", 404, "not_found"),
        ("/api/games/nope/record", 404, "not_found"),
    ],
)
def test_bad_reads_get_a_clear_error(live: Live, path: str, status: int, error: str) -> None:
    reply = live.get(path)
    assert (reply.status_code, reply.json()["error"]) == (status, error)


def test_a_players_games_page_refuses_bad_cursors(live: Live) -> None:
    ana = register(live, "Ana")
    base = f"/api/players/{ana['player']}/games"
    assert live.get(base).json() == {"games": [], "next": None}
    for query in ["?limit=101", "?limit=-3", "?before=0", "?before=abc", "?limit=١٠"]:
        reply = live.get(base + query)
        assert (reply.status_code, reply.json()["error"]) == (400, "malformed"), query


@pytest.mark.parametrize(
    ("path", "body", "status", "error"),
    [
        ("/api/players", {}, 400, "malformed"),
        ("/api/players", {"name": ""}, 400, "malformed"),
        ("/api/players", {"name": "x" * 33}, 400, "malformed"),
        ("/api/players", {"name": "a\u0000b"}, 400, "bad_name"),
        ("/api/players", {"name": 5}, 400, "malformed"),
        ("/api/players", {"name": "Ana", "admin": True}, 400, "malformed"),
        ("/api/players/claim", {"code": "nope"}, 400, "malformed"),
        ("/api/players/claim", {"code": "ABCD-2345"}, 403, "bad_claim"),
        (
            "/api/players/claim-code",
            {"player": "AAAAAAAAAAAAAAAA", "secret": "x"},
            403,
            "bad_secret",
        ),
        ("/api/play", {}, 400, "malformed"),
    ],
)
def test_bad_bodies_change_nothing(
    live: Live, path: str, body: dict[str, Any], status: int, error: str
) -> None:
    reply = live.post(path, body)
    assert (reply.status_code, reply.json()["error"]) == (status, error)
    assert live.get("/api/leaderboard").json()["total"] == 0


def test_an_identity_moves_to_another_device_with_a_one_time_code(live: Live) -> None:
    ana = register(live, "Ana")
    code = live.post("/api/players/claim-code", auth(ana)).json()
    assert code["expires_in_s"] == 600 and len(code["code"]) == 9
    moved = live.post("/api/players/claim", {"code": code["code"].lower()}).json()
    assert moved["player"] == ana["player"] and moved["name"] == "Ana"
    assert moved["secret"] != ana["secret"]
    again = live.post("/api/players/claim", {"code": code["code"]})
    assert (again.status_code, again.json()["error"]) == (403, "bad_claim")  # spent
    old = live.post("/api/players/claim-code", auth(ana))
    assert (old.status_code, old.json()["error"]) == (403, "bad_secret")  # moved away
    assert live.post("/api/players/claim-code", auth(moved)).status_code == 200


def test_a_private_table_is_not_listed_but_can_be_joined_by_its_link(live: Live) -> None:
    seated = live.post("/api/tables", {"name": "Ana", "seats": 2, "public": False}).json()
    assert live.get("/api/tables").json()["tables"] == []
    assert live.post(f"/api/tables/{seated['code']}/join", {"name": "Bruno"}).status_code == 201


async def _play_out(*players: Player) -> list[dict[str, Any]]:
    return list(await asyncio.gather(*(p.play(timeout=90) for p in players)))


@pytest.mark.anyio
async def test_play_now_rematch_and_both_games_on_the_profile(live: Live) -> None:
    ana = await asyncio.to_thread(register, live, "Ana")
    bruno = await asyncio.to_thread(register, live, "Bruno")
    first = (await asyncio.to_thread(live.post, "/api/play", auth(ana))).json()
    second = (await asyncio.to_thread(live.post, "/api/play", auth(bruno))).json()
    assert second["code"] == first["code"] and second["seat"] == 1
    code = first["code"]
    async with (  # people's times: a steady one is a script's (docs/PLAYERS.md, Fair play)
        Player.connect(live.ws, code, first["token"], reaction_ms=480, human=True) as a,
        Player.connect(live.ws, code, second["token"], reaction_ms=480, human=True) as b,
    ):
        lobby = a.received[0]["table"]
        assert lobby["state"] == "lobby" and 0 < lobby["fill_in_ms"] <= 3000
        started = await a.expect("started", timeout=10)  # the bots took the free seats
        assert [p["kind"] for p in started["table"]["players"]] == ["human", "human", "bot", "bot"]
        b.received.append(await b.expect("started"))
        overs = await _play_out(a, b)
        assert overs[0]["type"] == "over"
        game1 = overs[0]["table"]["game_id"]
        refused = await _refusal(a, type="kick", target=1)
        assert refused == "already_started"
        await a.send(type="rematch")
        await b.send(type="rematch")
        await a.expect("rematched")
        a.received.append(await a.expect("started"))
        await b.expect("rematched")
        b.received.append(await b.expect("started"))
        overs = await _play_out(a, b)
        game2 = overs[0]["table"]["game_id"]
        assert game2 != game1 and overs[0]["table"]["games"] == 2
    games = (await asyncio.to_thread(live.get, f"/api/players/{ana['player']}/games")).json()
    assert [g["game_id"] for g in games["games"]] == [game2, game1]
    assert all(g["rated"] for g in games["games"])
    assert games["games"][0]["rating_before"] == games["games"][1]["rating_after"]
    profile = (await asyncio.to_thread(live.get, f"/api/players/{ana['player']}")).json()
    assert profile["games"] == 2 and profile["rating"] == games["games"][0]["rating_after"]
    assert profile["provisional"] and all(g["provisional"] for g in games["games"])  # 2 games
    page = (await asyncio.to_thread(live.get, f"/api/players/{ana['player']}/games?limit=1")).json()
    assert len(page["games"]) == 1 and page["next"] is not None
    rest = await asyncio.to_thread(
        live.get, f"/api/players/{ana['player']}/games?limit=1&before={page['next']}"
    )
    assert [g["game_id"] for g in rest.json()["games"]] == [game1]
    for gid in (game1, game2):
        record = (await asyncio.to_thread(live.get, f"/api/games/{gid}/record")).json()
        assert record["id"] == gid and verify_record(record) == []
        summary = (await asyncio.to_thread(live.get, f"/api/games/{gid}")).json()
        assert {s["player"] for s in summary["seats"]} >= {ana["player"], bruno["player"]}
        assert all(s["provisional"] for s in summary["seats"] if s["player"])
    latest = (await asyncio.to_thread(live.get, f"/api/tables/{code}/record")).json()
    assert latest["id"] == game2
    board = (await asyncio.to_thread(live.get, "/api/leaderboard")).json()
    assert {p["name"] for p in board["players"]} == {"Ana", "Bruno"} and board["total"] == 2
    assert all(p["provisional"] for p in board["players"])
    assert board["bots"]["hard"] > board["bots"]["normal"] > board["bots"]["easy"]


async def _refusal(player: Player, **msg: Any) -> str:
    """The code of the refusal of ``msg``. A player's slaps still on their way when its game
    ended are refused ``game_over`` before or after it, as they reach the server: those are
    passed over."""
    await player.send(**msg)
    while (error := await player.expect("error"))["code"] == "game_over":
        pass
    return str(error["code"])


@pytest.mark.anyio
async def test_the_host_gives_an_absent_seat_to_a_bot_and_removes_a_player(live: Live) -> None:
    ana = await asyncio.to_thread(register, live, "Ana")
    body = {"name": "Ana", "seats": 3, "slap_window_ms": 600, "turn_timeout_ms": 400,
            "remove": 100, **auth(ana)}  # fmt: skip
    host = (await asyncio.to_thread(live.post, "/api/tables", body)).json()
    code = host["code"]
    bruno = (
        await asyncio.to_thread(live.post, f"/api/tables/{code}/join", {"name": "Bruno"})
    ).json()
    carla = (
        await asyncio.to_thread(live.post, f"/api/tables/{code}/join", {"name": "Carla"})
    ).json()
    async with (
        Player.connect(live.ws, code, host["token"]) as a,
        Player.connect(live.ws, code, bruno["token"]) as b,
        Player.connect(live.ws, code, None) as watcher,
    ):
        assert await _refusal(b, type="kick", target=2) == "not_host"
        assert await _refusal(watcher, type="rematch") == "spectator"
        assert await _refusal(a, type="rematch") == "not_over"
        assert await _refusal(a, type="kick", target=0) == "bad_seat"
        assert await _refusal(a, type="kick", target=7) == "bad_seat"
        assert await _refusal(a, type="seat_bot", target=1) == "not_absent"  # Bruno is here
        assert await _refusal(a, type="seat_bot", target=2, level="godlike") == "bad_level"
        await a.send(type="seat_bot", target=2, level="hard")  # Carla never came
        table = (await a.expect("table"))["table"]
        assert table["players"][2]["kind"] == "bot" and table["players"][2]["level"] == "hard"
        await a.send(type="kick", target=1)
        assert (await b.expect("error"))["code"] == "kicked"
        info = (await asyncio.to_thread(live.get, f"/api/tables/{code}")).json()
        assert info["players"][1]["joined"] is False
    async with connect(f"{live.ws}/ws/{code}") as ws:  # her token opens nothing now
        await ws.send(json.dumps({"type": "hello", "token": carla["token"]}))
        assert json.loads(await ws.recv())["code"] == "bad_token"
    rejoin = await asyncio.to_thread(live.post, f"/api/tables/{code}/join", {"name": "Bruno"})
    assert rejoin.status_code == 201  # the seat is free again


@pytest.mark.anyio
async def test_leaving_gives_the_seat_up_and_the_host_passes_on(live: Live) -> None:
    host = (await asyncio.to_thread(live.post, "/api/tables", {"name": "Ana", "seats": 3})).json()
    code = host["code"]
    bruno = (
        await asyncio.to_thread(live.post, f"/api/tables/{code}/join", {"name": "Bruno"})
    ).json()
    async with (
        Player.connect(live.ws, code, host["token"]) as a,
        Player.connect(live.ws, code, bruno["token"]) as b,
    ):
        await a.send(type="leave")
        while True:
            table = (await b.expect("table"))["table"]
            if not table["players"][0]["joined"]:
                break
        assert table["players"][1]["host"] and not table["players"][0]["host"]
        assert table["state"] == "lobby"
        assert await _refusal(a, type="start") == "spectator"  # the socket only watches now
