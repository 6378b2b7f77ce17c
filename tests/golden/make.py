"""Write the golden transcripts of ``tests/golden/*.json``: whole games whose every turn's
state the rules fix, for the copies of the rules that cannot call the engine (the numba kernel,
the browser's ``web/js/engine.js``) to replay and compare.

    uv run python tests/golden/make.py          # rewrites the files; deterministic

Each file is ``{"name", "covers", "record", "after"}``: ``record`` is a game record
(``docs/RECORD.md``); ``after`` has one entry per ``record.turns`` item, the state once that
turn is fully played: ``centre`` (card texts in centre order), ``draw`` and ``won`` (counts per
seat) and ``box`` (how many cards are in the box: the removed ones and the played triggers).

A game is a staged deal (the first reveals are chosen; every other card is dealt below them in
canonical order) or a seeded one, whose scripted rounds are played with the slaps given, in
stacking order, and every other round with random hands from a generator seeded by the
transcript's name (not by bots: the transcripts must not change when the bots do).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from flyswat import DECK, Card, Game, Rules
from flyswat.engine import Slap
from flyswat.record import to_record

HERE = Path(__file__).resolve().parent

#: Slaps of a scripted round: (seat, card text), in stacking order (the first is the bottom).
Script = dict[int, list[tuple[int, str]]]


def staged(
    seats: int, reveals: list[str], *, start: int = 0, sizes: dict[int, int] | None = None
) -> Game:
    """A game whose first reveals are ``reveals``, in turn order from ``start``; every other
    card dealt below round robin over the seats whose pile size ``sizes`` does not fix."""
    sizes = sizes or {}
    piles: list[list[Card]] = [[] for _ in range(seats)]
    for k, text in enumerate(reveals):
        piles[(start + k) % seats].append(Card.parse(text))
    named = {c for p in piles for c in p}
    filler = [c for c in DECK if c not in named]
    for seat, size in sizes.items():
        while len(piles[seat]) < size:
            piles[seat].append(filler.pop())
    open_seats = [s for s in range(seats) if s not in sizes]
    for k, card in enumerate(filler):
        piles[open_seats[k % len(open_seats)]].append(card)
    return Game(Rules(seats=seats), piles, start=start)


def state(game: Game) -> dict[str, Any]:
    """The state of ``game`` in the shape of an ``after`` entry."""
    return {
        "centre": [c.text for c in game.centre],
        "draw": [len(p) for p in game.draw],
        "won": [len(p) for p in game.won],
        "box": len(game.box),
    }


def play(game: Game, script: Script, rng: random.Random) -> list[dict[str, Any]]:
    """Play ``game`` to its end (R22): the rounds of ``script`` as given, the others with
    random hands from ``rng`` (each seat lays 0 to all its hands on random centre flies,
    allowed or not; the stacking order is shuffled); returns the state after each turn."""
    after = []
    while not game.over:
        turn = len(game.turns)
        if turn in script:
            slaps = [Slap(seat, Card.parse(t)) for seat, t in script[turn]]
        else:
            slaps = []
            if game.triggers_round(game.draw[game.to_move][0]) and game.centre:
                for seat in range(game.rules.seats):
                    k = min(rng.randrange(game.rules.hands + 1), len(game.centre))
                    slaps += [Slap(seat, c) for c in rng.sample(game.centre, k)]
                rng.shuffle(slaps)
        game.play_turn(slaps)
        after.append(state(game))
    return after


def golden(name: str, covers: list[str], game: Game, script: Script) -> dict[str, Any]:
    """One golden transcript."""
    after = play(game, script, random.Random(f"golden:{name}"))
    seats = [{"name": f"Seat {k}", "kind": "human"} for k in range(game.rules.seats)]
    record = to_record(game, seats, id=name, started_at="2026-12-01T00:00:00Z")
    return {"name": name, "covers": covers, "record": record, "after": after}


def build() -> list[dict[str, Any]]:
    """Every golden transcript, in a fixed order."""
    return [
        golden(
            "r13-fifth-colour-4-seats",
            ["R4", "R11", "R13", "R13a", "R14", "R16", "R17", "R18", "R19"],
            # Centre R5 R4 Y2 G1 P1: four colours; the blue fly is a fifth and opens a round.
            staged(4, ["R5-1", "R4-1", "Y2-1", "G1-1", "P1-1", "B3-1"]),
            # Seat 2 is under seat 3 on R5 (R17); seat 0's wrong hand has nothing to pay.
            {5: [(2, "R5-1"), (3, "R5-1"), (1, "R4-1"), (0, "Y2-1")]},
        ),
        golden(
            "r15-empty-centre-3-seats",
            ["R4", "R9", "R12", "R14", "R15"],
            # The start player's first card is a swatter: nothing to slap (R15). Later red and
            # green tie for most numerous (R14): both allowed.
            staged(3, ["S-1", "R3-1", "G3-1", "Y1-1", "S-2"], start=1),
            {4: [(1, "R3-1"), (2, "G3-1"), (0, "Y1-1")]},
        ),
        golden(
            "r19-empty-won-pile-2-seats",
            ["R4", "R16", "R18", "R19"],
            # Red is allowed (two against one yellow); seat 1's wrong hand finds its won pile
            # empty and pays nothing; seat 0 wins both reds with its two hands.
            staged(2, ["R2-1", "R3-1", "Y1-1", "S-2"]),
            {3: [(1, "Y1-1"), (0, "R3-1"), (0, "R2-1")]},
        ),
        golden(
            "r20-give-back-4-seats",
            ["R4", "R17", "R18", "R19", "R20"],
            # Seat 0 wins R5 and slaps the wrong Y1 in the same round: the R5 it just won goes
            # to the bottom of its draw pile (R20). Seat 1 is on top of seat 0 on R5: nothing.
            staged(4, ["R5-1", "R4-1", "Y1-1", "S-3"]),
            {3: [(0, "R5-1"), (0, "Y1-1"), (1, "R4-1"), (1, "R5-1")]},
        ),
        golden(
            "r22-penalty-after-the-end-5-seats",
            ["R4", "R13", "R16", "R19", "R22", "R23", "R24"],
            # Five seats, one hand each (R16). Seat 4 holds two cards; its last, a swatter,
            # ends the game (R22) after its round, in which seat 0 pays its R5 for a wrong hand
            # to a draw pile that no longer matters.
            staged(
                5,
                ["R5-1", "R4-1", "Y3-1", "S-1", "R1-1", "G2-1", "Y2-1", "P2-1", "B1-1", "S-2"],
                sizes={4: 2},
            ),
            {3: [(0, "R5-1"), (1, "R4-1")], 8: [], 9: [(0, "R1-1"), (1, "Y3-1")]},
        ),
        golden(
            "seeded-8-seats",
            ["R4", "R5", "R7", "R16", "R22"],
            Game.new(Rules(seats=8), seed="golden-8", start=3),
            {},
        ),
        golden(
            "seeded-3-seats-shorter",
            ["R4", "R5", "R6", "R7", "R22"],
            Game.new(Rules(seats=3, remove=30), seed="golden-3", start=2),
            {},
        ),
    ]


def text(transcript: dict[str, Any]) -> str:
    """A transcript as its file's text: one ``after`` entry per line, for readable diffs."""
    head = json.dumps({k: v for k, v in transcript.items() if k != "after"}, ensure_ascii=False)
    lines = [json.dumps(a, separators=(",", ":")) for a in transcript["after"]]
    return head[:-1] + ', "after": [\n' + ",\n".join(lines) + "\n]}\n"


def main() -> None:
    """Write every transcript to ``tests/golden/<name>.json``."""
    for t in build():
        (HERE / f"{t['name']}.json").write_text(text(t), encoding="utf-8")
        print(f"{t['name']}.json: {len(t['after'])} turns")


if __name__ == "__main__":
    main()
