"""Challenges in real browsers: from a player's profile, "Challenge"; the other player's home
shows the invitation; they accept, and both are at the table and play. A declined challenge
is seen declined by the challenger waiting in its lobby, and on their home page."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from playwright.sync_api import Browser, BrowserContext, expect


def _register(server: str, name: str) -> dict[str, Any]:
    req = urllib.request.Request(server + "/api/players", json.dumps({"name": name}).encode(),
                                 {"content-type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(req) as r:
        return dict(json.loads(r.read()))


def _as(browser: Browser, who: dict[str, Any]) -> BrowserContext:
    """A browser whose saved identity is ``who`` (as after its first visit)."""
    context = browser.new_context(viewport={"width": 1100, "height": 760}, locale="en")
    saved = json.dumps({k: who[k] for k in ("player", "secret", "name")})
    context.add_init_script(f"localStorage.setItem('flyswat.player', {json.dumps(saved)})")
    return context


def test_a_challenge_from_a_profile_is_accepted_from_the_home_page(
    server: str, browser: Browser
) -> None:
    # Names no other test on this server takes (a second "Ines" is shown "Ines #Z5D").
    ines, jonas = _register(server, "Ines Duel"), _register(server, "Jonas")
    one, two = _as(browser, ines), _as(browser, jonas)
    challenger, challenged = one.new_page(), two.new_page()
    errors: list[str] = []
    for page in (challenger, challenged):
        page.on("pageerror", lambda e: errors.append(str(e)))
    challenger.goto(f"{server}/?player={ines['player']}")  # one's own profile: no button
    expect(challenger.locator(".profile h1")).to_contain_text("Ines")
    expect(challenger.locator("[data-challenge]")).to_have_count(0)
    challenger.goto(f"{server}/?player={jonas['player']}")
    challenger.click("[data-challenge]")
    expect(challenger.locator(".lobby")).to_be_visible()  # at the private table, hosting it

    challenged.goto(server + "/")
    invitation = challenged.locator("#challenges li[data-state=open]")
    expect(invitation).to_contain_text("Ines Duel challenges you")
    invitation.locator("[data-accept]").click()
    expect(challenged.locator(".lobby")).to_be_visible()
    expect(challenger.locator(".seat-list li[data-seat='1'] .who")).to_contain_text("Jonas")
    challenged.click("[data-action=ready]")
    challenger.click("[data-action=start]")
    expect(challenger.locator(".table")).to_be_visible()
    expect(challenged.locator(".table")).to_be_visible()
    assert errors == []
    one.close()
    two.close()


def test_a_declined_challenge_is_seen_declined(server: str, browser: Browser) -> None:
    kim, lea = _register(server, "Kim"), _register(server, "Lea")
    one, two = _as(browser, kim), _as(browser, lea)
    challenger, challenged = one.new_page(), two.new_page()
    challenger.goto(f"{server}/?player={lea['player']}")
    challenger.click("[data-challenge]")
    expect(challenger.locator(".lobby")).to_be_visible()
    challenged.goto(server + "/")
    challenged.locator("#challenges li[data-state=open] [data-decline]").click()
    expect(challenged.locator("#challenges li[data-state=open]")).to_have_count(0)
    answer = challenger.locator(".lobby .challenge-answer[data-state=declined]")
    expect(answer).to_contain_text("Lea declined your challenge")  # told in the lobby
    challenger.goto(server + "/")
    expect(challenger.locator("#challenges li[data-state=declined]")).to_contain_text("declined")
    one.close()
    two.close()
