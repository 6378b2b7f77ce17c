"""The HTTP routes on a real server (uvicorn in a thread, its own protocols): tables, joins,
records, errors; the WebSockets of these tests are real ones too, read synchronously."""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect

from flyswat.bots import LEVELS
from flyswat.server.app import WEB_DIR
from flyswat.wire import Assembler

from .conftest import SERVER_MESSAGE, Live, serve

FAST = {"slap_window_ms": 600, "turn_timeout_ms": 300, "remove": 100}


class Socket:
    """A real WebSocket read synchronously: pings answered, every message checked against
    the protocol and given its whole view (protocol 3's deltas put together)."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws, self.wire = ws, Assembler()

    def send_json(self, msg: dict[str, Any]) -> None:
        self.ws.send(json.dumps(msg))

    def receive_json(self) -> dict[str, Any]:
        while True:
            msg = json.loads(self.ws.recv(timeout=10))
            if msg["type"] != "ping":
                SERVER_MESSAGE.validate_python(msg)
                return self.wire.feed(msg)
            self.send_json({"type": "pong", "id": msg["id"]})


class Client(httpx.Client):
    """HTTP to the live server, and its WebSockets."""

    def __init__(self, live: Live) -> None:
        super().__init__(base_url=live.http, timeout=10)
        self.live, self.app = live, live.app

    @contextlib.contextmanager
    def websocket_connect(self, path: str) -> Iterator[Socket]:
        with connect(self.live.ws + path, max_size=2**20) as ws:
            yield Socket(ws)


def eventually(check: Any, timeout: float = 10) -> None:
    """Wait for the server (on its own thread) to have done what ``check`` checks."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the server never got there"
        time.sleep(0.01)


@pytest.fixture
def client(db_url: str) -> Iterator[Client]:
    with serve(db_url, bot_pace=0.01) as live, Client(live) as c:
        yield c


def create(client: Client, **body: Any) -> dict[str, Any]:
    reply = client.post("/api/tables", json={"name": "Ana", **FAST, **body})
    assert reply.status_code == 201, reply.text
    return dict(reply.json())


def test_health_says_ok(client: Client) -> None:
    health = client.get("/health").json()
    assert {k: health[k] for k in ("ok", "tables", "nodes")} == {
        "ok": True,
        "tables": 0,
        "nodes": 1,
    }
    assert health["node"] and isinstance(health["pid"], int)


def test_a_table_is_created_joined_and_listed(client: Client) -> None:
    seated = create(client, seats=3, bots=[{"seat": 1, "level": "easy"}])
    assert seated["seat"] == 0 and seated["host"] and seated["token"]
    code = seated["code"]
    assert seated["ws_url"] == f"/ws/{code}" and seated["table_url"] == f"/?table={code}"
    listed = client.get("/api/tables").json()
    assert [t["code"] for t in listed["tables"]] == [code]  # a seat is free: it is listed
    assert listed["levels"] == list(LEVELS)
    joined = client.post(f"/api/tables/{code}/join", json={"name": "  Bruno  "}).json()
    assert joined["seat"] == 2 and not joined["host"] and joined["token"] != seated["token"]
    info = client.get(f"/api/tables/{code}").json()
    assert [(p["name"], p["kind"], p["ready"]) for p in info["players"]] == [
        ("Ana", "human", False),
        ("Bot 2", "bot", True),
        ("Bruno", "human", False),
    ]
    assert info["state"] == "lobby" and info["commitment"] is None
    assert client.get("/api/tables").json()["tables"] == []  # full: nobody can join it
    full = client.post(f"/api/tables/{code}/join", json={"name": "Carla"})
    assert (full.status_code, full.json()["error"]) == (409, "table_full")


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({"seats": 9}, 400, "malformed"),
        ({"seats": 2, "bots": [{"seat": 2}]}, 400, "bad_options"),
        ({"seats": 2, "bots": [{"seat": 0}, {"seat": 1}]}, 400, "bad_options"),
        ({"bots": [{"seat": 1}, {"seat": 1}]}, 400, "bad_options"),
        ({"bots": [{"seat": 1, "level": "godlike"}]}, 400, "bad_level"),
        ({"remove": 110, "seats": 4}, 400, "bad_rules"),
        ({"name": ""}, 400, "malformed"),
        ({"name": "\x07bell"}, 400, "bad_name"),
        ({"colour": "red"}, 400, "malformed"),
    ],
)
def test_bad_table_options_are_refused_and_no_table_is_made(
    client: Client, body: dict[str, Any], status: int, error: str
) -> None:
    reply = client.post("/api/tables", json={"name": "Ana", **body})
    assert (reply.status_code, reply.json()["error"]) == (status, error)
    assert client.get("/health").json()["tables"] == 0


def test_unknown_tables_and_unfinished_records_are_clear_errors(client: Client) -> None:
    assert client.get("/api/tables/NOPE42").json()["error"] == "not_found"
    assert client.post("/api/tables/NOPE42/join", json={"name": "x"}).status_code == 404
    assert client.get("/api/tables/NOPE42/record").status_code == 404
    code = create(client)["code"]
    reply = client.get(f"/api/tables/{code}/record")
    assert (reply.status_code, reply.json()["error"]) == (409, "not_over")
    assert client.post("/api/tables", content=b"{oops").json()["error"] == "malformed"


def test_only_the_host_token_starts_a_table_over_http(client: Client) -> None:
    seated = create(client, seats=2)
    code = seated["code"]
    joined = client.post(f"/api/tables/{code}/join", json={"name": "Bruno"}).json()
    bad = client.post(f"/api/tables/{code}/start", json={"token": "guess"})
    assert (bad.status_code, bad.json()["error"]) == (403, "bad_token")
    guest = client.post(f"/api/tables/{code}/start", json={"token": joined["token"]})
    assert (guest.status_code, guest.json()["error"]) == (403, "not_host")
    early = client.post(f"/api/tables/{code}/start", json={"token": seated["token"]})
    assert (early.status_code, early.json()["error"]) == (409, "not_ready")
    with client.websocket_connect(f"/ws/{code}") as ws:
        ws.send_json({"type": "hello", "token": joined["token"]})
        assert ws.receive_json()["type"] == "welcome"  # the seat's socket, then its ready
        ws.send_json({"type": "ready"})
        ready = False
        while not ready:
            msg = ws.receive_json()
            ready = msg["type"] == "table" and msg["table"]["players"][1]["ready"]
    info = client.post(f"/api/tables/{code}/start", json={"token": seated["token"]}).json()
    assert info["state"] == "playing" and len(info["commitment"]) == 64
    late = client.post(f"/api/tables/{code}/join", json={"name": "Carla"})
    assert late.json()["error"] == "already_started"


def play_out(client: Client, *, as_player: bool) -> tuple[str, dict[str, Any], Any]:
    """Start a table of the host and a bot and watch it to its end (as the host, or as a
    spectator); returns its code, the host's seating and the ``over`` message."""
    seated = create(client, seats=2, bots=[{"seat": 1, "level": "hard"}])
    code = seated["code"]
    client.post(f"/api/tables/{code}/start", json={"token": seated["token"]})
    with client.websocket_connect(f"/ws/{code}") as ws:
        ws.send_json({"type": "hello", "token": seated["token"] if as_player else None})
        while (msg := ws.receive_json())["type"] != "over":
            pass
    return code, seated, msg


def test_an_absent_table_plays_itself_out_in_process_and_its_record_is_served(
    client: Client,
) -> None:
    """Nobody plays: the turn timeout reveals for the humans, the bots play."""
    code, _, msg = play_out(client, as_player=False)
    record = client.get(f"/api/tables/{code}/record").json()
    assert record["seed"] == msg["seed"] and record["result"] == msg["result"]
    assert client.get(f"/api/tables/{code}").json()["state"] == "over"


def test_a_finished_table_nobody_watches_leaves_memory_and_comes_back_on_demand(
    client: Client,
) -> None:
    code, seated, msg = play_out(client, as_player=True)
    server = client.app.state.runner.directory
    eventually(lambda: code not in server.tables)  # the last connection left a finished game
    assert client.get("/health").json()["tables"] == 0
    assert client.get(f"/api/tables/{code}/record").json()["result"] == msg["result"]
    info = client.get(f"/api/tables/{code}").json()
    assert info["state"] == "over" and info["seed"] == msg["seed"]
    with client.websocket_connect(f"/ws/{code}") as ws:
        ws.send_json({"type": "hello", "token": seated["token"]})
        welcome = ws.receive_json()
        assert welcome["type"] == "welcome" and welcome["view"]["result"] == msg["result"]
    eventually(lambda: code not in server.tables)


@pytest.mark.skipif(not (WEB_DIR / "index.html").exists(), reason="no web client yet")
def test_the_web_client_is_served_at_the_root(client: Client) -> None:
    reply = client.get("/")
    assert reply.status_code == 200 and "html" in reply.headers["content-type"]
    assert client.get("/health").json()["ok"]  # the routes take precedence


@pytest.mark.parametrize("path", ["/", "/ws", "/index.html", "/api/leaderboard", "/nowhere"])
def test_a_websocket_anywhere_but_a_tables_is_refused_with_403_and_no_server_error(
    client: Client, path: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A stranger's WebSocket handshake on any other path is refused as ASGI says (a close
    before the accept: 403), not left unanswered (uvicorn's 500 and an error logged each
    time: a log a stranger could fill)."""
    with pytest.raises(InvalidStatus) as refused:
        connect(client.live.ws + path, open_timeout=5).close()
    assert refused.value.response.status_code == 403
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_player_back_in_the_middle_of_a_round_is_told_its_hands_again(
    client: Client,
) -> None:
    # Bruno stays connected and never slaps, so the round waits for him for its whole long
    # window: Ana's return always finds it open, however slow the machine.
    seated = create(client, seats=2, slap_window_ms=30_000, turn_timeout_ms=30_000, remove=60)
    code, token = seated["code"], seated["token"]
    bruno = client.post(f"/api/tables/{code}/join", json={"name": "Bruno"}).json()
    with client.websocket_connect(f"/ws/{code}") as other:
        other.send_json({"type": "hello", "token": bruno["token"]})
        other.send_json({"type": "ready"})
        while not (
            (m := other.receive_json())["type"] == "table" and m["table"]["players"][1]["ready"]
        ):
            pass
        assert client.post(f"/api/tables/{code}/start", json={"token": token}).status_code == 200
        with client.websocket_connect(f"/ws/{code}") as ws:
            ws.send_json({"type": "hello", "token": token})
            while True:
                msg = ws.receive_json()
                v = msg.get("view")
                if msg["type"] == "reveal" and msg["round"] and v["round"] and v["centre"]:
                    card = v["centre"][0]
                    time.sleep(0.12)  # no human slaps within 100 ms of the reveal, nor may a test
                    ws.send_json({"type": "slap", "card": card, "ms": 300, "turn": msg["turn"]})
                    break
                if v and v["round"] is None and not v["over"] and msg["type"] in MOVES:
                    if v["to_move"] == 0:
                        ws.send_json({"type": "reveal"})
                    else:
                        other.send_json({"type": "reveal"})
            while (msg := ws.receive_json())["type"] != "accepted":
                pass
        with client.websocket_connect(f"/ws/{code}") as ws:
            ws.send_json({"type": "hello", "token": token})
            welcome = ws.receive_json()
            assert welcome["type"] == "welcome" and welcome["view"]["round"]["mine"] == [card]
            accepted = []  # then each of its hands again, before the table's update
            while (msg := ws.receive_json())["type"] != "table":
                accepted += [msg["card"]] if msg["type"] == "accepted" else []
            assert accepted == [card]


MOVES = ("welcome", "started", "reveal", "round")
