"""The tables' wake-ups: every table's under one timer of the loop's (flyswat.server.executor).

The tables here are stand-ins with a wake-up time and a log of their ticks (the executor asks
nothing else of a table to tick it); the loop and its clock are real.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from flyswat.server.executor import Executor, monotonic_ms
from flyswat.table.io import Outcome, Tick


class Sleeper:
    """A table that only wakes: each tick is logged with its time, and ``then`` (if set)
    gives its next wake-up from the tick's time."""

    def __init__(self, code: str, log: list[tuple[str, float]]) -> None:
        self.code = code
        self.wake_at: float | None = None
        self.log = log
        self.then: Callable[[float], float | None] | None = None

    def handle(self, command: Any, now: float) -> Outcome:
        assert isinstance(command, Tick)
        self.log.append((self.code, now))
        self.wake_at = self.then(now) if self.then is not None else None
        return Outcome()


def executor_of(*tables: Sleeper) -> Executor:
    by_code = {t.code: t for t in tables}
    return Executor(None, by_code, idle=lambda table: None)  # type: ignore[arg-type]


def wake(executor: Executor, table: Sleeper, at: float | None) -> None:
    table.wake_at = at
    executor._schedule(table)  # type: ignore[arg-type]


async def until(done: Callable[[], bool], within_s: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + within_s
    while not done():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.005)


@pytest.mark.anyio
async def test_tables_wake_in_the_order_of_their_times_each_once_and_never_early() -> None:
    log: list[tuple[str, float]] = []
    tables = [Sleeper(f"T{i}", log) for i in range(6)]
    executor = executor_of(*tables)
    now = monotonic_ms()
    times = {t.code: now + 30 + 15 * ((i * 7) % 6) for i, t in enumerate(tables)}
    for t in tables:
        wake(executor, t, times[t.code])
    await until(lambda: len(log) == len(tables))
    await asyncio.sleep(0.05)
    assert sorted(code for code, _ in log) == sorted(times)  # each once
    assert [code for code, _ in log] == sorted(times, key=times.__getitem__)
    assert all(at >= times[code] for code, at in log)
    assert not executor._heap and not executor._wakes


@pytest.mark.anyio
async def test_a_wake_up_moved_later_or_earlier_or_taken_back_is_kept_as_last_set() -> None:
    log: list[tuple[str, float]] = []
    later, earlier, gone, fixed = (Sleeper(c, log) for c in ("LATER", "EARLIER", "GONE", "FIXED"))
    executor = executor_of(later, earlier, gone, fixed)
    now = monotonic_ms()
    wake(executor, later, now + 20)
    wake(executor, earlier, now + 300)
    wake(executor, gone, now + 20)
    wake(executor, fixed, now + 120)
    wake(executor, later, now + 200)  # its first time passes over
    wake(executor, earlier, now + 60)
    wake(executor, gone, None)
    await until(lambda: len(log) == 3)
    await asyncio.sleep(0.1)
    assert [code for code, _ in log] == ["EARLIER", "FIXED", "LATER"]
    ticked = dict(log)
    assert ticked["EARLIER"] >= now + 60 and ticked["LATER"] >= now + 200
    assert ticked["FIXED"] >= now + 120


@pytest.mark.anyio
async def test_a_wake_up_set_by_a_tick_does_not_hold_up_another_tables_sooner_one() -> None:
    log: list[tuple[str, float]] = []
    a, b = Sleeper("A", log), Sleeper("B", log)
    executor = executor_of(a, b)
    start = monotonic_ms()
    a.then = lambda now: now + 300 if len(log) < 3 else None  # A's next, set in its tick
    wake(executor, a, start + 10)
    wake(executor, b, start + 80)  # due before A's next
    await until(lambda: len(log) == 3)
    assert [code for code, _ in log] == ["A", "B", "A"]
    assert log[1][1] < start + 300


@pytest.mark.anyio
async def test_a_wake_up_that_has_come_already_ticks_at_the_next_turn_not_in_this_one() -> None:
    log: list[tuple[str, float]] = []
    eager = Sleeper("EAGER", log)
    executor = executor_of(eager)
    eager.then = lambda now: now if len(log) < 50 else None  # always due at once
    wake(executor, eager, monotonic_ms())
    turns = 0

    async def count_turns() -> None:
        nonlocal turns
        while len(log) < 50:
            turns += 1
            await asyncio.sleep(0)

    await asyncio.wait_for(count_turns(), 10)
    assert len(log) == 50
    assert turns >= 25  # the loop ran between the ticks: a tick never re-enters its own


@pytest.mark.anyio
async def test_thousands_of_moved_wake_ups_take_few_timers_of_the_loop_and_a_bounded_heap() -> None:
    log: list[tuple[str, float]] = []
    tables = [Sleeper(f"T{i}", log) for i in range(1000)]
    executor = executor_of(*tables)
    loop = asyncio.get_running_loop()
    armed = 0
    call_later = loop.call_later

    def counting(delay: float, callback: Any, *args: Any) -> asyncio.TimerHandle:
        nonlocal armed
        armed += 1
        return call_later(delay, callback, *args)

    loop.call_later = counting  # type: ignore[method-assign, assignment]
    try:
        now = monotonic_ms()
        for step in range(10):  # every table's deadline moves on ten times, as in play
            for i, t in enumerate(tables):
                wake(executor, t, now + 100 + step * 20 + i % 50)
            assert len(executor._heap) <= 2 * len(executor._wakes) + 1025
        await until(lambda: len(log) == len(tables))
    finally:
        loop.call_later = call_later  # type: ignore[method-assign]
    assert sorted(code for code, _ in log) == sorted(t.code for t in tables)
    assert armed < 200  # a timer of the loop's each, set anew at each move: 10,000


@pytest.mark.anyio
async def test_stopping_the_timers_forgets_every_wake_up() -> None:
    log: list[tuple[str, float]] = []
    tables = [Sleeper(f"T{i}", log) for i in range(3)]
    executor = executor_of(*tables)
    for i, t in enumerate(tables):
        wake(executor, t, monotonic_ms() + 20 + i)
    executor.stop_timers()
    await asyncio.sleep(0.1)
    assert log == []
