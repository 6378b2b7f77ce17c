"""A join is idempotent, sans I/O: a join that already holds a seat — the same identity, or
an anonymous join with the same key — gets that seat and its token back and stores nothing;
the token is derived from the key, so a table rebuilt from its events answers the same."""

from __future__ import annotations

import pytest

from flyswat import protocol as p
from flyswat.errors import IllegalActionError
from flyswat.table import events as ev
from flyswat.table.core import Table
from flyswat.table.io import Join, Sources
from flyswat.table.seats import seat_token, token_hash

from .harness import Harness

KEY = "k" * 22
OTHER = "o" * 22


def _rebuilt(h: Harness) -> Table:
    table, _ = Table.restore(h.table.code, list(h.stored), Sources.fixed(), h.now)
    return table


def test_an_anonymous_join_sent_again_with_its_key_gets_the_same_seat_and_stores_nothing() -> None:
    h = Harness(4)
    first = h.do(Join("Bruno", key=KEY))
    stored = len(h.stored)
    again = h.do(Join("Bruno", key=KEY))
    assert again.reply == first.reply == (1, seat_token(KEY, "TESTAB"))
    assert again.events == [] and again.sends == [] and len(h.stored) == stored
    assert [s.joined for s in h.table.seats] == [True, True, False, False]


def test_a_join_with_another_key_or_none_takes_a_new_seat() -> None:
    h = Harness(4)
    assert h.do(Join("Bruno", key=KEY)).reply[0] == 1
    assert h.do(Join("Bruno", key=OTHER)).reply[0] == 2
    assert h.do(Join("Bruno")).reply[0] == 3
    assert len({s.token_hash for s in h.table.seats}) == 4


def test_the_keys_seat_is_found_again_after_a_restart_from_the_stored_events() -> None:
    h = Harness(4)
    seat, token = h.do(Join("Bruno", key=KEY)).reply
    rebuilt = _rebuilt(h)
    again = rebuilt.handle(Join("Bruno", key=KEY), h.now)
    assert again.reply == (seat, token) and again.events == []
    # What the store keeps of the join: the token's hash, never the key nor the token.
    joined = [e for e in h.stored if isinstance(e, ev.Joined) and e.seat == seat]
    assert joined[0].token_hash == token_hash(token)
    assert KEY not in str(ev.data_of(joined[0])) and token not in str(ev.data_of(joined[0]))


def test_a_resent_join_that_filled_a_play_now_table_gets_its_seat_in_the_started_game() -> None:
    h = Harness(2, autofill_ms=5000)
    first = h.do(Join("Bruno", key=KEY)).reply
    assert h.table.state == "playing"  # the join filled the table: its game started
    again = h.do(Join("Bruno", key=KEY))
    assert again.reply == first and again.events == []
    with pytest.raises(IllegalActionError) as refused:
        h.do(Join("Carla", key=OTHER))
    assert refused.value.code == "already_started"


def test_an_identified_player_joining_again_gets_their_seat_and_token_back() -> None:
    h = Harness(4)
    first = h.do(Join("Bruno", "pid-bruno", 1000, key="secret-of-bruno"))
    again = h.do(Join("Bruno", "pid-bruno", 1000, key="secret-of-bruno"))
    assert again.reply == first.reply and again.events == []
    assert sum(s.player == "pid-bruno" for s in h.table.seats) == 1


def test_an_identity_with_a_new_secret_gets_its_seat_with_a_new_token_the_old_one_dead() -> None:
    h = Harness(4)
    seat, old = h.do(Join("Bruno", "pid-bruno", 1000, key="old-secret")).reply
    out = h.do(Join("Bruno", "pid-bruno", 1000, key="new-secret"))  # claimed on another device
    assert out.reply == (seat, seat_token("new-secret", "TESTAB"))
    assert [type(e) for e in out.events] == [ev.Joined]
    assert not h.table.seats[seat].holds(old) and h.table.seats[seat].holds(out.reply[1])
    assert _rebuilt(h).seats[seat].holds(out.reply[1])
    assert h.table.seats[seat].name == "Bruno" and h.table.seats[seat].rating == 1000


def test_a_key_never_opens_an_identified_seat_nor_another_table() -> None:
    h = Harness(4)
    h.do(Join("Bruno", "pid-bruno", 1000, key=KEY))
    assert h.do(Join("Eve", key=KEY)).reply[0] == 2  # anonymous: a seat of its own
    assert seat_token(KEY, "TESTAB") != seat_token(KEY, "OTHERT")  # a key is per table


def test_a_released_seat_is_not_given_back_to_its_key() -> None:
    h = Harness(4)
    seat = h.do(Join("Bruno", key=KEY)).reply[0]
    h.at(h.now + h.table.seat_ttl_ms + 1)  # never connected: the seat is given up
    assert not h.table.seats[seat].joined
    h.do(Join("Carla"))  # takes the freed seat
    again = h.do(Join("Bruno", key=KEY))
    assert again.reply[0] != seat and again.events  # a new seat, stored


def test_the_host_of_a_table_made_with_a_key_joining_again_gets_the_host_seat() -> None:
    opts = p.TableOptions(seats=3)
    table, out = Table.create("HOSTAB", opts, "Ana", Sources.fixed(), 0.0, player="pid-ana",
                              key="secret-of-ana")  # fmt: skip
    again = table.handle(Join("Ana", "pid-ana", 1000, key="secret-of-ana"), 1.0)
    assert again.reply == out.reply == (0, seat_token("secret-of-ana", "HOSTAB"))
    assert again.events == []


def test_a_join_of_an_expired_lobby_is_refused_even_with_its_key() -> None:
    h = Harness(4)
    h.do(Join("Bruno", key=KEY))
    h.at(h.now + h.table.lobby_ttl_ms + 1)
    assert h.table.state == "expired"
    with pytest.raises(IllegalActionError) as refused:
        h.do(Join("Bruno", key=KEY))
    assert refused.value.code == "expired"
