"""Replays' list of the recent public games (``GET /api/games``), from the outside: a real
server process, games played at tables with bots, filtered as PROTOCOL.md says."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from .conftest import FAST, Process, games_at, identity, with_bots


def listed(server: Process, query: str = "") -> dict[str, Any]:
    reply = server.get(f"/api/games{query}")
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


@pytest.mark.anyio
async def test_the_recent_public_games_are_listed_newest_first_and_filtered(
    server: Process,
) -> None:
    """Three public games (two seats, two seats, three seats: R4), one rated (a long game the
    player took part in), and a private table's game: the list has the public ones only,
    newest first, each with its seats' names, places and record; the filters by player id,
    by the beginning of a name, by seats and by rated pick what they say; pages join up."""
    ana = await asyncio.to_thread(identity, server, "Ana Lima")
    bruno = await asyncio.to_thread(identity, server, "Bruno")
    person = {"human": True, "reaction_ms": 480}  # spread times: never flagged (fair play)
    _, (first,) = await games_at(server, with_bots(ana, "easy", **FAST), 1, **person)
    _, (three,) = await games_at(server, with_bots(bruno, "easy", "easy", **FAST), 1, **person)
    _, (hidden,) = await games_at(server, with_bots(ana, "easy", public=False, **FAST), 1, **person)
    long_game = with_bots(ana, "easy", remove=112 - 2 - 40, turn_timeout_ms=400)
    _, (rated,) = await games_at(server, long_game, 1, reaction_ms=480, human=True)

    every = await asyncio.to_thread(listed, server)
    assert [g["game_id"] for g in every["games"]] == [rated, three, first]
    assert every["next"] is None
    by_id = {g["game_id"]: g for g in every["games"]}
    assert [(g["seats"], g["rated"]) for g in every["games"]] == [(2, True), (3, False),
                                                                  (2, False)]  # fmt: skip
    seat0 = by_id[rated]["players"][0]
    assert (seat0["name"], seat0["player"], seat0["kind"]) == ("Ana Lima", ana["player"], "human")
    assert (
        by_id[three]["players"][1]["kind"] == "bot" and by_id[three]["players"][1]["player"] is None
    )
    assert sorted(s["place"] for s in by_id[first]["players"]) in ([1, 2], [1, 1])
    record = server.get(by_id[first]["record_url"])
    assert record.status_code == 200 and record.json()["id"] == first

    async def ids(query: str) -> list[str]:
        return [g["game_id"] for g in (await asyncio.to_thread(listed, server, query))["games"]]

    assert await ids(f"?player={ana['player']}") == [rated, first]
    assert await ids("?name=ana") == [rated, first]  # the beginning of a name, any case
    assert await ids("?name=%C3%A1na%20l") == [rated, first]  # "ána l": compared as names are
    assert await ids("?name=lima") == []
    assert await ids("?name=_") == [] and await ids("?name=%25") == []  # no wildcard
    assert await ids("?seats=3") == [three]
    assert await ids("?rated=true") == [rated]
    assert await ids("?rated=false&seats=2") == [first]
    assert hidden not in await ids(f"?player={ana['player']}")

    page = await asyncio.to_thread(listed, server, "?limit=2")
    assert [g["game_id"] for g in page["games"]] == [rated, three]
    rest = await asyncio.to_thread(listed, server, f"?limit=2&before={page['next']}")
    assert [g["game_id"] for g in rest["games"]] == [first] and rest["next"] is None


@pytest.mark.parametrize(
    "query",
    ["?seats=1", "?seats=9", "?seats=two", "?rated=yes", "?limit=0", "?limit=101",
     "?before=-1", "?player=no", "?player=" + "x" * 65, "?name=" + "n" * 40, "?name=%20",
     "?name=%00", "?name=%E2%80%8B%E2%80%8B"],
)  # fmt: skip
def test_a_bad_filter_gets_a_clear_error(server: Process, query: str) -> None:
    reply = server.get(f"/api/games{query}")
    assert reply.status_code == 400, (query, reply.text)
    assert reply.json()["error"] == "malformed" and reply.json()["message"]


def test_games_kept_before_the_listing_are_listed_after_the_upgrade(tmp_path) -> None:
    """A store at revision 0005 with a public and a private table's games: upgraded, the
    public game is listed with its seats, names and rated mark read from what was kept (the
    table's create event, the game's entries and record, its players' rows)."""
    import json

    from alembic import command
    from sqlalchemy import create_engine, text

    from flyswat.server import players_store as ps
    from flyswat.server.store import Store, alembic_config

    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = create_engine(url)
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "0005")
        for code, public in (("PUBLIC", True), ("SECRET", False)):
            conn.execute(text("INSERT INTO flyswat_events (code, kind, data, at) "
                              "VALUES (:c, 'create', :d, '2026-01-01')"),
                         {"c": code, "d": json.dumps({"options": {"public": public}})})  # fmt: skip
            game = f"game-{code}"
            seats = [{"name": "Ana", "kind": "human"}, {"name": "Bot", "kind": "bot"}]
            entries = [
                {"seat": 0, "place": 1, "player": "player-ana", "level": None, "flagged": False},
                {"seat": 1, "place": 2, "player": None, "level": "easy", "flagged": False},
            ]
            conn.execute(text("INSERT INTO flyswat_games (game_id, code, ended_at, entries) "
                              "VALUES (:g, :c, '2026-01-02', :e)"),
                         {"g": game, "c": code, "e": json.dumps(entries)})  # fmt: skip
            conn.execute(text("INSERT INTO flyswat_records (game_id, code, record) "
                              "VALUES (:g, :c, :r)"),
                         {"g": game, "c": code, "r": json.dumps({"seats": seats})})  # fmt: skip
    engine.dispose()
    store = Store(url)  # migrates to the head
    try:
        with store.engine.connect() as conn:
            games, nxt = ps.listed_games(conn, ps.ListedQuery(), None, 10)
    finally:
        store.close()
    assert nxt is None and [g["game_id"] for g in games] == ["game-PUBLIC"]
    [game] = games
    assert (game["seats"], game["rated"], game["code"]) == (2, False, "PUBLIC")
    assert [(s["name"], s["kind"], s["place"]) for s in game["players"]] == [
        ("Ana", "human", 1), ("Bot", "bot", 2)]  # fmt: skip
