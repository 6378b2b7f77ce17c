"""A bot account in a real browser: the lobby says the table takes bot accounts, the bot
account's seat and profile carry the "BOT" mark, a person's do not (docs/PLAYERS.md, *Bot
accounts*)."""

from __future__ import annotations

from pathlib import Path

import httpx
from playwright.sync_api import Browser, expect


def test_a_bot_accounts_seat_and_profile_are_marked_as_a_program(
    server: str, browser: Browser, artifacts: Path
) -> None:
    ana = httpx.post(f"{server}/api/players", json={"name": "Marta"}).json()
    auth = {"player": ana["player"], "secret": ana["secret"]}
    bot = httpx.post(f"{server}/api/bots", json={**auth, "name": "Klatschomat"}).json()
    table = httpx.post(f"{server}/api/tables", json={**auth, "name": "x", "seats": 3,
                                                    "bot_accounts": True}).json()  # fmt: skip
    mine = {"player": bot["player"], "secret": bot["secret"], "name": "x"}
    joined = httpx.post(f"{server}/api/tables/{table['code']}/join", json=mine)
    assert joined.status_code == 201, joined.text
    page = browser.new_context(locale="en-GB").new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{server}/?table={table['code']}")
    expect(page.locator(".lobby p.muted").first).to_contain_text("bot accounts (programs) may play")
    seat = page.locator(".seat-list li", has_text="Klatschomat")
    expect(seat.locator(".bot-mark")).to_have_text("BOT")
    expect(page.locator(".seat-list li", has_text="Marta").locator(".bot-mark")).to_have_count(0)
    page.screenshot(path=str(artifacts / "bot-mark-lobby.png"))
    page.goto(f"{server}/?player={bot['player']}")
    expect(page.locator("h1 .bot-mark")).to_have_text("BOT")
    page.goto(f"{server}/?player={ana['player']}")
    expect(page.locator("h1", has_text="Marta")).to_be_visible()
    expect(page.locator("h1 .bot-mark")).to_have_count(0)
    assert errors == []
