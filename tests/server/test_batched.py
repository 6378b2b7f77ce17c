"""A table's set-up asks the store its questions in batches (flyswat.server.batched): those
asked while one batch is read go together in the next, one trip to a thread for them all,
each answer (or error) to its own asker."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from sqlalchemy import event

from flyswat.errors import IllegalActionError
from flyswat.server import players_store as ps
from flyswat.server.batched import Batched
from flyswat.server.pages import Pages
from flyswat.server.players_routes import _free_names
from flyswat.server.store import Store


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, db_url: str) -> Iterator[Store]:
    url = db_url if request.param == "sqlite" else request.getfixturevalue("pg_url")
    store = Store(url)
    try:
        yield store
    finally:
        store.close()


def test_guests_names_asked_together_are_read_in_one_statement_and_a_players_is_tagged(
    store: Store,
) -> None:
    with store.engine.begin() as conn:
        ps.register(conn, "p" * 32, "Ana", "secret", "2026-12-01T00:00:00Z")
    statements: list[str] = []
    event.listen(store.engine, "before_cursor_execute",
                 lambda *args: statements.append(" ".join(args[2].split())))  # fmt: skip
    pages = Pages(store.engine)
    names = Batched(pages.db, _free_names)
    asked = ["Bo", "Ana", "Cy", "ana", "Bo"] * 8

    async def main() -> list[str | None]:
        first = asyncio.ensure_future(names.ask(asked[0]))
        for _ in range(3):  # its batch begins: it is read on a thread
            await asyncio.sleep(0)
        rest = await asyncio.gather(*(names.ask(name) for name in asked[1:]))
        return [await first, *rest]

    try:
        found = asyncio.run(main())
    finally:
        pages.close()
    lookups = [s for s in statements if "name_key IN" in s]
    # The first asked goes at once, alone; the other 39, asked meanwhile, in one batch more.
    assert names.batches == len(lookups) == 2, statements
    for name, got in zip(asked, found, strict=True):
        if name.lower() == "ana":  # a player's name: a guest gets it with a tag
            assert got is not None and got.startswith(f"{name} #"), got
        else:
            assert got == name


def test_each_caller_gets_their_own_answer_and_a_wrong_secret_only_its_error(
    store: Store,
) -> None:
    ids = ["a" * 32, "b" * 32]
    with store.engine.begin() as conn:
        for pid in ids:
            ps.register(conn, pid, pid[:3], "right", "2026-12-01T00:00:00Z")
    pages = Pages(store.engine)
    callers = Batched(pages.db, ps.authenticate_all)

    async def main() -> list[object]:
        asks = [(ids[0], "right"), (ids[1], "wrong"), (ids[1], "right"), ("c" * 32, "right")]
        return await asyncio.gather(*(callers.ask(a) for a in asks), return_exceptions=True)

    try:
        first, wrong, second, nobody = asyncio.run(main())
    finally:
        pages.close()
    assert isinstance(first, dict) and first["id"] == ids[0]
    assert isinstance(second, dict) and second["id"] == ids[1]
    for error in (wrong, nobody):
        assert isinstance(error, IllegalActionError) and error.code == "bad_secret"


def test_a_failed_read_fails_its_batch_only_and_a_given_up_ask_holds_up_nobody() -> None:
    reads: list[list[int]] = []

    def read(conn: object, keys: list[int]) -> list[int | Exception]:
        reads.append(keys)
        if 13 in keys:
            raise OSError("the database went away")
        return [k * 2 for k in keys]

    async def db(work: object) -> object:
        return await asyncio.to_thread(work, None)  # type: ignore[arg-type]

    batched: Batched[int, int] = Batched(db, read)

    async def main() -> tuple[int, list[object], list[int]]:
        alone = await batched.ask(1)
        failed = await asyncio.gather(*(batched.ask(k) for k in (13, 4)), return_exceptions=True)
        given_up = asyncio.ensure_future(batched.ask(5))
        rest = [asyncio.ensure_future(batched.ask(k)) for k in (6, 7)]
        await asyncio.sleep(0)
        given_up.cancel()
        return alone, failed, list(await asyncio.gather(*rest))

    alone, failed, rest = asyncio.run(main())
    assert alone == 2
    assert all(isinstance(e, OSError) for e in failed)  # the batch's error, to each in it
    assert rest == [12, 14]  # the next batch read as ever, the given-up ask in it or not
    assert reads == [[1], [13, 4], [5, 6, 7]]
    assert batched.task is None  # nothing left running: the next ask starts a batch again
