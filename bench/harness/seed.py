"""A store of many finished games, made in about a minute, and a reader of its players' pages.

:func:`seed_games` writes ``games`` finished four-seat games into a fresh store (migrated
first): players with ratings, each game's row, a row per seat (with its hands, as the fair-play
detector keeps them) and the game's record. The rows are written straight into the tables,
not played: every game is one real game's record and hands under a new id, its seats drawn
from the players, its ratings made up. What the players' routes read is there at its real
size; what no route reads (the events' log of a finished table) is not.

:func:`reader_main` (a process of its own) asks a server for ``rate`` players' pages a second
— the leaderboard (a random page), a profile, a profile's games — and reports how long each
took: the reads that issue 20 puts beside the rhythm.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from multiprocessing.synchronize import Event
from typing import Any

import sqlalchemy as sa

from flyswat import bots, fairplay
from flyswat.engine import Game
from flyswat.players.ratings import Entry
from flyswat.record import to_record
from flyswat.rules import Rules
from flyswat.server import players_store as ps
from flyswat.server.store import Store, engine_url, records
from flyswat.sim import driver

#: Players per game in the store (a player has ``4 / PLAYERS_PER_GAME`` × games games).
PLAYERS_PER_GAME = 0.2
CHUNK = 5_000
#: The reader's kept-alive connections: at most this many reads in flight.
READ_CONNECTIONS = 64


def one_record(seed: str = "seed") -> dict[str, Any]:
    """One real game between four ``hard`` bots: its record."""
    rules = Rules(seats=4, remove=56)
    game = Game.new(rules, seed, 0)
    at = dict.fromkeys(range(4), bots.HARD)
    rngs = {k: random.Random(f"{seed}:{k}") for k in range(4)}
    while driver.advance(game) is not None:
        driver.play_round(game, driver.bot_hands(game, at, rngs))
    seats = [{"name": f"P{i}", "kind": "human"} for i in range(4)]
    return to_record(game, seats, id=seed, started_at="2026-12-01T00:00:00Z")


def seed_games(url: str, games: int, seed: int = 1) -> list[str]:
    """Write ``games`` finished games into the store at ``url`` (migrated here); returns
    the players' ids."""
    Store(url).close()
    rng = random.Random(seed)
    record = one_record()
    head, tail = json.dumps(record).split('"seed"', 1)  # the record's id, spliced per game
    hands = [json.dumps(fairplay.from_record(record, seat).to_json()) for seat in range(4)]
    count = max(4, round(games * PLAYERS_PER_GAME))
    ids = [f"{rng.getrandbits(128):032x}" for _ in range(count)]
    mu = {pid: rng.gauss(25, 4) for pid in ids}
    sigma = {pid: max(1.0, 8.33 - rng.random() * 6) for pid in ids}
    played = dict.fromkeys(ids, 0)
    engine = sa.create_engine(engine_url(url))
    started = time.time()
    with engine.begin() as conn:
        for lo in range(0, games, CHUNK):
            game_rows, seat_rows, record_rows = [], [], []
            for g in range(lo, min(games, lo + CHUNK)):
                gid = f"seed{g:08d}"
                code = f"S{g:07d}"
                at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started - (games - g) * 30))
                seats = rng.sample(ids, 4)
                places = record["result"]["places"]
                entries = [Entry(k, places[k], pid).to_json() for k, pid in enumerate(seats)]
                game_rows.append({"game_id": gid, "code": code, "ended_at": at,
                                  "entries": json.dumps(entries), "public": True, "seats": 4,
                                  "rated": True, "names": json.dumps(record["seats"])})  # fmt: skip
                text = head + f'"{gid}"' + tail
                record_rows.append({"game_id": gid, "code": code, "record": text})
                for k, pid in enumerate(seats):
                    played[pid] += 1
                    seat_rows.append({
                        "player_id": pid, "game_id": gid, "code": code, "ended_at": at,
                        "seat": k, "seats": 4, "place": places[k],
                        "points": record["result"]["points"][k],
                        "flies": record["result"]["flies"][k], "too_fast": 0,
                        "slaps": 10, "reaction_ms": 400.0 + k, "rated": True,
                        "mu_before": mu[pid], "sigma_before": sigma[pid], "mu_after": mu[pid],
                        "sigma_after": sigma[pid], "hands": hands[k],
                    })  # fmt: skip
            conn.execute(sa.insert(ps.games), game_rows)
            conn.execute(sa.insert(ps.player_games), seat_rows)
            conn.execute(sa.insert(records), record_rows)
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ")
        conn.execute(sa.insert(ps.players), [
            {"id": pid, "name": f"Seed{i}", "name_key": f"seed{i}", "secret_hash": "0" * 64,
             "created_at": now, "mu": mu[pid], "sigma": sigma[pid], "games": played[pid],
             "rated": played[pid], "bot": False}
            for i, pid in enumerate(ids)
        ])  # fmt: skip
    if engine.dialect.name == "postgresql":  # the planner's statistics, as autovacuum keeps them
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(sa.text("ANALYZE"))
    engine.dispose()
    return ids


async def _get(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str,
               path: str) -> int:  # fmt: skip
    """One GET on a kept-alive connection: its status (the body read and dropped)."""
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.lower().split(b"\r\n"):
        if line.startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    await reader.readexactly(length)
    return status


def reader_main(url: str, rate: float, ids: list[str], ready: Event, go: Event, stop: Event,
                reports: Any) -> None:  # fmt: skip
    """Read players' pages from ``url`` at ``rate`` a second from ``go`` until ``stop``,
    over :data:`READ_CONNECTIONS` kept-alive connections (HTTP/1.1 written by hand: a
    client library would cost the machine more than the reads cost the server); put
    ``{"ms": {kind: [...]}, "errors": n, "late": n, "seconds": s}`` on ``reports``."""
    host, port = url.removeprefix("http://").rsplit(":", 1)

    async def run() -> dict[str, Any]:
        rng = random.Random(7)
        ms: dict[str, list[float]] = {"leaderboard": [], "profile": [], "games": []}
        errors = late = 0  # late: reads not sent on time, every connection busy
        idle: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()

        async def one(kind: str, path: str) -> None:
            nonlocal errors
            conn = idle.get_nowait()
            t = time.perf_counter()
            try:
                status = await _get(*conn, host, path)
            except (OSError, asyncio.IncompleteReadError, ValueError):
                errors += 1
                conn = await asyncio.open_connection(host, int(port))
            else:
                if status == 200:
                    ms[kind].append((time.perf_counter() - t) * 1000)
                else:
                    errors += 1
            idle.put_nowait(conn)

        ready.set()
        while not go.is_set():
            await asyncio.sleep(0.05)
        # Opened now, not at set-up: a connection idle past the server's keep-alive (the
        # rhythm's set-up takes longer) is closed by it, and its first read would fail.
        for _ in range(READ_CONNECTIONS):
            idle.put_nowait(await asyncio.open_connection(host, int(port)))
        tasks: set[asyncio.Task[None]] = set()
        start, n = time.perf_counter(), 0
        while not stop.is_set():
            await asyncio.sleep(max(0.0, start + n / rate - time.perf_counter()))
            n += 1
            if idle.empty():
                late += 1
                continue
            pid = rng.choice(ids)
            kind, path = [
                ("leaderboard", f"/api/leaderboard?offset={rng.randrange(0, 500)}"),
                ("profile", f"/api/players/{pid}"),
                ("games", f"/api/players/{pid}/games"),
            ][n % 3]  # fmt: skip
            task = asyncio.create_task(one(kind, path))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        seconds = time.perf_counter() - start
        await asyncio.gather(*tasks, return_exceptions=True)
        return {"ms": ms, "errors": errors, "late": late, "sent": n, "seconds": seconds}

    try:
        reports.put(asyncio.run(run()))
    except Exception as e:  # the harness reports it
        reports.put({"error": f"{type(e).__name__}: {e}"})
