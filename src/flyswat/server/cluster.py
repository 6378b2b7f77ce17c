"""The cluster: this process among the nodes that serve one store.

Every serving process is a **node**: an id and a URL where the other nodes and the clients
reach it. Each table is owned by exactly one node, which alone runs it; its row in
``flyswat_owners`` says which. Ownership lives in the store, beside the events, so that the
store can refuse the events of a node that lost a table (:meth:`flyswat.server.store.Store.
write_batch` checks it in the same transaction): a node paused past its lease cannot write
over the node that took its tables.

Two things are shared besides: which nodes are alive (each beats every ``beat_s``; one
silent for ``dead_after_s`` is dead, and any live node may adopt its tables: the
:class:`~flyswat.server.settings.Timings`, settings of every node) and the
lobby's list of open public tables. By default both live in the store too (the embedded
SQLite file for ``flyswat serve --workers N``, or PostgreSQL); with ``--redis`` they live in
Redis (:class:`RedisShared`), which takes the beats and the lobby's polls off the database.

Every method that touches the database is synchronous and short; the server calls them on a
thread (``asyncio.to_thread``) so that a busy database never holds up the event loop.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import (
    bindparam,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from flyswat.server.settings import Timings
from flyswat.server.store import meta, nodes, owners, tables, write_lock

log = logging.getLogger("flyswat.server")

# The statements a node runs over and over (its beats, the lobby's list, its checks of what it
# owns), made once: a statement built anew holds reference cycles (its bound parameters),
# garbage that only a collection frees, and the collector's policy
# (:func:`flyswat.server.serve.collect`) wants none made over and over.
_BEAT = (
    update(nodes)
    .where(nodes.c.id == bindparam("node_id"))
    .values(url=bindparam("at_url"), seen=bindparam("now"), state=bindparam("node_state"))
)
_ALIVE = select(nodes.c.id, nodes.c.url).where(
    nodes.c.seen > bindparam("since"), nodes.c.state != "down"
)
_MINE = select(owners.c.code).where(owners.c.node == bindparam("node_id"))
_OWNER = select(owners.c.node).where(owners.c.code == bindparam("table_code"))
_LISTING = (
    select(owners.c.code, owners.c.node, owners.c.listing, owners.c.listed_at)
    .where(owners.c.listing.is_not(None))
    .order_by(owners.c.listed_at.desc())
)
_LISTED = update(owners).where(
    owners.c.code == bindparam("table_code"), owners.c.node == bindparam("node_id")
)
_RELIST = _LISTED.where(owners.c.listed_at.is_not(None)).values(listing=bindparam("text"))
_LIST = _LISTED.where(owners.c.listed_at.is_(None)).values(
    listing=bindparam("text"), listed_at=bindparam("at")
)
_UNLIST = _LISTED.values(listing=None, listed_at=None)
_ORPHANS = (
    select(tables.c.code, owners.c.node)
    .select_from(tables.outerjoin(owners, owners.c.code == tables.c.code))
    .where(
        tables.c.state.in_(("lobby", "playing")),
        or_(owners.c.node.is_(None), owners.c.node.not_in(bindparam("live", expanding=True))),
    )
)


@dataclass(frozen=True, slots=True)
class Owner:
    """Who owns a table: ``node`` (none: nobody, free to adopt), its ``url``, ``alive``."""

    node: str | None
    url: str | None
    alive: bool


@dataclass(frozen=True, slots=True)
class Listing:
    """One open public table in the lobby's list, as its owner published it."""

    code: str
    node: str
    info: dict[str, Any]  # TableInfo's fields; ``fill_at``: wall-clock s of the bots' fill
    listed_at: float


class Shared:
    """What the nodes share besides ownership — who is alive, the lobby's list — kept in
    the store's database. ``timings``: when a silent node is dead."""

    def __init__(self, engine: Engine, timings: Timings | None = None) -> None:
        self.engine = engine
        self.timings = timings or Timings()

    def beat(self, node: str, url: str, now: float, state: str = "up") -> None:
        """``node`` is alive at ``url`` (``state``: up, draining, down)."""
        with self.engine.begin() as conn:
            done = conn.execute(
                _BEAT, {"node_id": node, "at_url": url, "now": now, "node_state": state}
            )
            if done.rowcount == 0:
                conn.execute(insert(nodes).values(id=node, url=url, seen=now, state=state))

    def alive(self, now: float) -> dict[str, str]:
        """The live nodes: ``{id: url}``."""
        with self.engine.connect() as conn:
            rows = conn.execute(_ALIVE, {"since": now - self.timings.dead_after_s})
            return {r[0]: r[1] for r in rows}

    def publish(self, node: str, entries: dict[str, dict[str, Any] | None], now: float) -> None:
        """Put tables in the lobby's list (``info``) or take them out (``None``)."""
        with self.engine.begin() as conn:
            for code, info in entries.items():
                which = {"table_code": code, "node_id": node}
                if info is None:
                    conn.execute(_UNLIST, which)
                    continue
                text = orjson.dumps(info).decode()
                # Keep the first listing time: the list is newest first.
                conn.execute(_RELIST, {**which, "text": text})
                conn.execute(_LIST, {**which, "text": text, "at": now})

    def unlist(self, code: str) -> None:
        """Take table ``code`` out of the list, whoever listed it (it was adopted: the
        adoption cleared its row already)."""

    def listing(self) -> list[Listing]:
        """Every listed table, newest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(_LISTING)
            return [Listing(r[0], r[1], orjson.loads(r[2]), r[3]) for r in rows]

    def close(self) -> None:
        """Release what it holds (the store's engine is the store's)."""


class RedisShared(Shared):
    """Who is alive and the lobby's list in Redis (``--redis``): a key per node that
    expires ``dead_after_s`` after its last beat, and one hash of listed tables; every key
    begins with ``prefix`` (clusters that share a Redis database each have their own)."""

    def __init__(
        self, engine: Engine, url: str, timings: Timings | None = None, prefix: str = "flyswat:"
    ) -> None:
        from flyswat.extras import require

        require("cluster", "--redis", "redis")
        import redis

        super().__init__(engine, timings)
        self.prefix = prefix
        self.redis: Any = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        self.errors = (redis.RedisError, OSError)
        self.redis.ping()
        self._publish = self.redis.register_script(self.PUBLISH)

    def _k(self, name: str) -> str:
        return self.prefix + name

    def beat(self, node: str, url: str, now: float, state: str = "up") -> None:
        super().beat(node, url, now, state)  # the store keeps the beats too: the last word
        try:
            pipe = self.redis.pipeline()
            pipe.sadd(self._k("nodes"), node)
            if state == "down":
                pipe.delete(self._k(f"node:{node}"))
            else:
                key, value = self._k(f"node:{node}"), f"{state} {url}"
                pipe.set(key, value, px=round(self.timings.dead_after_s * 1000))
            pipe.execute()
        except self.errors:
            log.warning("Redis did not take this node's beat; the store did")

    def alive(self, now: float) -> dict[str, str]:
        try:
            return self._alive()
        except self.errors:  # Redis is away: the store knows the beats too
            return super().alive(now)

    def _alive(self) -> dict[str, str]:
        ids = sorted(x.decode() for x in self.redis.smembers(self._k("nodes")))
        if not ids:
            return {}
        values = self.redis.mget([self._k(f"node:{i}") for i in ids])
        found = {}
        for node, value in zip(ids, values, strict=True):
            if value is not None:
                state, _, url = value.decode().partition(" ")
                if state != "down":
                    found[node] = url
        return found

    #: Publish entries of ``ARGV[1]`` (the node), listed first at ``ARGV[2]``: pairs of a code
    #: and its entry ("" to unlist it). A node changes only its own entries: one that lost a
    #: table (paused past its lease) cannot unlist or overwrite the adopter's.
    PUBLISH = """
    local node, now = ARGV[1], ARGV[2]
    for i = 3, #ARGV, 2 do
        local code, entry = ARGV[i], ARGV[i + 1]
        local holder = redis.call('HGET', KEYS[3], code)
        if entry == '' then
            if holder == node then
                redis.call('HDEL', KEYS[1], code)
                redis.call('HDEL', KEYS[3], code)
                redis.call('ZREM', KEYS[2], code)
            end
        elseif (not holder) or holder == node then
            redis.call('HSET', KEYS[1], code, entry)
            redis.call('HSET', KEYS[3], code, node)
            redis.call('ZADD', KEYS[2], 'NX', now, code)
        end
    end
    return 0
    """

    def publish(self, node: str, entries: dict[str, dict[str, Any] | None], now: float) -> None:
        keys = [self._k("lobby"), self._k("lobby:order"), self._k("lobby:node")]
        argv: list[Any] = [node, now]
        for code, info in entries.items():
            entry = b"" if info is None else orjson.dumps({"node": node, "info": info})
            argv += [code, entry]
        self._publish(keys=keys, args=argv)

    def unlist(self, code: str) -> None:
        try:
            pipe = self.redis.pipeline()
            pipe.hdel(self._k("lobby"), code)
            pipe.hdel(self._k("lobby:node"), code)
            pipe.zrem(self._k("lobby:order"), code)
            pipe.execute()
        except self.errors:
            log.warning("Redis did not unlist table %s", code)

    def listing(self) -> list[Listing]:
        try:
            return self._listing()
        except self.errors:  # Redis is away: each node lists its own tables meanwhile
            log.warning("Redis did not answer for the lobby's list")
            return []

    def _listing(self) -> list[Listing]:
        order = self.redis.zrevrange(self._k("lobby:order"), 0, -1, withscores=True)
        if not order:
            return []
        codes = [c.decode() for c, _ in order]
        values = self.redis.hmget(self._k("lobby"), codes)
        found = []
        for (code, (_, at)), value in zip(zip(codes, order, strict=True), values, strict=True):
            if value is not None:
                entry = orjson.loads(value)
                found.append(Listing(code, entry["node"], entry["info"], at))
        return found

    def close(self) -> None:
        self.redis.close()


class Cluster:
    """This node: its id and URL, the tables it owns, and what it shares with the others.

    ``clock``: wall-clock seconds (nodes on different machines compare them: keep their
    clocks synchronised, as NTP does, well within ``dead_after_s``). ``timings``: its beat
    and lease (those of ``shared`` when it is given).
    """

    def __init__(
        self, engine: Engine, node: str, url: str, shared: Shared | None = None, clock: Any = None,
        timings: Timings | None = None,
    ) -> None:  # fmt: skip
        self.engine = engine
        self.node = node
        self.url = url
        self.shared = shared or Shared(engine, timings)
        self.timings = self.shared.timings
        self.clock = clock or time.time
        self.state = "up"
        #: The live nodes at the last :meth:`beat`.
        self.peers: dict[str, str] = {}
        self.beaten_at = time.monotonic()  # the last beat that reached the store
        #: Times a beat came more than the lease after the one before (a pause, a stall),
        #: and how many of those a check of every table has covered since (:meth:`checked`).
        self.lapses = 0
        self._checked = 0

    def stale(self) -> bool:
        """May this node's tables be another's now? True while it has gone without a beat
        long enough to be taken for dead (a paused process), and after such a gap until
        every table it holds has been checked against the store (:meth:`checked`): a node
        woken from a pause beats again at once, but its lease lapsed meanwhile, and the
        beat does not give back what another node adopted."""
        silent = time.monotonic() - self.beaten_at
        return self.lapses != self._checked or silent > self.timings.dead_after_s

    def checked(self, lapses: int) -> None:
        """Every table held was checked against the store, in a check begun when
        :attr:`lapses` was ``lapses``."""
        self._checked = max(self._checked, lapses)

    # -- presence --------------------------------------------------------------------------

    def beat(self) -> dict[str, str]:
        """Say this node is alive; returns the live nodes."""
        now = self.clock()
        self.shared.beat(self.node, self.url, now, self.state)
        beaten_at = time.monotonic()
        if beaten_at - self.beaten_at > self.timings.dead_after_s:
            self.lapses += 1  # the lease lapsed between the two beats
        self.beaten_at = beaten_at
        self.peers = self.shared.alive(now)
        if self.state != "down":
            self.peers.setdefault(self.node, self.url)
        return self.peers

    def start_beating(self, every_s: float | None = None) -> None:
        """Beat every ``every_s`` (by default the timings' ``beat_s``) from a thread of its
        own: a node whose event loop is busy
        (overloaded, not dead) keeps its tables; only a process that stopped — killed,
        paused — goes silent."""
        self._stop = threading.Event()
        every = every_s or self.timings.beat_s

        def run() -> None:
            while not self._stop.wait(every):
                try:
                    self.beat()
                except Exception:  # the store or Redis away for a moment: beat again
                    log.exception("the cluster's beat failed")

        self._beating = threading.Thread(target=run, name="flyswat-beat", daemon=True)
        self._beating.start()

    def stop_beating(self) -> None:
        """No more beats (before :meth:`leave`)."""
        stop = getattr(self, "_stop", None)
        if stop is not None:
            stop.set()
            self._beating.join(5)

    def leave(self) -> None:
        """This node stops: its tables are free to adopt at once, by anyone."""
        self.stop_beating()
        self.state = "down"
        with self.engine.begin() as conn:
            conn.execute(
                update(owners)
                .where(owners.c.node == self.node)
                .values(node=None, listing=None, listed_at=None)
            )
        self.shared.beat(self.node, self.url, self.clock(), "down")
        self.shared.publish(self.node, dict.fromkeys(self._published, None), self.clock())

    @property
    def _published(self) -> list[str]:
        return [x.code for x in self.shared.listing() if x.node == self.node]

    # -- ownership -------------------------------------------------------------------------

    def owner(self, code: str) -> Owner:
        """Who owns table ``code`` now."""
        with self.engine.connect() as conn:
            row = conn.execute(_OWNER, {"table_code": code}).first()
        node = row[0] if row else None
        if node is None:
            return Owner(None, None, False)
        if node == self.node:
            return Owner(node, self.url, self.state != "down")
        alive = self.shared.alive(self.clock())
        return Owner(node, alive.get(node), node in alive)

    def adopt(self, code: str, dead: Iterable[str] | None = None) -> bool:
        """Take table ``code`` if nobody owns it or its owner is dead (``dead``: the nodes
        known dead; by default, asked now) — dead by the store's beats too, whatever Redis
        says; True if this node owns it now."""
        now = self.clock()
        with self.engine.begin() as conn:
            write_lock(conn)
            row = conn.execute(_OWNER, {"table_code": code}).first()
            if row is None:
                try:
                    with conn.begin_nested():
                        conn.execute(insert(owners).values(code=code, node=self.node, since=now))
                except IntegrityError:
                    return False  # another node adopted it just now
                return True
            held = row[0]
            if held == self.node:
                return True
            if held is not None and not self._dead(conn, held, dead, now):
                return False
            done = conn.execute(
                update(owners)
                .where(owners.c.code == code, _held_by(held))
                .values(node=self.node, since=now, listing=None, listed_at=None)
            )
            if done.rowcount != 1:
                return False
        self.shared.unlist(code)  # the dead node's entry: this node lists it anew
        return True

    def _dead(self, conn: Connection, node: str, dead: Iterable[str] | None, now: float) -> bool:
        if dead is not None and node not in set(dead):
            return False
        if dead is None and node in self.shared.alive(now):
            return False
        seen = conn.execute(select(nodes.c.seen, nodes.c.state).where(nodes.c.id == node)).first()
        # Its beats reach the store: alive (Redis may have lost its key).
        return seen is None or seen[1] == "down" or seen[0] <= now - self.timings.dead_after_s

    def mine_still(self, code: str) -> bool:
        """Does this node still own table ``code``, as the store says?"""
        with self.engine.connect() as conn:
            row = conn.execute(_OWNER, {"table_code": code}).first()
        return row is not None and row[0] == self.node

    def mine(self) -> set[str]:
        """The tables this node owns, as the store says."""
        with self.engine.connect() as conn:
            rows = conn.execute(_MINE, {"node_id": self.node})
            return {r[0] for r in rows}

    def orphans(self, alive: Iterable[str]) -> list[tuple[str, str | None]]:
        """Tables in the lobby or in play whose owner is none or not among ``alive``:
        ``(code, owner)``, oldest first."""
        live = list(alive)
        with self.engine.connect() as conn:
            rows = conn.execute(_ORPHANS, {"live": live})
            return [(r[0], r[1]) for r in rows]

    def secret(self) -> str:
        """The cluster's shared secret (made by the first node): a node that forwards a
        request proves with it that the client address it names may be believed."""
        with self.engine.begin() as conn:
            row = conn.execute(select(meta.c.value).where(meta.c.key == "secret")).first()
            if row is not None:
                return str(row[0])
            made = secrets.token_urlsafe(32)
            try:
                with conn.begin_nested():
                    conn.execute(insert(meta).values(key="secret", value=made))
            except IntegrityError:
                pass
            row = conn.execute(select(meta.c.value).where(meta.c.key == "secret")).first()
            assert row is not None
            return str(row[0])

    def close(self) -> None:
        """Release Redis, if any."""
        self.shared.close()


def _held_by(node: str | None) -> Any:
    return owners.c.node.is_(None) if node is None else owners.c.node == node
