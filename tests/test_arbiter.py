"""Fair arbitration (flyswat.arbiter): each case of who is underneath, times as arguments."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flyswat.arbiter import (
    ALLOWANCE_CAP_MS,
    BUDGET_GAIN_MS,
    BUDGET_MAX_MS,
    JITTER_MS,
    MIN_HUMAN_MS,
    RTT_WINDOW_MS,
    Link,
    RoundClock,
    _Samples,
    effective_ms,
)
from flyswat.cards import Card
from flyswat.engine import Game, Round, Slap
from flyswat.errors import IllegalActionError
from flyswat.rules import Rules

R3, G4, B1 = Card.parse("R3-1"), Card.parse("G4-1"), Card.parse("B1-1")
SWATTER = Card.parse("S-1")


def clock(window_ms: int = 3000, **kw: object) -> RoundClock:
    """A round opened at 1000 ms for three seats; allowances 50, 200 and 0 (a bot)."""
    args: dict[str, object] = {
        "rules": Rules(seats=3, slap_window_ms=window_ms),
        "opened_at": 1000.0,
        "waited": [0, 1, 2],
        "allowance_ms": {0: 50.0, 1: 200.0, 2: 0.0},
    }
    args.update(kw)
    return RoundClock(**args)  # type: ignore[arg-type]


def stacked(*hands: tuple[int, Card, float]) -> list[tuple[int, float]]:
    """The order the engine stacks hands laid in this arrival order (R17)."""
    r = Round(SWATTER, 0, frozenset())
    r.slaps = [Slap(seat, card, ms) for seat, card, ms in hands]
    return [(s.seat, s.ms or 0.0) for s in r.ordered()]


def open_round(seats: int = 3, least: int = 3, most: int = 112) -> Game:
    """A game of ``seats`` with a slap round open over ``least`` to ``most`` centre flies."""
    for seed in range(1000):
        game = Game.new(Rules(seats=seats), f"arbiter-{seed}")
        while not game.over:
            game.reveal()
            if game.round is not None:
                if least <= len(game.centre) <= most:
                    return game
                game.close_round()
    raise AssertionError("no seed opens such a round")


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


def test_the_clock_refuses_a_slap_faster_than_the_network_allows() -> None:
    c = clock(sure_ms={0: 60.0})
    with pytest.raises(IllegalActionError) as e:
        c.judge(0, 100, now=1000.0 + 65)
    assert e.value.code == "too_fast"
    with pytest.raises(IllegalActionError):
        c.judge(1, 100, now=1000.0 + 65)  # seat 1: no network time, but 65 ms is too fast
    assert c.judge(1, 100, now=1000.0 + 160) == MIN_HUMAN_MS


def test_a_seat_given_no_allowance_gets_none() -> None:
    assert clock(allowance_ms={}).judge(0, 150, now=1000.0 + 230) == 230


def test_the_slower_network_wins_when_its_player_was_faster() -> None:
    c = clock()
    # Seat 0 (fast link) arrives first but reacted in 350 ms; seat 1 (slow link) reacted in
    # 300 ms and its slap took 150 ms longer to arrive.
    first = c.judge(0, 350, now=1000.0 + 380)
    second = c.judge(1, 300, now=1000.0 + 450)
    assert stacked((0, R3, first), (1, R3, second)) == [(1, 300), (0, 350)]


def test_a_claim_cannot_beat_the_allowance() -> None:
    c = clock()
    first = c.judge(0, 350, now=1350.0)  # E = 350
    second = c.judge(1, 100, now=1600.0)  # E = 600, A = 200: at best 400
    assert stacked((0, R3, first), (1, R3, second)) == [(0, 350), (1, 400)]


def test_exact_ties_go_by_arrival() -> None:
    c = clock()
    first = c.judge(1, 300, now=1320.0)
    second = c.judge(0, 300, now=1310.0)
    assert [seat for seat, _ in stacked((1, R3, first), (0, R3, second))] == [1, 0]


def test_bots_use_their_planned_time_unclamped() -> None:
    c = clock()
    human = c.judge(0, 400, now=1450.0)
    assert stacked((0, R3, human), (2, R3, c.planned(380))) == [(2, 380), (0, 400)]


def test_r21_a_slap_past_the_window_is_refused() -> None:
    c = clock(window_ms=1000)
    with pytest.raises(IllegalActionError) as e:
        c.judge(0, 1100, now=2150.0)  # E = 1150, A = 50: at best 1100
    assert e.value.code == "too_late"
    assert c.judge(1, 950, now=2150.0) == 950  # A = 200: 950 is within reach
    with pytest.raises(IllegalActionError):
        c.planned(1000)  # a hand at the window's edge is too late


@pytest.mark.parametrize("second", [0, 1])
def test_r16_hands_are_checked_by_the_engine_against_hands_not_yet_resolved(second: int) -> None:
    game = open_round()
    a, b, c = game.centre[:3]
    game.slap(0, a, 300)
    if second == 0:
        with pytest.raises(IllegalActionError) as e:
            game.check_slap(0, a)
        assert e.value.code == "same_card"
    else:
        game.slap(0, b, 400)
        with pytest.raises(IllegalActionError) as e:
            game.check_slap(0, c)
        assert e.value.code == "no_hands_left"


def test_r21_a_seat_that_said_done_cannot_slap() -> None:
    game = open_round()
    game.done(0)
    with pytest.raises(IllegalActionError) as e:
        game.check_slap(0, game.centre[0])
    assert e.value.code == "done"


def test_the_round_is_decided_when_every_seat_is_complete() -> None:
    game = open_round()
    a, b = game.centre[:2]
    assert not game.round_complete()
    game.slap(0, a, 300)
    game.slap(0, b, 400)
    game.done(1)
    assert not game.round_complete()
    game.done(2)
    assert game.round_complete()
    assert clock().deadline([s for s in range(3) if not game.seat_complete(s)]) is None


def test_the_round_waits_for_the_slowest_possible_claim_then_closes() -> None:
    # Seat 1 has the largest allowance and got the reveal last: its deadline rules.
    c = clock()
    c.delivered(1, 1020.0)
    assert c.deadline([0, 1, 2]) == 1020.0 + 3000 + 200
    assert c.deadline([0, 2]) == 1000.0 + 3000 + 50  # seat 1 done: now seat 0 is the last


def test_a_seat_that_never_got_the_reveal_is_not_waited_for() -> None:
    c = clock(waited=[0, 2])
    assert not c.waits_for(1)
    assert c.deadline([1]) is None


def test_laid_counts_hands_per_seat() -> None:
    game = open_round()
    a, b = game.centre[:2]
    game.slap(0, a, 300)
    game.slap(2, a, 320)
    game.slap(2, b, 500)
    assert game.round is not None and game.round.laid(3) == [1, 0, 2]


def test_a_seat_with_a_hand_on_every_centre_fly_is_not_waited_for() -> None:
    game = open_round(seats=2, least=1, most=1)
    game.slap(0, game.centre[0], 400)
    assert game.seat_complete(0) and not game.round_complete()
    game.slap(1, game.centre[0], 420)
    assert game.round_complete()


@given(st.lists(st.tuples(st.floats(0, 5_000), st.floats(-10, 500)), max_size=80))
def test_a_links_samples_in_order_are_always_the_window_sorted(
    steps: list[tuple[float, float]],
) -> None:
    samples, now, seen = _Samples(1_000.0), 0.0, []
    for wait, rtt in steps:
        now += wait
        samples.add(rtt, now)
        seen.append((now, rtt))
        window = sorted(r for t, r in seen if t >= now - 1_000.0 and r >= 0)
        assert samples.fresh(now) == window


def test_a_link_never_asked_keeps_no_more_than_its_window() -> None:
    """A seat that answers pings and never plays a round keeps only the window's samples."""
    samples = _Samples(1_000.0)
    for second in range(600):
        samples.add(20.0 + second % 7, second * 1_000.0)
    assert len(samples.times) == len(samples.values) == 2
    assert samples.fresh(599_000.0) == sorted([20.0 + 598 % 7, 20.0 + 599 % 7])
