"""Protocol 3's lean wire: deltas and ``you`` put back together give each seat exactly the
view it would have been sent whole (R25), all game long — spectators, a seat back mid-game
and coalesced hand counts included. The game played here is also the golden transcript that
the browser's twin (``web/js/wire.js``, ``tests/js/wire.test.mjs``) must put together the
same way: ``uv run python tests/table/test_wire.py`` rewrites it."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from flyswat.table.turns import HANDS_EVERY_MS

try:
    from .harness import Harness
except ImportError:  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from harness import Harness  # type: ignore[no-redef]

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "wire" / "wire-3-seats.json"
SPECTATOR = 50


def play() -> Harness:
    """A whole game of three humans and a spectator who comes in late; one player drops
    and comes back in the middle of a round; hands of several players in one 100 ms."""
    h = Harness(seats=3, remove=88)
    conns = h.started()
    rng = random.Random(7)
    game, turn = h.game, 0
    while not game.over:
        turn += 1
        if turn == 5:
            h.say(SPECTATOR, type="hello")
        h.say(game.to_move + 1, type="reveal")
        if game.round is None:
            h.now += 500
            continue
        for conn in conns:
            if rng.random() < 0.6 and game.round is not None:
                h.now += rng.choice([5, 40, 120])
                card = rng.choice(game.centre)
                h.say(conn, type="slap", card=card.text, ms=int(h.now - 0) % 400 + 150)
            if turn % 7 == 0 and conn == conns[1] and game.round is not None:
                h.gone(conn)  # Bruno drops mid-round and is back at once
                h.say(conn, type="hello", token=h.tokens[1])
        h.run_until_idle(h.now + HANDS_EVERY_MS)
        for conn in conns:
            if game.round is not None and not game.seat_complete(conn - 1):
                h.say(conn, type="done")
        h.run_until_idle(h.now + 1000)
        h.now += 200
    return h


def transcript(h: Harness) -> dict[str, Any]:
    """Per connection: the messages as sent, and each one as the seat's client holds it."""
    return {
        "name": "wire-3-seats",
        "covers": ["protocol 3 deltas", "you", "spectator", "reconnect", "coalesced hands"],
        "conns": {str(c): {"sent": h.raw[c], "assembled": h.told[c]} for c in sorted(h.raw)},
    }


def test_deltas_put_together_are_every_seats_whole_view_all_game_long() -> None:
    h = play()  # the harness checks each told view against the table's own at every step
    assert h.game.over
    kinds = h.kinds(1)
    assert kinds.count("hands") < kinds.count("reveal")  # coalesced: fewer than the hands laid
    sent = [m for m in h.raw[1] if m["type"] == "reveal"]
    whole = set(h.last(1, "started")["view"])
    assert sent and all(set(m["view"]) < whole for m in sent)  # never the whole view


def test_the_golden_wire_transcript_is_this_game() -> None:
    assert json.loads(GOLDEN.read_text()) == transcript(play()), (
        "stale: uv run python tests/table/test_wire.py"
    )


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(transcript(play()), separators=(",", ":")) + "\n")
