"""An arena of scripted players against a real server (issue 23): every game rated and
counted once.

One fresh ``flyswat serve --workers 1`` (its own SQLite file, ``--exempt 127.0.0.1``, an
operator's secret) and, in this process, ``--players`` (400) scripted players
(:class:`harness.client.Racer`: each reveals on its turn and slaps the best fly with a
reaction time drawn as a person's, an ex-Gaussian of median about 640 ms, and looks away from
8 % of the rounds, as people do: ``--model person``). The operator makes an
arena of ``--duration`` seconds (whole minutes: 10 by default); every player joins it, asks
for it every ``--poll`` second until the arena seats them, plays the game at that table to
its end, and asks again — until the arena has ended.

Then the store itself is read (the SQLite file) and checked:

- every table the arena paired whose game ended before the arena's end is **counted**, and
  none that ended after it;
- **counted once**: the standings recomputed from the stored games alone (each counted
  game's places and who was rated in it, in the order the games ended, by
  :mod:`flyswat.players.arena`'s own rule) equal the standings the server kept, player by
  player (points, games, wins), and no game id is counted at two tables;
- **rated**: how many of the counted games rated every player at them (and why not, when
  one was not: ``entries``' reason).

Reported: the games, the share rated, the wait from a game's ``over`` to the player's next
seat (the arena pairs a finished player again at once: p50, p95), the games per player, the
server's CPU (100 % = one core) and peak RSS, the arena's winner.

    flock -x -o /tmp/bench.lock uv run python bench/arena.py --out docs/bench/arena/….json
    uv run python bench/arena.py --players 40 --duration 120     # a smoke run
    ... --model script    # players that never lapse: the fair-play detector's "flawless"

The exit status is 0 when every counted game was counted once and rated every player.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from flyswat.players import arena as core
from flyswat.server import arena_store as st
from flyswat.server import players_store as ps
from flyswat.server.store import Store
from harness.client import Racer
from harness.load import percentile, raise_fd_limit
from harness.procs import ServerProcess, cpu_seconds, peak_rss_bytes
from harness.server import free_port

SECRET = "bench-arena-operator-secret"


def human(rng: random.Random) -> float:
    """A person's reaction time in ms: an ex-Gaussian (never under 200 ms), median about
    640 ms."""
    return max(200.0, rng.gauss(520, 80) + rng.expovariate(1 / 180))


def quick(rng: random.Random) -> float:
    """``--model script``'s reaction time: an ex-Gaussian of median about 550 ms."""
    return max(200.0, rng.gauss(450, 70) + rng.expovariate(1 / 150))


class Person(Racer):
    """A racer that, as a person does, looks away from some rounds (:data:`LAPSES` of them):
    a script that slaps every round, always right and fast, is what the fair-play detector
    puts under review (``flawless``), and a player under review is not rated."""

    async def _slap(self, ws: Any, msg: dict[str, Any], shown_at: float) -> None:
        if self.rng.random() < LAPSES:
            return
        await super()._slap(ws, msg, shown_at)


#: The share of rounds a :class:`Person` does not slap in.
LAPSES = 0.08


class Tally:
    """What the players saw: games played, waits from an ``over`` to the next seat."""

    def __init__(self) -> None:
        self.games: Counter[str] = Counter()
        self.waits: list[float] = []
        self.errors: Counter[str] = Counter()
        self.polls = 0


async def player(
    client: httpx.AsyncClient, ws: str, aid: str, who: dict[str, Any], poll_s: float,
    ends_at: float, tally: Tally, seed: int, person: bool = True,
) -> None:  # fmt: skip
    """Join arena ``aid`` and play its games until it ends (``ends_at``: monotonic)."""
    auth = {"player": who["player"], "secret": who["secret"]}
    joined = await client.post(f"/api/arenas/{aid}/join", json=auth)
    joined.raise_for_status()
    last_code, free_since = None, None
    rng = random.Random(seed)
    await asyncio.sleep(rng.random() * poll_s)  # not all at once
    while time.monotonic() < ends_at:
        try:
            reply = await client.post(f"/api/arenas/{aid}/me", json=auth)
            tally.polls += 1
            reply.raise_for_status()
            seat = reply.json()["me"]["seat"]
        except (httpx.HTTPError, KeyError, TypeError) as e:
            tally.errors[type(e).__name__] += 1
            await asyncio.sleep(poll_s)
            continue
        if seat is None or seat["code"] == last_code:
            await asyncio.sleep(poll_s)
            continue
        if free_since is not None:
            tally.waits.append(time.monotonic() - free_since)
        racer = (Person(who["name"], human, seed=rng.randrange(2**32)) if person
                 else Racer(who["name"], quick, seed=rng.randrange(2**32)))  # fmt: skip
        try:
            await racer.play(f"{ws}/ws/{seat['code']}", seat["token"], timeout=600)
        except Exception as e:  # counted, and the player asks again
            tally.errors[type(e).__name__] += 1
        last_code, free_since = seat["code"], time.monotonic()
        if racer.over is not None:
            tally.games[who["player"]] += 1
        for code, n in racer.errors.items():
            tally.errors[code] += n


def check(db_url: str, aid: str) -> dict[str, Any]:
    """The store's own account of the arena, checked (the module's docstring)."""
    store = Store(db_url)
    try:
        with store.engine.connect() as conn:
            arena = dict(conn.execute(st.arenas.select().where(st.arenas.c.id == aid))
                         .mappings().one())  # fmt: skip
            tables = st.tables_of(conn, aid)
            kept = {r["player"]: r for r in st.players_of(conn, aid)}
            codes = [t["code"] for t in tables]
            games = {}
            for r in conn.execute(ps.games.select().where(ps.games.c.code.in_(codes))).mappings():
                games.setdefault(r["code"], []).append(dict(r))
            pg = ps.player_games.c
            rows = conn.execute(ps.player_games.select().where(pg.code.in_(codes))).mappings()
            seats: dict[str, list[dict[str, Any]]] = {}
            for r in rows:
                seats.setdefault(r["game_id"], []).append(dict(r))
    finally:
        store.close()
    problems: list[str] = []
    counted, late, unfinished = [], 0, 0
    for t in tables:
        first = sorted(games.get(t["code"], []), key=lambda g: g["id"])
        if not first:
            unfinished += 1
            if t["counted"]:
                problems.append(f"{t['code']}: counted with no game kept")
            continue
        game = first[0]
        if t["game_id"] != game["game_id"]:
            problems.append(
                f"{t['code']}: counted {t['game_id']}, its first game {game['game_id']}"
            )
        ended = datetime.fromisoformat(game["ended_at"]).timestamp()
        if t["counted"] != core.counts(arena["ends"], ended) and abs(ended - arena["ends"]) > 1:
            problems.append(f"{t['code']}: counted={t['counted']} for a game ended at {ended}")
        if t["counted"]:
            counted.append((ended, game))
        else:
            late += 1
    ids = [g["game_id"] for _, g in counted]
    if len(ids) != len(set(ids)):
        problems.append("a game counted at two tables")
    # The standings again from the stored games alone
    again = {pid: core.Standing(pid, r["name"], r["joined"]) for pid, r in kept.items()}
    rated_all, why = 0, Counter()
    for _, game in sorted(counted, key=lambda c: (c[0], c[1]["id"])):
        entries = json.loads(game["entries"])
        places = [int(e["place"]) for e in entries]
        at = {r["seat"]: r for r in seats.get(game["game_id"], [])}
        rated = {r["player_id"] for r in at.values() if r["rated"]}
        players = [at[s]["player_id"] if s in at else None for s in range(len(places))]
        again |= core.scored_table(again, players, places, rated)
        if rated and len(rated) == len(at):
            rated_all += 1
        for e in entries:
            if e.get("player") and (e.get("out") or e.get("flagged")):
                why[e.get("out") or "too_fast"] += 1
    for pid, r in kept.items():
        mine = again[pid]
        if (mine.points, mine.games, mine.wins) != (r["points"], r["games"], r["wins"]):
            problems.append(f"{pid}: kept {r['points']}/{r['games']}/{r['wins']}, "
                            f"recomputed {mine.points}/{mine.games}/{mine.wins}")  # fmt: skip
    best = core.winner(again.values())
    return {
        "tables": len(tables), "counted": len(counted), "ended_after": late,
        "unfinished": unfinished, "rated_every_player": rated_all,
        "not_rated_reasons": dict(why), "problems": problems,
        "winner": {"name": best.name, "points": best.points, "games": best.games}
        if best else None, "final": bool(arena["final"]),
        "kept_winner": arena["winner"], "recomputed_winner": best.player if best else None,
    }  # fmt: skip


async def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    raise_fd_limit()
    db_url = f"sqlite:///{workdir / 'flyswat.db'}"
    server = ServerProcess(db_url, free_port(), workdir / "serve.log",
                           args=["--workers", "1", "--operator-secret", SECRET])  # fmt: skip
    server.start()
    try:
        http, ws = server.http, server.http.replace("http://", "ws://")
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
        async with httpx.AsyncClient(base_url=http, timeout=30, limits=limits) as client:
            people = []
            for i in range(args.players):
                made = await client.post("/api/players", json={"name": f"Arena{i:04}"})
                made.raise_for_status()
                people.append(made.json())
            minutes = max(1, math.ceil(args.duration / 60))
            made = await client.post("/api/operator/arenas", json={"name": "Bench arena",
                                     "minutes": minutes},
                                     headers={"authorization": f"Bearer {SECRET}"})  # fmt: skip
            made.raise_for_status()
            aid = made.json()["id"]
            t0, cpu0 = time.monotonic(), cpu_seconds(server.pid)
            ends_at = t0 + minutes * 60
            tally = Tally()
            person = args.model == "person"
            await asyncio.gather(*(player(client, ws, aid, who, args.poll, ends_at, tally, i,
                                          person) for i, who in enumerate(people)))  # fmt: skip
            took = time.monotonic() - t0
            cpu = cpu_seconds(server.pid) - cpu0
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:  # the loop freezes the standings
                view = (await client.get(f"/api/arenas/{aid}")).json()
                if view["arena"]["phase"] == "ended" and view["arena"]["winner"] is not None:
                    break
                await asyncio.sleep(0.5)
        rss = peak_rss_bytes(server.pid)
    finally:
        server.stop()
    checked = check(db_url, aid)
    played = list(tally.games.values())
    return {
        "players": args.players, "model": args.model, "minutes": minutes, "seconds": round(took, 1),
        "games_played_by_players": sum(played),
        "games_per_player": {"median": percentile([float(x) for x in played], 50)
                             if played else 0, "max": max(played, default=0)},
        "wait_s": {"p50": round(percentile(tally.waits, 50), 2),
                   "p95": round(percentile(tally.waits, 95), 2),
                   "max": round(max(tally.waits, default=float("nan")), 2)},
        "polls": tally.polls, "client_errors": dict(tally.errors),
        "server_cpu_pct": round(100 * cpu / took, 1), "server_peak_rss_mb": rss // 2**20,
        "store": checked,
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=400)
    parser.add_argument("--duration", type=float, default=600, help="seconds (whole minutes)")
    parser.add_argument("--poll", type=float, default=1.0, help="seconds between a player's asks")
    parser.add_argument("--model", choices=("person", "script"), default="person",
                        help="person: lapses in 8 %% of rounds, median 640 ms; script: every "
                        "round, median 550 ms (flagged as flawless by fair play)")  # fmt: skip
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="flyswat-arena-") as tmp:
        got = asyncio.run(run(args, Path(tmp)))
    text = json.dumps(got, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    store = got["store"]
    once = not store["problems"]
    rated = store["rated_every_player"] == store["counted"]
    print("every counted game counted once:", "yes" if once else "NO", file=sys.stderr)
    print("every counted game rated every player:", "yes" if rated else "NO", file=sys.stderr)
    return 0 if once and rated else 1


if __name__ == "__main__":
    sys.exit(main())
