"""The table's own share of the hot path: CPU per client message with no socket, no loop and
no store — the rhythm of ``shared/LOAD-RHYTHM.md`` played on sans-I/O tables.

``--tables`` tables of four seats, every seat a connection, on one simulated clock: a reveal
every 2 s per table by the seat to move; on a reveal that opens a slap round each seat slaps
its highest allowed fly 150–600 ms later and says done; a pong a second per seat; the
table's timers (hands, the round's close) handed a ``Tick`` when due. Every outcome is
framed as the runner frames it (``Executor.tell``: a message encoded once for all its
receivers), so the figure is what the table and the encoding cost a message, the part of
``bench/rhythm.py``'s µs per message that is flyswat's own Python rather than the socket's.

    uv run python bench/table_cpu.py                       # 200 tables, 120 s of play
    uv run python bench/table_cpu.py --profile 30          # and cProfile's top 30
"""

from __future__ import annotations

import argparse
import cProfile
import heapq
import pstats
import random
import time
from time import perf_counter
from typing import Any

from flyswat import protocol as p
from flyswat.cards import Card
from flyswat.errors import FlyswatError
from flyswat.server.frames import text_frame
from flyswat.table.core import Table
from flyswat.table.io import Fanout, Join, Message, Outcome, Sent, Sources, Tick

REVEAL_EVERY_MS = 2000.0


def frame_all(outcome: Outcome) -> int:
    """Frame an outcome's messages as :meth:`flyswat.server.executor.Executor.tell` does; how
    many messages went out."""
    frames: dict[int, bytes] = {}
    sent = 0
    for send in outcome.sends:
        key = id(send.message)
        if key not in frames:
            m = send.message
            data = m if isinstance(m, bytes) else m.model_dump_json().encode()
            frames[key] = text_frame(data)
        sent += len(send.conns) if isinstance(send, Fanout) else 1
    return sent


class Rhythm:
    """Tables, their clients' next actions, and the counts."""

    def __init__(self, tables: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.now = 0.0
        self.tables: list[Table] = []
        self.events: list[tuple[float, int, int, str, Any]] = []  # (at, order, table, what, arg)
        self.order = 0
        self.received = 0
        self.sent = 0
        #: Seconds spent in the tables and the framing alone (the clients' side left out).
        self.busy = 0.0
        for i in range(tables):
            table, out = Table.create(f"T{i:05d}", p.TableOptions(seats=4), "P0",
                                      Sources.fixed(seed + i), self.now)  # fmt: skip
            tokens = [out.reply[1]]
            tokens += [table.handle(Join(name=f"P{s}"), self.now).reply[1] for s in range(1, 4)]
            for conn, token in enumerate(tokens):
                self.say(table, conn, p.Hello(token=token))
                table.handle(Message(conn, p.Ready(ready=True)), self.now)
            table.handle(Message(0, p.Start()), self.now)
            self.tables.append(table)
            self.at(self.now + self.rng.uniform(0, REVEAL_EVERY_MS), i, "reveal", None)
        for i in range(tables):
            for conn in range(4):
                self.at(self.now + self.rng.uniform(0, 1000), i, "pong", conn)

    def say(self, table: Table, conn: int, msg: Any) -> Outcome:
        self.received += 1
        started = perf_counter()
        out = table.handle(Message(conn, msg), self.now)
        self.sent += frame_all(out)
        self.busy += perf_counter() - started
        return out

    def at(self, when: float, table: int, what: str, arg: Any) -> None:
        self.order += 1
        heapq.heappush(self.events, (when, self.order, table, what, arg))

    def run(self, seconds: float) -> None:
        end = self.now + seconds * 1000
        wakes: dict[int, float] = {}
        while self.events and self.events[0][0] <= end:
            when, _, i, what, arg = heapq.heappop(self.events)
            self.now = when
            table = self.tables[i]
            if what == "wake":
                if wakes.get(i) != when:
                    continue
                del wakes[i]
                started = perf_counter()
                out = table.handle(Tick(), when)
                self.sent += frame_all(out)
                self.busy += perf_counter() - started
            elif what == "pong":
                started = perf_counter()
                table.observe(arg, 20.0, 18.0, when)  # the runner's shortcut
                self.busy += perf_counter() - started
                self.received += 1
                self.at(when + 1000, i, "pong", arg)
            elif what == "reveal":
                game = table.game
                assert game is not None
                if game.over:
                    continue
                if game.round is not None:
                    self.at(when + 50, i, "reveal", None)
                    continue
                out = self.say(table, game.to_move, p.Reveal())
                started = perf_counter()
                for send in out.sends:  # each seat's socket handed the reveal at once
                    if send.mark is not None and not isinstance(send, Fanout):
                        table.handle(Sent(send.conn, send.mark), when)
                self.busy += perf_counter() - started
                if game.round is not None:
                    turn = len(game.turns)
                    for seat in range(4):
                        self.at(when + self.rng.uniform(150, 600), i, "slap", (seat, turn))
                self.at(when + REVEAL_EVERY_MS, i, "reveal", None)
            elif what == "slap":
                seat, turn = arg
                game = table.game
                if game is None or game.round is None or len(game.turns) != turn:
                    continue
                allowed = [c for c in game.centre if _allowed(game, seat, c)]
                if allowed:
                    best: Card = max(allowed, key=lambda c: c.value)
                    ms = int(self.rng.uniform(150, 600))
                    self.say(table, seat, p.Slap(card=best.text, ms=ms, turn=turn))
                if game.round is not None and len(game.turns) == turn:
                    self.say(table, seat, p.Done(turn=turn))
            wake = table.wake_at
            if wake is not None and wakes.get(i) != wake:
                wakes[i] = wake
                self.at(wake, i, "wake", None)


def _allowed(game: Any, seat: int, card: Card) -> bool:
    try:
        game.check_slap(seat, card)
    except FlyswatError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=120.0, help="simulated seconds")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", type=int, default=0, help="cProfile's top N")
    args = parser.parse_args()
    rhythm = Rhythm(args.tables, args.seed)
    rhythm.received = rhythm.sent = 0
    rhythm.busy = 0.0
    profiler = cProfile.Profile() if args.profile else None
    started = time.process_time()
    if profiler:
        profiler.enable()
    rhythm.run(args.seconds)
    if profiler:
        profiler.disable()
    cpu = time.process_time() - started
    messages = rhythm.received + rhythm.sent
    print(f"{args.tables} tables, {args.seconds:g} s of play: {rhythm.received} messages in, "
          f"{rhythm.sent} out; {cpu:.2f} s of CPU: {cpu / messages * 1e6:.1f} µs a message, "
          f"{cpu / (args.tables * 4) / args.seconds * 1e5:.2f} % of a core per 1,000 players; "
          f"the tables and the framing alone {rhythm.busy / messages * 1e6:.1f} µs a message"
          f"{' (profiled: slower)' if profiler else ''}")  # fmt: skip
    if profiler:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile)


if __name__ == "__main__":
    main()
