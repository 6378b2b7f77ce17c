"""Trust figures of the WebSocket side: what silent, stuck and flooding clients cost, and
what a crash right after an accepted slap loses. Against a real ``flyswat serve`` on loopback.

    uv run python bench/trust.py [--only silent,stuck,flood,crash] [--crashes 10]

- silent: sockets that never say ``hello``, and sockets that never answer a ``ping``: how soon
  each is dropped (the server's hello timeout and missed-ping limit).
- stuck: spectators that stop reading at a busy table (receive buffer 4 KiB): server RSS over
  time and how many are dropped as too slow.
- flood: one seat opened on 40 sockets toggling ``ready`` as fast as they can, beside another
  table whose two players reveal in turn: that table's reveal latency, flood against none.
- crash: ``kill -9`` right after an ``accepted`` (and 300 ms later), restart, reconnect: how
  many accepted hands are missing from the resumed round and from the final record.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from flyswat.wire import Assembler
from harness.client import open_table, stuck_spectator
from harness.procs import ServerProcess, rss_bytes
from harness.server import free_port, running_server

FAST = {"turn_timeout_ms": 200, "slap_window_ms": 500, "remove": 0}


def quantiles(xs: list[float]) -> str:
    if not xs:
        return "none"
    xs = sorted(xs)
    q = statistics.quantiles(xs, n=100) if len(xs) > 1 else [xs[0]] * 99
    return f"p50 {q[49]:.1f}, p95 {q[94]:.1f}, max {xs[-1]:.1f} (n={len(xs)})"


async def closed_after(ws: ClientConnection, hello: bool) -> float:
    """Seconds until the server closes ``ws``, reading (and never answering) what comes."""
    t0 = time.monotonic()
    if hello:
        await ws.send(json.dumps({"type": "hello"}))
    with contextlib.suppress(Exception):
        while True:
            await ws.recv()
    return time.monotonic() - t0


async def silent(http: str, ws_url: str) -> None:
    code, _ = await open_table(http, ["Host", "Guest"], **FAST)
    for hello, what in ((False, "never say hello"), (True, "never answer a ping")):
        conns = [await connect(f"{ws_url}/ws/{code}", ping_interval=None) for _ in range(20)]
        times = await asyncio.gather(*(closed_after(ws, hello) for ws in conns))
        print(f"silent: 20 sockets that {what}: dropped after {quantiles(list(times))} s")


async def stuck(http: str, port: int, pid: int, seconds: float) -> None:
    # Busy tables: one human seat nobody takes up (revealed for every 200 ms) and a bot.
    codes = []
    async with httpx.AsyncClient(base_url=http, timeout=10) as client:
        for _ in range(4):
            body = {"name": "Host", "seats": 2, "bots": [{"seat": 1, "level": "easy"}], **FAST}
            seated = (await client.post("/api/tables", json=body)).json()
            await client.post(
                f"/api/tables/{seated['code']}/start", json={"token": seated["token"]}
            )
            codes.append(seated["code"])
    base = rss_bytes(pid) / 2**20
    socks = [stuck_spectator(port, code) for code in codes for _ in range(15)]
    t0, samples, connected = time.monotonic(), [], []
    async with httpx.AsyncClient(base_url=http, timeout=10) as client:
        while time.monotonic() - t0 < seconds:
            await asyncio.sleep(1)
            infos = [(await client.get(f"/api/tables/{c}")).json() for c in codes]
            now = time.monotonic() - t0
            connected.append((now, sum(i.get("spectators", 0) for i in infos)))
            samples.append((now, rss_bytes(pid) / 2**20))
    for s in socks:
        s.close()
    gone = next((t for t, n in connected if n == 0), None)
    trace = ", ".join(f"{t:.0f}s {m:.0f}" for t, m in samples[4::5])
    print(f"stuck: {len(socks)} spectators that stop reading; connected after 1 s: "
          f"{connected[0][1]}, all dropped after {gone or float('nan'):.0f} s; RSS before "
          f"{base:.0f} MB, then {trace} MB")  # fmt: skip


async def reveal_latency(
    ws_url: str, code: str, seated: list[dict[str, Any]], n: int
) -> list[float]:
    """Two players reveal in turn ``n`` times; ms from each reveal sent to its echo."""
    async with (
        connect(f"{ws_url}/ws/{code}") as a,
        connect(f"{ws_url}/ws/{code}") as b,
    ):
        players = [a, b]
        for ws, s in zip(players, seated, strict=True):
            await ws.send(json.dumps({"type": "hello", "token": s["token"]}))
        await b.send(json.dumps({"type": "ready"}))
        view: dict[str, Any] = {}
        times: list[float] = []

        wires = {id(ws): Assembler() for ws in players}

        async def until(ws: ClientConnection, kinds: set[str]) -> dict[str, Any]:
            while True:
                msg = wires[id(ws)].feed(json.loads(await ws.recv()))
                if msg["type"] == "ping":
                    await ws.send(json.dumps({"type": "pong", "id": msg["id"]}))
                elif msg["type"] in kinds:
                    return msg

        while not (await until(a, {"table"}))["table"]["players"][1]["ready"]:
            pass
        await a.send(json.dumps({"type": "start"}))
        view = (await until(a, {"started"}))["view"]
        while len(times) < n and not view["over"]:
            mover = players[view["to_move"]]
            t0 = time.monotonic()
            await mover.send(json.dumps({"type": "reveal"}))
            shown = await until(a, {"reveal"})
            times.append((time.monotonic() - t0) * 1000)
            view = shown["view"]
            if shown["round"] and view["round"] is not None:
                for ws in players:
                    await ws.send(json.dumps({"type": "done", "turn": shown["turn"]}))
            if shown["round"]:
                view = (await until(a, {"round"}))["view"]
            await asyncio.sleep(0.05)
        return times


async def flooder(ws_url: str, code: str, token: str, stop: asyncio.Event) -> int:
    """One socket of the flooded seat: hello (taking the seat over), then ready toggles."""
    sent = 0
    with contextlib.suppress(Exception):
        async with connect(f"{ws_url}/ws/{code}", max_queue=None) as ws:
            await ws.send(json.dumps({"type": "hello", "token": token}))
            ready = True
            while not stop.is_set():
                await ws.send(json.dumps({"type": "ready", "ready": ready}))
                ready, sent = not ready, sent + 1
                await asyncio.sleep(0)
    return sent


async def flood(http: str, ws_url: str) -> None:
    slow = {"turn_timeout_ms": 30_000, "slap_window_ms": 3000, "remove": 0}
    code, seated = await open_table(http, ["Ana", "Bruno"], **slow)
    calm = await reveal_latency(ws_url, code, seated, 60)
    print(f"flood: another table's reveal, no flood: {quantiles(calm)} ms")
    target, victims = await open_table(http, ["Host", "Flood", "C", "D"], **slow)
    code, seated = await open_table(http, ["Ana", "Bruno"], **slow)
    stop = asyncio.Event()
    attackers = [asyncio.create_task(flooder(ws_url, target, victims[1]["token"], stop))
                 for _ in range(40)]  # fmt: skip
    await asyncio.sleep(1)
    under = await reveal_latency(ws_url, code, seated, 60)
    stop.set()
    sent = sum(await asyncio.gather(*attackers))
    print(f"flood: the same during 40 sockets of one seat toggling ready "
          f"({sent} messages sent): {quantiles(under)} ms")  # fmt: skip


class Player:
    """A socket whose pings are answered in the background; its other messages queued."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.wire = Assembler()
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        with contextlib.suppress(Exception):
            async for raw in self.ws:
                msg = self.wire.feed(json.loads(raw))
                if msg["type"] == "ping":
                    await self.ws.send(json.dumps({"type": "pong", "id": msg["id"]}))
                else:
                    self.inbox.put_nowait(msg)

    async def send(self, **msg: Any) -> None:
        await self.ws.send(json.dumps(msg))

    async def until(self, kind: str) -> dict[str, Any]:
        while (msg := await asyncio.wait_for(self.inbox.get(), 30))["type"] != kind:
            pass
        return msg


async def crash_once(db: Path, port: int, later_s: float) -> tuple[int, int]:
    """One kill -9 after an accepted slap; (hands accepted, hands lost)."""
    url, log = f"sqlite:///{db}", db.with_suffix(".log")
    server = ServerProcess(url, port, log)
    server.start()
    http, ws_url = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}"
    long = {"turn_timeout_ms": 30_000, "slap_window_ms": 30_000, "remove": 80}
    code, seated = await open_table(http, ["Ana", "Bruno"], **long)
    async with connect(f"{ws_url}/ws/{code}") as wa, connect(f"{ws_url}/ws/{code}") as wb:
        a, b = Player(wa), Player(wb)
        for p, s in zip((a, b), seated, strict=True):
            await p.send(type="hello", token=s["token"])
        await b.send(type="ready")
        while not (await a.until("table"))["table"]["players"][1]["ready"]:
            pass
        await a.send(type="start")
        v = (await a.until("started"))["view"]
        while True:
            await (a if v["to_move"] == 0 else b).send(type="reveal")
            shown = await a.until("reveal")
            v = shown["view"]
            if shown["round"] and v["round"] is not None:
                break
            if shown["round"]:
                v = (await a.until("round"))["view"]
        await asyncio.sleep(0.3)  # a human's reaction time
        card = v["centre"][0]
        await a.send(type="slap", card=card, ms=300, turn=shown["turn"])
        await a.until("accepted")
        await asyncio.sleep(later_s)
        server.kill()
    server = ServerProcess(url, port, log)
    server.start()
    try:
        async with connect(f"{ws_url}/ws/{code}") as wa:
            await wa.send(json.dumps({"type": "hello", "token": seated[0]["token"]}))
            welcome = json.loads(await wa.recv())
        mine = (welcome["view"]["round"] or {}).get("mine", [])
        return 1, 0 if card in mine else 1
    finally:
        server.stop()


async def crash(n: int) -> None:
    lost = accepted = 0
    with tempfile.TemporaryDirectory() as d:
        for i in range(n):
            a, lo = await crash_once(Path(d) / f"c{i}.db", free_port(), 0.0 if i % 2 == 0 else 0.3)
            accepted, lost = accepted + a, lost + lo
    print(f"crash: {n} kill -9 right after (or 300 ms after) an accepted slap: "
          f"{accepted} hands accepted, {lost} lost")  # fmt: skip


async def main(args: argparse.Namespace) -> None:
    only = set(args.only.split(","))
    print(f"loadavg before: {Path('/proc/loadavg').read_text().split()[:3]}")
    if "crash" in only:
        await crash(args.crashes)
    with tempfile.TemporaryDirectory() as d, running_server(Path(d) / "t.db") as (http, port, pid):
        ws_url = f"ws://127.0.0.1:{port}"
        if "silent" in only:
            await silent(http, ws_url)
        if "flood" in only:
            await flood(http, ws_url)
        if "stuck" in only:
            await stuck(http, port, pid, args.seconds)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="silent,stuck,flood,crash")
    parser.add_argument("--crashes", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=60)
    asyncio.run(main(parser.parse_args()))
