"""Whole games on a real uvicorn server: scripted humans and bots play to the end."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from flyswat.record import verify_record
from flyswat.shuffle import commitment

from .conftest import Live, Player, create_table


@pytest.mark.anyio
async def test_a_human_and_three_bots_play_to_the_end_and_the_record_verifies(
    live: Live,
) -> None:
    bots = [{"seat": s, "level": lvl} for s, lvl in ((1, "easy"), (2, "normal"), (3, "hard"))]
    seated = await create_table(live, bots=bots)
    async with Player.connect(live.ws, seated["code"], seated["token"]) as ana:
        await ana.send(type="start")
        started = await ana.expect("started")
        over = await ana.play()
    assert over["commitment"] == started["commitment"] == commitment(over["seed"])
    reply = await asyncio.to_thread(live.get, f"/api/tables/{seated['code']}/record")
    record: dict[str, Any] = reply.json()
    assert verify_record(record) == []
    assert record["commitment"] == started["commitment"]
    assert record["result"] == over["result"]
    assert [s["kind"] for s in record["seats"]] == ["human", "bot", "bot", "bot"]
