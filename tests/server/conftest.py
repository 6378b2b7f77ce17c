"""Fixtures for the server tests: a real uvicorn server on a free port, scripted players.

The scripted player is a real WebSocket client (the ``websockets`` library) that plays like a
quick, careful human: it reveals on its turn, slaps the most valuable allowed fly it sees
with a plausible reaction time, then says done. It keeps every message it received.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import threading
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from pydantic import TypeAdapter
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from flyswat.protocol import ServerMessage
from flyswat.server.app import build_app
from flyswat.server.limits import Limits
from flyswat.server.transport import uvicorn_config
from flyswat.wire import Assembler
from harness.server import Serve, free_port, free_ports, pg_schema

SERVER_MESSAGE: TypeAdapter[Any] = TypeAdapter(ServerMessage)

FAST = {"slap_window_ms": 600, "turn_timeout_ms": 400, "remove": 90}


@pytest.fixture
def anyio_backend() -> str:
    """The async tests run on asyncio (the server's loop)."""
    return "asyncio"


@dataclass
class Live:
    """A server running in this process: its base URLs and the app (for its tables)."""

    http: str
    ws: str
    app: Any

    def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        return httpx.post(self.http + path, json=body, timeout=10)

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.http + path, timeout=10)


@contextlib.contextmanager
def in_thread(app: Any, config: dict[str, Any]) -> Iterator[int]:
    """uvicorn serving ``app`` with ``config`` on 127.0.0.1 in a thread; yields the port."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", **config)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(10)


@contextlib.contextmanager
def serve(
    db_url: str, bot_pace: float = 0.02, play_now_wait_ms: int = 3000, **settings: Any
) -> Iterator[Live]:
    """``build_app(db_url)`` served through the server's own protocols, in a thread."""
    # Tests make many tables from one address; ``settings`` change other limits.
    limits = Limits(exempt=frozenset({"127.0.0.1"}), **settings)
    app = build_app(db_url, bot_pace=bot_pace, limits=limits, play_now_wait_ms=play_now_wait_ms)
    with in_thread(app, uvicorn_config(limits)) as port:
        yield Live(f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}", app)


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'flyswat.db'}"


@pytest.fixture
def live(db_url: str) -> Iterator[Live]:
    with serve(db_url) as running:
        yield running


@pytest.fixture
def pg_url(started: list[Serve]) -> Iterator[str]:
    """A fresh PostgreSQL schema for one test (skipped unless FLYSWAT_TEST_PG is set); the
    server processes the test started are stopped before it is dropped (a DROP waits for
    every lock a live node holds on it)."""
    url = os.environ.get("FLYSWAT_TEST_PG")
    if not url:
        pytest.skip("FLYSWAT_TEST_PG is not set")
    with pg_schema(url) as fresh:
        yield fresh
        stop_all(started)


def allowed(centre: list[str]) -> set[str]:
    """The most numerous colours of a centre (R14), as the scripted player judges them."""
    counts = Counter(c[0] for c in centre)
    if not counts:
        return set()
    most = max(counts.values())
    return {c for c, n in counts.items() if n == most}


@dataclass
class Player:
    """A scripted human on a real socket."""

    ws: ClientConnection
    seat: int | None
    received: list[dict[str, Any]] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)
    reaction_ms: int = 250
    #: Times spread as a person's (an ex-Gaussian from ``reaction_ms``, flyswat.bots), not
    #: one time always: the fair-play detector takes a steady time for a script (and a game
    #: of its player goes unrated); needs a slap window of a few seconds.
    human: bool = False
    slaps: bool = True
    reveals: bool = True
    wire: Assembler = field(default_factory=Assembler)
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)

    @classmethod
    @contextlib.asynccontextmanager
    async def connect(
        cls, live_ws: str, code: str, token: str | None,
        subprotocols: list[str] | None = None, **kw: Any,
    ) -> AsyncIterator[Player]:  # fmt: skip
        """``subprotocols``: asked in the handshake (which the server then leaves to the
        websockets library: none is granted)."""
        url = f"{live_ws}/ws/{code}"
        for _ in range(5):  # a node that does not run the table says where it runs: go there
            ws = await connect(url, subprotocols=subprotocols)  # type: ignore[arg-type]
            with contextlib.suppress(ConnectionClosed):  # a ``moved`` and its close came first
                await ws.send(json.dumps({"type": "hello", "token": token}))
            player = cls(ws, None, **kw)
            welcome = await player.recv()
            if welcome["type"] == "moved":
                url = welcome["url"] or f"{live_ws}/ws/{code}"
                with contextlib.suppress(Exception):
                    await ws.close()
                continue
            assert welcome["type"] == "welcome", welcome
            player.seat = welcome["seat"]
            try:
                yield player
            finally:
                for task in player._tasks:  # hands still on their way when the game ended
                    task.cancel()
                await asyncio.gather(*player._tasks, return_exceptions=True)
                await ws.close()
            return
        raise AssertionError(f"moved five times in a row: {url}")

    async def send(self, **msg: Any) -> None:
        await self.ws.send(json.dumps(msg))

    async def recv(self, timeout: float = 10) -> dict[str, Any]:
        """The next message that is not a ping (pings are answered), within ``timeout``
        seconds in all: a stalled table that only pings still times out."""
        deadline = time.monotonic() + timeout
        while True:
            raw = await asyncio.wait_for(self.ws.recv(), max(0.01, deadline - time.monotonic()))
            assert isinstance(raw, str)
            msg = json.loads(raw)
            if msg["type"] == "ping":
                # A ping read after the server closed the socket (it came before what the
                # close follows, say a kick's error): what came before the close is still
                # to be read, so the pong that can no longer go stops nothing.
                with contextlib.suppress(ConnectionClosed):
                    await self.send(type="pong", id=msg["id"])
                continue
            SERVER_MESSAGE.validate_python(msg)  # every message as PROTOCOL.md says
            msg = self.wire.feed(msg)  # with the seat's whole view (protocol 3's deltas)
            self.raw.append(raw)
            self.received.append(msg)
            return msg

    async def expect(self, kind: str, timeout: float = 10) -> dict[str, Any]:
        """Skip messages until one of type ``kind``."""
        while True:
            msg = await self.recv(timeout)
            if msg["type"] == kind:
                return msg

    async def play(
        self, timeout: float = 60, until: Callable[[dict[str, Any]], bool] | None = None
    ) -> dict[str, Any]:
        """Play until the game is over (or a message satisfies ``until``); that message.

        The welcome already received counts too, so a player who reconnects carries on; one
        who reconnects after the end gets a welcome to a finished table, which is returned."""
        deadline = time.monotonic() + timeout
        msg = self.received[-1]
        while True:
            kind, v = msg["type"], msg.get("view")
            back_after_the_end = kind == "welcome" and msg["table"]["state"] == "over"
            if kind == "over" or back_after_the_end or (until is not None and until(msg)):
                return msg
            if kind in ("reveal", "welcome") and v and v["round"] is not None and self.slaps:
                self._tasks.append(asyncio.create_task(self._slap(v, v["turn"])))
            moves = kind in ("welcome", "started", "reveal", "round")
            if moves and v and self.reveals and self._to_move(v):
                await self.send(type="reveal")
            msg = await self.recv(max(0.1, deadline - time.monotonic()))

    def _to_move(self, v: dict[str, Any]) -> bool:
        return bool(v["to_move"] == self.seat and v["round"] is None and not v["over"])

    async def _slap(self, v: dict[str, Any], turn: int) -> None:
        ok = allowed(v["centre"])
        targets = sorted((c for c in v["centre"] if c[0] in ok), key=lambda c: -int(c[1]))
        first = self.reaction_ms
        if self.human:
            first = max(200, round(random.gauss(first, 60) + random.expovariate(1 / 150)))
        for i, card in enumerate(targets[: v["hands"]]):
            # A human's hand lands after its reaction time; the claim is that time.
            await asyncio.sleep((first + 100 * i) / 1000 if i == 0 else 0.1)
            await self.send(type="slap", card=card, ms=first + 100 * i, turn=turn)
        await self.send(type="done", turn=turn)


async def create_table(live: Live, name: str = "Ana", **options: Any) -> dict[str, Any]:
    """POST /api/tables in a thread (the server runs on another loop)."""
    body = {"name": name, **FAST, **options}
    reply = await asyncio.to_thread(live.post, "/api/tables", body)
    assert reply.status_code == 201, reply.text
    return dict(reply.json())


async def join_table(live: Live, code: str, name: str) -> dict[str, Any]:
    reply = await asyncio.to_thread(live.post, f"/api/tables/{code}/join", {"name": name})
    assert reply.status_code == 201, reply.text
    return dict(reply.json())


async def until(check: Callable[[], Any], what: str, timeout: float = 30) -> None:
    """Wait for ``check()`` (run on a thread: it may read a server's state or make a request)
    to be true; fail with ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not await asyncio.to_thread(check):
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)


async def until_all_ready(host: Player) -> None:
    """Read the host's table updates until every seat is ready (the host's ``start`` and
    another player's ``ready`` travel on different sockets: their order is not given)."""

    def all_ready(msg: dict[str, Any]) -> bool:
        return all(p["ready"] or p["host"] for p in msg["table"]["players"])

    # The table as last told may already be it (a ready that changes nothing tells nobody).
    told = [m for m in host.received if m["type"] in ("table", "welcome")]
    if told and all_ready(told[-1]):
        return
    while not all_ready(await host.expect("table")):
        pass


@pytest.fixture
def started() -> Iterator[list[Serve]]:
    """Server processes a test starts (:class:`harness.server.Serve`); killed at the end,
    woken first if a test paused one."""
    running: list[Serve] = []
    yield running
    stop_all(running)


def stop_all(running: list[Serve]) -> None:
    """Kill every process of ``running`` (woken first: a stopped one does not die)."""
    for s in running:
        with contextlib.suppress(Exception):
            os.kill(s.proc.pid, signal.SIGCONT)
        s.kill()


@pytest.fixture
def redis_url(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The tests' Redis database (skipped unless FLYSWAT_TEST_REDIS is set), with a key
    prefix of this test's own in ``FLYSWAT_REDIS_PREFIX``, which the server processes it
    starts inherit: tests running at once (pytest-xdist workers) never meet in it, and no
    test empties the database under another. Its keys are deleted after."""
    url = os.environ.get("FLYSWAT_TEST_REDIS")
    if not url:
        pytest.skip("FLYSWAT_TEST_REDIS is not set")
    monkeypatch.setenv("FLYSWAT_REDIS_PREFIX", f"flyswat-test:{uuid.uuid4().hex[:12]}:")
    try:
        yield url
    finally:
        empty_redis(url)


def empty_redis(url: str) -> int:
    """Delete every key of this test's prefix (what a Redis restarted empty holds of its
    cluster); how many there were."""
    import redis

    prefix = os.environ["FLYSWAT_REDIS_PREFIX"]
    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=prefix + "*", count=1000))
        if keys:
            client.delete(*keys)
        return len(keys)
    finally:
        client.close()


# -- a flyswat serve process, its identities and games at tables with bots ---------------


#: A ``flyswat serve`` process as the in-process servers' :class:`Live` (no app at hand).
Process = Live


@pytest.fixture
def server(tmp_path: Path, started: list[Serve]) -> Process:
    port = free_ports(1)
    db = f"sqlite:///{tmp_path / 'players.db'}"
    args = ["--workers", "1", "--port", str(port), "--db", db, "--exempt", "127.0.0.1"]
    started.append(Serve(args, tmp_path / "players.log", [port]))
    return Process(f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}", None)


def identity(server: Process, name: str) -> dict[str, Any]:
    reply = server.post("/api/players", {"name": name})
    assert reply.status_code == 201, reply.text
    return dict(reply.json())


def with_bots(who: dict[str, Any], *levels: str, **options: Any) -> dict[str, Any]:
    """A create body: ``who`` hosts at seat 0, bots of ``levels`` at the other seats."""
    bots = [{"seat": i + 1, "level": level} for i, level in enumerate(levels)]
    return {"name": who["name"], "player": who["player"], "secret": who["secret"],
            "seats": len(levels) + 1, "bots": bots, **options}  # fmt: skip


async def games_at(
    server: Process, body: dict[str, Any], games: int, **kw: Any
) -> tuple[str, list[str]]:
    """Create the table of ``body`` and play ``games`` games at it (rematches) as its host, a
    scripted player (``kw``: how it plays); the table's code and the game ids."""
    reply = await asyncio.to_thread(server.post, "/api/tables", body)
    assert reply.status_code == 201, reply.text
    seated = reply.json()
    ids = []
    async with Player.connect(server.ws, seated["code"], seated["token"], **kw) as host:
        await host.send(type="start")
        for n in range(games):
            if n:
                await host.send(type="rematch")  # the bots accept at once
            host.received.append(await host.expect("started", timeout=20))
            over = await host.play(timeout=180)
            assert over["type"] == "over", over
            ids.append(over["table"]["game_id"])
    return seated["code"], ids
