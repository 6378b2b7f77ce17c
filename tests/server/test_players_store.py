"""The players' store on SQLite and PostgreSQL alike: identities, a game kept with its
ratings in the transaction of its record, reads, the leaderboard, claims."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from flyswat.players.ratings import MIN_REVEALS, Rating
from flyswat.server import players_store as ps
from flyswat.server.store import Store
from flyswat.table import events as ev


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, db_url: str) -> Iterator[str]:
    if request.param == "sqlite":
        yield db_url
    else:
        yield request.getfixturevalue("pg_url")


def _record(places: list[int]) -> dict[str, object]:
    seats = [{"name": "Ana", "kind": "human"}, {"name": "Bot 2", "kind": "bot", "level": "hard"},
             {"name": "Bruno", "kind": "human"}]  # fmt: skip
    slaps = [{"seat": 0, "card": "R3-1", "ms": 400}, {"seat": 2, "card": "B1-1", "ms": 300},
             {"seat": 0, "card": "R2-1", "ms": 600}]  # fmt: skip
    # A rated game is at least MIN_REVEALS long (docs/PLAYERS.md): reveals before the round.
    turns = [{"seat": k % 3, "card": "R1-1"} for k in range(MIN_REVEALS - 1)]
    turns.append({"seat": 0, "card": "S-1", "round": {"allowed": ["R"], "slaps": slaps}})
    return {"id": "g1", "seats": seats, "turns": turns,
            "result": {"places": places, "points": [5, 9, 1], "flies": [2, 3, 1]}}  # fmt: skip


def test_a_finished_game_is_kept_with_its_ratings_in_one_transaction(url: str) -> None:
    store = Store(url)
    try:
        with store.engine.begin() as conn:
            ps.register(conn, "anaAAAAAAA", "Ana", "s-ana", "2026-12-01T00:00:00Z")
            ps.register(conn, "brunoBBBBB", "Bruno", "s-bruno", "2026-12-01T00:00:00Z")
            with pytest.raises(Exception, match="taken"):
                ps.register(conn, "otherCCCCC", "ANA", "s", "2026-12-01T00:00:00Z")
        over = ev.Over(game_id="g1", record=_record([2, 1, 3]), players=["anaAAAAAAA", None,
                       "brunoBBBBB"], too_fast=[0, 0, 2])  # fmt: skip
        store.append_all("TBL001", [ev.Created(options={"seats": 3}, host=0), over])  # type: ignore[arg-type]
        store.append_all("TBL001", [over])  # kept once
        with store.engine.connect() as conn:
            ana = ps.profile(conn, "anaAAAAAAA")
            bruno = ps.profile(conn, "brunoBBBBB")
            games, nxt = ps.games_page(conn, "anaAAAAAAA", None, 10)
            board, total = ps.leaderboard(conn, 10, 0)
            summary = ps.game_summary(conn, "g1")
            assert ps.latest_game(conn, "TBL001") == "g1"
        assert (ana["games"], ana["rated_games"], ana["reaction_ms"], ana["points"]) == (
            1,
            1,
            500,
            5,
        )
        assert ana["rating"] < Rating().shown  # second behind the hard bot, alone rated
        assert (bruno["games"], bruno["rated_games"], bruno["too_fast"]) == (1, 0, 2)  # flagged
        assert bruno["rating"] == Rating().shown and bruno["rank"] is None
        assert nxt is None and games[0]["delta"] == ana["rating"] - 1000 and games[0]["rated"]
        assert [r["name"] for r in board] == ["Ana"] and total == 1
        assert summary is not None and [s.get("rated") for s in summary["seats"]] == [
            True,
            None,
            False,
        ]
        with store.engine.begin() as conn:
            ps.set_claim(conn, "anaAAAAAAA", "ABCD2345", until=100.0)
            with pytest.raises(Exception, match="claim"):
                ps.claim(conn, "ABCD2345", "new", now=101.0)  # too late
        with store.engine.begin() as conn:
            assert ps.claim(conn, "ABCD2345", "new", now=99.0)["id"] == "anaAAAAAAA"
            assert ps.authenticate(conn, "anaAAAAAAA", "new")["name"] == "Ana"
            with pytest.raises(Exception, match="secret"):
                ps.authenticate(conn, "anaAAAAAAA", "s-ana")
    finally:
        store.close()


def test_a_leaderboard_page_and_a_rank_read_the_boards_index(url: str) -> None:
    """On PostgreSQL (a site's store) neither sorts nor counts through every rated player: the
    order ``mu - 3 sigma`` is an index (migration 0009), written the same in the queries
    (``ps.ORDINAL``). SQLite's planner, without statistics, sorts a page's few rows."""
    import sqlalchemy as sa

    store = Store(url)
    try:
        with store.engine.begin() as conn:
            conn.execute(sa.insert(ps.players), [
                {"id": f"p{i:04d}", "name": f"P{i}", "name_key": f"p{i}", "secret_hash": "0" * 64,
                 "created_at": "2026-12-03T00:00:00Z", "mu": 20 + i % 17, "sigma": 1 + i % 5,
                 "games": 3, "rated": 3, "bot": False}
                for i in range(2000)
            ])  # fmt: skip
            if conn.dialect.name == "postgresql":
                conn.execute(sa.text("ANALYZE flyswat_players"))
        c, bots = ps.players.c, False  # as the queries write the pool
        page = (sa.select(c.id).where(c.rated > 0, c.bot == bots)
                .order_by(ps.ORDINAL.desc(), c.id).limit(20))  # fmt: skip
        rank = sa.select(sa.func.count()).where(c.rated > 0, c.bot == bots, ps.ORDINAL > 30.0)
        with store.engine.connect() as conn:
            for query in (page, rank) if conn.dialect.name == "postgresql" else ():
                sql = str(query.compile(store.engine, compile_kwargs={"literal_binds": True}))
                plan = " ".join(str(row) for row in conn.execute(sa.text("EXPLAIN " + sql)))
                assert "ix_flyswat_players_board" in plan, plan
            board, total = ps.leaderboard(conn, 5, 0)
        assert total == 2000
        ordinals = [b["conservative"] for b in board]
        assert ordinals == sorted(ordinals, reverse=True)
    finally:
        store.close()


def test_the_standings_rank_every_player_as_counting_does_and_reads_again_once_its_time_is_up(
    url: str,
) -> None:
    """The pages served apart rank from :class:`ps.Standings` (the ordinals read at most
    every ``ttl_s``): the same rank as counting for every player, ties and both pools included,
    and the same board size; a rating changed since is seen once ``ttl_s`` has passed."""
    import sqlalchemy as sa

    store = Store(url)
    now = [0.0]
    standings = ps.Standings(5.0, clock=lambda: now[0])
    try:
        with store.engine.begin() as conn:
            conn.execute(sa.insert(ps.players), [
                {"id": f"p{i:04d}", "name": f"P{i}", "name_key": f"p{i}", "secret_hash": "0" * 64,
                 "created_at": "2026-12-03T00:00:00Z", "mu": 20 + i % 7, "sigma": 1 + i % 3,
                 "games": 3, "rated": 0 if i % 11 == 0 else 3, "bot": i % 5 == 0}
                for i in range(300)
            ])  # fmt: skip
        assert not standings.fresh()  # never read
        with store.engine.connect() as conn:
            for bots in (False, True):
                counted, total = ps.leaderboard(conn, 1, 0, bots)
                assert standings.total(conn, bots) == total
                assert ps.leaderboard(conn, 1, 0, bots, standings) == (counted, total)
            for i in range(300):
                pid = f"p{i:04d}"
                assert ps.profile(conn, pid, standings) == ps.profile(conn, pid), pid
            ranks = {
                f"p{i:04d}": ps.profile(conn, f"p{i:04d}")["rank"]
                for i in range(300)
                if i % 5 and i % 11
            }  # the rated people
        last = max(ranks, key=ranks.__getitem__)  # the board's last, made its first
        other = min((pid for pid in ranks if ranks[pid] > 1), key=ranks.__getitem__)
        best = Rating(60.0, 1.0)
        with store.engine.begin() as conn:
            conn.execute(sa.update(ps.players).where(ps.players.c.id == last)
                         .values(mu=best.mu, sigma=best.sigma))  # fmt: skip
        with store.engine.connect() as conn:
            assert ps.profile(conn, last, standings)["rank"] == 1  # its own row is read now
            passed = ps.profile(conn, other)
            assert passed["rank"] == ranks[other] + 1
            assert ps.profile(conn, other, standings)["rank"] == ranks[other]  # not yet
            assert standings.fresh()
            now[0] = 5.0
            assert not standings.fresh()
            assert ps.profile(conn, other, standings) == passed
    finally:
        store.close()
