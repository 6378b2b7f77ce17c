"""Write the browser's golden transcripts, ``tests/golden/web-*.json``, from the Python engine.

Each file holds a record (``docs/RECORD.md``) and the state after every turn as the engine
played it (``{"centre", "draw", "won", "box"}``; ``box`` counts every card out of play, the
cards removed unseen included). The browser's rules (``web/js/rules.js``) must give the same
states: ``tests/js/golden.test.mjs`` replays every ``tests/golden/*.json``.

Run ``uv run python tests/golden/make_web_golden.py`` to write them again.
"""

from __future__ import annotations

import contextlib
import json
import random
from pathlib import Path
from typing import Any

from flyswat import Game, IllegalActionError, Rules
from flyswat.record import to_record

HERE = Path(__file__).resolve().parent


def _play(seats: int, remove: int, seed: int) -> tuple[Game, list[dict[str, Any]], set[str]]:
    """A game with random hands every round (stacked, wrong, won back), and what it covers."""
    rnd = random.Random(seed)
    rules = Rules(seats=seats, remove=remove)
    game = Game.new(rules, seed=f"web-golden-{seed}", start=seed % seats)
    after: list[dict[str, Any]] = []
    covers = {"R4", "R10", "R11", "R22", "R23", "R24"}
    while not game.over:
        centre = list(game.centre)
        turn = game.reveal()
        if turn.round is not None:
            covers.add("R12" if turn.card.colour is None else "R13")
            if not centre:
                covers.add("R15")
        if game.round is not None:
            for _ in range(rnd.randint(0, 3 * seats)):
                with contextlib.suppress(IllegalActionError):
                    game.slap(rnd.randrange(seats), rnd.choice(game.centre), rnd.randint(150, 900))
            r = game.close_round()
            wrong = [s for s in r.slaps if s.card.colour not in r.allowed]
            if len({s.card for s in r.slaps}) < len(r.slaps):
                covers.add("R17")
            if wrong:
                covers.add("R19")
                if len(r.penalties) < len(wrong):
                    covers.add("R19-empty")
            if any(p in r.won for p in r.penalties):
                covers.add("R20")
            if game.over and r.penalties:
                covers.add("R22-penalty")
        after.append(
            {
                "centre": [c.text for c in game.centre],
                "draw": [len(p) for p in game.draw],
                "won": [len(p) for p in game.won],
                "box": len(game.box),
            }
        )
    return game, after, covers


def golden(name: str, seats: int, remove: int, seed: int) -> dict[str, Any]:
    game, after, covers = _play(seats, remove, seed)
    names = [{"name": f"Seat {i + 1}", "kind": "human"} for i in range(seats)]
    record = to_record(game, names, id=name, started_at="2026-12-01T00:00:00Z")
    return {"name": name, "covers": sorted(covers), "record": record, "after": after}


GAMES = [("web-2-seats", 2, 60, 3), ("web-4-seats", 4, 40, 1), ("web-8-seats", 8, 0, 5)]

if __name__ == "__main__":
    for name, seats, remove, seed in GAMES:
        g = golden(name, seats, remove, seed)
        (HERE / f"{name}.json").write_text(json.dumps(g, indent=1) + "\n", "utf-8")
        print(name, len(g["record"]["turns"]), "turns, covers", ", ".join(g["covers"]))
