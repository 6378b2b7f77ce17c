"""Fair play over many games: does a player's slapping look like a person's?

Per slap, a script that reads the table and slaps the right fly at 160 ms is a fast person;
over a few games it is not. People's reaction times spread and have a long right tail (the
ex-Gaussian, :mod:`flyswat.bots`), they misjudge the allowed colour, they look away. This
module is pure: it reads a player's hands out of game records (:func:`from_record`) and
weighs them (:func:`assess`), giving a score and a reason a person can read. It decides
nothing: a flagged player is put under review (not rated meanwhile, shown to nobody as a
cheater) and listed for an operator (:mod:`flyswat.server.fairplay_store`).

The evidence, over the player's **first hands** (the first hand of each round they slapped
in; a second hand's time depends on the first):

- ``steady``: the spread of their times (interquartile range / 1.349, a standard deviation
  that a few stray slow hands do not inflate) is below what people show, with the
  uncertainty of a small sample taken off first (:data:`SPREAD_FLOOR_MS`);
- ``fast``: even the upper confidence bound of their median time is faster than people choose
  a fly and point at it (:data:`SPEED_FLOOR_MS`);
- ``tailless``: their times, each round's choice taken out, have no right tail (sample
  skewness below :data:`SKEW_FLOOR` less its uncertainty; an ex-Gaussian's is 1 to 2), over
  many hands;
- ``flawless``: fast *and* never wrong nor absent over many rounds (:data:`FLAWLESS_ROUNDS`);
- ``uncanny``: at a top player's pace, surer, steadier from game to game, quicker and less
  slowed by hard rounds than people are, all at once (:func:`_uncanny`): a script that adds
  noise to look human keeps a person's spread and tail, but not a person's mistakes, a
  person's days, nor a person's longer thought over a harder choice (the Hick–Hyman law,
  :func:`flyswat.bots.choice_bits`: people take longer to pick the most numerous colour
  among more colours and closer counts; noise added to a fixed time does not), nor a
  person's drift from round to round (:func:`serial_correlation`: people's times are
  serially correlated, slow and quick stretches and a slower hand after a wrong one; noise
  drawn afresh each round is not);
- ``too_fast``: claims refused as faster than humanly possible, in several games.

A player's results are not weighed: they follow from the speed and accuracy weighed here,
and would flag the strongest players for being strong.

Each item's strength is 1 at its threshold and grows with the evidence; the score is the
largest, and a score of 1 or more flags the player. The thresholds are set by measurement
(``bench/fairplay.py``, ``docs/BENCHMARKS.md``), not guessed.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from flyswat import record as records
from flyswat.bots import TYPICAL_BITS, centre_bits
from flyswat.errors import FlyswatError

#: People's first hands spread at least this much (ms, robust sd); the bots' models of
#: people spread 130–240 ms, the tightest person modelled about 90 ms.
SPREAD_FLOOR_MS = 60.0
#: People's median first hand is slower than this (ms): choosing which fly and pointing at it.
SPEED_FLOOR_MS = 505.0
#: The least skewed people's times are (an ex-Gaussian's skewness is 1 to 2; the least
#: skewed person modelled, a short tail under a wide spread and a pace drifting within the
#: game by 0.6 of their own sd, a Gaussian part that adds no skew, 2τ³ / ((1 + 0.6²)(σ² +
#: τ²))^1.5 = 0.62; rounded down to a tenth, as 0.98 was to 0.9 without the drift); a
#: sample's may fall below it by its uncertainty.
SKEW_FLOOR = 0.6
#: How many standard errors the evidence must clear (the sample's own uncertainty).
Z = 4.0
#: Fewest first hands before the spread is weighed; before speed; before the tail.
MIN_STEADY, MIN_FAST, MIN_TAIL = 20, 30, 120
#: Rounds with something to slap, all slapped, none wrong, before ``flawless`` is weighed,
#: and the median that counts as fast for it (ms).
FLAWLESS_ROUNDS, FLAWLESS_MS = 120, 560.0
#: Too-fast claims, in at least this many games, that flag by themselves.
TOO_FAST_CLAIMS, TOO_FAST_GAMES = 3, 2
#: Games weighed: the player's latest.
WINDOW = 100
#: ``uncanny``: weighed at the pace of the best people (a median first hand under
#: :data:`JOINT_MS`), over at least :data:`MIN_JOINT` first hands in :data:`MIN_JOINT_GAMES`
#: games (of two first hands or more); the fewest wrong first hands people make (a share of
#: their first hands); the least their pace varies from game to game (an F ratio: about 1
#: for a pace that never changes, above it with a bad day among the games); and the combined
#: standard score that flags (the smallest multiple of 0.25 above the highest of 3,000
#: modelled people's, ``bench/fairplay.py`` seeds 2, 5 and 6, their pace drifting within
#: games, all five legs weighed, the choice slope by the ex-Gaussian's score, and the first
#: two legs by their exact chances (:func:`surer`, :func:`steadier`): 1.14).
JOINT_MS, MIN_JOINT, MIN_JOINT_GAMES = 600.0, 60, 5
ERROR_FLOOR, DRIFT_FLOOR, JOINT_Z = 0.02, 1.5, 1.25
#: ``uncanny``'s fourth leg: the least people's first hands slow per bit of a round's choice
#: (ms per bit, :func:`choice_slope`): the Hick–Hyman slope of the most practised person
#: modelled (``bench/fairplay.py``: ``hard``'s 40 at half), far under the laboratory's
#: 130–200 for unpractised people.
SLOPE_FLOOR = 20.0
#: ``uncanny``'s fifth leg: the least lag-1 autocorrelation of people's first hands within a
#: game (:func:`serial_correlation`, each round's choice taken out): people's pace drifts from
#: round to round and slows after a wrong fly, so one first hand says something of the next;
#: noise a script adds afresh each round does not. The least of any person modelled:
#: ``bench/fairplay.py``'s :class:`Pace` at its weakest (a drift of 0.35 of their own sd,
#: 0.6 from round to round, 20 ms after an error, their spread and tail at +25 %), measured
#: as this estimator measures it over 2,000 games at each of five levels, 0.039 to 0.051
#: (± 0.007); rounded down.
RHO_FLOOR = 0.03


@dataclass(init=False, slots=True)
class Hand:
    """One accepted hand: its effective time ``ms``; ``first``: the player's first hand of
    the round; ``right``: on an allowed colour (R14); ``won``: the fly was won by it (R18);
    ``bits``: the round's choice (:func:`flyswat.bots.choice_bits` of the centre), or None
    when unknown. Its fields are final; its ``__init__`` is its own rather than a frozen
    dataclass's, which sets each field through ``object.__setattr__``: compiled, seven times
    slower, and a player's window is thousands of hands read at each of their games' ends."""

    ms: Final[float]
    first: Final[bool]
    right: Final[bool]
    won: Final[bool]
    bits: Final[float | None]

    def __init__(self, ms: float, first: bool, right: bool, won: bool,
                 bits: float | None = None) -> None:  # fmt: skip
        self.ms = ms
        self.first = first
        self.right = right
        self.won = won
        self.bits = bits


@dataclass(frozen=True, slots=True)
class GameHands:
    """A player's hands in one game: ``rounds`` with an allowed colour to slap, ``missed``
    of them with no hand of theirs, and their claims refused ``too_fast``."""

    hands: tuple[Hand, ...]
    rounds: int
    missed: int
    too_fast: int = 0

    def to_json(self) -> dict[str, Any]:
        """The compact form the store keeps: ``h`` ``[ms, flags]`` (1 first, 2 right, 4 won),
        and the round's bits third when known (to 1/100)."""
        flags = [int(h.first) | 2 * int(h.right) | 4 * int(h.won) for h in self.hands]
        hands = [[round(h.ms), f] + ([] if h.bits is None else [round(h.bits, 2)])
                 for h, f in zip(self.hands, flags, strict=True)]  # fmt: skip
        return {"h": hands, "r": self.rounds, "m": self.missed, "f": self.too_fast}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GameHands:
        """What :meth:`to_json` wrote."""
        hands = tuple(Hand(float(h[0]), bool(h[1] & 1), bool(h[1] & 2), bool(h[1] & 4),
                           float(h[2]) if len(h) > 2 else None) for h in data["h"])  # fmt: skip
        return cls(hands, int(data["r"]), int(data["m"]), int(data.get("f", 0)))


def round_bits(record: Mapping[str, Any]) -> dict[int, float]:
    """The choice of each slap round of a game record, by turn index: the bits
    (:func:`flyswat.bots.choice_bits`) of the centre when its trigger was shown, replaying the
    record (:func:`flyswat.record.replay`). Empty for a record that does not replay."""
    turns = record.get("turns", [])
    bits: dict[int, float] = {}

    def before(i: int, game: Any) -> None:
        if turns[i].get("round"):
            bits[i] = centre_bits(game.centre)

    try:
        records.replay(dict(record), before)
    except FlyswatError:
        return {}
    return bits


def from_record(record: Mapping[str, Any], seat: int, too_fast: int = 0,
                bits: Mapping[int, float] | None = None) -> GameHands:  # fmt: skip
    """The hands of ``seat`` in a game record (``docs/RECORD.md``): every accepted slap
    with its ``ms``, in arrival order, and its round's choice (``bits``, by turn index: the
    record's :func:`round_bits` when not given); rounds whose allowed colours were not empty
    (R15)."""
    if bits is None:
        bits = round_bits(record)
    hands: list[Hand] = []
    rounds = missed = 0
    for i, turn in enumerate(record.get("turns", [])):
        r = turn.get("round")
        if not r or not r.get("allowed"):
            continue
        rounds += 1
        allowed = set(r["allowed"])
        won = {w["card"] for w in r.get("won", []) if int(w["seat"]) == seat}
        mine = [s for s in r.get("slaps", []) if int(s["seat"]) == seat and "ms" in s]
        if not mine:
            missed += 1
        for k, s in enumerate(sorted(mine, key=lambda s: float(s["ms"]))):
            card = str(s["card"])
            hands.append(Hand(float(s["ms"]), k == 0, card[0] in allowed, card in won,
                              bits.get(i)))  # fmt: skip
    return GameHands(tuple(hands), rounds, missed, too_fast)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What :func:`assess` makes of a player's games: ``score`` (1 or more: flagged),
    ``reason`` (the strongest evidence in words, or why there is none), and the figures."""

    score: float
    reason: str
    games: int
    first_hands: int
    evidence: dict[str, float]

    @property
    def flagged(self) -> bool:
        """Is the evidence strong enough for an operator to look?"""
        return self.score >= 1.0


def _quantile(xs: Sequence[float], q: float) -> float:
    at = (len(xs) - 1) * q
    lo = math.floor(at)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (at - lo)


def _skewness(xs: Sequence[float], mean: float, sd: float) -> float:
    if sd <= 0:
        return 0.0
    zs = [(x - mean) / sd for x in xs]
    return sum(z * z * z for z in zs) / len(xs)


def _skewness_se(xs: Sequence[float]) -> float:
    """The jackknife standard error of the sample skewness of ``xs`` (the skewness of the
    sample less each one in turn), from its power sums: linear in ``len(xs)``."""
    n = len(xs)
    mean = _mean(xs)
    ys = [x - mean for x in xs]
    s2, s3 = sum(y * y for y in ys), sum(y * y * y for y in ys)
    out = []
    for y in ys:
        m = -y / (n - 1)  # the mean of the others, about the whole sample's
        a2, a3 = (s2 - y * y) / (n - 1), (s3 - y * y * y) / (n - 1)
        var = a2 - m * m
        out.append((a3 - 3 * m * a2 + 2 * m**3) / var**1.5 if var > 0 else 0.0)
    mean_out = _mean(out)
    return math.sqrt((n - 1) / n * sum((g - mean_out) * (g - mean_out) for g in out))


def _mean(xs: Sequence[float]) -> float:
    """The mean of ``xs``: :func:`statistics.fmean`'s, to the bit, without its wrapper."""
    return math.fsum(xs) / len(xs)


def _pvariance(xs: Sequence[float], mean: float) -> float:
    """The population variance of ``xs`` about ``mean`` (their :func:`_mean`),
    in floats: what :func:`statistics.pvariance` gives to the last bits, without its exact
    fractions (a hundred times the cost over a player's thousands of hands)."""
    ds = [x - mean for x in xs]
    return max(0.0, (math.fsum(d * d for d in ds) - math.fsum(ds) ** 2 / len(ds)) / len(ds))


def _pstdev(xs: Sequence[float]) -> float:
    """The population standard deviation of ``xs`` (as :func:`_pvariance`)."""
    return math.sqrt(_pvariance(xs, _mean(xs)))


_NORMAL = statistics.NormalDist()


def _z_below(p: float) -> float:
    """The standard score of a lower-tail chance ``p``: how far below people's bound (the
    evidence's strength; 0 at a chance of one half)."""
    return -_NORMAL.inv_cdf(min(max(p, 1e-12), 1 - 1e-12))


def _binomial_cdf(x: int, n: int, p: float) -> float:
    """The chance of ``x`` or fewer in ``n`` trials of chance ``p``."""
    log_p, log_q = math.log(p), math.log1p(-p)
    return min(1.0, sum(math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                                 + i * log_p + (n - i) * log_q) for i in range(x + 1)))  # fmt: skip


def _f_cdf(f: float, d1: float, d2: float) -> float:
    """The F(d1, d2) distribution's chance of ``f`` or less (the regularized incomplete beta
    function at d1·f / (d1·f + d2))."""
    if f <= 0:
        return 0.0
    return _beta_inc(d1 / 2, d2 / 2, d1 * f / (d1 * f + d2))


def _beta_inc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), by its continued fraction
    (Lentz's method), on the side of x where it converges quickly."""
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _beta_inc(b, a, 1.0 - x)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x)) / a  # fmt: skip
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):  # fmt: skip
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= c * d
        if abs(c * d - 1.0) < 1e-12:
            break
    return min(1.0, front * h)


def assess(games: Sequence[GameHands]) -> Verdict:
    """Weigh a player's latest :data:`WINDOW` games (oldest first) for play that is not a
    person's; see the module's docstring for the evidence."""
    games = list(games)[-WINDOW:]
    times = sorted(h.ms for g in games for h in g.hands if h.first)
    n = len(times)
    evidence: dict[str, float] = {}
    words: dict[str, str] = {}
    if n >= MIN_STEADY:
        spread = (_quantile(times, 0.75) - _quantile(times, 0.25)) / 1.349
        # The spread's upper bound: a sample IQR's relative standard error is about 1.1/√n.
        bound = spread * (1 + Z * 1.1 / math.sqrt(n))
        evidence["steady"] = SPREAD_FLOOR_MS / max(bound, 1.0)
        words["steady"] = (f"first hands spread only {spread:.0f} ms over {n} rounds "
                           f"(people: {SPREAD_FLOOR_MS:.0f} ms or more)")  # fmt: skip
    median = _quantile(times, 0.5) if n else math.inf
    sd = _pstdev(times) if n > 1 else 0.0
    if n >= MIN_FAST:
        # The median's standard error is about 1.25 sd / √n.
        upper = median + Z * 1.25 * sd / math.sqrt(n)
        evidence["fast"] = SPEED_FLOOR_MS / max(upper, 1.0)
        words["fast"] = (f"median first hand {median:.0f} ms over {n} rounds (people: slower "
                         f"than {SPEED_FLOOR_MS:.0f} ms to choose a fly and point)")  # fmt: skip
    fit = choice_slope(games) if n >= min(MIN_TAIL, MIN_JOINT) else None
    if n >= MIN_TAIL:
        # The tail of their times once each round's choice is taken out (their own slope):
        # quick easy rounds are a left tail of a person's times, not a missing right one.
        net = _net_of_choice(games, fit) or times
        mean = _mean(net)
        skew = _skewness(net, mean, math.sqrt(_pvariance(net, mean)))
        # The sample skewness's standard error: √(6/n) for a Gaussian sample, more with a
        # real tail (a few slow hands move it): the sample's own, by the jackknife.
        floor = SKEW_FLOOR - Z * max(math.sqrt(6 / n), _skewness_se(net))
        evidence["tailless"] = max(0.0, 1 + floor) / max(1 + skew, 1e-3)
        words["tailless"] = (f"reaction times with no slow tail (skewness {skew:.2f} over {n} "
                             "rounds; people's are skewed, 1 to 2)")  # fmt: skip
    rounds = sum(g.rounds for g in games)
    lapses = sum(g.missed for g in games) + sum(not h.right for g in games for h in g.hands)
    if rounds >= FLAWLESS_ROUNDS and lapses == 0 and n >= MIN_FAST:
        evidence["flawless"] = (FLAWLESS_MS / max(median, 1.0)) * min(1.0, rounds / FLAWLESS_ROUNDS)
        words["flawless"] = (f"no wrong fly and no round missed in {rounds} rounds, at a median "
                             f"of {median:.0f} ms")  # fmt: skip
    joint = _uncanny(games, times, median, sd, fit)
    if joint is not None:
        evidence["uncanny"], words["uncanny"] = joint
    claims = sum(g.too_fast for g in games)
    claimed_in = sum(1 for g in games if g.too_fast)
    if claims >= TOO_FAST_CLAIMS and claimed_in >= TOO_FAST_GAMES:
        evidence["too_fast"] = claims / TOO_FAST_CLAIMS
        words["too_fast"] = (f"{claims} slaps claimed faster than humanly possible in "
                             f"{claimed_in} games")  # fmt: skip
    if not evidence:
        return Verdict(0.0, f"too few hands to weigh ({n} first hands)", len(games), n, {})
    strongest = max(evidence, key=lambda k: evidence[k])
    score = evidence[strongest]
    reason = words[strongest] if score >= 1.0 else "nothing unlike a person's play"
    return Verdict(round(score, 3), reason, len(games), n,
                   {k: round(v, 3) for k, v in evidence.items()})  # fmt: skip


def _between_games(games: Sequence[GameHands]) -> tuple[float, int]:
    """The F ratio of the player's first hands between games to within them (one-way
    analysis of variance; about 1 when their pace is the same in every game), and the number
    of games in it (those with two first hands or more)."""
    groups = [[h.ms for h in g.hands if h.first] for g in games]
    groups = [xs for xs in groups if len(xs) >= 2]
    n, k = sum(len(xs) for xs in groups), len(groups)
    if k < 2 or n <= k:
        return 1.0, k
    means = [_mean(xs) for xs in groups]
    grand = sum(m * len(xs) for m, xs in zip(means, groups, strict=True)) / n
    between = sum(len(xs) * (m - grand) ** 2 for m, xs in zip(means, groups, strict=True))
    within = sum((x - m) * (x - m) for m, xs in zip(means, groups, strict=True) for x in xs)
    return (between / (k - 1)) / max(within / (n - k), 1e-9), k


#: A :func:`choice_slope`: the slope, its standard error, the first hands in it.
Fit = tuple[float, float, int]


def _net_of_choice(games: Sequence[GameHands], fit: Fit | None = None) -> list[float]:
    """The player's first hands, each less their :func:`choice_slope` (``fit``, when already
    had) times its round's bits above :data:`flyswat.bots.TYPICAL_BITS` (as it is, when its
    round's bits are unknown); empty when the slope cannot be had."""
    slope, se, _ = fit or choice_slope(games)
    if not math.isfinite(se):
        return []
    return [h.ms - (0.0 if h.bits is None else slope * (h.bits - TYPICAL_BITS))
            for g in games for h in g.hands if h.first]  # fmt: skip


def choice_slope(games: Sequence[GameHands]) -> Fit:
    """How much slower the player's first hands are per bit of a round's choice (ms per bit:
    the Hick–Hyman slope, :func:`flyswat.bots.choice_bits`), its standard error, and the
    number of first hands in it; one slope for all games, times and bits both taken about
    each game's own means (so a slow day moves no slope).

    Reaction times are ex-Gaussian: a least-squares line heeds a hand in the slow tail as
    much as any, and its error is the whole spread's, √(σ² + τ²). The likelihood's own
    weighting heeds the tail less and the sharp rise before the mode more, an error nearer
    σ's: so the least-squares line is taken one Newton step along the ex-Gaussian's score
    (:func:`_ex_gauss_score`, its σ and τ fitted to the line's residuals by their moments,
    :func:`_ex_gauss_fit`; one step from a consistent start is as efficient as the maximum),
    and its error is the sandwich's (right whatever the true shape of the times: any score,
    taken about each game's mean, is unbiased for times independent of the round's choice).
    A slope of 0 and an infinite error when the bits do not vary or the times not at all."""
    centred: list[tuple[float, float]] = []  # (bits, ms), each about its game's means
    k = 0
    for g in games:
        pts = [(h.bits, h.ms) for h in g.hands if h.first and h.bits is not None]
        if len(pts) < 2:
            continue
        mx = _mean([x for x, _ in pts])
        my = _mean([y for _, y in pts])
        centred += [(x - mx, y - my) for x, y in pts]
        k += 1
    n = len(centred)
    sxx = sum(x * x for x, _ in centred)
    if sxx <= 0 or n - k - 1 <= 0:
        return 0.0, math.inf, n
    slope = sum(x * y for x, y in centred) / sxx
    fitted = _ex_gauss_fit([y - slope * x for x, y in centred])
    if fitted is None:
        return slope, math.inf, n
    mu, sigma, tau = fitted
    num = den = 0.0
    for x, y in centred:
        psi, dpsi = _ex_gauss_score(y - slope * x, mu, sigma, tau)
        num, den = num + psi * x, den + dpsi * x * x
    slope += num / den
    meat = den = 0.0
    for x, y in centred:
        psi, dpsi = _ex_gauss_score(y - slope * x, mu, sigma, tau)
        meat, den = meat + (psi * x) * (psi * x), den + dpsi * x * x
    return slope, math.sqrt(meat * n / (n - k - 1)) / den, n


def _ex_gauss_fit(residuals: Sequence[float]) -> tuple[float, float, float] | None:
    """The ex-Gaussian (μ, σ, τ) fitted to ``residuals`` by its moments (τ from the skewness,
    2τ³/s³, kept within 0.05–1.8; σ² the variance left); None when they do not vary."""
    mean = _mean(residuals)
    var = _pvariance(residuals, mean)
    if var <= 0:
        return None
    s = math.sqrt(var)
    skew = sum((r - mean) * (r - mean) * (r - mean) for r in residuals) / len(residuals) / s**3
    tau = s * (min(max(skew, 0.05), 1.8) / 2) ** (1 / 3)
    sigma = math.sqrt(max(var - tau * tau, (0.1 * s) ** 2))
    return mean - tau, sigma, tau


def _ex_gauss_score(x: float, mu: float, sigma: float, tau: float) -> tuple[float, float]:
    """The location score of the ex-Gaussian (μ, σ, τ) at a residual ``x``: ψ = −d log f / dx
    and its derivative ψ′. With z = (x − μ)/σ − σ/τ and m = φ(z)/Φ(z): ψ = 1/τ − m/σ,
    ψ′ = m(z + m)/σ². (A plain function of floats: compiled, called with no object made.)"""
    z = (x - mu) / sigma - sigma / tau
    # Φ(z) by erfc, and the Mills ratio's asymptote where Φ underflows.
    m = -z - 1 / z if z < -30 else _PHI * math.exp(-z * z / 2) / (0.5 * math.erfc(-z / _SQRT2))
    return 1 / tau - m / sigma, m * (z + m) / (sigma * sigma)


_SQRT2, _PHI = math.sqrt(2.0), 1 / math.sqrt(2 * math.pi)


def serial_correlation(games: Sequence[GameHands], fit: Fit | None = None) -> Fit:
    """How much one first hand of the player's says of their next in the same game: the
    lag-1 autocorrelation of their first hands in round order, each less their
    :func:`choice_slope` times its round's bits (as :func:`_net_of_choice`) and taken about
    its game's mean (so a slow day is no dependence), pooled over games; less the bias of
    that estimator for independent times (each game's mean taken out pulls it down by about
    1 / its hands), so 0 is expected of a script's fresh noise. Its standard error for
    independent times (1 / √pairs, Bartlett), and the number of consecutive pairs in it.
    ``fit``: the player's :func:`choice_slope`, when already had."""
    slope, se, _ = fit or choice_slope(games)
    if not math.isfinite(se):
        slope = 0.0
    num = den = bias = 0.0
    pairs = 0
    for g in games:
        xs = [h.ms - (0.0 if h.bits is None else slope * (h.bits - TYPICAL_BITS))
              for h in g.hands if h.first]  # fmt: skip
        n = len(xs)
        if n < 3:
            continue
        m = _mean(xs)
        ys = [x - m for x in xs]
        num += sum(a * b for a, b in itertools.pairwise(ys))
        den += sum(y * y for y in ys)
        bias += (n - 1) / n  # E[num] = -bias·σ², E[den] = (n - 1)·σ² for independent times
        pairs += n - 1
    if pairs == 0 or den <= 0:
        return 0.0, math.inf, 0
    return num / den + bias / pairs, 1 / math.sqrt(pairs), pairs


def surer(wrong: int, hands: int) -> float:
    """How much surer than people a player with ``wrong`` wrong first hands in ``hands`` is,
    as a standard score: the exact binomial chance of so few at people's fewest
    (:data:`ERROR_FLOOR`), 0 at a chance of one half. (A normal approximation of the count,
    (expected − wrong) / √expected, overstates no mistake in a few hands and understates it
    in many.)"""
    return _z_below(_binomial_cdf(wrong, hands, ERROR_FLOOR))


def steadier(ratio: float, games: int, hands: int) -> float:
    """How much steadier from game to game than people a player whose first hands' F ratio
    between games (:func:`_between_games`) is ``ratio`` over ``games`` games and ``hands``
    first hands is, as a standard score. A pace that moves from game to game by a random
    amount gives a ratio that is its expected value (1 + the games' share of the variance
    times the hands per game) times a central F(games − 1, hands − games) (a random-effects
    analysis of variance); at people's least, :data:`DRIFT_FLOOR`. The score is the chance
    of a ratio this low there, so a few games weigh as little as they say. (The normal
    approximation, (DRIFT_FLOOR − ratio) / √(2 / (games − 1)), takes the spread of a pace
    that never changes for people's, too narrow by DRIFT_FLOOR.)"""
    return _z_below(_f_cdf(ratio / DRIFT_FLOOR, games - 1, hands - games))


def _uncanny(games: Sequence[GameHands], times: Sequence[float], median: float, sd: float,
             fit: Fit | None = None) -> tuple[float, str] | None:  # fmt: skip
    """The joint evidence of a player at a top player's pace (a median under
    :data:`JOINT_MS`): surer, steadier from game to game, quicker and less slowed by a hard
    choice than people are, each as a standard score against people's bound (positive:
    beyond it), their sum divided by the square root of their number (the sum's standard
    deviation; the fourth is left out while the records say nothing of the rounds' choices),
    and less serially dependent from round to round (:func:`serial_correlation`, the fifth).
    Any one of them alone some people show; all at once over many games, people do not. The
    strength is 1 at :data:`JOINT_Z`."""
    n = len(times)
    ratio, k = _between_games(games)
    if n < MIN_JOINT or k < MIN_JOINT_GAMES or median >= JOINT_MS or sd <= 0:
        return None
    # Surer: fewer wrong first hands than people's fewest; steadier from game to game.
    wrong = sum(1 for g in games for h in g.hands if h.first and not h.right)
    z_sure, z_steady = surer(wrong, n), steadier(ratio, k, n)
    # Quicker: as ``fast``, but any margin below the floor counts (none above it).
    z_quick = max(0.0, (SPEED_FLOOR_MS - median) / (1.25 * sd / math.sqrt(n)))
    scores = [z_sure, z_steady, z_quick]
    # Less slowed by a hard choice: the slope's shortfall from people's least, in its errors.
    fit = fit or choice_slope(games)
    slope, se, m = fit
    has_slope = m >= MIN_JOINT and math.isfinite(se)
    if has_slope:
        scores.append((SLOPE_FLOOR - slope) / se)
    # Less serially dependent: the autocorrelation's shortfall from people's least.
    rho, rho_se, pairs = serial_correlation(games, fit)
    has_serial = pairs >= MIN_JOINT
    if has_serial:
        scores.append((RHO_FLOOR - rho) / rho_se)
    z = sum(scores) / math.sqrt(len(scores))
    words = (f"surer, steadier and quicker at once than people are: {wrong} wrong flies in "
             f"{n} first hands (people: {100 * ERROR_FLOOR:.0f} % or more), the same pace in "
             f"every game (between-game F {ratio:.2f} over {k} games; people's pace varies "
             f"from day to day), a median of {median:.0f} ms")  # fmt: skip
    if has_slope:
        words += (f", {slope:.0f} ± {se:.0f} ms slower per bit of a round's choice "
                  f"(people: {SLOPE_FLOOR:.0f} or more, slower over more colours and closer "
                  "counts)")  # fmt: skip
    if has_serial:
        words += (f", one round's time telling nothing of the next (lag-1 autocorrelation "
                  f"{rho:.2f} ± {rho_se:.2f} over {pairs} pairs; people's pace drifts, "
                  f"{RHO_FLOOR:.2f} or more)")  # fmt: skip
    return max(0.0, z) / JOINT_Z, words
