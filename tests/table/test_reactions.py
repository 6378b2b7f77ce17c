"""Quick reactions at the table (flyswat.table.reactions): a fixed set, a few at a time per
seat, never in a slap round's window, to everyone and stored nowhere."""

from __future__ import annotations

from flyswat.protocol import REACTIONS
from flyswat.table.seats import REACT_BURST, REACT_EVERY_MS

from .harness import Harness


def _reacts(h: Harness, conn: int) -> list[dict[str, object]]:
    return [m for m in h.told.get(conn, []) if m["type"] == "react"]


def _errors(h: Harness, conn: int) -> list[object]:
    return [m["code"] for m in h.told.get(conn, []) if m["type"] == "error"]


def test_a_reaction_between_rounds_goes_to_every_seat_and_spectator_and_is_not_stored() -> None:
    h = Harness()
    ana, bruno, carla = h.started()
    h.say(9, type="hello")  # a spectator
    stored = list(h.stored)
    h.say(bruno, type="react", reaction="nice")
    for conn in (ana, bruno, carla, 9):
        assert _reacts(h, conn) == [{"type": "react", "seat": 1, "reaction": "nice"}]
    assert h.stored == stored  # not a game event


def test_every_reaction_of_the_set_is_taken_in_the_lobby_and_at_the_end_too() -> None:
    h = Harness()
    ana, *_ = h.seat_everyone()
    for i, key in enumerate(REACTIONS):
        h.now += REACT_EVERY_MS
        h.say(ana, type="react", reaction=key)
        assert _reacts(h, ana)[i]["reaction"] == key


def test_no_reaction_while_a_slap_round_is_open() -> None:
    h = Harness()
    ana, bruno, carla = h.started()
    h.open_round()
    before = {c: len(h.told[c]) for c in (ana, carla)}
    h.say(bruno, type="react", reaction="wow")
    assert _errors(h, bruno)[-1] == "reaction_in_round"
    assert {c: len(h.told[c]) for c in (ana, carla)} == before  # nobody else told a thing
    for conn in (ana, bruno, carla):
        h.say(conn, type="done")
    assert h.game.round is None
    h.say(bruno, type="react", reaction="wow")  # the round is closed: it goes out
    assert _reacts(h, ana)[-1] == {"type": "react", "seat": 1, "reaction": "wow"}


def test_a_reaction_outside_the_set_is_refused_and_told_to_nobody() -> None:
    h = Harness()
    ana, bruno, _ = h.started()
    for bad in ["hate", "", "NICE", "<b>nice</b>", "x" * 17]:
        h.say(bruno, type="react", reaction=bad)
    assert _errors(h, bruno) == ["bad_reaction"] * 4 + ["malformed"]
    h.say(bruno, type="react", reaction=7)  # not a string
    assert _errors(h, bruno)[-1] == "malformed"
    assert _reacts(h, ana) == []


def test_a_flood_of_reactions_is_cut_to_the_seats_bucket() -> None:
    h = Harness()
    ana, bruno, _ = h.started()
    for _ in range(10):
        h.say(bruno, type="react", reaction="oops")
    assert len(_reacts(h, ana)) == REACT_BURST
    assert _errors(h, bruno) == ["reaction_limited"] * (10 - int(REACT_BURST))
    h.now += REACT_EVERY_MS  # one more, a while later
    h.say(bruno, type="react", reaction="oops")
    assert len(_reacts(h, ana)) == REACT_BURST + 1


def test_a_flood_on_a_second_socket_of_the_seat_shares_its_bucket() -> None:
    h = Harness()
    _, bruno, _ = h.started()
    for _ in range(int(REACT_BURST)):
        h.say(bruno, type="react", reaction="smile")
    h.say(20, type="hello", token=h.tokens[1])  # the same seat opened again
    h.say(20, type="react", reaction="smile")
    assert _errors(h, 20) == ["reaction_limited"]


def test_a_spectator_cannot_react() -> None:
    h = Harness()
    ana, *_ = h.started()
    h.say(9, type="hello")
    h.say(9, type="react", reaction="nice")
    assert _errors(h, 9) == ["spectator"] and _reacts(h, ana) == []
