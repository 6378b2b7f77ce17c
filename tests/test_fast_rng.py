"""The fast kernel's random deviates have the distributions the bots are made of: its ziggurat
normal and exponential draws follow the exact laws, and its reaction times are those of
:func:`flyswat.bots.reaction_times` (moments, quantiles and the whole distribution).

Fixed seeds and millions of draws, with tolerances of several standard errors (or the 0.1 %
critical values of the tests): deterministic, and far from flaky.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable

import numpy as np
import pytest
from numba import njit

from flyswat import bots
from flyswat.sim.fast import policy, rng, ziggurat
from flyswat.sim.fast.batch import seat_params

N = 2_000_000


@njit(cache=False)
def _standard(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    normal = np.empty(n)
    exponential = np.empty(n)
    state = rng.load(seed)
    for i in range(n):
        state, normal[i] = ziggurat.normal(state)
        state, exponential[i] = ziggurat.exponential(state, 1.0)
    return normal, exponential


@njit(cache=False)
def _reaction_times(wf: np.ndarray, n: int, hands: int, seed: int) -> np.ndarray:
    wi = np.zeros(policy.WI_SIZE, dtype=np.int64)
    out = np.empty((n, hands), dtype=np.int64)
    state = rng.load(seed)
    for i in range(n):
        state = policy.reaction_times(wf, wi, policy.PARAMS, hands, state)
        for h in range(hands):
            out[i, h] = wi[policy.OUT_MS + h]
    return out


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _ks(sample: np.ndarray, cdf: Callable[[np.ndarray], np.ndarray]) -> float:
    """sqrt(n) times the Kolmogorov–Smirnov distance of ``sample`` from ``cdf``."""
    x = np.sort(sample)
    n = len(x)
    f = cdf(x)
    d = max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))
    return float(d * math.sqrt(n))


def _ks_two(a: np.ndarray, b: np.ndarray) -> float:
    """The two-sample Kolmogorov–Smirnov distance, scaled to the one-sample law."""
    grid = np.union1d(a, b)
    fa = np.searchsorted(np.sort(a), grid, side="right") / len(a)
    fb = np.searchsorted(np.sort(b), grid, side="right") / len(b)
    return float(np.max(np.abs(fa - fb)) * math.sqrt(len(a) * len(b) / (len(a) + len(b))))


KS_0_1_PERCENT = 1.95  # the asymptotic critical value of sqrt(n) D at the 0.1 % level


def _chi_square_z(sample: np.ndarray, quantile: Callable[[np.ndarray], np.ndarray]) -> float:
    """Standard score of the chi-square statistic over 1,000 equally likely bins: it sees a
    density wrong in a thin band (one layer's wedge) that the KS distance would miss."""
    bins = 1000
    edges = quantile(np.arange(1, bins) / bins)
    counts = np.bincount(np.searchsorted(edges, sample), minlength=bins)
    expected = len(sample) / bins
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    return (chi2 - (bins - 1)) / math.sqrt(2 * (bins - 1))


def _normal_quantile(p: np.ndarray) -> np.ndarray:
    # Bisection on the exact CDF: no SciPy needed, exact to 1e-12.
    lo, hi = np.full_like(p, -10.0), np.full_like(p, 10.0)
    phi = np.vectorize(_phi)
    for _ in range(60):
        mid = (lo + hi) / 2
        below = phi(mid) < p
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return (lo + hi) / 2


@pytest.fixture(scope="module")
def standard() -> tuple[np.ndarray, np.ndarray]:
    return _standard(N, 20261201)


@pytest.mark.parametrize(
    ("r", "f"),
    [
        (ziggurat.NORMAL_R, lambda x: math.exp(-0.5 * x * x)),
        (ziggurat.EXPONENTIAL_R, lambda x: math.exp(-x)),
    ],
)
def test_every_layer_of_a_ziggurat_has_the_same_area(r: float, f: Callable[[float], float]) -> None:
    k, w, y = (
        (ziggurat._NK, ziggurat._NW, ziggurat._NY)
        if r == ziggurat.NORMAL_R
        else (ziggurat._EK, ziggurat._EW, ziggurat._EY)
    )
    area = w[0] * 2.0**52 * y[ziggurat.LAYERS - 1]  # the bottom strip, tail included
    x = w * 2.0**52
    for i in range(1, ziggurat.LAYERS):
        assert x[i] * (y[i - 1] - y[i]) == pytest.approx(area, rel=1e-12), f"layer {i}"
        assert y[i] == f(x[i])
    assert x[ziggurat.LAYERS - 1] == r
    assert k[1] == 0  # the top layer has no part wholly under the curve


def test_ziggurat_normal_deviates_are_standard_normal(
    standard: tuple[np.ndarray, np.ndarray],
) -> None:
    z, _ = standard
    se = 1 / math.sqrt(N)
    assert abs(z.mean()) < 5 * se
    assert abs(z.var() - 1) < 5 * math.sqrt(2) * se
    assert abs((z**3).mean()) < 5 * math.sqrt(15) * se
    assert abs((z**4).mean() - 3) < 5 * math.sqrt(96) * se
    # The tail beyond the bottom strip has its own sampler: as often as the law says.
    tail = math.erfc(ziggurat.NORMAL_R / math.sqrt(2.0))
    assert abs((np.abs(z) > ziggurat.NORMAL_R).mean() - tail) < 5 * math.sqrt(tail / N)
    assert _ks(z, np.vectorize(_phi)) < KS_0_1_PERCENT
    assert _chi_square_z(z, _normal_quantile) < 5


def test_ziggurat_exponential_deviates_are_standard_exponential(
    standard: tuple[np.ndarray, np.ndarray],
) -> None:
    _, e = standard
    se = 1 / math.sqrt(N)
    assert abs(e.mean() - 1) < 5 * se
    assert abs(e.var() - 1) < 5 * math.sqrt(8) * se
    assert e.min() >= 0
    tail = math.exp(-ziggurat.EXPONENTIAL_R)
    assert abs((e > ziggurat.EXPONENTIAL_R).mean() - tail) < 5 * math.sqrt(tail / N)
    assert _ks(e, lambda x: 1 - np.exp(-x)) < KS_0_1_PERCENT
    assert _chi_square_z(e, lambda p: -np.log1p(-p)) < 5


@pytest.mark.parametrize("level", bots.LEVELS)
def test_the_kernels_reaction_times_are_the_bots_reaction_times(level: str) -> None:
    p = bots.params(level)
    _, params = seat_params([level], 1)
    wf = np.zeros(policy.WF_SIZE)
    policy.setup(wf, params)
    fast = _reaction_times(wf, 400_000, 2, 7)
    python = random.Random(7)
    ref = np.array([bots.reaction_times(p, 2, python) for _ in range(100_000)])
    # The first hand against the exact ex-Gaussian (far above the floor, so only rounded).
    first = fast[:, 0]
    assert first.min() > p.floor_ms
    mean = p.mu_ms + p.tau_ms
    sd = math.hypot(p.sigma_ms, p.tau_ms)
    assert abs(first.mean() - mean) < 5 * sd / math.sqrt(len(first))
    assert abs(first.std() / sd - 1) < 0.01
    for q in (0.01, 0.1, 0.5, 0.9, 0.99):
        ms = round(float(np.quantile(first, q)))
        exact = 1 - bots.survival(ms + 0.5, p.mu_ms, p.sigma_ms, p.tau_ms)  # rounded to ms
        assert abs((first <= ms).mean() - exact) < 5 * math.sqrt(exact * (1 - exact) / len(first))
    # Both hands, and the gap between them, against the reference sampler itself.
    for name, a, b in [
        ("first", fast[:, 0], ref[:, 0]),
        ("second", fast[:, 1], ref[:, 1]),
        ("gap", fast[:, 1] - fast[:, 0], ref[:, 1] - ref[:, 0]),
    ]:
        assert _ks_two(a, b) < KS_0_1_PERCENT, name
        se = math.sqrt(a.var() / len(a) + b.var() / len(b))
        assert abs(a.mean() - b.mean()) < 5 * se, name


def test_the_kernels_choice_is_the_bots_choice_for_every_centre() -> None:
    # bots.choice_bits (the Hick–Hyman bits of a round), from the kernel's counts per colour.
    wi = np.zeros(policy.WI_SIZE, dtype=np.int64)
    for code in range(5**6):
        counts = [code // 5**c % 5 for c in range(6)]
        wi[policy.CNT : policy.CNT + 6] = counts
        assert policy.choice_bits(wi) == pytest.approx(bots.choice_bits(counts), abs=1e-12)


@njit(cache=False)
def _first_hand(wf: np.ndarray, bits: float, seed: int) -> int:
    wi = np.zeros(policy.WI_SIZE, dtype=np.int64)
    policy.reaction_times(wf, wi, policy.PARAMS, 1, rng.load(seed), bits)
    return int(wi[policy.OUT_MS])


def test_the_kernels_first_hand_moves_by_the_levels_choice_slope_as_the_bots_does() -> None:
    slow = dataclasses.replace(bots.params("hard"), choice_ms=40.0)
    _, params = seat_params([slow], 1)
    wf = np.zeros(policy.WF_SIZE)
    policy.setup(wf, params)
    for seed in range(1, 30):
        typical = _first_hand(wf, bots.TYPICAL_BITS, seed)
        if typical > slow.floor_ms + 200:
            assert abs(_first_hand(wf, bots.TYPICAL_BITS + 2.5, seed) - typical - 100) <= 1
            assert abs(typical - _first_hand(wf, bots.TYPICAL_BITS - 2.5, seed) - 100) <= 1
