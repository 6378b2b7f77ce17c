"""Accessibility in a real browser: axe-core's checks on every page a newcomer meets (0
serious or critical violations), a whole game played with the keyboard alone from home to the
end screen, what a screen reader is told (reveals, the slap window, the round's result), and
the keyboard overlay on "?".

axe-core comes from npm at the version tests/web/vendor/package.json pins; .ci/run installs it
there (``npm install --no-save``). Without it these checks are skipped, loudly."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from .conftest import serve
from .table_state import look
from .test_newcomer import PHONE, strings
from .test_newcomer_table import _create
from .test_watch import live_game

AXE = Path(__file__).resolve().parent / "vendor" / "node_modules" / "axe-core" / "axe.min.js"
DESK = {"viewport": {"width": 1366, "height": 768}}


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of this module's own."""
    with serve(tmp_path_factory.mktemp("access"), "--exempt", "127.0.0.1") as url:
        yield url


def _page(browser: Browser, size: dict[str, Any], lang: str = "en") -> Page:
    ctx = browser.new_context(locale=lang, **size)
    ctx.add_init_script(
        f"localStorage.setItem('flyswat.lang', {json.dumps(lang)});"
        "localStorage.setItem('flyswat.practice', '\"skipped\"');"
    )
    return ctx.new_page()


def _axe(page: Page, where: str) -> None:
    """axe-core's serious and critical violations on the page as it is now: none."""
    if not AXE.exists():
        pytest.skip(f"no {AXE}: cd tests/web/vendor && npm install --no-save")
    page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => ({id: v.id, impact: v.impact,
                        nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' '))}))"""
    )
    assert found == [], (where, found)


def _tab_to(page: Page, selector: str, limit: int = 80) -> None:
    """Press Tab until the focus is on ``selector`` (the keyboard's way to reach it), once it
    is on the page (a page drawn late, on a busy machine, was tabbed through before)."""
    expect(page.locator(selector).first).to_be_visible()
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("(sel) => document.activeElement?.matches(sel)", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


def _type(page: Page, text: str) -> None:
    page.keyboard.press("Control+A")
    page.keyboard.type(text)


def _keyboard_game(page: Page, server: str) -> None:
    """From home to the end screen with the keyboard alone: the create form (2 seats, one bot,
    6 cards), start, Space to reveal, Enter when done with a round."""
    page.goto(server + "/")
    _tab_to(page, "form#create input[name=name]")
    _type(page, "Keys Kim")
    _tab_to(page, "select[name=seats]")
    page.keyboard.type("2")
    _tab_to(page, "input[name=window]")
    _type(page, "0.5")
    _tab_to(page, "input[name=turn]")
    _type(page, "20")
    _tab_to(page, "details summary")
    page.keyboard.press("Enter")
    _tab_to(page, "input[name=remove]")
    _type(page, "106")
    page.keyboard.press("Enter")  # submits the form
    expect(page.locator(".lobby")).to_be_visible()
    _tab_to(page, "[data-action=start]")
    page.keyboard.press("Enter")
    expect(page.locator(".table")).to_be_visible()
    for _ in range(400):
        st = look(page)
        if st["end"]:
            return
        if st["open"]:
            page.keyboard.press("Enter")  # done: no hand this round
        elif st["reveal"]:
            page.keyboard.press("Space")
        page.wait_for_timeout(100)
    raise AssertionError("the game did not end")


def test_axe_finds_nothing_serious_on_home_lobby_table_end_profile_leaderboard_replays_and_live(
    own: str, browser: Browser
) -> None:
    for size in (PHONE, DESK):
        page = _page(browser, size)
        page.goto(own + "/")
        expect(page.locator("#play-now")).to_be_visible()
        _axe(page, "home")
        _create(page, own, "Axe Ada", 2)
        _axe(page, "lobby")
        page.click("[data-action=start]")
        expect(page.locator(".table")).to_be_visible()
        _axe(page, "table")
        expect(page.locator(".end table.scores")).to_be_visible(timeout=30_000)
        expect(page.locator(".end tr[data-seat='0'] .delta")).to_be_visible()
        _axe(page, "end")
        page.click("header a[data-nav=profile]")
        expect(page.locator(".profile h1")).to_be_visible()
        _axe(page, "profile")
        page.click("header a[data-nav=leaderboard]")
        expect(page.locator(".leaderboard h1")).to_be_visible()
        _axe(page, "leaderboard")
        page.goto(own + "/?ratings")
        expect(page.locator(".ratings-page h1")).to_be_visible()
        _axe(page, "ratings")
        page.click("header a[data-nav=replay]")  # the game just played is listed
        expect(page.locator(".public-games li").first).to_be_visible()
        _axe(page, "replays")
        code = live_game(own, "normal", 0)  # Live now lists it (a phone reaches it by address)
        page.goto(own + "/?live")
        expect(page.locator(f".live-list li[data-code='{code}']")).to_be_visible()
        _axe(page, "live")
        page.goto(own + f"/?table={code}&watch")
        expect(page.locator(".watching")).to_be_visible()
        _axe(page, "watching")
        page.context.close()


def test_tab_passes_a_featured_game_and_a_spectator_has_no_card_to_focus(
    own: str, browser: Browser
) -> None:
    """The featured game redraws at every reveal: a card there that took the focus lost it at
    the next one, and Tab went round the top of the page and into the game again, never
    reaching the forms below. Nothing in the preview is focusable, and the cards of a game
    one watches are not buttons (only a seated player's are)."""
    code = live_game(own, "normal", 0)
    page = _page(browser, DESK)
    page.goto(own + "/")
    expect(page.locator("#tv-screen .fly-card").first).to_be_visible(timeout=30_000)
    visited = []
    for _ in range(60):
        page.keyboard.press("Tab")
        visited.append(page.evaluate(
            "() => [document.activeElement.closest('#tv-screen') !== null,"
            " document.activeElement.matches('form#create input[name=name]')]"
        ))  # fmt: skip
    assert not any(in_tv for in_tv, _ in visited)
    assert any(name for _, name in visited)
    page.goto(own + f"/?table={code}&watch")
    expect(page.locator(".table .fly-card").first).to_be_visible(timeout=30_000)
    assert page.locator("button.fly-card").count() == 0
    page.context.close()


def test_a_whole_game_is_played_with_the_keyboard_alone_from_home_to_the_end_screen(
    own: str, browser: Browser
) -> None:
    live_game(own, "normal", 0)  # the home page features it: Tab passes it on the way
    page = _page(browser, DESK)
    _keyboard_game(page, own)
    expect(page.locator(".end #end-title")).to_be_focused()  # the end takes the focus
    _tab_to(page, ".end [data-action=rematch]", limit=10)
    page.keyboard.press("Enter")  # the bot accepts at once: the next game starts
    expect(page.locator(".end")).to_have_count(0)
    expect(page.locator(".table")).to_be_visible()
    page.context.close()


def test_a_screen_reader_hears_the_reveal_the_slap_window_and_the_rounds_result(
    own: str, browser: Browser
) -> None:
    page = _page(browser, DESK, "de")
    de = strings("de")
    page.goto(own + "/?practice=2")  # the bot reveals a swatter: a round with a 20 s window
    live = page.locator("#announce")
    expect(live).to_have_attribute("aria-live", "polite")
    opened = de["table.announceOpen"].split("{s}")[1].strip()  # "Sekunden zum Klatschen."
    expect(live).to_contain_text(opened)
    expect(live).to_contain_text("20")
    page.keyboard.press("Enter")  # done: the bot's hands decide the round
    won = de["table.eventWon"].split("{card}")[0].split("{name}")[1].strip()
    expect(live).to_contain_text(won)
    expect(page.locator(".fly-card.won")).not_to_have_count(0)
    _axe(page, "a decided round")  # the flies' names hold the words shown on them
    page.context.close()


def test_question_mark_opens_the_keys_and_escape_closes_them_without_playing(
    own: str, browser: Browser
) -> None:
    page = _page(browser, DESK, "vi")
    vi = strings("vi")
    page.goto(own + "/?practice=1")
    expect(page.locator("button.reveal:not([disabled])")).to_be_visible()
    page.keyboard.press("?")
    help_ = page.locator("#keys-help")
    expect(help_).to_be_visible()
    expect(help_.locator("h2")).to_have_text(vi["keys.title"])
    expect(help_).to_contain_text(vi["keys.reveal"])
    page.keyboard.press("Space")  # on the close button: closes, reveals nothing
    expect(help_).to_be_hidden()
    expect(page.locator("button.reveal:not([disabled])")).to_be_visible()
    page.keyboard.press("?")
    expect(help_).to_be_visible()
    page.keyboard.press("Escape")
    expect(help_).to_be_hidden()
    page.context.close()
