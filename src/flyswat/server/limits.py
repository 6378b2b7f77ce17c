"""Limits that keep one client from taking the server from everybody else — pure parts.

Nothing here reads a clock or touches a socket: every method takes ``now`` (seconds, any
monotonic origin), so the limits are tested without sleeping. The uvicorn protocols and the
ASGI middleware that apply them live in :mod:`flyswat.server.transport`.

- :class:`Limits`: every setting, with its default, its ``flyswat serve`` option and its help
  (``docs/PROTOCOL.md``, section *Limits*, documents the same list).
- :class:`AddressBuckets`: a :class:`~flyswat.bucket.TokenBucket` per client address (requests,
  tables created, WebSocket connects), in memory bounded by ``max_addresses``.
- :class:`AddressCounter`: connections open per client address, under a cap.
- :class:`RepeatFilter`: a :class:`logging.Filter` that lets a few identical records through
  per interval and then says once how many it held back.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import math
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, fields
from typing import Any

from flyswat.bucket import TokenBucket
from flyswat.options import add_options, build, values

__all__ = ["AddressBuckets", "AddressCounter", "Limits", "RepeatFilter", "TokenBucket"]

#: Addresses whose buckets are kept at most (idle ones are dropped first).
MAX_ADDRESSES = 10_000


def address_key(host: str) -> str:
    """The address the per-address limits count ``host`` under: an IPv4 address as it is,
    an IPv6 one by its /64 (one subscriber's usual share), an IPv4-mapped one as IPv4."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return host


def _opt(default: Any, flag: str, help: str) -> Any:
    return field(default=default, metadata={"flag": flag, "help": help})


@dataclass(frozen=True, slots=True)
class Limits:
    """The transport's limits; every one is a ``flyswat serve`` option (``flag``)."""

    header_timeout_s: float = _opt(
        10.0, "--header-timeout", "seconds a connection has to send a complete request head"
    )
    body_timeout_s: float = _opt(
        10.0, "--body-timeout", "seconds a request body has to arrive whole after its head"
    )
    keep_alive_s: int = _opt(5, "--keep-alive", "seconds an idle keep-alive connection is kept")
    max_head_bytes: int = _opt(16384, "--max-head-bytes", "largest request head, in bytes")
    ws_max_size: int = _opt(
        1 << 20, "--ws-max-size", "largest WebSocket frame, in bytes (the socket is closed past it)"
    )
    hello_timeout_s: float = _opt(
        10.0, "--hello-timeout", "seconds a new WebSocket has to say hello"
    )
    max_missed_pings: int = _opt(
        10, "--max-missed-pings", "pings in a row a WebSocket may leave unanswered"
    )
    max_behind_bytes: int = _opt(
        256 * 1024,
        "--max-behind",
        "bytes of messages a client may fall behind before it is dropped",
    )
    lobby_ttl_s: float = _opt(
        1800.0, "--lobby-ttl", "seconds a lobby with nobody connected stays open"
    )
    seat_ttl_s: float = _opt(
        120.0, "--seat-ttl", "seconds a joined lobby seat is kept for a holder who is not there"
    )
    connections_per_address: int = _opt(
        64, "--connections-per-address", "open connections one client address may hold"
    )
    max_connections: int = _opt(
        0,
        "--max-connections",
        "open connections in all; 0 = the descriptor limit (RLIMIT_NOFILE) less --fd-reserve",
    )
    fd_reserve: int = _opt(
        64, "--fd-reserve", "file descriptors kept free for the store, logs and accepting"
    )
    backlog: int = _opt(
        2048,
        "--backlog",
        "connections accepted at once (and queued by the kernel); at most a quarter of the "
        "connection cap",
    )
    tables_per_minute: float = _opt(
        10.0, "--tables-per-minute", "tables one address may create per minute, sustained"
    )
    table_burst: int = _opt(20, "--table-burst", "tables one address may create at once")
    requests_per_second: float = _opt(
        30.0, "--requests-per-second", "HTTP requests per second per address, sustained"
    )
    request_burst: int = _opt(300, "--request-burst", "HTTP requests one address may send at once")
    scrapes_per_minute: float = _opt(
        60.0, "--scrapes-per-minute", "GET /metrics per minute per address, sustained"
    )
    scrape_burst: int = _opt(5, "--scrape-burst", "GET /metrics one address may send at once")
    log_burst: int = _opt(5, "--log-burst", "identical log records let through per interval")
    log_interval_s: float = _opt(60.0, "--log-interval", "seconds of the interval for --log-burst")
    exempt: frozenset[str] = _opt(
        frozenset(),
        "--exempt",
        "an address free of the per-address limits (repeatable; e.g. a load test's 127.0.0.1)",
    )

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name not in ("exempt", "max_connections") and not value > 0:
                raise ValueError(f"{f.metadata['flag']} must be above 0, not {value!r}")
        if self.max_connections < 0:
            raise ValueError(f"--max-connections must be 0 or more, not {self.max_connections}")
        # Exempt addresses as the limits count them (an IPv6 address by its /64).
        object.__setattr__(self, "exempt", frozenset(address_key(a) for a in self.exempt))

    def connection_cap(self, nofile: int) -> int:
        """Open connections in all, given the process's descriptor limit ``nofile``."""
        if self.max_connections:
            return self.max_connections
        return max(1, nofile - self.fd_reserve)

    def accept_backlog(self, nofile: int) -> int:
        """The listening socket's backlog, given the descriptor limit ``nofile``: asyncio
        accepts up to this many connections in one go, before any is refused, so it stays
        well inside what the connection cap leaves free."""
        return max(8, min(self.backlog, self.connection_cap(nofile) // 4))

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Limits:
        """The limits given on the command line or in the environment (see
        :func:`add_arguments`)."""
        limits: Limits = build(cls, **values(cls, args))
        return limits


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One option per field of :class:`Limits`, with its variable and its default."""
    add_options(parser.add_argument_group("limits (docs/PROTOCOL.md, Limits)"), Limits)


class AddressBuckets:
    """A :class:`TokenBucket` per client address, memory bounded.

    A bucket that has filled up again says nothing a new one would not, so it is dropped;
    past ``max_addresses`` the least recently seen address is dropped too (it starts afresh
    if it comes back). Addresses in ``exempt`` are never limited.
    """

    def __init__(
        self,
        rate: float,
        burst: float,
        *,
        max_addresses: int = MAX_ADDRESSES,
        exempt: frozenset[str] = frozenset(),
    ) -> None:
        self.rate = rate
        self.burst = burst
        self.max_addresses = max_addresses
        self.exempt = exempt
        self._buckets: OrderedDict[str, TokenBucket] = OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def _bucket(self, address: str, now: float) -> TokenBucket:
        bucket = self._buckets.pop(address, None)
        if bucket is None:
            bucket = TokenBucket.full(self.rate, self.burst, now)
        self._buckets[address] = bucket  # most recently seen last
        return bucket

    def _evict(self, now: float) -> None:
        while self._buckets:
            address, oldest = next(iter(self._buckets.items()))
            if len(self._buckets) <= self.max_addresses and oldest.full_at() > now:
                break
            del self._buckets[address]

    def give_back(self, address: str, cost: float = 1.0) -> None:
        """Return ``cost`` that :meth:`allow` took from ``address``: what it was taken for
        was refused or failed."""
        bucket = self._buckets.get(address)
        if bucket is not None and address not in self.exempt:
            bucket.give_back(cost)

    def allow(self, address: str, now: float, cost: float = 1.0) -> bool:
        """Take ``cost`` from ``address``'s bucket; False when it is spent (refuse)."""
        if address in self.exempt:
            return True
        allowed = self._bucket(address, now).take(now, cost)
        self._evict(now)
        return allowed

    def retry_after(self, address: str, now: float) -> float:
        """Seconds until ``address`` may try again (for a ``Retry-After`` header)."""
        bucket = self._buckets.get(address)
        return 0.0 if bucket is None else bucket.wait(now)


def table_buckets(limits: Limits) -> AddressBuckets:
    """The per-address bucket of ``POST /api/tables`` (``--tables-per-minute``,
    ``--table-burst``)."""
    return AddressBuckets(limits.tables_per_minute / 60, limits.table_burst, exempt=limits.exempt)


def request_buckets(limits: Limits) -> AddressBuckets:
    """The per-address bucket of HTTP requests (``--requests-per-second``, ``--request-burst``)."""
    return AddressBuckets(limits.requests_per_second, limits.request_burst, exempt=limits.exempt)


def scrape_buckets(limits: Limits) -> AddressBuckets:
    """The per-address bucket of ``GET /metrics`` (``--scrapes-per-minute``,
    ``--scrape-burst``): a scrape costs the node a few ms at load, a hundred times a page, so
    it has a bucket of its own, far below the requests' (a Prometheus scrapes every 15 s)."""
    return AddressBuckets(limits.scrapes_per_minute / 60, limits.scrape_burst, exempt=limits.exempt)


class AddressCounter:
    """Connections open per client address, each under ``cap``; memory is one entry per
    address with a connection open. Addresses in ``exempt`` are counted but never refused."""

    def __init__(self, cap: int, exempt: frozenset[str] = frozenset()) -> None:
        self.cap = cap
        self.exempt = exempt
        self._open: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._open)

    def count(self, address: str) -> int:
        """Connections open from ``address``."""
        return self._open.get(address, 0)

    def acquire(self, address: str) -> bool:
        """Count one more connection from ``address``; False (and nothing counted) at the cap."""
        n = self._open.get(address, 0)
        if n >= self.cap and address not in self.exempt:
            return False
        self._open[address] = n + 1
        return True

    def release(self, address: str) -> None:
        """One connection from ``address`` closed."""
        n = self._open.get(address, 0) - 1
        if n > 0:
            self._open[address] = n
        else:
            self._open.pop(address, None)


_NUMBERS = re.compile(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)?")


@dataclass(slots=True)
class _Window:
    start: float
    passed: int = 0
    held: int = 0
    name: str = ""
    level: int = logging.WARNING
    text: str = ""


class RepeatFilter(logging.Filter):
    """Let at most ``burst`` identical records through per ``interval_s``, then say once
    how many were held back.

    Records are identical when their logger, level, source line, exception type and the
    first line of their message template (``record.msg`` before its arguments, with numbers
    and hex addresses blotted out) agree — a traceback per failed ``accept`` is one kind of
    record however often it comes, and so is asyncio's "Exception in callback <handle
    when=...>". Time is the record's own ``created``. When a
    window with held-back records is over, the next record through the filter (of any kind)
    is preceded by one summary record on the same logger: ``N more like "..." in the last
    60 s``; so does :meth:`summarize` (``flyswat serve`` calls it every few seconds, so
    that a flood that stops is summed up too), and :meth:`flush` says what is left (on
    exit). At most ``max_kinds`` kinds are remembered; the oldest are forgotten first.
    """

    SUMMARY = "flyswat_summary"

    def __init__(self, burst: int = 5, interval_s: float = 60.0, max_kinds: int = 1000) -> None:
        super().__init__()
        self.burst = burst
        self.interval_s = interval_s
        self.max_kinds = max_kinds
        self._windows: OrderedDict[tuple[Any, ...], _Window] = OrderedDict()
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        """Whether ``record`` is let through (the summaries due go out first)."""
        if getattr(record, self.SUMMARY, False):
            return True
        decided = getattr(record, "flyswat_repeat", None)
        if decided is not None:  # the same record at a second handler
            return bool(decided)
        with self._lock:
            due = self._expire(record.created)
            passed = self._count(record)
        record.flyswat_repeat = passed
        for window in due:
            self._emit(window)
        return passed

    def summarize(self, now: float) -> list[str]:
        """Say the summaries of the windows over by ``now`` (a quiet log's timer calls this);
        returns their texts."""
        return self._say(now, every=False)

    def flush(self, now: float) -> list[str]:
        """Say every summary still owed, windows over or not; returns their texts."""
        return self._say(now, every=True)

    def _say(self, now: float, every: bool) -> list[str]:
        with self._lock:
            due = self._expire(now, every)
        for window in due:
            self._emit(window)
        return [self.summary_text(w) for w in due]

    def summary_text(self, window: _Window) -> str:
        """``N more like "<template>" in the last <interval> s``."""
        return f'{window.held} more like "{window.text}" in the last {self.interval_s:g} s'

    def _count(self, record: logging.LogRecord) -> bool:
        first = str(record.msg).strip().split("\n", 1)[0]
        shape = _NUMBERS.sub("#", first)[:200]
        error = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else ""
        key = (record.name, record.levelno, record.pathname, record.lineno, error, shape)
        window = self._windows.get(key)
        if window is None:
            window = _Window(record.created, name=record.name, level=record.levelno,
                             text=first[:120])  # fmt: skip
            self._windows[key] = window
            while len(self._windows) > self.max_kinds:
                self._windows.popitem(last=False)
        if window.passed < self.burst:
            window.passed += 1
            return True
        window.held += 1
        return False

    def _expire(self, now: float, every: bool = False) -> list[_Window]:
        # Windows are kept in the order they opened, so the expired ones come first.
        due = []
        while self._windows:
            key, window = next(iter(self._windows.items()))
            if not every and now - window.start < self.interval_s:
                break
            del self._windows[key]
            if window.held:
                due.append(window)
        return due

    def _emit(self, window: _Window) -> None:
        logger = logging.getLogger(window.name)
        record = logger.makeRecord(
            window.name, window.level, "(flyswat)", 0, self.summary_text(window), (), None
        )
        setattr(record, self.SUMMARY, True)
        logger.handle(record)


def ceil_seconds(seconds: float) -> int:
    """Whole seconds, rounded up, at least 1 (a ``Retry-After`` value)."""
    return max(1, math.ceil(seconds))
