"""``flyswat serve``'s settings: every one a flag and a ``FLYSWAT_`` variable, the flag first;
a bad value stops the command with a message naming it. Pure: the environment is an
argument here, and no server starts."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from flyswat.server.limits import Limits
from flyswat.server.players_routes import PLAY_NOW_WAIT_MS
from flyswat.server.settings import Settings, Timings, add_arguments, described

DEPLOY = Path(__file__).resolve().parents[2] / "docs" / "DEPLOY.md"


def parse(argv: list[str], environ: dict[str, str]) -> Settings:
    parser = argparse.ArgumentParser()
    add_arguments(parser, environ)
    return Settings.from_args(parser.parse_args(argv))


def test_no_flag_and_no_variable_give_the_defaults() -> None:
    assert parse([], {}) == Settings()
    assert Settings().play_now_wait_s * 1000 == PLAY_NOW_WAIT_MS
    assert Settings().timings == Timings(beat_s=1.0, dead_after_s=3.0)


def test_a_variable_sets_what_its_flag_would() -> None:
    env = {"FLYSWAT_DB": "postgresql://u@db/x", "FLYSWAT_REDIS": "redis://r:6379/0",
           "FLYSWAT_PORT": "9000", "FLYSWAT_BEAT": "0.25", "FLYSWAT_DEAD_AFTER": "1.5",
           "FLYSWAT_TABLE_BURST": "3", "FLYSWAT_EXEMPT": "127.0.0.1, ::1"}  # fmt: skip
    got = parse([], env)
    assert (got.db, got.redis, got.port) == ("postgresql://u@db/x", "redis://r:6379/0", 9000)
    assert got.timings == Timings(beat_s=0.25, dead_after_s=1.5)
    assert got.limits.table_burst == 3
    assert got.limits.exempt == frozenset({"127.0.0.1", "::/64"})


def test_a_flag_wins_over_its_variable() -> None:
    env = {"FLYSWAT_PORT": "9000", "FLYSWAT_EXEMPT": "10.0.0.1", "FLYSWAT_GC": "python"}
    got = parse(["--port", "9001", "--exempt", "127.0.0.1", "--gc", "tuned"], env)
    assert (got.port, got.gc) == (9001, "tuned")
    assert got.limits.exempt == frozenset({"127.0.0.1"})


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"FLYSWAT_PORT": "eighty"}, "FLYSWAT_PORT='eighty' is not an int"),
        ({"FLYSWAT_BEAT": "soon"}, "FLYSWAT_BEAT='soon' is not a float"),
        ({"FLYSWAT_PORT": "0"}, "--port must be 1 to 65535"),
        ({"FLYSWAT_DEAD_AFTER": "1"}, "--dead-after (1 s) must be at least two beats"),
        ({"FLYSWAT_PLAY_NOW_WAIT": "1"}, "--play-now-wait must be 3 to 120 s"),
        ({"FLYSWAT_TABLE_BURST": "0"}, "--table-burst must be above 0"),
        # a file's path where a URL belongs: said so, with the URL it means
        ({"FLYSWAT_DB": "/tmp/x.db"}, "--db '/tmp/x.db' is not sqlite:///FILE or postgresql://"),
        ({"FLYSWAT_DB": "mysql://u@h/x"}, "--db 'mysql://u@h/x' is not sqlite:///FILE or"),
    ],
)
def test_a_bad_value_stops_the_command_naming_it(env: dict[str, str], said: str) -> None:
    with pytest.raises(SystemExit) as stopped:
        parse([], env)
    assert said in str(stopped.value.code)


def test_help_names_every_flag_with_its_variable() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser, {})
    text = " ".join(parser.format_help().split())
    for flag, variable, _, _ in described():
        assert re.search(rf"{flag}\b", text), flag
        assert f"${variable}" in text, variable


def test_every_setting_but_the_limits_is_in_deploys_settings_table() -> None:
    text = DEPLOY.read_text()
    section = text[text.index("\n## Settings") :]
    section = section[: section.find("\n## ", 1)]
    limit_flags = {
        str(f) for f in (x.metadata["flag"] for x in Limits.__dataclass_fields__.values())
    }
    for flag, variable, _, _ in described():
        if flag not in limit_flags:
            assert f"`{flag}`" in section and f"`{variable}`" in section, flag
