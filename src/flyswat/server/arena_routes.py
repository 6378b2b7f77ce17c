"""The arenas' HTTP routes and the loop that pairs their players (``docs/PROTOCOL.md``,
*Arenas*; the rules are :mod:`flyswat.players.arena`'s, the store
:mod:`flyswat.server.arena_store`'s).

Thin, as :mod:`flyswat.server.players_routes` is: each route parses its input with a
:mod:`flyswat.protocol` model, reads or writes the store on a worker thread and hands table
commands to the runner. The loop (:meth:`ArenaRoutes.loop`) runs on every node: once a
second it makes the schedule's arenas, freezes the standings of those that ended, and
pairs the waiting players of the arenas whose pairing this node holds (a lease in the
store: one node at a time, another when it dies). A pair becomes a private table of the
players paired (a Play now table's rules: full, it starts at once); each player finds
their seat by asking for the arena (``POST /api/arenas/{id}/me``), which also says they are
there to be paired.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
import time
from functools import partial
from typing import Any

import orjson
from sqlalchemy.engine import Connection
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from flyswat import protocol as p
from flyswat.errors import FlyswatError, IllegalActionError, MalformedError
from flyswat.players import arena as core
from flyswat.players.ratings import Rating
from flyswat.server import arena_store as store
from flyswat.server import operator, replies
from flyswat.server import players_store as ps
from flyswat.server.pages import player_id
from flyswat.server.players_routes import Caller, Players
from flyswat.table.io import Join

log = logging.getLogger(__name__)

#: Seconds between two passes of the pairing loop; a node's lease on an arena's pairing.
PAIR_EVERY_S, LEASE_S = 1.0, 5.0
#: A node writes that a player is there at most this often (seconds; they ask every few).
SEEN_EVERY_S = 5.0
#: An arena's players are read again at most this often per node for the standings (s).
STANDINGS_FOR_S = 1.0
#: An arena table's game: a half-length game (R6), as Play now's.
ARENA_REMOVE = 56
#: Ms a table waits for a player whose join did not reach it before a bot takes the seat.
ARENA_FILL_MS = 10_000

_ARENA_ID = re.compile(r"[A-Za-z0-9_-]{1,48}")


def _arena_id(request: Request) -> str:
    aid = str(request.path_params["arena"])
    if not _ARENA_ID.fullmatch(aid):
        raise MalformedError("an arena id is 1 to 48 letters, digits, '-' or '_'")
    return aid


class ArenaRoutes:
    """The arenas' routes and pairing loop over the players' routes (their store, identities
    and seats) on one node."""

    def __init__(
        self, players: Players, operator_secret: str | None = None,
        schedule: core.Schedule | None = None,
    ) -> None:  # fmt: skip
        self.players = players
        self.runner = players.runner
        self.node = self.runner.store.node or "local"
        self.expected = f"Bearer {operator_secret}".encode() if operator_secret else None
        self.schedule = schedule
        self._seen: dict[tuple[str, str], float] = {}  # last written by this node
        self._rows: dict[str, tuple[float, list[dict[str, Any]]]] = {}  # read at, rows

    # -- reading ----------------------------------------------------------------------------

    async def _players_of(self, aid: str, fresh: bool = False) -> list[dict[str, Any]]:
        now = time.monotonic()
        cached = self._rows.get(aid)
        if cached is not None and not fresh and now - cached[0] < STANDINGS_FOR_S:
            return cached[1]
        rows = await self.players.db(lambda conn: store.players_of(conn, aid))
        if len(self._rows) > 4 * store.MAX_OPEN_ARENAS:
            self._rows.clear()
        self._rows[aid] = (now, rows)
        return rows

    async def _view(
        self, aid: str, me: Caller | None = None, secret: str = "",
        request: Request | None = None, fresh: bool = False,
    ) -> p.ArenaView:  # fmt: skip
        now = store.now()
        info = await self.players.db(lambda conn: store.one(conn, aid, now))
        rows = await self._players_of(aid, fresh)
        playing = {r["player"] for r in rows if r["playing"]}
        ranked = core.ranked(store.standings(rows))
        shown = [p.ArenaStanding(rank=i + 1, id=s.player, name=s.name, points=s.points,
                                 games=s.games, wins=s.wins, fire=s.on_fire,
                                 playing=s.player in playing)
                 for i, s in enumerate(ranked[: store.SHOWN_STANDINGS])]  # fmt: skip
        mine = None
        if me is not None:
            row = next((r for r in rows if r["player"] == me.id), None)
            if row is not None:
                rank = next(i for i, s in enumerate(ranked) if s.player == me.id) + 1
                seat = None
                if row["playing"] and row["code"] and request is not None:
                    seat = await self._seat(request, row["code"], me, secret)
                mine = p.ArenaMe(rank=rank, points=row["points"], games=row["games"],
                                 active=bool(row["active"]), seat=seat)  # fmt: skip
        return p.ArenaView(arena=p.ArenaInfo(**info), standings=shown, me=mine)

    async def _seat(self, request: Request, code: str, me: Caller, secret: str) -> p.Seated | None:
        """``me``'s seat at the arena table ``code`` (their token now derived from their
        secret); None when the table is gone (its lobby expired)."""
        try:
            reply = await self.players._seat_at(request, code, me, secret)
        except FlyswatError:
            return None
        if reply.status_code != 201:
            return None
        return p.Seated(**orjson.loads(bytes(reply.body)))

    async def _caller(self, request: Request) -> tuple[Caller, str]:
        body = await replies.body(request, p.PlayerAuth)
        me = await self.players.who(body.player, body.secret)
        assert me is not None
        return me, body.secret

    # -- routes -----------------------------------------------------------------------------

    async def listing(self, request: Request) -> Response:
        """``GET /api/arenas``."""
        now = store.now()
        rows = await self.players.db(lambda conn: store.listing(conn, now))
        return JSONResponse(p.Arenas(arenas=[p.ArenaInfo(**r) for r in rows]).model_dump())

    async def view(self, request: Request) -> Response:
        """``GET /api/arenas/{id}``: the arena and its standings."""
        return JSONResponse((await self._view(_arena_id(request))).model_dump())

    async def join(self, request: Request) -> Response:
        """``POST /api/arenas/{id}/join``: the caller takes part (a person: not a bot
        account); they are paired as soon as another player waits."""
        aid = _arena_id(request)
        me, secret = await self._caller(request)
        if me.bot:
            raise IllegalActionError("an arena is for people, not bot accounts",
                                     "bots_not_allowed")  # fmt: skip
        now = store.now()
        await self.players.db(lambda conn: store.join(conn, aid, me.id, me.name, now), write=True)
        self._seen[(aid, me.id)] = time.monotonic()
        view = await self._view(aid, me, secret, request, fresh=True)
        return JSONResponse(view.model_dump())

    async def me(self, request: Request) -> Response:
        """``POST /api/arenas/{id}/me``: the arena as the caller sees it (their place, their
        seat when paired); asking says they are there to be paired."""
        aid = _arena_id(request)
        me, secret = await self._caller(request)
        key, mono = (aid, me.id), time.monotonic()
        if mono - self._seen.get(key, -SEEN_EVERY_S) >= SEEN_EVERY_S:
            if len(self._seen) > 100_000:
                self._seen.clear()
            self._seen[key] = mono
            now = store.now()
            await self.players.db(lambda conn: store.seen(conn, aid, [me.id], now), write=True)
        view = await self._view(aid, me, secret, request)
        return JSONResponse(view.model_dump())

    async def leave(self, request: Request) -> Response:
        """``POST /api/arenas/{id}/leave``: the caller is paired no more (points kept)."""
        aid = _arena_id(request)
        me, secret = await self._caller(request)
        await self.players.db(lambda conn: store.leave(conn, aid, me.id), write=True)
        return JSONResponse((await self._view(aid, me, secret, fresh=True)).model_dump())

    async def results(self, request: Request) -> Response:
        """``GET /api/players/{id}/arenas``: a player's ended arenas and their wins."""
        pid = player_id(request)

        def read(conn: Connection) -> p.ArenaResults:
            rows = store.results_of(conn, pid)
            return p.ArenaResults(arenas=[p.ArenaResult(**r) for r in rows],
                                  won=store.wins_of(conn, pid))  # fmt: skip

        return JSONResponse((await self.players.db(read)).model_dump())

    async def create(self, request: Request) -> Response:
        """``POST /api/operator/arenas`` (``Authorization: Bearer`` the operator's secret)."""
        operator.check(request, self.expected)
        new = await replies.body(request, p.NewArena)
        name = " ".join(new.name.split())
        if not name or not name.isprintable():
            raise MalformedError("an arena's name is 1 to 32 printable characters", "bad_name")
        now, aid = store.now(), secrets.token_urlsafe(9)
        starts = now + new.starts_in_s
        ends = starts + new.minutes * 60
        await self.players.db(lambda conn: store.create(conn, aid, name, starts, ends, now),
                              write=True)  # fmt: skip
        info = await self.players.db(lambda conn: store.one(conn, aid, now))
        return JSONResponse(p.ArenaInfo(**info).model_dump(), status_code=201)

    def routes(self) -> list[Route]:
        """The routes (a refused request raises: :func:`flyswat.server.replies.refused`);
        the operator's route only when an operator's secret is set."""
        out = [
            Route("/api/arenas", self.listing),
            Route("/api/arenas/{arena}", self.view),
            Route("/api/arenas/{arena}/join", self.join, methods=["POST"]),
            Route("/api/arenas/{arena}/me", self.me, methods=["POST"]),
            Route("/api/arenas/{arena}/leave", self.leave, methods=["POST"]),
            Route("/api/players/{player}/arenas", self.results),
        ]
        if self.expected is not None:
            out.append(Route("/api/operator/arenas", self.create, methods=["POST"]))
        return out

    # -- the pairing loop -------------------------------------------------------------------

    async def loop(self, every_s: float = PAIR_EVERY_S) -> None:
        """Pair, finish and schedule, every ``every_s`` seconds, until cancelled."""
        while True:
            await asyncio.sleep(every_s)
            if self.runner.executor.draining:
                continue
            try:
                await self.once(store.now())
            except Exception:  # a store that failed once: the next pass tries again
                log.exception("arena pass failed")

    async def once(self, now: float) -> int:
        """One pass at ``now``: the schedule's arenas made, the ended ones frozen, the
        waiting players of the arenas this node pairs seated; the tables made."""
        schedule = self.schedule

        def book(conn: Connection) -> list[dict[str, Any]]:
            if schedule is not None:
                for starts, ends in schedule.due(now):
                    name = f"Arena {time.strftime('%H:%M', time.gmtime(starts))} UTC"
                    try:  # with as many open as may be, the schedule's waits (nothing written)
                        store.create(conn, schedule.arena_id(starts), name, starts, ends, now)
                    except IllegalActionError:
                        log.warning("arena schedule: too many arenas open; %s not made", name)
            for aid in store.to_finish(conn, now):
                store.finish(conn, aid, now)
            return store.to_pair(conn, self.node, now, LEASE_S)

        made = 0
        for arena in await self.players.db(book, write=True):
            made += await self._pair(arena["id"], now)
        return made

    async def _pair(self, aid: str, now: float) -> int:
        """Seat the waiting players of arena ``aid``; the tables made."""
        rows = await self._players_of(aid, fresh=True)
        tables = core.pair(store.waiting(rows, now))
        if not tables:
            return 0
        names = {r["player"]: r["name"] for r in rows}
        ids = sorted({pid for t in tables for pid in t})
        ratings = await self.players.db(lambda conn: ps.ratings_of(conn, ids))
        for players in tables:
            shown = {pid: ratings.get(pid, Rating()).shown for pid in players}
            code = await self._table(players, names, shown)
            await self.players.db(partial(store.seated, aid=aid, code=code, players=players,
                                          now=now), write=True)  # fmt: skip
        self._rows.pop(aid, None)
        return len(tables)

    async def _table(self, players: list[str], names: dict[str, str],
                     ratings: dict[str, int]) -> str:  # fmt: skip
        """A private table of ``players`` (its first the host), every seat taken: its game
        starts at once (a Play now table's rule); its code."""
        host = players[0]
        create = p.CreateTable.model_validate({
            "name": names[host], "seats": len(players), "public": False,
            "remove": ARENA_REMOVE, "autofill_ms": ARENA_FILL_MS,
        })  # fmt: skip
        table, _, _ = await self.runner.directory.create(create, player=host, rating=ratings[host])
        for pid in players[1:]:
            self.runner.executor.run(table, Join(names[pid], pid, ratings[pid]))
        await self.runner.executor.stored(table)
        return table.code
