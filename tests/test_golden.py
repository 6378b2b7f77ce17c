"""The golden transcripts of ``tests/golden/``: whole games that the engine, the numba
kernel and the browser's engine must all replay to the same state after every turn.

They cover R13 (a fifth colour), R15 (an empty centre), R19 with an empty won pile, R20's
give-back, R22's penalty after the end, and 2, 3, 4, 5 and 8 seats; ``tests/golden/make.py``
writes them, deterministically.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from flyswat import Card, Game, Rules
from flyswat.engine import Slap
from flyswat.record import verify_record
from flyswat.sim.fast.replay import replay_record

GOLDEN = Path(__file__).resolve().parent / "golden"
FILES = sorted(p for p in GOLDEN.glob("*.json") if not p.name.startswith("web-"))


def _make() -> Any:
    spec = importlib.util.spec_from_file_location("golden_make", GOLDEN / "make.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make = _make()


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@pytest.fixture(params=FILES, ids=lambda p: p.stem)
def golden(request: pytest.FixtureRequest) -> dict[str, Any]:
    return load(request.param)


def test_golden_transcripts_cover_the_rules_and_table_sizes_they_promise() -> None:
    covered = {r for p in FILES for r in load(p)["covers"]}
    assert {"R13", "R15", "R19", "R20", "R22"} <= covered
    assert {load(p)["record"]["rules"]["seats"] for p in FILES} >= {2, 3, 4, 5, 8}
    penalties_after_end = [
        p for p in FILES if load(p)["record"]["turns"][-1].get("round", {}).get("penalties")
    ]
    assert penalties_after_end  # R22: the last turn's round made someone pay


def test_golden_files_are_what_make_py_writes() -> None:
    built = {t["name"]: make.text(t) for t in make.build()}
    assert sorted(built) == [p.stem for p in FILES]
    for path in FILES:
        assert path.read_text(encoding="utf-8") == built[path.stem], path.name


def test_golden_records_verify(golden: dict[str, Any]) -> None:
    assert verify_record(golden["record"]) == []
    assert len(golden["after"]) == len(golden["record"]["turns"])


def test_the_engine_replays_every_golden_turn(golden: dict[str, Any]) -> None:
    record = golden["record"]
    rules = Rules(record["rules"]["seats"], record["rules"]["remove"])
    game = Game(
        rules,
        [[Card.parse(t) for t in pile] for pile in record["deal"]],
        start=record["start"],
        removed=[Card.parse(t) for t in record["removed"]],
    )
    for turn, after in zip(record["turns"], golden["after"], strict=True):
        slaps = (turn.get("round") or {}).get("slaps", [])
        game.play_turn([Slap(s["seat"], Card.parse(s["card"]), s.get("ms")) for s in slaps])
        assert make.state(game) == after
    assert game.over  # R22


def test_the_kernel_replays_every_golden_turn(golden: dict[str, Any]) -> None:
    assert replay_record(golden["record"]) == golden["after"]


def test_the_kernel_replay_tells_a_different_stacking_order_apart_r17_r20() -> None:
    golden = load(GOLDEN / "r20-give-back-4-seats.json")
    record = json.loads(json.dumps(golden["record"]))
    slaps = record["turns"][3]["round"]["slaps"]
    slaps[0], slaps[3] = slaps[3], slaps[0]  # seat 1 now under seat 0 on R5
    assert replay_record(record)[3] != golden["after"][3]
