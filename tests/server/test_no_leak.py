"""Hidden information (R8, R25): no card is ever sent to anyone before it is revealed."""

from __future__ import annotations

import asyncio
import re

import pytest

from flyswat.record import verify_record

from .conftest import Live, Player, create_table, join_table

CARD = re.compile(r"(?<![A-Za-z0-9_-])(?:[RYGBPO][1-5]-[1-4]|S-(?:1[0-6]|[1-9]))(?![0-9])")


def leaks(player: Player) -> list[str]:
    """Cards named in a message before a reveal message showed them, until the game is over
    (R25: then everything is revealed)."""
    shown: set[str] = set()
    found = []
    for raw, msg in zip(player.raw, player.received, strict=True):
        if msg["type"] == "over" or (msg.get("view") or {}).get("over"):
            break
        if msg["type"] == "reveal":
            shown.add(msg["card"])
        found += [f"{msg['type']}: {c}" for c in CARD.findall(raw) if c not in shown]
    return found


@pytest.mark.anyio
async def test_two_humans_two_bots_and_a_spectator_never_see_a_card_before_its_reveal(
    live: Live,
) -> None:
    bots = [{"seat": 2, "level": "normal"}, {"seat": 3, "level": "hard"}]
    seated = await create_table(live, bots=bots, remove=80)
    code = seated["code"]
    joined = await join_table(live, code, "Bruno")
    async with (
        Player.connect(live.ws, code, seated["token"]) as ana,
        Player.connect(live.ws, code, joined["token"], reaction_ms=300) as bruno,
        Player.connect(live.ws, code, None) as watcher,
    ):
        assert (ana.seat, bruno.seat, watcher.seat) == (0, 1, None)
        await bruno.send(type="ready")
        while not all(
            p["ready"] or p["host"] for p in (await ana.expect("table"))["table"]["players"]
        ):
            pass
        await ana.send(type="start")
        watcher.reveals = watcher.slaps = False
        results = await asyncio.gather(ana.play(), bruno.play(), watcher.play())
    assert results[0]["result"] == results[1]["result"] == results[2]["result"]
    record = (await asyncio.to_thread(live.get, f"/api/tables/{code}/record")).json()
    for who in (ana, bruno, watcher):
        assert sum(m["type"] == "reveal" for m in who.received) == len(record["turns"])
        assert leaks(who) == []
    # Each player saw its own won cards, and never another's (R25).
    for who, other in ((ana, bruno), (bruno, ana)):
        mine = {c for m in who.received if m.get("view") for c in m["view"]["won"]}
        theirs = {c for m in other.received if m.get("view") for c in m["view"]["won"]}
        assert not any(set(m["view"]["won"]) & (theirs - mine) for m in who.received
                       if m.get("view") and m["type"] != "over")  # fmt: skip
    assert verify_record(record) == []
    assert any(
        s["seat"] in (0, 1) for t in record["turns"] for s in t.get("round", {}).get("slaps", [])
    )


def test_the_leak_detector_finds_a_card_shown_too_early() -> None:
    p = Player(ws=None, seat=0)
    p.raw = ['{"type": "hands", "x": "R3-1"}', '{"type": "reveal", "card": "R3-1"}']
    p.received = [{"type": "hands"}, {"type": "reveal", "card": "R3-1"}]
    assert leaks(p) == ["hands: R3-1"]
    p.raw.reverse()
    p.received.reverse()
    assert leaks(p) == []
