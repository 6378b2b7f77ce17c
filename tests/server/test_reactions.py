"""Quick reactions through a real server and real sockets: one seat reacts, the others and a
spectator see it; what an adversary tries (a flood, a reaction in a round's window, a key
outside the set, a spectator reacting) is refused and reaches nobody."""

from __future__ import annotations

import pytest

from flyswat.table.seats import REACT_BURST

from .conftest import Live, Player, create_table, join_table, until_all_ready


@pytest.mark.anyio
async def test_a_reaction_reaches_the_table_and_a_flood_and_a_round_window_do_not(
    live: Live,
) -> None:
    made = await create_table(live, seats=2, slap_window_ms=30_000, turn_timeout_ms=400, remove=0)
    code = made["code"]
    joined = await join_table(live, code, "Bruno")
    async with (
        Player.connect(live.ws, code, made["token"], slaps=False) as ana,
        Player.connect(live.ws, code, joined["token"], slaps=False) as bruno,
        Player.connect(live.ws, code, None) as watcher,
    ):
        await ana.send(type="react", reaction="nice")
        for who in (ana, bruno, watcher):
            assert (await who.expect("react")) == {"type": "react", "seat": 0, "reaction": "nice"}
        await watcher.send(type="react", reaction="wow")
        assert (await watcher.expect("error"))["code"] == "spectator"
        await bruno.send(type="react", reaction="<script>")
        assert (await bruno.expect("error"))["code"] == "bad_reaction"
        for _ in range(10):  # a flood: the seat's bucket lets a few through
            await bruno.send(type="react", reaction="oops")
        codes = [(await bruno.recv()) for _ in range(10)]
        assert sum(m["type"] == "react" for m in codes) == REACT_BURST
        assert [m["code"] for m in codes if m["type"] == "error"] == ["reaction_limited"] * 7

        await bruno.send(type="ready")
        await until_all_ready(ana)
        await ana.send(type="start")
        # A round still open (R15: a swatter on an empty centre opens none that stays open).
        opened = await ana.play(
            until=lambda m: m["type"] == "reveal" and m["round"] and m["view"]["round"] is not None
        )
        assert opened["round"]
        await ana.send(type="react", reaction="well_played")
        assert (await ana.expect("error"))["code"] == "reaction_in_round"
    assert not any(m["type"] == "react" and m["seat"] == 1 and m["reaction"] != "oops"
                   for m in ana.received)  # fmt: skip
    assert sum(m["type"] == "react" for m in ana.received) == 1 + REACT_BURST
