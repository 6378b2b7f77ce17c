"""The players' HTTP routes: identities, profiles, games, the leaderboard, Play now.

Thin, as :mod:`flyswat.server.routes` is: each parses its input with a :mod:`flyswat.protocol`
model, reads or writes the store through :mod:`flyswat.server.players_store` in one short
transaction, and hands table commands to the :class:`~flyswat.server.runner.Runner`. The
randomness an identity needs (ids, secrets, claim codes) is drawn here, from ``secrets``.
See ``docs/PROTOCOL.md`` (Players).
"""

from __future__ import annotations

import asyncio
import json
import math
import secrets
import time
from functools import partial
from typing import Any, NamedTuple

import orjson
from sqlalchemy.engine import Connection
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from flyswat import protocol as p
from flyswat.errors import IllegalActionError
from flyswat.players import identity, matching
from flyswat.players.ratings import Rating
from flyswat.server import challenges_store as cs
from flyswat.server import players_store as ps
from flyswat.server import replies
from flyswat.server.batched import Batched
from flyswat.server.cluster import Owner
from flyswat.server.limits import AddressBuckets
from flyswat.server.node import SECRET_HEADER, Forwarder
from flyswat.server.pages import Pages, valid_id
from flyswat.server.runner import Runner
from flyswat.server.transport import client_address, read_body
from flyswat.table.core import Table
from flyswat.table.io import Join

#: Play now: seats, cards removed (a half-length game, R6), and the wait before bots fill in.
PLAY_NOW_SEATS, PLAY_NOW_REMOVE, PLAY_NOW_WAIT_MS = 4, 56, 15_000


class Caller(NamedTuple):
    """Who made a request with an identity: id, name, shown rating, and whether the identity
    is a bot account."""

    id: str
    name: str
    rating: int
    bot: bool = False


class Players:
    """The players' routes over one runner's store (its engine)."""

    def __init__(
        self, runner: Runner, buckets: AddressBuckets,
        play_now_wait_ms: int = PLAY_NOW_WAIT_MS, forwarder: Forwarder | None = None,
    ) -> None:  # fmt: skip
        self.runner = runner
        self.forwarder = forwarder
        self.seating = asyncio.Lock()  # Play now: one look-then-create at a time
        #: Play now's last choice of a node (:meth:`_matchmaker`) and when it was made.
        self._maker: tuple[float, Owner | None] = (-math.inf, None)
        self.wait_ms = play_now_wait_ms
        self.engine = runner.store.engine
        self.pages = Pages(self.engine)  # the read-only pages, and the SQL's threads
        self.db = self.pages.db
        self.buckets = buckets
        #: A table's set-up asks these: each batch read in one trip to a thread.
        self.names = Batched(self.db, _free_names)
        self.callers = Batched(self.db, ps.authenticate_all)

    def close(self) -> None:
        """Let the SQL threads go (what they are running ends first)."""
        self.pages.close()

    # -- who the caller is ----------------------------------------------------------------

    async def who(self, player: str | None, secret: str | None) -> Caller | None:
        """The :class:`Caller` who gave an identity; None for none. Raises ``bad_secret``
        for an id without its secret, or a wrong one."""
        if player is None and secret is None:
            return None
        if player is None or secret is None:
            raise IllegalActionError("an identity is a player id and its secret", "bad_secret")
        row = await self.callers.ask((player, secret))
        return Caller(row["id"], row["name"], Rating(row["mu"], row["sigma"]).shown,
                      bool(row["bot"]))  # fmt: skip

    async def check_player(self, player_id: str) -> None:
        """Raise ``no_player`` unless ``player_id`` is a player's (a table kept for them)."""
        if not identity.valid_id(player_id) or not await self.db(
            lambda conn: ps.ratings_of(conn, [player_id])
        ):
            raise IllegalActionError("no player with that id", "no_player")

    async def anonymous_name(self, name: str) -> str:
        """A name given without an identity: not a bot's or a seat's; a player's name is
        given a short tag, so that nobody can pose as them."""
        found = await self.names.ask(identity.clean_name(name))
        if found is not None:
            return found
        raise IllegalActionError(f"the name {name!r} is taken: choose another", "name_taken")

    def _limited(self, request: Request) -> None:
        if not self.buckets.allow(client_address(request.scope), time.monotonic()):
            raise IllegalActionError("too many requests of this kind: slow down", "rate_limited")

    # -- routes ---------------------------------------------------------------------------

    async def register(self, request: Request) -> Response:
        body = await replies.body(request, p.NewPlayer)
        return await self._new_identity(request, body.name)

    async def register_bot(self, request: Request) -> Response:
        """``POST /api/bots``: a bot account, registered by a person with their own identity."""
        body = await replies.body(request, p.NewBot)
        owner = await self.who(body.player, body.secret)
        assert owner is not None
        if owner.bot:
            raise IllegalActionError("a bot account cannot register another", "not_a_person")
        return await self._new_identity(request, body.name, owner.id)

    async def _new_identity(
        self, request: Request, asked: str, owner: str | None = None
    ) -> Response:
        """A new identity called ``asked`` (a bot account of ``owner``, when given); a name
        already taken is given a short tag."""
        name = identity.clean_name(asked)
        self._limited(request)
        pid, secret = identity.new_id(secrets.token_urlsafe), secrets.token_urlsafe(24)
        for attempt in range(MAX_TAG_TRIES):
            try:
                await self.db(partial(_register, pid=pid, name=name, secret=secret,
                                      owner=owner), write=True)  # fmt: skip
                break
            except IllegalActionError as e:
                if e.code != "name_taken" or attempt == MAX_TAG_TRIES - 1:
                    raise
                name = identity.tagged(identity.clean_name(asked), _tag())
        reply = p.Identity(player=pid, secret=secret, name=name, bot=owner is not None)
        return JSONResponse(reply.model_dump(), status_code=201)

    async def claim_code(self, request: Request) -> Response:
        body = await replies.body(request, p.PlayerAuth)
        await self.who(body.player, body.secret)
        code = "".join(secrets.choice(identity.CLAIM_ALPHABET)
                       for _ in range(identity.CLAIM_LENGTH))  # fmt: skip
        until = time.time() + identity.CLAIM_TTL_S
        await self.db(lambda conn: ps.set_claim(conn, body.player, code, until), write=True)
        shown = f"{code[:4]}-{code[4:]}"
        return JSONResponse(p.ClaimCode(code=shown, expires_in_s=identity.CLAIM_TTL_S).model_dump())

    async def claim(self, request: Request) -> Response:
        body = await replies.body(request, p.Claim)
        self._limited(request)
        code = identity.clean_claim(body.code)
        secret = secrets.token_urlsafe(24)
        now = time.time()
        row = await self.db(lambda conn: ps.claim(conn, code, secret, now), write=True)
        return JSONResponse(
            p.Identity(player=row["id"], secret=secret, name=row["name"]).model_dump()
        )

    async def play_now(self, request: Request) -> Response:
        maker = self._matchmaker()
        passed = SECRET_HEADER in request.headers  # by another node: seat them here
        if maker is not None and self.forwarder is not None and not passed:  # all Play now of these
            raw = await read_body(request, p.MAX_MESSAGE_BYTES)  # seconds meets on one node
            reply = await self.forwarder.forward(request, maker, raw)
            if reply.status_code != 503:
                return reply
            request = _replayed(request, raw)  # that node is going: seat them here
        body = await replies.body(request, p.PlayerAuth)
        await self.runner.admission.enter()  # a seat, maybe a new table: as a join waits
        me = await self.who(body.player, body.secret)
        assert me is not None
        if me.bot:  # Play now's tables take no bot account: a person there chose no program
            raise IllegalActionError(
                "Play now seats people only: a bot account joins a table that takes bot "
                "accounts, or one whose host invited it",
                "bots_not_allowed",
            )
        pid, name, rating, _ = me
        async with self.seating:  # those who ask together at this node sit together
            here = await self._play_now_here(pid, name, rating, body.secret)
        if here is not None:
            return here
        elsewhere = await self._play_now_elsewhere(request, body)
        if elsewhere is not None:
            return elsewhere
        async with self.seating:
            here = await self._play_now_here(pid, name, rating, body.secret)  # opened since?
            if here is not None:
                return here
            self._limited(request)
            create = p.CreateTable.model_validate({"name": name, "seats": PLAY_NOW_SEATS,
                "remove": PLAY_NOW_REMOVE, "autofill_ms": self.wait_ms})  # fmt: skip
            table, seat, token = await self.runner.directory.create(
                create, player=pid, rating=rating, key=body.secret
            )
        return replies.seated(table, seat, token)

    async def _play_now_here(
        self, pid: str, name: str, rating: int, secret: str | None
    ) -> Response | None:
        """A seat at this node's Play now tables: one already held at an unfinished one (a
        resent Play now, whose join may have filled the table and started its game) first,
        else one free at the open one whose players' ratings are closest to ``rating``
        within its band (:mod:`flyswat.players.matching`); None if there is neither."""
        newest = list(reversed(self.runner.directory.tables.values()))
        held = (t for t in newest if _play_now(t) and t.state in ("lobby", "playing")
                and _seated(t, pid))  # fmt: skip
        table = next(held, None) or _closest(newest, rating, self.runner.executor.clock())
        if table is None:
            return None
        join = Join(name, pid, rating, key=secret)
        seat, token = (await self.runner.executor.act(table, join)).reply
        return replies.seated(table, seat, token)

    def _matchmaker(self) -> Owner | None:
        """The node where Play now seats its players now, if not this one (nor a request
        another node passed on): the live nodes take turns, :data:`MATCH_TURN_S` each, so
        that players who ask together sit together, and the tables spread over nodes. The
        choice holds for :data:`MATCH_HOLD_S` at this node (while that node lives), so that
        two players asking here together are not sent apart by a turn that ends between
        them, or by a peer seen dead for a beat."""
        cluster = self.runner.cluster
        if cluster is None:
            return None
        now = time.monotonic()
        made_at, made = self._maker
        if now - made_at < MATCH_HOLD_S and (made is None or made.node in cluster.peers):
            return made
        maker = None
        if len(cluster.peers) >= 2:
            live = sorted(cluster.peers)
            chosen = live[int(time.time() // MATCH_TURN_S) % len(live)]
            if chosen != cluster.node:
                maker = Owner(chosen, cluster.peers[chosen], True)
        self._maker = (now, maker)
        return maker

    async def _play_now_elsewhere(self, request: Request, body: p.PlayerAuth) -> Response | None:
        """A seat at an open Play now table of another node (joined there), if one has one."""
        cluster = self.runner.cluster
        if cluster is None or self.forwarder is None or len(cluster.peers) < 2:
            return None
        for entry in await asyncio.to_thread(cluster.shared.listing):
            info, url = entry.info, cluster.peers.get(entry.node)
            if entry.node == cluster.node or url is None:
                continue
            if info["options"].get("autofill_ms") is None:
                continue
            owner = Owner(entry.node, url, True)
            join = orjson.dumps({"player": body.player, "secret": body.secret})
            path = f"/api/tables/{entry.code}/join"
            reply = await self.forwarder.forward(request, owner, join, path=path, method="POST")
            if reply.status_code == 201:
                return reply
        return None

    # -- challenges -------------------------------------------------------------------------

    async def challenge(self, request: Request) -> Response:
        """``POST /api/challenges``: a private table of two seats hosted by the challenger,
        its free seat kept for the player challenged (``TableOptions.reserved``); an open
        challenge of theirs to the same player is answered again instead."""
        body = await replies.body(request, p.NewChallenge)
        valid_id(body.opponent)
        me = await self.who(body.player, body.secret)
        assert me is not None
        now = time.time()

        def check(conn: Connection) -> dict[str, Any] | None:
            cs.opponent_for(conn, {"id": me.id, "bot": me.bot}, body.opponent)
            return cs.pending(conn, me.id, body.opponent, now)

        found = await self.db(check)
        if found is not None:
            seated = await self._seat_at(request, found["code"], me, body.secret)
            if seated.status_code != 201:
                return seated
            cid, seat = found["id"], orjson.loads(bytes(seated.body))
        else:
            self._limited(request)
            create = p.CreateTable.model_validate({"name": me.name, "seats": 2, "public": False,
                                                   "reserved": body.opponent})  # fmt: skip
            table, at, token = await self.runner.directory.create(
                create, player=me.id, rating=me.rating, key=body.secret
            )
            cid = secrets.token_urlsafe(12)
            await self.db(lambda conn: cs.add(conn, cid, me.id, body.opponent, table.code, now),
                          write=True)  # fmt: skip
            seat = orjson.loads(bytes(replies.seated(table, at, token).body))
        made = await self.db(lambda conn: cs.one(conn, cid, now))
        reply = p.ChallengeMade(challenge=p.Challenge(**made), seat=p.Seated(**seat))
        return JSONResponse(reply.model_dump(), status_code=201)

    async def my_challenges(self, request: Request) -> Response:
        """``POST /api/challenges/mine``: the open challenges to the caller, and theirs."""
        body = await replies.body(request, p.PlayerAuth)
        me = await self.who(body.player, body.secret)
        assert me is not None
        incoming, outgoing = await self.db(lambda conn: cs.of(conn, me.id, time.time()))
        reply = p.Challenges(incoming=[p.Challenge(**c) for c in incoming],
                             outgoing=[p.Challenge(**c) for c in outgoing])  # fmt: skip
        return JSONResponse(reply.model_dump())

    async def accept(self, request: Request) -> Response:
        """``POST /api/challenges/{id}/accept``: the player challenged takes the seat kept
        for them (their seat and token, as a join's)."""
        body = await replies.body(request, p.PlayerAuth)
        me = await self.who(body.player, body.secret)
        assert me is not None
        cid, now = str(request.path_params["challenge"]), time.time()
        found = await self.db(lambda conn: cs.open_to(conn, cid, me.id, now))
        seated = await self._seat_at(request, found["code"], me, body.secret)
        if seated.status_code == 201:  # seated: it is accepted (a lobby gone, it stays open)
            await self.db(lambda conn: cs.decide(conn, cid, me.id, "accepted", now), write=True)
        return seated

    async def decline(self, request: Request) -> Response:
        """``POST /api/challenges/{id}/decline``: the challenge, declined (the challenger
        sees it so in theirs)."""
        body = await replies.body(request, p.PlayerAuth)
        me = await self.who(body.player, body.secret)
        assert me is not None
        cid, now = str(request.path_params["challenge"]), time.time()
        await self.db(lambda conn: cs.decide(conn, cid, me.id, "declined", now), write=True)
        declined = await self.db(lambda conn: cs.one(conn, cid, now))
        return JSONResponse(p.Challenge(**declined).model_dump())

    async def _seat_at(self, request: Request, code: str, me: Caller, secret: str) -> Response:
        """``me``'s seat at table ``code`` (the one they hold, or the one kept for them), as
        a join's reply: at this node, or passed on to the table's owner."""
        found = await self.runner.node.table(code)
        if isinstance(found, Table):
            seat, token = (await self.runner.executor.act(found, Join(me.name, me.id, me.rating,
                                                             key=secret))).reply  # fmt: skip
            return replies.seated(found, seat, token)
        if self.forwarder is None:
            raise IllegalActionError("the table is on another node", "moved")
        join = orjson.dumps({"name": me.name, "player": me.id, "secret": secret})
        path = f"/api/tables/{code}/join"
        return await self.forwarder.forward(request, found, join, path=path, method="POST")

    def routes(self) -> list[Route]:
        """The routes (a refused request raises: :func:`flyswat.server.replies.refused`)."""
        return [
            Route("/api/players", self.register, methods=["POST"]),
            Route("/api/players/claim-code", self.claim_code, methods=["POST"]),
            Route("/api/players/claim", self.claim, methods=["POST"]),
            Route("/api/bots", self.register_bot, methods=["POST"]),
            Route("/api/play", self.play_now, methods=["POST"]),
            Route("/api/challenges", self.challenge, methods=["POST"]),
            Route("/api/challenges/mine", self.my_challenges, methods=["POST"]),
            Route("/api/challenges/{challenge}/accept", self.accept, methods=["POST"]),
            Route("/api/challenges/{challenge}/decline", self.decline, methods=["POST"]),
            *self.pages.routes(),
        ]


#: How long each live node in turn takes every Play now request (seconds).
MATCH_TURN_S = 10.0
#: How long a node keeps sending Play now requests where it sent the first (seconds).
MATCH_HOLD_S = 1.0


def _register(conn: Connection, *, pid: str, name: str, secret: str, owner: str | None) -> None:
    ps.register(conn, pid, name, secret, ps_now(), owner=owner)


def _replayed(request: Request, raw: bytes) -> Request:
    """``request`` again, its body (already read) to be read once more."""

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": raw, "more_body": False}

    return Request(request.scope, receive)


#: Tags tried for a name already taken before giving up (``name_taken``).
MAX_TAG_TRIES = 12


def _free_names(conn: Connection, names: list[str]) -> list[str | Exception | None]:
    """Each guest's name as they may have it: as asked where no player holds it (one
    statement for them all), else with a tag no player holds; None where none was found."""
    taken = ps.names_taken(conn, names)
    return [_tagged(conn, name) if identity.name_key(name) in taken else name for name in names]


def _tagged(conn: Connection, name: str) -> str | None:
    """``name`` with a tag no player holds (None when none of the tags tried was free)."""
    for _ in range(MAX_TAG_TRIES - 1):
        tried = identity.tagged(name, _tag())
        if not ps.name_taken(conn, tried):
            return tried
    return None


def _tag() -> str:
    return "".join(secrets.choice(identity.CLAIM_ALPHABET) for _ in range(identity.TAG_LENGTH))


def ps_now() -> str:
    """The wall-clock time for a new player's row."""
    from flyswat.server.store import now_iso

    return now_iso()


def _play_now(table: Table) -> bool:
    return table.options.autofill_ms is not None


def _closest(tables: list[Table], rating: int, now: float) -> Table | None:
    """The open Play now table of ``tables`` a player rated ``rating`` joins at ``now``."""
    waiting = {t.code: t for t in tables if _play_now(t) and t.listed() and t.fill_due}
    found = matching.choose(rating, [_open(t) for t in waiting.values()], now)
    return waiting[found.code] if found is not None else None


def _open(table: Table) -> matching.OpenTable:
    """A waiting Play now table as the rule sees it: its people's ratings, when it opened
    (its bots are due ``autofill_ms`` after that)."""
    ratings = tuple(s.rating for s in table.seats if s.rating is not None and not s.is_bot)
    opened = (table.fill_due or 0.0) - (table.options.autofill_ms or 0)
    return matching.OpenTable(table.code, ratings, opened)


def _seated(table: Table, player: str) -> bool:
    return any(s.player == player for s in table.seats)


def record_text(record: dict[str, Any]) -> str:
    """A record as the download sends it."""
    return json.dumps(record, indent=2)
