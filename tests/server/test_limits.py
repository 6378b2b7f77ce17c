"""The pure limits: token buckets per address, connection counts, the log filter, the settings.

Every clock here is an argument; nothing sleeps.
"""

from __future__ import annotations

import argparse
import logging
import re
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path

import pytest

from flyswat.server.limits import (
    AddressBuckets,
    AddressCounter,
    Limits,
    RepeatFilter,
    TokenBucket,
    add_arguments,
    address_key,
)

PROTOCOL = Path(__file__).resolve().parents[2] / "docs" / "PROTOCOL.md"


# -- token buckets ------------------------------------------------------------------------


def test_a_full_bucket_allows_its_burst_and_then_refuses() -> None:
    bucket = TokenBucket.full(rate=1.0, burst=3, now=0.0)
    assert [bucket.take(0.0) for _ in range(4)] == [True, True, True, False]


def test_a_bucket_refills_at_its_rate_and_never_above_its_burst() -> None:
    bucket = TokenBucket.full(rate=2.0, burst=3, now=0.0)
    for _ in range(3):
        bucket.take(0.0)
    assert not bucket.take(0.4)  # 0.8 of a token
    assert bucket.take(0.5)  # one token at 0.5 s, taken
    assert bucket.wait(0.5) == pytest.approx(0.5)
    assert [bucket.take(100.0) for _ in range(4)] == [True, True, True, False]


def test_a_token_given_back_can_be_taken_again_but_never_past_the_burst() -> None:
    bucket = TokenBucket.full(rate=1.0, burst=2, now=0.0)
    assert bucket.take(0.0) and bucket.take(0.0) and not bucket.take(0.0)
    bucket.give_back()
    assert bucket.take(0.0) and not bucket.take(0.0)
    for _ in range(5):
        bucket.give_back()
    assert [bucket.take(0.0) for _ in range(3)] == [True, True, False]


def test_a_clock_that_steps_back_gives_no_tokens() -> None:
    bucket = TokenBucket.full(rate=1.0, burst=1, now=10.0)
    assert bucket.take(10.0)
    assert not bucket.take(5.0)
    assert not bucket.take(10.5)
    assert bucket.take(11.0)


def test_each_address_has_a_bucket_of_its_own() -> None:
    buckets = AddressBuckets(rate=1 / 60, burst=2)
    assert [buckets.allow("10.0.0.1", 0.0) for _ in range(3)] == [True, True, False]
    assert buckets.allow("10.0.0.2", 0.0)
    assert buckets.retry_after("10.0.0.1", 0.0) == pytest.approx(60.0)
    assert buckets.retry_after("10.0.0.3", 0.0) == 0.0


def test_an_idle_address_is_forgotten_once_its_bucket_is_full_again() -> None:
    buckets = AddressBuckets(rate=1.0, burst=5)
    for i in range(100):
        buckets.allow(f"10.0.{i // 256}.{i % 256}", 0.0)
    assert len(buckets) == 100
    buckets.allow("10.9.9.9", 10.0)  # everybody else has been idle for 10 s: full again
    assert len(buckets) == 1


def test_the_buckets_keep_at_most_max_addresses() -> None:
    buckets = AddressBuckets(rate=0.001, burst=1, max_addresses=50)
    for i in range(1000):
        assert buckets.allow(f"10.1.{i // 256}.{i % 256}", float(i) / 1000)
        assert len(buckets) <= 50
    assert not buckets.allow("10.1.3.231", 1.0)  # the latest are remembered


def test_an_exempt_address_is_never_limited() -> None:
    buckets = AddressBuckets(rate=0.001, burst=1, exempt=frozenset({"127.0.0.1"}))
    assert all(buckets.allow("127.0.0.1", 0.0) for _ in range(100))
    assert len(buckets) == 0


# -- connections per address --------------------------------------------------------------


def test_connections_past_the_cap_of_an_address_are_refused_until_one_closes() -> None:
    counter = AddressCounter(cap=2)
    assert [counter.acquire("10.0.0.1") for _ in range(3)] == [True, True, False]
    assert counter.acquire("10.0.0.2")
    counter.release("10.0.0.1")
    assert counter.acquire("10.0.0.1")
    assert counter.count("10.0.0.1") == 2


def test_an_address_with_no_connection_left_takes_no_memory() -> None:
    counter = AddressCounter(cap=5)
    for _ in range(3):
        counter.acquire("10.0.0.1")
    for _ in range(4):  # one release too many is harmless
        counter.release("10.0.0.1")
    assert len(counter) == 0
    assert counter.count("10.0.0.1") == 0


def test_an_exempt_address_is_counted_but_never_refused() -> None:
    counter = AddressCounter(cap=1, exempt=frozenset({"127.0.0.1"}))
    assert all(counter.acquire("127.0.0.1") for _ in range(10))
    assert counter.count("127.0.0.1") == 10


@pytest.mark.parametrize(
    ("host", "key"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:bbbb::9", "2001:db8:1:2::/64"),
        ("::ffff:198.51.100.4", "198.51.100.4"),
        ("testclient", "testclient"),
        ("", ""),
    ],
)
def test_an_ipv6_client_is_counted_by_its_64_prefix(host: str, key: str) -> None:
    assert address_key(host) == key


# -- the log filter -----------------------------------------------------------------------


class Keep(logging.Handler):
    """A handler that keeps the messages it is given."""

    def __init__(self, repeat: RepeatFilter) -> None:
        super().__init__()
        self.addFilter(repeat)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def logger() -> Iterator[logging.Logger]:
    log = logging.getLogger("flyswat.test_limits")
    log.propagate = False
    log.setLevel(logging.INFO)
    yield log
    log.handlers.clear()


def record(
    log: logging.Logger, msg: str, created: float, *args: object, line: int = 7
) -> logging.LogRecord:
    rec = log.makeRecord(log.name, logging.ERROR, "accept.py", line, msg, args, None)
    rec.created = created
    return rec


def test_a_flood_of_one_record_lets_a_few_through_then_one_summary(
    logger: logging.Logger,
) -> None:
    repeat = RepeatFilter(burst=3, interval_s=60)
    keep = Keep(repeat)
    logger.addHandler(keep)
    for i in range(10_000):
        logger.handle(record(logger, "accept failed: %s", i / 1000, f"errno {i}"))
    assert keep.lines == [
        "accept failed: errno 0",
        "accept failed: errno 1",
        "accept failed: errno 2",
    ]
    logger.handle(record(logger, "accept failed: %s", 61.0, "again"))
    assert keep.lines[3:] == [
        '9997 more like "accept failed: %s" in the last 60 s',
        "accept failed: again",
    ]


def test_different_records_are_counted_apart(logger: logging.Logger) -> None:
    repeat = RepeatFilter(burst=1, interval_s=10)
    keep = Keep(repeat)
    logger.addHandler(keep)
    for i in range(5):
        logger.handle(record(logger, "one", float(i)))
        logger.handle(record(logger, "two", float(i)))
    assert keep.lines == ["one", "two"]


def test_a_window_that_ends_with_no_new_record_is_summed_up_on_summarize(
    logger: logging.Logger,
) -> None:
    repeat = RepeatFilter(burst=1, interval_s=60)
    keep = Keep(repeat)
    logger.addHandler(keep)
    for i in range(4):
        logger.handle(record(logger, "quiet after this", float(i)))
    assert repeat.summarize(59.0) == []
    assert repeat.summarize(60.0) == ['3 more like "quiet after this" in the last 60 s']
    assert keep.lines == ["quiet after this", '3 more like "quiet after this" in the last 60 s']
    assert repeat.summarize(200.0) == []


def test_what_is_still_held_back_is_said_on_flush(logger: logging.Logger) -> None:
    repeat = RepeatFilter(burst=2, interval_s=60)
    keep = Keep(repeat)
    logger.addHandler(keep)
    for i in range(7):
        logger.handle(record(logger, "stuck", float(i)))
    assert repeat.flush(7.0) == ['5 more like "stuck" in the last 60 s']
    assert keep.lines == ["stuck", "stuck", '5 more like "stuck" in the last 60 s']
    assert repeat.flush(8.0) == []


def test_a_record_seen_by_two_handlers_is_counted_once(logger: logging.Logger) -> None:
    repeat = RepeatFilter(burst=2, interval_s=60)
    first, second = Keep(repeat), Keep(repeat)
    logger.addHandler(first)
    logger.addHandler(second)
    for i in range(4):
        logger.handle(record(logger, "twice", float(i)))
    assert first.lines == second.lines == ["twice", "twice"]


def test_the_filter_remembers_a_bounded_number_of_kinds(logger: logging.Logger) -> None:
    repeat = RepeatFilter(burst=1, interval_s=60, max_kinds=10)
    logger.addHandler(Keep(repeat))
    for i in range(1000):
        logger.handle(record(logger, "message", 0.0, line=i))
    assert len(repeat._windows) == 10


def test_records_that_differ_only_in_numbers_and_addresses_are_one_kind(
    logger: logging.Logger,
) -> None:
    repeat = RepeatFilter(burst=2, interval_s=60)
    keep = Keep(repeat)
    logger.addHandler(keep)
    for i in range(100):  # asyncio formats its handles into the message itself
        text = f"Exception in callback _start_serving(<fn at {hex(0x7F00 + i)}>) when={i}.5\nTrace"
        logger.handle(record(logger, text, float(i) / 10))
    assert len(keep.lines) == 2
    first = "Exception in callback _start_serving(<fn at 0x7f00>) when=0.5"
    assert repeat.flush(10.0) == [f'98 more like "{first}" in the last 60 s']


# -- the settings -------------------------------------------------------------------------


def test_the_connection_cap_is_the_descriptor_limit_less_the_reserve() -> None:
    assert Limits().connection_cap(1024) == 1024 - 64
    assert Limits(fd_reserve=200).connection_cap(256) == 56
    assert Limits(max_connections=10).connection_cap(1024) == 10
    assert Limits(fd_reserve=500).connection_cap(256) == 1


def test_the_accept_backlog_stays_within_a_quarter_of_the_connection_cap() -> None:
    assert Limits().accept_backlog(65536) == 2048
    assert Limits().accept_backlog(256) == (256 - 64) // 4
    assert Limits(fd_reserve=250).accept_backlog(256) == 8


def test_a_limit_of_zero_or_below_is_refused() -> None:
    with pytest.raises(ValueError, match="--header-timeout"):
        Limits(header_timeout_s=0)
    with pytest.raises(ValueError, match="--max-connections"):
        Limits(max_connections=-1)


def test_every_limit_is_a_serve_option_with_its_default() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert Limits.from_args(parser.parse_args([])) == Limits()
    given = parser.parse_args(["--header-timeout", "1.5", "--table-burst", "3",
                               "--exempt", "127.0.0.1", "--exempt", "::1"])  # fmt: skip
    limits = Limits.from_args(given)
    assert limits.header_timeout_s == 1.5
    assert limits.table_burst == 3
    assert limits.exempt == frozenset({"127.0.0.1", "::/64"})  # as the limits count them


def test_every_limit_is_documented_in_the_protocols_limits_section() -> None:
    text = PROTOCOL.read_text()
    section = text[text.index("\n## Limits") :]
    for f in fields(Limits):
        flag = f.metadata["flag"]
        assert re.search(rf"`{flag}[ `]", section), f"{flag} is not in PROTOCOL.md, Limits"
