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
from typing import Any

import pytest

from harness.server import START_S, free_port

#: Debian's headless shell (package chromium-headless-shell: the same Blink as the browser,
#: without the browser around it; what Playwright itself runs for headless Chromium) when it
#: is there, else Debian's Chromium. The shell took the browser lane 215 s of CPU where the
#: whole browser took 326 (docs/BENCHMARKS.md, *The test suite*).
CHROMIUM = Path(
    os.environ.get("FLYSWAT_CHROMIUM")
    or next(
        (p for p in ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium") if Path(p).exists()),
        "/usr/bin/chromium",
    )
)
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


class Chromium:
    """One Chromium for a test worker's browser tests, launched by the first and kept for the
    next (a launch is a second or two of a busy machine's time, and the browser tests of a
    parallel run are spread over every worker, a module's over several).

    It is closed before any test outside tests/web runs in this process, and at the end:
    Playwright's sync API keeps its own event loop while it is open, and tests elsewhere that
    run asyncio must not find it there. A plugin (``pytest_configure`` below registers it), so
    that it hears of every test, not only of tests/web's.
    """

    def __init__(self) -> None:
        self._playwright: Any = None
        self._browser: Any = None

    def get(self) -> Any:
        if self._browser is None or not self._browser.is_connected():
            self.close()
            from playwright.sync_api import sync_playwright

            self._playwright = sync_playwright()
            p = self._playwright.__enter__()
            self._browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        return self._browser

    def close_contexts(self) -> None:
        """Close what a module's tests left open (a page that still polls its server)."""
        if self._browser is not None:
            for context in list(self._browser.contexts):
                with contextlib.suppress(Exception):
                    context.close()

    def close(self) -> None:
        browser, playwright, self._browser, self._playwright = (
            self._browser, self._playwright, None, None)  # fmt: skip
        if browser is not None:
            with contextlib.suppress(Exception):
                browser.close()
        if playwright is not None:
            with contextlib.suppress(Exception):
                playwright.__exit__(None, None, None)

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if WEB not in Path(str(item.path)).resolve().parents:
            self.close()

    def pytest_sessionfinish(self) -> None:
        self.close()


WEB = Path(__file__).resolve().parent
CHROMIUM_BROWSER = Chromium()


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(CHROMIUM_BROWSER, "flyswat-chromium")


class Contexts:
    """The worker's browser as the tests see it: its contexts block the client's service
    worker unless a test allows it (``service_workers="allow"``).

    The worker only keeps the client's files for a visit with no network (test_offline's
    subject, and the journeys of test_players and test_play, which allow it); in every other
    test it installed itself in each new context and fetched every file a second time, a
    third of the CPU of opening a page (0.45 s of CPU against 0.30 for a context and its home
    page, docs/BENCHMARKS.md, *The test suite*)."""

    def __init__(self, browser: Any) -> None:
        self._browser = browser

    def new_context(self, **options: Any) -> Any:
        options.setdefault("service_workers", "block")
        return self._browser.new_context(**options)

    def new_page(self, **options: Any) -> Any:
        options.setdefault("service_workers", "block")
        return self._browser.new_page(**options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """This worker's Chromium (:class:`Chromium`, as :class:`Contexts`); each test opens its
    own contexts, and what a module's tests leave open is closed after them."""
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium chromium-headless-shell)")
    from playwright.sync_api import expect

    # The machine is shared: give slow moments room before an expectation fails.
    expect.set_options(timeout=15_000)
    yield Contexts(CHROMIUM_BROWSER.get())
    CHROMIUM_BROWSER.close_contexts()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """The folder for screenshots (git-ignored)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
