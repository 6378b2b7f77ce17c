"""Past one process: ``flyswat serve --workers 2`` on one SQLite file, and three nodes on
PostgreSQL and Redis — games played through different nodes, a node killed mid-game whose
tables finish elsewhere with records that verify, and one lobby on every node."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from flyswat.record import verify_record
from harness.server import Serve, free_ports, until_health

from .conftest import FAST, Live, Player

#: The cluster's timings in these tests, given to every node (``flyswat serve --beat …``).
#: Production's are a beat a second and dead after 3 s (docs/DEPLOY.md); these are short, so
#: that a test waits about a second for an adoption, yet long enough that a node of a busy
#: machine is not taken for dead between two beats (six beats to the lease).
BEAT_S, DEAD_AFTER_S = 0.25, 1.5
QUICK = ["--beat", str(BEAT_S), "--dead-after", str(DEAD_AFTER_S), "--check-every", "2",
         "--publish-every", "0.1"]  # fmt: skip


def node(port: int) -> Live:
    return Live(f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}", None)


async def post(at: Live, path: str, body: dict[str, Any]) -> dict[str, Any]:
    reply = await asyncio.to_thread(at.post, path, body)
    assert reply.status_code == 201, reply.text
    return dict(reply.json())


async def game(host_at: Live, guest_at: Live, **options: Any) -> tuple[str, Player, Player]:
    """A two-seat table made through ``host_at``, joined through ``guest_at``; both seated
    on sockets opened through their own node (moved to the owner if need be)."""
    seated = await post(host_at, "/api/tables", {"name": "Ana", "seats": 2, **FAST, **options})
    code = seated["code"]
    joined = await post(guest_at, f"/api/tables/{code}/join", {"name": "Bruno"})
    return code, seated["token"], joined["token"]


async def play_through(
    at: list[Live], code: str, tokens: list[str], kill: Any = None, again: list[Live] | None = None
) -> Any:
    """Play table ``code`` to its end with one scripted player per token, each connected
    through its own node of ``at``; ``kill()`` (if given) runs once the game is under way,
    after which each player reconnects through a node of ``again`` and plays on."""
    async with contextlib.AsyncExitStack() as stack:
        players = [
            await stack.enter_async_context(Player.connect(a.ws, code, t))
            for a, t in zip(at, tokens, strict=True)
        ]
        await players[1].send(type="ready")
        while not all(p["ready"] or p["host"] for p in _last_table(players[0])["players"]):
            await players[0].expect("table")
        await players[0].send(type="start")
        if kill is None:
            return await asyncio.gather(*(p.play(timeout=120) for p in players))
        await asyncio.gather(
            *(p.play(timeout=60, until=lambda m: m.get("turn", 0) >= 6) for p in players)
        )
        await asyncio.to_thread(kill)
    overs = []
    others = again or at
    for i, token in enumerate(tokens):  # reconnect through another node
        overs.append(asyncio.create_task(_again(others[i % len(others)], code, token)))
    return await asyncio.gather(*overs)


def _last_table(p: Player) -> dict[str, Any]:
    told = [m for m in p.received if m["type"] in ("table", "welcome")]
    return dict(told[-1]["table"])


async def _again(at: Live, code: str, token: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        try:
            async with Player.connect(at.ws, code, token) as p:
                end = await p.play(timeout=120)
            if end["type"] == "welcome":  # back after the end: the result is the record's
                return {
                    "type": "over",
                    "result": (await asyncio.to_thread(record, at, code))["result"],
                }
            return end
        except (TimeoutError, OSError, AssertionError, Exception) as e:
            if time.monotonic() > deadline:
                raise AssertionError(f"no node took the table over: {e!r}") from e
            await asyncio.sleep(0.3)


def record(at: Live, code: str) -> dict[str, Any]:
    return dict(httpx.get(f"{at.http}/api/tables/{code}/record", timeout=10).json())


def owner_port(code: str, ports: list[int]) -> int:
    """The port of the node that runs ``code``, as every node of ``ports`` says (the
    answer to a table's info names the node that gave it: the owner)."""
    said = set()
    for port in ports:
        reply = httpx.get(f"http://127.0.0.1:{port}/api/tables/{code}", timeout=10)
        assert reply.status_code == 200, reply.text
        said.add(reply.headers["x-flyswat-node-url"])
    assert len(said) == 1, f"the nodes disagree on who runs {code}: {said}"
    return int(said.pop().rsplit(":", 1)[1])


# -- every core of one machine --------------------------------------------------------------


def two_workers(tmp: Path, started: list[Serve]) -> int:
    """``flyswat serve --workers 2`` on a fresh SQLite file: its public port (the workers'
    are the next two)."""
    port = free_ports(3)
    args = ["--workers", "2", "--port", str(port), "--db", f"sqlite:///{tmp / 'w.db'}", *QUICK]
    started.append(Serve(args, tmp / "w.log", [port, port + 1, port + 2]))
    return port


@pytest.mark.anyio
async def test_two_workers_on_one_port_share_the_tables_and_play_them_to_the_end(
    tmp_path: Path, started: list[Serve]
) -> None:
    port = two_workers(tmp_path, started)
    public, one, two = node(port), node(port + 1), node(port + 2)
    tables = [await game(public, one if i % 2 else two) for i in range(6)]
    runs = [(await asyncio.to_thread(until_health, p))["tables"] for p in (port + 1, port + 2)]
    assert sum(runs) == 6
    # The kernel spreads new connections to the public port over both workers (by a hash of
    # the client's port: six creates all land on one worker once in 32 runs, forty probes
    # once in 2**39).
    pids = {httpx.get(f"{public.http}/health", timeout=10).json()["pid"] for _ in range(40)}
    assert len(pids) == 2, f"the public port reached only the workers {pids}"
    overs = await asyncio.gather(*(play_through([one, two], code, [a, b]) for code, a, b in tables))
    for (code, _, _), (first, second) in zip(tables, overs, strict=True):
        assert first["result"] == second["result"]
        assert verify_record(record(public, code)) == []


@pytest.mark.anyio
async def test_a_worker_killed_mid_game_its_table_finishes_and_the_record_verifies(
    tmp_path: Path, started: list[Serve]
) -> None:
    port = two_workers(tmp_path, started)
    one, two = node(port + 1), node(port + 2)
    code, a, b = await game(one, two)
    owner = owner_port(code, [port + 1, port + 2])
    pids = {w: int(until_health(w)["pid"]) for w in (port + 1, port + 2)}

    def kill() -> None:
        os.kill(pids[owner], signal.SIGKILL)

    public = node(port)
    first, second = await play_through([one, two], code, [a, b], kill=kill, again=[public])
    assert first["result"] == second["result"]
    assert verify_record(record(node(port), code)) == []
    until_health(owner)  # the supervisor started the killed worker again


# -- many machines: PostgreSQL and Redis ------------------------------------------------------


def nodes(n: int, db: str, redis_url: str, tmp: Path, started: list[Serve]) -> list[int]:
    ports = [free_ports(1) for _ in range(n)]
    for i, port in enumerate(ports):
        args = ["--workers", "1", "--port", str(port), "--db", db, "--redis", redis_url,
                "--node-id", f"n{i}", "--advertise", f"http://127.0.0.1:{port}",
                *QUICK]  # fmt: skip
        started.append(Serve(args, tmp / f"n{i}.log", [port]))
    return ports


@pytest.mark.anyio
async def test_three_nodes_one_lobby_games_through_different_nodes_and_a_node_killed(
    tmp_path: Path, started: list[Serve], pg_url: str, redis_url: str
) -> None:
    ports = nodes(3, pg_url, redis_url, tmp_path, started)
    at = [node(p) for p in ports]
    # One lobby: a table opened on each node is listed by every node.
    opened = [(await post(a, "/api/tables", {"name": f"H{i}", "seats": 3}))["code"]
              for i, a in enumerate(at)]  # fmt: skip
    deadline = time.monotonic() + 10
    while True:
        lists = [
            {t["code"] for t in httpx.get(a.http + "/api/tables", timeout=5).json()["tables"]}
            for a in at
        ]
        if all(set(opened) <= x for x in lists) or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    assert all(set(opened) <= x for x in lists), lists
    assert lists[0] == lists[1] == lists[2]
    # Games made on one node, joined through another, played through a third.
    games = [await game(at[i], at[(i + 1) % 3]) for i in range(3)]
    overs = await asyncio.gather(
        *(play_through([at[(i + 2) % 3], at[i]], c, [a, b]) for i, (c, a, b) in enumerate(games))
    )
    for (code, _, _), (first, second) in zip(games, overs, strict=True):
        assert first["result"] == second["result"]
        assert verify_record(record(at[0], code)) == []
    # A node killed mid-game: its table finishes on another, and its record verifies.
    code, a, b = await game(at[0], at[1])
    victim = owner_port(code, ports)
    survivors = [node(p) for p in ports if p != victim]
    index = ports.index(victim)

    def kill() -> None:
        started[index].kill()

    first, second = await play_through(
        [node(victim), survivors[0]], code, [a, b], kill=kill, again=survivors
    )
    assert first["result"] == second["result"]
    assert verify_record(record(survivors[1], code)) == []
    survivor = owner_port(code, [p for p in ports if p != victim])  # all agree: one runs it
    assert survivor != victim


@pytest.mark.anyio
async def test_a_node_stopped_gracefully_hands_its_tables_over(
    tmp_path: Path, started: list[Serve], pg_url: str, redis_url: str
) -> None:
    ports = nodes(2, pg_url, redis_url, tmp_path, started)
    at = [node(p) for p in ports]
    code, a, b = await game(at[0], at[1])
    victim = owner_port(code, ports)
    index = ports.index(victim)
    other = at[1 - index]

    def stop() -> None:
        started[index].kill(signal.SIGTERM)  # uvicorn ends by the signal, once shut down
        assert started[index].proc.returncode in (0, -signal.SIGTERM)
        assert "the hand-over failed" not in started[index].log.read_text()

    first, second = await play_through([at[index], other], code, [a, b], kill=stop, again=[other])
    assert first["result"] == second["result"]
    assert verify_record(record(other, code)) == []
    assert owner_port(code, [ports[1 - index]]) == ports[1 - index]
