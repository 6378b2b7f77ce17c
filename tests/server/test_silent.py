"""Silent and doubled sockets over real connections: no hello, no pong, one seat twice; and the
lobby list in pages."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from .conftest import Live, create_table, serve


@pytest.mark.anyio
async def test_a_socket_that_never_says_hello_is_told_and_closed(tmp_path: Path) -> None:
    with serve(f"sqlite:///{tmp_path / 'h.db'}", hello_timeout_s=0.5) as live:
        seated = await create_table(live, seats=2)
        async with connect(f"{live.ws}/ws/{seated['code']}") as ws:
            t0 = time.monotonic()
            told = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert told["code"] == "hello_timeout"
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 10)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4408
            assert time.monotonic() - t0 < 5


@pytest.mark.anyio
async def test_a_socket_that_never_answers_a_ping_is_dropped(tmp_path: Path) -> None:
    with serve(f"sqlite:///{tmp_path / 'p.db'}", max_missed_pings=2) as live:
        seated = await create_table(live, seats=2)
        async with connect(f"{live.ws}/ws/{seated['code']}") as ws:
            await ws.send(json.dumps({"type": "hello", "token": seated["token"]}))
            kinds = []
            with pytest.raises(ConnectionClosed) as closed:
                while True:  # read everything, answer nothing
                    kinds.append(json.loads(await asyncio.wait_for(ws.recv(), 10))["type"])
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4408
            assert kinds.count("ping") == 2 and kinds[-1] == "error"
        info = httpx.get(f"{live.http}/api/tables/{seated['code']}").json()
        assert info["players"][0]["connected"] is False  # no longer shown as there


@pytest.mark.anyio
async def test_a_second_socket_on_a_seat_takes_it_and_the_first_is_told_why(live: Live) -> None:
    seated = await create_table(live, seats=2)
    url = f"{live.ws}/ws/{seated['code']}"
    hello = json.dumps({"type": "hello", "token": seated["token"]})
    async with connect(url) as first, connect(url) as second:
        await first.send(hello)
        assert json.loads(await first.recv())["type"] == "welcome"
        await second.send(hello)
        assert json.loads(await second.recv())["type"] == "welcome"
        seen = []
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                seen.append(json.loads(await asyncio.wait_for(first.recv(), 10)))
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4409
        assert any(m.get("code") == "replaced" for m in seen)
        await second.send(json.dumps({"type": "ready"}))  # the new socket plays on
        while json.loads(await asyncio.wait_for(second.recv(), 10))["type"] != "table":
            pass


def test_the_lobby_list_comes_in_pages_of_joinable_tables(live: Live) -> None:
    codes = [
        live.post("/api/tables", {"name": f"H{i}", "seats": 2}).json()["code"] for i in range(5)
    ]
    first = live.get("/api/tables?limit=2").json()
    assert [t["code"] for t in first["tables"]] == codes[::-1][:2]  # newest first
    second = live.get(f"/api/tables?limit=2&after={first['next']}").json()
    third = live.get(f"/api/tables?limit=2&after={second['next']}").json()
    listed = [t["code"] for page in (first, second, third) for t in page["tables"]]
    assert listed == codes[::-1] and third["next"] is None
    bad = live.get("/api/tables?limit=lots")
    assert (bad.status_code, bad.json()["error"]) == (400, "malformed")


def test_a_cursor_that_names_no_table_is_malformed(live: Live) -> None:
    reply = live.get("/api/tables?after=NOSUCH")
    assert (reply.status_code, reply.json()["error"]) == (400, "malformed")


@pytest.mark.anyio
async def test_a_socket_opened_as_its_table_was_dropped_is_sent_to_look_again(
    tmp_path: Path,
) -> None:
    """A socket accepted just before its table left this node (another node took it; a paused
    node woke and found it lost) must not be answered from the copy left behind: its hello
    is answered ``moved`` and the socket closed 4302 (docs/PROTOCOL.md). Found by
    test_cluster_attacks' pause: the player sat at a table nobody ran, told nothing more."""
    with serve(f"sqlite:///{tmp_path / 'm.db'}") as live:
        seated = await create_table(live, seats=2)
        code, token = seated["code"], seated["token"]
        runner = live.app.state.runner
        async with connect(f"{live.ws}/ws/{code}") as ws:  # accepted: the table is found
            dropped = asyncio.Event()
            loop = asyncio.get_running_loop()

            def drop() -> None:  # on the server's loop, as the writer's fence would
                runner.node.lost({code})
                loop.call_soon_threadsafe(dropped.set)

            runner.executor.writer.loop.call_soon_threadsafe(drop)
            await asyncio.wait_for(dropped.wait(), 10)
            await ws.send(json.dumps({"type": "hello", "token": token}))
            told = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert told["type"] == "moved", told
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 10)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4302
        async with connect(f"{live.ws}/ws/{code}") as ws:  # looking again finds the table
            await ws.send(json.dumps({"type": "hello", "token": token}))
            told = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert told["type"] == "welcome" and told["seat"] == seated["seat"], told
