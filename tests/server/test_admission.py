"""The door of new tables' set-up (:mod:`flyswat.server.admission`): tables in play first.

The rule (:class:`Pace`) is pure; the door (:class:`Admission`) runs on a real loop, held
late by a callback that sleeps — far past :data:`LATE_MS`, so that no machine is too slow
for the lateness to show.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from flyswat.errors import IllegalActionError
from flyswat.server.admission import LATE_MS, ON_TIME_MS, Admission, Pace

from .conftest import Live, serve


def test_the_budget_halves_when_the_loop_runs_late_and_grows_by_one_when_on_time() -> None:
    pace = Pace(budget=16, most=20)
    assert pace.after(LATE_MS + 1) == 8
    assert pace.after(LATE_MS * 10) == 4
    assert pace.after(ON_TIME_MS - 1) == 5
    assert pace.after((LATE_MS + ON_TIME_MS) / 2) == 5  # between: unchanged
    for _ in range(40):
        pace.after(0.0)
    assert pace.budget == 20  # never past its most
    for _ in range(40):
        pace.after(1000.0)
    assert pace.budget == 1  # never shut: one set-up a period still goes in


def test_a_lone_set_up_on_a_calm_loop_goes_straight_in() -> None:
    async def main() -> Admission:
        door = Admission()
        for _ in range(3):
            await door.enter()
            await asyncio.sleep(0.05)
        return door

    door = asyncio.run(main())
    assert (door.admitted, door.waited, door.refused) == (3, 0, 0)


def test_while_the_loop_runs_late_set_ups_wait_and_go_in_first_come_first_in() -> None:
    """Ten set-ups at once through a door of four a period: four go in, six wait; the loop
    is then held 100 ms, so the next periods let fewer in, and every one goes in at last,
    in the order they came."""

    async def main() -> tuple[Admission, list[int], list[int]]:
        door = Admission(Pace(budget=4, most=4), period_s=0.01)
        order: list[int] = []
        budgets: list[int] = []

        async def set_up(i: int) -> None:
            await door.enter()
            order.append(i)
            budgets.append(door.pace.budget)

        tasks = [asyncio.ensure_future(set_up(i)) for i in range(10)]
        await asyncio.sleep(0)
        asyncio.get_running_loop().call_soon(time.sleep, 0.1)  # the loop held late
        await asyncio.gather(*tasks)
        return door, order, budgets

    door, order, budgets = asyncio.run(main())
    assert order == list(range(10))
    assert (door.admitted, door.waited, door.refused) == (10, 6, 0)
    assert budgets[:4] == [4, 4, 4, 4]
    assert min(budgets[4:]) < 4  # the late loop let fewer in


def test_a_set_up_that_waits_too_long_is_told_busy_and_changes_nothing() -> None:
    async def main() -> Admission:
        door = Admission(Pace(budget=1, most=1), period_s=60.0, max_wait_s=0.05)
        await door.enter()  # the period's one
        with pytest.raises(IllegalActionError) as refused:
            await door.enter()
        assert refused.value.code == "busy"
        assert len(door.waiting) == 1 and door.waiting[0].cancelled()
        return door

    door = asyncio.run(main())
    assert (door.admitted, door.waited, door.refused) == (1, 1, 1)


def test_a_create_join_or_play_now_held_too_long_is_503_busy_with_retry_after_and_makes_nothing(
    live: Live,
) -> None:
    """A real server whose door lets one set-up in a minute and holds the next 0.2 s: the
    first create is seated; a join, a second create and a Play now are told ``busy`` (with
    ``Retry-After``), and none took a seat nor made a table."""
    runner = live.app.state.runner
    me = live.post("/api/players", {"name": "Dee"}).json()
    runner.admission = Admission(Pace(budget=1, most=1), period_s=60.0, max_wait_s=0.2)
    first = live.post("/api/tables", {"name": "Ana", "seats": 2})
    assert first.status_code == 201
    code = first.json()["code"]
    tables = len(runner.directory.tables)
    play_now = {"player": me["player"], "secret": me["secret"]}
    for path, body in ((f"/api/tables/{code}/join", {"name": "Bea"}),
                       ("/api/tables", {"name": "Cy", "seats": 2}),
                       ("/api/play", play_now)):  # fmt: skip
        refused = live.post(path, body)
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"] == "busy"
        assert refused.headers["retry-after"] == "1"
    assert len(runner.directory.tables) == tables
    info = live.get(f"/api/tables/{code}").json()
    assert [p["joined"] for p in info["players"]] == [True, False]
    assert runner.admission.refused == 3


def test_a_create_past_its_addresss_budget_is_told_so_at_once_and_takes_no_place_at_the_door(
    db_url: str,
) -> None:
    """An address that has spent its new tables is answered ``429 too_many_tables`` before
    the door, not after waiting there: such creates hold up nobody else's set-up. A create
    told ``busy`` at the door costs its address no table."""

    def shut_door(wait_s: float) -> Admission:
        door = Admission(Pace(budget=1, most=1), period_s=60.0, max_wait_s=wait_s)
        door.tokens = 0  # shut for a minute: a create that reaches it waits ``wait_s``
        return door

    def spend(http: httpx.Client) -> tuple[int, httpx.Response]:
        made = 0
        while (r := http.post("/api/tables", json={"name": "Ana", "seats": 2})).is_success:
            made += 1
            assert made < 100
        return made, r

    def from_(address: str, live: Live) -> httpx.Client:  # not the tests' exempt address
        transport = httpx.HTTPTransport(local_address=address)
        return httpx.Client(transport=transport, base_url=live.http, timeout=10)

    with serve(db_url, tables_per_minute=0.001, table_burst=5) as live:  # none back meanwhile
        runner = live.app.state.runner
        with from_("127.0.0.51", live) as http:
            made, refused = spend(http)
            assert made == 5 and (refused.status_code, refused.json()["error"]) == (
                429, "too_many_tables",
            )  # fmt: skip
            tables = len(runner.directory.tables)
            runner.admission = door = shut_door(5.0)
            again = http.post("/api/tables", json={"name": "Ana", "seats": 2})
        assert (again.status_code, again.json()["error"]) == (429, "too_many_tables")
        assert (door.waited, door.refused) == (0, 0)
        assert len(runner.directory.tables) == tables

        runner.admission = door = shut_door(0.1)
        with from_("127.0.0.52", live) as http:
            busy = http.post("/api/tables", json={"name": "Bo", "seats": 2})
            assert (busy.status_code, busy.json()["error"]) == (503, "busy")
            runner.admission = Admission()
            assert spend(http)[0] == made  # the busy one took none of its tables
