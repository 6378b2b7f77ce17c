"""A table beyond one game, sans I/O: rematch, leaving, the host's seat-to-bot and kick,
Play now's bot fill — each a typed event, so a table rebuilt from its events is the same."""

from __future__ import annotations

from typing import Any

from flyswat.table import events as ev
from flyswat.table.core import Table
from flyswat.table.io import Join, Sources

from .harness import Harness


def _public(table: Table) -> dict[str, Any]:
    """What everyone sees of a table, less who is connected right now."""
    info = table.info().model_dump()
    for p in info["players"]:
        p.pop("connected")
    info.pop("spectators")
    return info


def _rebuilt(h: Harness) -> Table:
    table, _ = Table.restore(h.table.code, list(h.stored), Sources.fixed(), h.now)
    return table


def _play_out(h: Harness) -> None:
    game = h.game
    while not game.over:
        if game.round is not None:
            for s in range(len(h.table.seats)):
                if game.round is not None and not game.seat_complete(s):
                    h.say(s + 1, type="done")
        else:
            h.say(game.to_move + 1, type="reveal")


def test_a_rematch_starts_when_every_human_accepts_and_survives_a_restart() -> None:
    h = Harness(2, remove=104)
    ana, bruno = h.started()
    _play_out(h)
    assert h.table.state == "over"
    over = next(e for e in h.stored if isinstance(e, ev.Over))
    assert over.too_fast == [0, 0] and over.players == [None, None]
    h.say(ana, type="rematch")
    assert h.table.state == "over" and h.last(bruno, "table")["table"]["players"][0]["rematch"]
    assert _public(_rebuilt(h)) == _public(h.table)  # a half-accepted rematch is stored
    h.say(bruno, type="rematch", accept=False)  # declining changes nothing
    assert h.table.state == "over"
    h.say(bruno, type="rematch")
    assert h.kinds(bruno)[-2:] == ["rematched", "started"]
    assert h.table.state == "playing" and h.table.info().games == 1
    assert not any(s.rematch for s in h.table.seats)
    assert _public(_rebuilt(h)) == _public(h.table)
    _play_out(h)
    assert h.table.info().games == 2


def test_only_players_at_the_end_can_ask_for_a_rematch() -> None:
    h = Harness(2, remove=104)
    ana, _ = h.started()
    h.say(ana, type="rematch")
    assert h.last(ana, "error")["code"] == "not_over"
    h.say(9, type="hello")
    h.say(9, type="rematch")
    assert h.last(9, "error")["code"] == "spectator"


def test_kick_leave_and_seat_to_bot_are_rebuilt_from_their_events() -> None:
    h = Harness(4)
    tokens = [h.do(Join(f"P{i}")).reply[1] for i in range(2)]
    h.say(1, type="hello", token=h.tokens[0])
    h.say(2, type="hello", token=tokens[0])
    h.say(3, type="hello", token=tokens[1])
    h.say(2, type="kick", target=2)
    assert h.last(2, "error")["code"] == "not_host"
    h.say(1, type="seat_bot", target=1)
    assert h.last(1, "error")["code"] == "not_absent"
    h.say(1, type="kick", target=1)
    assert h.last(2, "error")["code"] == "kicked" and h.closed[2].code == 4403
    assert not h.table.seats[1].joined
    h.say(3, type="leave")
    assert not h.table.seats[2].joined
    h.say(3, type="ready")
    assert h.last(3, "error")["code"] == "spectator"  # the socket watches now
    h.say(1, type="seat_bot", target=3, level="hard")
    assert h.table.seats[3].is_bot and h.table.info().players[3].rating is not None
    assert _public(_rebuilt(h)) == _public(h.table)
    h.say(1, type="leave")  # the host leaves, nobody else is seated: the lobby closes
    assert h.table.state == "expired"


def test_the_host_passes_on_when_the_host_leaves() -> None:
    h = Harness(3)
    token = h.do(Join("Bruno")).reply[1]
    h.say(1, type="hello", token=h.tokens[0])
    h.say(2, type="hello", token=token)
    h.say(1, type="leave")
    assert h.table.host == 1 and h.table.state == "lobby"
    assert _rebuilt(h).host == 1


def test_play_now_bots_take_the_free_seats_when_the_wait_is_over() -> None:
    h = Harness(4, autofill_ms=5000)
    h.say(1, type="hello", token=h.tokens[0])
    assert h.last(1, "welcome")["table"]["fill_in_ms"] == 5000
    h.at(h.now + 2000)
    assert h.table.state == "lobby" and h.table.info(h.now).fill_in_ms == 3000
    h.at(h.now + 3000)
    assert h.table.state == "playing"
    assert [s.kind for s in h.table.seats] == ["human", "bot", "bot", "bot"]
    assert "started" in h.kinds(1)


def test_a_play_now_table_full_of_players_starts_at_once() -> None:
    h = Harness(2, autofill_ms=5000)
    h.do(Join("Bruno"))
    assert h.table.state == "playing" and h.table.fill_due is None


def test_a_play_now_player_alone_starts_at_once_with_bots_and_not_beside_another_player() -> None:
    h = Harness(4, autofill_ms=60_000)
    h.say(1, type="hello", token=h.tokens[0])
    h.say(1, type="start")
    assert h.table.state == "playing" and h.table.fill_due is None
    assert [s.kind for s in h.table.seats] == ["human", "bot", "bot", "bot"]
    assert _public(_rebuilt(h)) == _public(h.table)  # the bots' seats are stored
    two = Harness(4, autofill_ms=60_000)
    bruno = two.do(Join("Bruno")).reply[1]
    two.say(1, type="hello", token=two.tokens[0])
    two.say(2, type="hello", token=bruno)
    two.say(2, type="start")
    assert two.last(2, "error")["code"] == "not_alone"
    assert two.table.state == "lobby" and not any(s.is_bot for s in two.table.seats)
