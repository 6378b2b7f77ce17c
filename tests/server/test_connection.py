"""The connection's shortcuts on the hot path: a pong read without the parser's models, and
the network's round trip read from the kernel at most every few seconds. Each must mean
exactly what the long way means."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flyswat import protocol as p
from flyswat.errors import MalformedError
from flyswat.server.connection import NETWORK_EVERY_MS, Link, pong_id
from flyswat.server.limits import Limits

HEADS = [b'{"type":"pong","id":', b'{"type": "pong", "id": ']


@pytest.mark.parametrize("head", HEADS)
def test_a_pong_in_its_usual_forms_is_read_without_the_parser(head: bytes) -> None:
    assert pong_id(head + b"123}") == 123
    assert pong_id(head + b"2147483647}") == 2**31 - 1


@pytest.mark.parametrize(
    "payload",
    [
        b'{"type":"pong","id":-1}',
        b'{"type":"pong","id":1.5}',
        b'{"type":"pong","id":}',
        b'{"type":"pong","id":12345678901}',  # more digits than a ping id has
        b'{"type":"pong","id":1,"x":2}',
        b'{"type":"pong","id":"1"}',
        b'{"type":"ping","id":1}',
        b'{"id":1,"type":"pong"}',
        b'{"type":"pong","id":1} ',
        b'{"type":"pong","id":\xd9\xa3}',  # a digit, but not an ASCII one
        b"",
    ],
)
def test_any_other_text_is_left_to_the_parser(payload: bytes) -> None:
    assert pong_id(payload) is None


@given(st.sampled_from(HEADS), st.binary(max_size=14))
def test_the_shortcut_agrees_with_the_parser(head: bytes, tail: bytes) -> None:
    payload = head + tail
    got = pong_id(payload)
    if got is None:
        return
    try:
        parsed = p.parse_client(payload)
    except MalformedError:
        pytest.fail(f"the shortcut read {payload!r}, which the parser refuses")
    assert parsed == p.Pong(id=got)


class _Transport:
    def get_extra_info(self, name: str) -> Any:
        return None


class _Socket:
    transport = _Transport()


def test_the_network_round_trip_is_read_again_only_after_a_while() -> None:
    now = [0.0]
    readings = iter([None, 40.0, 35.0, 30.0])
    reads: list[float] = []

    def read() -> float | None:
        reads.append(now[0])
        return next(readings)

    link = Link(1, _Socket(), lambda: now[0], lambda mark: None, Limits(), read)  # type: ignore[arg-type]
    assert link.network(now[0]) is None  # no figure yet: asked again at the next pong
    now[0] = 10.0
    assert link.network(now[0]) == 40.0
    now[0] = 10.0 + NETWORK_EVERY_MS - 1
    assert link.network(now[0]) is None  # not read again: nothing new for the arbiter
    now[0] = 10.0 + NETWORK_EVERY_MS
    assert link.network(now[0]) == 35.0
    assert reads == [0.0, 10.0, 10.0 + NETWORK_EVERY_MS]
