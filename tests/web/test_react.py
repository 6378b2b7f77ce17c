"""Quick reactions in two real browsers: a player reacts between rounds and the other sees it
by the seat; the mute switch hides them and is remembered after a reload."""

from __future__ import annotations

from playwright.sync_api import Browser, expect


def test_a_reaction_between_rounds_is_seen_by_the_other_and_muting_is_remembered(
    server: str, browser: Browser
) -> None:
    laptop = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en")
    other = browser.new_context(viewport={"width": 1024, "height": 700}, locale="en")
    host, guest = laptop.new_page(), other.new_page()
    errors: list[str] = []
    for page in (host, guest):
        page.on("pageerror", lambda e: errors.append(str(e)))
    host.goto(server + "/")
    host.fill("form#create input[name=name]", "Greta")
    host.select_option("select[name=seats]", "2")
    host.select_option("select[name=seat1]", "human")
    host.fill("form#create input[name=turn]", "60")  # nobody reveals: no round opens
    host.uncheck("form#create input[name=public]")
    host.click("form#create button[type=submit]")
    guest.goto(host.input_value("#share-link"))
    guest.fill("form#join-seat input[name=name]", "Hugo")
    guest.click("form#join-seat button")
    guest.click("[data-action=ready]")
    host.click("[data-action=start]")
    expect(host.locator(".table")).to_be_visible()
    expect(guest.locator(".table")).to_be_visible()
    expect(host.locator(".table.round-open")).to_have_count(0)

    guest.click("[data-action=react][data-reaction=well_played]")
    bubble = host.locator(".seat[data-seat='1'] .react-bubble")
    expect(bubble).to_contain_text("Well played")
    expect(guest.locator(".seat[data-seat='1'] .react-bubble")).to_contain_text("Well played")

    host.click("[data-action=mute-reactions]")
    expect(host.locator("[data-action=mute-reactions]")).to_have_attribute("aria-pressed", "true")
    expect(host.locator(".react-bubble")).to_have_count(0)
    expect(host.locator("[data-action=react]")).to_have_count(0)  # muted: none to send either
    host.reload()
    expect(host.locator(".table")).to_be_visible()
    expect(host.locator("[data-action=mute-reactions]")).to_have_attribute("aria-pressed", "true")
    guest.click("[data-action=react][data-reaction=wow]")
    expect(guest.locator(".seat[data-seat='1'] .react-bubble")).to_contain_text("Wow")
    expect(host.locator(".react-bubble")).to_have_count(0)  # still muted after the reload

    host.click("[data-action=mute-reactions]")
    guest.click("[data-action=react][data-reaction=nice]")
    expect(host.locator(".seat[data-seat='1'] .react-bubble")).to_contain_text("Nice")
    assert errors == []
    laptop.close()
    other.close()
