"""Arenas in a real store, a SQLite file and PostgreSQL (flyswat.server.arena_store): a game
is counted once for its table's arena — not a second game at the same table (a rematch), not
a game kept again, not one that ended after the arena; one node pairs an arena at a time;
the standings freeze with a winner at the end; the time is an argument."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from flyswat.errors import IllegalActionError
from flyswat.players.arena import LAST_PAIRING_S, PRESENCE_S
from flyswat.server import arena_store as st
from flyswat.server.store import Store

T0 = 1_800_000_000.0


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """The store's engine on a SQLite file, and on PostgreSQL (when FLYSWAT_TEST_PG is set)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'arena.db'}"
    else:
        url = request.getfixturevalue("pg_url")
    store = Store(url)
    try:
        yield store.engine
    finally:
        store.close()


def _arena(engine: Engine, aid: str = "a1", minutes: int = 10) -> None:
    with engine.begin() as conn:
        assert st.create(conn, aid, "Test", T0, T0 + minutes * 60, T0 - 1)
        st.join(conn, aid, "ana", "Ana", T0)
        st.join(conn, aid, "bea", "Bea", T0 + 1)


def _rows(engine: Engine, aid: str = "a1") -> dict[str, dict[str, object]]:
    with engine.connect() as conn:
        return {r["player"]: r for r in st.players_of(conn, aid)}


def test_a_game_counts_once_for_its_table_and_a_rematch_there_not_at_all(engine: Engine) -> None:
    _arena(engine)
    with engine.begin() as conn:
        st.seated(conn, "a1", "TABLE1", ["ana", "bea"], T0 + 2)
    assert {r["playing"] for r in _rows(engine).values()} == {False}  # no table row stored
    with engine.begin() as conn:
        assert st.count(conn, "TABLE1", "g1", ["ana", "bea"], [1, 2], T0 + 60)
        assert not st.count(conn, "TABLE1", "g1", ["ana", "bea"], [1, 2], T0 + 61)  # again
        assert not st.count(conn, "TABLE1", "g2", ["ana", "bea"], [2, 1], T0 + 90)  # rematch
        assert not st.count(conn, "ELSEWH", "g3", ["ana", "bea"], [1, 2], T0 + 90)
        tables = st.tables_of(conn, "a1")
    assert [(t["code"], t["game_id"], t["counted"]) for t in tables] == [("TABLE1", "g1", True)]
    assert {p: r["games"] for p, r in _rows(engine).items()} == {"ana": 1, "bea": 1}


def test_a_game_that_ends_when_the_arena_has_ended_is_not_counted(engine: Engine) -> None:
    _arena(engine, minutes=1)
    with engine.begin() as conn:
        st.seated(conn, "a1", "LATE01", ["ana", "bea"], T0 + 2)
        assert not st.count(conn, "LATE01", "g1", ["ana", "bea"], [1, 2], T0 + 60)
        (table,) = st.tables_of(conn, "a1")
    assert table["game_id"] == "g1" and not table["counted"]
    assert {r["games"] for r in _rows(engine).values()} == {0}


def test_the_waiting_are_those_there_lately_at_no_unfinished_table(engine: Engine) -> None:
    _arena(engine)
    with engine.begin() as conn:
        st.join(conn, "a1", "cid", "Cid", T0)
        st.leave(conn, "a1", "cid")
        with pytest.raises(IllegalActionError) as refused:
            st.leave(conn, "a1", "nobody")
        assert refused.value.code == "not_in_arena"
    rows = list(_rows(engine).values())
    assert {s.player for s in st.waiting(rows, T0 + 5)} == {"ana", "bea"}
    assert {s.player for s in st.waiting(rows, T0 + 1 + PRESENCE_S)} == {"bea"}
    with engine.begin() as conn:
        st.seen(conn, "a1", ["ana"], T0 + 100)
        st.join(conn, "a1", "cid", "Cid", T0 + 100)  # back: active again, points kept
    rows = list(_rows(engine).values())
    assert {s.player for s in st.waiting(rows, T0 + 101)} == {"ana", "cid"}


def test_one_node_pairs_an_arena_until_its_lease_runs_out(engine: Engine) -> None:
    _arena(engine)
    with engine.begin() as conn:
        assert [a["id"] for a in st.to_pair(conn, "n1", T0 + 1, 5)] == ["a1"]
        assert st.to_pair(conn, "n2", T0 + 2, 5) == []
        assert [a["id"] for a in st.to_pair(conn, "n1", T0 + 3, 5)] == ["a1"]  # renewed
        assert st.to_pair(conn, "n2", T0 + 7, 5) == []
        assert [a["id"] for a in st.to_pair(conn, "n2", T0 + 8.5, 5)] == ["a1"]  # n1 died
        assert st.to_pair(conn, "n2", T0 + 600 - LAST_PAIRING_S, 5) == []  # the last seconds
        assert st.to_pair(conn, "n2", T0 - 1, 5) == []  # before the start


def test_an_ended_arena_freezes_its_places_and_its_winner_once(engine: Engine) -> None:
    _arena(engine)
    with engine.begin() as conn:
        st.seated(conn, "a1", "TABLE1", ["ana", "bea"], T0 + 2)
        st.count(conn, "TABLE1", "g1", ["ana", "bea"], [2, 1], T0 + 60)
        assert st.to_finish(conn, T0 + 599) == []
        st.finish(conn, "a1", T0 + 599)  # not ended: nothing
        assert st.to_finish(conn, T0 + 600) == ["a1"]
        st.finish(conn, "a1", T0 + 600)
        assert st.to_finish(conn, T0 + 601) == []
        with pytest.raises(IllegalActionError) as refused:
            st.join(conn, "a1", "late", "Late", T0 + 601)
        assert refused.value.code == "arena_over"
        info = st.one(conn, "a1", T0 + 601)
        results = st.results_of(conn, "ana")
    # nobody was rated in this store's game (no player rows): nobody scored, nobody won
    assert info["phase"] == "ended" and info["winner"] is None and info["players"] == 2
    assert [(r["place"], r["won"]) for r in results] == [(1, False)]  # fewer points: no


def test_an_arena_that_does_not_exist_is_named_so(engine: Engine) -> None:
    with engine.begin() as conn:
        for call in (lambda: st.one(conn, "nope", T0),
                     lambda: st.join(conn, "nope", "ana", "Ana", T0),
                     lambda: st.leave(conn, "nope", "ana")):  # fmt: skip
            with pytest.raises(IllegalActionError) as refused:
                call()
            assert refused.value.code == "no_arena"


def test_the_arenas_not_yet_ended_are_bounded(engine: Engine) -> None:
    with engine.begin() as conn:
        for i in range(st.MAX_OPEN_ARENAS):
            assert st.create(conn, f"a{i}", "A", T0, T0 + 60, T0)
        assert not st.create(conn, "a0", "A", T0, T0 + 60, T0)  # made already: a schedule's
        with pytest.raises(IllegalActionError) as refused:
            st.create(conn, "more", "A", T0, T0 + 60, T0)
        assert refused.value.code == "too_many_arenas"
        assert len(st.listing(conn, T0)) == st.MAX_OPEN_ARENAS
