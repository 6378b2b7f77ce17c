"""Arenas in real browsers: a player opens an arena, joins (a newcomer naming themself
first), and is seated at once with the other waiting player, the table opening by itself;
a watcher's standings update themselves; an ended arena shows its winner, and the winner's
profile says so."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, expect

from flyswat.server import arena_store as st
from flyswat.server.store import Store

from .conftest import serve

SECRET = "operator-secret-for-arenas"


@pytest.fixture(scope="module")
def arena_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("arena")
    with serve(folder, "--operator-secret", SECRET) as url:
        yield url, folder / "flyswat.db"


def _post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    head = {"content-type": "application/json", **(headers or {})}
    req = urllib.request.Request(url, json.dumps(body).encode(), head)
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read())


def _as(browser: Browser, who: dict[str, Any] | None) -> BrowserContext:
    context = browser.new_context(viewport={"width": 1100, "height": 760}, locale="en")
    if who is not None:
        saved = json.dumps({k: who[k] for k in ("player", "secret", "name")})
        context.add_init_script(f"localStorage.setItem('flyswat.player', {json.dumps(saved)})")
    return context


def test_joining_an_arena_seats_the_player_at_once_with_the_one_waiting(
    arena_server: tuple[str, Path], browser: Browser
) -> None:
    server, _ = arena_server
    arena = _post(server + "/api/operator/arenas", {"name": "Evening arena", "minutes": 30},
                  {"authorization": f"Bearer {SECRET}"})  # fmt: skip
    ines = _post(server + "/api/players", {"name": "Ines"})
    one, two, three = _as(browser, ines), _as(browser, None), _as(browser, None)
    player, newcomer, watcher = one.new_page(), two.new_page(), three.new_page()
    errors: list[str] = []
    for page in (player, newcomer, watcher):
        page.on("pageerror", lambda e: errors.append(str(e)))
    watcher.goto(server + "/?arena")
    watcher.click(f"a[data-open='{arena['id']}']")
    expect(watcher.locator(".arena h1")).to_have_text("Evening arena")
    expect(watcher.locator(".arena-standings")).to_have_count(0)  # nobody yet

    player.goto(f"{server}/?arena={arena['id']}")
    player.click("[data-join]")
    expect(player.locator("#arena-status")).to_contain_text("Waiting for opponents")
    expect(watcher.locator(".arena-standings tbody tr")).to_have_count(1)  # by itself

    newcomer.goto(f"{server}/?arena={arena['id']}")
    newcomer.fill("#arena-join input[name=player_name]", "Jonas")
    newcomer.click("[data-join]")
    for page in (player, newcomer):  # paired: each one's table opened by itself
        expect(page.locator(".table")).to_be_visible(timeout=20_000)
        expect(page.locator("#arena-bar")).to_contain_text("Back to the arena")
        assert f"arena={arena['id']}" in page.url
    assert player.url.split("table=")[1][:6] == newcomer.url.split("table=")[1][:6]
    expect(watcher.locator(".arena-standings tbody tr")).to_have_count(2)
    expect(watcher.locator(".arena-standings")).to_contain_text("playing")
    assert errors == []
    for context in (one, two, three):
        context.close()


def test_an_ended_arena_shows_its_winner_on_its_page_and_in_the_profile(
    arena_server: tuple[str, Path], browser: Browser
) -> None:
    server, db = arena_server
    kim, lea = (_post(server + "/api/players", {"name": n}) for n in ("Kim", "Lea"))
    store, now = Store(f"sqlite:///{db}"), time.time()
    try:
        with store.engine.begin() as conn:  # an arena that ended a minute ago, as kept
            st.create(conn, "past-arena", "Morning arena", now - 660, now - 60, now - 700)
            for who, points in ((kim, 7), (lea, 3)):
                st.join(conn, "past-arena", who["player"], who["name"], now - 600)
                mine = st.arena_players.c.player == who["player"]
                conn.execute(st.arena_players.update().where(mine).values(points=points, games=3))
    finally:
        store.close()
    context = _as(browser, lea)
    page = context.new_page()
    page.goto(server + "/?arena=past-arena")
    expect(page.locator("#arena-winner")).to_contain_text("Won by Kim with 7 points")
    expect(page.locator("[data-join]")).to_have_count(0)  # nobody joins an ended arena
    page.goto(f"{server}/?player={kim['player']}")
    expect(page.locator("#profile-arenas")).to_contain_text("Arenas won: 1")
    expect(page.locator("#profile-arenas")).to_contain_text("Winner")
    page.goto(f"{server}/?player={lea['player']}")
    expect(page.locator("#profile-arenas")).to_contain_text("place 2 of 2, 3 points")
    context.close()
