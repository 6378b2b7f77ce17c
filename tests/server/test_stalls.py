"""The stall watch: a loop that stops beating is caught in the act, its stack logged once."""

from __future__ import annotations

import logging
import os
import select
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


def run_forever(wake: int) -> None:  # named as the loop's own wait
    select.select([wake], [], [], 5)  # a wait in C under it, as uvloop's


def test_a_loop_waiting_for_events_is_told_as_a_process_without_a_core(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stop = threading.Event()
    wake, woken = os.pipe()
    idle = threading.Thread(target=run_forever, args=(wake,))
    idle.start()
    assert idle.ident is not None
    with caplog.at_level(logging.WARNING, logger="flyswat.stall"):
        watch = threading.Thread(target=watch_stalls, args=([time.perf_counter()], idle.ident,
                                                            0.05, stop))  # fmt: skip
        watch.start()
        deadline = time.monotonic() + 5
        while not caplog.records and time.monotonic() < deadline:
            time.sleep(0.01)
        stop.set()
        os.write(woken, b"x")
        watch.join()
        idle.join()
    os.close(wake)
    os.close(woken)
    assert "not given a core" in caplog.records[0].getMessage()
