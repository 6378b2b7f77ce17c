"""Installable and offline: the web app manifest, and the service worker that keeps the
client's files, so that the practice game and the rules run with no network at all."""

from __future__ import annotations

import json
import urllib.request

from playwright.sync_api import Browser, expect

from .test_newcomer import PHONE, strings


def test_the_manifest_names_the_app_its_start_and_its_icons(server: str) -> None:
    with urllib.request.urlopen(server + "/manifest.webmanifest", timeout=5) as r:
        assert r.headers["content-type"].startswith("application/manifest+json")
        manifest = json.loads(r.read())
    assert manifest["name"] == "flyswat" and manifest["display"] == "standalone"
    sizes = {i["sizes"] for i in manifest["icons"]}
    assert {"192x192", "512x512"} <= sizes
    for icon in manifest["icons"]:
        with urllib.request.urlopen(f"{server}/{icon['src']}", timeout=5) as r:
            assert r.status == 200


def test_loaded_once_the_practice_game_and_the_rules_run_offline(
    server: str, browser: Browser
) -> None:
    ctx = browser.new_context(locale="pt", service_workers="allow", **PHONE)
    page = ctx.new_page()
    pt = strings("pt")
    page.goto(server + "/?practice")
    expect(page.locator(".coach-title")).to_have_text(pt["learn.c1.title"])
    # The worker has kept every file and controls the page.
    page.evaluate("navigator.serviceWorker.ready")
    page.wait_for_function("!!navigator.serviceWorker.controller")
    ctx.set_offline(True)
    page.reload()
    expect(page.locator(".coach-title")).to_have_text(pt["learn.c1.title"])
    reveal = page.locator("button.reveal:not([disabled])")
    expect(reveal).to_be_visible()
    reveal.click()  # the practice table answers: no server needed
    expect(page.locator(".fly-card")).not_to_have_count(0)
    page.goto(server + "/?learn")
    expect(page.locator(".rules h1")).to_have_text(pt["rules.title"])
    ctx.set_offline(False)
    ctx.close()
