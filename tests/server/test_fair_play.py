"""Fair play attacks from the outside, as an attacker reads PROTOCOL.md, PLAYERS.md and
DEPLOY.md: a real server process (and a real nginx where a proxy is involved). Each test
asserts what the documents promise and failed while its hole was open.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.server import Serve, free_port, free_ports, stop_process, until_health

from .conftest import FAST, Process, games_at, identity, with_bots

# -- 1. the client's address behind a proxy ------------------------------------------------

#: DEPLOY.md's nginx, reduced to one upstream: it sets X-Forwarded-For from its real peer.
DEPLOYED = "proxy_set_header X-Forwarded-For $remote_addr;"
#: An nginx that passes the client's X-Forwarded-For through (nginx's default: it sets none).
PASSING = ""


@contextlib.contextmanager
def nginx(tmp: Path, upstream: int, header_line: str) -> Iterator[int]:
    """nginx on a free loopback port proxying to ``upstream``; yields its port."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(binary):
        pytest.skip("nginx is not installed (apt-get install nginx)")
    port = free_port()
    root = tmp / f"nginx-{port}"
    root.mkdir()
    user = "user root;" if os.geteuid() == 0 else ""
    conf = root / "nginx.conf"
    conf.write_text(f"""
{user}
daemon off;
worker_processes 1;
pid {root}/nginx.pid;
error_log {root}/error.log;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {root}/body;
    proxy_temp_path {root}/proxy;
    fastcgi_temp_path {root}/fastcgi;
    uwsgi_temp_path {root}/uwsgi;
    scgi_temp_path {root}/scgi;
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            {header_line}
            proxy_pass http://127.0.0.1:{upstream};
        }}
    }}
}}
""")
    proc = subprocess.Popen([binary, "-c", str(conf), "-p", str(root)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 15
        while True:
            assert proc.poll() is None, (root / "error.log").read_text(errors="replace")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            assert time.monotonic() < deadline, "nginx did not start"
            time.sleep(0.1)
        yield port
    finally:
        stop_process(proc)


def creates_with_rotating_header(port: int, n: int) -> list[int]:
    """The statuses of up to ``n`` table creates through ``port``, each naming a new
    address, until one is refused."""
    body = {"name": "Ana", "seats": 2, **FAST}
    statuses: list[int] = []
    for i in range(n):
        if statuses and statuses[-1] == 429:
            break
        forged = {"x-forwarded-for": f"10.9.{i // 200}.{i % 200 + 1}"}
        reply = httpx.post(f"http://127.0.0.1:{port}/api/tables", json=body, headers=forged,
                           timeout=10)  # fmt: skip
        statuses.append(reply.status_code)
    return statuses


@pytest.mark.parametrize(
    ("header_line", "trusted"),
    [(PASSING, []), (DEPLOYED, []), (DEPLOYED, ["--trusted-proxies", "127.0.0.1"])],
    ids=["passing-proxy-untrusted", "deployed-proxy-untrusted", "deployed-proxy-trusted"],
)
def test_a_client_behind_a_proxy_cannot_choose_its_address_for_the_limits(
    tmp_path: Path, started: list[Serve], header_line: str, trusted: list[str]
) -> None:
    """Behind nginx on the same host, a client that sends a new X-Forwarded-For with each
    create still has one table budget: past the burst of 20 a create is refused (429) —
    at once, or after the few the budget regained meanwhile (on a loaded machine the creates
    take seconds) — whether the proxy passes the client's header (nobody is believed unless
    named) or sets it from its peer, as DEPLOY.md's configuration does (the proxy named
    trusted). A forged address believed would get a fresh budget each time: no 429 at all."""
    port = free_ports(1)
    db = f"sqlite:///{tmp_path / 'p.db'}"
    args = ["--workers", "1", "--port", str(port), "--db", db, *trusted]
    started.append(Serve(args, tmp_path / "p.log", [port]))
    with nginx(tmp_path, port, header_line) as front:
        statuses = creates_with_rotating_header(front, 60)
    assert statuses[:20] == [201] * 20 and statuses[-1] == 429, statuses
    assert set(statuses[:-1]) == {201}


def test_the_trusted_proxies_option_refuses_what_is_not_an_address(tmp_path: Path) -> None:
    """``--trusted-proxies`` takes addresses or networks; anything else is refused at start
    with a clear message, and no server runs."""
    import sys

    from harness.server import ROOT

    cmd = [sys.executable, "-m", "flyswat.cli", "serve", "--workers", "1", "--port",
           str(free_port()), "--db", f"sqlite:///{tmp_path / 'x.db'}",
           "--trusted-proxies", "127.0.0.1,not-an-address"]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode != 0
    assert "--trusted-proxies" in done.stderr and "not-an-address" in done.stderr, done.stderr


# -- 2. a worker paused past its lease -------------------------------------------------------


async def said_first(url: str, token: str) -> tuple[dict[str, Any], Any]:
    """Open ``url``, say hello with ``token``; the first message that is not a ping, and the
    socket (still open unless the server closed it)."""
    from websockets.asyncio.client import connect

    ws = await connect(url, open_timeout=5)
    with contextlib.suppress(Exception):
        await ws.send(json.dumps({"type": "hello", "token": token}))
    return await next_said(ws), ws


async def next_said(ws: Any, timeout: float = 10) -> dict[str, Any]:
    """The next message on ``ws`` that is not a ping."""
    deadline = time.monotonic() + timeout
    while True:
        msg = json.loads(await asyncio.wait_for(ws.recv(), deadline - time.monotonic()))
        if msg["type"] != "ping":
            return dict(msg)


def test_a_node_whose_lease_lapsed_is_stale_after_its_next_beat_until_it_checked(
    db_url: str,
) -> None:
    """The beat of a node woken from a pause comes at once, but does not give back the
    tables adopted meanwhile: the node counts as stale (it asks the store before serving a
    table from memory) until a check of its tables that began after the lapse."""
    from flyswat.server.cluster import Cluster
    from flyswat.server.settings import Timings
    from flyswat.server.store import Store

    store = Store(db_url, node="a")
    try:
        cluster = Cluster(store.engine, "a", "http://127.0.0.1:1")
        cluster.beat()
        assert not cluster.stale()
        cluster.beaten_at -= (
            Timings().dead_after_s + 1
        )  # paused: the last beat is older than the lease
        assert cluster.stale()
        began = cluster.lapses  # a check that began before the woken node's first beat ...
        cluster.beat()  # ... the beat thread wakes first
        assert cluster.stale(), "a beat after a lapse does not make the node's tables its own"
        cluster.checked(began)
        assert cluster.stale(), "a check begun before the lapse was seen does not settle it"
        cluster.checked(cluster.lapses)
        assert not cluster.stale()
        cluster.beat()
        assert not cluster.stale()
    finally:
        store.close()


@pytest.mark.anyio
async def test_a_worker_paused_past_its_lease_greets_nobody_from_its_stale_copy(
    tmp_path: Path, started: list[Serve]
) -> None:
    """SIGSTOP the worker that runs a lobby past its lease, let the other worker adopt it (a
    hello there is welcomed), SIGCONT: a hello at the woken worker's own port 1 s later is
    answered ``moved``, never ``welcome`` from the copy left behind, and the socket the
    woken worker held is told ``moved`` too (docs/PROTOCOL.md, *Nodes*)."""
    from .test_cluster import owner_port

    port = free_ports(3)
    db = f"sqlite:///{tmp_path / 'w.db'}"
    started.append(Serve(["--workers", "2", "--port", str(port), "--db", db],
                         tmp_path / "w.log", [port, port + 1, port + 2]))  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    seated = httpx.post(base + "/api/tables", json={"name": "Ana", "seats": 3, **FAST}, timeout=10)
    assert seated.status_code == 201, seated.text
    code, ana = seated.json()["code"], seated.json()["token"]
    joined = httpx.post(f"{base}/api/tables/{code}/join", json={"name": "Bruno"}, timeout=10)
    bruno = joined.json()["token"]
    owner = owner_port(code, [port + 1, port + 2])
    other = 2 * port + 3 - owner
    pid = until_health(owner)["pid"]
    said, held = await said_first(f"ws://127.0.0.1:{owner}/ws/{code}", bruno)
    assert said["type"] == "welcome", said
    assert (await next_said(held))["type"] == "table"  # the hello's own update, then quiet
    os.kill(pid, signal.SIGSTOP)
    try:
        await asyncio.sleep(4.5)  # past the lease (dead after 3 s without a beat)
        said, adopted = await said_first(f"ws://127.0.0.1:{other}/ws/{code}", ana)
        assert said["type"] == "welcome", f"the other worker adopts the table: {said}"
        await adopted.close()
    finally:
        os.kill(pid, signal.SIGCONT)
    await asyncio.sleep(1.0)
    said, woken = await said_first(f"ws://127.0.0.1:{owner}/ws/{code}", ana)
    with contextlib.suppress(Exception):
        await woken.close()
    told = await next_said(held)
    with contextlib.suppress(Exception):
        await held.close()
    assert said["type"] == "moved", f"the woken worker greeted from its stale copy: {said}"
    assert told["type"] == "moved", f"the socket the woken worker held was told {told}"


# -- one server process for the players' holes -----------------------------------------------


# -- 3. a private table's code ----------------------------------------------------------------


@pytest.mark.anyio
async def test_a_private_tables_code_is_in_no_public_answer_after_its_games(
    server: Process,
) -> None:
    """A ``public: false`` table and its rematch: their code is in no public answer — the
    player's games, each game's summary and record, the profile, the leaderboard, the lobby
    — while a public table's games still name theirs."""
    ana = await asyncio.to_thread(identity, server, "Ana")
    code, ids = await games_at(server, with_bots(ana, "easy", public=False, **FAST), 2)
    shown_code, shown = await games_at(server, with_bots(ana, "easy", **FAST), 1)
    answers = {}
    for path in [f"/api/players/{ana['player']}/games", f"/api/players/{ana['player']}",
                 "/api/leaderboard", "/api/tables", "/api/games",
                 f"/api/games?player={ana['player']}", *(f"/api/games/{g}" for g in ids),
                 *(f"/api/games/{g}/record" for g in ids)]:  # fmt: skip
        reply = await asyncio.to_thread(server.get, path)
        assert reply.status_code == 200, (path, reply.text)
        answers[path] = reply.text
    games = json.loads(answers[f"/api/players/{ana['player']}/games"])["games"]
    by_id = {g["game_id"]: g for g in games}
    assert set(by_id) == {*ids, *shown}
    assert by_id[shown[0]]["code"] == shown_code  # a public table's game names its table
    summary = json.loads(answers[f"/api/games/{ids[1]}"])
    assert summary["code"] is None and all(by_id[g]["code"] is None for g in ids)
    listed = json.loads(answers["/api/games"])["games"]
    assert [g["game_id"] for g in listed] == shown  # the recent public games: not the private
    leaks = [path for path, text in answers.items() if code in text]
    assert not leaks, f"the private table's code {code} is in {leaks}"


# -- 5. a name that wears a tag ---------------------------------------------------------------


#: Names that wear a tag, or one that looks like it (full-width and small number signs, a
#: music sharp, no space, a space inside, the tag alone).
TAGGED = ["Ana #K7Q", "Ana #k7q", "Ana#K7Q", "Ana # K7Q", "Ana \uff03K7Q", "Ana \ufe5fK7Q",
          "Ana \u266fK7Q", "#K7Q"]  # fmt: skip


def test_a_name_that_looks_like_a_server_tag_is_refused_everywhere_and_changes_nothing(
    server: Process,
) -> None:
    """A tag ("Ana #K7Q") is the server's alone: a typed name holding its sign, or one that
    looks like it, is refused with one clear error (``bad_name``) as an identity, a guest's
    table or a guest's join, and nothing is stored — "Ana" is still free afterwards."""
    host = server.post("/api/tables", {"name": "Host", "seats": 3, **FAST}).json()
    for name in TAGGED:
        attempts = {
            "identity": server.post("/api/players", {"name": name}),
            "create": server.post("/api/tables", {"name": name, "seats": 2, **FAST}),
            "join": server.post(f"/api/tables/{host['code']}/join", {"name": name}),
        }
        for where, reply in attempts.items():
            assert reply.status_code == 400, (name, where, reply.text)
            error = reply.json()
            assert error["error"] == "bad_name" and "#" in error["message"], (name, where, error)
    players = server.get(f"/api/tables/{host['code']}").json()["players"]
    assert [p["name"] for p in players] == ["Host", None, None]
    assert [t["code"] for t in server.get("/api/tables").json()["tables"]] == [host["code"]]
    assert identity(server, "Ana")["name"] == "Ana"  # no player was stored
    assert identity(server, "Ana")["name"].startswith("Ana #")  # a tag is still the server's


# -- 4. a rating farmed by doing nothing --------------------------------------------------------


async def rated_games(server: Process, who: dict[str, Any]) -> list[dict[str, Any]]:
    reply = await asyncio.to_thread(server.get, f"/api/players/{who['player']}/games?limit=100")
    return list(reply.json()["games"])


@pytest.mark.anyio
async def test_a_player_who_does_nothing_gains_no_rating_from_ties_with_hard_bots(
    server: Process,
) -> None:
    """The issue's farm: a player who never slaps, at 4 seats with ``remove: 100`` and three
    ``hard`` bots, gained +54, +93, +87 in a series (short games end in ties at 0 points).
    Now such a game is unrated (shorter than MIN_REVEALS), and so is a long one in which the
    player neither slaps nor reveals (the turn timer reveals for them); a player who plays a
    long enough game is rated (docs/PLAYERS.md, *What a rated game is*)."""
    from flyswat.players.ratings import MIN_REVEALS

    idle = await asyncio.to_thread(identity, server, "Idle")
    farm = with_bots(idle, "hard", "hard", "hard", remove=100, slap_window_ms=600,
                     turn_timeout_ms=400)  # fmt: skip
    await games_at(server, farm, 3, slaps=False)
    absent = dict(farm, remove=112 - 4 - MIN_REVEALS - 4)  # long enough, if they took part
    await games_at(server, absent, 1, slaps=False, reveals=False)
    games = await rated_games(server, idle)
    assert len(games) == 4
    assert [(g["rated"], g["delta"]) for g in games] == [(False, 0)] * 4, games
    profile = (await asyncio.to_thread(server.get, f"/api/players/{idle['player']}")).json()
    assert (profile["rating"], profile["rated_games"], profile["rank"]) == (1000, 0, None)
    board = (await asyncio.to_thread(server.get, "/api/leaderboard")).json()
    assert idle["player"] not in {p["id"] for p in board["players"]}

    ana = await asyncio.to_thread(identity, server, "Ana")
    played = with_bots(ana, "easy", remove=112 - 2 - 40, turn_timeout_ms=400)
    await games_at(server, played, 1, reaction_ms=480, human=True)
    assert [g["rated"] for g in await rated_games(server, ana)] == [True]


# -- the detector in the server ------------------------------------------------------------------

OPERATOR = "an-operator-secret-of-enough-length"


@pytest.mark.anyio
async def test_a_flagged_players_game_is_unrated_and_only_the_operator_sees_why(
    tmp_path: Path, started: list[Serve]
) -> None:
    """A player whose every hand comes 250 ms after the trigger (a script: the scripted test
    player, steady) is flagged by the game that shows it: that game is not rated, nothing
    public says why, and the operator's listing — which needs the operator's secret — and
    ``flyswat fairplay`` name the player and the reason; cleared, they are rated again.

    The whole deck (31–36 rounds with a fly to slap in six games played so): on a busy
    machine the server sees some of the script's hands late (its frames wait for a core), as
    it would a person's, and over the 27 first hands of a shorter game their spread was once
    too wide to tell; over 30 or more its speed tells too (a median first hand of 250 ms),
    which such delays do not hide."""
    import sys

    from harness.server import ROOT

    port = free_ports(1)
    db = f"sqlite:///{tmp_path / 'op.db'}"
    started.append(Serve(["--workers", "1", "--port", str(port), "--db", db, "--exempt",
                          "127.0.0.1", "--operator-secret", OPERATOR],
                         tmp_path / "op.log", [port]))  # fmt: skip
    server = Process(f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}", None)
    bot = await asyncio.to_thread(identity, server, "Steady")
    long_game = with_bots(bot, "easy", remove=0, slap_window_ms=600, turn_timeout_ms=400)
    _, ids = await games_at(server, long_game, 1)
    games = await rated_games(server, bot)
    assert [(g["rated"], g["delta"]) for g in games] == [(False, 0)]

    url = f"{server.http}/api/operator/fairplay"
    assert httpx.get(url, timeout=10).status_code == 403
    wrong = {"authorization": "Bearer " + OPERATOR[:-1] + "x"}
    assert httpx.get(url, headers=wrong, timeout=10).status_code == 403
    listed = httpx.get(url, headers={"authorization": f"Bearer {OPERATOR}"}, timeout=10).json()
    [row] = listed["players"]
    assert row["player_id"] == bot["player"] and row["state"] == "review"
    tells = ("spread", "median first hand")  # the strongest evidence, in words
    assert row["name"] == "Steady" and row["score"] >= 1
    assert any(w in row["reason"] for w in tells), row["reason"]

    public = [f"/api/players/{bot['player']}", f"/api/players/{bot['player']}/games",
              f"/api/games/{ids[0]}", "/api/leaderboard"]  # fmt: skip
    for path in public:
        text = (await asyncio.to_thread(server.get, path)).text.lower()
        assert not any(w in text for w in ("review", "spread", "cheat", "fairplay")), path

    cli = [sys.executable, "-m", "flyswat.cli", "fairplay", "--db", db]
    shown = subprocess.run(cli, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert shown.returncode == 0 and bot["player"] in shown.stdout
    assert any(w in shown.stdout for w in tells), shown.stdout
    cleared = subprocess.run([*cli, "--clear", bot["player"]], capture_output=True, text=True,
                             timeout=60, cwd=ROOT)  # fmt: skip
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    assert (
        "No player is under review"
        in subprocess.run(cli, capture_output=True, text=True, timeout=60, cwd=ROOT).stdout
    )
    await games_at(server, long_game, 1)
    assert [g["rated"] for g in await rated_games(server, bot)] == [True, False]


def test_the_operators_route_does_not_exist_without_a_secret(server: Process) -> None:
    """No ``--operator-secret`` (nor FLYSWAT_OPERATOR_SECRET): nobody reads the listing."""
    reply = server.get("/api/operator/fairplay")
    assert reply.status_code == 404
