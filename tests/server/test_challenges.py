"""Challenges through a real server: a private table with its free seat kept for the player
challenged, who accepts or declines; stored, bounded; what an adversary tries (a wrong
secret, a player who does not exist, oneself, a bot account, someone else's challenge, the
kept seat taken by a stranger, a flood of challenges) is refused and changes nothing."""

from __future__ import annotations

from typing import Any

from flyswat.server.challenges_store import MAX_OPEN

from .conftest import Live, serve
from .test_players import auth, register


def _challenge(live: Live, who: dict[str, Any], opponent: str) -> Any:
    return live.post("/api/challenges", {**auth(who), "opponent": opponent})


def _mine(live: Live, who: dict[str, Any]) -> dict[str, Any]:
    reply = live.post("/api/challenges/mine", auth(who))
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def _refused(reply: Any) -> tuple[int, str]:
    return reply.status_code, reply.json()["error"]


def test_a_challenge_keeps_a_seat_for_the_player_who_accepts_it(live: Live) -> None:
    ana, bruno, carla = (register(live, n) for n in ("Ana", "Bruno", "Carla"))
    made = _challenge(live, ana, bruno["player"])
    assert made.status_code == 201, made.text
    challenge, seat = made.json()["challenge"], made.json()["seat"]
    assert challenge["state"] == "open" and challenge["opponent"]["name"] == "Bruno"
    code = seat["code"]
    table = live.get(f"/api/tables/{code}").json()
    assert not table["options"]["public"] and table["options"]["reserved"] == bruno["player"]
    assert _challenge(live, ana, bruno["player"]).json()["challenge"]["id"] == challenge["id"]
    incoming = _mine(live, bruno)["incoming"]
    assert [c["id"] for c in incoming] == [challenge["id"]] and incoming[0]["code"] == code
    assert _mine(live, carla)["incoming"] == []
    stranger = live.post(f"/api/tables/{code}/join", {"name": "Zed"})
    assert _refused(stranger) == (403, "seat_reserved")
    theirs = live.post(f"/api/challenges/{challenge['id']}/accept", auth(carla))
    assert _refused(theirs) == (404, "no_challenge")  # not Carla's to accept
    accepted = live.post(f"/api/challenges/{challenge['id']}/accept", auth(bruno))
    assert accepted.status_code == 201 and accepted.json()["code"] == code
    assert accepted.json()["seat"] == 1
    assert _mine(live, ana)["outgoing"][0]["state"] == "accepted"
    assert _mine(live, bruno)["incoming"] == []
    again = live.post(f"/api/challenges/{challenge['id']}/decline", auth(bruno))
    assert _refused(again) == (404, "no_challenge")


def test_a_declined_challenge_is_seen_declined_by_the_challenger(live: Live) -> None:
    ana, bruno = register(live, "Ana"), register(live, "Bruno")
    cid = _challenge(live, ana, bruno["player"]).json()["challenge"]["id"]
    declined = live.post(f"/api/challenges/{cid}/decline", auth(bruno))
    assert declined.status_code == 200 and declined.json()["state"] == "declined"
    assert [c["state"] for c in _mine(live, ana)["outgoing"]] == ["declined"]
    assert _refused(live.post(f"/api/challenges/{cid}/accept", auth(bruno))) == (
        404, "no_challenge")  # fmt: skip


def test_what_cannot_be_challenged_and_who_cannot_challenge(live: Live) -> None:
    ana, bruno = register(live, "Ana"), register(live, "Bruno")
    wrong = live.post("/api/challenges", {"player": ana["player"], "secret": "x" * 32,
                                          "opponent": bruno["player"]})  # fmt: skip
    assert _refused(wrong) == (403, "bad_secret")
    assert _refused(_challenge(live, ana, "N0b0dyH3re1234")) == (404, "no_player")
    assert _refused(_challenge(live, ana, "../etc")) == (400, "malformed")
    assert _refused(_challenge(live, ana, ana["player"])) == (409, "cannot_challenge")
    bot = live.post("/api/bots", {**auth(ana), "name": "Agent Smith"}).json()
    assert _refused(_challenge(live, bruno, bot["player"])) == (409, "cannot_challenge")
    assert _refused(_challenge(live, bot, bruno["player"])) == (409, "cannot_challenge")
    assert _mine(live, bruno)["incoming"] == [] and _mine(live, ana)["outgoing"] == []


def test_a_player_has_a_bounded_number_of_open_challenges(live: Live) -> None:
    ana = register(live, "Ana")
    others = [register(live, f"Pl{i}") for i in range(MAX_OPEN + 1)]
    for who in others[:MAX_OPEN]:
        assert _challenge(live, ana, who["player"]).status_code == 201
    assert _refused(_challenge(live, ana, others[-1]["player"])) == (429, "too_many_challenges")
    assert len(_mine(live, ana)["outgoing"]) == MAX_OPEN


def test_an_open_challenge_survives_a_restart(db_url: str) -> None:
    with serve(db_url) as live:
        ana, bruno = register(live, "Ana"), register(live, "Bruno")
        cid = _challenge(live, ana, bruno["player"]).json()["challenge"]["id"]
    with serve(db_url) as live:
        assert [c["id"] for c in _mine(live, bruno)["incoming"]] == [cid]
        accepted = live.post(f"/api/challenges/{cid}/accept", auth(bruno))
        assert accepted.status_code == 201, accepted.text


def test_a_table_kept_for_a_player_who_does_not_exist_is_not_made(live: Live) -> None:
    """``reserved`` names a player, or no table is made: one kept for nobody could never
    be filled."""
    bruno = register(live, "Bruno")
    before = len(live.get("/api/tables").json()["tables"])
    for nobody in ("nonexistentplayerid", "x", "a" * 200):
        reply = live.post("/api/tables", {"name": "Ana", "public": True, "reserved": nobody})
        assert _refused(reply) in ((404, "no_player"), (400, "malformed")), reply.text
    assert len(live.get("/api/tables").json()["tables"]) == before
    kept = live.post("/api/tables", {"name": "Ana", "reserved": bruno["player"]})
    assert kept.status_code == 201, kept.text
