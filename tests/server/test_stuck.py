"""A client that stops reading is dropped once it falls too far behind; nobody else waits."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time

import pytest

from harness.client import stuck_spectator

from .conftest import Live, Player, create_table, join_table, serve, until_all_ready


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
        table = runner.directory.tables[code]
        deadline = time.monotonic() + 10
        while table.info().spectators == 0:
            assert time.monotonic() < deadline, "the spectator never said hello"
            await asyncio.sleep(0.01)
        # The kernel's own buffer for the spectator made small, so that the server's side
        # fills in seconds rather than minutes (on loopback it can hold megabytes).
        links = runner.executor.links.values()
        (link,) = [link for link in links if table.conns[link.id].seat is None]
        link.socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
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
