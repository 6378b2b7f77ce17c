"""The browser against ``flyswat serve --workers 2``: each player opens the table through a
different worker's address; the one that does not run it moves the browser's socket to the
one that does, and the game is played to its end with no error on either page."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from harness.server import Serve, free_ports

from .test_play import Player, _create_table, _join, _record


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The public port of a ``flyswat serve --workers 2`` (its workers: port+1, port+2)."""
    port = free_ports(3)
    db = tmp_path_factory.mktemp("workers") / "w.db"
    args = ["--port", str(port), "--workers", "2", "--db", f"sqlite:///{db}", "--bot-pace", "0.3"]
    serving = Serve(
        args, tmp_path_factory.getbasetemp() / "workers.log", [port, port + 1, port + 2]
    )
    try:
        yield port
    finally:
        serving.kill(signal.SIGTERM)


def test_players_through_two_workers_play_a_game_to_the_end(
    workers: int, browser: Browser, artifacts: Path
) -> None:
    one, two = f"http://127.0.0.1:{workers + 1}", f"http://127.0.0.1:{workers + 2}"
    laptop = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-GB")
    phone = browser.new_context(
        viewport={"width": 390, "height": 844}, locale="pt-BR", has_touch=True
    )
    ana, bruno = laptop.new_page(), phone.new_page()
    errors: list[str] = []
    moved: list[str] = []
    for page in (ana, bruno):
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("websocket", lambda ws: moved.append(ws.url))
    link = _create_table(ana, one)  # made at worker 0's address
    code = link.split("table=")[1]
    _join(bruno, link.replace(one, two))  # joined at worker 1's
    expect(ana.locator(".seat-list li[data-seat='1'] .who")).to_contain_text("Bruno")
    ana.click("[data-action=start]")
    expect(ana.locator(".table")).to_be_visible()
    expect(bruno.locator(".table")).to_be_visible()
    players = [Player(ana, keyboard=True), Player(bruno, keyboard=False)]
    start = time.monotonic()
    while time.monotonic() - start < 100:
        if all(s["end"] for s in [pl.step() for pl in players]):
            break
        time.sleep(0.03)
    else:
        raise AssertionError("the game did not end in time")
    assert not errors, errors
    ana.screenshot(path=str(artifacts / "workers-end.png"))
    bruno.screenshot(path=str(artifacts / "workers-end-phone.png"))
    # One page's socket went to the other worker's port: it was moved there.
    ports = {url.split("/ws/")[0].rsplit(":", 1)[1] for url in moved}
    assert ports == {str(workers + 1), str(workers + 2)}, moved
    record = _record(f"http://127.0.0.1:{workers}/api/tables/{code}/record")
    from flyswat.record import verify_record

    assert verify_record(record) == []
    laptop.close()
    phone.close()
