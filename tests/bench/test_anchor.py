"""The anchor of the rhythm (``bench/anchors/colyseus``): its room and its Node generator.

Three rooms of four @colyseus/sdk clients play quick reveals (every 20 ms, a round every
80 ms) for a few seconds against a real ``node server.js``: the rounds are measured, nobody fails to
join or drops, and the report reads as the flyswat generator's does (``bench/rhythm.py``'s
``figures`` and ``verdict`` take it unchanged). The figures are the benchmark's, never asserted
here. Skipped where Node is missing or the pinned packages cannot be installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.anchor import KNOWN, AnchorUnavailable, held, install, ratios, run_anchor
from rhythm import figures, verdict

COLYSEUS = KNOWN["colyseus"]


@pytest.fixture(scope="module")
def colyseus() -> Path:
    try:
        install(COLYSEUS)
    except AnchorUnavailable as e:
        pytest.skip(f"the anchor cannot run here: {e}")
    return COLYSEUS


def test_rooms_play_the_rhythm_while_others_join_and_report_as_flyswat_s_generator_does(
    colyseus: Path, tmp_path: Path
) -> None:
    # One join at a time and a round every 80 ms: the first rooms play (and their clients
    # slap) while the others are still joining.
    out, reports, cpu = run_anchor(colyseus, [(3, 1)], tmp_path, duration=4.0,
                                   server_args=["--reveal-ms", "20"],
                                   plan={"react_s": [0.005, 0.03]})  # fmt: skip
    (report,) = reports
    assert out["alive"] and out["ready"][0]["players"] == 12
    assert report["players"] == 12 and report["tables"] == 3
    assert report["total"]["joins"] == 12
    assert "rooms_not_full" not in report["total"], "a room was left with fewer than 4"
    assert report["round_ms"], "no round measured"
    assert report["rounds"] >= len(report["round_ms"])
    assert report["errors"] == {} and report["failures"] == {}
    assert report["total"].get("disconnects", 0) == 0
    assert report["total"].get("late_hands", 0) == 0
    # Every client pings once a second and is answered; reveals come to all four.
    assert report["sent_per_s"] >= 12 * 0.8 and report["received_per_s"] > report["sent_per_s"]
    assert set(cpu) == {"server", "g0", "self"}
    fig = figures(reports, cpu) | out
    assert fig["rounds_measured"] == len(report["round_ms"]) and fig["failed_joins"] == 0
    # Nothing but the p99 (a timing, the benchmark's business) may fail the step.
    assert [why for why in verdict(fig)[1] if not why.startswith("p99")] == []


def test_flyswat_s_costs_are_read_as_multiples_of_the_anchor_s_in_the_same_step() -> None:
    def step(server: str, players: int, cpu: float, us: float, p99: float, ok: bool) -> dict:
        return {"server": server, "players": players, "server_cpu_per_1000": cpu,
                "server_us_per_msg": us, "msgs_in_per_player": 1.0, "msgs_out_per_player": 1.5,
                "last_action_ms": {"p99": p99}, "pass": ok}  # fmt: skip

    anchor = step("colyseus", 4000, 0.10, 36.0, 80.0, True)
    ours = step("src", 4000, 0.25, 54.0, 40.0, True)
    assert ratios(ours, anchor) == pytest.approx(
        {"cpu_per_1000": 2.5, "us_per_msg": 1.5, "msgs_per_player": 1.0, "p99": 0.5}
    )
    ramp = [anchor, ours, step("colyseus", 6000, 0.1, 30, 90, True),
            step("src", 6000, 0.3, 60, 300, False),
            step("colyseus", 8000, 0.1, 30, 160, False)]  # fmt: skip
    assert held(ramp) == {"colyseus": 6000, "src": 4000}
