"""The replay viewer with a record file (docs/RECORD.md) opened from disk: it re-plays the
rules in the browser, steps reveal by reveal, shows each round's hands in stacking order
(R17), and says so when a record does not agree with the rules."""

from __future__ import annotations

import contextlib
import json
import random
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, expect

from flyswat import Game, IllegalActionError, Rules
from flyswat.record import to_record


def _record(seats: int = 3, remove: int = 70, seed: int = 7, start: int = 1) -> dict[str, Any]:
    """A game where random hands (several on one card, wrong ones too) are laid every round."""
    rnd = random.Random(seed)
    game = Game.new(Rules(seats=seats, remove=remove), seed=f"replay-{seed}", start=start)
    while not game.over:
        game.reveal()
        if game.round is None:
            continue
        for _ in range(rnd.randint(0, 3 * seats)):
            if game.centre:
                with contextlib.suppress(IllegalActionError):
                    game.slap(rnd.randrange(seats), rnd.choice(game.centre), rnd.randint(150, 900))
        game.close_round()
    names = [{"name": "Ana", "kind": "human"}, {"name": "Bruno", "kind": "human"}]
    names += [{"name": f"Bot {i + 1}", "kind": "bot", "level": "hard"} for i in range(2, seats)]
    return to_record(game, names, id=f"replay{seed}", started_at="2026-11-29T12:00:00Z")


def test_the_browsers_rules_agree_with_the_engine_on_every_record(
    server: str, browser: Browser
) -> None:
    """The replay viewer's own re-play of the rules (web/js/engine.js) finds every record the
    Python engine wrote valid, with the same result, for 2 to 8 seats (R4-R24)."""
    records = [
        _record(seats, remove, seed, seed % seats)
        for seed, (seats, remove) in enumerate(
            [(2, 0), (3, 30), (4, 0), (4, 90), (5, 20), (6, 0), (7, 50), (8, 0)]
        )
    ]
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(server + "/?replay")
    got = page.evaluate(
        """async (records) => {
            const { replay } = await import("/js/engine.js");
            return records.map((r) => {
                const g = replay(r);
                return { problems: g.problems, result: g.result, frames: g.frames.length };
            });
        }""",
        records,
    )
    for record, g in zip(records, got, strict=True):
        assert g["problems"] == [], record["id"]
        assert g["result"] == record["result"]
        rounds = sum(1 for t in record["turns"] if "round" in t)
        assert g["frames"] == 1 + len(record["turns"]) + rounds
    ctx.close()


def test_the_replay_viewer_steps_through_a_record_file(
    server: str, browser: Browser, tmp_path: Path, artifacts: Path
) -> None:
    record = _record()
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    ctx = browser.new_context(viewport={"width": 1200, "height": 800}, locale="en")
    page = ctx.new_page()
    page.goto(server + "/?replay")
    page.set_input_files("#record-file", str(path))
    expect(page.locator(".replay-note")).to_contain_text("agrees with the rules")
    expect(page.locator("#replay-text")).to_contain_text("The cards are dealt. Bruno starts.")

    first = record["turns"][0]
    page.click("[data-step=next]")
    expect(page.locator("#replay-text")).to_contain_text("Reveal 1: Bruno turns up")
    expect(page.locator(".seat[data-seat='1'] .count-draw")).to_have_text(
        str(len(record["deal"][1]) - 1)
    )
    if not first["card"].startswith("S-"):
        expect(page.locator(f".fly-card[data-card='{first['card']}']")).to_be_visible()

    # The first round with hands: every hand on its fly, the bottom one first (R17).
    k, turn = next((k, t) for k, t in enumerate(record["turns"]) if t.get("round", {}).get("slaps"))
    frame = 1 + k + sum(1 for t in record["turns"][:k] if "round" in t)
    page.locator("#scrub").fill(str(frame))
    expect(page.locator("#replay-text")).to_contain_text(f"Reveal {k + 1}:")
    expect(page.locator(".trigger-zone")).to_be_visible()
    page.keyboard.press("ArrowRight")
    expect(page.locator("#replay-text")).to_contain_text("hands are lifted")
    slaps = turn["round"]["slaps"]
    for card in {s["card"] for s in slaps}:
        seats = [str(s["seat"] + 1) for s in slaps if s["card"] == card]
        stack = page.locator(f".fly-card[data-card='{card}'] .hands-stack .hand text")
        expect(stack).to_have_text(seats)
    for w in turn["round"]["won"]:
        expect(page.locator(f".fly-card[data-card='{w['card']}']")).to_have_class("fly-card won")
    page.wait_for_timeout(500)
    page.screenshot(path=str(artifacts / "replay-round.png"))

    # Play runs by itself; End jumps to the result.
    page.click("[data-step=play]")
    page.wait_for_timeout(1200)
    page.click("[data-step=play]")
    page.keyboard.press("End")
    rows = page.locator(".final-overlay table.scores tbody tr")
    expect(rows).to_have_count(3)
    best = record["result"]["places"].index(1)
    expect(rows.first).to_contain_text(record["seats"][best]["name"])
    expect(rows.first).to_contain_text(str(record["result"]["points"][best]))
    ctx.close()


def test_the_replay_viewer_says_when_a_record_breaks_the_rules(
    server: str, browser: Browser, tmp_path: Path
) -> None:
    record = _record()
    k = next(k for k, t in enumerate(record["turns"]) if t.get("round", {}).get("won"))
    record["turns"][k]["round"]["won"] = []
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(record))
    junk = tmp_path / "junk.json"
    junk.write_text('{"hello": "world"}')
    ctx = browser.new_context(locale="en")
    page = ctx.new_page()
    page.goto(server + "/?replay")
    page.set_input_files("#record-file", str(junk))
    expect(page.locator("#replay-error")).to_have_text("This file is not a flyswat game record.")
    page.set_input_files("#record-file", str(bad))
    expect(page.locator(".replay-note.bad")).to_contain_text(f"from reveal {k + 1} on")
    ctx.close()


def test_on_a_phone_every_centre_card_fits_on_every_step(
    server: str, browser: Browser, tmp_path: Path, artifacts: Path
) -> None:
    """However long the caption (one line or two), the centre's cards all fit on the felt."""
    record = _record(seats=4, remove=40, seed=11)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    ctx = browser.new_context(
        viewport={"width": 390, "height": 844}, locale="en", is_mobile=True, has_touch=True
    )
    page = ctx.new_page()
    page.goto(server + "/?replay")
    page.set_input_files("#record-file", str(path))
    expect(page.locator(".replay-note")).to_contain_text("agrees with the rules")
    bad = page.evaluate(
        """async () => {
            const n = Number(document.querySelector('#scrub').max) + 1;
            const bad = [];
            for (let k = 0; k < n; k++) {
                const s = document.querySelector('#scrub');
                s.value = String(k);
                s.dispatchEvent(new Event('input', {bubbles: true}));
                await new Promise((r) => requestAnimationFrame(() => r()));
                const c = document.querySelector('.centre');
                if (!c) continue;
                const box = c.getBoundingClientRect();
                for (const card of c.querySelectorAll('.fly-card')) {
                    const r = card.getBoundingClientRect();
                    const out = r.bottom > box.bottom + 1 || r.right > box.right + 1;
                    if (out) bad.push([k, r.bottom, box.bottom]);
                }
            }
            return bad;
        }"""
    )
    page.screenshot(path=str(artifacts / "replay-phone.png"))
    ctx.close()
    assert bad == []


def test_a_fly_paid_back_and_a_wrong_hand_with_nothing_to_pay_are_said(
    server: str, browser: Browser, tmp_path: Path
) -> None:
    """R20: a fly won and paid back by the same player says so on the card; R19: a wrong hand
    whose player had no won fly to pay is named in the round's summary."""
    path = tmp_path / "game.json"
    path.write_text(json.dumps(_record(seats=4, remove=40, seed=1)))
    ctx = browser.new_context(viewport={"width": 1200, "height": 800}, locale="en")
    page = ctx.new_page()
    page.goto(server + "/?replay")
    page.set_input_files("#record-file", str(path))
    expect(page.locator(".replay-note")).to_contain_text("agrees with the rules")
    seen = page.evaluate(
        """() => {
            const n = Number(document.querySelector('#scrub').max) + 1;
            const seen = {paidBack: [], free: []};
            for (let k = 0; k < n; k++) {
                const s = document.querySelector('#scrub');
                s.value = String(k);
                s.dispatchEvent(new Event('input', {bubbles: true}));
                for (const e of document.querySelectorAll('.paid-back'))
                    seen.paidBack.push(e.textContent);
                for (const e of document.querySelectorAll('.ev-free'))
                    seen.free.push(e.textContent.trim());
            }
            return seen;
        }"""
    )
    ctx.close()
    assert seen["paidBack"] and all(x.endswith("wins, pays it back") for x in seen["paidBack"])
    assert seen["free"] and all(x.endswith(": wrong colour, nothing to pay") for x in seen["free"])


def _played(server: str, name: str, seats: int) -> str:
    """A short game of ``name`` (a new identity) against easy bots at a public table of
    ``seats`` seats, played to its end by the Python client on a thread; its game id."""
    import asyncio
    import threading

    from flyswat.client import Account, Client, GreedyAgent

    out: dict[str, Any] = {}

    async def game() -> None:
        account = Account.register(server, name)
        client = Client(server)
        seated = await client.create(
            account, seats=seats, bots=[{"seat": s, "level": "easy"} for s in range(1, seats)],
            remove=90, slap_window_ms=600, turn_timeout_ms=400,
        )  # fmt: skip
        await client.start(seated)
        agent = GreedyAgent()
        agent.reveal_ms = lambda view: 50.0  # its hands at a person's pace, its reveals quick
        out["over"] = await client.play(seated, agent, timeout=120)

    worker = threading.Thread(target=lambda: asyncio.run(game()))  # off Playwright's loop
    worker.start()
    worker.join(150)
    return str(out["over"]["table"]["game_id"])


def test_replays_lists_the_recent_public_games_filters_them_and_opens_one(
    server: str, browser: Browser, artifacts: Path
) -> None:
    """Replays lists the recent public games (issue: a newcomer found only a file picker):
    filtered by a player's name as typed, by seats, by rated; a game opens in the viewer;
    the file picker is still there. In Portuguese, on a phone."""
    tag = f"{random.randrange(36**4):04x}"
    two = _played(server, f"Zeca {tag}", 2)
    three = _played(server, f"Zeca {tag} Três", 3)
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, locale="pt")
    page = ctx.new_page()
    page.goto(server + "/?replay")
    box = page.locator(".public-games")
    expect(box.locator("h2")).to_have_text("Partidas públicas recentes")
    expect(box.locator("li").first).to_be_visible()
    box.get_by_label("Jogador").fill(f"zeca {tag}")
    expect(box.locator("li")).to_have_count(2)
    expect(box.locator("li").first).to_contain_text("3 lugares")  # the newest first
    box.get_by_label("Lugares").select_option("2")
    expect(box.locator("li")).to_have_count(1)
    expect(box.locator("li")).to_contain_text(f"Zeca {tag}")
    box.get_by_label("Classificação").select_option("true")  # short games: none is rated
    expect(box.locator(".none")).to_be_visible()
    expect(box.locator("li")).to_have_count(0)
    box.get_by_label("Classificação").select_option("")
    expect(box.locator("li")).to_have_count(1)
    page.screenshot(path=str(artifacts / "replays-public.png"))
    box.locator("li a").first.click()
    expect(page.locator(".replay-note")).to_contain_text(two)
    expect(page.locator("#replay-text")).to_be_visible()
    page.go_back()
    expect(page.locator("#record-file")).to_be_attached()  # a record file still opens
    assert three != two
    ctx.close()
