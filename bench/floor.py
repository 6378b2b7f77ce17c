"""The floor under the hot path: the rhythm's traffic on a bare room, in Python and in Node.

``bench/rhythm.py --anchor colyseus`` sets flyswat beside Colyseus; this sets the *socket
layer alone* of each language side by side, to say how much of flyswat's multiple of
Colyseus's CPU is the game and its store, and how much one Python callback per message
costs before either. Two bare rooms with the same traffic and nothing else
(``bench/floor/``): rooms of four sockets by arrival, a ``reveal`` every 2000 ms (every fourth
opens a round), slaps until all four or 1000 ms and one ``result``, a ``ping`` a second to
every socket from one 100-ms timer, answered by a ``pong`` — 1.125 messages a second in and
1.625 out per player, as the anchor's rhythm:

- ``room.js``: Node 20 on ``ws`` 8.23 (Colyseus's transport's library, from the anchor's
  packages), ``perMessageDeflate`` off;
- ``room.py``: uvloop, an ``asyncio.Protocol`` per socket, flyswat's frame reader and
  writer (:mod:`flyswat.server.frames`) and pong shortcut, orjson; a frame written as it is
  made (as ``ws`` does).

One Node process of ``ws`` clients (``clients.js``) drives either. Each round runs each room in
turn (the order alternates round by round): the clients connect, ``--warmup`` seconds pass,
then the room's CPU (``/proc``) and its own message counts over ``--seconds``.

    flock -x -o /tmp/bench.lock uv run python bench/floor.py --players 4000 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from harness.anchor import KNOWN, install
from harness.procs import cpu_seconds
from harness.server import free_port

HERE = Path(__file__).parent / "floor"


def room_cmd(kind: str, port: int) -> list[str]:
    if kind == "node":
        return ["node", str(HERE / "room.js"), str(port)]
    return [sys.executable, str(HERE / "room.py"), str(port)]


def counts(room: subprocess.Popen[str]) -> dict[str, int]:
    assert room.stdin is not None and room.stdout is not None
    room.stdin.write("\n")
    room.stdin.flush()
    return dict(json.loads(room.stdout.readline()))


def measure(kind: str, players: int, warmup: float, seconds: float) -> dict[str, Any]:
    port = free_port()
    with subprocess.Popen(room_cmd(kind, port), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True) as room:  # fmt: skip
        assert room.stdout is not None
        try:
            if room.stdout.readline().strip() != "listening":
                raise RuntimeError(f"the {kind} room did not start")
            cmd = ["node", str(HERE / "clients.js"), f"ws://127.0.0.1:{port}/", str(players)]
            with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as clients:
                assert clients.stdout is not None
                try:
                    if clients.stdout.readline().strip() != "ready":
                        raise RuntimeError(f"the clients of the {kind} room did not connect")
                    time.sleep(warmup)
                    before, cpu0, t0 = counts(room), cpu_seconds(room.pid), time.monotonic()
                    client0 = cpu_seconds(clients.pid)
                    time.sleep(seconds)
                    after, cpu1, t1 = counts(room), cpu_seconds(room.pid), time.monotonic()
                    client1 = cpu_seconds(clients.pid)
                finally:
                    clients.kill()
        finally:
            room.kill()
    span = t1 - t0
    inn = (after["received"] - before["received"]) / span
    out = (after["sent"] - before["sent"]) / span
    cpu = (cpu1 - cpu0) / span
    return {
        "room": kind,
        "players": players,
        "cpu": cpu,
        "cpu_per_1000": cpu / players * 1000,
        "us_per_message": cpu / (inn + out) * 1e6,
        "in_per_player": inn / players,
        "out_per_player": out / players,
        "clients_cpu": (client1 - client0) / span,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=4000, help="a multiple of 4")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--warmup", type=float, default=10.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--out", help="write every figure here (JSON)")
    args = parser.parse_args()
    install(KNOWN["colyseus"])  # the anchor's packages hold ws
    rows = []
    print("room    players    CPU   /1k  µs/msg  in/out per player  clients CPU")
    for r in range(args.rounds):
        for kind in ("node", "python") if r % 2 == 0 else ("python", "node"):
            row = measure(kind, args.players, args.warmup, args.seconds)
            rows.append(row)
            print(f"{kind:7} {args.players:7} {row['cpu']:6.0%} {row['cpu_per_1000']:5.1%} "
                  f"{row['us_per_message']:7.1f}  {row['in_per_player']:.2f} / "
                  f"{row['out_per_player']:.2f}        {row['clients_cpu']:5.0%}",
                  flush=True)  # fmt: skip
    for kind in ("node", "python"):
        mine = [r["us_per_message"] for r in rows if r["room"] == kind]
        print(f"{kind}: µs per message {min(mine):.1f}–{max(mine):.1f}")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
