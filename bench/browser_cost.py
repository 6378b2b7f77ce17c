"""What the browser tests cost the machine: the CPU of opening a page, and of a game in play.

It starts ``flyswat serve`` as the browser tests do (quick bots, a short Play now wait) and
drives Chromium with Playwright, reading the whole machine's busy time from ``/proc/stat``
around each measure (so run it alone, under the benchmark lock):

- ``load``: a new context and the home page, ``--contexts`` times, with the client's service
  worker allowed and then blocked; CPU-seconds per context;
- ``game``: Play now on a phone and the game played to its end, ``--games`` times;
  CPU-seconds per second of game. ``--poll look``: by ``tests/web/test_players``' own loop,
  which reads the table in one ``page.evaluate`` a look (``tests/web/table_state.py``);
  ``--poll calls``: as the tests did before, one Playwright call per element (five or six).

    flock -x -o /tmp/bench.lock uv run python bench/browser_cost.py load game
    flock -x -o /tmp/bench.lock uv run python bench/browser_cost.py game --poll calls \\
        --chromium /usr/bin/chromium

``--chromium``: the executable (by default the one the tests choose, tests/web/conftest.py);
``--reduced-motion``: contexts that ask for reduced motion. Figures: docs/BENCHMARKS.md,
*The test suite*.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect, sync_playwright

from harness.server import running_server

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.web.table_state import ROUND_KEY_JS  # noqa: E402
from tests.web.test_newcomer import PHONE  # noqa: E402
from tests.web.test_players import _human_delay, _play_to_the_end  # noqa: E402


def busy_s() -> float:
    """The machine's busy CPU-seconds so far (every core)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / 100


def play_calls(page: Page) -> None:
    """The same player as the tests had it before: one Playwright call per element."""
    opened: float | None = None
    opened_by: str | None = None
    delay = _human_delay()
    while not page.query_selector(".end"):
        if page.query_selector("button.reveal:not([disabled])"):
            with contextlib.suppress(Exception):
                page.locator("button.reveal").tap(timeout=2000)
        if page.query_selector(".table.round-open"):
            key = page.evaluate(ROUND_KEY_JS)
            if key != opened_by:
                opened, opened_by, delay = time.monotonic(), key, _human_delay()
            opened = opened or time.monotonic()
            flies = page.query_selector_all(".fly-card.slappable")
            free = page.query_selector(".my-hand.free")
            if flies and free and time.monotonic() - opened > delay:
                with contextlib.suppress(Exception):
                    flies[0].tap(timeout=500)
                    page.locator("button.done:not([disabled])").tap(timeout=500)
        else:
            opened, opened_by = None, None
        time.sleep(0.05)


def measure_load(browser: Any, url: str, contexts: int, motion: str) -> None:
    for workers in ("allow", "block"):
        c0, t0 = busy_s(), time.monotonic()
        for _ in range(contexts):
            ctx = browser.new_context(service_workers=workers, reduced_motion=motion, **PHONE)
            page = ctx.new_page()
            page.goto(url + "/")
            expect(page.locator("#play-now-form button")).to_be_visible()
            time.sleep(1.0)  # the service worker installs after the load
            ctx.close()
        cpu, wall = busy_s() - c0, time.monotonic() - t0
        print(f"load  service worker {workers:5}: {cpu / contexts:.3f} CPU-s a context "
              f"({contexts} contexts, {wall / contexts:.2f} s each)")  # fmt: skip


def measure_game(browser: Any, url: str, games: int, poll: str, motion: str) -> None:
    play = _play_to_the_end if poll == "look" else play_calls
    rates = []
    for n in range(games):
        ctx = browser.new_context(locale="en-GB", reduced_motion=motion, **PHONE)
        page = ctx.new_page()
        page.goto(url + "/")
        page.fill("#play-now-form input[name=player_name]", f"Bench {n}")
        page.click("#play-now-form button")
        expect(page.locator(".table")).to_be_visible(timeout=30_000)
        c0, t0 = busy_s(), time.monotonic()
        play(page)
        cpu, wall = busy_s() - c0, time.monotonic() - t0
        rates.append(cpu / wall)
        print(f"game  poll {poll}: {wall:.1f} s of game, {cpu:.1f} CPU-s, "
              f"{cpu / wall:.3f} CPU-s a second")  # fmt: skip
        ctx.close()
    print(f"game  poll {poll}: mean {sum(rates) / len(rates):.3f} CPU-s a second of game")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", nargs="+", choices=["load", "game"])
    parser.add_argument("--chromium", default=str(CHROMIUM))
    parser.add_argument("--contexts", type=int, default=10)
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--poll", choices=["look", "calls"], default="look")
    parser.add_argument("--reduced-motion", action="store_true")
    args = parser.parse_args()
    motion = "reduce" if args.reduced_motion else "no-preference"
    print(f"chromium {args.chromium}, reduced motion: {args.reduced_motion}")
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_server(
            Path(tmp) / "bench.db", args=["--bot-pace", "0.3", "--play-now-wait", "4"]
        ) as (url, _, _),
        sync_playwright() as p,
    ):
        browser = p.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        if "load" in args.what:
            measure_load(browser, url, args.contexts, motion)
        if "game" in args.what:
            measure_game(browser, url, args.games, args.poll, motion)
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
