"""Scripted players on real WebSockets, for the fairness and load benchmarks.

A :class:`Racer` plays like a person who knows the rules: it reveals on its turn, and in each
slap round lays one hand on the most valuable allowed fly it sees (every racer judges the same
centre the same way, so all of a table's racers race for the same fly), after a reaction time
drawn from its own model, then says done. It claims that reaction time, or — a cheat — a
smaller one, and it may answer pings late or never (cheats on its network allowance). It
notes what it needs to score the race afterwards, on the benchmark process's single monotonic
clock (``loop.time()``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import socket
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from flyswat.wire import Assembler


def target(centre: list[str]) -> str | None:
    """The fly every racer goes for: the highest value of an allowed colour (R14), then text."""
    counts = Counter(c[0] for c in centre)
    if not counts:
        return None
    most = max(counts.values())
    allowed = [c for c in centre if counts[c[0]] == most]
    return max(allowed, key=lambda c: (int(c[1]), c))


@dataclass
class Race:
    """One slap round as one racer lived it (times in seconds on the loop's clock)."""

    turn: int
    card: str
    reaction_ms: float
    claimed_ms: float
    shown_at: float
    sent_at: float
    decided_at: float | None = None
    winner: int | None = None
    order: list[int] = field(default_factory=list)
    refused: str | None = None


@dataclass
class Racer:
    """One scripted player. ``reaction`` draws a reaction time in ms from an rng.

    ``claim`` turns the true reaction time into the claimed one (honest: the identity).
    ``pong_delay_ms``: how long it waits before answering a ``ping`` (honest: 0); None never
    answers.
    """

    name: str
    reaction: Callable[[random.Random], float]
    seed: int = 0
    claim: Callable[[float], float] = lambda ms: ms
    pong_delay_ms: float | None = 0.0
    seat: int | None = None
    races: dict[int, Race] = field(default_factory=dict)
    errors: Counter[str] = field(default_factory=Counter)
    wire: Assembler = field(default_factory=Assembler)
    over: dict[str, Any] | None = None
    messages: int = 0
    _revealed: int = -1

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    async def play(self, ws_url: str, token: str, timeout: float = 600) -> None:
        """Connect, say hello and play until the game is over (or ``timeout`` seconds)."""
        async with connect(ws_url, max_size=2**20, ping_interval=None) as ws:
            await ws.send(json.dumps({"type": "hello", "token": token}))
            await asyncio.wait_for(self._loop(ws), timeout)

    async def _loop(self, ws: ClientConnection) -> None:
        loop = asyncio.get_running_loop()
        tasks: set[asyncio.Task[None]] = set()
        try:
            async for raw in ws:
                now = loop.time()
                self.messages += 1
                msg = self.wire.feed(json.loads(raw))
                kind = msg["type"]
                if kind == "ping":
                    if self.pong_delay_ms == 0:
                        await ws.send(json.dumps({"type": "pong", "id": msg["id"]}))
                    elif self.pong_delay_ms is not None:
                        late = asyncio.create_task(self._late_pong(ws, msg["id"]))
                        tasks.add(late)
                        late.add_done_callback(tasks.discard)
                    continue
                if kind == "welcome":
                    self.seat = msg["seat"]
                    if msg["view"] is None:
                        await ws.send(json.dumps({"type": "ready"}))
                elif kind == "error":
                    self.errors[msg["code"]] += 1
                    self._note_refusal(msg["code"])
                elif kind == "reveal" and msg["round"]:
                    task = asyncio.create_task(self._slap(ws, msg, now))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                elif kind == "round":
                    self._note_round(msg, now)
                elif kind == "over":
                    self.over = msg
                    return
                v = msg.get("view")
                if (
                    kind in ("welcome", "started", "reveal", "round")
                    and v
                    and v["to_move"] == self.seat
                    and v["round"] is None
                    and not v["over"]
                    and v["turn"] != self._revealed
                ):
                    self._revealed = v["turn"]
                    await ws.send(json.dumps({"type": "reveal"}))
        finally:
            for task in tasks:
                task.cancel()

    async def _late_pong(self, ws: ClientConnection, ping_id: int) -> None:
        await asyncio.sleep((self.pong_delay_ms or 0) / 1000)
        with contextlib.suppress(Exception):
            await ws.send(json.dumps({"type": "pong", "id": ping_id}))

    async def _slap(self, ws: ClientConnection, msg: dict[str, Any], shown_at: float) -> None:
        card = target(msg["view"]["centre"])
        turn = msg["turn"]
        if card is None:
            return
        rt = self.reaction(self.rng)
        await asyncio.sleep(max(0.0, shown_at + rt / 1000 - asyncio.get_running_loop().time()))
        claimed = self.claim(rt)
        sent_at = asyncio.get_running_loop().time()
        self.races[turn] = Race(turn, card, rt, claimed, shown_at, sent_at)
        with contextlib.suppress(Exception):
            await ws.send(
                json.dumps({"type": "slap", "card": card, "ms": round(claimed), "turn": turn})
            )
            await ws.send(json.dumps({"type": "done", "turn": turn}))

    def _note_refusal(self, code: str) -> None:
        if self.races:
            last = self.races[max(self.races)]
            if last.decided_at is None and last.refused is None:
                last.refused = code

    def _note_round(self, msg: dict[str, Any], now: float) -> None:
        lr = msg["view"]["last_round"]
        race = self.races.get(msg["turn"])
        if race is None or lr is None:
            return
        race.decided_at = now
        race.order = [s["seat"] for s in lr["slaps"] if s["card"] == race.card]
        race.winner = next((w["seat"] for w in lr["won"] if w["card"] == race.card), None)


async def open_table(
    http: str, names: list[str], **options: Any
) -> tuple[str, list[dict[str, Any]]]:
    """Create a table whose seats are all the named humans; returns its code and each seat's
    ``Seated`` reply (with its token), in seat order."""
    async with httpx.AsyncClient(base_url=http, timeout=30) as client:
        body = {"name": names[0], "seats": len(names), **options}
        first = await client.post("/api/tables", json=body)
        first.raise_for_status()
        seated = [first.json()]
        code = seated[0]["code"]
        for name in names[1:]:
            reply = await client.post(f"/api/tables/{code}/join", json={"name": name})
            reply.raise_for_status()
            seated.append(reply.json())
    return code, sorted(seated, key=lambda s: s["seat"])


async def start_table(http: str, code: str, host_token: str, timeout: float = 60) -> None:
    """Start a full table once every player has said ready (racers do on their welcome)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    async with httpx.AsyncClient(base_url=http, timeout=30) as client:
        while True:
            info = (await client.get(f"/api/tables/{code}")).json()
            if all(p["ready"] or p["host"] for p in info["players"]):
                break
            if loop.time() > deadline:
                raise TimeoutError(f"table {code}: not everyone is ready")
            await asyncio.sleep(0.05)
        reply = await client.post(f"/api/tables/{code}/start", json={"token": host_token})
        reply.raise_for_status()


def stuck_spectator(port: int, code: str) -> socket.socket:
    """A raw WebSocket on 127.0.0.1 that says ``hello`` as a spectator of table ``code``, then
    never reads again (its receive buffer 4 KiB): a client that stops reading."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.sendall(
        f"GET /ws/{code} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    s.settimeout(10)
    answer = b""
    while b"\r\n\r\n" not in answer:  # the upgrade is answered before the first frame
        answer += s.recv(1024)
    payload, mask = b'{"type":"hello"}', b"\x01\x02\x03\x04"
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    s.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + masked)
    return s
