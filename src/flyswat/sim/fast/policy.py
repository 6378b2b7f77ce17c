"""The bots' policy (:func:`flyswat.bots.decide`) over flat arrays, for the compiled kernel.

Each function mirrors the one of :mod:`flyswat.bots` named in its docstring, step for step,
with the same parameters (a row of :data:`PARAM_FIELDS` per seat); only the random generator
differs (:mod:`flyswat.sim.fast.rng`). Cards are indices of :data:`flyswat.cards.DECK`. With a
deterministic level (no lapse, no misjudging, temperature 0, every hand at its floor) the two
plan the very same hands, which ``tests/test_vector.py`` uses.

All the state a decision reads and writes lives in two scratch arrays, ``wf`` (floats) and
``wi`` (integers), at the offsets below, shared with the game loop of
:mod:`flyswat.sim.fast.kernel`. Two arrays rather than ten on purpose: numba updates an atomic
reference count for each array argument of each call, and with ten that cost more than the
decision itself (measured with ``perf``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from flyswat.bots import CROWD_ROUNDS, TYPICAL_BITS
from flyswat.sim.fast import rng, ziggurat
from flyswat.sim.fast.fastexp import exp

#: The value of fly ``i`` is ``VALUES[i % 16]`` (R2: 1,1, 2×4, 3×4, 4×4, 5,5).
VALUES = np.array([1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5], dtype=np.int64)

#: Columns of a seat's parameter row, in order (names of :class:`flyswat.bots.Level` fields).
PARAM_FIELDS = (
    "mu_ms",
    "sigma_ms",
    "tau_ms",
    "second_mu_ms",
    "second_sigma_ms",
    "second_tau_ms",
    "floor_ms",
    "misjudge",
    "lapse",
    "second_hand",
    "caution",
    "temperature",
    "min_gain",
    "choice_ms",
)
NP = len(PARAM_FIELDS)

#: Layout of the float scratch array ``wf``.
GAINS = 0  # wf[0:6]: the gain (then the weight) of a fly of value v at GAINS + v
ONE = 6  # wf[6:12]: the rival first hands expected on a fly of value v
TWO = 12  # wf[12:18]: ... and second hands
COUNT_BY_VALUE = 18  # wf[18:24]: targets of value v not yet chosen
W1 = 24  # wf[24:30], wf[30:36]: scratch of crowd()
W2 = 30
PARAMS = 36  # wf[PARAMS + NP*s + j]: parameter j of seat s (up to 8 seats and a learner)
#: wf[CROSS + 2*s]: the chance that a rival's second hand beats a typical first hand, and
#: wf[CROSS + 2*s + 1] that a first hand beats a typical second one (bots.crowd).
CROSS = PARAMS + 9 * NP
#: The chance of a rival as quick as seat s beating a hand at t ms with its first hand, for
#: t < TABLE_MS, is wf[TABLE + TABLE_MS*(2*s) + t], with its second wf[TABLE + TABLE_MS*(2*s+1)
#: + t] (a hand's time is a whole number of ms).
TABLE = CROSS + 2 * 9
TABLE_MS = 4096
#: wf[LEVEL + s]: the first seat whose parameters equal seat s's (its crowds are the same).
LEVEL = TABLE + 2 * 9 * TABLE_MS
#: A direct-mapped cache of crowd(), per level: SLOTS entries of (key, one[1:6], two[1:6]).
CACHE = LEVEL + 9
SLOTS = 1024
ENTRY = 11
WF_SIZE = CACHE + 9 * SLOTS * ENTRY

#: Layout of the integer scratch array ``wi``: the policy's part (the game's follows it,
#: :mod:`flyswat.sim.fast.kernel`).
ST = 0  # the random generator's state (flyswat.sim.fast.rng)
TARGETS = 1  # wi[1:65]: the target flies, in centre order (a centre has at most 64, R13)
OUT_CARDS = 65  # wi[65:67]: the planned hands' flies ...
OUT_MS = 67  # wi[67:69]: ... and times
LAPSED = 69  # 1 when the last decision was a lapse
MISJUDGED = 70  # 1 when the last decision misjudged the colour
CNT = 71  # wi[71:77]: flies in the centre per colour
CENTRE = 77  # wi[77:173]: the centre's flies, in the order placed
#: What every seat believes of the open round (judge_round): wi[BELIEVED + 64*b + k] for
#: k < wi[N_BELIEVED + b] are the flies of the most numerous colours (b = 0) or of the next
#: most numerous (b = 1, none when the centre holds one count level only), in centre order.
BELIEVED = 173
N_BELIEVED = BELIEVED + 2 * 64
#: ... and of each list b, what choose() needs of the values: wi[B_COUNT + 8*b + v] flies of
#: value v, wi[B_SQUARES + b] the sum of their values squared, wi[B_KEY + b] the counts of
#: values 1 to 5 as the digits of one number (the crowd cache's key), and the values present,
#: highest first, at wi[B_PRESENT + 8*b + i] for i < wi[B_NV + b].
B_COUNT = N_BELIEVED + 2
B_SQUARES = B_COUNT + 16
B_KEY = B_SQUARES + 2
B_PRESENT = B_KEY + 2
B_NV = B_PRESENT + 16
#: wi[PRESENT + i], i < wi[N_PRESENT]: the values of the targets not yet chosen, highest first.
PRESENT = B_NV + 2
N_PRESENT = PRESENT + 5
WI_SIZE = N_PRESENT + 1


@njit(cache=True, inline="always")
def _phi(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


@njit(cache=True, inline="always")
def survival(x: float, mu: float, sigma: float, tau: float) -> float:
    """P(X > x) for X ex-Gaussian(mu, sigma, tau), as :func:`flyswat.bots.survival`."""
    z = (x - mu) / sigma
    if z < -8.0:
        return 1.0
    tail = math.exp(sigma * sigma / (2 * tau * tau) - (x - mu) / tau) * _phi(z - sigma / tau)
    return min(1.0, max(0.0, 1.0 - _phi(z) + tail))


@njit(cache=True, inline="always")
def exact_beaten(wf: np.ndarray, p: int, t: float, hand: int) -> float:
    """As :func:`flyswat.bots.beaten`, for the parameters at ``wf[p:]``."""
    if hand == 0:
        return 1.0 - survival(t, wf[p], wf[p + 1], wf[p + 2])
    mu = wf[p] + wf[p + 3]
    return 1.0 - survival(t, mu, math.hypot(wf[p + 1], wf[p + 4]), wf[p + 2] + wf[p + 5])


@njit(cache=True)
def setup(wf: np.ndarray, params: np.ndarray) -> None:
    """Copy ``params`` (a row per seat) into ``wf`` and tabulate each row's :func:`beaten`."""
    for s in range(params.shape[0]):
        p = PARAMS + NP * s
        for j in range(NP):
            wf[p + j] = params[s, j]
        first_time = wf[p] + wf[p + 2]
        wf[CROSS + 2 * s] = exact_beaten(wf, p, first_time, 1)
        wf[CROSS + 2 * s + 1] = exact_beaten(wf, p, first_time + wf[p + 3] + wf[p + 5], 0)
        for hand in range(2):
            row = TABLE + TABLE_MS * (2 * s + hand)
            for t in range(TABLE_MS):
                wf[row + t] = exact_beaten(wf, p, float(t), hand)
        first = s
        for other in range(s):
            if first == s and np.all(params[other] == params[s]):
                first = other
        wf[LEVEL + s] = first
    for k in range(9 * SLOTS):
        wf[CACHE + ENTRY * k] = -1.0


@njit(cache=True, inline="always")
def judge_round(wi: np.ndarray, n_centre: int) -> None:
    """What the bots take for allowed in a round just opened, as
    :func:`flyswat.bots.believed_colours`: the flies of the most numerous colours and those
    of the next most numerous, into ``wi[BELIEVED:]`` (see there). Every seat sees the same
    centre, so this is worked out once a round, not once a seat."""
    top = 0
    for c in range(6):
        top = max(top, wi[CNT + c])
    second = 0
    for c in range(6):  # without a branch: which colours are below the top is unpredictable
        second = max(second, wi[CNT + c] * (wi[CNT + c] < top))
    for v in range(16):
        wi[B_COUNT + v] = 0
    right = 0
    wrong = 0
    for k in range(n_centre):  # branchless too, for the same reason
        card = wi[CENTRE + k]
        count = wi[CNT + card // 16]
        v = VALUES[card % 16]
        wi[BELIEVED + right] = card
        wi[B_COUNT + v] += count == top
        right += count == top
        wi[BELIEVED + 64 + wrong] = card
        wi[B_COUNT + 8 + v] += count == second
        wrong += count == second
    wi[N_BELIEVED] = right
    wi[N_BELIEVED + 1] = wrong
    for b in range(2):
        squares = 0
        key = 0
        nv = 0
        for v in range(5, 0, -1):
            count = wi[B_COUNT + 8 * b + v]
            squares += count * v * v
            key += count << (5 * (v - 1))
            wi[B_PRESENT + 8 * b + nv] = v
            nv += count > 0
        wi[B_SQUARES + b] = squares
        wi[B_KEY + b] = key
        wi[B_NV + b] = nv


@njit(cache=True, inline="always")
def decide(wf: np.ndarray, wi: np.ndarray, s: int, hands: int, seats: int) -> int:
    """Seat ``s``'s planned hands for a round just opened and judged (:func:`judge_round`),
    as :func:`flyswat.bots.decide`; how many.

    Reads the believed targets (``wi[BELIEVED:]``) and the seat's parameters
    (``wf[PARAMS:]``); writes the hands to ``wi[OUT_CARDS:]`` and ``wi[OUT_MS:]``, times
    increasing, and sets ``wi[LAPSED]``, ``wi[MISJUDGED]``.
    """
    p = PARAMS + NP * s
    state = rng.load(wi[ST])
    state, u = rng.uniform(state)
    wi[LAPSED] = 1 if u < wf[p + 8] else 0
    wi[MISJUDGED] = 0
    if wi[LAPSED]:
        wi[ST] = rng.store(state)
        return 0
    state, u = rng.uniform(state)
    # Misjudging takes the next most numerous colours, if the centre has more than one level.
    b = 1 if u < wf[p + 7] and wi[N_BELIEVED + 1] > 0 else 0
    wi[MISJUDGED] = b
    n = wi[N_BELIEVED + b]
    if n == 0:
        wi[ST] = rng.store(state)
        return 0
    for k in range(n):  # the seat's own copy: choose() takes the chosen flies out of it
        wi[TARGETS + k] = wi[BELIEVED + 64 * b + k]
    n_times = 1
    while n_times < min(hands, n):
        state, u = rng.uniform(state)
        if u >= wf[p + 9]:
            break
        n_times += 1
    bits = choice_bits(wi) if wf[p + 13] != 0.0 else TYPICAL_BITS
    state = reaction_times(wf, wi, p, n_times, state, bits)
    state, k = choose(wf, wi, p, b, n_times, seats - 1, hands, state)
    wi[ST] = rng.store(state)
    return k


@njit(cache=True, inline="always")
def choice_bits(wi: np.ndarray) -> float:
    """As :func:`flyswat.bots.choice_bits`, for the centre's flies per colour at ``wi[CNT:]``."""
    top = 0
    second = 0
    colours = 0
    for c in range(6):
        n = wi[CNT + c]
        colours += n > 0
        if n > top:
            second = top
            top = n
        elif n > second:
            second = n
    if top == 0:
        return 0.0
    return math.log2(colours) + math.log2(top / max(top - second, 0.5))


@njit(cache=True, inline="always")
def reaction_times(
    wf: np.ndarray, wi: np.ndarray, p: int, n: int, state: np.uint64, bits: float = TYPICAL_BITS
) -> np.uint64:
    """As :func:`flyswat.bots.reaction_times`, for the parameters at ``wf[p:]`` and a round
    of ``bits`` (:func:`choice_bits`): writes ``n`` times to ``wi[OUT_MS:]`` and returns the
    generator's state."""
    state, t = ziggurat.ex_gauss(state, wf[p], wf[p + 1], wf[p + 2])
    t += wf[p + 13] * (bits - TYPICAL_BITS)
    last = 0
    floor = int(wf[p + 6])
    for h in range(n):
        if h > 0:
            state, extra = ziggurat.ex_gauss(state, wf[p + 3], wf[p + 4], wf[p + 5])
            t += max(0.0, extra)
        ms = max(floor, last + 1 if h > 0 else 0, round(t))  # half to even, as bots.reaction_times
        wi[OUT_MS + h] = ms
        last = ms
    return state


@njit(cache=True, inline="always")
def beaten(wf: np.ndarray, p: int, s: int, ms: int, hand: int) -> float:
    """As :func:`flyswat.bots.beaten` for seat ``s`` (parameters at ``wf[p:]``): from the
    table :func:`setup` made, exact beyond it."""
    if ms < TABLE_MS:
        level = int(wf[LEVEL + s])  # seats of one level share a table: fewer cache misses
        chance: float = wf[TABLE + TABLE_MS * (2 * level + hand) + ms]
        return chance
    return exact_beaten(wf, p, float(ms), hand)


@njit(cache=True, inline="always")
def softmax(wf: np.ndarray, p: int, w: int) -> None:
    """As ``bots._softmax``, in place: the gains in ``wf[w + v]`` (values with
    ``wf[COUNT_BY_VALUE + v] > 0``) become their unnormalised weights. Offsets, not array
    views: each view costs numba two atomic reference-count updates (measured with ``perf``)."""
    temperature = wf[p + 11]
    best = -1.0
    for v in range(1, 6):
        if wf[COUNT_BY_VALUE + v] > 0:
            best = max(best, wf[w + v])
    for v in range(1, 6):
        if wf[COUNT_BY_VALUE + v] > 0:
            if temperature > 0:
                wf[w + v] = exp((wf[w + v] - best) / temperature)
            else:
                wf[w + v] = 1.0 if wf[w + v] == best else 0.0


@njit(cache=True, inline="always")
def crowd(wf: np.ndarray, p: int, s: int, squares: float, n: int, hands: int, others: int) -> None:
    """As :func:`flyswat.bots.crowd`: the rival first and second hands expected on a fly of
    each value, into ``wf[ONE + v]`` and ``wf[TWO + v]``; ``wf[COUNT_BY_VALUE + v]`` of the
    ``n`` targets have value ``v``, ``squares`` is the sum of their values squared."""
    caution = wf[p + 10]
    second = wf[p + 9] if hands >= 2 and n >= 2 else 0.0
    b12 = wf[CROSS + 2 * s]
    b21 = wf[CROSS + 2 * s + 1]
    for v in range(1, 6):
        wf[ONE + v] = others * v * v / squares if wf[COUNT_BY_VALUE + v] > 0 else 0.0
        wf[TWO + v] = second * wf[ONE + v]
    for _ in range(CROWD_ROUNDS):
        for v in range(1, 6):
            if wf[COUNT_BY_VALUE + v] > 0:
                one, two = wf[ONE + v], wf[TWO + v]
                wf[W1 + v] = v * exp(-caution * (one / 2 + two * b12))
                wf[W2 + v] = v * exp(-caution * (one * b21 + two / 2))
        softmax(wf, p, W1)
        softmax(wf, p, W2)
        total1 = 0.0
        for v in range(1, 6):
            if wf[COUNT_BY_VALUE + v] > 0:
                total1 += wf[COUNT_BY_VALUE + v] * wf[W1 + v]
        total2 = 0.0
        for v in range(1, 6):
            if wf[COUNT_BY_VALUE + v] > 0:
                wf[W1 + v] = wf[W1 + v] / total1
                wf[W2 + v] = wf[W2 + v] * (1.0 - wf[W1 + v])
                total2 += wf[COUNT_BY_VALUE + v] * wf[W2 + v]
        for v in range(1, 6):
            if wf[COUNT_BY_VALUE + v] > 0:
                wf[ONE + v] = 0.5 * (wf[ONE + v] + others * wf[W1 + v])
                share = wf[W2 + v] / total2 if total2 > 0 else 0.0
                wf[TWO + v] = 0.5 * (wf[TWO + v] + others * second * share)


@njit(cache=True, inline="always")
def choose(
    wf: np.ndarray,
    wi: np.ndarray,
    p: int,
    b: int,
    n_times: int,
    others: int,
    hands: int,
    state: np.uint64,
) -> tuple[np.uint64, int]:
    """As :func:`flyswat.bots.choose`: one fly per planned time, by softmax over the gains.

    A fly's gain depends on its value only, so the gains and weights are worked out once per
    value (at most five). Reads the targets (``wi[TARGETS:]``, a copy of believed list ``b``,
    whose values judge_round counted) and the times in ``wi[OUT_MS:]``; writes the flies to
    ``wi[OUT_CARDS:]``; returns the generator's state and how many hands to lay.
    """
    s = (p - PARAMS) // NP
    n = wi[N_BELIEVED + b]
    for v in range(6):
        wf[COUNT_BY_VALUE + v] = wi[B_COUNT + 8 * b + v]
    total = float(wi[B_SQUARES + b])
    # The crowd depends on the level and the values of the targets only: cache it.
    key = wi[B_KEY + b] * 2 + (1 if hands >= 2 and n >= 2 else 0)
    # Slot by Knuth's multiplicative hash: key % SLOTS kept only the last values' counts,
    # and the collisions re-ran crowd() (tens of exp) often.
    slot = ((key * 2654435761) >> 22) & (SLOTS - 1)
    entry = CACHE + ENTRY * (int(wf[LEVEL + s]) * SLOTS + slot)
    if wf[entry] != key:  # a miss: work the crowd out and keep it (gains reads it there)
        crowd(wf, p, s, total, n, hands, others)
        wf[entry] = key
        for v in range(1, 6):
            wf[entry + v] = wf[ONE + v]
            wf[entry + 5 + v] = wf[TWO + v]
    nv = wi[B_NV + b]  # the values present, highest first: the loops below run over them
    for i in range(nv):
        wi[PRESENT + i] = wi[B_PRESENT + 8 * b + i]
    temperature = wf[p + 11]
    left = n  # wi[TARGETS:TARGETS + left] are the flies not yet chosen, in centre order
    for h in range(n_times):
        if nv == 1 and wf[p + 12] <= 0.0:
            # The flies left are of one value, so alike: the softmax picks one uniformly, and
            # their gain (never negative) clears a min_gain of 0. No gain needs working out.
            k = 0
            if temperature > 0 and left > 1:
                state, u = rng.uniform(state)
                k = int(u * left)  # what the walk below gives with weights of 1.0
        else:
            state, k = pick(wf, wi, p, s, entry, wi[OUT_MS + h], nv, left, state)
            if k < 0:
                return state, h
        v = VALUES[wi[TARGETS + k] % 16]
        wf[COUNT_BY_VALUE + v] -= 1.0
        if wf[COUNT_BY_VALUE + v] == 0.0:  # the last fly of its value: the value goes
            nv = drop_value(wi, nv, v)
        wi[OUT_CARDS + h] = wi[TARGETS + k]
        for j in range(k, left - 1):
            wi[TARGETS + j] = wi[TARGETS + j + 1]
        left -= 1
    return state, n_times


@njit(cache=True, inline="always")
def pick(
    wf: np.ndarray,
    wi: np.ndarray,
    p: int,
    s: int,
    entry: int,
    ms: int,
    nv: int,
    left: int,
    state: np.uint64,
) -> tuple[np.uint64, int]:
    """The generator's state and the index among the ``left`` targets of the fly a hand laid
    at ``ms`` takes, by softmax over the gains (:func:`gains`), or -1 when the best gain is
    below ``min_gain`` (that hand and the later ones are not laid)."""
    best, best_v = gains(wf, wi, p, s, entry, ms, nv)
    if best < wf[p + 12]:
        return state, -1
    temperature = wf[p + 11]
    k = 0
    if temperature > 0 and left > 1:
        weight = 0.0
        scale = 1.0 / temperature
        for i in range(nv - 1, -1, -1):  # lowest value first, as bots.choose sums them
            v = wi[PRESENT + i]
            wf[GAINS + v] = exp((wf[GAINS + v] - best) * scale)  # exp(0) is 1.0
            weight += wf[COUNT_BY_VALUE + v] * wf[GAINS + v]
        state, u = rng.uniform(state)
        u *= weight
        while k < left - 1 and u >= wf[GAINS + VALUES[wi[TARGETS + k] % 16]]:
            u -= wf[GAINS + VALUES[wi[TARGETS + k] % 16]]
            k += 1
    else:
        while VALUES[wi[TARGETS + k] % 16] != best_v:
            k += 1
    return state, k


@njit(cache=True, inline="always")
def gains(
    wf: np.ndarray, wi: np.ndarray, p: int, s: int, entry: int, ms: int, nv: int
) -> tuple[float, int]:
    """The gain of a fly of each value present (``wi[PRESENT:]``, ``nv`` of them) for a hand
    laid at ``ms``, into ``wf[GAINS + v]``: its value times the chance of being first on it,
    against the crowd kept in the cache ``entry`` (rivals' first hands at ``entry + v``, second
    hands at ``entry + 5 + v``), to the power ``caution``. Returns the best gain and its
    value (the highest value among equals)."""
    caution = wf[p + 10]
    b1 = beaten(wf, p, s, ms, 0)
    b2 = beaten(wf, p, s, ms, 1)
    best = -1.0
    best_v = 0
    for i in range(nv):
        v = wi[PRESENT + i]
        gain = v * exp(-caution * (wf[entry + v] * b1 + wf[entry + 5 + v] * b2))
        wf[GAINS + v] = gain
        best_v = v if gain > best else best_v
        best = max(best, gain)
    return best, best_v


@njit(cache=True, inline="always")
def drop_value(wi: np.ndarray, nv: int, v: int) -> int:
    """Take value ``v`` out of the ``nv`` present (``wi[PRESENT:]``); how many are left."""
    j = 0
    for i in range(nv):
        wi[PRESENT + j] = wi[PRESENT + i]
        j += wi[PRESENT + i] != v
    return j
