"""The wire protocol: parsing client messages, and the generated schema kept in step."""

from __future__ import annotations

from pathlib import Path

import pytest

from flyswat.errors import MalformedError
from flyswat.protocol import MAX_MESSAGE_BYTES, Slap, parse_client, schema_text

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "protocol.schema.json"


def test_the_schema_file_is_generated_from_the_models() -> None:
    assert SCHEMA.read_text() == schema_text(), (
        "stale: uv run python -m flyswat.protocol > docs/protocol.schema.json"
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


@pytest.mark.parametrize(
    "raw", ['{"type": "slap", "type": "reveal"}', '{"type": "fly", "type": "reveal"}']
)
def test_a_message_with_two_types_is_refused_as_such(raw: str) -> None:
    with pytest.raises(MalformedError) as e:
        parse_client(raw)
    assert (e.value.code, str(e.value)) == ("malformed", 'a message names its "type" once')


def test_a_good_slap_parses() -> None:
    msg = parse_client('{"type": "slap", "card": "R3-1", "ms": 240, "turn": 7}')
    assert msg == Slap(card="R3-1", ms=240, turn=7)


def test_the_error_table_of_protocol_md_is_generated_from_the_registry() -> None:
    from flyswat.errors import markdown_table

    text = (SCHEMA.parent / "PROTOCOL.md").read_text()
    begin, end = "<!-- errors:begin -->\n", "<!-- errors:end -->"
    assert text[text.index(begin) + len(begin) : text.index(end)] == markdown_table(), (
        "stale: regenerate the table with uv run python -m flyswat.errors"
    )


def test_every_code_raised_anywhere_is_in_the_registry() -> None:
    import ast
    from pathlib import Path

    from flyswat.errors import CODES

    src = Path(__file__).resolve().parents[2] / "src" / "flyswat"
    raised = set()
    for path in src.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and len(node.args) >= 2:
                name = getattr(node.func, "id", getattr(node.func, "attr", ""))
                code = node.args[1]
                if name.endswith("Error") and isinstance(code, ast.Constant):
                    raised.add(code.value)
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "Error":
                sent = [k.value for k in node.keywords if k.arg == "code"]
                raised |= {c.value for c in sent if isinstance(c, ast.Constant)}
    assert raised and raised <= set(CODES)
