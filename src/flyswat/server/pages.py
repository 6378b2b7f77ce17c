"""The players' pages, read only: a profile, a player's games, the leaderboard, the recent
public games (Replays' list), a finished game's summary and its record.

Every node serves them (:class:`~flyswat.server.players_routes.Players` has them); and
``flyswat serve --role pages`` serves them alone, with the web client's files, from a process that
holds no table: behind the proxy, the paths of these pages go to it, and a leaderboard or a
profile read costs the nodes that run the tables nothing (``docs/DEPLOY.md``). Each handler
parses its query, runs one read of :mod:`flyswat.server.players_store` (on a node, on a
thread of its own, never on the event loop that runs the tables; apart, on the loop:
:class:`Pages`) and answers with a :mod:`flyswat.protocol` model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from sqlalchemy.engine import Connection, Engine
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from flyswat import protocol as p
from flyswat.errors import IllegalActionError, MalformedError
from flyswat.players import identity
from flyswat.players.ratings import BOT_RATINGS
from flyswat.rules import MAX_SEATS, MIN_SEATS
from flyswat.server import players_store as ps

#: Pages of a player's games, and of the leaderboard: by default and at most.
GAMES_PAGE, MAX_GAMES_PAGE = 20, 100
BOARD_PAGE, MAX_BOARD_PAGE = 50, 200
MAX_OFFSET = 1_000_000
#: Threads for the players' SQL (:meth:`Pages.db`).
DB_THREADS = 2
#: How old the ranks and the board's size may be where the pages are served apart
#: (:class:`~flyswat.server.players_store.Standings`), in seconds.
STANDINGS_TTL_S = 5.0
#: The farthest offset of a board page read on the loop where the pages are apart: the
#: database walks the board's index to it (a page at 15,000 took 10 ms at 20,000 players).
QUICK_OFFSET = 1_000

T = TypeVar("T")


def query_int(request: Request, name: str, default: int | None, low: int, high: int) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not raw.isascii() or not raw.isdigit() or len(raw) > 12:
        raise MalformedError(f"{name} is a whole number from {low} to {high}")
    value = int(raw)
    if not low <= value <= high:
        raise MalformedError(f"{name} is a whole number from {low} to {high}")
    return value


def player_id(request: Request) -> str:
    return valid_id(str(request.path_params["player"]))


def valid_id(pid: str) -> str:
    if not identity.valid_id(pid):
        raise MalformedError("a player id is 8 to 64 letters, digits, '-' or '_'")
    return pid


def query_flag(request: Request, name: str) -> bool | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    if raw not in ("true", "false"):
        raise MalformedError(f"{name} is true or false")
    return raw == "true"


def name_filter(raw: str | None) -> str | None:
    """The beginning of a name to filter by: a name's own bounds (None when not asked)."""
    if raw is None:
        return None
    text = " ".join(raw.split())
    if not identity.name_key(text) or len(text) > identity.MAX_NAME or not text.isprintable():
        raise MalformedError(f"name is 1 to {identity.MAX_NAME} printable characters")
    return text


def games_page(request: Request) -> tuple[int | None, int]:
    """A page of games the query asks for: before which game (none: the newest), how many."""
    before = query_int(request, "before", None, 1, 2**53)
    return before, query_int(request, "limit", GAMES_PAGE, 1, MAX_GAMES_PAGE) or GAMES_PAGE


class Pages:
    """The read-only players' pages over a store's ``engine``."""

    def __init__(self, engine: Engine, apart: bool = False) -> None:
        """``apart``: served by a process that holds no table (``--role pages``): its ranks
        and the board's size come from :class:`~flyswat.server.players_store.Standings` at
        most :data:`STANDINGS_TTL_S` old, and its quick reads run their SQL on its event
        loop (:meth:`db`). Else (a node) ranks are counted at each read, so that a player
        sees their new rank at once, and every read's SQL runs on threads of its own."""
        self.engine = engine
        self.standings = ps.Standings(STANDINGS_TTL_S) if apart else None
        #: Reads need no transaction: in autocommit a connection goes back to the pool
        #: without a rollback's round trip.
        self.reads = engine.execution_options(isolation_level="AUTOCOMMIT")
        #: The players' SQL runs on threads of its own, few of them: each thread that holds
        #: the interpreter makes the event loop wait for it, so many at once (the default
        #: pool has one a core and four more) would hold up every table's reveals.
        self.pool = ThreadPoolExecutor(DB_THREADS, thread_name_prefix="flyswat-players")

    def close(self) -> None:
        """Let the SQL threads go (what they are running ends first)."""
        self.pool.shutdown(wait=False)

    async def db(self, work: Callable[[Connection], T], write: bool = False,
                 quick: bool = False) -> T:  # fmt: skip
        """``work(conn)``, in a transaction when ``write``, on a worker thread: the event
        loop, and every table on it, never waits for the players' SQL (a slow leaderboard
        or profile holds no reveal). Apart, a ``quick`` read (a fraction of a millisecond
        of SQL by an index, whatever it is asked: a profile, a page of a player's games, a
        near page of the board, a game) runs on the loop: there is no table to hold up, and
        it costs the process a third less CPU than a thread's round trip
        (``docs/BENCHMARKS.md``); a read whose cost the client's query can raise (the
        replays' filters, a far page of the board) still takes a thread."""

        def run() -> T:
            with self.engine.begin() if write else self.reads.connect() as conn:
                return work(conn)

        if quick and self.standings is not None:  # apart
            return run()
        return await asyncio.get_running_loop().run_in_executor(self.pool, run)

    def _standing(self) -> bool:
        """The standings need no reading now (reading them walks every rated player: a
        thread's work)."""
        return self.standings is None or self.standings.fresh()

    async def profile(self, request: Request) -> Response:
        pid = player_id(request)
        found = await self.db(
            lambda conn: ps.profile(conn, pid, self.standings), quick=self._standing()
        )
        return JSONResponse(p.Profile(**found).model_dump())

    async def games(self, request: Request) -> Response:
        pid = player_id(request)
        before, limit = games_page(request)
        rows, nxt = await self.db(lambda conn: ps.games_page(conn, pid, before, limit), quick=True)
        return JSONResponse(p.PlayedGames(games=[p.PlayedGame(**r) for r in rows],
                                          next=nxt).model_dump())  # fmt: skip

    async def listed(self, request: Request) -> Response:
        """The recent games of public tables, filtered (Replays' list)."""
        query = ps.ListedQuery(
            player=valid_id(who) if (who := request.query_params.get("player")) else None,
            name=name_filter(request.query_params.get("name")),
            seats=query_int(request, "seats", None, MIN_SEATS, MAX_SEATS),
            rated=query_flag(request, "rated"),
        )
        before, limit = games_page(request)
        rows, nxt = await self.db(lambda conn: ps.listed_games(conn, query, before, limit))
        return JSONResponse(p.ListedGames(games=[p.ListedGame(**r) for r in rows],
                                          next=nxt).model_dump())  # fmt: skip

    async def leaderboard(self, request: Request) -> Response:
        limit = query_int(request, "limit", BOARD_PAGE, 1, MAX_BOARD_PAGE) or BOARD_PAGE
        offset = query_int(request, "offset", 0, 0, MAX_OFFSET) or 0
        pool = request.query_params.get("pool", "people")
        if pool not in ("people", "bots"):
            raise MalformedError("pool is people or bots")
        rows, total = await self.db(
            lambda conn: ps.leaderboard(conn, limit, offset, pool == "bots", self.standings),
            quick=offset <= QUICK_OFFSET and self._standing(),
        )
        bots = {level: r.shown for level, r in BOT_RATINGS.items()}
        board = p.Leaderboard(players=[p.Leader(**r) for r in rows], total=total, bots=bots)
        return JSONResponse(board.model_dump())

    async def game(self, request: Request) -> Response:
        game = str(request.path_params["game"])
        found = await self.db(lambda conn: ps.game_summary(conn, game), quick=True)
        if found is None:
            raise IllegalActionError("no finished game with that id", "not_found")
        return JSONResponse(p.GameSummary(**found).model_dump())

    async def game_record(self, request: Request) -> Response:
        game = str(request.path_params["game"])
        found = await self.db(lambda conn: ps.record_of(conn, game), quick=True)
        if found is None:
            raise IllegalActionError("no finished game with that id", "not_found")
        name = f"flyswat-{game}.json"
        return Response(found, media_type="application/json",
                        headers={"content-disposition": f'inline; filename="{name}"'})  # fmt: skip

    def routes(self) -> list[Route]:
        """The pages' routes (GET)."""
        return [
            Route("/api/players/{player}", self.profile),
            Route("/api/players/{player}/games", self.games),
            Route("/api/leaderboard", self.leaderboard),
            Route("/api/games", self.listed),
            Route("/api/games/{game}", self.game),
            Route("/api/games/{game}/record", self.game_record),
        ]
