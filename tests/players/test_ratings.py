"""Ratings (openskill Plackett–Luce): who is rated, ties, bots fixed, and the same ratings
whether games are rated one by one as they end or replayed from the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, select

from flyswat.players.ratings import BOT_RATINGS, Entry, Rating, rate_game, rated_players, replay
from flyswat.server import players_store as ps
from flyswat.server.store import Store
from flyswat.table import events as ev


def test_a_win_raises_and_a_loss_lowers_and_shared_places_move_alike() -> None:
    after = rate_game({}, [Entry(0, 1, "a"), Entry(1, 2, "b"), Entry(2, 2, "c")])
    assert after["a"].mu > Rating().mu > after["b"].mu
    assert after["b"] == after["c"]  # a shared place is a tie
    assert all(r.sigma < Rating().sigma for r in after.values())


def test_bots_are_fixed_and_count_flagged_players_and_strangers_do_not() -> None:
    entries = [Entry(0, 2, "a"), Entry(1, 1, level="hard"), Entry(2, 3, "cheat", flagged=True),
               Entry(3, 4)]  # fmt: skip
    assert rated_players(entries) == ["a"]
    after = rate_game({}, entries)
    assert set(after) == {"a"}  # the bot keeps its rating; the flagged player is not rated
    beaten_by_easy = rate_game({}, [Entry(0, 2, "a"), Entry(1, 1, level="easy")])["a"]
    beaten_by_hard = rate_game({}, [Entry(0, 2, "a"), Entry(1, 1, level="hard")])["a"]
    assert beaten_by_easy.mu < beaten_by_hard.mu  # losing to the weak bot costs more
    assert (
        BOT_RATINGS["easy"].shown < BOT_RATINGS["normal"].shown == 1000 < BOT_RATINGS["hard"].shown
    )


def test_a_rating_is_provisional_for_the_first_games_at_a_table_of_four_then_settles() -> None:
    assert Rating().provisional and not BOT_RATINGS["normal"].provisional
    ratings: dict[str, Rating] = {}
    marks = []
    for g in range(12):
        first, second = (1, 2) if g % 2 else (2, 1)
        table = [Entry(0, first, "a"), Entry(1, second, level="normal"),
                 Entry(2, 3, level="normal"), Entry(3, 4, level="easy")]  # fmt: skip
        ratings.update(rate_game(ratings, table))
        marks.append(ratings["a"].provisional)
    settled = marks.index(False)
    assert 3 <= settled <= 8 and not any(marks[settled:]), marks  # it stays settled


def test_a_game_with_nobody_to_rate_changes_nothing() -> None:
    assert rate_game({}, [Entry(0, 1, "a", flagged=True), Entry(1, 2, level="normal")]) == {}
    assert rate_game({}, [Entry(0, 1, "a")]) == {}  # alone: nobody to be measured against
    assert rate_game({}, [Entry(0, 1, "a"), Entry(1, 2, "a")]) == {}  # one player, two seats


def test_a_persons_rating_moves_against_a_bot_account_only_at_a_table_that_takes_them() -> None:
    ana, bot = Entry(0, 2, "ana"), Entry(1, 1, "bot", bot=True)
    house = Entry(2, 3, level="normal")
    invited = rate_game({}, [ana, bot, house])  # a host invited the bot account
    alone = rate_game({}, [ana, Entry(1, 1), house])  # as if its seat took no part
    assert invited["ana"] == alone["ana"]
    assert invited["bot"] == rate_game({}, [Entry(0, 2), bot, house])["bot"]  # its own pool
    mixed = [Entry(e.seat, e.place, e.player, e.level, bot=e.bot, mixed=True)
             for e in (ana, bot, house)]  # fmt: skip
    chosen = rate_game({}, mixed)  # the table took bot accounts: one field
    assert chosen["ana"].mu < invited["ana"].mu  # beaten by the program: it counts now
    assert rate_game({}, [ana, bot]) == {}  # invited, and nobody else: nothing to rate
    assert set(rate_game({}, mixed[:2])) == {"ana", "bot"}
    assert Entry.from_json(mixed[1].to_json()) == mixed[1]
    assert "bot" not in ana.to_json()  # the rows of people read as before


POOL = ["playerAAAA", "playerBBBB", "playerCCCC", "playerDDDD"]
PROGRAMS = frozenset(POOL[2:])  # bot accounts of the first player
seat = st.one_of(
    st.sampled_from(POOL).map(lambda p: ("human", p, None)),
    st.sampled_from(sorted(BOT_RATINGS)).map(lambda lv: ("bot", None, lv)),
    st.just(("human", None, None)),
)
game = st.integers(2, 6).flatmap(
    lambda n: st.tuples(
        st.lists(seat, min_size=n, max_size=n),
        st.lists(st.integers(1, n), min_size=n, max_size=n),
        st.lists(st.sampled_from([0, 0, 0, 1]), min_size=n, max_size=n),
        st.booleans(),  # the table takes bot accounts
    )
)


def _over(i: int, seats: list[tuple[str, str | None, str | None]], places: list[int],
          too_fast: list[int], takes_bots: bool = False) -> ev.Over:  # fmt: skip
    record: dict[str, Any] = {
        "seats": [{"name": f"s{k}", "kind": kind, **({"level": lv} if lv else {})}
                  for k, (kind, _, lv) in enumerate(seats)],
        "result": {"places": places, "points": [0] * len(seats), "flies": [0] * len(seats)},
        "turns": [],
    }  # fmt: skip
    return ev.Over(game_id=f"g{i}", record=record, players=[p for _, p, _ in seats],
                   too_fast=too_fast, takes_bots=takes_bots)  # fmt: skip


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path: Path = tmp_path_factory.mktemp("ratings") / "r.db"
    s = Store(f"sqlite:///{path}")
    yield s
    s.close()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(games=st.lists(game, min_size=1, max_size=12))
def test_ratings_rated_game_by_game_are_those_replayed_from_the_store(
    store: Store, games: list[Any]
) -> None:
    with store.engine.begin() as conn:
        for table in (ps.player_games, ps.games, ps.players):
            conn.execute(delete(table))
        for pid in POOL:
            owner = POOL[0] if pid in PROGRAMS else None
            ps.register(conn, pid, pid, "secret-" + pid, "2026-12-01T00:00:00Z", owner=owner)
    for i, g in enumerate(games):
        with store.engine.begin() as conn:  # each game in its own transaction, as it ends
            over = _over(i, *g)
            ps.record_game(conn, "TABLE1", over, f"t{i}", over.record_dict())
    with store.engine.connect() as conn:
        stored = {r[0]: Rating(r[1], r[2]) for r in conn.execute(
            select(ps.players.c.id, ps.players.c.mu, ps.players.c.sigma))}  # fmt: skip
        from_store = ps.replay_ratings(conn)
    pure = replay(ps.entries_of(_over(i, *g).record_dict() or {}, [p for _, p, _ in g[0]], g[2],
                                programs=PROGRAMS, mixed=g[3])
                  for i, g in enumerate(games))  # fmt: skip
    assert {p: stored[p] for p in from_store} == from_store == pure
    untouched = set(POOL) - set(pure)
    assert all(stored[p] == Rating() for p in untouched)
