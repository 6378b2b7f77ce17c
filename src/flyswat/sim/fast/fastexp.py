"""``exp`` for the compiled kernel, computed in line where it is used.

A bot's choice takes some 700 ``exp`` a game: the gain and the softmax weight of each value
of fly at each hand (:func:`flyswat.sim.fast.policy.choose`). ``math.exp`` compiles to a
call into libm, and around every call the compiled loop must keep its registers in memory.
This is the same function by libm's own method (Tang, *ACM TOMS* 15(2), 1989; the layout of
glibc's ``exp``), in about twenty instructions that LLVM schedules with the loop around them:

    x = (128·m + j)·ln2/128 + r,  |r| ≤ ln2/256,   e**x = 2**m · 2**(j/128) · e**r

``2**(j/128)`` comes from a table, as a double and its relative rest; ``e**r - 1`` from its
Taylor polynomial of degree 5 (the first term left out is below 2**-60). So only the last
operations round: the result is within 1 ulp of ``math.exp``, and the same double in all
but about one case in a thousand (``tests/test_fast_exp.py``); so too where the game loop
compiles it with fused multiply-adds. Outside ``(-708, 709)``, where
the result would be subnormal or infinite, and for NaN, it *is* ``math.exp``.
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Callable
from typing import Any, cast

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

_N = 128
#: Added to a float below 2**51, it leaves the nearest integer in the low bits of the sum.
_SHIFT = 1.5 * 2.0**52
_N_OVER_LN2 = _N / math.log(2.0)
# ln2/128 in two parts (Cody & Waite): the high one has 32 significant bits, so k times it is
# exact for every |k| < 2**21, and x - k·ln2/128 loses nothing.
_LN2_HI = 6.93147180369123816490e-01 / _N
_LN2_LO = 1.90821492927058770002e-10 / _N


def _table() -> tuple[np.ndarray, np.ndarray]:
    """Per ``j`` < 128: the bits of the double nearest 2**(j/128), less ``j << 45`` (so that
    adding ``k << 45`` for ``k = 128·m + j`` multiplies it by 2**m), and its relative rest."""
    with decimal.localcontext() as ctx:
        ctx.prec = 40
        exact = [decimal.Decimal(2) ** (decimal.Decimal(j) / _N) for j in range(_N)]
        high = [float(e) for e in exact]
        rest = [float(e / decimal.Decimal(h) - 1) for e, h in zip(exact, high, strict=True)]
    bits = np.array(high).view(np.int64) - (np.arange(_N, dtype=np.int64) << 45)
    return bits, np.array(rest)


_BITS, _REST = _table()


def _bitcast(source: Any, target: Any, llvm_type: Any) -> Any:
    """A numba intrinsic that reads the 64 bits of a ``source`` value as a ``target`` one."""

    def typer(typingctx: Any, x: Any) -> Any:
        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            return builder.bitcast(args[0], llvm_type)

        return target(source), codegen

    return intrinsic(typer)


_bits_of = cast(Callable[[float], int], _bitcast(types.float64, types.int64, ir.IntType(64)))
_float_of = cast(Callable[[int], float], _bitcast(types.int64, types.float64, ir.DoubleType()))


@njit(cache=True, inline="always")
def exp(x: float) -> float:
    """``e**x``, within 1 ulp of ``math.exp(x)`` (which it is outside ``(-708, 709)``)."""
    if not -708.0 < x < 709.0:
        return math.exp(x)
    kd = x * _N_OVER_LN2 + _SHIFT
    k = _bits_of(kd)  # its low bits are round(x·128/ln2)
    kd -= _SHIFT
    r = (x - kd * _LN2_HI) - kd * _LN2_LO
    j = k & (_N - 1)
    scale = _float_of(_BITS[j] + (k << 45))  # 2**m · 2**(j/128)
    r2 = r * r
    tail: float = _REST[j] + r + r2 * (0.5 + r * (1.0 / 6)) + r2 * r2 * (1.0 / 24 + r * (1.0 / 120))
    return scale + scale * tail
