"""Every setting of ``flyswat serve``, from its flags or from the environment.

One frozen object, :class:`Settings`, holds them all: where the server listens, its store
and Redis, its node of the cluster, the cluster's :class:`Timings`, and the transport's
:class:`~flyswat.server.limits.Limits`. Each field declares its flag, its environment
variable and its help once; ``flyswat serve --help`` and ``docs/DEPLOY.md`` (*Settings*) list
the same. A flag wins over its variable, which wins over the default — the convention of
containers and twelve-factor deployments (``FLYSWAT_DB=postgresql://… flyswat serve``).

A variable that does not parse (``FLYSWAT_PORT=eighty``) or a value out of range stops the
command with a message naming it; nothing starts.
"""

from __future__ import annotations

import argparse
import ipaddress
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from flyswat.errors import IllegalActionError
from flyswat.extras import require
from flyswat.options import add_options, build, env_name, option, values
from flyswat.players.arena import Schedule
from flyswat.server.limits import Limits

#: The embedded store, a file in the working directory.
DEFAULT_DB = "sqlite:///flyswat.db"
#: The spectators one node takes by default, over all its tables.
MAX_SPECTATORS = 10_000


@dataclass(frozen=True, slots=True)
class Timings:
    """How the nodes of a cluster keep time with one another. The defaults are the
    production ones (``docs/DEPLOY.md``); the tests run their nodes with short ones."""

    beat_s: float = option(1.0, "--beat", "seconds between a node's beats")
    dead_after_s: float = option(
        3.0, "--dead-after",
        "seconds without a beat after which a node is dead and its tables free to adopt",
    )  # fmt: skip
    check_every: int = option(
        5, "--check-every", "beats between a node's checks of which tables it still owns"
    )
    publish_s: float = option(
        0.5, "--publish-every", "seconds between a node's publications of its lobby entries"
    )

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not value > 0:
                raise ValueError(f"{f.metadata['flag']} must be above 0, not {value}")
        if self.dead_after_s < 2 * self.beat_s:
            raise ValueError(
                f"--dead-after ({self.dead_after_s:g} s) must be at least two beats "
                f"({2 * self.beat_s:g} s): one late beat must not make a node dead"
            )


def _check_db(db: str) -> None:
    """Raise ValueError, naming the URL meant, unless ``db`` is a SQLite or PostgreSQL URL
    (a file's path given as it is would otherwise end in SQLAlchemy's traceback)."""
    try:
        backend = make_url(db).get_backend_name()
    except ArgumentError:
        backend = None
    if backend not in ("sqlite", "postgresql"):
        hint = f" (a file: --db sqlite:///{db})" if "://" not in db else ""
        raise ValueError(f"--db {db!r} is not sqlite:///FILE or postgresql://…{hint}")


@dataclass(frozen=True, slots=True)
class Settings:
    """Every setting of ``flyswat serve``: its own fields, ``timings`` and ``limits``."""

    host: str = option("127.0.0.1", "--host", "address to listen on")
    port: int = option(8000, "--port", "port to listen on")
    db: str = option(DEFAULT_DB, "--db", "the store: sqlite:///FILE or postgresql://…",
                     metavar="URL")  # fmt: skip
    redis: str | None = option(
        None, "--redis", "redis://… : the cluster's live nodes and lobby list in Redis "
        "(many machines; needs the 'cluster' extra)", metavar="URL",
    )  # fmt: skip
    redis_prefix: str = option(
        "flyswat:", "--redis-prefix",
        "the prefix of every Redis key (clusters sharing one Redis database: one each)",
    )  # fmt: skip
    node_id: str | None = option(
        None, "--node-id", "this node's name in the cluster (default: host:port)"
    )
    advertise: str | None = option(
        None, "--advertise",
        "where other nodes and clients reach this node (default: http://{host}:{port}; "
        "{port} and {slot} stand for a worker's own port and number)", metavar="URL",
    )  # fmt: skip
    workers: int = option(
        0, "--workers",
        "worker processes on this machine, each a node over the same store (0: the number "
        "of cores); worker i also listens on PORT+1+i (docs/DEPLOY.md)",
    )  # fmt: skip
    role: str = option(
        "node", "--role",
        "node: a node of the game (tables, sockets, every page); pages: the players' pages "
        "(profiles, games, the leaderboard, records) and the web files alone, no table, for "
        "the proxy to send those paths to (docs/DEPLOY.md)",
        choices=("node", "pages"),
    )  # fmt: skip
    bot_pace: float = option(1.0, "--bot-pace", "scale of the bots' pauses before revealing")
    writer: str = option(
        "process", "--writer",
        "where the store's group commit runs: a process of its own beside the node's (its "
        "statements never wait for the loop's interpreter lock), or a thread of the node's "
        "process (a few per cent less CPU, slower results when many games end at once: "
        "docs/BENCHMARKS.md, The writer apart, paced)",
        choices=("thread", "process"),
    )  # fmt: skip
    gc: str = option(
        "tuned", "--gc",
        "garbage collector: tuned (what was made is frozen out of every walk, unwalked but for "
        "a tenth of a second a second, walked to look for cyclic garbage, and every quarter "
        "second while some is found: no collection walks the live heap; docs/BENCHMARKS.md) or "
        "Python's own defaults",
        choices=("tuned", "python"),
    )  # fmt: skip
    rtt_header_from: frozenset[str] = option(
        frozenset(), "--rtt-header-from",
        "a trusted reverse proxy whose X-Flyswat-Rtt-Us header (its round trip to the "
        "client, in us) is believed (repeatable, or comma-separated; off by default)",
    )  # fmt: skip
    trusted_proxies: frozenset[str] = option(
        frozenset(), "--trusted-proxies",
        "an address or network of the reverse proxies whose X-Forwarded-For is believed (the "
        "per-address limits then key the client it names; repeatable, or comma-separated; "
        "none by default: docs/DEPLOY.md)",
    )  # fmt: skip
    operator_secret: str | None = option(
        None, "--operator-secret",
        "opens GET /api/operator/fairplay to requests that carry it (Authorization: Bearer "
        "SECRET; at least 16 characters)", metavar="SECRET",
    )  # fmt: skip
    arena_schedule: str | None = option(
        None, "--arena-schedule",
        "EVERY:MINUTES: an arena of MINUTES minutes every EVERY minutes from 00:00 UTC "
        "(60:30: on the hour, for half an hour; off by default)", metavar="EVERY:MINUTES",
    )  # fmt: skip
    play_now_wait_s: float = option(
        15.0, "--play-now-wait", "seconds a Play now table waits for players before bots fill it "
        "(3 to 120)",
    )  # fmt: skip
    max_spectators: int = option(
        MAX_SPECTATORS, "--max-spectators",
        "spectators this node takes, over all its tables (the next is refused "
        "spectators_full; each is a socket: mind the descriptor limit)",
    )  # fmt: skip
    stall_log_ms: float = option(
        100.0, "--stall-log-ms",
        "an event-loop stall longer than this (ms) is logged, with where the loop was "
        "(10 to 10000)",
    )  # fmt: skip
    log_format: str = option(
        "text", "--log-format", "json: one JSON object per log line (structured logs)",
        choices=("text", "json"),
    )  # fmt: skip
    timings: Timings = field(default_factory=Timings)
    limits: Limits = field(default_factory=Limits)

    def __post_init__(self) -> None:
        _check_db(self.db)
        if not 0 < self.port < 65536:
            raise ValueError(f"--port must be 1 to 65535, not {self.port}")
        if self.workers < 0:
            raise ValueError(f"--workers must be 0 (every core) or more, not {self.workers}")
        if not 3.0 <= self.play_now_wait_s <= 120.0:
            raise ValueError(f"--play-now-wait must be 3 to 120 s, not {self.play_now_wait_s:g}")
        for proxy in self.trusted_proxies:
            try:
                ipaddress.ip_network(proxy, strict=False)
            except ValueError:
                why = f"--trusted-proxies: {proxy!r} is not an address or network"
                raise ValueError(why) from None
        if self.max_spectators < 0:
            raise ValueError(f"--max-spectators must be 0 or more, not {self.max_spectators}")
        if self.arena_schedule is not None:
            try:
                Schedule.parse(self.arena_schedule)
            except ValueError as e:
                raise ValueError(f"--arena-schedule: {e}") from None
        if not 10.0 <= self.stall_log_ms <= 10_000.0:
            raise ValueError(f"--stall-log-ms must be 10 to 10000, not {self.stall_log_ms:g}")
        if not self.bot_pace > 0:
            raise ValueError(f"--bot-pace must be above 0, not {self.bot_pace:g}")

    def check_extras(self) -> None:
        """End the command, naming the extra to install, when a setting needs one that is
        missing: ``--db postgresql://…`` the ``postgres`` extra, ``--redis`` ``cluster``."""
        try:
            if self.db.startswith(("postgresql://", "postgres://")):
                require("postgres", "--db postgresql://…", "psycopg")
            if self.redis:
                require("cluster", "--redis", "redis")
        except IllegalActionError as e:
            raise SystemExit(f"flyswat serve: {e}") from None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Settings:
        """The settings :func:`add_arguments` parsed (flags, then variables, then defaults);
        a value out of range ends the command with a message naming it."""
        timings = build(Timings, **values(Timings, args))
        limits = build(Limits, **values(Limits, args))
        made: Settings = build(cls, **values(cls, args), timings=timings, limits=limits)
        return made

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings as the environment alone gives them (no flags)."""
        parser = argparse.ArgumentParser()
        add_arguments(parser, environ)
        return cls.from_args(parser.parse_args([]))


def add_arguments(
    parser: argparse.ArgumentParser, environ: Mapping[str, str] | None = None
) -> None:
    """Every option of :class:`Settings`: its own, then the cluster's timings, then the
    limits (``docs/PROTOCOL.md``, *Limits*), each with its variable and default."""
    add_options(parser, Settings, environ)
    add_options(parser.add_argument_group("cluster timings (docs/DEPLOY.md)"), Timings, environ)
    add_options(parser.add_argument_group("limits (docs/PROTOCOL.md, Limits)"), Limits, environ)


def described() -> list[tuple[str, str, str, str]]:
    """``(flag, variable, default, help)`` for every setting, in ``--help``'s order (the
    table of ``docs/DEPLOY.md`` is checked against it)."""
    rows = []
    for cls in (Settings, Timings, Limits):
        for f in fields(cls):
            if "flag" in f.metadata:
                default = "" if f.default in (None, MISSING, frozenset()) else str(f.default)
                rows.append((f.metadata["flag"], env_name(f), default, f.metadata["help"]))
    return rows
