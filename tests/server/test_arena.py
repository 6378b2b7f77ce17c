"""Arenas through a real ``flyswat serve`` process: the operator makes one by their secret,
players join and are seated together at once, their game is rated and counted once for the
arena (a rematch at the same table is not), the finished players are paired again; an arena
and its tables survive the server's death; what an adversary tries is refused and changes
nothing."""

from __future__ import annotations

import argparse
import asyncio
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from flyswat.server import arena_store as st
from flyswat.server.settings import Settings, add_arguments
from flyswat.server.store import Store
from harness.server import Serve, free_ports

from .conftest import Player, Process
from .test_cluster import QUICK
from .test_players import auth, register

SECRET = "operator-secret-for-arenas"


def _serve(tmp_path: Path, started: list[Serve], db: str, *extra: str) -> Process:
    port = int(extra[extra.index("--port") + 1]) if "--port" in extra else free_ports(1)
    args = ["--workers", "1", "--port", str(port), "--db", db, "--exempt", "127.0.0.1",
            "--operator-secret", SECRET, *extra]  # fmt: skip
    started.append(Serve(args, tmp_path / f"arena-{port}.log", [port]))
    return Process(f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}", None)


def _make(server: Process, minutes: int = 10, **body: Any) -> httpx.Response:
    return httpx.post(server.http + "/api/operator/arenas", timeout=10,
                      json={"name": "Friday arena", "minutes": minutes, **body},
                      headers={"authorization": f"Bearer {SECRET}"})  # fmt: skip


def _me(server: Process, aid: str, who: dict[str, Any]) -> dict[str, Any]:
    reply = server.post(f"/api/arenas/{aid}/me", auth(who))
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def _seated(server: Process, aid: str, who: dict[str, Any], not_at: str = "") -> dict[str, Any]:
    """``who``'s seat once the arena pairs them (at a table other than ``not_at``)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        seat = _me(server, aid, who)["me"]["seat"]
        if seat is not None and seat["code"] != not_at:
            return dict(seat)
        time.sleep(0.2)
    raise AssertionError("never paired")


def _standing(server: Process, aid: str) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in server.get(f"/api/arenas/{aid}").json()["standings"]}


async def _play(server: Process, seats: list[dict[str, Any]], rematch: bool = False) -> Any:
    async def one(seat: dict[str, Any]) -> dict[str, Any]:
        async with Player.connect(server.ws, seat["code"], seat["token"], human=True) as pl:
            if rematch:
                await pl.expect("over", timeout=10)
                await pl.send(type="rematch")
                await pl.expect("rematched", timeout=20)
            return await pl.play(timeout=240)

    return await asyncio.gather(*(one(s) for s in seats))


def _until(check: Any, what: str) -> Any:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"never: {what}")


def test_players_who_join_are_seated_together_rated_counted_once_and_paired_again(
    tmp_path: Path, started: list[Serve]
) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    server = _serve(tmp_path, started, db)
    made = _make(server)
    assert made.status_code == 201, made.text
    arena = made.json()
    assert arena["phase"] == "running" and arena["minutes"] == 10 and arena["winner"] is None
    aid = arena["id"]
    assert [a["id"] for a in server.get("/api/arenas").json()["arenas"]] == [aid]
    ana, bea = register(server, "Ana"), register(server, "Bea")
    for who in (ana, bea):
        joined = server.post(f"/api/arenas/{aid}/join", auth(who))
        assert joined.status_code == 200, joined.text
    seats = [_seated(server, aid, who) for who in (ana, bea)]
    assert seats[0]["code"] == seats[1]["code"] and {s["seat"] for s in seats} == {0, 1}
    table = server.get(f"/api/tables/{seats[0]['code']}").json()
    assert not table["options"]["public"] and table["state"] == "playing"
    overs = asyncio.run(_play(server, seats))
    places = {o["table"]["game_id"] for o in overs}
    assert len(places) == 1
    first = _until(lambda: (s := _standing(server, aid)) and s["Ana"]["games"] == 1 and s,
                   "the game counted")  # fmt: skip
    games = {who["name"]: server.get(f"/api/players/{who['player']}/games").json()["games"][0]
             for who in (ana, bea)}  # fmt: skip
    for name, game in games.items():  # a point for the player behind, if rated in it
        assert game["game_id"] in places
        won = game["rated"] and game["place"] == 1 and games[_other(name)]["place"] == 2
        assert first[name]["points"] == (1 if won else 0), (first, games)
        assert first[name]["games"] == 1
    # The same two sit again at once, at another table, paired by the arena
    again = [_seated(server, aid, who, not_at=seats[0]["code"]) for who in (ana, bea)]
    assert again[0]["code"] == again[1]["code"] != seats[0]["code"]
    # Their second game counts too, once: one counted game per table, each its own
    asyncio.run(_play(server, again))
    _until(lambda: {s["games"] for s in _standing(server, aid).values()} == {2}, "counted")
    store = Store(db)
    try:
        with store.engine.connect() as conn:
            tables = st.tables_of(conn, aid)
    finally:
        store.close()
    played, paired_next = tables[:2], tables[2:]  # and paired a third time since
    assert [t["code"] for t in played] == [seats[0]["code"], again[0]["code"]]
    assert all(t["counted"] for t in played) and len({t["game_id"] for t in played}) == 2
    assert all(t["game_id"] is None for t in paired_next)


def _other(name: str) -> str:
    return "Bea" if name == "Ana" else "Ana"


def test_an_arena_and_its_table_survive_the_servers_death(
    tmp_path: Path, started: list[Serve]
) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    server = _serve(tmp_path, started, db)
    aid = _make(server).json()["id"]
    ana, bea = register(server, "Ana"), register(server, "Bea")
    for who in (ana, bea):
        assert server.post(f"/api/arenas/{aid}/join", auth(who)).status_code == 200
    code = _seated(server, aid, ana)["code"]
    started.pop().kill(signal.SIGKILL)  # the node dies
    server = _serve(tmp_path, started, db)
    seats = [_seated(server, aid, who) for who in (ana, bea)]
    assert {s["code"] for s in seats} == {code}  # the same table, restored
    asyncio.run(_play(server, seats))
    _until(lambda: {s["games"] for s in _standing(server, aid).values()} == {1}, "counted")
    assert [a["id"] for a in server.get("/api/arenas").json()["arenas"]] == [aid]


def test_what_is_refused_changes_nothing(tmp_path: Path, started: list[Serve]) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    server = _serve(tmp_path, started, db)
    wrong = httpx.post(server.http + "/api/operator/arenas", json={"name": "X", "minutes": 5},
                       headers={"authorization": "Bearer not-the-secret-at-all"})  # fmt: skip
    assert (wrong.status_code, wrong.json()["error"]) == (403, "bad_secret")
    for body in ({"minutes": 0}, {"minutes": 721}, {"name": "", "minutes": 5},
                 {"minutes": 5, "starts_in_s": -1}, {"name": "x" * 33, "minutes": 5}):  # fmt: skip
        refused = _make(server, **body) if "name" not in body else httpx.post(
            server.http + "/api/operator/arenas", json=body, timeout=10,
            headers={"authorization": f"Bearer {SECRET}"})  # fmt: skip
        assert refused.status_code == 400, (body, refused.text)
    assert server.get("/api/arenas").json()["arenas"] == []
    aid = _make(server, starts_in_s=3600).json()["id"]
    ana = register(server, "Ana")
    bot = server.post("/api/bots", {**auth(ana), "name": "Agent Smith"}).json()
    cases = [
        (server.post("/api/arenas/n%20o/join", auth(ana)), 400),
        (server.post("/api/arenas/nope/join", auth(ana)), 404),
        (server.post(f"/api/arenas/{aid}/join", {**auth(ana), "secret": "x" * 30}), 403),
        (server.post(f"/api/arenas/{aid}/join", auth(bot)), 403),
        (server.post(f"/api/arenas/{aid}/leave", auth(ana)), 409),
        (server.get("/api/arenas/nope"), 404),
        (server.get("/api/players/bad%20id/arenas"), 400),
    ]
    for reply, status in cases:
        assert reply.status_code == status, reply.text
    view = server.get(f"/api/arenas/{aid}").json()
    assert view["arena"]["phase"] == "upcoming" and view["standings"] == []
    # joined before the start: listed, not paired
    assert server.post(f"/api/arenas/{aid}/join", auth(ana)).json()["me"]["seat"] is None
    assert server.get(f"/api/arenas/{aid}").json()["arena"]["players"] == 1


def test_an_ended_arena_shows_its_winner_and_the_players_profiles_their_places(
    tmp_path: Path, started: list[Serve]
) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    server = _serve(tmp_path, started, db)
    ana, bea = register(server, "Ana"), register(server, "Bea")
    store = Store(db)  # an arena that ended a minute ago, as the store keeps it
    now = time.time()
    try:
        with store.engine.begin() as conn:
            st.create(conn, "past1", "Past arena", now - 660, now - 60, now - 700)
            st.join(conn, "past1", ana["player"], "Ana", now - 600)
            st.join(conn, "past1", bea["player"], "Bea", now - 600)
            conn.execute(
                st.arena_players.update()
                .where(st.arena_players.c.player == bea["player"])
                .values(points=5, games=2, wins=2)
            )
    finally:
        store.close()
    ended = _until(lambda: (a := server.get("/api/arenas/past1").json()["arena"])["winner"]
                   and a, "the standings frozen")  # fmt: skip
    assert ended["phase"] == "ended" and ended["winner"]["name"] == "Bea"
    assert ended["winner"]["points"] == 5
    refused = server.post("/api/arenas/past1/join", auth(ana))
    assert (refused.status_code, refused.json()["error"]) == (409, "arena_over")
    bea_results = server.get(f"/api/players/{bea['player']}/arenas").json()
    assert bea_results["won"] == 1
    assert bea_results["arenas"][0] | {} == {
        "id": "past1",
        "name": "Past arena",
        "place": 1,
        "points": 5,
        "games": 2,
        "players": 2,
        "won": True,
    }
    ana_results = server.get(f"/api/players/{ana['player']}/arenas").json()
    assert ana_results["won"] == 0 and ana_results["arenas"][0]["place"] == 2


def test_a_schedule_given_to_serve_makes_the_current_arena_and_the_next(
    tmp_path: Path, started: list[Serve]
) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    server = _serve(tmp_path, started, db, "--arena-schedule", "30:20")
    arenas = _until(lambda: len(a := server.get("/api/arenas").json()["arenas"]) >= 1 and a,
                    "the schedule's arenas")  # fmt: skip
    assert all(a["id"].startswith("s30m20t") and a["minutes"] == 20 for a in arenas)
    assert {a["phase"] for a in arenas} <= {"running", "upcoming"}
    started.pop().kill(signal.SIGKILL)
    server = _serve(tmp_path, started, db, "--arena-schedule", "30:20")  # made once, not again
    again = _until(lambda: server.get("/api/arenas").json()["arenas"], "listed again")
    assert [a["id"] for a in again][: len(arenas)] == [a["id"] for a in arenas]


@pytest.mark.parametrize("bad", ["7:5", "60:61", "sixty", "60:0"])
def test_a_schedule_that_does_not_make_sense_stops_serve_naming_it(bad: str) -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser, {"FLYSWAT_ARENA_SCHEDULE": bad})
    with pytest.raises(SystemExit) as stopped:
        Settings.from_args(parser.parse_args([]))
    assert "--arena-schedule" in str(stopped.value.code)


def test_when_the_node_pairing_an_arena_dies_its_table_and_its_pairing_go_on_elsewhere(
    tmp_path: Path, started: list[Serve], pg_url: str, redis_url: str
) -> None:
    ports = [free_ports(1) for _ in range(2)]
    for i, port in enumerate(ports):
        _serve(tmp_path, started, pg_url, "--port", str(port), "--redis", redis_url,
               "--node-id", f"n{i}", "--advertise", f"http://127.0.0.1:{port}", *QUICK)  # fmt: skip
    at = [Process(f"http://127.0.0.1:{p}", f"ws://127.0.0.1:{p}", None) for p in ports]
    aid = _make(at[0]).json()["id"]
    ana, bea = register(at[1], "Ana"), register(at[1], "Bea")
    for who in (ana, bea):
        assert at[1].post(f"/api/arenas/{aid}/join", auth(who)).status_code == 200
    code = _seated(at[1], aid, ana)["code"]
    store = Store(pg_url)
    try:
        with store.engine.connect() as conn:
            pairer = conn.execute(st.arenas.select().where(st.arenas.c.id == aid)).mappings()
            dead = int(pairer.one()["pairer"][1:])  # n0 or n1: the node that made the table
    finally:
        store.close()
    started[dead].kill(signal.SIGKILL)
    alive = at[1 - dead]
    seats = [_seated(alive, aid, who) for who in (ana, bea)]  # the table, adopted
    assert {s["code"] for s in seats} == {code}
    asyncio.run(_play(alive, seats))
    standing = _until(lambda: (s := _standing(alive, aid)) and s["Ana"]["games"] == 1 and s,
                      "the game counted")  # fmt: skip
    assert standing["Bea"]["games"] == 1
    nxt = [_seated(alive, aid, who, not_at=code) for who in (ana, bea)]  # paired by the other
    assert nxt[0]["code"] == nxt[1]["code"] != code
