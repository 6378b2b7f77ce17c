"""Bot games, many at a time: ``flyswat simulate``, and the pure game loop behind it.

:func:`play_game` plays one whole game between bots from ``(rules, levels, seed)`` alone and
returns the finished :class:`~flyswat.engine.Game` with its :class:`GameStats`; the same
arguments always give the same game. :func:`simulate` plays many such games, over several
processes if asked, with the same results whatever the number of processes. :func:`summarise`
condenses the stats; :func:`run` is the command-line adapter (clock, files, terminal).

How a bot game is played: on each turn the player to move reveals (bot reveal pauses do not
change anything here). When a slap round opens, every seat's bot decides from its own view
(:func:`flyswat.bots.decide`), and the round is played by :mod:`flyswat.sim.driver`, the one
driver the research environments use too: hands in the order of their reaction times, ties
by seat, those past the slap window dropped (R21).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from flyswat import bots
from flyswat.engine import Game
from flyswat.errors import FlyswatError, MalformedError
from flyswat.extras import require
from flyswat.record import to_record, write_record
from flyswat.rules import Rules
from flyswat.shuffle import Seed
from flyswat.sim import driver
from flyswat.sim.pool import run_chunks
from flyswat.sim.summary import Line, Summary


@dataclass(frozen=True, slots=True)
class GameStats:
    """What one bot game came to. Per-seat tuples are in seat order.

    ``wrong`` counts each seat's hands on flies of a colour that was not allowed (R19);
    ``late`` its planned hands that came after the slap window closed (R21). ``turns`` is the
    number of reveals, ``rounds`` the number of slap rounds (R12, R13).
    """

    start: int
    levels: tuple[str, ...]
    points: tuple[int, ...]
    flies: tuple[int, ...]
    places: tuple[int, ...]
    wrong: tuple[int, ...]
    late: tuple[int, ...]
    turns: int
    rounds: int

    def wins(self) -> tuple[float, ...]:
        """Each seat's share of the win: 1 for a sole winner, 1/k for k seats sharing first."""
        first = self.places.count(1)
        return tuple(1.0 / first if place == 1 else 0.0 for place in self.places)

    def position(self, seat: int) -> int:
        """The seat's position relative to the start player: 0 for the start player (R9)."""
        return (seat - self.start) % len(self.levels)


@dataclass(frozen=True, slots=True)
class Played:
    """A finished bot game and its stats."""

    game: Game
    stats: GameStats


def seat_levels(levels: Sequence[str], seats: int) -> tuple[str, ...]:
    """One level per seat, ``levels`` cycled; raises :class:`MalformedError` if any is unknown."""
    if not levels:
        raise MalformedError("give at least one bot level", "bad_level")
    for level in levels:
        bots.params(level)
    return tuple(levels[k % len(levels)] for k in range(seats))


def game_seed(seed: Seed, index: int) -> str:
    """The seed of game number ``index`` of a simulation seeded by ``seed``."""
    return f"{seed}-{index}"


def play_game(
    rules: Rules, levels: Sequence[str], seed: Seed, *, start: int | None = None
) -> Played:
    """Play one whole game between bots, seat ``k`` at level ``levels[k % len(levels)]``.

    Everything follows from the arguments: the deal from ``seed`` (R5); the start player, when
    ``start`` is None, from a generator seeded by ``f"{seed}:start"`` (R9); seat ``k``'s bot
    from a generator seeded by ``f"{seed}:bot:{k}"``. Raises :class:`MalformedError` for an
    unknown level.
    """
    per_seat = seat_levels(levels, rules.seats)
    if start is None:
        start = random.Random(f"{seed}:start").randrange(rules.seats)
    rngs = {k: random.Random(f"{seed}:bot:{k}") for k in range(rules.seats)}
    bots_at = dict(enumerate(per_seat))
    game = Game.new(rules, seed, start)
    wrong = [0] * rules.seats
    late = [0] * rules.seats
    rounds = 0
    while driver.advance(game) is not None:
        rounds += 1
        closed, too_late = driver.play_round(game, driver.bot_hands(game, bots_at, rngs))
        wrong = [a + b for a, b in zip(wrong, driver.wrong_hands(closed, rules.seats), strict=True)]
        late = [a + b for a, b in zip(late, too_late, strict=True)]
    result = game.result()
    stats = GameStats(
        start=start,
        levels=per_seat,
        points=result.points,
        flies=result.flies,
        places=result.places,
        wrong=tuple(wrong),
        late=tuple(late),
        turns=len(game.turns),
        rounds=rounds,
    )
    return Played(game, stats)


# -- many games ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Chunk:
    rules: Rules
    levels: tuple[str, ...]
    seed: Seed
    first: int
    stop: int
    records: str | None
    started_at: str


def _play_chunk(chunk: _Chunk) -> list[GameStats]:
    """Play games ``first`` to ``stop - 1``; write their records if asked. Runs in a worker."""
    out: list[GameStats] = []
    for index in range(chunk.first, chunk.stop):
        seed = game_seed(chunk.seed, index)
        played = play_game(chunk.rules, chunk.levels, seed)
        if chunk.records is not None:
            _write(played, seed, Path(chunk.records), chunk.started_at)
        out.append(played.stats)
    return out


def _write(played: Played, seed: str, folder: Path, started_at: str) -> None:
    seats = [
        {"name": f"Bot {k + 1}", "kind": "bot", "level": level}
        for k, level in enumerate(played.stats.levels)
    ]
    record = to_record(played.game, seats, id=seed, started_at=started_at)
    write_record(record, folder / f"{seed}.json")


def simulate(
    rules: Rules,
    levels: Sequence[str],
    seed: Seed,
    games: int,
    *,
    jobs: int | None = 1,
    ray: str | None = None,
    records: Path | None = None,
    started_at: str = "1970-01-01T00:00:00Z",
    progress: Callable[[int], None] | None = None,
) -> list[GameStats]:
    """Play ``games`` bot games, game ``i`` seeded by :func:`game_seed`, over ``jobs`` processes
    or on the Ray cluster ``ray`` (``"local"``, or an address: :mod:`flyswat.sim.pool`).

    Returns the stats in game order; they depend on neither ``jobs`` nor ``ray``. With
    ``records`` (on Ray, a folder every node sees), writes
    each game's record to ``records/<game seed>.json`` (the folder must exist), stamped
    ``started_at``. ``progress`` is called with the number of games just finished.
    Raises :class:`MalformedError` for an unknown level or a negative ``games``.
    """
    if games < 0:
        raise MalformedError(f"games must be 0 or more, not {games}", "bad_games")
    per_seat = seat_levels(levels, rules.seats)
    folder = None if records is None else str(records)
    size = max(1, min(200, games // (max(1, jobs or 8) * 8) or 1))
    chunks = [
        _Chunk(rules, per_seat, seed, i, min(i + size, games), folder, started_at)
        for i in range(0, games, size)
    ]

    def done(k: int) -> None:
        if progress:
            progress(chunks[k].stop - chunks[k].first)

    parts = run_chunks(_play_chunk, chunks, jobs=jobs, ray=ray, done=done)
    return [stats for part in parts for stats in part]


# -- summary -------------------------------------------------------------------------------


def _position_label(position: int) -> str:
    return "start" if position == 0 else f"+{position}"


def _line(label: str, rows: list[tuple[float, int, int, int]]) -> Line:
    n = len(rows)
    win, points, flies, wrong = (sum(r[i] for r in rows) / n for i in range(4))
    return Line(label, n, win, points, flies, wrong)


def _spread(values: list[int]) -> tuple[float, int, int]:
    return (sum(values) / len(values), min(values), max(values)) if values else (0.0, 0, 0)


def summarise(stats: Sequence[GameStats]) -> Summary:
    """Condense the stats of many games; levels come in the order of :data:`bots.LEVELS`."""
    positions: dict[int, list[tuple[float, int, int, int]]] = {}
    levels: dict[str, list[tuple[float, int, int, int]]] = {}
    for g in stats:
        for seat, win in enumerate(g.wins()):
            row = (win, g.points[seat], g.flies[seat], g.wrong[seat])
            positions.setdefault(g.position(seat), []).append(row)
            levels.setdefault(g.levels[seat], []).append(row)
    return Summary(
        games=len(stats),
        positions=tuple(_line(_position_label(p), positions[p]) for p in sorted(positions)),
        levels=tuple(_line(level, levels[level]) for level in bots.LEVELS if level in levels),
        turns=_spread([g.turns for g in stats]),
        rounds=_spread([g.rounds for g in stats]),
    )


def save_plot(stats: Sequence[GameStats], summary: Summary, path: Path) -> None:
    """Write a figure of the score distributions and the win shares to ``path`` (PNG)."""
    from matplotlib.figure import Figure  # draws with Agg: no display, no pyplot state

    fig = Figure(figsize=(15, 4.5), layout="constrained")
    by_position, by_level, shares = fig.subplots(1, 3)
    bins = list(range(0, max((p for g in stats for p in g.points), default=0) + 6, 5))
    groups: tuple[dict[str, list[int]], dict[str, list[int]]] = ({}, {})
    for g in stats:
        for seat, points in enumerate(g.points):
            groups[0].setdefault(_position_label(g.position(seat)), []).append(points)
            groups[1].setdefault(g.levels[seat], []).append(points)
    for ax, title, group, rows in (
        (by_position, "points by seat position", groups[0], summary.positions),
        (by_level, "points by bot level", groups[1], summary.levels),
    ):
        for row in rows:
            ax.hist(group[row.label], bins=bins, histtype="step", density=True, label=row.label)
        ax.set(title=title, xlabel="points", ylabel="density")
        if rows:
            ax.legend()
    lines = [*summary.positions, *summary.levels]
    labels = [f"pos {x.label}" for x in summary.positions] + [x.label for x in summary.levels]
    colours = ["tab:blue"] * len(summary.positions) + ["tab:orange"] * len(summary.levels)
    shares.bar(labels, [x.win_share for x in lines], color=colours)
    shares.set(title="win share per seat-game", ylabel="wins per seat-game")
    shares.tick_params(axis="x", labelrotation=30)
    fig.savefig(path, format="png", dpi=100)


# -- the command line ------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``flyswat simulate``."""
    parser.add_argument("--games", type=int, default=100, help="games to play (default 100)")
    parser.add_argument("--seats", type=int, default=4, help="players per game, 2-8 (default 4)")
    parser.add_argument(
        "--bots",
        default="normal",
        help=f"comma-separated level per seat, cycled: {', '.join(bots.LEVELS)} (default normal)",
    )
    parser.add_argument("--seed", default="1", help="the simulation's seed (default 1)")
    parser.add_argument(
        "--jobs", type=int, default=None,
        help="worker processes (default 1); with --ray, tasks at once (default: every CPU)",
    )  # fmt: skip
    parser.add_argument(
        "--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
        help="play on a Ray cluster: a local one, or the one at ADDRESS (the ray extra)",
    )  # fmt: skip
    parser.add_argument("--remove", type=int, default=0, help="cards removed unseen (R6)")
    parser.add_argument("--records", type=Path, help="write one game record per game here")
    parser.add_argument("--plot", type=Path, help="write a figure of the results (PNG)")
    parser.add_argument(
        "--fast", action="store_true", help="the compiled fast simulator (flyswat.sim.fast)"
    )


def run(args: argparse.Namespace) -> int:
    """Run ``flyswat simulate``: play, print the summary, write records and plot if asked.

    Returns 0, or 2 with a message on standard error for a bad option or an unwritable path.
    """
    try:
        if getattr(args, "fast", False):
            require("sim", "flyswat simulate --fast", "numpy", "numba")
            from flyswat.sim.fast.command import run as run_fast

            return run_fast(args)
        require("sim", "flyswat simulate", "rich")
        if args.plot is not None:
            require("sim", "flyswat simulate --plot", "matplotlib")
        from rich.console import Console
        from rich.progress import MofNCompleteColumn, Progress, TimeElapsedColumn

        rules = Rules(seats=args.seats, remove=args.remove)
        levels = [s.strip() for s in args.bots.split(",") if s.strip()]
        seat_levels(levels, rules.seats)
        if (args.jobs is not None and args.jobs < 1) or args.games < 0:
            raise MalformedError("jobs must be 1 or more and games 0 or more", "bad_count")
        jobs = args.jobs if args.jobs is not None or args.ray else 1
        if args.records is not None:
            args.records.mkdir(parents=True, exist_ok=True)
        started_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        columns = (*Progress.get_default_columns(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=Console(stderr=True)) as bar:
            task = bar.add_task("playing", total=args.games)
            stats = simulate(
                rules,
                levels,
                args.seed,
                args.games,
                jobs=jobs,
                ray=args.ray,
                records=args.records,
                started_at=started_at,
                progress=lambda n: bar.advance(task, n),
            )
    except (FlyswatError, OSError) as e:
        print(f"flyswat simulate: {e}", file=sys.stderr)
        return 2
    summary = summarise(stats)
    console = Console()
    console.print(summary.render())
    if args.plot is not None:
        save_plot(stats, summary, args.plot)
        console.print(f"figure written to {args.plot}")
    return 0
