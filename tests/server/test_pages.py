"""``flyswat serve --role pages``: the players' pages from a process that holds no table
(docs/DEPLOY.md, *The players' pages apart*). A real node plays a game on a store; a pages
process over the same store answers every page as the node does, byte for byte, and nothing
else: no table is made, joined or played there."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import InvalidStatus

from harness.server import Serve, free_ports

from .conftest import FAST, Process, games_at, identity, with_bots


@pytest.mark.anyio
async def test_a_pages_process_answers_every_page_as_the_node_does_and_holds_no_table(
    server: Process, tmp_path: Path, started: list[Serve]
) -> None:
    ana = await asyncio.to_thread(identity, server, "Ana")
    code, (game,) = await games_at(server, with_bots(ana, "easy", **FAST), 1,
                                   human=True, reaction_ms=480)  # fmt: skip
    port = free_ports(1)
    store = f"sqlite:///{tmp_path / 'players.db'}"  # the node's store (the fixture's file)
    started.append(Serve(["--role", "pages", "--workers", "1", "--port", str(port),
                          "--db", store, "--exempt", "127.0.0.1"],
                         tmp_path / "pages.log", [port]))  # fmt: skip
    pages = f"http://127.0.0.1:{port}"
    paths = [
        f"/api/players/{ana['player']}",
        f"/api/players/{ana['player']}/games",
        "/api/leaderboard",
        "/api/leaderboard?pool=bots",
        "/api/games",
        f"/api/games?player={ana['player']}",
        f"/api/games/{game}",
        f"/api/games/{game}/record",
        "/api/players/nobody-at-all",  # the same refusal too
        "/api/leaderboard?limit=0",
    ]
    with httpx.Client(timeout=10) as http:
        for path in paths:
            theirs, ours = http.get(server.http + path), http.get(pages + path)
            assert (ours.status_code, ours.content) == (theirs.status_code, theirs.content), path
        assert http.get(pages + "/").status_code == 200  # the web client's files too
        health = http.get(pages + "/health").json()
        assert health["role"] == "pages" and health["tables"] == 0
        # Nothing of a table is there: not made, not read, not joined.
        made = http.post(pages + "/api/tables", json={"name": "Bo", "seats": 2, **FAST})
        assert made.status_code in (404, 405)
        assert http.get(pages + "/api/tables").status_code in (404, 405)
        assert http.get(f"{pages}/api/tables/{code}").status_code == 404
        assert http.post(pages + "/api/players", json={"name": "Bo"}).status_code in (404, 405)
    with pytest.raises(InvalidStatus) as refused:  # no table's socket here: refused, no error
        async with ws_connect(f"ws://127.0.0.1:{port}/ws/{code}", open_timeout=5):
            pass
    assert refused.value.response.status_code == 403


@pytest.mark.anyio
@pytest.mark.parametrize("apart", [True, False])
async def test_apart_a_quick_read_runs_on_the_loop_and_any_other_on_a_thread(
    apart: bool, tmp_path: Path
) -> None:
    """Where the pages are apart a quick read's SQL runs on the event loop (no table to hold
    up); a read the client can make slow (the replays' filters, a far board page) takes a
    thread there too; on a node every read takes a thread (``Pages.db``)."""
    import threading

    from flyswat.server.pages import Pages
    from flyswat.server.store import Store

    store = Store(f"sqlite:///{tmp_path / 'pages.db'}")
    pages = Pages(store.engine, apart=apart)
    loop_thread = threading.get_ident()
    try:
        quick = await pages.db(lambda conn: threading.get_ident(), quick=True)
        other = await pages.db(lambda conn: threading.get_ident())
    finally:
        pages.close()
        store.close()
    assert (quick == loop_thread) is apart
    assert other != loop_thread
