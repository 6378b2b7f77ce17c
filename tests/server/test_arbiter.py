"""Fair arbitration (flyswat.arbiter): each case of who is underneath, times as arguments."""

from __future__ import annotations

import pytest

from flyswat.arbiter import (
    ALLOWANCE_CAP_MS,
    BUDGET_GAIN_MS,
    BUDGET_MAX_MS,
    JITTER_MS,
    MIN_HUMAN_MS,
    RTT_WINDOW_MS,
    Link,
    RoundArbiter,
    effective_ms,
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


def link(pings: list[float], network: list[float], now: float = 0.0) -> Link:
    """A link with these pings and network measurements, all taken at ``now``."""
    lk = Link()
    for rtt in pings:
        lk.pong(rtt, now)
    for rtt in network:
        lk.network_rtt(rtt, now)
    return lk


# -- the allowance: what the network measured, never what the client makes it look like ------


def test_a_client_that_answers_no_ping_gets_no_compensation() -> None:
    assert link([], [60.0]).allowance(0.0) == 0.0


def test_without_a_network_measurement_there_is_no_compensation() -> None:
    assert link([60.0, 61.0], []).allowance(0.0) == 0.0


@pytest.mark.parametrize(
    ("pings", "network", "base"),
    [
        ([60.0, 75.0, 62.0], [64.0], 62.0),  # the pings' median
        ([60.0, 75.0, 62.0, 90.0], [64.0], 62.0),  # the lower median
        ([60.0, 70.0, 80.0], [64.0, 66.0, 61.0], 64.0),  # the network's, when it is smaller
        ([40.0, 45.0], [60.0, 70.0], 40.0),  # the smaller of the two, whichever it is
    ],
)
def test_the_allowance_is_the_smaller_median_round_trip_plus_the_jitter_margin(
    pings: list[float], network: list[float], base: float
) -> None:
    assert link(pings, network).allowance(0.0) == base + JITTER_MS


@pytest.mark.parametrize("late", [JITTER_MS + 0.5, 245.0])
def test_a_seat_whose_pongs_come_back_late_gets_the_networks_figure_and_no_margin(
    late: float,
) -> None:
    assert link([60.0 + late, 61.0 + late], [60.0]).allowance(0.0) == 60.0


def test_pongs_within_the_margin_of_the_network_confirm_it() -> None:
    assert link([60.0 + JITTER_MS], [60.0]).allowance(0.0) == 60.0 + JITTER_MS


def test_the_allowance_is_capped() -> None:
    assert link([900.0], [900.0]).allowance(0.0) == ALLOWANCE_CAP_MS


def test_round_trips_older_than_the_window_are_forgotten() -> None:
    lk = link([50.0], [50.0], now=0.0)
    lk.pong(80.0, 20_000.0)
    assert lk.allowance(20_000.0) == 50.0 + JITTER_MS
    assert lk.allowance(RTT_WINDOW_MS + 1) == 0.0  # the network sample is gone too
    lk.network_rtt(80.0, RTT_WINDOW_MS + 1)
    assert lk.allowance(RTT_WINDOW_MS + 1) == 80.0 + JITTER_MS


def test_riding_the_jitter_margin_drains_the_budget_to_its_refill() -> None:
    lk = link([60.0], [60.0])
    granted = []
    for _ in range(40):
        extra = lk.allowance(0.0) - 60.0
        granted.append(extra)
        lk.compensated(60.0 + extra, 0.0)  # every slap claims the very edge
    assert granted[0] == JITTER_MS
    assert granted[-1] == pytest.approx(BUDGET_GAIN_MS)
    assert sum(granted) <= BUDGET_MAX_MS + 40 * BUDGET_GAIN_MS


def test_an_honest_slap_within_the_measured_round_trip_costs_no_budget() -> None:
    lk = link([60.0], [60.0])
    for _ in range(40):
        lk.compensated(58.0, 0.0)
    assert lk.budget == BUDGET_MAX_MS
    assert lk.allowance(0.0) == 60.0 + JITTER_MS


@pytest.mark.parametrize(
    ("pings", "network", "sure"),
    [([], [], 0.0), ([70.0], [], 70.0), ([], [60.0], 60.0), ([305.0], [60.0], 60.0)],
)
def test_the_sure_network_time_is_the_smallest_measurement_of_any_source(
    pings: list[float], network: list[float], sure: float
) -> None:
    assert link(pings, network).sure_ms(0.0) == sure


# -- the effective time ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("c", "elapsed", "a", "expected"),
    [
        (300, 320, 50, 300),  # within [E - A, E]: the client's own time counts
        (200, 320, 50, 270),  # claims faster than the network explains: E - A
        (400, 320, 50, 320),  # claims slower than the server saw: E
        (None, 320, 50, 320),  # no measurement: E
        (100, 120, 50, 100),  # the humanly possible minimum is accepted
        (150, 230, 0, 230),  # no allowance: what the server saw
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


@pytest.mark.parametrize(
    ("c", "elapsed", "sure"),
    [
        (100, 99, 0.0),  # arrived 99 ms after the reveal: whatever it claims
        (None, 50, 0.0),  # no claim is no way round it
        (100, 65, 60.0),  # slapped 5 ms after the reveal on a 60 ms network
        (100, 159, 60.0),  # 99 ms after the reveal, beyond the network's 60
    ],
)
def test_a_slap_that_arrived_sooner_than_a_human_could_is_refused_whatever_it_claims(
    c: int | None, elapsed: float, sure: float
) -> None:
    with pytest.raises(IllegalActionError) as e:
        effective_ms(c, elapsed, 50, sure)
    assert e.value.code == "too_fast"


@pytest.mark.parametrize(("c", "elapsed", "a"), [(100, 160, 75), (None, 100, 0), (100, 100, 5)])
def test_no_effective_time_is_ever_under_the_human_floor(
    c: int | None, elapsed: float, a: float
) -> None:
    assert effective_ms(c, elapsed, a) >= MIN_HUMAN_MS


def test_the_arbiter_refuses_a_slap_faster_than_the_network_allows() -> None:
    arb = arbiter(sure_ms={0: 60.0})
    with pytest.raises(IllegalActionError) as e:
        arb.claim(0, R3, 100, now=1000.0 + 65)
    assert e.value.code == "too_fast"
    assert arb.too_fast == {0: 1}
    with pytest.raises(IllegalActionError):
        arb.claim(1, R3, 100, now=1000.0 + 65)  # seat 1: no network time, but 65 ms is too fast
    assert arb.claim(1, R3, 100, now=1000.0 + 160).ms == MIN_HUMAN_MS


def test_a_seat_given_no_allowance_gets_none() -> None:
    arb = arbiter(allowance_ms={})
    assert arb.claim(0, R3, 150, now=1000.0 + 230).ms == 230


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
