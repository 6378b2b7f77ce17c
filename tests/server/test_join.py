"""A join is idempotent over real HTTP: a join sent again — its reply lost to a dropped
connection or a ``kill -9`` — gets the seat it took and its token, and stores nothing; by
the request key of an anonymous join, by the identity of a player (Play now too)."""

from __future__ import annotations

import asyncio
import secrets
import socket
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from flyswat.table.seats import seat_token

from .conftest import FAST, Live, Player, create_table, free_port
from .test_players import auth, register
from .test_resilience import Process, processes

__all__ = ["processes"]  # the fixture, shared with the crash tests


def _key() -> str:
    return secrets.token_urlsafe(16)  # 22 characters, as the browser draws them


def _events(live: Live, code: str) -> list[str]:
    return [kind for kind, _ in live.app.state.runner.store.events(code)]


def _join(live: Live, code: str, body: dict[str, Any]) -> Any:
    return live.post(f"/api/tables/{code}/join", body)


@pytest.mark.anyio
async def test_a_join_sent_again_with_its_key_gets_the_same_seat_and_token(live: Live) -> None:
    code = (await create_table(live, seats=4))["code"]
    key = _key()
    first = await asyncio.to_thread(_join, live, code, {"name": "Bruno", "request": key})
    stored = _events(live, code)
    again = await asyncio.to_thread(_join, live, code, {"name": "Bruno", "request": key})
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json() and first.json()["seat"] == 1
    assert _events(live, code) == stored  # nothing new stored
    info = (await asyncio.to_thread(live.get, f"/api/tables/{code}")).json()
    assert [p["joined"] for p in info["players"]] == [True, True, False, False]
    async with Player.connect(live.ws, code, again.json()["token"]) as bruno:
        assert bruno.seat == 1


@pytest.mark.anyio
async def test_a_join_with_another_key_takes_another_seat(live: Live) -> None:
    code = (await create_table(live, seats=4))["code"]
    one = await asyncio.to_thread(_join, live, code, {"name": "Bruno", "request": _key()})
    two = await asyncio.to_thread(_join, live, code, {"name": "Bruno", "request": _key()})
    three = await asyncio.to_thread(_join, live, code, {"name": "Bruno"})  # no key
    assert [r.json()["seat"] for r in (one, two, three)] == [1, 2, 3]
    assert len({r.json()["token"] for r in (one, two, three)}) == 3


@pytest.mark.parametrize(
    "request_key",
    [
        "k" * 21,
        "k" * 21 + "!",
        "k" * 65,
        "k" * 11 + " " + "k" * 10,
        12345678901234567890123,
        ["k" * 22],
        "é" * 22,
    ],
)
def test_a_malformed_request_key_is_refused_and_changes_nothing(
    live: Live, request_key: Any
) -> None:
    code = live.post("/api/tables", {"name": "Ana", "seats": 3, **FAST}).json()["code"]
    before = (live.get(f"/api/tables/{code}").json(), _events(live, code))
    reply = _join(live, code, {"name": "Bruno", "request": request_key})
    assert reply.status_code == 400 and reply.json()["error"] == "malformed", reply.text
    assert "request" in reply.json()["message"]
    assert (live.get(f"/api/tables/{code}").json(), _events(live, code)) == before


def test_an_identified_player_joining_again_gets_their_seat_not_a_refusal(live: Live) -> None:
    code = live.post("/api/tables", {"name": "Ana", "seats": 3, **FAST}).json()["code"]
    bruno = register(live, "Bruno")
    first = _join(live, code, {"name": "x", **auth(bruno)})
    stored = _events(live, code)
    again = _join(live, code, {"name": "x", **auth(bruno), "request": _key()})
    assert (first.status_code, again.status_code) == (201, 201), again.text
    assert again.json() == first.json()
    assert _events(live, code) == stored
    wrong = _join(live, code, {"name": "x", "player": bruno["player"], "secret": "not-it"})
    assert (wrong.status_code, wrong.json()["error"]) == (403, "bad_secret")


def test_the_identified_host_joining_their_own_table_gets_the_host_seat(live: Live) -> None:
    ana = register(live, "Ana")
    made = live.post("/api/tables", {"name": "x", "seats": 3, **FAST, **auth(ana)}).json()
    again = _join(live, made["code"], {"name": "x", **auth(ana)})
    assert again.status_code == 201 and again.json() == made


def test_play_now_sent_again_answers_the_seat_already_held(live: Live) -> None:
    who = [register(live, f"Pl{i}") for i in range(4)]
    first = live.post("/api/play", auth(who[0]))
    again = live.post("/api/play", auth(who[0]))
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()
    code = first.json()["code"]
    seats = [live.post("/api/play", auth(w)).json() for w in who[1:]]
    assert {s["code"] for s in seats} == {code}
    assert live.get(f"/api/tables/{code}").json()["state"] == "playing"  # full: it started
    stored = _events(live, code)
    last = live.post("/api/play", auth(who[3]))  # the join that filled it, sent again
    assert last.status_code == 201 and last.json() == seats[-1]
    after = _events(live, code)  # the game plays on by its clock: a reveal 4 s on, say
    assert after[: len(stored)] == stored and "join" not in after[len(stored) :]


def _stored_joins(db: Path, code: str) -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        row = con.execute(
            "SELECT count(*) FROM flyswat_events WHERE code = ? AND kind = 'join'", (code,)
        ).fetchone()
    finally:
        con.close()
    return int(row[0])


def _join_unread(url: str, code: str, body: bytes) -> socket.socket:
    """Send a join and never read its reply (the caller keeps the socket open)."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=5)
    head = (f"POST /api/tables/{code}/join HTTP/1.1\r\nHost: {host}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")  # fmt: skip
    sock.sendall(head.encode() + body)
    return sock


@pytest.mark.anyio
async def test_a_join_stored_before_a_kill_9_and_sent_again_after_the_restart_gets_its_seat(
    tmp_path: Path, processes: list[Process]
) -> None:
    db_file = tmp_path / "crash.db"
    db, port = f"sqlite:///{db_file}", free_port()
    first = Process(db, port)
    processes.append(first)
    live = Live(first.url, first.ws, None)
    code = (await create_table(live, seats=3))["code"]
    key = _key()
    body = f'{{"name": "Bruno", "request": "{key}"}}'.encode()
    sock = _join_unread(first.url, code, body)
    deadline = time.monotonic() + 10
    while _stored_joins(db_file, code) < 2:  # the host's and Bruno's: stored, reply unread
        assert time.monotonic() < deadline, "the join was not stored"
        await asyncio.sleep(0.02)
    await asyncio.to_thread(first.kill)
    sock.close()
    second = Process(db, port)
    processes.append(second)
    again = await asyncio.to_thread(_join, live, code, {"name": "Bruno", "request": key})
    assert again.status_code == 201, again.text
    assert (again.json()["seat"], again.json()["token"]) == (1, seat_token(key, code))
    assert _stored_joins(db_file, code) == 2  # the same seat: no second join stored
    info = (await asyncio.to_thread(live.get, f"/api/tables/{code}")).json()
    assert [p["joined"] for p in info["players"]] == [True, True, False]
    async with Player.connect(live.ws, code, again.json()["token"]) as bruno:
        assert bruno.seat == 1
    other = await asyncio.to_thread(_join, live, code, {"name": "Carla", "request": _key()})
    assert other.json()["seat"] == 2
