"""Take the README's picture, ``docs/screenshot.png``: a live table at 1280×800 just after a
slap round was decided, with hands stacked on a fly (R17).

Run ``uv run python tests/web/make_screenshot.py``: it starts its own ``flyswat serve`` on a
free port (as the browser tests do) and drives Debian's Chromium through a game — one player
on the keyboard against three bots — until such a round is on the table.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "web"))
sys.path.insert(0, str(ROOT / "bench"))
from conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from harness.server import free_port  # noqa: E402

OUT = ROOT / "docs" / "screenshot.png"


def main() -> None:
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen(
            [
                *(
                    sys.executable,
                    "-m",
                    "flyswat.cli",
                    "serve",
                    "--port",
                    str(port),
                    "--workers",
                    "1",
                ),
                *("--db", f"sqlite:///{tmp}/shot.db", "--bot-pace", "1"),
            ],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(200):
                try:
                    urllib.request.urlopen(base + "/health", timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.1)
            shoot(base)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    print(f"wrote {OUT}")


def shoot(base: str) -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800}, locale="en")
        page.goto(base + "/")
        page.click("#first-visit [data-learn=skip]")
        page.fill("input[name=name]", "Ana")
        page.select_option("select[name=seat2]", "hard")
        page.select_option("select[name=seat3]", "easy")
        page.fill("input[name=turn]", "10")
        page.click("form#create button[type=submit]")
        page.click("[data-action=start]")
        expect(page.locator(".table")).to_be_visible()
        opened = None
        slapped = False
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if page.locator("button.reveal:not([disabled])").count():
                page.keyboard.press("Space")
            if page.locator(".table.round-open .fly-card.slappable").count():
                opened = opened or time.monotonic()
                if time.monotonic() - opened > 0.45 and not slapped:
                    page.keyboard.press("1")
                    page.keyboard.press("2")
                    slapped = True
            else:
                opened = None
                slapped = False
            stacked = page.locator(".fly-card.won .hands-stack .hand").count()
            if stacked >= 3 and page.locator(".fly-card.won").count() >= 1:
                page.wait_for_timeout(450)  # the won flies on their way to their winners
                if page.locator(".fly-card.won .hands-stack .hand").count() >= 3:
                    page.screenshot(path=str(OUT))
                    break
            if page.locator(".end").count():
                page.click("[data-action=home]")
                return shoot(base)
            time.sleep(0.05)
        browser.close()


if __name__ == "__main__":
    main()
