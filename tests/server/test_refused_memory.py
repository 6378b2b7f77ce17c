"""Refused messages leave nothing behind: 64 MiB of oversized frames, each answered too_big,
do not grow a real server process."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
from websockets.asyncio.client import connect

from harness.procs import rss_bytes
from harness.server import running_server


async def refuse_big_frames(ws_url: str, code: str, sockets: int, frames: int) -> int:
    async def one() -> int:
        told = 0
        async with connect(f"{ws_url}/ws/{code}", max_size=None) as ws:
            for _ in range(frames):
                await ws.send("a" * (1 << 20))
                told += json.loads(await asyncio.wait_for(ws.recv(), 30))["code"] == "too_big"
        return told

    return sum(await asyncio.gather(*(one() for _ in range(sockets))))


def test_refused_one_mib_frames_do_not_grow_the_server(tmp_path: Path) -> None:
    with running_server(tmp_path / "m.db") as (http, port, pid):
        code = httpx.post(http + "/api/tables", json={"name": "Ana", "seats": 2}).json()["code"]
        ws_url = f"ws://127.0.0.1:{port}"
        asyncio.run(refuse_big_frames(ws_url, code, 4, 4))  # warm up the allocator
        before = rss_bytes(pid)
        told = sum(asyncio.run(refuse_big_frames(ws_url, code, 4, 16)) for _ in range(3))
        grown = (rss_bytes(pid) - before) / 2**20
    assert told == 3 * 4 * 16  # each one answered, none acted on
    assert grown < 24, f"the server grew by {grown:.0f} MB after 192 MiB of refused frames"
