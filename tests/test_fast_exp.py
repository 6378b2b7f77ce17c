"""The kernel's own ``exp`` is ``math.exp`` to the last bit but for a rare ulp, over every
argument the bots give it and beyond."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from numba import njit

from flyswat.sim.fast.fastexp import exp


@njit(cache=False)
def _exps(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    for i in range(len(x)):
        out[i] = exp(x[i])
    return out


#: As the game loop compiles it (``kernel._GAME_LOOP``): multiplies and adds fused.
_exps_fused = njit(cache=False, fastmath={"contract"})(_exps.py_func)


@pytest.mark.parametrize("exps", [_exps, _exps_fused], ids=["plain", "fused"])
@pytest.mark.parametrize(
    ("low", "high"),
    [(-20.0, 0.0), (-708.0, 709.0), (-1e-6, 1e-6)],  # the gains and weights; all; near 0
)
def test_the_kernels_exp_is_within_one_ulp_of_math_exp(
    low: float, high: float, exps: Callable[[np.ndarray], np.ndarray]
) -> None:
    x = np.random.default_rng(3).uniform(low, high, 300_000)
    fast = exps(x)
    libm = np.array([math.exp(v) for v in x.tolist()])
    ulps = np.abs(fast - libm) / np.spacing(libm)
    assert ulps.max() <= 1.0
    assert (fast == libm).mean() > 0.995


def test_the_kernels_exp_is_math_exp_at_the_edges() -> None:
    x = np.array([0.0, -0.0, 1.0, -708.0, -708.5, -745.2, -800.0, 709.0, 709.7])
    assert _exps(x).tolist() == [math.exp(v) for v in x.tolist()]
    special = _exps(np.array([710.0, np.inf, -np.inf, np.nan]))
    assert special[:3].tolist() == [math.inf, math.inf, 0.0]
    assert np.isnan(special[3])
