"""Normal and exponential deviates for the compiled kernel, by the ziggurat method.

The ziggurat (Marsaglia & Tsang, *J. Stat. Software* 5(8), 2000) covers a density with 256
layers of equal area: a bottom strip that holds the tail, and rectangles stacked above it.
A draw picks a layer and a point across it from one 64-bit word; in 99 % of draws the point
lies where the rectangle is wholly under the curve and is returned at once, with a
multiplication and a comparison. Only the rest (the thin wedges along the curve and the tail
beyond the bottom strip) take an ``exp`` or a ``log``, and the method stays exact there: a
wedge point is kept with the chance that it lies under the curve, and the tail is sampled
by its own exact rule. So it draws from the very distributions the Box–Muller and inverse
transform methods draw from, without their ``log``, ``sqrt`` and division on every draw
(``tests/test_fast_rng.py`` checks the quantiles and moments against the exact ones).

The tables are made once at import, in float64, and numba compiles them into the kernel as
constants. Each sampler takes the generator's state (:mod:`flyswat.sim.fast.rng`) and
returns the next state with its deviate.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numba import int64, njit, uint64

from flyswat.sim.fast import rng

LAYERS = 256
_UNIT = 2.0**52  # a point across a layer is a 52-bit integer
#: The right edge of the bottom strip of each ziggurat (Marsaglia & Tsang's values for 256
#: layers): the tail is what lies beyond it.
NORMAL_R = 3.6541528853610088
EXPONENTIAL_R = 7.6971174701310497


def tables(
    r: float,
    f: Callable[[float], float],
    f_inv: Callable[[float], float],
    tail: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ziggurat of the decreasing density ``f`` (unnormalised, ``f(0) == 1``) whose bottom
    strip ends at ``r``, beyond which ``f`` has area ``tail``: ``(k, w, y)`` per layer.

    Layer ``i`` ≥ 1 is the rectangle ``[0, x[i]] × [f(x[i]), f(x[i-1])]`` (``x[255] == r``,
    ``x[i]`` decreasing towards the top, ``f(x[0])`` taken as 1); layer 0 is the bottom strip
    with the tail, as wide as a rectangle of its area. A point ``u`` (< 2**52) across layer
    ``i`` is at ``u * w[i]``, and is wholly under the curve when ``u < k[i]``; ``y[i]`` is
    ``f(x[i])``, the bottom of layer ``i`` (``y[0] == 1``, the top of layer 1).
    """
    area = r * f(r) + tail
    x = np.zeros(LAYERS)
    x[LAYERS - 1] = r
    for i in range(LAYERS - 1, 1, -1):
        x[i - 1] = f_inv(area / x[i] + f(x[i]))
    k = np.zeros(LAYERS, dtype=np.int64)
    w = x / _UNIT
    y = np.array([1.0] + [f(v) for v in x[1:]])
    strip = area / f(r)
    w[0] = strip / _UNIT
    k[0] = math.floor(r / strip * _UNIT)
    for i in range(2, LAYERS):
        k[i] = math.floor(x[i - 1] / x[i] * _UNIT)
    return k, w, y


_NK, _NW, _NY = tables(
    NORMAL_R,
    lambda x: math.exp(-0.5 * x * x),
    lambda y: math.sqrt(-2.0 * math.log(y)),
    math.sqrt(math.pi / 2) * math.erfc(NORMAL_R / math.sqrt(2.0)),
)
_EK, _EW, _EY = tables(
    EXPONENTIAL_R, lambda x: math.exp(-x), lambda y: -math.log(y), math.exp(-EXPONENTIAL_R)
)


@njit(cache=True, inline="always")
def normal(state: np.uint64) -> tuple[np.uint64, float]:
    """The next state and a standard Gaussian deviate: 8 bits pick the layer, one the sign,
    52 the point across the layer."""
    while True:
        state, bits = rng.next_bits(state)
        i = int64(bits & uint64(LAYERS - 1))
        negative = (bits >> uint64(8)) & uint64(1) != 0
        u = int64(bits >> uint64(12))
        x = float(u) * _NW[i]
        if u < _NK[i]:
            return state, -x if negative else x
        if i == 0:  # beyond the bottom strip: the tail, by Marsaglia's rule (1964)
            while True:
                state, a = rng.uniform(state)
                state, b = rng.uniform(state)
                t = -math.log(1.0 - a) / NORMAL_R
                if -2.0 * math.log(1.0 - b) > t * t:
                    x = NORMAL_R + t
                    return state, -x if negative else x
        state, a = rng.uniform(state)
        if _NY[i] + a * (_NY[i - 1] - _NY[i]) < math.exp(-0.5 * x * x):  # in the wedge
            return state, -x if negative else x


@njit(cache=True, inline="always")
def exponential(state: np.uint64, scale: float) -> tuple[np.uint64, float]:
    """The next state and an exponential deviate of mean ``scale``."""
    while True:
        state, bits = rng.next_bits(state)
        i = int64(bits & uint64(LAYERS - 1))
        u = int64(bits >> uint64(12))
        x = float(u) * _EW[i]
        if u < _EK[i]:
            return state, scale * x
        if i == 0:  # the tail beyond r is r plus an exponential: memoryless
            state, a = rng.uniform(state)
            return state, scale * (EXPONENTIAL_R - math.log(1.0 - a))
        state, a = rng.uniform(state)
        if _EY[i] + a * (_EY[i - 1] - _EY[i]) < math.exp(-x):
            return state, scale * x


@njit(cache=True, inline="always")
def ex_gauss(state: np.uint64, mu: float, sigma: float, tau: float) -> tuple[np.uint64, float]:
    """The next state and an ex-Gaussian deviate: Gaussian (``mu``, ``sigma``) plus an
    exponential of mean ``tau`` — the bots' reaction-time model (:func:`flyswat.bots.ex_gauss`)."""
    state, z = normal(state)
    state, e = exponential(state, tau)
    return state, mu + sigma * z + e
