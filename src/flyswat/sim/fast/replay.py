"""The kernel's replay of facts: a fixed deal and fixed slaps, played by the compiled rules
(:func:`flyswat.sim.fast.kernel.replay`), turn by turn — so that the golden transcripts of
``tests/golden/`` can hold the kernel to the engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flyswat.cards import DECK, Card
from flyswat.sim.fast import kernel


def replay_record(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The state after each turn of ``record`` (``docs/RECORD.md``) as the kernel plays its
    deal and its slaps (in the record's stacking order): ``centre`` (card texts in centre
    order), ``draw`` and ``won`` (counts per seat), ``box`` — the shape of a golden
    transcript's ``after``. The kernel stops where the rules end the game (R22)."""
    rules = record["rules"]
    seats = rules["seats"]
    piles = np.zeros((seats, 128), dtype=np.int64)
    sizes = np.zeros(seats, dtype=np.int64)
    for s, pile in enumerate(record["deal"]):
        sizes[s] = len(pile)
        piles[s, : len(pile)] = [Card.parse(t).index for t in pile]
    rows = [
        (i, slap["seat"], Card.parse(slap["card"]).index)
        for i, turn in enumerate(record["turns"])
        for slap in (turn.get("round") or {}).get("slaps", [])
    ]
    slaps = np.array(rows, dtype=np.int64).reshape(-1, 3)
    most = kernel.CARDS * 2  # more turns than any game has (every card revealed, some twice)
    centre = np.zeros((most, kernel.FLIES), dtype=np.int64)
    n_centre = np.zeros(most, dtype=np.int64)
    draw = np.zeros((most, seats), dtype=np.int64)
    won = np.zeros((most, seats), dtype=np.int64)
    box = np.zeros(most, dtype=np.int64)
    turns = kernel.replay(
        seats, piles, sizes, record["start"], rules["remove"], slaps,
        centre, n_centre, draw, won, box,
    )  # fmt: skip
    return [
        {
            "centre": [DECK[c].text for c in centre[i, : n_centre[i]]],
            "draw": draw[i].tolist(),
            "won": won[i].tolist(),
            "box": int(box[i]),
        }
        for i in range(turns)
    ]
