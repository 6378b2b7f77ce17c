"""The floor's bare rooms (``bench/floor.py``): each serves the rhythm's traffic to real ``ws``
clients and counts it. Counts, not timings: the CPU figures are the benchmark's. Skipped
where Node is missing or the anchor's packages (which hold ``ws``) cannot be installed."""

from __future__ import annotations

import pytest

from floor import measure
from harness.anchor import KNOWN, AnchorUnavailable, install


@pytest.fixture(scope="module")
def ws() -> None:
    try:
        install(KNOWN["colyseus"])
    except AnchorUnavailable as e:
        pytest.skip(f"the floor's rooms cannot run here: {e}")


@pytest.mark.parametrize("room", ["node", "python"])
def test_a_bare_room_pings_reveals_and_hears_pongs_and_slaps(ws: None, room: str) -> None:
    row = measure(room, 40, warmup=1.0, seconds=2.0)
    assert row["room"] == room and row["players"] == 40
    # A ping a second each, answered; a reveal every 2 s to every seat; a slap every fourth.
    assert 0.7 <= row["in_per_player"] <= 1.6
    assert 1.2 <= row["out_per_player"] <= 2.6
    assert row["out_per_player"] > row["in_per_player"]
