"""A client that stops reading is dropped once it falls too far behind; nobody else waits."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time

import pytest

from flyswat.server.connection import scope_extension
from flyswat.server.transport import SOCKET_KEY

from .conftest import Live, Player, create_table, join_table, serve, until_all_ready


def stuck_spectator(port: int, code: str) -> socket.socket:
    """A raw WebSocket that says hello as a spectator, then never reads again."""
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


@pytest.mark.anyio
async def test_a_spectator_that_stops_reading_is_dropped_and_play_goes_on(db_url: str) -> None:
    # Too slow is the only cause: pings may go unanswered as long as they like.
    with serve(db_url, max_behind_bytes=64 * 1024, max_missed_pings=10_000) as live:
        await stuck_and_dropped(live)


async def stuck_and_dropped(live: Live) -> None:
    seated = await create_table(live, seats=8, slap_window_ms=3000, turn_timeout_ms=30_000)
    code = seated["code"]
    tokens = [seated["token"]] + [
        (await join_table(live, code, f"P{i}"))["token"] for i in range(7)
    ]
    port = int(live.http.rsplit(":", 1)[1])
    async with contextlib.AsyncExitStack() as stack:
        players = [
            await stack.enter_async_context(Player.connect(live.ws, code, t)) for t in tokens
        ]

        async def keep_reading(player: Player) -> None:
            while True:
                await player.recv()

        async def toggle(player: Player) -> None:
            ready = True
            while True:  # lobby traffic (a table update to everyone) within the rate limit
                ready = not ready
                await player.send(type="ready", ready=ready)
                await asyncio.sleep(0.06)

        tasks = [asyncio.create_task(keep_reading(p)) for p in players]
        stuck = stuck_spectator(port, code)
        runner = live.app.state.runner
        table = runner.tables[code]
        deadline = time.monotonic() + 10
        while table.info().spectators == 0:
            assert time.monotonic() < deadline, "the spectator never said hello"
            await asyncio.sleep(0.01)
        # The kernel's own buffer for the spectator made small, so that the server's side
        # fills in seconds rather than minutes (on loopback it can hold megabytes).
        (link,) = [link for link in runner.links.values() if table.conns[link.id].seat is None]
        scope_extension(link.ws, SOCKET_KEY).setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        tasks += [asyncio.create_task(toggle(p)) for p in players[1:]]
        deadline = time.monotonic() + 60
        while table.info().spectators == 1:
            assert time.monotonic() < deadline, "the stuck spectator was never dropped"
            await asyncio.sleep(0.1)
        stuck.close()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for p in players[1:]:
            await p.send(type="ready", ready=True)
        await until_all_ready(players[0])
        await players[0].send(type="start")
        assert (await players[1].expect("started"))["type"] == "started"  # the others play on
