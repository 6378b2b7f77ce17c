"""A new player in a real browser (a phone): Play now, the bots' countdown, a game, a
rematch, the rating change at the end, the record downloaded and verified, both games on the
profile, the leaderboard — in English and in German. And a lobby's host removing a player,
a player leaving, and the host giving the free seat to a bot."""

from __future__ import annotations

import contextlib
import json
import random
import time
from pathlib import Path

from playwright.sync_api import Browser, BrowserContext, Page, Route, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from flyswat.record import verify_record

from .table_state import look, tap_now

# Well above the human floor even when a loaded machine paints the trigger late; each
# round's delay spreads as a person's does (a long tail), or the fair-play detector takes
# the player for a script and their games go unrated (docs/PLAYERS.md, Fair play).
HUMAN_DELAY_S = 0.6


def _human_delay() -> float:
    return HUMAN_DELAY_S + min(1.5, random.expovariate(1 / 0.3))


def _play_to_the_end(page: Page, limit_s: float = 150) -> None:
    """Reveal on our turn, lay a hand on a fly a human moment after a round opens, then say
    done — once a round."""
    opened: float | None = None
    opened_by: str | None = None
    acted_in: str | None = None  # the round we laid our hand in and said done
    delay = _human_delay()
    start = time.monotonic()
    while time.monotonic() - start < limit_s:
        st = look(page)
        if st["end"]:
            return
        if st["reveal"]:
            # Not actionable within 2 s on a busy machine (a slow frame): the next look.
            with contextlib.suppress(PlaywrightTimeoutError):
                page.locator("button.reveal").tap(timeout=2000)
        elif st["open"]:
            # A round is known by its key (ROUND_KEY_JS): the next may open between two looks.
            if st["trigger"] != opened_by or opened is None:
                opened, opened_by, delay = time.monotonic(), st["trigger"], _human_delay()
            late = time.monotonic() - opened > delay
            if st["slappable"] and st["free"] and late and acted_in != opened_by:
                acted_in = opened_by
                # One hand is all this player lays: they say they are done, as a person
                # does, and the round closes when the bots are (R21), not at the window.
                if tap_now(page, ".fly-card.slappable"):
                    tap_now(page, "button.done:not([disabled])")
        else:
            opened, opened_by = None, None
        time.sleep(0.05)
    raise AssertionError("the game did not end in time")


def test_a_new_player_plays_now_rematches_and_finds_both_games(
    server: str, browser: Browser, artifacts: Path
) -> None:
    phone = browser.new_context(viewport={"width": 390, "height": 844}, locale="en-GB",
                                has_touch=True, accept_downloads=True,
                                service_workers="allow")  # fmt: skip
    page = phone.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server + "/")
    page.fill("#play-now-form input[name=player_name]", "Bot 7")  # posing as a bot: refused
    page.click("#play-now-form button")
    expect(page.locator("#play-now-error")).to_contain_text("name")
    page.fill("#play-now-form input[name=player_name]", "Nadia")
    page.click("#play-now-form button")
    countdown = page.locator(".fill-countdown")
    expect(countdown).to_contain_text("Bots take the free seats in")
    page.screenshot(path=str(artifacts / "play-now-lobby-phone.png"))
    expect(page.locator(".table")).to_be_visible(timeout=20_000)  # the bots came, it started
    expect(page.locator(".seat")).to_have_count(4)
    _play_to_the_end(page)
    expect(page.locator(".end .rating-delta .delta")).to_have_count(1)
    first_delta = page.locator(".end .rating-delta .delta").inner_text()
    assert first_delta[0] in "+−±", first_delta
    page.screenshot(path=str(artifacts / "end-rating-phone.png"))

    page.click(".end [data-action=rematch]")  # bots always accept: it starts at once
    expect(page.locator(".end")).to_have_count(0)
    expect(page.locator(".table")).to_be_visible()
    _play_to_the_end(page)
    expect(page.locator(".end .rating-delta .delta")).to_have_count(1)

    with page.expect_download() as download:
        page.click(".end [data-download]")
    saved = artifacts / "downloaded-record.json"
    download.value.save_as(saved)
    record = json.loads(saved.read_text())
    assert verify_record(record) == []
    assert record["seats"][0]["name"] == "Nadia"

    page.click(".end [data-action=profile]")
    expect(page.locator(".profile h1")).to_contain_text("Nadia")
    expect(page.locator(".profile table.games tbody tr")).to_have_count(2)
    assert page.locator(f".profile tr[data-game='{record['id']}']").count() == 1
    expect(page.locator(".profile .facts")).to_contain_text("Rating")
    expect(page.locator(".profile svg.spark")).to_have_count(2)  # reaction and rating plots
    page.screenshot(path=str(artifacts / "profile-phone.png"), full_page=True)

    page.select_option("#lang", "de")
    expect(page.locator(".profile .facts")).to_contain_text("Wertung")
    expect(page.locator(".profile h2").first).to_have_text("Spiele")
    page.click("a[data-page='?leaderboard']")
    expect(page.locator(".leaderboard h1")).to_have_text("Rangliste")
    expect(page.locator(".leaderboard tr.mine")).to_contain_text("Nadia")
    expect(page.locator(".leaderboard .bots-scale")).to_contain_text("Bot · schwer")
    page.screenshot(path=str(artifacts / "leaderboard-phone-de.png"), full_page=True)
    page.select_option("#lang", "en")
    expect(page.locator(".leaderboard h1")).to_have_text("Leaderboard")

    page.locator(".leaderboard tr.mine a").click()  # from the leaderboard to the profile
    page.locator(".profile [data-replay]").first.click()  # a game's replay, one click away
    expect(page.locator(".replay-note")).to_contain_text("agrees with the rules")
    assert not errors, errors
    phone.close()


def _private_lobby(
    browser: Browser, server: str, host_name: str
) -> tuple[BrowserContext, BrowserContext, Page, Page, str]:
    """A host's private three-seat lobby (two human seats free), and a second browser:
    ``(host's context, guest's context, host, guest, link)``."""
    laptop = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en")
    other = browser.new_context(viewport={"width": 1024, "height": 700}, locale="en")
    host, guest = laptop.new_page(), other.new_page()
    host.goto(server + "/")
    host.fill("form#create input[name=name]", host_name)
    host.select_option("select[name=seats]", "3")
    host.select_option("select[name=seat1]", "human")
    host.select_option("select[name=seat2]", "human")
    host.uncheck("form#create input[name=public]")  # private: by link only
    host.click("form#create button[type=submit]")
    return laptop, other, host, guest, host.input_value("#share-link")


def test_the_host_removes_a_player_who_comes_back_and_leaves_and_a_bot_sits_down(
    server: str, browser: Browser
) -> None:
    laptop, other, host, guest, link = _private_lobby(browser, server, "Olga")
    code = link.split("table=")[1]
    guest.goto(server + "/")
    expect(guest.locator(f"#open-tables [data-code='{code}']")).to_have_count(0)
    guest.goto(link)
    guest.fill("form#join-seat input[name=name]", "Pavel")
    guest.click("form#join-seat button")
    expect(host.locator(".seat-list li[data-seat='1'] .who")).to_contain_text("Pavel")
    expect(host.locator(".seat-list li[data-seat='1'] .pill.rating")).to_have_text("1000")

    host.click(".seat-list li[data-seat='1'] [data-action=kick]")
    expect(guest.locator("#toast")).to_contain_text("removed you")
    expect(guest.locator("form#join-seat")).to_be_visible()  # watching, free to join again
    expect(host.locator(".seat-list li[data-seat='1'].free")).to_have_count(1)

    guest.click("form#join-seat button")  # the name is his now: it is kept
    expect(host.locator(".seat-list li[data-seat='1'] .who")).to_contain_text("Pavel")
    guest.click("[data-action=leave]")
    expect(guest.locator("#play-now")).to_be_visible()  # back home
    expect(host.locator(".seat-list li[data-seat='1'].free")).to_have_count(1)

    host.click(".seat-list li[data-seat='2'] [data-action=seat-bot]")
    expect(host.locator(".seat-list li[data-seat='2'] .pill.bot")).to_be_visible()
    expect(host.locator(".seat-list li[data-seat='2'] .pill.rating")).to_have_text("1000")
    laptop.close()
    other.close()


def test_a_join_whose_reply_is_lost_is_sent_again_and_gets_the_same_seat(
    server: str, browser: Browser
) -> None:
    laptop, other, host, guest, link = _private_lobby(browser, server, "Rosa")
    sent: list[dict[str, str]] = []

    def lose_the_first_reply(route: Route) -> None:
        sent.append(route.request.post_data_json)
        if len(sent) == 1:
            route.fetch()  # the server takes the seat and stores it ...
            route.abort("connectionreset")  # ... and its reply never arrives
        else:
            route.continue_()

    guest.route("**/api/tables/*/join", lose_the_first_reply)
    guest.goto(link)
    guest.fill("form#join-seat input[name=name]", "Sven")
    guest.click("form#join-seat button")
    expect(host.locator(".seat-list li[data-seat='1'] .who")).to_contain_text("Sven")
    expect(guest.locator("form#join-seat")).to_have_count(0)  # seated, with the token
    assert len(sent) == 2 and sent[0] == sent[1]  # the same attempt: the same request key
    assert len(sent[0]["request"]) == 22
    expect(host.locator(".seat-list li[data-seat='2'].free")).to_have_count(1)  # no 2nd seat
    laptop.close()
    other.close()


#: The Reveal button's own animation, its ``::after``'s, and that pseudo-element's box.
REVEAL_STYLE_JS = """() => { const b = document.querySelector('button.reveal');
  const after = getComputedStyle(b, '::after');
  return [getComputedStyle(b).animationName, after.animationName, after.bottom, after.height]; }"""


def test_the_reveal_button_glows_while_its_turn_timer_runs_out_along_its_bottom(
    server: str, browser: Browser
) -> None:
    """On the player's turn the button glows (its own box-shadow animation) and the turn
    timer runs out as a bar along its bottom edge (its ``::after``); a change that drew the
    glow with ``::after`` too took the timer's bar for it, unseen by every other test."""
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True,
                              locale="en")  # fmt: skip
    page = ctx.new_page()
    page.goto(server + "/")
    page.fill("#play-now-form input[name=player_name]", "Tamsin")
    page.click("#play-now-form button")
    page.wait_for_selector("button.reveal.timed:not([disabled])", timeout=30_000)
    glow, bar, bottom, height = page.evaluate(REVEAL_STYLE_JS)
    assert (glow, bar, bottom, height) == ("glow", "run-out", "0px", "4px")
    ctx.close()
