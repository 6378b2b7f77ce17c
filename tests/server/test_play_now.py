"""Play now by rating through a real server: a newcomer joins the open Play now table whose
players are rated closest to them, within its band (flyswat.players.matching); far from
every waiting table, they open their own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import update

from flyswat.players.ratings import SCALE
from flyswat.server import players_store as ps

from .conftest import Live, serve
from .test_players import auth, register


@pytest.fixture
def waiting(db_url: str) -> Iterator[Live]:
    """A server whose Play now tables wait a minute for bots (the test meets them in their
    lobbies)."""
    with serve(db_url, play_now_wait_ms=60_000) as running:
        yield running


def rated(live: Live, name: str, shown: int) -> dict[str, Any]:
    """A new player whose rating the store already holds as ``shown``."""
    who = register(live, name)
    with live.app.state.runner.store.engine.begin() as conn:
        conn.execute(update(ps.players).where(ps.players.c.id == who["player"])
                     .values(mu=shown / SCALE))  # fmt: skip
    return who


def test_play_now_seats_a_newcomer_with_the_players_rated_closest(waiting: Live) -> None:
    ana = rated(waiting, "Ana", 1000)
    bruno = rated(waiting, "Bruno", 1900)
    carla = rated(waiting, "Carla", 1050)
    dario = rated(waiting, "Dario", 1850)
    seats = [waiting.post("/api/play", auth(w)).json() for w in (ana, bruno, carla, dario)]
    codes = [s["code"] for s in seats]
    assert codes[0] != codes[1]  # 900 points away: Bruno opens a table of his own
    assert codes[2] == codes[0] and codes[3] == codes[1]
    table = waiting.get(f"/api/tables/{codes[0]}").json()
    assert [p["rating"] for p in table["players"] if p["joined"]] == [1000, 1050]
