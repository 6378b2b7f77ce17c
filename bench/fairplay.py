"""The fair-play detector over simulated populations: who it flags, and how soon.

    uv run python bench/fairplay.py [--humans 1000] [--excellent 200] [--scripts 200]
                                    [--noisy 200] [--games 100] [--seed 1] [--json FILE]

Every game is played by the reference engine and its round driver (``flyswat.sim``) at Play
now's length (56 cards removed, R6), four seats, and written as a game record; the detector
reads each player's hands out of the records (``flyswat.fairplay.from_record``), as the
server does, and is asked after every game (``assess`` over the games so far).

- **Humans**: the bots' reaction models (``flyswat.bots``) with their full spread: each
  person's level drawn anywhere from ``easy`` to ``hard`` (every parameter in between, and
  people's Hick–Hyman slope, ``bots.PEOPLE_CHOICE_MS``: 80 to 40 ms per bit of a round's
  choice), their speed and tail varied ±10–25 % more and their slope ±25 %; their pace
  drifts within a game and slows after a wrong fly (:class:`Pace`); one game in ten
  is a **bad day** (slower by 120 ms, a longer tail, three times the lapses, twice the
  misjudgements). Tables of four humans drawn at random; each human plays 100 games.
- **Excellent humans**: the best players, beyond the population above: ``hard``'s play, 0–15 %
  quicker, spread and tail ±25 %, half to all of its misjudgements and lapses and of its
  slope (the most practised, 20–40 ms per bit), a drift and bad days as anyone's; each plays
  100 games against three ``hard`` bots (as the noisy scripts do). No target is set for
  them: how many are flagged is reported beside the humans'.
- **Noisy scripts with days**: noisy scripts that also have a person's bad days (one game in
  ten, as the humans'); as many as the noisy scripts, 20 games each against three ``hard``
  bots. No target either: what the detector makes of a script that read how it works.
- **Noisy scripts with a choice**: noisy scripts that also slow on a harder choice as people
  do (20–60 ms per bit, ``bots.choice_bits``), without days; as many, 20 games each against
  three ``hard`` bots. No target: what is left once a script fakes this too.
- **Noisy scripts with a drift**: noisy scripts whose pace drifts from round to round as the
  people's does (:class:`Pace`), without days or a choice slope; as many, 20 games each
  against three ``hard`` bots. No target.
- **Scripts**: they read the table and slap the right fly at a fixed time, 130–250 ms, with a
  Gaussian spread of 5–30 ms; never wrong, never away. Each plays 5 games against three
  humans.
- **Noisy scripts**: the same with ex-Gaussian noise added to look human (a spread of 40–90
  ms, a tail of 60–160 ms, the whole from 250 to 450 ms before the tail) and a rare wrong fly
  or missed round; each plays 20 games against three ``hard`` bots, and those whose share of
  wins is above the hard bots' in the same games are the ones the target is about.

Targets (issue 21): every script flagged within 5 games; noisy scripts that win more than
``hard`` bots within 20; at most 0.1 % of humans flagged over 100 games. The ROC: the
detector's threshold scaled by ``c`` (flagged when score ≥ c), each population's rate.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from flyswat import bots, fairplay
from flyswat.engine import Game
from flyswat.record import to_record
from flyswat.rules import Rules
from flyswat.sim import driver
from flyswat.sim.driver import Planned

RULES = Rules(seats=4, remove=56)
LEVEL_FIELDS = [f.name for f in dataclasses.fields(bots.Level)]


def between(a: bots.Level, b: bots.Level, t: float) -> dict[str, float]:
    """Every parameter of a level a fraction ``t`` of the way from ``a`` to ``b``."""
    return {f: getattr(a, f) + (getattr(b, f) - getattr(a, f)) * t for f in LEVEL_FIELDS}


def level(**fields: float) -> bots.Level:
    fields["floor_ms"] = int(fields["floor_ms"])
    return bots.Level(**fields)  # type: ignore[arg-type]


@dataclasses.dataclass
class Pace:
    """A person's pace drifting within a game: ``d`` ms added to each of their hands in a
    round, an AR(1) process from round to round (``d' = phi·d + e``, stationary sd ``sd``,
    drawn afresh at a game's start: the day is the bad day's business), raised by ``pes`` ms
    after a round in which they laid a hand on a wrong fly (post-error slowing).

    People's reaction times are serially correlated: slow and quick stretches in long series
    of speeded responses (Gilden, Thornton and Mallon 1995, Science 267; Gilden 2001, Psych.
    Review 108; Wagenmakers, Farrell and Ratcliff 2004, Psychon. Bull. Rev. 11: short-range,
    autoregressive dependence accounts for it as well as long-range 1/f noise), and slower
    after an error (Rabbitt 1966, J. Exp. Psych. 71; Laming 1968; Danielmeier and Ullsperger
    2011, Front. Psych. 2: tens of ms). How strong the dependence is varies with the task —
    McIlhagga (2008, J. Vision 8(9):5) finds target-present visual search, the laboratory
    task nearest to spotting a fly, nearly uncorrelated — so the drift given here is modest:
    its sd a third to three fifths of the person's own (√(σ² + τ²)), ``phi`` 0.6–0.9 per round,
    a lag-1 autocorrelation of their first hands of about 0.06 to 0.25 before each game's mean
    is taken out. A model, not a measurement of this game's players: real records can say."""

    sd: float
    phi: float
    pes: float
    d: float = 0.0

    @classmethod
    def draw(cls, rng: random.Random, p: dict[str, float]) -> Pace:
        k = rng.uniform(0.35, 0.6)
        return cls(k * math.hypot(p["sigma_ms"], p["tau_ms"]), rng.uniform(0.6, 0.9),
                   rng.uniform(20, 60))  # fmt: skip

    def start(self, rng: random.Random) -> None:
        self.d = rng.gauss(0.0, self.sd)

    def step(self, rng: random.Random, wrong: bool) -> None:
        shock = rng.gauss(0.0, self.sd * math.sqrt(1 - self.phi**2))
        self.d = self.phi * self.d + shock + (self.pes if wrong else 0.0)


@dataclasses.dataclass
class Person:
    """A simulated human: their usual play, their bad day, and their pace's drift."""

    good: bots.Level
    bad: bots.Level
    pace: Pace | None = None

    @classmethod
    def draw(cls, rng: random.Random) -> Person:
        t = rng.random()
        p = between(bots.EASY, bots.HARD, t)
        p["mu_ms"] *= rng.uniform(0.9, 1.1)
        p["tau_ms"] *= rng.uniform(0.8, 1.25)
        p["sigma_ms"] *= rng.uniform(0.8, 1.25)
        easy, hard = bots.PEOPLE_CHOICE_MS["easy"], bots.PEOPLE_CHOICE_MS["hard"]
        p["choice_ms"] = (easy + (hard - easy) * t) * rng.uniform(0.75, 1.25)
        return cls.of(p, Pace.draw(rng, p))

    @classmethod
    def excellent(cls, rng: random.Random) -> Person:
        """One of the best players: ``hard``'s play, 0–15 % quicker, spread and tail ±25 %,
        half to all of its misjudgements, lapses and choice slope; a bad day as anyone's."""
        p = between(bots.EASY, bots.HARD, 1.0)
        p["mu_ms"] *= rng.uniform(0.85, 1.0)
        p["tau_ms"] *= rng.uniform(0.8, 1.25)
        p["sigma_ms"] *= rng.uniform(0.8, 1.25)
        p["misjudge"] *= rng.uniform(0.5, 1.0)
        p["lapse"] *= rng.uniform(0.5, 1.0)
        p["choice_ms"] = bots.PEOPLE_CHOICE_MS["hard"] * rng.uniform(0.5, 1.0)
        return cls.of(p, Pace.draw(rng, p))

    @classmethod
    def of(cls, p: dict[str, float], pace: Pace | None = None) -> Person:
        bad = dict(p, mu_ms=p["mu_ms"] + 120, tau_ms=p["tau_ms"] * 1.5,
                   lapse=min(0.5, p["lapse"] * 3),
                   misjudge=min(0.5, p["misjudge"] * 2))  # fmt: skip
        return cls(level(**p), level(**bad), pace)

    def today(self, rng: random.Random) -> Seat:
        return Seat(self.bad if rng.random() < 0.1 else self.good, self.pace)


@dataclasses.dataclass(frozen=True)
class Seat:
    """Who plays a seat in one game: a level, and a pace that drifts (or None)."""

    level: bots.Level
    pace: Pace | None = None


def script(rng: random.Random) -> bots.Level:
    """A script: a fixed time 130–250 ms, a spread of 5–30 ms in all (a Gaussian and a 5 ms
    exponential: the reaction model has one), never wrong."""
    p = between(bots.EASY, bots.HARD, 1.0)
    p.update(mu_ms=rng.uniform(130, 250), sigma_ms=rng.uniform(5, 29.5), tau_ms=5.0,
             second_mu_ms=rng.uniform(40, 120), second_sigma_ms=5, second_tau_ms=5.0,
             floor_ms=100, misjudge=0.0, lapse=0.0, second_hand=1.0, temperature=0.0,
             min_gain=0.0)  # fmt: skip
    return level(**p)


def noisy_params(rng: random.Random) -> dict[str, float]:
    p = between(bots.EASY, bots.HARD, 1.0)
    p.update(mu_ms=rng.uniform(250, 450), sigma_ms=rng.uniform(40, 90),
             tau_ms=rng.uniform(60, 160), second_mu_ms=rng.uniform(100, 160),
             second_sigma_ms=rng.uniform(20, 40), second_tau_ms=rng.uniform(30, 70),
             floor_ms=150, misjudge=rng.uniform(0, 0.01), lapse=rng.uniform(0, 0.005),
             second_hand=1.0)  # fmt: skip
    return p


def noisy(rng: random.Random) -> bots.Level:
    """A script with ex-Gaussian noise added to look human, and rare mistakes."""
    return level(**noisy_params(rng))


def noisy_choice(rng: random.Random) -> bots.Level:
    """A noisy script that also slows on a harder choice, as people do (20–60 ms per bit)."""
    p = noisy_params(rng)
    p["choice_ms"] = rng.uniform(20, 60)
    return level(**p)


def noisy_days(rng: random.Random) -> Person:
    """A noisy script that also has a person's days: one game in ten slower, with a longer
    tail and more mistakes (what one who read PLAYERS.md would add)."""
    return Person.of(noisy_params(rng))


def noisy_drift(rng: random.Random) -> Person:
    """A noisy script that also drifts as people do (:class:`Pace`, the same ranges), without
    days or a choice slope: one who read that one round's time should tell of the next."""
    p = noisy_params(rng)
    lv = level(**p)
    return Person(lv, lv, Pace.draw(rng, p))


SEATS = [{"name": f"P{i}", "kind": "human"} for i in range(4)]


def play(seats: Sequence[bots.Level | Seat], seed: str) -> dict[str, Any]:
    """One game between ``seats`` (seat order); its record. A seat's drifting pace moves all
    its hands in a round by its drift (never under its level's floor), drawn from a generator
    of its own, so the bots' draws are what they would be without it."""
    seats = [s if isinstance(s, Seat) else Seat(s) for s in seats]
    rngs = {k: random.Random(f"{seed}:{k}") for k in range(4)}
    paces = {k: (s.pace, random.Random(f"{seed}:pace:{k}")) for k, s in enumerate(seats)
             if s.pace is not None}  # fmt: skip
    for pace, r in paces.values():
        pace.start(r)
    game = Game.new(RULES, seed, random.Random(seed).randrange(4))
    at = {k: s.level for k, s in enumerate(seats)}
    while driver.advance(game) is not None:
        planned: list[Planned] = driver.bot_hands(game, at, rngs)
        if paces:
            planned = [(max(at[k].floor_ms, ms + round(paces[k][0].d)) if k in paces else ms,
                        k, card) for ms, k, card in planned]  # fmt: skip
        closed, _ = driver.play_round(game, planned)
        wrong = driver.wrong_hands(closed, 4)
        for k, (pace, r) in paces.items():
            pace.step(r, wrong[k] > 0)
    return to_record(game, SEATS, id=seed, started_at="2026-12-02T00:00:00Z")


class Watched:
    """One player's games so far and the highest score the detector gave them, per game."""

    def __init__(self) -> None:
        self.games: list[fairplay.GameHands] = []
        self.scores: list[float] = []  # the score after each game
        self.evidence: list[dict[str, float]] = []  # and its evidence
        self.wins = 0.0
        self.reason = ""
        self.item = ""  # the evidence that flagged them first

    def add(self, record: dict[str, Any], seat: int, bits: dict[int, float]) -> None:
        self.games.append(fairplay.from_record(record, seat, bits=bits))
        verdict = fairplay.assess(self.games)
        self.scores.append(verdict.score)
        self.evidence.append(verdict.evidence)
        if verdict.flagged and not self.reason:
            self.reason = verdict.reason
            self.item = max(verdict.evidence, key=lambda k: verdict.evidence[k])
        places = record["result"]["places"]
        if places[seat] == 1:
            self.wins += 1 / places.count(1)

    def peak(self, games: int) -> float:
        return max(self.scores[:games], default=0.0)

    def split(self, games: int) -> tuple[float, float]:
        """The peak, over the first ``games``, of the evidence other than ``uncanny`` and of
        ``uncanny``'s standard score: the player is flagged at a joint threshold ``J``
        (instead of ``fairplay.JOINT_Z``) when the first is 1 or more or the second ``J``."""
        seen = self.evidence[:games]
        other = max((v for e in seen for k, v in e.items() if k != "uncanny"), default=0.0)
        joint = max((e.get("uncanny", 0.0) for e in seen), default=0.0) * fairplay.JOINT_Z
        return round(other, 3), round(joint, 3)

    def flagged_at(self, c: float = 1.0) -> int | None:
        return next((i + 1 for i, s in enumerate(self.scores) if s >= c), None)


def humans(n: int, games: int, rng: random.Random) -> list[Watched]:
    people = [Person.draw(rng) for _ in range(n)]
    watched = [Watched() for _ in people]
    left = {i: games for i in range(n)}
    k = 0
    while len(left) >= 4:
        seats = rng.sample(sorted(left), 4)
        record = play([people[i].today(rng) for i in seats], f"h{k}")
        bits = fairplay.round_bits(record)
        k += 1
        for seat, i in enumerate(seats):
            watched[i].add(record, seat, bits)
            left[i] -= 1
            if left[i] == 0:
                del left[i]
    return watched


def against(make: Callable[[random.Random], bots.Level | Person], n: int, games: int,
            rivals: str, rng: random.Random,
            tag: str = "") -> tuple[list[Watched], list[float]]:  # fmt: skip
    """``n`` players made by ``make`` (a script's level, or a person and their days), each
    ``games`` games at seat k (rotated) against humans (``rivals`` "humans") or three hard
    bots; their records, and the hard bots' wins per seat in the same games."""
    watched, hard_wins = [], []
    for j in range(n):
        who, w, hard = make(rng), Watched(), 0.0
        for g in range(games):
            seat = g % 4
            me: bots.Level | Seat = who if isinstance(who, bots.Level) else who.today(rng)
            others: list[bots.Level | Seat] = (
                [Person.draw(rng).today(rng) for _ in range(3)] if rivals == "humans"
                else [bots.HARD] * 3)  # fmt: skip
            levels = [*others[:seat], me, *others[seat:]]
            record = play(levels, f"{tag or rivals}{j}-{g}")
            w.add(record, seat, fairplay.round_bits(record))
            places = record["result"]["places"]
            hard += sum(1 / places.count(1) for s in range(4) if s != seat and places[s] == 1) / 3
        watched.append(w)
        hard_wins.append(hard)
    return watched, hard_wins


def rate(xs: Sequence[Watched], games: int, c: float) -> float:
    return sum(1 for w in xs if w.peak(games) >= c) / max(1, len(xs))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--humans", type=int, default=1000)
    ap.add_argument("--excellent", type=int, default=200)
    ap.add_argument("--scripts", type=int, default=200)
    ap.add_argument("--noisy", type=int, default=200)
    ap.add_argument("--games", type=int, default=100, help="games per human")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    t0 = time.perf_counter()
    scripts, _ = against(script, args.scripts, 5, "humans", rng)
    loud, hard_wins = against(noisy, args.noisy, 20, "hard", rng)
    beat = [w for w, h in zip(loud, hard_wins, strict=True) if w.wins > h]
    people = humans(args.humans, args.games, rng)
    best, best_hard = against(Person.excellent, args.excellent, args.games, "hard", rng, "best")
    days, days_hard = against(noisy_days, args.noisy, 20, "hard", rng, "days")
    days_beat = [w for w, h in zip(days, days_hard, strict=True) if w.wins > h]
    fake, fake_hard = against(noisy_choice, args.noisy, 20, "hard", rng, "choice")
    fake_beat = [w for w, h in zip(fake, fake_hard, strict=True) if w.wins > h]
    drift, drift_hard = against(noisy_drift, args.noisy, 20, "hard", rng, "drift")
    drift_beat = [w for w, h in zip(drift, drift_hard, strict=True) if w.wins > h]
    elapsed = time.perf_counter() - t0
    print(f"{len(people)} humans and {len(best)} excellent humans x {args.games} games, "
          f"{len(scripts)} scripts x 5, {len(loud)} noisy scripts x 20 ({len(beat)} win more "
          f"than hard): {elapsed:.0f} s")  # fmt: skip
    when = [w.flagged_at() for w in scripts]
    print(f"scripts flagged within 5 games: {sum(1 for x in when if x)}/{len(scripts)}; "
          f"by game: {[sum(1 for x in when if x == g) for g in range(1, 6)]}")  # fmt: skip
    when = [w.flagged_at() for w in beat]
    print(f"noisy scripts that beat hard, flagged within 20: {sum(1 for x in when if x)}/"
          f"{len(beat)}; all noisy: "
          f"{sum(1 for w in loud if w.flagged_at())}/{len(loud)}")  # fmt: skip
    when = [w.flagged_at() for w in days_beat]
    print(f"noisy scripts with a person's days that beat hard, flagged within 20: "
          f"{sum(1 for x in when if x)}/{len(days_beat)}")  # fmt: skip
    when = [w.flagged_at() for w in fake_beat]
    print(f"noisy scripts with a choice slope that beat hard, flagged within 20: "
          f"{sum(1 for x in when if x)}/{len(fake_beat)}")  # fmt: skip
    when = [w.flagged_at() for w in drift_beat]
    print(f"noisy scripts with a drifting pace that beat hard, flagged within 20: "
          f"{sum(1 for x in when if x)}/{len(drift_beat)}")  # fmt: skip
    for name, group in (("humans", people), ("excellent humans", best)):
        flagged = [w for w in group if w.flagged_at()]
        print(f"{name} flagged within {args.games} games: {len(flagged)}/{len(group)} "
              f"({100 * len(flagged) / max(1, len(group)):.2f} %)")  # fmt: skip
        for w in flagged[:5]:
            print(f"  at game {w.flagged_at()}: {w.reason}")
    ahead = sum(1 for w, h in zip(best, best_hard, strict=True) if w.wins > h)
    print(f"excellent humans who win more than the hard bots beside them: {ahead}/{len(best)}")
    missed = [(w, h) for w, h in zip(loud, hard_wins, strict=True) if w.wins > h]
    for w, h in [(w, h) for w, h in missed if not w.flagged_at()][:8]:  # a sample of them
        times = sorted(x.ms for g in w.games for x in g.hands if x.first)
        slope, se, _ = fairplay.choice_slope(w.games)
        rho, rho_se, _ = fairplay.serial_correlation(w.games)
        print(f"  noisy not flagged: peak {w.peak(20):.2f}, median first hand "
              f"{times[len(times) // 2]:.0f} ms, {slope:.0f} ± {se:.0f} ms per bit, lag-1 "
              f"{rho:.2f} ± {rho_se:.2f}, wins {w.wins:.1f} of 20 "
              f"(a hard bot's {h:.1f})")  # fmt: skip
    for name, group in (("humans", people), ("excellent humans", best), ("noisy scripts", beat),
                        ("noisy with a choice", fake_beat),
                        ("noisy with a drift", drift_beat)):  # fmt: skip
        slopes = [fairplay.choice_slope(w.games)[0] for w in group]
        rhos = [fairplay.serial_correlation(w.games)[0] for w in group]
        if slopes:
            print(f"{name}: choice slope over all their games {statistics.fmean(slopes):.1f} "
                  f"± {statistics.pstdev(slopes):.1f} ms per bit (mean ± sd), lowest "
                  f"{min(slopes):.1f}; lag-1 autocorrelation {statistics.fmean(rhos):.3f} ± "
                  f"{statistics.pstdev(rhos):.3f}, lowest {min(rhos):.3f}")  # fmt: skip
    roc = []
    print("ROC (flagged when score >= c): c, humans over 100 games, excellent humans over "
          "100, scripts within 5, noisy that beat hard within 20, the same with days, "
          "the same with a choice slope, the same with a drift")  # fmt: skip
    for c in (0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0):
        row = {"c": c, "humans": rate(people, args.games, c),
               "excellent": rate(best, args.games, c), "scripts": rate(scripts, 5, c),
               "noisy": rate(beat, 20, c), "noisy_days": rate(days_beat, 20, c),
               "noisy_choice": rate(fake_beat, 20, c),
               "noisy_drift": rate(drift_beat, 20, c)}  # fmt: skip
        roc.append(row)
        print(f"  {c:4.2f}  {100 * row['humans']:6.2f} %  {100 * row['excellent']:6.2f} %  "
              f"{100 * row['scripts']:6.1f} %  {100 * row['noisy']:6.1f} %  "
              f"{100 * row['noisy_days']:6.1f} %  {100 * row['noisy_choice']:6.1f} %  "
              f"{100 * row['noisy_drift']:6.1f} %")  # fmt: skip
    items = {name: dict(Counter(w.item for w in group if w.item))
             for name, group in (("humans", people), ("excellent", best), ("scripts", scripts),
                                 ("noisy", beat), ("noisy_days", days_beat),
                                 ("noisy_choice", fake_beat),
                                 ("noisy_drift", drift_beat))}  # fmt: skip
    print(f"the evidence that flagged them first: {items}")
    if args.json:
        split = {
            "humans": [w.split(args.games) for w in people],
            "excellent": [w.split(args.games) for w in best],
            "scripts": [w.split(5) for w in scripts],
            "noisy": [w.split(20) for w in beat],
            "noisy_days": [w.split(20) for w in days_beat],
            "noisy_choice": [w.split(20) for w in fake_beat],
            "noisy_drift": [w.split(20) for w in drift_beat],
        }
        args.json.write_text(json.dumps({"args": vars(args) | {"json": str(args.json)},
                                         "roc": roc, "items": items, "seconds": elapsed,
                                         "joint_z": fairplay.JOINT_Z, "split": split}))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
