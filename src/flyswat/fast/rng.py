"""A small, fast random generator for the compiled kernel: SplitMix64 and its derivations.

numba's ``np.random`` looks its state up in thread-local storage on every call, which cost
the kernel more than half of its time (measured with ``perf``: the kernel makes some 2,600
draws per game). This generator keeps its state in arrays that the kernel passes around:

- ``st``: ``uint64[1]``, the SplitMix64 state (Steele, Lea & Flood 2014; passes BigCrush);
- ``sp``: a float array whose first two entries hold a spare normal deviate and whether it
  is there (Box–Muller makes two at a time); the kernel keeps them at the head of its
  float scratch array.

Every function is pure apart from advancing that state, so a batch seeded the same way plays
the same games.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, uint64

_GOLDEN = uint64(0x9E3779B97F4A7C15)
_M1 = uint64(0xBF58476D1CE4E5B9)
_M2 = uint64(0x94D049BB133111EB)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


def new_state(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Fresh generator state ``(st, sp)`` from a non-negative integer ``seed`` (< 2**64)."""
    return np.array([seed % 2**64], dtype=np.uint64), np.zeros(2, dtype=np.float64)


@njit(cache=True, inline="always")
def next_u64(st: np.ndarray) -> np.uint64:
    """The next 64 random bits."""
    st[0] += _GOLDEN
    z: np.uint64 = st[0]
    z = (z ^ (z >> uint64(30))) * _M1
    z = (z ^ (z >> uint64(27))) * _M2
    return z ^ (z >> uint64(31))


@njit(cache=True, inline="always")
def uniform(st: np.ndarray) -> float:
    """A float uniform in [0, 1), 53 random bits."""
    return float(next_u64(st) >> uint64(11)) * _TO_UNIT


@njit(cache=True, inline="always")
def below(st: np.ndarray, n: int) -> int:
    """An integer uniform in ``0 .. n-1`` (``n`` ≥ 1; bias below 2**-53 · n, negligible)."""
    return int(uniform(st) * n)


@njit(cache=True, inline="always")
def normal(st: np.ndarray, sp: np.ndarray, mu: float, sigma: float) -> float:
    """A Gaussian deviate (Box–Muller, the second deviate kept for the next call)."""
    if sp[1] != 0.0:
        sp[1] = 0.0
        spare: float = sp[0]
        return mu + sigma * spare
    u1 = 1.0 - uniform(st)  # in (0, 1]: log is finite
    u2 = uniform(st)
    r = math.sqrt(-2.0 * math.log(u1))
    sp[0] = r * math.sin(2.0 * math.pi * u2)
    sp[1] = 1.0
    return mu + sigma * r * math.cos(2.0 * math.pi * u2)


@njit(cache=True, inline="always")
def exponential(st: np.ndarray, scale: float) -> float:
    """An exponential deviate of mean ``scale``."""
    return -scale * math.log(1.0 - uniform(st))


@njit(cache=True, inline="always")
def ex_gauss(st: np.ndarray, sp: np.ndarray, mu: float, sigma: float, tau: float) -> float:
    """An ex-Gaussian deviate: Gaussian (``mu``, ``sigma``) plus exponential (mean ``tau``)."""
    return normal(st, sp, mu, sigma) + exponential(st, tau)


@njit(cache=True)
def shuffle(st: np.ndarray, a: np.ndarray) -> None:
    """Shuffle ``a`` in place (Fisher–Yates)."""
    for i in range(len(a) - 1, 0, -1):
        j = below(st, i + 1)
        a[i], a[j] = a[j], a[i]
