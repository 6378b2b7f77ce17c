"""A small, fast random generator for the compiled kernel: SplitMix64 and its derivations.

SplitMix64 (Steele, Lea & Flood 2014) passes BigCrush and its whole state is one 64-bit
word. Every function here takes that word and returns the next one with its draw, as a
tuple of scalars: no array goes in or out, so numba adds no reference counting and LLVM
inlines the lot. (numba's own ``np.random`` looks its state up in thread-local storage on
each call, and passing a state array costs two atomic reference-count updates per call:
either way, more than the kernel's own work, measured with ``perf``.)

Normal and exponential deviates are drawn from these words by the ziggurat
(:mod:`flyswat.sim.fast.ziggurat`).

The kernel keeps the word between calls as ``int64`` in its integer scratch array
(:data:`flyswat.sim.fast.policy.ST`); :func:`load` and :func:`store` convert, bit for bit.
"""

from __future__ import annotations

import numpy as np
from numba import int64, njit, uint64

_GOLDEN = uint64(0x9E3779B97F4A7C15)
_M1 = uint64(0xBF58476D1CE4E5B9)
_M2 = uint64(0x94D049BB133111EB)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True, inline="always")
def load(word: int) -> np.uint64:
    """The state held as ``int64`` in an array, as the ``uint64`` the generator runs on."""
    state: np.uint64 = uint64(word)
    return state


@njit(cache=True, inline="always")
def store(state: np.uint64) -> np.int64:
    """The state as ``int64``, to keep in an array."""
    word: np.int64 = int64(state)
    return word


@njit(cache=True, inline="always")
def next_bits(state: np.uint64) -> tuple[np.uint64, np.uint64]:
    """The next state and 64 random bits."""
    state = state + _GOLDEN
    z = state
    z = (z ^ (z >> uint64(30))) * _M1
    z = (z ^ (z >> uint64(27))) * _M2
    return state, z ^ (z >> uint64(31))


@njit(cache=True, inline="always")
def uniform(state: np.uint64) -> tuple[np.uint64, float]:
    """The next state and a float uniform in [0, 1) (53 random bits)."""
    state, bits = next_bits(state)
    return state, float(bits >> uint64(11)) * _TO_UNIT


@njit(cache=True, inline="always")
def below(state: np.uint64, n: int) -> tuple[np.uint64, int]:
    """The next state and an integer uniform in ``0 .. n-1`` (bias below n · 2**-53)."""
    state, u = uniform(state)
    return state, int(u * n)


@njit(cache=True)
def shuffle(state: np.uint64, a: np.ndarray) -> np.uint64:
    """Shuffle ``a`` in place (Fisher–Yates); returns the next state."""
    for i in range(len(a) - 1, 0, -1):
        state, j = below(state, i + 1)
        a[i], a[j] = a[j], a[i]
    return state
