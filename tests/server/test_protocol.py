"""The wire protocol: parsing client messages, and the generated schema kept in step."""

from __future__ import annotations

from pathlib import Path

import pytest

from flyswat.errors import MalformedError
from flyswat.server.protocol import MAX_MESSAGE_BYTES, Slap, parse_client, schema_text

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "protocol.schema.json"


def test_the_schema_file_is_generated_from_the_models() -> None:
    assert SCHEMA.read_text() == schema_text(), (
        "stale: uv run python -m flyswat.server.protocol > docs/protocol.schema.json"
    )


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("{", "malformed"),
        ("[1, 2]", "malformed"),
        ('{"type": 3}', "malformed"),
        ('{"type": "fly"}', "unknown_type"),
        ('{"type": "slap"}', "malformed"),
        ('{"type": "slap", "card": "R3-1", "ms": -5}', "malformed"),
        ('{"type": "slap", "card": "R3-1", "extra": 1}', "malformed"),
        ('{"type": "pong"}', "malformed"),
        (b"\xff\xfe", "malformed"),
        ('{"type": "hello", "token": "' + "x" * MAX_MESSAGE_BYTES + '"}', "too_big"),
    ],
)
def test_bad_client_messages_are_refused_with_a_code(raw: str | bytes, code: str) -> None:
    with pytest.raises(MalformedError) as e:
        parse_client(raw)
    assert e.value.code == code


def test_a_good_slap_parses() -> None:
    msg = parse_client('{"type": "slap", "card": "R3-1", "ms": 240, "turn": 7}')
    assert msg == Slap(type="slap", card="R3-1", ms=240, turn=7)
