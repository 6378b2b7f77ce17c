"""Shared helpers for the rules tests: hand-made deals and a snapshot of a game's state.

The helpers are plain functions, handed to tests by session-scoped fixtures (so that
hypothesis tests may use them too):

- ``stage(seats, reveals, start=0, sizes=None)`` builds a :class:`Game` whose first reveals
  are exactly ``reveals`` (card texts, in turn order from ``start``), every other card being
  filled in below them; ``sizes`` fixes the length of some draw piles.
- ``snapshot(game)`` is everything about a game's state, as comparable values, to check that a
  refused action changed nothing.

It also sorts every test into its lanes (:func:`pytest_collection_modifyitems`), by where it
lives, what fixtures it takes and what its module uses, so that a new test file is in the
right lanes without a word in it: ``uv run pytest -m fast`` runs the pure and sans-I/O tests
in well under a minute, ``-m "not fast"`` the rest (see the README, *Tests*).
"""

from __future__ import annotations

import fcntl
import inspect
import os
import pickle
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import pytest
from hypothesis import settings

from flyswat import DECK, Card, Game, Rules

# No example has a time limit: a busy machine (a parallel run beside other work) took 324 ms
# for one that takes a few, and failed it on hypothesis's default 200 ms deadline.
settings.register_profile("flyswat", deadline=None)
settings.load_profile("flyswat")

T = TypeVar("T")
Stage = Callable[..., Game]
Snapshot = Callable[[Game], Any]


def build_piles(
    seats: int,
    tops: Sequence[Sequence[str]],
    sizes: Mapping[int, int] | None = None,
    removed: Sequence[str] = (),
) -> list[list[Card]]:
    """Draw piles (top card first) with ``tops[seat]`` on top of each seat's pile.

    Every card not named in ``tops`` or ``removed`` is dealt below, round robin over the seats
    whose size is not fixed; a seat in ``sizes`` gets filler only up to that many cards.
    """
    sizes = dict(sizes or {})
    named = [Card.parse(t) for pile in tops for t in pile] + [Card.parse(t) for t in removed]
    placed = set(named)
    if len(placed) != len(named):
        raise ValueError("a card is named twice in the staged deal")
    piles = [[Card.parse(t) for t in pile] for pile in tops]
    piles += [[] for _ in range(seats - len(piles))]
    filler = [c for c in DECK if c not in placed]
    open_seats = [s for s in range(seats) if s not in sizes]
    for seat, size in sizes.items():
        while len(piles[seat]) < size:
            piles[seat].append(filler.pop())
        if len(piles[seat]) != size:
            raise ValueError(f"seat {seat} has more than {size} staged cards")
    for k, card in enumerate(filler):
        piles[open_seats[k % len(open_seats)]].append(card)
    return piles


def stage(
    seats: int,
    reveals: Sequence[str],
    *,
    start: int = 0,
    sizes: Mapping[int, int] | None = None,
    remove: int = 0,
) -> Game:
    """A game whose reveals begin with ``reveals``, in turn order (seat ``start``, then the
    next clockwise, …). The first ``remove`` filler cards are the removed ones."""
    tops: list[list[str]] = [[] for _ in range(seats)]
    for k, text in enumerate(reveals):
        tops[(start + k) % seats].append(text)
    named = set(reveals)
    removed = [c.text for c in DECK if c.text not in named][:remove]
    piles = build_piles(seats, tops, sizes, removed)
    return Game(
        Rules(seats=seats, remove=remove),
        piles,
        start=start,
        removed=[Card.parse(t) for t in removed],
    )


def snapshot(game: Game) -> Any:
    """Everything about the game's state, as plain comparable values."""
    r = game.round
    return (
        [list(p) for p in game.draw],
        [list(p) for p in game.won],
        list(game.centre),
        list(game.box),
        [(t.seat, t.card) for t in game.turns],
        game.to_move,
        game.over,
        game.allowed_colours(),
        None if r is None else (r.trigger, list(r.slaps), set(r.done), r.closed, r.allowed),
    )


@pytest.fixture(scope="session")
def staged() -> Stage:
    """The :func:`stage` helper."""
    return stage


@pytest.fixture(scope="session")
def state() -> Snapshot:
    """The :func:`snapshot` helper."""
    return snapshot


@pytest.fixture(scope="session")
def once(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, Callable[[], T]], T]:
    """The :func:`once_per_run` helper: ``once(name, make)``."""
    return lambda name, make: once_per_run(tmp_path_factory, name, make)


def once_per_run(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[], T]) -> T:
    """``make()``, made once for the whole run: under pytest-xdist the first worker that asks
    makes it and leaves it in the run's shared temporary folder (pickled), and the others,
    waiting on a lock meanwhile, load it, instead of every worker that runs one of a module's
    tests making its own at the same time (a cheaters' tournament, a reference simulation:
    minutes of CPU in all, and timings bent by the load). Without xdist, just ``make()``."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None:
        return make()
    shared = tmp_path_factory.getbasetemp().parent / f"{name}-{run}.pickle"
    with open(shared.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if shared.exists():
            made: T = pickle.loads(shared.read_bytes())
            return made
        made = make()
        shared.write_bytes(pickle.dumps(made))
        return made


# -- lanes ---------------------------------------------------------------------------------

TESTS = Path(__file__).resolve().parent

#: A module that uses one of these (imports it, or a name from it) starts servers.
SERVER_MODULES = ("flyswat.server.app", "uvicorn", "harness.server", "harness.procs",
                  "harness.load", "harness.generator", "harness.fairness")  # fmt: skip
#: A module that uses one of these (or a server module) does I/O: sockets, files, a store.
IO_MODULES = ("flyswat.server.store", "flyswat.server.runner", "flyswat.server.players_store",
              "flyswat.server.writer", "sqlalchemy", "httpx", "websockets", "socket",
              "subprocess", "starlette")  # fmt: skip
#: ... or runs the compiled kernel (numba: compiled on first use, cached on disk).
NUMBA_MODULES = ("numba", "flyswat.sim.fast", "flyswat.env.vector")
#: ... or runs it through a module that the imports above do not show (an example's file).
NUMBA_PATHS = {"test_examples.py"}
#: Fixtures that start a server (in this process or as processes), or reach a database.
SERVER_FIXTURES = {"live", "started", "server", "pg_url", "redis_url", "own_redis"}
DB_FIXTURES = {"pg_url"}
CLUSTER_FIXTURES = {"redis_url", "own_redis"}
#: Tests of the other lanes' kind that take long on their own (seconds on a quiet machine,
#: measured with ``--durations``): node ids, or a module's path for all of its tests.
SLOW = {
    "test_simulate.py",
    "test_properties.py",
    "test_examples.py",
}
#: The lanes, as registered in pyproject.toml.
LANES = ("browser", "server", "db", "cluster", "numba", "slow", "fast")


def _uses(module: ModuleType, prefixes: tuple[str, ...]) -> bool:
    """Does ``module`` import a module of ``prefixes``, or a name defined in one?"""
    for value in vars(module).values():
        name = value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", None)
        if isinstance(name, str) and any(name == p or name.startswith(p + ".") for p in prefixes):
            return True
    return False


def lanes(item: pytest.Item) -> set[str]:
    """The lanes of one test: ``browser`` (the web client: Chromium, Node), ``server`` (in
    tests/server/, or it does I/O: a real server, the store, sockets), ``db`` (PostgreSQL),
    ``cluster`` (several nodes, Redis), ``numba`` (the compiled kernel), ``slow``
    (processes, or long on its own); ``fast`` when it does no I/O and is in none of
    browser, db, cluster, numba, slow: the pure and sans-I/O tests (a pure test in
    tests/server/ is ``server`` and ``fast``)."""
    path = Path(str(item.path)).resolve()
    parts = path.relative_to(TESTS).parts if path.is_relative_to(TESTS) else path.parts
    fixtures = set(getattr(item, "fixturenames", ()))
    module = getattr(item, "module", None)
    found = set()
    io = bool(fixtures & SERVER_FIXTURES) or module is None
    io = io or _uses(module, SERVER_MODULES + IO_MODULES)
    if parts[0] == "web":
        found |= {"browser", "slow"}
    if parts[0] == "server" or io:
        found.add("server")
    if module is not None and _uses(module, SERVER_MODULES):
        found.add("slow")
    # A store on both databases is a parameter ("sqlite", "postgresql") of the test.
    if fixtures & DB_FIXTURES or "postgresql" in item.name:
        found.add("db")
    if fixtures & CLUSTER_FIXTURES or path.name.startswith("test_cluster"):
        found |= {"cluster", "slow"}
    if "started" in fixtures:
        found.add("slow")
    if (module is not None and _uses(module, NUMBA_MODULES)) or path.name in NUMBA_PATHS:
        found.add("numba")
    nodeid = item.nodeid.split("::")
    if path.name in SLOW or "::".join(nodeid[-2:]) in SLOW or item.nodeid in SLOW:
        found.add("slow")
    if not io and not found & {"browser", "db", "cluster", "numba", "slow"}:
        found.add("fast")
    return found


#: What a test of each lane takes on its own, roughly (s, from ``--durations`` here): the
#: estimate that orders the tests under pytest-xdist (:func:`_deal`). A test in several lanes
#: takes its longest.
LANE_S = {"cluster": 3.0, "browser": 3.0, "slow": 2.0, "db": 1.0, "server": 0.5, "fast": 0.05}
#: ... and the tests much longer than their lane's (s, ``--durations`` of 2026-12-04), by
#: file and test name (every parameter alike).
LONG_S = {
    "test_players.py::test_a_new_player_plays_now_rematches_and_finds_both_games": 80,
    "test_fair_play.py::test_a_player_who_does_nothing_gains_no_rating_from_ties_with_hard_"
    "bots": 34,
    "test_browse.py::test_the_recent_public_games_are_listed_newest_first_and_filtered": 33,
    "test_players.py::test_play_now_rematch_and_both_games_on_the_profile": 33,
    "test_fair_play.py::test_a_flagged_players_game_is_unrated_and_only_the_operator_sees_why": 45,
    "test_replay.py::test_replays_lists_the_recent_public_games_filters_them_and_opens_one": 29,
    "test_arena.py::test_players_who_join_are_seated_together_rated_counted_once_and_paired_"
    "again": 24,
    "test_newcomer_walk.py::test_the_profiles_games_and_the_leaderboards_headers_fit_a_phone": 20,
    "test_workers.py::test_players_through_two_workers_play_a_game_to_the_end": 20,
    "test_play.py::test_two_players_and_two_bots_play_a_short_game_to_the_end": 19,
    "test_fairness.py::test_racers_on_delayed_links_play_whole_games_that_verify": 19,
    "test_newcomer_table.py::test_the_end_screen_shows_the_new_rating_marked_provisional_and_"
    "links_to_how_ratings_work": 18,
    "test_arena.py::test_when_the_node_pairing_an_arena_dies_its_table_and_its_pairing_go_on_"
    "elsewhere": 18,
    "test_arena.py::test_an_arena_and_its_table_survive_the_servers_death": 15,
    "test_bot_api.py::test_an_example_agent_plays_a_whole_game_against_a_scripted_human_on_a_"
    "real_server": 15,
    "test_cluster_attacks.py::test_play_now_seats_two_players_asking_at_once_at_one_table": 15,
    "test_access.py::test_axe_finds_nothing_serious_on_home_lobby_table_end_profile_"
    "leaderboard_replays_and_live": 13,
    "test_simulate_ray.py::test_a_simulation_on_a_local_ray_cluster_equals_the_same_seed_over_"
    "jobs": 11,
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test gets the markers of its lanes; under pytest-xdist, the order of
    :func:`_deal`."""
    found = {}
    for item in items:
        found[item.nodeid] = lanes(item)
        for lane in sorted(found[item.nodeid]):
            item.add_marker(lane)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    # Every worker orders alike (the same collection); not when a random order is asked
    # (pytest-randomly: bench/flakes.py), which is then the point.
    if workers > 1 and not config.pluginmanager.has_plugin("randomly"):
        items[:] = _deal(items, found, workers)


def _estimate(item: pytest.Item, its_lanes: set[str]) -> float:
    path = Path(str(item.path)).name
    name = getattr(item, "originalname", item.name)
    return LONG_S.get(f"{path}::{name}") or max(LANE_S.get(lane, 0.05) for lane in its_lanes)


def _deal(
    items: list[pytest.Item], found: Mapping[str, set[str]], workers: int
) -> list[pytest.Item]:
    """The tests in the order pytest-xdist's ``--dist worksteal`` hands out best. It cuts the
    list into one run of tests a worker, as many in each (:func:`_cuts`), and a worker that
    runs out takes the back half of the busiest one's rest. So each run here has that many
    tests: the modules that take long, whole (a module's fixture, a server or a browser, is
    made once), the longest first, each to the run with the least estimated time so far; then
    pure tests up to the run's count; then the compiled kernel's modules, last in every run so
    that a fresh clone's kernels may still be compiling while everything else runs
    (:func:`pytest_runtest_setup`). The runs start with their longest tests and end with
    their shortest, which are what idle workers take."""
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(str(item.path), []).append(item)

    def lane_of(its: list[pytest.Item]) -> str:
        if any("numba" in found[i.nodeid] for i in its):
            return "numba"
        return "fast" if all("fast" in found[i.nodeid] for i in its) else "long"

    kind = {m: lane_of(its) for m, its in modules.items()}
    cost = {m: sum(_estimate(i, found[i.nodeid]) for i in its) for m, its in modules.items()}
    runs: list[list[pytest.Item]] = [[] for _ in range(workers)]
    load = [0.0] * workers
    for m in sorted((m for m in modules if kind[m] == "long"), key=lambda m: -cost[m]):
        least = load.index(min(load))
        runs[least].extend(modules[m])
        load[least] += cost[m]
    kernel: list[list[pytest.Item]] = [[] for _ in range(workers)]
    for k, m in enumerate(
        sorted((m for m in modules if kind[m] == "numba"), key=lambda m: -cost[m])
    ):
        kernel[k % workers].extend(modules[m])
    pure = [item for m in modules if kind[m] == "fast" for item in modules[m]]
    for run, size, last in zip(runs, _cuts(len(items), workers), kernel, strict=True):
        room = max(0, size - len(run) - len(last))
        run.extend(pure[:room])
        del pure[:room]
    runs[-1].extend(pure)  # what no run had room for (none unless a run is over its count)
    return [item for run, last in zip(runs, kernel, strict=True) for item in run + last]


def _cuts(count: int, workers: int) -> list[int]:
    """How many tests of ``count`` pytest-xdist's ``worksteal`` gives each worker first."""
    sizes = []
    for k in range(workers):
        sizes.append(count // (workers - k))
        count -= sizes[-1]
    return sizes


# -- the compiled kernel, once -------------------------------------------------------------

KERNELS = TESTS.parent / "src" / "flyswat" / "sim" / "fast"


#: Set by ``.ci/run``: a file that the kernels' compilation, started in the background beside
#: the tests, writes its exit status to when it is over ("0": the cache is whole).
WARMING = "FLYSWAT_NUMBA_WARMING"
WARM_WAIT_S = 900.0


def pytest_configure(config: pytest.Config) -> None:
    """Before pytest-xdist starts its workers, compile the numba kernels into their cache
    if it is missing (a fresh checkout), two parts at once: else every worker that meets a
    kernel compiles it, at the same time as the others (minutes of CPU each). Not when
    ``.ci/run`` compiles them in the background (:data:`WARMING`)."""
    workers = getattr(config.option, "numprocesses", None)
    if not workers or os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get(WARMING):
        return
    from flyswat.sim.kernel_cache import keep_fresh

    keep_fresh()  # a cache compiled from other sources is no cache
    cache = KERNELS / "__pycache__"
    cold = [part for part, module in (("kernel", "kernel"), ("vector", "vector"))
            if not list(cache.glob(f"{module}.*.nbi"))]  # fmt: skip
    if not cold:
        return
    procs = [subprocess.Popen([sys.executable, str(TESTS / "numba_cache.py"), part])
             for part in cold]  # fmt: skip
    for proc in procs:
        if proc.wait() != 0:
            raise pytest.UsageError("compiling the numba kernels failed (see above)")


_warm: list[str] = []


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test of the numba lane waits for the kernels' compilation that ``.ci/run`` started
    in the background (:data:`WARMING`), if any: it would compile them itself otherwise, at
    the same time as that and as the other workers."""
    marker = os.environ.get(WARMING)
    if not marker or item.get_closest_marker("numba") is None:
        return
    if not _warm:
        deadline = time.monotonic() + WARM_WAIT_S
        done = Path(marker)
        while not done.exists() or not done.read_text().strip():
            if time.monotonic() > deadline:
                pytest.fail(f"the numba kernels were not compiled within {WARM_WAIT_S:.0f} s")
            time.sleep(0.2)
        _warm.append(done.read_text().strip())
    if _warm[0] != "0":
        pytest.fail("compiling the numba kernels failed (see .ci/run's output)")
