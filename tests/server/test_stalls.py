"""The stall watch: a loop that stops beating is caught in the act, its stack logged once."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from flyswat.server.metrics import watch_stalls


def stuck_in_a_long_query(release: threading.Event) -> None:
    release.wait(5)


def test_a_stalled_loop_is_logged_with_where_it_is_stuck(caplog: pytest.LogCaptureFixture) -> None:
    release, stop = threading.Event(), threading.Event()
    stuck = threading.Thread(target=stuck_in_a_long_query, args=(release,))
    stuck.start()
    beat = [time.perf_counter()]  # and never again: the "loop" is stuck
    assert stuck.ident is not None
    with caplog.at_level(logging.WARNING, logger="flyswat.stall"):
        watch = threading.Thread(target=watch_stalls, args=(beat, stuck.ident, 0.05, stop))
        watch.start()
        deadline = time.monotonic() + 5
        while not caplog.records and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)  # more looks at the same stall tell nothing more
        stop.set()
        release.set()
        watch.join()
        stuck.join()
    assert len(caplog.records) == 1
    assert "stuck_in_a_long_query" in caplog.records[0].getMessage()
