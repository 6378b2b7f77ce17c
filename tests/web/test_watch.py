"""Watching, in a real browser: Live now lists the games being played, the best-rated first,
and one click opens a game as a spectator; the home page's featured game is the best-rated
live one, watched live, and when it ends the next one takes its place."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from .conftest import serve

WEB = Path(__file__).resolve().parents[2] / "src" / "flyswat" / "web"


def strings(lang: str) -> dict[str, str]:
    data: dict[str, str] = json.loads((WEB / "i18n" / f"{lang}.json").read_text("utf-8"))
    return data


def _post(server: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(server + path, data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(req, timeout=5) as r:
        data: dict[str, Any] = json.loads(r.read())
    return data


def live_game(server: str, level: str, remove: int) -> str:
    """A started two-seat game of a person (whose turns the server plays after 0.4 s) and a
    bot of ``level``: its code. ``remove``: cards left out (R6), a shorter game."""
    seated = _post(server, "/api/tables", {
        "name": "Ana", "seats": 2, "bots": [{"seat": 1, "level": level}], "remove": remove,
        "slap_window_ms": 600, "turn_timeout_ms": 400,
    })  # fmt: skip
    _post(server, f"/api/tables/{seated['code']}/start", {"token": seated["token"]})
    return str(seated["code"])


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[str]:
    """A server of this test's own: the live list holds only its games."""
    with serve(tmp_path) as url:
        yield url


def test_live_now_lists_the_best_rated_first_and_one_click_watches_a_game(
    fresh: str, browser: Browser
) -> None:
    hard, easy = live_game(fresh, "hard", 0), live_game(fresh, "easy", 0)
    s = strings("en")
    ctx = browser.new_context(locale="en")
    page = ctx.new_page()
    page.goto(fresh + "/")
    page.click("nav a[data-nav=live]")
    expect(page.locator(".live h1")).to_have_text(s["live.title"])
    rows = page.locator(".live-list li")
    expect(rows).to_have_count(2)
    assert [rows.nth(i).get_attribute("data-code") for i in range(2)] == [hard, easy]
    expect(rows.first).to_contain_text(s["live.rating"].format(rating=2420))
    page.click(f".live-list li[data-code='{easy}'] a[data-watch]")
    expect(page).to_have_url(f"{fresh}/?table={easy}&watch")
    expect(page.locator(".table")).to_be_visible()
    expect(page.locator(".watching")).to_have_text(s["table.watching"])
    ctx.close()


def test_the_home_pages_featured_game_follows_the_next_one_when_it_ends(
    fresh: str, browser: Browser
) -> None:
    short = live_game(fresh, "hard", 100)  # the best-rated, and soon over
    long = live_game(fresh, "easy", 0)
    ctx = browser.new_context(locale="de")
    page = ctx.new_page()
    page.goto(fresh + "/")
    expect(page.locator("#featured h2")).to_have_text(strings("de")["tv.title"])
    expect(page.locator(f"#tv-screen[data-code='{short}'] .table")).to_be_visible()
    expect(page.locator(f"#tv-screen[data-code='{long}'] .table")).to_be_visible(timeout=60_000)
    expect(page.locator("#tv-screen .watching")).to_have_text(strings("de")["table.watching"])
    page.click("#featured a[data-watch]")  # the featured game, full size
    expect(page).to_have_url(f"{fresh}/?table={long}&watch")
    ctx.close()


def test_on_a_phone_live_now_is_reached_from_the_featured_game(
    fresh: str, browser: Browser
) -> None:
    code = live_game(fresh, "normal", 0)
    ctx = browser.new_context(locale="pt", viewport={"width": 390, "height": 844}, has_touch=True)
    page = ctx.new_page()
    page.goto(fresh + "/")
    expect(page.locator(f"#tv-screen[data-code='{code}'] .table")).to_be_visible()
    page.click("#featured a[data-live]")
    expect(page.locator(".live h1")).to_have_text(strings("pt")["live.title"])
    expect(page.locator(f".live-list li[data-code='{code}']")).to_be_visible()
    ctx.close()
