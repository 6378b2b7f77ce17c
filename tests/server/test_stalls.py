"""The stall watch: a loop that stops beating is caught in the act, its stack logged once."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import re
import select
import threading
import time
from collections.abc import Callable
from datetime import datetime
from types import SimpleNamespace

import pytest

from flyswat.server.admission import Admission
from flyswat.server.metrics import Metrics, open_sched, watch_stalls


def watch_until_told(caplog: pytest.LogCaptureFixture, loop: threading.Thread,
                     settle_s: float = 0.0) -> None:  # fmt: skip
    """Watch ``loop``'s thread, whose beat was due when the watch began and never comes, until
    the watch tells of it (and ``settle_s`` more), then stop the watch."""
    assert loop.ident is not None
    stop = threading.Event()
    with caplog.at_level(logging.WARNING, logger="flyswat.stall"):
        watch = threading.Thread(target=watch_stalls,
                                 args=([time.perf_counter()], loop.ident, 0.05, stop))  # fmt: skip
        watch.start()
        deadline = time.monotonic() + 5
        while not caplog.records and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(settle_s)
        stop.set()
        watch.join()


def stuck_in_a_long_query(release: threading.Event) -> None:
    release.wait(5)


def test_a_stalled_loop_is_logged_with_where_it_is_stuck(caplog: pytest.LogCaptureFixture) -> None:
    release = threading.Event()
    stuck = threading.Thread(target=stuck_in_a_long_query, args=(release,))
    stuck.start()
    watch_until_told(caplog, stuck, settle_s=0.1)  # more looks at the same stall tell nothing
    release.set()
    stuck.join()
    assert len(caplog.records) == 1
    assert "stuck_in_a_long_query" in caplog.records[0].getMessage()


def run_forever(wake: int) -> None:  # named as the loop's own wait
    select.select([wake], [], [], 5)  # a wait in C under it, as uvloop's


def test_a_loop_waiting_for_events_is_told_as_a_process_without_a_core(
    caplog: pytest.LogCaptureFixture,
) -> None:
    wake, woken = os.pipe()
    idle = threading.Thread(target=run_forever, args=(wake,))
    idle.start()
    watch_until_told(caplog, idle)
    os.write(woken, b"x")
    idle.join()
    os.close(wake)
    os.close(woken)
    assert "not given a core" in caplog.records[0].getMessage()


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


@pytest.mark.parametrize(("hold", "part"), [(time.sleep, "asleep"), (_spin, "ran")])
def test_the_loop_logs_each_stall_with_its_whole_length_and_what_its_thread_did(
    caplog: pytest.LogCaptureFixture, hold: Callable[[float], None], part: str
) -> None:
    """A stall's line gives its length, what the loop did meanwhile (counted) and, from the
    kernel's count of the loop's thread, whether it ran (a callback), waited for a core, or
    slept (here: a blocking call)."""
    executor = SimpleNamespace(received=0, sent=0, outcomes=0, flushes=0, commits=0)
    runner = SimpleNamespace(executor=executor, admission=SimpleNamespace(admitted=0))
    metrics = Metrics(runner)  # type: ignore[arg-type]  # the counts alone are read

    async def stall_once() -> None:
        watch = asyncio.create_task(metrics.watch_loop(every_s=0.01, tell_s=0.08))
        await asyncio.sleep(0.05)
        hold(0.12)  # the loop held: no timer runs meanwhile
        executor.received += 700  # as a turn of many messages would
        executor.sent += 1100
        executor.outcomes += 90
        executor.flushes += 400
        executor.commits += 1
        runner.admission.admitted += 3
        await asyncio.sleep(0.05)
        watch.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watch

    with caplog.at_level(logging.WARNING, logger="flyswat.stall"):
        asyncio.run(stall_once())
    told = [r.getMessage() for r in caplog.records if "stalled for" in r.getMessage()]
    # The hold's, and no other as long: a busy machine may add a shorter one of its own.
    lines = [t for t in told if int(t.split("stalled for ")[1].split(" ms")[0]) >= 100]
    assert len(lines) == 1, told
    assert int(lines[0].split("stalled for ")[1].split(" ms")[0]) < 1000
    assert metrics.stall_max >= 0.1
    held, at = lines[0].split("; meanwhile ")[1].split("; it ended at ")
    assert (
        held
        == "700 messages in, 1100 out, 90 commands, 400 sockets written, 1 commits told, 3 set-ups"
    )
    assert 0 <= time.time() - datetime.fromisoformat(at).timestamp() < 60
    fd = open_sched(threading.get_native_id())
    if fd is None:  # not Linux: no split told
        return
    os.close(fd)
    split = {k: int(re.search(rf"{k} (\d+)", lines[0]).group(1))  # type: ignore[union-attr]
             for k in ("ran", "waited for a core", "asleep")}  # fmt: skip
    if part == "asleep":  # a blocking call: 120 ms not runnable, however busy the machine
        assert split["asleep"] >= 100
    else:  # a busy callback: on a core, or waiting for one on a busy machine, never asleep
        assert split["ran"] + split["waited for a core"] >= 100
        assert split["asleep"] <= 30


def test_uvloops_wait_is_told_as_idle_not_as_the_servers_code(
    caplog: pytest.LogCaptureFixture,
) -> None:
    uvloop = pytest.importorskip("uvloop")
    release = threading.Event()

    def serve() -> None:  # the server's frame above the loop, as transport.serve
        async def wait() -> None:
            while not release.is_set():
                await asyncio.sleep(0.01)

        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(wait())

    loop = threading.Thread(target=serve)
    loop.start()
    watch_until_told(caplog, loop)
    release.set()
    loop.join()
    assert "not given a core" in caplog.records[0].getMessage()


def test_a_scrape_of_the_metrics_walks_no_heap(monkeypatch: pytest.MonkeyPatch) -> None:
    """``/metrics`` counts the live heap without walking it: a walk of millions of frozen
    objects (``gc.get_freeze_count``) held the loop 100 ms at every scrape of a loaded node."""
    from prometheus_client import generate_latest

    def walks(*_: object, **__: object) -> None:
        raise AssertionError("a scrape walked the heap")

    for name in ("get_freeze_count", "get_objects", "get_referrers", "get_referents"):
        monkeypatch.setattr(gc, name, walks)
    executor = SimpleNamespace(links={1: None, 2: None}, writer=None, received=7, sent=9)
    table = SimpleNamespace(state="playing")
    runner = SimpleNamespace(executor=executor, directory=SimpleNamespace(tables={"A": table}),
                             cluster=None, admission=Admission())  # fmt: skip
    text = generate_latest(Metrics(runner).registry).decode()  # type: ignore[arg-type]
    assert "flyswat_players 2.0" in text
    assert "flyswat_setups_waited_total 0.0" in text
    assert 'flyswat_tables{state="playing"} 1.0' in text
    blocks = [line for line in text.splitlines() if line.startswith("flyswat_heap_blocks ")]
    assert len(blocks) == 1 and float(blocks[0].split()[1]) > 1000
