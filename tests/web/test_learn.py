"""How to play (issue 14): the offer on a first visit, the rules page, and the practice game —
six lessons on the live table against a slow bot, played by the browser's rules (R10–R24) in
every language, by touch on a phone; with the sounds and moves of the table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from .pagewatch import WATCH_JS

WEB = Path(__file__).resolve().parents[2] / "src" / "flyswat" / "web"
LANGUAGES = ["en", "pt", "es", "vi", "de"]
RULES = ["goal", "cards", "turn", "swat", "allowed", "fifth", "wrong", "stack", "hands", "end"]


def strings(lang: str) -> dict[str, str]:
    data: dict[str, str] = json.loads((WEB / "i18n" / f"{lang}.json").read_text("utf-8"))
    return data


def _phase(page: Page, lesson: str, phase: str) -> None:
    coach = page.locator(".coach")
    expect(coach).to_have_attribute("data-lesson", lesson)
    expect(coach).to_have_attribute("data-phase", phase)


def _tap(page: Page, selector: str, touch: bool) -> None:
    if touch:
        page.locator(selector).tap()
    else:
        page.locator(selector).click()


def test_a_first_visit_offers_the_practice_game_and_skip_is_remembered(
    server: str, browser: Browser
) -> None:
    ctx = browser.new_context(locale="pt-PT")
    page = ctx.new_page()
    page.goto(server + "/")
    offer = page.locator("#first-visit")
    expect(offer).to_contain_text(strings("pt")["learn.offer"])
    page.click("#first-visit [data-learn=skip]")
    expect(offer).to_have_count(0)
    page.reload()
    expect(page.locator("h1")).to_have_text(strings("pt")["home.title"])
    expect(offer).to_have_count(0)
    # The way to learn stays on the page, and in the header.
    page.click(".learn-links [data-learn=practice]")
    expect(page.locator(".coach-title")).to_have_text(strings("pt")["learn.c1.title"])
    page.click("nav [data-nav=learn]")
    expect(page.locator(".rules h1")).to_have_text(strings("pt")["rules.title"])
    ctx.close()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_rules_page_explains_every_rule_with_the_rulebooks_two_examples(
    server: str, browser: Browser, lang: str, artifacts: Path
) -> None:
    s = strings(lang)
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, locale=lang, has_touch=True)
    page = ctx.new_page()
    page.goto(server + "/?learn")
    for key in RULES:
        expect(page.locator(f"#rule-{key} h2")).to_have_text(s[f"rules.{key}.h"])
        expect(page.locator(f"#rule-{key} p").first).to_have_text(s[f"rules.{key}.p"])
    # R14's example: red and green tie, both allowed; R13's: red only.
    expect(page.locator("#rule-allowed figcaption .badge")).to_have_count(2)
    expect(page.locator("#rule-fifth figcaption .badge")).to_have_count(1)
    expect(page.locator("#rule-fifth figcaption")).to_contain_text(s["colour.R"])
    page.screenshot(path=str(artifacts / f"rules-{lang}-phone.png"), full_page=True)
    page.locator("#rule-end ~ section [data-go=practice]").tap()
    expect(page.locator(".coach-title")).to_have_text(s["learn.c1.title"])
    ctx.close()


def test_strings_lost_on_the_way_are_asked_again_and_fill_the_page(
    server: str, browser: Browser
) -> None:
    """A dropped connection or a busy answer for a language's strings is not a blank page."""
    ctx = browser.new_context(locale="de")
    page = ctx.new_page()
    asked: list[str] = []

    def drop_twice(route: Route) -> None:
        asked.append(route.request.url)
        if len(asked) == 1:
            route.abort("connectionreset")
        elif len(asked) == 2:
            route.fulfill(status=503, body="busy")
        else:
            route.continue_()

    page.route("**/i18n/de.json", drop_twice)
    page.goto(server + "/?learn")
    expect(page.locator("#rule-goal h2")).to_have_text(strings("de")["rules.goal.h"])
    expect(page.locator("#lang")).to_have_value("de")
    assert len(asked) == 3
    ctx.close()


def _walk(page: Page, touch: bool) -> None:
    """Plays the six lessons as a newcomer is told to, checking the rules as they happen."""
    # 1. Reveal (R10, R11): two reveals of ours, the bot's in between.
    _phase(page, "c1", "setup")
    _tap(page, "button.reveal", touch)
    expect(page.locator(".fly-card[data-card='R3-1']")).to_be_visible()
    _phase(page, "c1", "yourTurn")
    expect(page.locator(".fly-card[data-card='G4-1']")).to_be_visible()
    _tap(page, "button.reveal", touch)
    _phase(page, "c1", "done")
    _tap(page, "[data-coach=next]", touch)
    # 2. A swatter; red and green tie (R14, the rulebook's second example).
    _phase(page, "c2", "go")
    expect(page.locator(".trigger-zone.swat")).to_be_visible()
    _tap(page, ".fly-card[data-card='R4-1']", touch)
    _tap(page, ".fly-card[data-card='G5-1']", touch)
    _phase(page, "c2", "done")
    expect(page.locator(".resolved .allowed .badge")).to_have_count(2)
    expect(page.locator(".seat.me .count-won")).to_have_text("2")
    _tap(page, "[data-coach=next]", touch)
    # 3. A wrong slap pays the most recent won fly to the bottom of the draw pile (R19).
    _phase(page, "c3", "go")
    draw = int(page.locator(".seat.me .count-draw").inner_text())
    _tap(page, ".fly-card[data-card='B3-1']", touch)
    _tap(page, "button.done", touch)
    _phase(page, "c3", "done")
    expect(page.locator(".fly-card[data-card='B3-1']")).to_have_class("fly-card wrong")
    expect(page.locator(".seat.me .count-won")).to_have_text("1")
    expect(page.locator(".seat.me .count-draw")).to_have_text(str(draw + 1))
    _tap(page, "[data-coach=next]", touch)
    # 4. Hands stack in arrival order; the bottom one wins (R17, R18).
    _phase(page, "c4", "go")
    expect(page.locator(".seat[data-seat='1'] .laid .hand")).to_have_count(1)
    _tap(page, ".fly-card[data-card='O5-1']", touch)
    _tap(page, "button.done", touch)
    _phase(page, "c4", "done")
    expect(page.locator(".fly-card[data-card='O5-1'] .hands-stack .hand text")).to_have_text(
        ["2", "1"]
    )
    expect(page.locator(".fly-card[data-card='O5-1'] .won-mark")).to_contain_text("Slow bot")
    _tap(page, "[data-coach=next]", touch)
    # 5. A fifth colour opens a round; red alone is allowed (R13, the rulebook's first example).
    _phase(page, "c5", "setup")
    _tap(page, "button.reveal", touch)
    _phase(page, "c5", "go")
    expect(page.locator(".trigger-zone.fifth")).to_be_visible()
    _tap(page, ".fly-card[data-card='R5-1']", touch)
    _tap(page, "button.done", touch)
    _phase(page, "c5", "done")
    expect(page.locator(".resolved .allowed .badge")).to_have_count(1)
    expect(page.locator(".fly-card[data-card='B2-3']")).to_have_count(0)
    _tap(page, "[data-coach=next]", touch)
    # 6. The last card of a pile ends the game (R22); points and places (R23, R24).
    _phase(page, "c6", "setup")
    _tap(page, "button.reveal", touch)
    _phase(page, "c6", "done")
    expect(page.locator(".end table.scores tbody tr")).to_have_count(2)


def test_the_practice_game_walks_a_newcomer_through_every_rule_on_a_phone(
    server: str, browser: Browser, artifacts: Path
) -> None:
    ctx = browser.new_context(
        viewport={"width": 390, "height": 844}, locale="en", has_touch=True, is_mobile=True
    )
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server + "/")
    page.locator("#first-visit [data-learn=practice]").tap()
    # A phone has no Space bar: the first lesson names none.
    expect(page.locator(".coach-text")).to_have_text(strings("en")["learn.c1.setupTouch"])
    _walk(page, touch=True)
    page.screenshot(path=str(artifacts / "practice-end-phone.png"))
    expect(page.locator("[data-coach=finish]")).to_be_visible()
    page.locator("[data-coach=finish]").tap()
    expect(page.locator("form#create")).to_be_visible()
    expect(page.locator("#play-now :focus")).to_have_count(1)  # where a real game begins
    expect(page.locator("#first-visit")).to_have_count(0)  # learnt: not offered again
    assert not errors, errors
    ctx.close()


@pytest.mark.parametrize("lang", LANGUAGES[1:])
def test_the_practice_game_speaks_every_language(
    server: str, browser: Browser, lang: str, artifacts: Path
) -> None:
    s = strings(lang)
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, locale=lang)
    page = ctx.new_page()
    page.goto(server + "/?practice")
    expect(page.locator(".coach-text")).to_have_text(s["learn.c1.setup"])
    expect(page.locator("button.reveal")).to_contain_text(s["table.reveal"])
    page.keyboard.press("Space")
    _phase(page, "c1", "yourTurn")
    expect(page.locator(".coach-text")).to_have_text(s["learn.yourTurn"])
    expect(page.locator(".seat[data-seat='1'] .seat-name")).to_have_text(s["learn.botName"])
    page.keyboard.press("Space")
    _phase(page, "c1", "done")
    page.click("[data-coach=next]")
    _phase(page, "c2", "go")
    expect(page.locator(".coach-text")).to_have_text(s["learn.c2.go"])
    expect(page.locator(".trigger-text strong")).to_have_text(s["table.swatter"])
    page.keyboard.press("1")
    page.keyboard.press("2")  # keys shown on the flies: R3-2, G2-1
    _phase(page, "c2", "done")
    page.screenshot(path=str(artifacts / f"practice-{lang}.png"))
    page.click("[data-coach=skip]")
    expect(page.locator("form#create")).to_be_visible()
    ctx.close()


def test_sounds_wait_for_a_gesture_follow_the_switch_and_it_is_remembered(
    server: str, browser: Browser
) -> None:
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en")
    ctx.add_init_script(WATCH_JS)
    page = ctx.new_page()
    page.goto(server + "/?practice")
    _phase(page, "c1", "setup")
    switch = page.locator("#sound")
    expect(switch).to_have_attribute("aria-pressed", "true")
    assert page.evaluate("window.__audio") == 0  # nothing before a gesture
    page.click("button.reveal")
    page.wait_for_function("window.__sounds.includes('reveal')")
    # the bot reveals, and then it is our turn again
    page.wait_for_function("window.__sounds.includes('turn')")
    page.click("button.reveal")
    _phase(page, "c1", "done")
    page.click("[data-coach=next]")
    page.wait_for_function("window.__sounds.includes('swatter')")
    page.keyboard.press("1")
    page.wait_for_function("window.__sounds.includes('slap')")
    page.keyboard.press("5")
    page.wait_for_function("window.__sounds.includes('win')")
    page.click("[data-coach=next]")
    _phase(page, "c3", "go")
    page.keyboard.press("3")  # the blue fly: a wrong slap (R19)
    page.keyboard.press("Enter")
    page.wait_for_function("window.__sounds.includes('penalty')")
    assert page.evaluate("window.__audio") == 1  # one AudioContext, made after the gesture
    switch.click()
    expect(switch).to_have_attribute("aria-pressed", "false")
    page.evaluate("window.__sounds = []")
    page.click("[data-coach=next]")
    _phase(page, "c4", "go")
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    _phase(page, "c4", "done")
    assert page.evaluate("window.__sounds") == []
    page.reload()
    expect(page.locator("#sound")).to_have_attribute("aria-pressed", "false")
    page.locator("#sound").click()
    page.goto(server + "/?practice=5")
    expect(page.locator("#sound")).to_have_attribute("aria-pressed", "true")
    _phase(page, "c5", "setup")
    page.keyboard.press("Space")  # a gesture, and a fly of a fifth colour (R13)
    page.wait_for_function("window.__sounds.includes('fifth')")
    ctx.close()


def test_sound_starts_off_for_a_player_who_asks_for_reduced_motion(
    server: str, browser: Browser
) -> None:
    ctx = browser.new_context(reduced_motion="reduce", locale="en")
    page = ctx.new_page()
    page.goto(server + "/")
    expect(page.locator("#sound")).to_have_attribute("aria-pressed", "false")
    expect(page.locator("#sound")).to_have_attribute("aria-label", strings("en")["sound.off"])
    ctx.close()


def test_won_flies_and_penalty_cards_travel_and_hands_drop_in_stacking_order(
    server: str, browser: Browser
) -> None:
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en")
    ctx.add_init_script(WATCH_JS)
    page = ctx.new_page()
    page.goto(server + "/?practice")
    page.click("button.reveal")
    _phase(page, "c1", "yourTurn")
    page.click("button.reveal")
    page.click("[data-coach=next]")
    _phase(page, "c2", "go")
    expect(page.locator(".seat[data-seat='1'] .laid .hand")).to_have_count(1)  # the bot: R4-1
    page.click(".fly-card[data-card='R4-1']")
    page.click(".fly-card[data-card='G5-1']")
    _phase(page, "c2", "done")
    page.wait_for_function("window.__moves.length >= 2")
    moves = page.evaluate("window.__moves")
    assert sorted(moves) == [["won", "0", "G5-1"], ["won", "1", "R4-1"]]
    # The hands on R4-1 drop one after the other, bottom first (R17).
    delays = page.eval_on_selector_all(
        ".fly-card[data-card='R4-1'] .stacked",
        "els => els.map(e => getComputedStyle(e)).map(c => [c.animationName, c.animationDelay])",
    )
    assert delays == [["hand-drop", "0s"], ["hand-drop", "0.09s"]]
    # The moves take no input: the coach's button works while they fly.
    layer = "getComputedStyle(document.getElementById('moves')).pointerEvents"
    assert page.evaluate(layer) == "none"
    page.click("[data-coach=next]")
    _phase(page, "c3", "go")
    page.evaluate("window.__moves = []")
    page.click(".fly-card[data-card='P4-1']")
    page.keyboard.press("Enter")
    _phase(page, "c3", "done")
    page.wait_for_function("window.__moves.some(m => m[0] === 'penalty')")
    assert ["penalty", "0", "G5-1"] in page.evaluate("window.__moves")
    ctx.close()


def test_no_moves_for_a_player_who_asks_for_reduced_motion(server: str, browser: Browser) -> None:
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, reduced_motion="reduce")
    ctx.add_init_script(WATCH_JS)
    page = ctx.new_page()
    page.goto(server + "/?practice")
    page.click("button.reveal")
    _phase(page, "c1", "yourTurn")
    page.click("button.reveal")
    page.click("[data-coach=next]")
    _phase(page, "c2", "go")
    page.click(".fly-card[data-card='R4-1']")
    page.click(".fly-card[data-card='G5-1']")
    _phase(page, "c2", "done")
    expect(page.locator(".fly-card[data-card='R4-1'] .stacked").first).to_be_visible()
    names = page.eval_on_selector_all(
        ".fly-card .stacked", "els => els.map(e => getComputedStyle(e).animationName)"
    )
    assert names and set(names) == {"none"}
    assert page.evaluate("window.__moves") == []
    ctx.close()
