"""Game records: docs/RECORD.md's shape, round trips, and ``flyswat verify``."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flyswat.cli import main
from flyswat.engine import Game
from flyswat.record import read_record, replay, to_record, verify_record, write_record
from flyswat.rules import Rules
from flyswat.shuffle import commitment


def play(seats: int, seed: int | str, remove: int = 0, slap_seed: int = 0) -> Game:
    """A whole game with random legal slaps (some on wrong colours), chosen by ``slap_seed``."""
    rng = random.Random(slap_seed)
    rules = Rules(seats=seats, remove=remove)
    game = Game.new(rules, seed, start=rng.randrange(seats))
    while not game.over:
        game.reveal()
        r = game.round
        if r is None:
            continue
        for seat in rng.sample(range(seats), seats):
            for card in rng.sample(game.centre, min(len(game.centre), rng.randint(0, 2))):
                if len(r.hands_of(seat)) < rules.hands and card not in r.hands_of(seat):
                    game.slap(seat, card, rng.randint(150, 900))
        game.close_round()
    return game


def record_of(game: Game) -> dict[str, Any]:
    seats = [{"name": f"P{i}", "kind": "human"} for i in range(game.rules.seats)]
    return to_record(game, seats, id="g1", started_at="2026-11-29T12:00:00Z", with_commitment=True)


@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    return record_of(play(4, "fixture", slap_seed=3))


def test_a_record_has_exactly_the_fields_of_record_md(record: dict[str, Any]) -> None:
    assert set(record) == {
        "format", "id", "started_at", "rules", "seats", "seed", "removed", "start", "deal",
        "turns", "result", "commitment",
    }  # fmt: skip
    assert record["format"] == "flyswat-record/1"
    assert record["rules"] == {"seats": 4, "hands": 2, "remove": 0, "slap_window_ms": 3000}
    assert sum(len(p) for p in record["deal"]) + len(record["removed"]) == 112
    rounds = [t["round"] for t in record["turns"] if "round" in t]
    assert rounds and all(set(r) == {"allowed", "slaps", "won", "penalties"} for r in rounds)
    assert record["commitment"] == commitment("fixture")


@settings(max_examples=25, deadline=None)
@given(
    seats=st.integers(2, 8),
    seed=st.one_of(st.integers(0, 2**40), st.text(max_size=12)),
    remove=st.integers(0, 60),
    slap_seed=st.integers(0, 1000),
)
def test_every_played_game_gives_a_valid_record_that_replays_to_itself(
    seats: int, seed: int | str, remove: int, slap_seed: int
) -> None:
    game = play(seats, seed, remove, slap_seed)
    rec = record_of(game)
    assert verify_record(rec) == []
    again = json.loads(json.dumps(rec))
    assert record_of(replay(again)) == rec


def test_a_record_survives_a_file_round_trip(record: dict[str, Any], tmp_path: Path) -> None:
    write_record(record, tmp_path / "g.json")
    assert read_record(tmp_path / "g.json") == record


def tamper(record: dict[str, Any], how: str) -> dict[str, Any]:
    rec = copy.deepcopy(record)
    if how == "slap order":
        r = next(t["round"] for t in rec["turns"] if len(t.get("round", {}).get("slaps", [])) > 1)
        r["slaps"].reverse()
    elif how == "score":
        rec["result"]["points"][0] += 1
    elif how == "place":
        rec["result"]["places"] = [1] * 4
    elif how == "turn card":
        rec["turns"][3]["card"] = rec["turns"][4]["card"]
    elif how == "dealt card":
        rec["deal"][0][0], rec["deal"][1][0] = rec["deal"][1][0], rec["deal"][0][0]
    elif how == "allowed":
        r = next(t["round"] for t in rec["turns"] if t.get("round", {}).get("allowed"))
        r["allowed"] = ["R", "Y", "G", "B"] if r["allowed"] != ["R", "Y", "G", "B"] else ["O"]
    elif how == "won":
        r = next(t["round"] for t in rec["turns"] if t.get("round", {}).get("won"))
        r["won"].pop()
    elif how == "truncated":
        rec["turns"].pop()
    elif how == "commitment":
        rec["commitment"] = commitment("another seed")
    elif how == "seed":
        rec["seed"] = "another seed"
    elif how == "slap on a card not in the centre":
        r = next(t["round"] for t in rec["turns"] if t.get("round", {}).get("slaps"))
        r["slaps"][0]["card"] = rec["turns"][-1]["card"]
    return rec


TAMPERINGS = [
    "slap order", "score", "place", "turn card", "dealt card", "allowed", "won", "truncated",
    "commitment", "seed", "slap on a card not in the centre",
]  # fmt: skip


@pytest.mark.parametrize("how", TAMPERINGS)
def test_verify_rejects_a_tampered_record(record: dict[str, Any], how: str) -> None:
    problems = verify_record(tamper(record, how))
    assert len(problems) == 1 and problems[0]


@pytest.mark.parametrize(
    "doc",
    [{}, {"format": "flyswat-record/2"}, {"format": "flyswat-record/1", "turns": "x"}],
)
def test_verify_rejects_what_is_not_a_record(doc: dict[str, Any]) -> None:
    assert verify_record(doc)[0].startswith("not a flyswat-record/1 or flyswat-record/2 record")


def test_flyswat_verify_reports_each_bad_record_and_exits_1(
    record: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "sub").mkdir()
    write_record(record, tmp_path / "good.json")
    write_record(tamper(record, "score"), tmp_path / "sub" / "bad.json")
    (tmp_path / "broken.json").write_text("{not json")
    assert main(["verify", str(tmp_path / "good.json")]) == 0
    assert "1 valid, 0 invalid" in capsys.readouterr().out
    assert main(["verify", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "bad.json: INVALID: result.points[0]" in out
    assert "broken.json: INVALID" in out
    assert "1 valid, 2 invalid" in out


def format_2(game: Game, floor: int = 100) -> dict[str, Any]:
    seats = [{"name": f"P{i}", "kind": "human"} for i in range(game.rules.seats)]
    return to_record(game, seats, id="g2", started_at="2026-11-29T12:00:00Z",
                     with_commitment=True, min_reaction_ms=floor)  # fmt: skip


def test_a_format_2_record_says_its_floor_and_verifies() -> None:
    record = format_2(play(3, "floor", slap_seed=5))
    assert record["format"] == "flyswat-record/2"
    assert record["rules"]["min_reaction_ms"] == 100
    assert verify_record(record) == []


def test_a_format_2_slap_under_the_floor_is_named() -> None:
    record = format_2(play(3, "floor", slap_seed=5))
    turn = next(t for t in record["turns"] if t.get("round") and t["round"]["slaps"])
    turn["round"]["slaps"][0]["ms"] = 57
    (problem,) = verify_record(record)
    assert "slaps[0].ms" in problem and "under the human floor of 100 ms" in problem
    one = copy.deepcopy(record)  # the same slap in a format 1 record: no floor was promised
    one["format"] = "flyswat-record/1"
    del one["rules"]["min_reaction_ms"]
    assert verify_record(one) == []


def test_a_record_whose_format_and_floor_disagree_is_invalid() -> None:
    record = format_2(play(2, "floor"))
    del record["rules"]["min_reaction_ms"]
    assert "rules.min_reaction_ms" in verify_record(record)[0]
