"""One message, one declaration: every client message of the protocol is parsed by its own
model and handled at a table — the seats' by :data:`flyswat.table.core.SEAT_MESSAGES`, the
connection's own (``hello``, ``pong``) by the table's dispatch."""

from __future__ import annotations

import pytest

from flyswat import protocol as p
from flyswat.errors import MalformedError
from flyswat.table.core import SEAT_MESSAGES

CONNECTION_MESSAGES = {p.Hello, p.Pong}


def test_every_client_message_has_exactly_one_place_that_handles_it() -> None:
    declared = set(p.CLIENT_MESSAGES)
    assert set(SEAT_MESSAGES) | CONNECTION_MESSAGES == declared
    assert not set(SEAT_MESSAGES) & CONNECTION_MESSAGES


@pytest.mark.parametrize("model", p.CLIENT_MESSAGES, ids=lambda m: m.__name__)
def test_each_message_is_found_by_its_type_and_refused_by_its_own_model(model: type) -> None:
    (kind,) = [t for t, m in p.CLIENT_TYPES.items() if m is model]
    with pytest.raises(MalformedError, match=f"bad {kind} message"):
        p.parse_client(b'{"type": "%s", "unexpected": 1}' % kind.encode())


def test_a_type_no_model_declares_is_unknown() -> None:
    with pytest.raises(MalformedError) as refused:
        p.parse_client(b'{"type": "shuffle"}')
    assert refused.value.code == "unknown_type"
