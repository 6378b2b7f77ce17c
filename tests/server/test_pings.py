"""Pings on a link's real socket, on a clock the test moves: one a period, and the one nearly
due rides ahead of whatever else the link writes (one write, not two)."""

from __future__ import annotations

import asyncio
import json
import socket
from types import SimpleNamespace

import pytest

from flyswat.server.connection import PING_EARLY_MS, PING_SLOTS, PING_SPREAD, Link, Pinger
from flyswat.server.frames import text_frame
from flyswat.server.limits import Limits


def frames_of(data: bytes) -> list[dict[str, object]]:
    """The JSON texts of unmasked server frames (payloads under 126 bytes), in order."""
    out = []
    while data:
        assert data[0] == 0x81 and data[1] < 126
        out.append(json.loads(data[2 : 2 + data[1]]))
        data = data[2 + data[1] :]
    return out


@pytest.mark.anyio
async def test_a_ping_nearly_due_rides_ahead_of_a_link_s_frames_and_is_not_sent_twice() -> None:
    loop = asyncio.get_running_loop()
    ours, theirs = socket.socketpair()
    theirs.setblocking(False)
    transport, _ = await loop.create_connection(asyncio.Protocol, sock=ours)
    now = [0.0]
    link = Link(1, SimpleNamespace(transport=transport), lambda: now[0],  # type: ignore[arg-type]
                lambda mark: None, Limits(), schedule=lambda link: None)  # fmt: skip
    pinger = Pinger(every_s=1.0, slots=1)  # each tick serves this link

    async def written() -> list[dict[str, object]]:
        link.flush()
        await asyncio.sleep(0.01)
        try:
            return frames_of(theirs.recv(65536))
        except BlockingIOError:
            return []

    def answer(ping: dict[str, object]) -> None:
        assert ping["type"] == "ping" and isinstance(ping["id"], int)
        assert link.pong(ping["id"], link.clock()) is not None

    try:
        pinger.add(link)  # greeted: pinged at once, next due a period later
        first = await written()
        assert [m["type"] for m in first] == ["ping"]
        answer(first[0])

        now[0] = 1000.0 - PING_EARLY_MS - 1  # not yet nearly due: a frame goes alone
        link.send(text_frame(b'{"type":"table","n":1}'))
        assert await written() == [{"type": "table", "n": 1}]

        now[0] = 1000.0 - PING_EARLY_MS + 1  # nearly due: the ping goes first, in one write
        link.send(text_frame(b'{"type":"table","n":2}'))
        rode = await written()
        assert [m["type"] for m in rode] == ["ping", "table"]

        now[0] = 1000.0  # its time: that period's ping went already
        pinger._tick()
        assert await written() == []
        assert len(link.pings) == 1  # the one that rode, not answered yet

        now[0] = 1500.0  # an unanswered ping rides no second one with the link's frames
        link.send(text_frame(b'{"type":"table","n":3}'))
        assert await written() == [{"type": "table", "n": 3}]
        answer(rode[0])

        now[0] = 2000.0  # the next period's, at its time, alone
        pinger._tick()
        alone = await written()
        assert [m["type"] for m in alone] == ["ping"]
        assert alone[0]["id"] != rode[0]["id"] != first[0]["id"]
    finally:
        if pinger.timer is not None:
            pinger.timer.cancel()
        transport.close()
        theirs.close()


@pytest.mark.anyio
async def test_the_pinger_spreads_its_links_over_the_period_and_pings_each_once() -> None:
    """One tick serves one group of :data:`PING_SLOTS`: the pings of a thousand links greeted
    at once (and their pongs read back) never come in one long turn of the loop again."""
    loop = asyncio.get_running_loop()
    ours, theirs = socket.socketpair()
    transport, _ = await loop.create_connection(asyncio.Protocol, sock=ours)
    accepted = SimpleNamespace(transport=transport)  # never written: the frames stay queued
    links = [Link(i, accepted, lambda: 0.0, lambda mark: None, Limits(),  # type: ignore[arg-type]
                  schedule=lambda link: None) for i in range(1000)]  # fmt: skip

    def pings() -> list[int]:
        return [len(link.pings) for link in links]

    pinger = Pinger(every_s=1.0)
    try:
        for link in links:  # greeted one after another: each pinged at once
            pinger.add(link)
        assert pinger.timer is not None
        pinger.timer.cancel()  # the test ticks by hand
        assert pings() == [1] * len(links)
        per_tick = []
        for _ in range(PING_SLOTS):  # one period
            before = sum(pings())
            pinger._tick()
            pinger.timer.cancel()
            per_tick.append(sum(pings()) - before)
        assert pings() == [2] * len(links)  # each once a period
        groups = int(PING_SLOTS * PING_SPREAD)  # the last fifth of the period
        assert max(per_tick) <= len(links) / groups + 1  # spread evenly over it
        assert per_tick[: PING_SLOTS - groups] == [0] * (PING_SLOTS - groups)  # 0.8 s at least
    finally:
        transport.close()
        theirs.close()
