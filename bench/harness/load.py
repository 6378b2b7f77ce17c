"""Many scripted players on real WebSockets against one server: the load and soak harness.

A :class:`LoadPlayer` plays one seat like a person: it reveals on its turn after a human pause,
and in each slap round lays a hand on the most valuable allowed fly (sometimes a second one,
sometimes none) after an ex-Gaussian reaction time, then says done; it answers every ping.
With ``drop_per_min`` it also drops its connection at random and comes back a moment later
with the same token, and it reconnects the same way when the server goes away (a crash and
restart), within a bounded time.

A :class:`Worker` opens tables over HTTP, seats a player on every human seat, starts the
games, keeps that many tables going if asked (a finished game's table is replaced by a new
one) and counts what it sees on its own monotonic clock (``loop.time()``):

- ``round_ms``: from the last ``done`` of a round sent by the table's players (or a second
  hand, which completes a seat too) to the ``round`` message received, per receiving player.
  All the players of a table live in one worker, so this is one clock; over loopback it is
  the server's handling time plus two socket hops and the worker's own scheduling delay
  (``lag_ms`` measures that delay).
- ``reveal_ms``: from a player's ``reveal`` sent to that reveal's broadcast received back.

Only loopback addresses are ever used; every loop is bounded by a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import random
import resource
import secrets
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import WebSocketException

from flyswat.bots import ex_gauss
from flyswat.wire import Assembler
from harness.client import target

#: The start of the messages a load player needs to read no further than their type.
_PING = '{"type":"ping"'
_ACCEPTED = '{"type":"accepted"'
_TABLE = '{"type":"table"'


def raise_fd_limit() -> int:
    """Raise this process's open-file limit to its hard limit; returns the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def check_loopback(url: str) -> None:
    """Refuse any server address that is not on this machine's loopback."""
    host = urlsplit(url).hostname or ""
    if not (host == "localhost" or host.startswith("127.") or host == "::1"):
        raise ValueError(f"load clients only talk to loopback, not {host!r}")


@dataclass(frozen=True)
class Pace:
    """How fast a load player acts; times in ms, ex-Gaussian ``(mu, sigma, tau)``.

    The defaults are a person's: about 0.8 s before revealing, a first hand about 0.55 s
    after the trigger is shown (like the ``normal`` bot), a second hand in 30 % of rounds,
    no hand at all in 5 %.
    """

    reveal: tuple[float, float, float] = (600.0, 100.0, 200.0)
    react: tuple[float, float, float] = (450.0, 60.0, 120.0)
    second_ms: float = 180.0
    second_hand: float = 0.3
    lapse: float = 0.05
    floor_ms: float = 150.0

    def reveal_pause_s(self, rng: random.Random) -> float:
        """The pause before revealing, in seconds."""
        return max(0.0, ex_gauss(rng, *self.reveal)) / 1000

    def reaction_ms(self, rng: random.Random) -> float:
        """A first hand's reaction time, in ms (never under ``floor_ms``)."""
        return max(self.floor_ms, ex_gauss(rng, *self.react))


#: A quick player for smoke tests: games of a few seconds.
QUICK = Pace(reveal=(20.0, 5.0, 10.0), react=(170.0, 20.0, 30.0), second_ms=40.0)


@dataclass
class Stats:
    """What one worker counted. Samples are kept only while ``recording``; ``*_at`` are the
    wall-clock times of the ``*_ms`` samples (to line them up with other processes')."""

    recording: bool = False
    received: int = 0
    sent: int = 0
    round_ms: list[float] = field(default_factory=list)
    round_at: list[float] = field(default_factory=list)
    reveal_ms: list[float] = field(default_factory=list)
    reveal_at: list[float] = field(default_factory=list)
    lag_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    error_examples: list[str] = field(default_factory=list)
    connects: int = 0
    drops: int = 0
    reconnects: int = 0
    failed_connects: int = 0
    tables_opened: int = 0
    games_started: int = 0
    games_over: int = 0
    records: int = 0

    def to_json(self) -> dict[str, Any]:
        """A plain dict (for a queue between processes)."""
        out = asdict(self)
        out["errors"] = dict(self.errors)
        return out


@dataclass
class LoadTable:
    """One table as the worker knows it: its seats' ``Seated`` replies and round timing."""

    code: str
    seated: list[dict[str, Any]]
    seats: int
    started: bool = False
    over: dict[str, Any] | None = None
    fetched: bool = False
    done_at: dict[int, float] = field(default_factory=dict)
    done_count: Counter[int] = field(default_factory=Counter)
    closed_at: dict[int, float] = field(default_factory=dict)

    def note_done(self, turn: int, now: float) -> None:
        """One of the table's players said done for the round of ``turn`` at ``now``."""
        self.done_count[turn] += 1
        self.done_at[turn] = max(now, self.done_at.get(turn, 0.0))

    def round_latency(self, turn: int, now: float) -> float | None:
        """ms from the last done to ``now`` when every seat of the table said done (a round
        that closed on its deadline, or with a server bot, says nothing)."""
        humans = len(self.seated)
        if humans < self.seats or self.done_count.get(turn, 0) < humans:
            return None
        return (now - self.done_at[turn]) * 1000


class LoadPlayer:
    """One human seat played by a script; see the module docstring."""

    def __init__(
        self,
        table: LoadTable,
        seated: dict[str, Any],
        ws_base: str,
        pace: Pace,
        rng: random.Random,
        stats: Stats,
        *,
        drop_per_min: float = 0.0,
    ) -> None:
        self.table = table
        self.token = seated["token"]
        self.seat: int = seated["seat"]
        self.url = ws_base + seated["ws_url"]
        self.pace = pace
        self.rng = rng
        self.stats = stats
        self.drop_per_min = drop_per_min
        self.welcomed = asyncio.Event()
        self.wire = Assembler()
        self.over: dict[str, Any] | None = None
        self.turn = -1
        self._reveal_for = -1
        self._slap_for = -1
        self._reveal_sent: float | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self, deadline: float) -> None:
        """Play until the game is over, reconnecting with the same token after a drop, until
        the loop's clock passes ``deadline``."""
        loop = asyncio.get_running_loop()
        first = True
        while self.over is None and loop.time() < deadline:
            if not first:
                self.stats.reconnects += 1
            first = False
            try:
                async with connect(
                    self.url, ping_interval=None, max_size=2**20, open_timeout=20,
                    close_timeout=2, compression=None,
                ) as ws:  # fmt: skip
                    self.stats.connects += 1
                    dropper = self._spawn(self._drop_later(ws)) if self.drop_per_min else None
                    try:
                        await asyncio.wait_for(self._session(ws), deadline - loop.time())
                    finally:
                        if dropper is not None:
                            dropper.cancel()
                        self._cancel_tasks()
            except (OSError, WebSocketException, TimeoutError):
                self.stats.failed_connects += 1
            if self.over is None:
                await asyncio.sleep(self.rng.uniform(0.3, 2.0))

    async def _drop_later(self, ws: ClientConnection) -> None:
        await asyncio.sleep(self.rng.expovariate(self.drop_per_min / 60))
        self.stats.drops += 1
        if self.rng.random() < 0.5:
            await ws.close()
        else:  # the network is gone: no close handshake
            ws.transport.abort()

    def _spawn(self, coro: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _cancel_tasks(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    async def _send(self, ws: ClientConnection, msg: dict[str, Any]) -> None:
        self.stats.sent += 1
        with contextlib.suppress(WebSocketException, OSError):
            await ws.send(json.dumps(msg))

    async def _session(self, ws: ClientConnection) -> None:
        loop = asyncio.get_running_loop()
        stats = self.stats
        await self._send(ws, {"type": "hello", "token": self.token})
        async for raw in ws:
            stats.received += 1
            if not isinstance(raw, str) or raw.startswith((_ACCEPTED, _TABLE)):
                continue
            msg = self.wire.feed(json.loads(raw))
            kind = msg["type"]
            if kind == "ping":
                await self._send(ws, {"type": "pong", "id": msg["id"]})
                continue
            now = loop.time()
            v = msg.get("view")
            if v:
                self.turn = v["turn"]
            if kind == "over" or (kind == "welcome" and v is not None and v["over"]):
                # the game ended while this player was away (a restart, a drop): the
                # welcome's view says so, and no ``over`` follows
                self.welcomed.set()
                self.over = msg
                if self.table.over is None:
                    self.table.over = msg
                    stats.games_over += 1
                return
            if kind == "welcome":
                self.welcomed.set()
                if v is None:
                    await self._send(ws, {"type": "ready"})
                elif v["round"] is not None and not v["round"]["done"]:
                    self._plan_slap(ws, v, now)
            elif kind == "reveal":
                if msg["seat"] == self.seat and self._reveal_sent is not None:
                    if stats.recording:
                        stats.reveal_ms.append((now - self._reveal_sent) * 1000)
                        stats.reveal_at.append(time.time())
                    self._reveal_sent = None
                if v is not None and v["round"] is not None:
                    self._plan_slap(ws, v, now)
            elif kind == "round":
                ms = self.table.round_latency(msg["turn"], now)
                if ms is not None and stats.recording:
                    stats.round_ms.append(ms)
                    stats.round_at.append(time.time())
            elif kind == "error":
                stats.errors[msg["code"]] += 1
                if len(stats.error_examples) < 5:
                    stats.error_examples.append(f"{msg['code']}: {msg['message']}")
            if v and self._my_turn(v) and self._reveal_for != self.turn:
                self._reveal_for = self.turn
                self._spawn(self._reveal(ws, self.turn))

    def _my_turn(self, v: dict[str, Any]) -> bool:
        return bool(v["to_move"] == self.seat and v["round"] is None and not v["over"])

    async def _reveal(self, ws: ClientConnection, turn: int) -> None:
        await asyncio.sleep(self.pace.reveal_pause_s(self.rng))
        if self.turn == turn and self.over is None:
            self._reveal_sent = asyncio.get_running_loop().time()
            await self._send(ws, {"type": "reveal"})

    def _plan_slap(self, ws: ClientConnection, v: dict[str, Any], shown_at: float) -> None:
        if self._slap_for != v["turn"]:
            self._slap_for = v["turn"]
            self._spawn(self._slap(ws, v, shown_at))

    async def _slap(self, ws: ClientConnection, v: dict[str, Any], shown_at: float) -> None:
        loop = asyncio.get_running_loop()
        turn, centre = v["turn"], list(v["centre"])
        rt = self.pace.reaction_ms(self.rng)
        await asyncio.sleep(max(0.0, shown_at + rt / 1000 - loop.time()))
        if self.turn != turn:
            return
        first = target(centre)
        if first is not None and self.rng.random() >= self.pace.lapse:
            if len(centre) == 1:  # a hand on every fly: the seat is complete, no done
                self.table.note_done(turn, loop.time())
                await self._send(ws, {"type": "slap", "card": first, "ms": round(rt), "turn": turn})
                return
            await self._send(ws, {"type": "slap", "card": first, "ms": round(rt), "turn": turn})
            rest = [c for c in centre if c != first and c[0] == first[0]]
            if rest and v["hands"] > 1 and self.rng.random() < self.pace.second_hand:
                extra = self.pace.second_ms * self.rng.uniform(0.7, 1.5)
                await asyncio.sleep(extra / 1000)
                second = target(rest) or rest[0]
                ms = round(rt + extra)
                # Both hands laid: the seat is complete, and a done would come too late.
                self.table.note_done(turn, loop.time())
                await self._send(ws, {"type": "slap", "card": second, "ms": ms, "turn": turn})
                return
        self.table.note_done(turn, loop.time())
        await self._send(ws, {"type": "done", "turn": turn})


@dataclass
class Plan:
    """What one worker does. Times in seconds; ``bots`` server bots take each table's last
    seats; ``options`` go into ``CreateTable``; ``nice`` lowers a worker process's priority."""

    http: str
    tables: int
    seats: int = 4
    bots: int = 0
    bot_level: str = "normal"
    options: dict[str, Any] = field(default_factory=dict)
    pace: Pace = field(default_factory=Pace)
    seed: int = 0
    drop_per_min: float = 0.0
    replace: bool = False
    warmup_s: float = 10.0
    duration_s: float = 30.0
    drain_s: float = 0.0
    records: str | None = None
    name: str = "w"
    nice: int = 0


class Worker:
    """Runs a :class:`Plan` on the running loop; see the module docstring."""

    def __init__(self, plan: Plan) -> None:
        check_loopback(plan.http)
        self.plan = plan
        self.stats = Stats()
        self.rng = random.Random(plan.seed)
        self.ws_base = "ws" + plan.http[len("http") :]
        self.tables: list[LoadTable] = []
        self.players: dict[str, list[LoadPlayer]] = {}
        self._play: set[asyncio.Task[None]] = set()
        self._gate = asyncio.Semaphore(16)
        self.http: httpx.AsyncClient | None = None

    # -- tables -------------------------------------------------------------------------------

    async def _request(self, method: str, path: str, body: Any = None) -> httpx.Response:
        """The reply to a request, the same request sent again while no reply comes (each
        resend counted in ``errors["resent <path's last part>"]``)."""
        assert self.http is not None
        async with self._gate:
            for attempt in range(20):
                try:
                    return await self.http.request(method, path, json=body)
                except httpx.TransportError:
                    self.stats.errors[f"resent {path.rsplit('/', 1)[-1]}"] += 1
                    await asyncio.sleep(0.2 + 0.2 * attempt)
            raise TimeoutError(f"{method} {path}: the server did not answer")

    async def open_table(self, deadline: float) -> LoadTable:
        """Create a table, take its human seats and connect a player on each."""
        plan = self.plan
        n = self.stats.tables_opened
        self.stats.tables_opened += 1
        bots = [{"seat": s, "level": plan.bot_level} for s in range(plan.seats - plan.bots,
                                                                      plan.seats)]  # fmt: skip
        body = {"name": f"{plan.name}{n}-0", "seats": plan.seats, "bots": bots, **plan.options}
        reply = await self._request("POST", "/api/tables", body)
        reply.raise_for_status()
        seated = [reply.json()]
        code = seated[0]["code"]
        for i in range(1, plan.seats - plan.bots):
            # One request key per join: a join resent after its reply was lost (a kill -9)
            # gets the seat it took (docs/PROTOCOL.md, A join is idempotent).
            body = {"name": f"p{i}", "request": secrets.token_urlsafe(16)}
            joined = await self._request("POST", f"/api/tables/{code}/join", body)
            joined.raise_for_status()
            seated.append(joined.json())
        seats = [s["seat"] for s in seated]
        if len(set(seats)) != len(seats):  # a resent join given a second seat: a defect
            raise RuntimeError(f"table {code}: a join took two seats: {seats}")
        table = LoadTable(code, seated, seats=plan.seats)
        players = [
            LoadPlayer(
                table, s, self.ws_base, plan.pace, random.Random(self.rng.random()), self.stats,
                drop_per_min=plan.drop_per_min,
            )
            for s in seated
        ]  # fmt: skip
        self.tables.append(table)
        self.players[code] = players
        for player in players:
            task = asyncio.create_task(player.run(deadline))
            self._play.add(task)
            task.add_done_callback(self._play.discard)
        return table

    async def start_table(self, table: LoadTable, timeout: float = 60) -> None:
        """Start a table once its players are welcomed and ready (the host's token)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        for player in self.players[table.code]:
            await asyncio.wait_for(player.welcomed.wait(), max(0.1, end - loop.time()))
        host = table.seated[0]["token"]
        while True:
            reply = await self._request("POST", f"/api/tables/{table.code}/start", {"token": host})
            if reply.status_code == 200:
                break
            error = reply.json().get("error")
            if error == "already_started":  # our start went through, its answer was lost
                break
            if error != "not_ready" or loop.time() > end:
                reply.raise_for_status()
                raise TimeoutError(f"table {table.code}: {reply.text}")
            await asyncio.sleep(0.05)
        table.started = True
        self.stats.games_started += 1

    async def fetch_record(self, table: LoadTable) -> dict[str, Any] | None:
        """The finished game's record over HTTP, kept in ``plan.records`` if set."""
        reply = await self._request("GET", f"/api/tables/{table.code}/record")
        if reply.status_code != 200:
            return None
        record: dict[str, Any] = reply.json()
        if self.plan.records:
            path = Path(self.plan.records) / f"{table.code}.json"
            path.write_text(json.dumps(record))
        self.stats.records += 1
        return record

    # -- the run ------------------------------------------------------------------------------

    async def _lag(self, stop: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        while not stop.is_set():
            t = loop.time()
            await asyncio.sleep(0.02)
            if self.stats.recording:
                self.stats.lag_ms.append((loop.time() - t - 0.02) * 1000)

    async def setup(self, deadline: float) -> None:
        """Open every table and connect its players (no game started yet)."""
        await asyncio.gather(*(self.open_table(deadline) for _ in range(self.plan.tables)))
        loop = asyncio.get_running_loop()
        for players in self.players.values():
            for player in players:
                await asyncio.wait_for(player.welcomed.wait(), max(0.1, deadline - loop.time()))

    async def play(self, deadline: float) -> dict[str, Any]:
        """Start every game, record for ``duration_s`` after ``warmup_s``, keep the tables
        going if ``replace``, then drain for up to ``drain_s`` (games in play finish) and
        close. Returns the stats, and the window's counts."""
        loop = asyncio.get_running_loop()
        plan = self.plan
        stop = asyncio.Event()
        lag = asyncio.create_task(self._lag(stop))
        await asyncio.gather(*(self.start_table(t) for t in self.tables))
        t0 = loop.time()
        keeper = asyncio.create_task(self._keep(t0 + plan.warmup_s + plan.duration_s, deadline))
        await asyncio.sleep(plan.warmup_s)
        before = (self.stats.received, self.stats.sent, loop.time())
        self.stats.recording = True
        await asyncio.sleep(plan.duration_s)
        self.stats.recording = False
        after = (self.stats.received, self.stats.sent, loop.time())
        await keeper
        drain_end = min(deadline, loop.time() + plan.drain_s)
        while loop.time() < drain_end and any(t.over is None for t in self.tables):
            await asyncio.sleep(0.25)
        for table in self.tables:
            if table.over is not None and not table.fetched:
                table.fetched = True
                await self.fetch_record(table)
        stop.set()
        await self.close()
        lag.cancel()
        out = self.stats.to_json()
        window = after[2] - before[2]
        out["window_s"] = window
        out["received_per_s"] = (after[0] - before[0]) / window
        out["sent_per_s"] = (after[1] - before[1]) / window
        out["unfinished"] = [t.code for t in self.tables if t.started and t.over is None]
        out["started_codes"] = [t.code for t in self.tables if t.started]
        return out

    async def _keep(self, until: float, deadline: float) -> None:
        """With ``replace``: a finished game's table is replaced by a new one, until ``until``;
        its record is fetched either way."""
        loop = asyncio.get_running_loop()
        while loop.time() < until:
            await asyncio.sleep(0.5)
            for table in list(self.tables):
                if table.over is None or table.fetched:
                    continue
                table.fetched = True
                await self.fetch_record(table)
                if self.plan.replace and loop.time() < until:
                    new = await self.open_table(deadline)
                    await self.start_table(new)

    async def close(self) -> None:
        """Stop every player."""
        for task in list(self._play):
            task.cancel()
        for task in list(self._play):
            with contextlib.suppress(BaseException):
                await task


async def run_plan(
    plan: Plan, timeout: float, between: Callable[[float], Awaitable[None]] | None = None
) -> dict[str, Any]:
    """Set up and play ``plan`` in this process; ``between(deadline)``, if given, is awaited
    after the set-up and before the play (a worker waits there for the orchestrator)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    worker = Worker(plan)
    async with httpx.AsyncClient(base_url=plan.http, timeout=30) as http:
        worker.http = http
        await worker.setup(deadline)
        if between is not None:
            await between(deadline)
        return await worker.play(deadline)


def worker_main(plan: Plan, timeout: float, ready: Any, go: Any, results: Any) -> None:
    """A worker process: set up, set ``ready``, wait for ``go``, play, put the stats on
    ``results`` (multiprocessing objects; an exception is put there as ``{"error": text}``)."""
    raise_fd_limit()
    if plan.nice:
        os.nice(plan.nice)

    async def wait_for_go(deadline: float) -> None:
        ready.set()
        left = max(1.0, deadline - asyncio.get_running_loop().time())
        if not await asyncio.to_thread(go.wait, left):
            raise TimeoutError("no go from the orchestrator")

    try:
        out = asyncio.run(run_plan(plan, timeout, wait_for_go))
    except Exception as e:  # reported to the orchestrator, which prints it
        out = {"error": f"{type(e).__name__}: {e}"}
        ready.set()
    out["name"] = plan.name
    results.put(out)


def percentile(samples: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``samples`` by nearest rank; NaN when empty."""
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]
