"""The fast simulator plays by the rules (its games replay into valid records) and like the
reference simulator (its statistics agree within their confidence intervals)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from flyswat import bots
from flyswat.cli import main
from flyswat.errors import MalformedError
from flyswat.record import read_record, verify_record
from flyswat.rules import Rules
from flyswat.sim.fast import (
    FastResult,
    batch,
    game,
    records,
    simulate_fast,
    summary,
    with_faster_hand,
)
from flyswat.sim.fast.batch import places
from flyswat.sim.fast.policy import PARAM_FIELDS
from flyswat.sim.reference import GameStats, simulate

# -- by the rules ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seats", "levels", "remove"),
    [
        (4, ["easy", "normal", "hard", "normal"], 0),
        (2, ["hard", "easy"], 0),
        (5, ["normal", "hard"], 20),  # one hand each (R16), a shorter game (R6)
        (8, ["easy"], 100),
    ],
)
def test_fast_games_replay_through_the_engine_into_valid_records(
    seats: int, levels: list[str], remove: int
) -> None:
    result = simulate_fast(12, seats, levels, seed=seats, remove=remove, trace=True)
    for g, record in enumerate(records(result)):
        assert verify_record(record) == [], f"game {g}"
        # The kernel scored the game exactly as the engine does (R23, R24).
        assert record["result"]["points"] == result.points[g].tolist()
        assert record["result"]["flies"] == result.flies[g].tolist()
        assert record["result"]["places"] == result.places[g].tolist()
        assert len(record["turns"]) == result.counter("turns")[g]
        assert record["seed"] is None  # the deal came from the fast generator, not R5


def test_fast_counters_match_the_replayed_games() -> None:
    result = simulate_fast(20, 4, ["easy", "normal"], seed=7, trace=True)
    for g in range(result.games):
        played = game(result, g)
        rounds = [t.round for t in played.turns if t.round is not None]
        assert len(rounds) == result.counter("rounds")[g]
        assert sum(not r.slaps and not r.won for r in rounds) >= result.counter("empty_rounds")[g]
        assert sum(len(r.penalties) for r in rounds) == result.counter("penalties")[g]
        assert sum(len(r.won) for r in rounds) == result.counter("wins")[g]
        assert sum(len(r.slaps) for r in rounds) == result.counter("slaps")[g]
        fifth = sum(r.trigger.is_fly for r in rounds)
        assert fifth == result.counter("fifth_colour_rounds")[g]


def test_the_kernel_knows_every_parameter_of_a_bot_level() -> None:
    # A new bots.Level field must be taught to the kernel (flyswat.sim.fast.policy) first.
    fields = {f.name for f in dataclasses.fields(bots.Level)}
    reveal = {"reveal_mu_ms", "reveal_sigma_ms", "reveal_tau_ms"}  # no effect on outcomes
    assert fields - reveal == set(PARAM_FIELDS)


def test_records_need_a_traced_result() -> None:
    result = simulate_fast(3, 3, "normal", seed=1)
    with pytest.raises(MalformedError):
        next(records(result))


def test_results_depend_on_the_seed_not_on_the_number_of_jobs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(batch, "CHUNK", 150)
    one = simulate_fast(400, 4, ["hard", "easy"], seed="s")
    two = simulate_fast(400, 4, ["hard", "easy"], seed="s", jobs=2)
    other = simulate_fast(400, 4, ["hard", "easy"], seed="t")
    assert np.array_equal(one.points, two.points)
    assert np.array_equal(one.counters, two.counters)
    assert not np.array_equal(one.points, other.points)


def test_places_share_ties_and_skip_the_next_place_r24() -> None:
    points = np.array([[30, 40, 40, 10], [5, 5, 5, 5], [20, 20, 10, 0]])
    flies = np.array([[9, 12, 12, 3], [2, 2, 2, 2], [8, 7, 3, 0]])
    assert places(points, flies).tolist() == [[3, 1, 1, 4], [1, 1, 1, 1], [1, 2, 3, 4]]


def test_a_faster_hand_moves_the_first_hand_and_the_floor() -> None:
    p = with_faster_hand("normal", 50)
    normal = bots.params("normal")
    assert p.mu_ms == normal.mu_ms - 50 and p.floor_ms == normal.floor_ms - 50
    assert p.misjudge == normal.misjudge


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(MalformedError):
        simulate_fast(-1, 4, "normal", 1)
    with pytest.raises(MalformedError):
        simulate_fast(1, 4, "superb", 1)
    with pytest.raises(MalformedError):
        simulate_fast(1, 9, "normal", 1)


# -- like the reference ----------------------------------------------------------------------

Metric = Callable[[Sequence[GameStats], FastResult], tuple[np.ndarray, np.ndarray]]


def _per_game(values: Sequence[Sequence[float]], seats: list[int]) -> np.ndarray:
    return np.array([np.mean([v[s] for s in seats]) for v in values])


def _metrics(levels: tuple[str, ...], seats: int) -> dict[str, Metric]:
    """Per-game values of each statistic, for the reference and the fast games.

    Averaging over the seats of one group within a game first keeps the games independent,
    so the standard error of the mean is the plain one.
    """
    out: dict[str, Metric] = {}
    for level in sorted(set(levels)):
        group = [s for s in range(seats) if levels[s] == level]
        for name in ("points", "flies", "wrong"):
            out[f"{name} {level}"] = lambda ref, fast, n=name, g=group: (
                _per_game([getattr(x, n) for x in ref], g),
                getattr(fast, n)[:, g].mean(axis=1),
            )
        out[f"win share {level}"] = lambda ref, fast, g=group: (
            _per_game([x.wins() for x in ref], g),
            fast.win_shares()[:, g].mean(axis=1),
        )
    for k in range(seats):
        out[f"win share position {k}"] = lambda ref, fast, k=k: (
            np.array([x.wins()[(x.start + k) % seats] for x in ref]),
            fast.win_shares()[np.arange(fast.games), (fast.starts + k) % seats],
        )
    out["turns"] = lambda ref, fast: (
        np.array([x.turns for x in ref]),
        fast.counter("turns").astype(float),
    )
    out["rounds"] = lambda ref, fast: (
        np.array([x.rounds for x in ref]),
        (fast.counter("rounds") - fast.counter("empty_rounds")).astype(float),
    )
    return out


def _z_scores(
    ref: Sequence[GameStats], fast: FastResult, levels: tuple[str, ...]
) -> dict[str, float]:
    z: dict[str, float] = {}
    for name, metric in _metrics(levels, fast.rules.seats).items():
        a, b = metric(ref, fast)
        # The pooled variance: under the hypothesis that both come from one distribution it
        # is the better estimate, and it stays sound when one sample happens to be constant
        # (a level that wins every one of the reference games).
        pooled = np.concatenate([a - a.mean(), b - b.mean()]).var() * (len(a) + len(b))
        pooled /= len(a) + len(b) - 2
        se = np.sqrt(pooled * (1 / len(a) + 1 / len(b)))
        z[name] = 0.0 if se == 0 and a.mean() == b.mean() else (a.mean() - b.mean()) / se
    return z


WORKLOADS = [
    (Rules(seats=4), ("easy", "normal", "hard", "normal"), 500),
    (Rules(seats=3, remove=30), ("normal", "normal", "normal"), 700),
    (Rules(seats=5), ("normal", "easy", "hard", "easy", "normal"), 250),
]


@pytest.fixture(scope="module")
def reference(once: Callable[..., Any]) -> list[list[GameStats]]:
    """The reference simulator's games for each workload (about 10 s in all), made once a run
    whichever workers run these tests (``once``: tests/conftest.py)."""
    made: list[list[GameStats]] = once(
        "fast-reference",
        lambda: [simulate(rules, levels, "agree", n) for rules, levels, n in WORKLOADS],
    )
    return made


@pytest.mark.parametrize("w", range(len(WORKLOADS)))
def test_fast_statistics_agree_with_the_reference_simulator(
    reference: list[list[GameStats]], w: int
) -> None:
    rules, levels, _ = WORKLOADS[w]
    fast = simulate_fast(40_000, rules.seats, levels, seed=w, remove=rules.remove)
    z = _z_scores(reference[w], fast, levels)
    far = {name: round(v, 1) for name, v in z.items() if abs(v) > 4}
    assert not far, f"statistics more than 4 standard errors apart: {far}"
    assert summary(fast).games == 40_000


def test_the_agreement_check_tells_a_different_bot_apart(
    reference: list[list[GameStats]],
) -> None:
    # The same check, with the fast normal bot 25 ms slower on average (about a sixth of its
    # spread): it must fail, or the agreement above would prove little.
    rules, levels, _ = WORKLOADS[0]
    normal = bots.params("normal")
    worse = dataclasses.replace(normal, mu_ms=normal.mu_ms + 25)
    fast = simulate_fast(
        40_000, rules.seats, [worse if x == "normal" else x for x in levels], seed=0
    )
    fast = dataclasses.replace(fast, levels=levels)
    z = _z_scores(reference[0], fast, levels)
    assert max(abs(v) for v in z.values()) > 4


# -- the command -----------------------------------------------------------------------------


def test_flyswat_simulate_fast_prints_the_summary_and_writes_valid_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "records"
    argv = ["simulate", "--fast", "--games", "25", "--bots", "easy,hard", "--seed", "9"]
    assert main([*argv, "--seats", "3", "--records", str(folder)]) == 0
    assert "25 bot games" in capsys.readouterr().out
    files = sorted(folder.glob("*.json"))
    assert len(files) == 25
    assert all(verify_record(read_record(f)) == [] for f in files)


def test_flyswat_simulate_fast_refuses_a_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", "--fast", "--plot", str(tmp_path / "p.png")]) == 2
    assert "--plot" in capsys.readouterr().err


def test_the_kernel_keeps_only_hands_within_the_slap_window_r21() -> None:
    rules = Rules(seats=4, slap_window_ms=600)
    result = simulate_fast(50, 4, "easy", seed=5, slap_window_ms=600, trace=True)
    assert result.counter("late_slaps").sum() > 0
    for g in range(result.games):
        ms = result.slaps[g, : result.n_slaps[g], 3]
        assert all(rules.in_window(int(t)) for t in ms)
