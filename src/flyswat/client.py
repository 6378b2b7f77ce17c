"""Play at a real table from Python: the client side of the Bot API (docs/PLAYERS.md).

A program plays under a **bot account** (``POST /api/bots``, registered by a person with their
own identity) over the same WebSocket protocol as the browser, under the same rules,
arbitration and human floor (R21): nothing here is privileged. The pieces:

- :class:`Account` — an identity (a bot account's, or a person's), and its registration;
- :class:`Agent` — the policy: :meth:`Agent.decide` (the flies to lay hands on when a slap
  round opens) and :meth:`Agent.slap` (the slap hook: when to lay each hand), both of one
  seat's :class:`~flyswat.view.View` (R25), the very type the house bots
  (:class:`LevelAgent`) and the research environments (:class:`EnvAgent`) read;
- :class:`Client` — HTTP (create or join a table) and :meth:`Client.play`, which holds the
  socket: ``hello``, ``ready``, ``pong`` to every ``ping``, a ``reveal`` on the seat's turn,
  the agent's hands with their honest reaction times, ``done``; until ``over``.

Times are honest by construction: a hand's ``ms`` is the time on this process's monotonic
clock from the arrival of the reveal that opened the round to the hand being sent, the same
thing the browser measures from painting the card to the key press.

    account = Account.register_bot("http://127.0.0.1:8000", owner, "Swatter")
    client = Client("http://127.0.0.1:8000")
    seated = await client.join("K7QX2M", account)
    over = await client.play(seated, LevelAgent("normal"))
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from flyswat import bots
from flyswat.cards import DECK, Card
from flyswat.errors import IllegalActionError
from flyswat.rules import allowed
from flyswat.view import View
from flyswat.wire import Assembler

# -- who plays ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Account:
    """An identity: ``player`` id and ``secret`` (keep it); ``bot`` for a bot account."""

    player: str
    secret: str
    name: str
    bot: bool = False

    def auth(self) -> dict[str, str]:
        """The identity as request bodies carry it."""
        return {"player": self.player, "secret": self.secret}

    @classmethod
    def register(cls, base_url: str, name: str) -> Account:
        """A new person's identity (``POST /api/players``)."""
        return cls._from(_post(base_url, "/api/players", {"name": name}))

    @classmethod
    def register_bot(cls, base_url: str, owner: Account, name: str) -> Account:
        """A new bot account of ``owner`` (a person), ``POST /api/bots``. Raises
        :class:`~flyswat.errors.IllegalActionError` with the server's code when refused."""
        return cls._from(_post(base_url, "/api/bots", {**owner.auth(), "name": name}))

    @classmethod
    def _from(cls, body: dict[str, Any]) -> Account:
        return cls(body["player"], body["secret"], body["name"], bool(body.get("bot", False)))


def _post(base_url: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    reply = httpx.post(base_url + path, json=body, timeout=30)
    return _answer(reply)


def _answer(reply: httpx.Response) -> dict[str, Any]:
    data: dict[str, Any] = reply.json()
    if reply.status_code >= 400:
        raise IllegalActionError(str(data.get("message", "")), str(data.get("error", "")))
    return data


@dataclass(frozen=True, slots=True)
class Seated:
    """A seat at a table: its code, seat, token and socket path (the server's ``Seated``)."""

    code: str
    seat: int
    token: str
    host: bool
    ws_url: str


# -- the policy ----------------------------------------------------------------------------


class Agent:
    """A policy for one seat. Subclass and give :meth:`decide`; :meth:`slap` and
    :meth:`reveal_ms` pace it like a person of ``level`` (a faster program gains nothing:
    the server refuses hands under the human floor, R21, and flags the seat)."""

    def __init__(self, level: bots.LevelLike = "normal", seed: int = 0) -> None:
        self.level = bots.params(level)
        self.rng = random.Random(seed)

    def decide(self, view: View) -> Sequence[Card]:
        """The flies to lay hands on in the round open in ``view``, first hand first (at
        most ``view.hands``; an empty list lays none)."""
        raise NotImplementedError

    def slap(self, view: View, hands: Sequence[Card]) -> list[float]:
        """The slap hook: when to lay each of ``hands``, in ms after the trigger arrived
        (non-decreasing). By default a reaction time of the agent's level (R21)."""
        return [float(t) for t in bots.reaction_times(self.level, len(hands), self.rng)]

    def reveal_ms(self, view: View) -> float:
        """How long to wait on the seat's turn before revealing (R10)."""
        return float(bots.reveal_delay_ms(self.level, self.rng))

    def told(self, message: dict[str, Any]) -> None:
        """Every server message, its view whole (for an agent that learns); ignored here."""


class GreedyAgent(Agent):
    """The most valuable flies of the allowed colour(s), counted from the centre (R14)."""

    def decide(self, view: View) -> Sequence[Card]:
        ok = allowed(view.centre)
        flies = sorted((c for c in view.centre if c.colour in ok), key=lambda c: -c.value)
        return flies[: view.hands]


class LevelAgent(Agent):
    """A house bot's policy (:func:`flyswat.bots.decide`) at ``level``, times and all."""

    def __init__(self, level: bots.LevelLike = "normal", seed: int = 0) -> None:
        super().__init__(level, seed)
        self._times: list[float] = []

    def decide(self, view: View) -> Sequence[Card]:
        plan = bots.decide(self.level, view, self.rng)
        self._times = [float(p.ms) for p in plan]
        return [p.card for p in plan]

    def slap(self, view: View, hands: Sequence[Card]) -> list[float]:
        return self._times[: len(hands)]


#: A research policy: the observation dict of :func:`flyswat.env.encoding.observe` in, the
#: action of :class:`flyswat.env.SoloEnv` out (a fly index, or NO_HAND, per hand).
EnvPolicy = Callable[[dict[str, Any]], Sequence[int]]


class EnvAgent(Agent):
    """A policy trained on :class:`flyswat.env.SoloEnv` (or its vector twin) at a real table:
    it sees the observation the environment would give (``helped`` as there) and its action
    is turned into hands; entries on flies not in the centre, repeated, or ``NO_HAND`` lay
    nothing, as in the environment."""

    def __init__(
        self, policy: EnvPolicy, level: bots.LevelLike = "normal", seed: int = 0,
        helped: bool = False,
    ) -> None:  # fmt: skip
        super().__init__(level, seed)
        self.policy, self.helped = policy, helped

    def decide(self, view: View) -> Sequence[Card]:
        from flyswat.env.encoding import FLIES, observe  # numpy: the env extra

        action = self.policy(observe(view, self.helped))
        chosen: list[Card] = []
        for index in [int(a) for a in action][: view.hands]:
            card = DECK[index] if 0 <= index < FLIES else None
            if card is not None and card in view.centre and card not in chosen:
                chosen.append(card)
        return chosen


# -- the table ------------------------------------------------------------------------------


@dataclass
class Client:
    """A client of one server at ``base_url`` (``http://host:port``)."""

    base_url: str
    #: Every message received by the last :meth:`play`, views whole.
    received: list[dict[str, Any]] = field(default_factory=list)

    async def create(self, account: Account | None, name: str = "", **options: Any) -> Seated:
        """A new table with this account as its host (``POST /api/tables``); ``options`` as
        ``TableOptions`` (a bot account hosts only with ``bot_accounts=True``)."""
        body = {"name": name or (account.name if account else "Player"), **options}
        return await self._seat("/api/tables", {**body, **(account.auth() if account else {})})

    async def join(self, code: str, account: Account | None, name: str = "") -> Seated:
        """The next free seat of table ``code`` (``POST /api/tables/{code}/join``)."""
        body = {"name": name or (account.name if account else "Player")}
        return await self._seat(
            f"/api/tables/{code}/join", {**body, **(account.auth() if account else {})}
        )

    async def start(self, seated: Seated) -> None:
        """Start the game as the host (every seat taken and ready)."""
        await self._request(f"/api/tables/{seated.code}/start", {"token": seated.token})

    async def _seat(self, path: str, body: dict[str, Any]) -> Seated:
        data = await self._request(path, body)
        return Seated(data["code"], data["seat"], data["token"], data["host"], data["ws_url"])

    async def _request(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        async with httpx.AsyncClient(base_url=self.base_url, timeout=30) as http:
            return _answer(await http.post(path, json=body))

    async def play(self, seated: Seated, agent: Agent, timeout: float = 600) -> dict[str, Any]:
        """Hold the seat's socket and play with ``agent`` until the game is over; the
        ``over`` message (its view whole). Raises ``TimeoutError`` after ``timeout`` s."""
        url = self.base_url.replace("http", "ws", 1) + seated.ws_url
        for _ in range(5):  # a node that does not run the table says where it does
            async with connect(url, max_size=2**22) as ws:
                await ws.send(json.dumps({"type": "hello", "token": seated.token}))
                moved = await asyncio.wait_for(_Game(ws, agent, self.received).run(), timeout)
            if moved is None or "type" in moved:
                return moved or {}
            url = moved["url"] or url
        raise IllegalActionError("the table moved five times in a row", "moved")


class _Game:
    """One socket's game: reads every message, answers as the protocol says."""

    def __init__(self, ws: ClientConnection, agent: Agent, received: list[dict[str, Any]]) -> None:
        self.ws, self.agent, self.received = ws, agent, received
        self.wire = Assembler()
        self.seat: int | None = None
        self.revealed = -1  # the turn this seat last revealed at
        self.tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> dict[str, Any] | None:
        """The ``over`` message; ``{"url": ...}`` when told the table moved."""
        try:
            async for raw in self.ws:
                arrived = time.monotonic()
                msg = json.loads(raw)
                kind = msg["type"]
                if kind == "ping":
                    await self._send(type="pong", id=msg["id"])
                    continue
                if kind == "moved":
                    return {"url": msg.get("url")}
                msg = self.wire.feed(msg)
                self.received.append(msg)
                self.agent.told(msg)
                if kind == "over" or (kind == "welcome" and msg["table"]["state"] == "over"):
                    return dict(msg)
                self._on(msg, arrived)
        finally:
            for task in self.tasks:
                task.cancel()
        return None

    def _on(self, msg: dict[str, Any], arrived: float) -> None:
        kind, data = msg["type"], msg.get("view")
        if kind == "welcome":
            self.seat = msg["seat"]
            if data is None:
                self._spawn(self._send(type="ready"))
        if data is None or self.seat is None:
            return
        v = View.from_json(data)
        if kind in ("reveal", "welcome") and v.round is not None and not v.round.done:
            self._spawn(self._slap(v, arrived))
        if kind in ("welcome", "started", "reveal", "round") and self._to_move(v):
            self.revealed = v.turn
            self._spawn(self._reveal(v))

    def _to_move(self, v: View) -> bool:
        return v.to_move == self.seat and v.round is None and not v.over and v.turn != self.revealed

    def _spawn(self, work: Any) -> None:
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _send(self, **msg: Any) -> None:
        await self.ws.send(json.dumps(msg))

    async def _reveal(self, v: View) -> None:
        await asyncio.sleep(self.agent.reveal_ms(v) / 1000)
        await self._send(type="reveal")

    async def _slap(self, v: View, arrived: float) -> None:
        hands = list(self.agent.decide(v))[: v.hands - len(v.round.mine if v.round else ())]
        times = self.agent.slap(v, hands)
        for card, at_ms in zip(hands, times, strict=False):
            await asyncio.sleep(max(0.0, arrived + at_ms / 1000 - time.monotonic()))
            ms = round((time.monotonic() - arrived) * 1000)  # the honest claim
            await self._send(type="slap", card=card.text, ms=ms, turn=v.turn)
        await self._send(type="done", turn=v.turn)
