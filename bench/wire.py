"""What a message costs to make and to carry: the choices behind protocol 3's lean wire.

From one real game (a four-seat table played out on the sans-I/O table with scripted slaps),
it takes every broadcast the table made and measures, per broadcast to four seats:

- **bytes**: protocol 2 (each seat's whole view) against protocol 3 (the delta and ``you``),
  raw and as permessage-deflate would carry them (zlib, raw deflate, window 2^15, with and
  without context takeover, as ``websockets`` negotiates);
- **CPU**: building and encoding the four messages — protocol 2's way (pydantic models over
  four whole views, ``model_dump_json``) against protocol 3's (one public view, one delta,
  encoded once by orjson or msgspec, ``you`` appended per seat) — and compressing them.

    uv run python bench/wire.py
"""

from __future__ import annotations

import json
import random
import time
import zlib
from collections.abc import Callable
from typing import Any

import orjson

from flyswat import protocol as p
from flyswat.engine import Game
from flyswat.rules import Rules
from flyswat.view import view
from flyswat.wire import Deltas, private_of

try:
    import msgspec
except ImportError:  # a dev dependency: the comparison is skipped without it
    msgspec = None


def states(seed: int = 3) -> list[Game]:
    """Snapshots of one four-seat game after every reveal and every slap (deep copies)."""
    import copy

    game = Game.new(Rules(4), f"wire-{seed}")
    rng = random.Random(seed)
    out = []
    while not game.over:
        game.reveal()
        out.append(copy.deepcopy(game))
        r = game.round
        if r is None:
            continue
        for seat in range(4):
            targets = [c for c in game.centre if c.colour in r.allowed]
            if targets and rng.random() < 0.7:
                game.slap(seat, rng.choice(targets), ms=200 + rng.random() * 300)
                out.append(copy.deepcopy(game))
        game.close_round()
        out.append(copy.deepcopy(game))
    return out


class WholeHands(p._Model):
    """Protocol 2's ``hands``: the seat's whole view."""

    type: str = "hands"
    turn: int
    view: p.GameView


def v2(game: Game) -> list[bytes]:
    """Protocol 2: a model over each seat's whole view."""
    return [
        WholeHands(turn=len(game.turns), view=view(game, seat).to_json())  # type: ignore[arg-type]
        .model_dump_json()
        .encode()
        for seat in range(4)
    ]


def v3(deltas: Deltas, dumps: Callable[[Any], bytes]) -> Callable[[Game], list[bytes]]:
    """Protocol 3: one public view, its delta encoded once, ``you`` appended per seat."""

    def make(game: Game) -> list[bytes]:
        public = view(game, None).to_json()
        privates = {s: private_of(game, s) for s in range(4)}
        return deltas.message({"type": "hands", "turn": len(game.turns)}, public,
                              [0, 1, 2, 3], privates)  # fmt: skip

    return make


def timed(make: Callable[[Game], list[bytes]], games: list[Game]) -> tuple[float, list[bytes]]:
    """µs per broadcast of four, and what was made."""
    started = time.perf_counter()
    made = [m for g in games for m in make(g)]
    return (time.perf_counter() - started) / len(games) * 1e6, made


def deflated(messages: list[bytes], takeover: bool) -> tuple[int, float]:
    """Bytes after permessage-deflate, and µs of CPU per message (per connection's stream)."""
    total, started = 0, time.perf_counter()
    streams = [zlib.compressobj(6, zlib.DEFLATED, -15) for _ in range(4)]
    for i, m in enumerate(messages):
        z = streams[i % 4] if takeover else zlib.compressobj(6, zlib.DEFLATED, -15)
        total += len(z.compress(m) + z.flush(zlib.Z_SYNC_FLUSH)) - 4
    return total, (time.perf_counter() - started) / len(messages) * 1e6


def main() -> None:
    games = states()
    print(f"{len(games)} broadcasts to 4 seats from one game")
    us2, made2 = timed(v2, games)
    us3, made3 = timed(v3(Deltas(), orjson.dumps), games)
    rows = [("protocol 2, pydantic", us2, made2), ("protocol 3, orjson", us3, made3)]
    if msgspec is not None:
        enc = msgspec.json.Encoder()
        import flyswat.wire as wire

        saved = wire.encode
        wire.encode = enc.encode  # type: ignore[assignment]
        try:
            us, made = timed(v3(Deltas(), enc.encode), games)
        finally:
            wire.encode = saved
        rows.append(("protocol 3, msgspec", us, made))
    print("wire | µs per broadcast | bytes per message | deflated (takeover) | deflate µs/msg")
    for name, us, made in rows:
        raw = sum(map(len, made)) / len(made)
        z_keep, us_keep = deflated(made, True)
        z_none, _ = deflated(made, False)
        print(f"{name} | {us:.1f} | {raw:.0f} | {z_none / len(made):.0f} "
              f"({z_keep / len(made):.0f}) | {us_keep:.1f}")  # fmt: skip
    assert json.loads(made3[0])["type"] == "hands"


if __name__ == "__main__":
    main()
