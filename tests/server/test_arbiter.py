"""Fair arbitration (flyswat.arbiter): each case of who is underneath, times as arguments."""

from __future__ import annotations

import pytest

from flyswat.arbiter import (
    ALLOWANCE_CAP_MS,
    RoundArbiter,
    RttLog,
    allowance,
    effective_ms,
    p99,
)
from flyswat.cards import Card
from flyswat.errors import IllegalActionError

R3, G4, B1 = Card.parse("R3-1"), Card.parse("G4-1"), Card.parse("B1-1")


def arbiter(**kw: object) -> RoundArbiter:
    args: dict[str, object] = {
        "seats": 3,
        "hands": 2,
        "window_ms": 3000,
        "sent_at": {0: 1000.0, 1: 1000.0, 2: 1000.0},
        "allowance_ms": {0: 50.0, 1: 200.0, 2: 0.0},
    }
    args.update(kw)
    return RoundArbiter(**args)


def test_p99_is_the_nearest_rank() -> None:
    assert p99([5.0]) == 5.0
    assert p99(range(1, 101)) == 99
    assert p99(range(1, 201)) == 198
    with pytest.raises(ValueError):
        p99([])


@pytest.mark.parametrize(
    ("rtts", "expected"),
    [([], ALLOWANCE_CAP_MS), ([20.0, 30.0, 40.0], 50.0), ([20.0, 400.0], 250.0), ([240.0], 250.0)],
)
def test_the_allowance_is_p99_plus_10_capped_at_250(rtts: list[float], expected: float) -> None:
    assert allowance(rtts) == expected


def test_the_rtt_log_keeps_recent_samples_only() -> None:
    log = RttLog(size=3)
    for rtt in (500.0, 10.0, 20.0, 30.0, -1.0):
        log.add(rtt)
    assert list(log.samples) == [10.0, 20.0, 30.0]
    assert log.allowance() == 40.0


@pytest.mark.parametrize(
    ("c", "elapsed", "a", "expected"),
    [
        (300, 320, 50, 300),  # within [E - A, E]: the client's own time counts
        (200, 320, 50, 270),  # claims faster than the network explains: E - A
        (400, 320, 50, 320),  # claims slower than the server saw: E
        (None, 320, 50, 320),  # no measurement: E
        (100, 120, 50, 100),  # the humanly possible minimum is accepted
    ],
)
def test_the_effective_time_is_the_claim_clamped_to_the_network(
    c: int | None, elapsed: float, a: float, expected: float
) -> None:
    assert effective_ms(c, elapsed, a) == expected


def test_claims_under_100_ms_are_refused() -> None:
    with pytest.raises(IllegalActionError) as e:
        effective_ms(99, 500, 50)
    assert e.value.code == "too_fast"


def test_a_too_fast_claim_is_counted_and_changes_nothing() -> None:
    arb = arbiter()
    with pytest.raises(IllegalActionError):
        arb.claim(0, R3, 50, now=1400.0)
    assert arb.too_fast == {0: 1}
    assert arb.claims == []


def test_the_slower_network_wins_when_its_player_was_faster() -> None:
    arb = arbiter()
    # Seat 0 (fast link) arrives first but reacted in 350 ms; seat 1 (slow link) reacted in
    # 300 ms and its slap took 150 ms longer to arrive.
    arb.claim(0, R3, 350, now=1000.0 + 380)
    arb.claim(1, R3, 300, now=1000.0 + 450)
    assert [(c.seat, c.ms) for c in arb.ordered()] == [(1, 300), (0, 350)]


def test_a_claim_cannot_beat_the_allowance() -> None:
    arb = arbiter()
    arb.claim(0, R3, 350, now=1350.0)  # E = 350
    arb.claim(1, R3, 100, now=1600.0)  # E = 600, A = 200: at best 400
    assert [(c.seat, c.ms) for c in arb.ordered()] == [(0, 350), (1, 400)]


def test_exact_ties_go_by_arrival() -> None:
    arb = arbiter()
    arb.claim(1, R3, 300, now=1320.0)
    arb.claim(0, R3, 300, now=1310.0)
    assert [c.seat for c in arb.ordered()] == [1, 0]


def test_bots_use_their_planned_time_unclamped() -> None:
    arb = arbiter()
    arb.claim(0, R3, 400, now=1450.0)
    arb.claim_planned(2, R3, 380)
    assert [(c.seat, c.ms) for c in arb.ordered()] == [(2, 380), (0, 400)]


def test_a_slap_past_the_window_is_refused() -> None:
    arb = arbiter(window_ms=1000)
    with pytest.raises(IllegalActionError) as e:
        arb.claim(0, R3, 1100, now=2150.0)  # E = 1150, A = 50: at best 1100
    assert e.value.code == "too_late"
    arb.claim(1, R3, 950, now=2150.0)  # A = 200: 950 is within reach
    assert len(arb.claims) == 1


@pytest.mark.parametrize(
    ("first", "second", "code"),
    [((R3, 300), (R3, 400), "same_card"), ((R3, 300), (G4, 400), None)],
)
def test_hands_are_checked_against_claims_not_yet_applied(
    first: tuple[Card, int], second: tuple[Card, int], code: str | None
) -> None:
    arb = arbiter()
    arb.claim(0, first[0], first[1], now=1500.0)
    if code is None:
        arb.claim(0, second[0], second[1], now=1600.0)
        with pytest.raises(IllegalActionError) as e:
            arb.claim(0, B1, 500, now=1700.0)
        assert e.value.code == "no_hands_left"
    else:
        with pytest.raises(IllegalActionError) as e:
            arb.claim(0, second[0], second[1], now=1600.0)
        assert e.value.code == code


def test_a_seat_that_said_done_cannot_slap() -> None:
    arb = arbiter()
    arb.say_done(0)
    with pytest.raises(IllegalActionError) as e:
        arb.claim(0, R3, 300, now=1400.0)
    assert e.value.code == "done"


def test_the_round_is_decided_when_every_seat_is_complete() -> None:
    arb = arbiter()
    assert not arb.decided(1001.0)
    arb.claim(0, R3, 300, now=1350.0)
    arb.claim(0, G4, 400, now=1450.0)
    arb.say_done(1)
    assert not arb.decided(1500.0)
    arb.say_done(2)
    assert arb.deadline() is None
    assert arb.decided(1500.0)


def test_the_round_waits_for_the_slowest_possible_claim_then_closes() -> None:
    # Seat 1 has the largest allowance and got the reveal last: its deadline rules.
    arb = arbiter(sent_at={0: 1000.0, 1: 1020.0, 2: 1000.0})
    assert arb.deadline() == 1020.0 + 3000 + 200
    assert not arb.decided(4220.0)
    assert arb.decided(4220.5)
    arb.say_done(1)
    assert arb.deadline() == 1000.0 + 3000 + 50  # now seat 0 is the last to wait for


def test_a_seat_that_never_got_the_reveal_is_not_waited_for() -> None:
    arb = arbiter(sent_at={0: 1000.0, 2: 1000.0})
    assert arb.complete(1)
    arb.say_done(0)
    arb.say_done(2)
    assert arb.decided(1000.0)


def test_laid_counts_hands_per_seat() -> None:
    arb = arbiter()
    arb.claim(0, R3, 300, now=1350.0)
    arb.claim_planned(2, R3, 320)
    arb.claim_planned(2, G4, 500)
    assert arb.laid() == [1, 0, 2]


def test_a_seat_with_a_hand_on_every_centre_fly_is_not_waited_for() -> None:
    arb = arbiter(centre=1, sent_at={0: 1000.0, 1: 1000.0}, seats=2)
    arb.claim(0, R3, 400, now=1450.0)
    assert not arb.decided(1460.0)
    arb.claim(1, R3, 420, now=1500.0)
    assert arb.decided(1500.0)
