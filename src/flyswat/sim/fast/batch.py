"""Millions of bot games: :func:`simulate_fast`, its arrays, their summary and records.

The games are played by the compiled kernel (:mod:`flyswat.sim.fast.kernel`) with the bots'
own parameters (:mod:`flyswat.bots`); the rules are those of :mod:`flyswat.engine`, checked
by replay (:func:`records`). Randomness is the kernel's own generator (:mod:`flyswat.sim.fast.rng`)
seeded through ``numpy.random.SeedSequence``, not the reference shuffle: a fast game is a fair
game of the same rules, not the reference simulator's game of the same seed.

Work is cut into chunks of :data:`CHUNK` games, chunk ``k`` seeded by the ``k``-th child of
``numpy.random.SeedSequence(seed)``; so the results depend on the seed and the number of
games, never on the number of ``jobs`` that play them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from flyswat import bots
from flyswat.cards import DECK
from flyswat.engine import Game, Slap
from flyswat.errors import MalformedError
from flyswat.rules import Rules
from flyswat.shuffle import Seed
from flyswat.sim.fast import kernel, policy
from flyswat.sim.pool import run_chunks

#: Games per chunk: the unit of seeding and of work for the processes.
CHUNK = 50_000

LevelLike = bots.LevelLike


@dataclass(frozen=True, slots=True)
class FastResult:
    """The outcome of many fast games, as arrays with one row per game.

    - ``levels``: each seat's level name (or ``"custom"`` for a modified :class:`bots.Level`);
    - ``starts`` ``(n,)``: the start player of each game (R9), drawn uniformly;
    - ``points``, ``flies``, ``places``, ``wrong`` ``(n, seats)``: points (R23), flies won,
      place (R24, ties share), hands on a wrong colour (R19);
    - ``counters`` ``(n, len(kernel.COUNTERS))``: per-game counts, columns named by
      :data:`kernel.COUNTERS`;
    - ``deck``, ``slaps``, ``n_slaps``: the facts of each game (shuffled deck top first; rows
      ``(turn, seat, card index, ms)``), only when asked for with ``trace=True``, else None.
    """

    rules: Rules
    levels: tuple[str, ...]
    starts: np.ndarray
    points: np.ndarray
    flies: np.ndarray
    places: np.ndarray
    wrong: np.ndarray
    counters: np.ndarray
    deck: np.ndarray | None = None
    slaps: np.ndarray | None = None
    n_slaps: np.ndarray | None = None

    @property
    def games(self) -> int:
        """How many games were played."""
        return int(self.points.shape[0])

    def counter(self, name: str) -> np.ndarray:
        """The per-game column ``name`` of :data:`kernel.COUNTERS`."""
        return self.counters[:, kernel.COUNTERS.index(name)]

    def win_shares(self) -> np.ndarray:
        """``(n, seats)``: 1 for a sole winner, 1/k for each of k seats sharing first place."""
        first = self.places == 1
        shares: np.ndarray = first / first.sum(axis=1, keepdims=True)
        return shares

    def positions(self) -> np.ndarray:
        """``(n, seats)``: each seat's position from the start player, 0 for the start player."""
        seats = np.arange(self.rules.seats)
        pos: np.ndarray = (seats[None, :] - self.starts[:, None]) % self.rules.seats
        return pos

    def by_position(self, values: np.ndarray) -> np.ndarray:
        """Mean of a per-seat array ``(n, seats)`` for each position from the start player."""
        pos = self.positions()
        return np.array([values[pos == k].mean() for k in range(self.rules.seats)])


def _seed_int(seed: Seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | str):
        raise MalformedError(f"a seed is a string or an integer, not {seed!r}", "bad_seed")
    if isinstance(seed, int) and seed >= 0:
        return seed
    return int.from_bytes(hashlib.sha256(str(seed).encode()).digest()[:8], "big")


def seat_params(levels: Sequence[LevelLike], seats: int) -> tuple[tuple[str, ...], np.ndarray]:
    """Each seat's level label and parameter row (``levels`` cycled over the seats).

    A level is a name of :data:`bots.LEVELS` or a :class:`bots.Level`. Raises
    :class:`MalformedError` for an unknown name or an empty list.
    """
    if not levels:
        raise MalformedError("give at least one bot level", "bad_level")
    named = {bots.params(name): name for name in bots.LEVELS}
    labels: list[str] = []
    rows: list[list[float]] = []
    for k in range(seats):
        level = levels[k % len(levels)]
        p = bots.params(level) if isinstance(level, str) else level
        labels.append(level if isinstance(level, str) else named.get(p, "custom"))
        rows.append([float(getattr(p, f)) for f in policy.PARAM_FIELDS])
    return tuple(labels), np.array(rows, dtype=np.float64)


def _play_chunk(
    args: tuple[Rules, np.ndarray, int, np.random.SeedSequence, bool],
) -> dict[str, np.ndarray]:
    rules, params, n, seq, trace = args
    seats = rules.seats
    start_seed, kernel_seed = seq.generate_state(2)
    starts = np.random.default_rng(int(start_seed)).integers(seats, size=n)
    points = np.zeros((n, seats), dtype=np.int16)
    flies = np.zeros((n, seats), dtype=np.int16)
    wrong = np.zeros((n, seats), dtype=np.int16)
    counters = np.zeros((n, kernel.N_COUNTERS), dtype=np.int32)
    t = n if trace else 1
    deck = np.zeros((t, kernel.CARDS), dtype=np.int8)
    # int16 holds every field: seat < 8, card < 112, turn and ms far below 32767 (the slap
    # window is at most 30000 ms).
    slaps = np.zeros((t, kernel.MAX_TRACE if trace else 1, 4), dtype=np.int16)
    n_slaps = np.zeros(t, dtype=np.int64)
    kernel.play_batch(
        n, seats, rules.hands, rules.remove, rules.slap_window_ms, starts, params,
        int(kernel_seed), points, flies, wrong, counters, deck, slaps, n_slaps, trace,
    )  # fmt: skip
    out: dict[str, np.ndarray] = {"starts": starts, "points": points, "flies": flies}
    out |= {"wrong": wrong, "counters": counters}
    if trace:
        out |= {"deck": deck, "slaps": slaps, "n_slaps": n_slaps}
    return out


def places(points: np.ndarray, flies: np.ndarray) -> np.ndarray:
    """Places by points then flies, ties sharing a place and the next skipping (R24)."""
    key = points.astype(np.int64) * 1000 + flies
    out: np.ndarray = 1 + (key[:, None, :] > key[:, :, None]).sum(axis=2)
    return out


def simulate_fast(
    n_games: int,
    seats: int,
    levels: Sequence[LevelLike] | LevelLike,
    seed: Seed,
    remove: int = 0,
    *,
    slap_window_ms: int = 3000,
    jobs: int | None = 1,
    ray: str | None = None,
    trace: bool = False,
) -> FastResult:
    """Play ``n_games`` bot games of ``seats`` seats, seat ``k`` at ``levels[k % len(levels)]``.

    ``levels`` is one level or a list of them (names or :class:`bots.Level`); ``remove`` and
    ``slap_window_ms`` are the rule options (R6, R21). ``jobs`` processes share the work, or
    the Ray cluster ``ray`` does (:mod:`flyswat.sim.pool`); the result depends on neither.
    With ``trace``, the result keeps each game's facts so that :func:`records` can build its
    record (memory: about 7 KB per game). Raises
    :class:`MalformedError` for bad rules, an unknown level or a negative ``n_games``.
    """
    if isinstance(levels, str | bots.Level):
        levels = [levels]
    rules = Rules(seats=seats, remove=remove, slap_window_ms=slap_window_ms)
    if not isinstance(n_games, int) or n_games < 0:
        raise MalformedError(f"n_games must be 0 or more, not {n_games!r}", "bad_games")
    labels, params = seat_params(levels, seats)
    n_chunks = -(-n_games // CHUNK)
    children = np.random.SeedSequence(_seed_int(seed)).spawn(n_chunks)
    work = [
        (rules, params, min(CHUNK, n_games - k * CHUNK), children[k], trace)
        for k in range(n_chunks)
    ]
    parts = run_chunks(_play_chunk, work, jobs=jobs, ray=ray)
    if not parts:
        parts = [_play_chunk((rules, params, 0, np.random.SeedSequence(0), trace))]
    cat: dict[str, Any] = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    return FastResult(
        rules=rules,
        levels=labels,
        places=places(cat["points"], cat["flies"]),
        **cat,
    )


def game(result: FastResult, g: int) -> Game:
    """Game ``g`` of a traced ``result``, replayed by the reference engine from its facts.

    Raises :class:`MalformedError` if ``result`` was not traced, and lets the engine's own
    :class:`~flyswat.errors.IllegalActionError` through if a fact breaks the rules.
    """
    if result.deck is None or result.slaps is None or result.n_slaps is None:
        raise MalformedError("records need simulate_fast(..., trace=True)", "not_traced")
    rules = result.rules
    deck = [DECK[int(i)] for i in result.deck[g]]
    start = int(result.starts[g])
    removed, rest = deck[: rules.remove], deck[rules.remove :]
    piles: list[list[Any]] = [[] for _ in range(rules.seats)]
    for k, card in enumerate(rest):
        piles[(start + k) % rules.seats].append(card)
    played = Game(rules, piles, start=start, removed=removed, seed=None)
    if result.n_slaps[g] > result.slaps.shape[1]:
        raise MalformedError(f"game {g} has more slaps than its trace holds", "trace_cut")
    by_turn: dict[int, list[Slap]] = {}
    for turn, seat, index, ms in result.slaps[g, : result.n_slaps[g]].tolist():
        by_turn.setdefault(turn, []).append(Slap(seat, DECK[index], ms))
    while not played.over:
        played.play_turn(by_turn.get(len(played.turns), ()))
    return played


def records(
    result: FastResult, *, started_at: str = "1970-01-01T00:00:00Z", prefix: str = "fast"
) -> Iterator[dict[str, Any]]:
    """The record (``docs/RECORD.md``) of every game of a traced ``result``, in order.

    Each is built by replaying the game's facts through the reference engine (:func:`game`);
    its ``seed`` is null, since the deal came from the fast generator, not from R5's shuffle.
    Game ``g``'s ``id`` is ``f"{prefix}-{g}"``.
    """
    from flyswat.record import to_record

    seats = [
        {"name": f"Bot {k + 1}", "kind": "bot", "level": level}
        for k, level in enumerate(result.levels)
    ]
    for g in range(result.games):
        yield to_record(game(result, g), seats, id=f"{prefix}-{g}", started_at=started_at)


def with_faster_hand(level: LevelLike, ms: float) -> bots.Level:
    """``level`` with every hand ``ms`` faster (first and second hands' mean and floor)."""
    p = bots.params(level) if isinstance(level, str) else level
    return replace(p, mu_ms=p.mu_ms - ms, floor_ms=max(0, round(p.floor_ms - ms)))
