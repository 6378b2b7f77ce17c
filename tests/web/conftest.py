"""Fixtures for the browser tests: a real ``flyswat serve`` and Debian's Chromium.

The server runs as a subprocess on a free port with a temporary SQLite store; the browser is
driven with Playwright's sync API (never ``playwright install``: the system Chromium is used).
Screenshots go to ``test-artifacts/`` (git-ignored).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.server import START_S, free_port

CHROMIUM = Path(os.environ.get("FLYSWAT_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"

#: What tells one slap round from the next on the page (null with no trigger shown): the
#: trigger and every seat's draw and won counts. The trigger alone does not: two rounds
#: opened by alike cards (two swatters) look the same, and a round may open between two looks
#: (the player's own reveal opens one); every reveal changes a draw count, a win or a
#: penalty a won count.
ROUND_KEY_JS = """(() => {
  const trigger = document.querySelector('.trigger-zone .trigger-card');
  if (!trigger) return null;
  const counts = [...document.querySelectorAll('.count-draw, .count-won')];
  return trigger.innerHTML + '|' + counts.map((e) => e.textContent).join(',');
})()"""


@contextlib.contextmanager
def serve(folder: Path, *extra: str) -> Iterator[str]:
    """A fresh ``flyswat serve`` with quick bots, its store and log in ``folder``, and
    ``extra`` arguments (a later one wins); yields its base URL, stops it after."""
    port = free_port()
    db = folder / "flyswat.db"
    log = (folder / "serve.log").open("w")
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "flyswat.cli", "serve", "--port", str(port), "--workers", "1"),
            *("--db", f"sqlite:///{db}", "--bot-pace", "0.3", "--play-now-wait", "4", *extra),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_S
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("flyswat serve did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a fresh ``flyswat serve`` with quick bots, shared by a test worker's
    browser tests: loopback is free of the per-address limits there (a session's pages and
    their polling all come from 127.0.0.1; pages of two modules run together came up without
    their strings), which the server tests hold to on servers of their own."""
    with serve(tmp_path_factory.mktemp("server"), "--exempt", "127.0.0.1") as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """One Chromium per test module (each test opens its own contexts).

    Module scope, not session: Playwright's sync API keeps its own event loop while it is
    open, and tests elsewhere that run asyncio must not find it there.
    """
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import expect, sync_playwright

    # The machine is shared: give slow moments room before an expectation fails.
    expect.set_options(timeout=15_000)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            with contextlib.suppress(Exception):
                b.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """The folder for screenshots (git-ignored)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
