"""Bots: pure policies that decide, from one seat's view, where and when to slap.

A bot sees exactly what a human at its seat sees (:class:`~flyswat.view.View`, R25): the
centre, but not the allowed colours, which it judges itself (R14) — and sometimes misjudges.
It is a function, not an actor: the caller (the table, the simulator) owns the clock and the
randomness and applies the planned slaps at the times they name.

Reaction times follow the ex-Gaussian distribution, the usual model of human reaction times:
a Gaussian (``mu``, ``sigma``) plus an exponential tail (``tau``) for the right skew. Simple
visual reaction, pressing a key when a light appears, takes about 190 ms; choosing *which* fly
to slap is a choice reaction (Hick's law: longer with more alternatives), and a player at a
screen must then point at the card, so the first hand's ``mu`` is 480–740 ms by level (the
pace of people clicking or tapping, so bots and people meet as equals), and a second hand
comes later still.

The three levels, :data:`LEVELS`, differ in speed, in how often they misjudge the allowed
colour, in how often they miss a round altogether, and in aim: ``easy`` and ``normal`` go for
the highest-value flies they believe allowed; ``hard`` also weighs the chance of being beaten
to a fly that the others will go for too.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from itertools import permutations

from flyswat.cards import Card, Colour
from flyswat.errors import MalformedError
from flyswat.view import View

#: The bot levels, from the slowest to the strongest.
LEVELS = ("easy", "normal", "hard")


@dataclass(frozen=True, slots=True)
class PlannedSlap:
    """One hand a bot means to lay: on ``card``, ``ms`` after the trigger was shown."""

    card: Card
    ms: int


@dataclass(frozen=True, slots=True)
class Level:
    """The parameters of one bot level; all times are in milliseconds.

    - ``mu_ms``, ``sigma_ms``, ``tau_ms``: the ex-Gaussian of the first hand's reaction time,
      from the instant the trigger is shown (mean ``mu + tau``).
    - ``second_mu_ms``, ``second_sigma_ms``, ``second_tau_ms``: the ex-Gaussian of the extra
      time a second hand takes after the first.
    - ``floor_ms``: no hand is faster than this (a faster one would be a guess, not a reaction).
    - ``misjudge``: the chance, per round, of taking the next most numerous colour(s) for the
      allowed one(s); the bot then slaps flies of a wrong colour (R19).
    - ``lapse``: the chance, per round, of laying no hand at all (looked away, too slow).
    - ``second_hand``: the chance of laying a second hand when it has one and a target is left.
    - ``sloppy``: the chance, per hand, of going for a random fly of the believed colour rather
      than the most valuable one.
    - ``contest``: weigh each fly by its value times the chance of being first on it, assuming
      the others go for the top flies at ``normal`` speed.
    - ``min_gain``: with ``contest``, a hand whose expected gain (points) is below this is not
      laid: nothing worth it.
    - ``reveal_mu_ms``, ``reveal_sigma_ms``, ``reveal_tau_ms``: the pause before revealing.
    """

    mu_ms: float
    sigma_ms: float
    tau_ms: float
    second_mu_ms: float
    second_sigma_ms: float
    second_tau_ms: float
    floor_ms: int
    misjudge: float
    lapse: float
    second_hand: float
    sloppy: float
    contest: bool
    min_gain: float
    reveal_mu_ms: float
    reveal_sigma_ms: float
    reveal_tau_ms: float


EASY = Level(
    mu_ms=740, sigma_ms=100, tau_ms=220,
    second_mu_ms=300, second_sigma_ms=80, second_tau_ms=150,
    floor_ms=250, misjudge=0.15, lapse=0.10, second_hand=0.6, sloppy=0.3,
    contest=False, min_gain=0.0,
    reveal_mu_ms=1400, reveal_sigma_ms=300, reveal_tau_ms=600,
)  # fmt: skip
"""A beginner: slow, often wrong about the colour, often gets one hand down only."""

NORMAL = Level(
    mu_ms=600, sigma_ms=80, tau_ms=180,
    second_mu_ms=220, second_sigma_ms=60, second_tau_ms=100,
    floor_ms=220, misjudge=0.07, lapse=0.04, second_hand=0.9, sloppy=0.1,
    contest=False, min_gain=0.0,
    reveal_mu_ms=1000, reveal_sigma_ms=200, reveal_tau_ms=400,
)  # fmt: skip
"""A regular player: the yardstick the ``hard`` bot measures its rivals by."""

HARD = Level(
    mu_ms=480, sigma_ms=60, tau_ms=120,
    second_mu_ms=160, second_sigma_ms=40, second_tau_ms=70,
    floor_ms=200, misjudge=0.02, lapse=0.01, second_hand=1.0, sloppy=0.0,
    contest=True, min_gain=0.25,
    reveal_mu_ms=700, reveal_sigma_ms=120, reveal_tau_ms=250,
)  # fmt: skip
"""A sharp player: fast, rarely wrong, and avoids a race it is likely to lose."""

_PARAMS: dict[str, Level] = {"easy": EASY, "normal": NORMAL, "hard": HARD}


def params(level: str) -> Level:
    """The parameters of ``level``; raises :class:`MalformedError` for an unknown level."""
    try:
        return _PARAMS[level]
    except (KeyError, TypeError):
        raise MalformedError(
            f"unknown bot level {level!r}: expected one of {', '.join(LEVELS)}", "bad_level"
        ) from None


def _ex_gauss(rng: random.Random, mu: float, sigma: float, tau: float) -> float:
    return rng.gauss(mu, sigma) + rng.expovariate(1.0 / tau)


def reveal_delay_ms(level: str, rng: random.Random) -> int:
    """A human-like pause, in ms, before a bot at ``level`` reveals on its turn (at least 300).

    Raises :class:`MalformedError` for an unknown level.
    """
    p = params(level)
    return max(300, round(_ex_gauss(rng, p.reveal_mu_ms, p.reveal_sigma_ms, p.reveal_tau_ms)))


def believed_colours(centre: tuple[Card, ...] | list[Card], misjudge: bool) -> set[Colour]:
    """The colours a player takes for allowed: the most numerous ones in ``centre`` (R14).

    When ``misjudge``, the next most numerous colour(s) instead — unless the centre holds one
    count level only, where there is nothing to mistake the allowed colours for.
    """
    counts: dict[Colour | None, int] = {}
    for card in centre:
        colour = card.colour
        counts[colour] = counts.get(colour, 0) + 1
    counts.pop(None, None)  # the centre holds flies only (R11); be safe all the same
    if not counts:
        return set()
    most = max(counts.values())
    if misjudge:
        fewer = [n for n in counts.values() if n < most]
        if fewer:
            most = max(fewer)
    return {c for c, n in counts.items() if n == most and c is not None}


def decide(level: str, v: View, rng: random.Random) -> list[PlannedSlap]:
    """The hands a bot at ``level`` lays in the slap round open in ``v`` (R14–R21).

    Call it when the round opens. Returns at most the seat's free hands (``v.hands`` minus
    those already laid), on distinct centre cards, in increasing ``ms`` order; an empty list
    when it lays none (no round, an empty centre, a lapse, or nothing worth it). Draws from
    ``rng`` only. Raises :class:`MalformedError` for an unknown level.
    """
    p = params(level)
    r = v.round
    if r is None or not v.centre:
        return []
    free = v.hands - len(r.mine)
    if free <= 0 or r.done or rng.random() < p.lapse:
        return []
    believed = believed_colours(v.centre, rng.random() < p.misjudge)
    taken = set(r.mine)
    targets = [c for c in v.centre if c.colour in believed and c not in taken]
    # Most valuable first; equal values in random order (the jitter is below the gap between
    # two values), so that bots spread over equal flies rather than all pick the same one.
    rand = rng.random
    targets.sort(key=lambda c: rand() * 0.5 - c.value)
    times = [_ex_gauss(rng, p.mu_ms, p.sigma_ms, p.tau_ms)]
    for _ in range(1, min(free, len(targets))):
        if rng.random() >= p.second_hand:
            break
        extra = _ex_gauss(rng, p.second_mu_ms, p.second_sigma_ms, p.second_tau_ms)
        times.append(times[-1] + max(0.0, extra))
    if p.contest:
        cards = _contested_choice(p, targets, times, v.seats - 1, v.hands)
    else:
        cards = _greedy_choice(p, targets, len(times), rng)
    out: list[PlannedSlap] = []
    last = 0
    for card, t in zip(cards, times, strict=False):
        ms = max(p.floor_ms, last + 1, round(t))
        out.append(PlannedSlap(card, ms))
        last = ms
    return out


def _greedy_choice(p: Level, targets: list[Card], n: int, rng: random.Random) -> list[Card]:
    """The best ``n`` targets in order, each swapped for a random one with chance ``sloppy``."""
    left = list(targets)
    chosen: list[Card] = []
    for _ in range(n):
        if not left:
            break
        i = rng.randrange(len(left)) if p.sloppy and rng.random() < p.sloppy else 0
        chosen.append(left.pop(i))
    return chosen


def _contested_choice(
    p: Level, targets: list[Card], times: list[float], others: int, hands: int
) -> list[Card]:
    """The cards, one per time in ``times``, that maximise the expected points won.

    The others are assumed to go for the top flies: the k-th best (k < ``hands``) is raced for
    by every other seat's k-th hand at ``normal`` speed; the rest are not raced for. A hand
    laid on a fly wins it only if it arrives first, so its expected gain is the fly's value
    times the chance that all rivals on it are slower. Hands whose gain is below ``min_gain``
    are not laid.
    """
    # Only the raced flies and the best unraced ones can be worth a hand.
    pool = targets[: hands + len(times)]
    if not pool:
        return []
    gains = []
    for t in times:
        # The chance to beat all rivals: on the best fly they race with their first hand, on
        # the second best with their second (R16: at most two hands).
        race = (_survival(t, _RIVAL_FIRST) ** others, _survival(t, _RIVAL_SECOND) ** others)
        gains.append([c.value * (race[k] if k < hands else 1.0) for k, c in enumerate(pool)])
    best: tuple[float, tuple[int, ...]] = (-1.0, ())
    for combo in permutations(range(len(pool)), min(len(times), len(pool))):
        gain = sum(gains[h][i] for h, i in enumerate(combo))
        if gain > best[0]:
            best = (gain, combo)
    chosen: list[Card] = []
    for h, i in enumerate(best[1]):
        if gains[h][i] < p.min_gain:
            break  # a later hand is never laid before an earlier one
        chosen.append(pool[i])
    return chosen


#: The ex-Gaussian (mu, sigma, tau) the ``hard`` bot assumes for a rival's first hand: normal.
_RIVAL_FIRST = (NORMAL.mu_ms, NORMAL.sigma_ms, NORMAL.tau_ms)
#: ... and for a rival's second hand: first plus extra, a sum approximated by one ex-Gaussian
#: with the same mean (Gaussian parts and tails added separately).
_RIVAL_SECOND = (
    NORMAL.mu_ms + NORMAL.second_mu_ms,
    math.hypot(NORMAL.sigma_ms, NORMAL.second_sigma_ms),
    NORMAL.tau_ms + NORMAL.second_tau_ms,
)


def _survival(x: float, dist: tuple[float, float, float]) -> float:
    """P(X > x) for X ex-Gaussian with ``dist`` = (mu, sigma, tau)."""
    mu, sigma, tau = dist
    z = (x - mu) / sigma
    if z < -8.0:
        return 1.0
    tail = math.exp(sigma * sigma / (2 * tau * tau) - (x - mu) / tau) * _phi(z - sigma / tau)
    return min(1.0, max(0.0, 1.0 - _phi(z) + tail))


def _phi(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2.0))
