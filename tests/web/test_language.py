"""Languages: the browser's language is the default, the switch changes every string on the
page at once and is remembered, and server errors are shown in the chosen language."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Browser, expect

WEB = Path(__file__).resolve().parents[2] / "src" / "flyswat" / "web"


def strings(lang: str) -> dict[str, str]:
    data: dict[str, str] = json.loads((WEB / "i18n" / f"{lang}.json").read_text("utf-8"))
    return data


def test_the_browser_language_is_the_default_and_the_switch_changes_every_string(
    server: str, browser: Browser
) -> None:
    ctx = browser.new_context(locale="de-DE")
    page = ctx.new_page()
    page.goto(server + "/")
    expect(page.locator("h1")).to_have_text(strings("de")["home.title"])
    expect(page.locator("#lang")).to_have_value("de")
    for lang in ("vi", "pt", "es", "en"):
        s = strings(lang)
        page.select_option("#lang", lang)
        expect(page.locator("h1")).to_have_text(s["home.title"])
        expect(page.locator("html")).to_have_attribute("lang", lang)
        expect(page.locator("form#create button[type=submit]")).to_have_text(s["home.createButton"])
        shown = page.eval_on_selector_all(
            "[data-i18n]", "els => els.map(e => [e.dataset.i18n, e.textContent])"
        )
        assert shown and all(text == s[key] for key, text in shown), shown
    page.select_option("#lang", "vi")
    expect(page.locator("h1")).to_have_text(strings("vi")["home.title"])
    page.reload()
    expect(page.locator("h1")).to_have_text(strings("vi")["home.title"])
    ctx.close()


def test_a_server_error_is_shown_in_the_players_words(server: str, browser: Browser) -> None:
    ctx = browser.new_context(locale="es-ES")
    page = ctx.new_page()
    page.goto(server + "/?table=NOSUCH")
    expect(page.locator(".error-text")).to_have_text(strings("es")["error.not_found"])
    ctx.close()
