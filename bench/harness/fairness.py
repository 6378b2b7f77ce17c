"""The fairness experiments F1–F4: racers with known reaction times on known networks.

Each table's racers reach the real server through their own :class:`DelayProxy` (a given
round-trip time and jitter); the server runs as its own process. Every slap round is a race
for one fly (all racers judge the same centre the same way). Afterwards we know each racer's
true reaction time, what it claimed, and the stacking order the server decided, so we can say
how often the truly faster hand was underneath — and what "first packet wins" would have said.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flyswat import bots
from harness.client import Race, Racer, open_table, start_table
from harness.proxy import DelayProxy


def ex_gauss(mu: float, sigma: float, tau: float) -> Callable[[random.Random], float]:
    """An ex-Gaussian reaction-time model (ms), floored at 120 ms."""

    def draw(rng: random.Random) -> float:
        return max(120.0, bots.ex_gauss(rng, mu, sigma, tau))

    return draw


#: Equal-skill players: a choice reaction, right-skewed.
EQUAL = ex_gauss(380, 40, 90)


def fixed(ms: float) -> Callable[[random.Random], float]:
    """A reaction time that is always ``ms`` (a scripted cheater, or its honest opponent)."""
    return lambda rng: ms


@dataclass
class Seat:
    """One racer's set-up: its network, its claims and how it answers pings (``pong_delay_ms``:
    0 at once, None never)."""

    rtt_ms: float
    jitter_ms: float = 0.0
    reaction: Callable[[random.Random], float] = EQUAL
    claim: Callable[[float], float] = lambda ms: ms
    label: str = ""
    pong_delay_ms: float | None = 0.0


@dataclass
class RaceResult:
    """One race seen from all its racers (index = seat in the table)."""

    turn: int
    reaction: list[float]
    claimed: list[float]
    rtt: list[float]
    labels: list[str]
    order: list[int]
    winner: int | None
    first_packet: int
    refused: list[str | None]
    decision_after_last_ms: float
    decision_after_best_ms: float


@dataclass
class TableRun:
    """All races of one table, and what its racers saw."""

    races: list[RaceResult] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    record_url: str | None = None


async def play_table(
    http: str, port: int, seats: list[Seat], *, seed: int, warmup_s: float = 2.5, **options: Any
) -> TableRun:
    """One full game between racers set up as ``seats``; the races it held.

    Each racer's proxy is its network, and tells the server so as a trusted front would
    (``X-Flyswat-Rtt-Us``: the server must be started with ``--rtt-header-from 127.0.0.1``).
    """
    names = [f"R{i}" for i in range(len(seats))]
    code, seated = await open_table(http, names, **options)
    proxies = [
        DelayProxy(
            "127.0.0.1", port, s.rtt_ms / 2, s.jitter_ms / 2, seed=seed * 31 + i, rtt_header=True
        )
        for i, s in enumerate(seats)
    ]
    racers = [
        Racer(names[i], s.reaction, seed=seed * 101 + i, claim=s.claim,
              pong_delay_ms=s.pong_delay_ms)
        for i, s in enumerate(seats)
    ]  # fmt: skip
    for p in proxies:
        await p.__aenter__()
    try:
        plays = [
            asyncio.create_task(r.play(f"ws://127.0.0.1:{p.port}/ws/{code}", st["token"]))
            for r, p, st in zip(racers, proxies, seated, strict=True)
        ]
        await asyncio.sleep(warmup_s)  # a few pings, so the server knows each network
        await start_table(http, code, seated[0]["token"])
        await asyncio.gather(*plays)
    finally:
        for p in proxies:
            await p.__aexit__(None, None, None)
    run = TableRun(record_url=(racers[0].over or {}).get("record_url"))
    for r in racers:
        for code_, n in r.errors.items():
            run.errors[code_] = run.errors.get(code_, 0) + n
    turns = set.intersection(*(set(r.races) for r in racers)) if racers else set()
    for turn in sorted(turns):
        result = _race(turn, [r.races[turn] for r in racers], seats)
        if result is not None:
            run.races.append(result)
    return run


def _race(turn: int, races: list[Race], seats: list[Seat]) -> RaceResult | None:
    decided = [r for r in races if r.decided_at is not None]
    if len(decided) != len(races) or len({r.card for r in races}) != 1:
        return None
    one_way = [s.rtt_ms / 2000 for s in seats]
    arrivals = [r.sent_at + ow for r, ow in zip(races, one_way, strict=True)]
    # The server decided once; each racer heard of it one one-way delay later.
    decision = min((r.decided_at or 0.0) - ow for r, ow in zip(races, one_way, strict=True))
    first = min(range(len(races)), key=arrivals.__getitem__)
    ref = races[0]
    best = ref.order[0] if ref.order else first
    return RaceResult(
        turn=turn,
        reaction=[r.reaction_ms for r in races],
        claimed=[r.claimed_ms for r in races],
        rtt=[s.rtt_ms for s in seats],
        labels=[s.label for s in seats],
        order=list(ref.order),
        winner=ref.winner,
        first_packet=first,
        refused=[r.refused for r in races],
        decision_after_last_ms=(decision - max(arrivals)) * 1000,
        decision_after_best_ms=(decision - arrivals[best]) * 1000,
    )


async def play_tables(
    http: str,
    port: int,
    layouts: list[list[Seat]],
    *,
    concurrency: int,
    seed: int,
    **options: Any,
) -> list[TableRun]:
    """Play one table per layout, ``concurrency`` at a time."""
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int, seats: list[Seat]) -> TableRun:
        async with gate:
            return await play_table(http, port, seats, seed=seed * 1000 + i, **options)

    return list(await asyncio.gather(*(one(i, s) for i, s in enumerate(layouts))))


# -- the measures ----------------------------------------------------------------------------


def win_shares(runs: list[TableRun], by: str = "label") -> dict[str, tuple[float, float, int]]:
    """Per label: (share of races won as decided, share under first-packet-wins, races)."""
    won: dict[str, int] = {}
    fpw: dict[str, int] = {}
    n = 0
    for run in runs:
        for race in run.races:
            if race.winner is None:
                continue
            n += 1
            w, f = race.labels[race.winner], race.labels[race.first_packet]
            won[w] = won.get(w, 0) + 1
            fpw[f] = fpw.get(f, 0) + 1
    labels = sorted({lab for run in runs for race in run.races for lab in race.labels})
    return {lab: (won.get(lab, 0) / max(n, 1), fpw.get(lab, 0) / max(n, 1), n) for lab in labels}


def faster_underneath(runs: list[TableRun], lo: float, hi: float) -> tuple[int, int]:
    """Among pairs of hands on one fly whose true reaction times differ by [lo, hi) ms: how
    often the faster hand was underneath; returns (right, pairs)."""
    right = pairs = 0
    for run in runs:
        for race in run.races:
            pos = {seat: k for k, seat in enumerate(race.order)}
            for a in pos:
                for b in pos:
                    if a < b and lo <= abs(race.reaction[a] - race.reaction[b]) < hi:
                        faster = a if race.reaction[a] < race.reaction[b] else b
                        slower = b if faster == a else a
                        pairs += 1
                        right += pos[faster] < pos[slower]
    return right, pairs
