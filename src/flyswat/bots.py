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

People's choice takes longer in a harder round, and a level may say by how much
(``choice_ms``, :func:`choice_bits`): the Hick–Hyman law (Hick 1952, Hyman 1953) has a choice
reaction time grow linearly with the information of the choice, ``RT = a + b·H`` bits, and
telling two quantities apart takes longer the closer they are, as Welford's function
``k·log(L / (L − S))`` of the larger and the smaller (Welford 1960; Moyer and Landauer 1967's
distance effect). The slope ``b`` falls with practice but does not vanish for a judgement
such as "which colour is most numerous" (a comparison of numerosities keeps its distance
effect in practised adults). The shipped levels do not use it yet (``choice_ms`` 0): their
speeds and ``docs/BALANCE.md``'s figures were measured without it; ``bench/fairplay.py``'s
people have it (:data:`PEOPLE_CHOICE_MS`).

How a bot aims, as people do: it believes some colours allowed (and sometimes misjudges,
R14), then weighs each believed-allowed fly by its value and by the chance of being the bottom
hand on it (R17). It reckons its rivals as quick as itself and expects them to think as it
does, so it pictures the crowd of rival hands each fly will draw where that thinking settles
(:func:`crowd`); a hand's chance on a fly where it expects ``λ1`` rival first hands and
``λ2`` second hands is then ``exp(-λ1 · P1 - λ2 · P2)``, ``P1`` and ``P2`` the chances that
such a rival hand is quicker than it (:func:`beaten`). A level's ``caution`` says how much
of that chance it takes into account (0: value alone), and its ``temperature`` how sharply
it picks the best fly (a softmax over the gains: people hesitate between two flies that look
alike, and spread out over them). Then it sometimes lays a second hand, and lays none at all
when no fly seems worth one (``min_gain``) or when it looks away (``lapse``).

The three levels, :data:`LEVELS`, differ in speed, in how often they misjudge the allowed
colour or miss a round, and in aim: ``easy`` goes mostly for value and picks loosely,
``hard`` weighs the race fully and picks most sharply.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Iterable
from dataclasses import dataclass

from flyswat.cards import Card, Colour
from flyswat.errors import MalformedError
from flyswat.rules import most_numerous
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
    - ``caution``: how much of the chance of being beaten to a fly the bot weighs, 0 to 1:
      a fly's gain is its value times that chance to the power ``caution``.
    - ``temperature``: the spread of the choice between flies, in points: each hand goes to a
      fly with probability proportional to ``exp(gain / temperature)``; 0 takes the best
      (the first in centre order among equals).
    - ``min_gain``: a hand whose best gain is below this (points) is not laid: nothing worth it.
    - ``reveal_mu_ms``, ``reveal_sigma_ms``, ``reveal_tau_ms``: the pause before revealing.
    - ``choice_ms``: how much longer the first hand takes per bit of the round's choice
      (:func:`choice_bits`) above a typical round's (:data:`TYPICAL_BITS`), and how much
      shorter per bit below it: the slope of the Hick–Hyman law. 0 (the shipped levels): the
      same in every round.
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
    caution: float
    temperature: float
    min_gain: float
    reveal_mu_ms: float
    reveal_sigma_ms: float
    reveal_tau_ms: float
    choice_ms: float = 0.0


EASY = Level(
    mu_ms=740, sigma_ms=100, tau_ms=220,
    second_mu_ms=300, second_sigma_ms=80, second_tau_ms=150,
    floor_ms=250, misjudge=0.15, lapse=0.10, second_hand=0.6,
    caution=0.4, temperature=1.2, min_gain=0.0,
    reveal_mu_ms=1400, reveal_sigma_ms=300, reveal_tau_ms=600,
)  # fmt: skip
"""A beginner: slow, often wrong about the colour, often gets one hand down only."""

NORMAL = Level(
    mu_ms=600, sigma_ms=80, tau_ms=180,
    second_mu_ms=220, second_sigma_ms=60, second_tau_ms=100,
    floor_ms=220, misjudge=0.07, lapse=0.04, second_hand=0.9,
    caution=0.9, temperature=0.6, min_gain=0.0,
    reveal_mu_ms=1000, reveal_sigma_ms=200, reveal_tau_ms=400,
)  # fmt: skip
"""A regular player: quick enough, weighs the race, hesitates between flies alike."""

HARD = Level(
    mu_ms=480, sigma_ms=60, tau_ms=120,
    second_mu_ms=160, second_sigma_ms=40, second_tau_ms=70,
    floor_ms=200, misjudge=0.02, lapse=0.01, second_hand=1.0,
    caution=1.0, temperature=0.5, min_gain=0.25,
    reveal_mu_ms=700, reveal_sigma_ms=120, reveal_tau_ms=250,
)  # fmt: skip
"""A sharp player: fast, rarely wrong, and goes where its chance is best."""

_PARAMS: dict[str, Level] = {"easy": EASY, "normal": NORMAL, "hard": HARD}

#: People's ``choice_ms`` by level (ms per bit), for the models of people that use it
#: (``bench/fairplay.py``): Hick's and Hyman's unpractised subjects took 130–200 ms per bit;
#: practice lowers the slope a great deal, so a beginner is given 80, a regular player 60 and
#: a sharp one 40 — modest against the laboratory's figures: at 40 ms a bit, a round of one
#: colour is 120 ms quicker than a typical one and the hardest (5.6 bits) 100 ms slower.
PEOPLE_CHOICE_MS: dict[str, float] = {"easy": 80.0, "normal": 60.0, "hard": 40.0}

#: A typical round's :func:`choice_bits`, about their mean (2.96 bits, sd 1.04, over the
#: rounds of games of four at Play now's length): ``choice_ms`` moves a round's first hand by
#: its bits less this, so a level's mean time stays about where it is without it.
TYPICAL_BITS = 3.0


LevelLike = str | Level


def params(level: LevelLike) -> Level:
    """The parameters of ``level`` (a name of :data:`LEVELS`, or a :class:`Level`, returned as
    it is); raises :class:`MalformedError` for an unknown level."""
    if isinstance(level, Level):
        return level
    try:
        return _PARAMS[level]
    except (KeyError, TypeError):
        raise MalformedError(
            f"unknown bot level {level!r}: expected one of {', '.join(LEVELS)}", "bad_level"
        ) from None


def ex_gauss(rng: random.Random, mu: float, sigma: float, tau: float) -> float:
    """One ex-Gaussian draw: Gaussian (``mu``, ``sigma``) plus an exponential of mean ``tau``.
    The one reaction-time sampler of the Python side (the numba kernel has its copy)."""
    return rng.gauss(mu, sigma) + rng.expovariate(1.0 / tau)


def choice_bits(counts: Iterable[int]) -> float:
    """The information of a round's choice, in bits, for a centre with ``counts`` flies per
    colour: ``log2`` of the colours present, among which the allowed one is chosen (Hick's
    law), plus Welford's ``log2(L / (L − S))`` for telling the most numerous colour (``L``
    flies) from the next (``S``; a tie counted as ``L − S`` = 1/2, harder than any margin).
    0 for a centre of one colour (nothing to choose), 3 for four colours of one fly each."""
    cs = sorted((n for n in counts if n > 0), reverse=True)
    if not cs:
        return 0.0
    top, second = cs[0], (cs[1] if len(cs) > 1 else 0)
    return math.log2(len(cs)) + math.log2(top / max(top - second, 0.5))


def centre_bits(centre: Iterable[Card]) -> float:
    """:func:`choice_bits` of the flies in ``centre``."""
    counts: dict[Colour, int] = {}
    for card in centre:
        if card.colour is not None:
            counts[card.colour] = counts.get(card.colour, 0) + 1
    return choice_bits(counts.values())


def reaction_times(
    p: Level, hands: int, rng: random.Random, bits: float = TYPICAL_BITS
) -> list[int]:
    """Times in ms of ``hands`` hands laid one after the other, from the instant the trigger
    was shown: an ex-Gaussian first hand (moved by ``p.choice_ms`` per bit of the round's
    choice, ``bits``, above or below :data:`TYPICAL_BITS`), each later hand an ex-Gaussian
    delay after the one before; none before ``p.floor_ms``, each at least 1 ms after the one
    before."""
    out: list[int] = []
    t = 0.0
    for k in range(hands):
        if k == 0:
            t = ex_gauss(rng, p.mu_ms, p.sigma_ms, p.tau_ms)
            if p.choice_ms:
                t += p.choice_ms * (bits - TYPICAL_BITS)
        else:
            t += max(0.0, ex_gauss(rng, p.second_mu_ms, p.second_sigma_ms, p.second_tau_ms))
        out.append(max(p.floor_ms, (out[-1] + 1) if out else 0, round(t)))
    return out


def reveal_delay_ms(level: LevelLike, rng: random.Random) -> int:
    """A human-like pause, in ms, before a bot at ``level`` reveals on its turn (at least 300).

    Raises :class:`MalformedError` for an unknown level.
    """
    p = params(level)
    return max(300, round(ex_gauss(rng, p.reveal_mu_ms, p.reveal_sigma_ms, p.reveal_tau_ms)))


def believed_colours(centre: tuple[Card, ...] | list[Card], misjudge: bool) -> set[Colour]:
    """The colours a player takes for allowed: the most numerous ones in ``centre`` (R14,
    :func:`flyswat.rules.most_numerous`).

    When ``misjudge``, the next most numerous colour(s) instead — unless the centre holds one
    count level only, where there is nothing to mistake the allowed colours for.
    """
    counts: dict[Colour, int] = {}
    for card in centre:
        if card.colour is not None:  # the centre holds flies only (R11)
            counts[card.colour] = counts.get(card.colour, 0) + 1
    right = most_numerous(counts)
    if not misjudge or not right:
        return set(right)
    most = counts[next(iter(right))]
    return set(most_numerous({c: n for c, n in counts.items() if n < most}) or right)


def decide(level: LevelLike, v: View, rng: random.Random) -> list[PlannedSlap]:
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
    if not targets:
        return []
    n = 1
    while n < min(free, len(targets)) and rng.random() < p.second_hand:
        n += 1
    times = reaction_times(p, n, rng, centre_bits(v.centre) if p.choice_ms else TYPICAL_BITS)
    cards = choose(p, targets, times, v.seats - 1, v.hands, rng)
    return [PlannedSlap(card, ms) for card, ms in zip(cards, times, strict=False)]


def crowd(
    p: Level, targets: list[Card], others: int, hands: int
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The rival first and second hands a bot at ``p`` expects on a fly of each value (lists
    indexed by value, 1–5): what ``others`` rivals who think as it does would lay there.

    It starts from rivals who spread their hands in proportion to the flies' values squared,
    then lets them weigh the race as it does itself and choose by the same softmax, a few
    times over (:data:`CROWD_ROUNDS`, each move halfway): the crowd settles where no fly is
    worth much more than its share. A rival's first hand is beaten by another first hand half
    of the time and seldom by a second hand; a second hand the other way round
    (:func:`beaten`, at the level's mean times). A rival lays its second hand with the
    level's ``second_hand`` chance, never on the fly under its first.
    """
    count = [0] * 6
    for c in targets:
        count[c.value] += 1
    return _crowd(p, tuple(count), others, hands >= 2 and len(targets) >= 2)


@functools.lru_cache(maxsize=4096)
def _crowd(
    p: Level, count: tuple[int, ...], others: int, two_hands: bool
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """:func:`crowd` for ``count[v]`` targets of value ``v``: a pure function of its
    arguments, so worked out once for each (level, values, table)."""
    present = [v for v in range(1, 6) if count[v]]
    second = p.second_hand if two_hands else 0.0
    first_time = p.mu_ms + p.tau_ms
    second_time = first_time + p.second_mu_ms + p.second_tau_ms
    b12 = beaten(p, first_time, 1)  # a rival's second hand beats a typical first hand
    b21 = beaten(p, second_time, 0)  # a rival's first hand beats a typical second hand
    squares = sum(count[v] * v * v for v in present)
    one = [0.0] * 6
    two = [0.0] * 6
    for v in present:
        one[v] = others * v * v / squares
        two[v] = second * one[v]
    for _ in range(CROWD_ROUNDS):
        w1 = _softmax(
            p, {v: v * math.exp(-p.caution * (one[v] / 2 + two[v] * b12)) for v in present}
        )
        total1 = sum(count[v] * w1[v] for v in present)
        p1 = {v: w1[v] / total1 for v in present}
        w2 = _softmax(
            p, {v: v * math.exp(-p.caution * (one[v] * b21 + two[v] / 2)) for v in present}
        )
        w2 = {v: w2[v] * (1.0 - p1[v]) for v in present}
        total2 = sum(count[v] * w2[v] for v in present)
        for v in present:
            one[v] = 0.5 * (one[v] + others * p1[v])
            share = w2[v] / total2 if total2 > 0 else 0.0
            two[v] = 0.5 * (two[v] + others * second * share)
    return tuple(one), tuple(two)  # immutable: the cache hands out the same object


def _softmax(p: Level, gains: dict[int, float]) -> dict[int, float]:
    """Unnormalised softmax weights of ``gains`` at ``p.temperature`` (0: 1 for the best)."""
    best = max(gains.values())
    if p.temperature > 0:
        return {v: math.exp((g - best) / p.temperature) for v, g in gains.items()}
    return {v: 1.0 if g == best else 0.0 for v, g in gains.items()}


#: How many times :func:`crowd` lets the rivals reconsider.
CROWD_ROUNDS = 4


@functools.lru_cache(maxsize=1 << 14)
def beaten(p: Level, t: float, hand: int) -> float:
    """The chance that a rival as quick as ``p`` lays its first (``hand`` 0) or second
    (``hand`` 1) hand before ``t`` ms. The second hand's time, first plus extra, is taken as
    one ex-Gaussian with the same mean (Gaussian parts and tails added separately)."""
    if hand == 0:
        return 1.0 - survival(t, p.mu_ms, p.sigma_ms, p.tau_ms)
    mu = p.mu_ms + p.second_mu_ms
    return 1.0 - survival(
        t, mu, math.hypot(p.sigma_ms, p.second_sigma_ms), p.tau_ms + p.second_tau_ms
    )


def choose(
    p: Level, targets: list[Card], times: list[int], others: int, hands: int, rng: random.Random
) -> list[Card]:
    """One fly per time in ``times``, each the softmax choice (``p.temperature``) among the
    flies left by gain: value times the chance of being first on it (against the
    :func:`crowd`) to the power ``p.caution``. Stops at the first hand whose best gain is
    below ``p.min_gain``: a later hand is never laid before an earlier one."""
    one, two = crowd(p, targets, others, hands)
    left = list(range(len(targets)))
    chosen: list[Card] = []
    for t in times:
        b1, b2 = beaten(p, t, 0), beaten(p, t, 1)
        worth = [v * math.exp(-p.caution * (one[v] * b1 + two[v] * b2)) for v in range(6)]
        gains = [worth[targets[i].value] for i in left]
        best = max(gains)
        if best < p.min_gain:
            break
        k = gains.index(best)
        if p.temperature > 0 and len(left) > 1:
            weights = [math.exp((g - best) / p.temperature) for g in gains]
            u = rng.random() * sum(weights)
            k = 0
            while k < len(weights) - 1 and u >= weights[k]:
                u -= weights[k]
                k += 1
        chosen.append(targets[left.pop(k)])
    return chosen


def survival(x: float, mu: float, sigma: float, tau: float) -> float:
    """P(X > x) for X ex-Gaussian (``mu``, ``sigma``, ``tau``)."""
    z = (x - mu) / sigma
    if z < -8.0:
        return 1.0
    tail = math.exp(sigma * sigma / (2 * tau * tau) - (x - mu) / tau) * _phi(z - sigma / tau)
    return min(1.0, max(0.0, 1.0 - _phi(z) + tail))


def _phi(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2.0))
