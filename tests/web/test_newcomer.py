"""What a new player hits (issue 14's defects), each in a real browser: joining by a pasted
link, long names, the open tables, names of spaces and error words, the default table, the
table's small parts, and the replay's words; plus the create form's time to reveal, the
colour marks, and a seat taken over by another tab (protocol 2's close code 4409)."""

from __future__ import annotations

import contextlib
import json
import random
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, WebSocketRoute, expect

from flyswat import Game, IllegalActionError, Rules
from flyswat.cards import DECK, Card
from flyswat.record import to_record

from .pagewatch import WATCH_JS

WEB = Path(__file__).resolve().parents[2] / "src" / "flyswat" / "web"
PHONE: dict[str, Any] = {"viewport": {"width": 390, "height": 844}, "has_touch": True}
DESKTOP: dict[str, Any] = {"viewport": {"width": 1280, "height": 800}}


def strings(lang: str) -> dict[str, str]:
    data: dict[str, str] = json.loads((WEB / "i18n" / f"{lang}.json").read_text("utf-8"))
    return data


def _api(server: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    req = urllib.request.Request(
        server + path,
        data=None if body is None else json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        method="GET" if body is None else "POST",
    )
    with urllib.request.urlopen(req, timeout=5) as r:
        data: dict[str, Any] = json.loads(r.read())
    return data


def _box(page: Page, selector: str) -> dict[str, float]:
    """The element's box once it is laid out: the end screen is drawn again when the game's
    ratings arrive, and an element caught between two drawings has no box."""
    element = page.locator(selector).first
    for _ in range(50):
        box = element.bounding_box()
        if box is not None:
            return box
        page.wait_for_timeout(100)
    raise AssertionError(f"{selector} is not laid out")


def _inside(inner: dict[str, float], outer: dict[str, float], margin: float = 0) -> bool:
    return (
        inner["x"] >= outer["x"] + margin - 0.5
        and inner["y"] >= outer["y"] - 0.5
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] - margin + 0.5
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 0.5
    )


# -- 1. a pasted link, a code in any case, a table that does not exist ----------------------


def test_a_pasted_link_or_a_code_in_any_case_opens_the_table(server: str, browser: Browser) -> None:
    code = _api(server, "/api/tables", {"name": "Ana", "seats": 2})["code"]
    ctx = browser.new_context(locale="en")
    page = ctx.new_page()
    s = strings("en")
    for pasted in (f"{server}/?table={code}", f"?table={code.lower()}", f" {code.lower()} "):
        page.goto(server + "/")
        page.fill("#join input[name=code]", pasted)
        assert page.input_value("#join input[name=code]") == pasted  # nothing cut off
        page.click("#join button")
        expect(page.locator(".lobby h1")).to_have_text(s["lobby.title"].format(code=code))
    page.goto(server + "/")
    page.fill("#join input[name=code]", f"{server}/?table=ZZZZ22")
    page.click("#join button")
    expect(page.locator("#join-error")).to_have_text(s["home.noSuchTable"].format(code="ZZZZ22"))
    expect(page.locator("form#create")).to_be_visible()
    page.fill("#join input[name=code]", "http://127.0")
    page.click("#join button")
    expect(page.locator("#join-error")).to_have_text(s["home.notACode"])
    # A link to a table that does not exist says so, in any case, instead of connecting forever.
    page.goto(server + "/?table=b7eawb")
    expect(page.locator(".error-text")).to_have_text(s["error.not_found"])
    ctx.close()


# -- 2. long names ---------------------------------------------------------------------------


def _quick_game(page: Page, server: str, name: str) -> None:
    """A table of one player and one bot with 6 cards, where the server reveals for the player
    after 0.2 s: the game plays itself to the end."""
    page.goto(server + "/")
    page.fill("input[name=name]", name)
    page.select_option("select[name=seats]", "2")
    page.fill("input[name=window]", "0.5")
    page.fill("input[name=turn]", "0.2")
    page.click("details summary")
    page.fill("input[name=remove]", "106")
    page.click("form#create button[type=submit]")
    page.click("[data-action=start]")
    expect(page.locator(".end table.scores")).to_be_visible(timeout=30_000)


@pytest.mark.parametrize(
    ("size", "name"), [(PHONE, "maximilian.mustermann@gmail.com"), (DESKTOP, "W" * 32)]
)
def test_a_long_name_leaves_every_score_in_sight_on_the_end_screen(
    server: str, browser: Browser, size: dict[str, Any], name: str, artifacts: Path
) -> None:
    ctx = browser.new_context(locale="en", **size)
    page = ctx.new_page()
    _quick_game(page, server, name)
    dialog = _box(page, ".end .card-box")
    for seat in (0, 1):
        for cell in ("points", "flies"):
            sel = f".end tr[data-seat='{seat}'] .{cell}"
            expect(page.locator(sel)).to_be_visible()
            assert _inside(_box(page, sel), dialog), (sel, _box(page, sel), dialog)
    expect(page.locator(".end tr[data-seat='0']")).to_contain_text(name)
    wide = size["viewport"]["width"]
    page.screenshot(path=str(artifacts / f"end-long-name-{wide}.png"))
    # "See the table" and "New game" share a row; the replay has its own.
    a, b = _box(page, "[data-action=close-end]"), _box(page, ".end [data-action=home]")
    assert abs(a["y"] - b["y"]) < 2, (a, b)
    ctx.close()


def _record(names: list[str], seed: int = 3) -> dict[str, Any]:
    rnd = random.Random(seed)
    seats = len(names)
    game = Game.new(Rules(seats=seats, remove=40), seed=f"long-{seed}", start=0)
    while not game.over:
        game.reveal()
        if game.round is None:
            continue
        for _ in range(rnd.randint(1, 3 * seats)):
            if game.centre:
                with contextlib.suppress(IllegalActionError):
                    game.slap(rnd.randrange(seats), rnd.choice(game.centre), rnd.randint(150, 900))
        game.close_round()
    kinds = [{"name": n, "kind": "human"} for n in names]
    return to_record(game, kinds, id=f"long{seed}", started_at="2026-12-01T00:00:00Z")


@pytest.mark.parametrize("size", [PHONE, DESKTOP])
def test_long_names_never_cut_the_trigger_caption_nor_cover_the_cards(
    server: str, browser: Browser, tmp_path: Path, size: dict[str, Any]
) -> None:
    names = ["maximilian.mustermann@gmail.com", "W" * 32, "Ana"]
    record = _record(names)
    path = tmp_path / "long.json"
    path.write_text(json.dumps(record))
    ctx = browser.new_context(locale="en", **size)
    page = ctx.new_page()
    page.goto(server + "/?replay")
    page.set_input_files("#record-file", str(path))
    expect(page.locator(".replay-note")).to_contain_text("agrees with the rules")
    turns = record["turns"]
    k = next(
        k
        for k, t in enumerate(turns)
        if t.get("round", {}).get("won") and t["seat"] < 2 and t["round"]["won"][0]["seat"] < 2
    )
    frame = 1 + k + sum(1 for t in turns[:k] if "round" in t)
    page.locator("#scrub").fill(str(frame))
    felt = _box(page, ".felt")
    for part in (".trigger-text strong", ".trigger-text span"):
        assert _inside(_box(page, part), felt), (part, _box(page, part), felt)
    page.keyboard.press("ArrowRight")
    expect(page.locator(".fly-card.won").first).to_be_visible()
    for card in page.locator(".fly-card.won").all():
        box, label = card.bounding_box(), card.locator(".outcome").bounding_box()
        assert box and label and label["height"] <= 0.45 * box["height"], (box, label)
    ctx.close()


# -- 3. the open tables ----------------------------------------------------------------------


def test_the_open_tables_list_only_joinable_lobbies_in_the_players_language_kept_fresh(
    server: str, browser: Browser
) -> None:
    watcher = browser.new_context(locale="de")
    home = watcher.new_page()
    home.goto(server + "/")
    de = strings("de")
    expect(home.locator("h1")).to_have_text(de["home.title"])
    # A table of bots only (nobody can join), started: a game in progress is not offered.
    full = _api(server, "/api/tables", {"name": "Bea", "seats": 2, "bots": [{"seat": 1}]})
    _api(server, f"/api/tables/{full['code']}/start", {"token": full["token"]})
    # A host who waits in the lobby for a friend: offered, live, without a reload.
    host_ctx = browser.new_context(locale="en")
    host = host_ctx.new_page()
    host.goto(server + "/")
    host.fill("input[name=name]", "Carla")
    host.select_option("select[name=seats]", "2")
    host.select_option("select[name=seat1]", "human")
    host.click("form#create button[type=submit]")
    expect(host.locator("#share-link")).to_be_visible()
    code = host.input_value("#share-link").split("table=")[1]
    row = home.locator(f"#open-tables li[data-code='{code}']")
    expect(row).to_contain_text(de["home.freeSeatsOne"])
    expect(row).to_contain_text("Carla")
    expect(home.locator(f"#open-tables li[data-code='{full['code']}']")).to_have_count(0)
    # A language switch redraws the list at once.
    home.select_option("#lang", "pt")
    expect(row).to_contain_text(strings("pt")["home.freeSeatsOne"])
    # The host leaves: an abandoned lobby goes from the list.
    host_ctx.close()
    expect(row).to_have_count(0)
    # Away from the home page, the list is not asked for any more.
    asked: list[str] = []
    home.on("request", lambda r: asked.append(r.url) if r.url.endswith("/api/tables") else None)
    home.click("nav [data-nav=learn]")
    expect(home.locator(".rules h1")).to_be_visible()
    home.wait_for_timeout(3500)  # an absence: one poll interval (3 s) and a little
    assert asked == []
    watcher.close()


# -- 4. names of spaces, and words for every error ------------------------------------------


def test_a_name_of_only_spaces_is_refused_in_the_players_words(
    server: str, browser: Browser
) -> None:
    ctx = browser.new_context(locale="es-ES")
    page = ctx.new_page()
    page.goto(server + "/")
    page.fill("input[name=name]", "   ")
    page.click("form#create button[type=submit]")
    message = page.eval_on_selector("input[name=name]", "el => el.validationMessage")
    assert message == strings("es")["error.bad_name"]
    expect(page.locator("form#create")).to_be_visible()
    assert "table=" not in page.url
    # Taking a seat by a link: the same words.
    code = _api(server, "/api/tables", {"name": "Ana", "seats": 2})["code"]
    page.goto(f"{server}/?table={code}")
    page.fill("form#join-seat input[name=name]", "   ")
    page.click("form#join-seat button")
    expect(page.locator("#toast")).to_have_text(strings("es")["error.bad_name"])
    ctx.close()


# -- 5. the default table can be played alone ------------------------------------------------


def test_the_default_table_can_be_started_alone_and_a_free_seat_is_named(
    server: str, browser: Browser
) -> None:
    ctx = browser.new_context(locale="en")
    page = ctx.new_page()
    s = strings("en")
    page.goto(server + "/")
    expect(page.locator("#seats-note")).to_have_text(s["home.allBots"])
    page.fill("input[name=name]", "Dora")
    page.click("form#create button[type=submit]")
    expect(page.locator("[data-action=start]")).to_be_enabled()
    expect(page.locator(".lobby-status")).to_have_text(s["lobby.canStart"])
    page.goto(server + "/")
    page.fill("input[name=name]", "Dora")
    page.select_option("select[name=seat2]", "human")
    expect(page.locator("#seats-note")).to_have_text(s["home.byLinkOne"])
    page.click("form#create button[type=submit]")
    expect(page.locator("[data-action=start]")).to_be_disabled()
    seat = s["seat.empty"].format(n=3)
    expect(page.locator(".lobby-status")).to_have_text(s["lobby.waitingFor"].format(seats=seat))
    ctx.close()


def test_the_create_form_offers_the_time_to_reveal(server: str, browser: Browser) -> None:
    ctx = browser.new_context(locale="en")
    page = ctx.new_page()
    page.goto(server + "/")
    page.fill("input[name=name]", "Eva")
    page.fill("input[name=turn]", "7.5")
    page.click("form#create button[type=submit]")
    expect(page.locator(".lobby p.muted").first).to_contain_text("7.5 s to reveal")
    code = page.input_value("#share-link").split("table=")[1]
    assert _api(server, f"/api/tables/{code}")["options"]["turn_timeout_ms"] == 7500
    ctx.close()


# -- 6. the table's small parts --------------------------------------------------------------


def _to_lesson_two(page: Page) -> None:
    page.goto(page.url.split("?")[0] + "?practice")
    page.locator("button.reveal").click()
    expect(page.locator(".coach")).to_have_attribute("data-phase", "yourTurn")
    page.locator("button.reveal").click()
    page.locator("[data-coach=next]").click()
    expect(page.locator(".coach")).to_have_attribute("data-phase", "go")


def test_hands_laid_are_big_enough_and_inside_their_panel_and_the_countdown_inside_the_frame(
    server: str, browser: Browser, artifacts: Path
) -> None:
    ctx = browser.new_context(locale="en", **PHONE)
    page = ctx.new_page()
    page.goto(server + "/")
    _to_lesson_two(page)
    hand = ".seat[data-seat='1'] .laid .hand"
    expect(page.locator(hand)).to_have_count(1)  # the slow bot laid a hand
    box = _box(page, hand)
    assert box["height"] >= 20, box
    assert _inside(box, _box(page, ".seat[data-seat='1']")), box
    expect(page.locator(".countdown")).to_be_visible()
    assert _inside(_box(page, ".countdown"), _box(page, ".table.round-open"), margin=6)
    page.screenshot(path=str(artifacts / "round-phone.png"))
    ctx.close()


def test_after_the_end_no_key_hints_remain_on_the_centre_cards(
    server: str, browser: Browser
) -> None:
    ctx = browser.new_context(locale="en", **DESKTOP)
    page = ctx.new_page()
    page.goto(server + "/?practice=6")  # the last lesson: one card left to reveal
    expect(page.locator(".coach")).to_have_attribute("data-lesson", "c6")
    expect(page.locator(".fly-card .key")).to_have_count(2)  # keys while the game goes on
    page.keyboard.press("Space")
    expect(page.locator(".end")).to_be_visible()
    page.click("[data-action=close-end]")
    expect(page.locator(".fly-card")).to_have_count(3)
    expect(page.locator(".fly-card .key")).to_have_count(0)
    ctx.close()


def test_the_own_ready_tag_stays_beside_the_name(server: str, browser: Browser) -> None:
    ctx = browser.new_context(locale="de", **PHONE)
    page = ctx.new_page()
    page.goto(server + "/")
    page.fill("input[name=name]", "Maximilian Mustermann")
    page.click("form#create button[type=submit]")
    who, tag = ".seat-list li[data-seat='0'] .who", ".seat-list li[data-seat='0'] .pill.ready"
    expect(page.locator(tag)).to_be_visible()
    name, pill = _box(page, who), _box(page, tag)
    # Beside the name when there is room, else right under it (the name keeps its words,
    # issue 22): never apart from it, never over it.
    middle = pill["y"] + pill["height"] / 2
    assert name["y"] <= middle <= name["y"] + name["height"] + pill["height"], (name, pill)
    assert pill["x"] > name["x"]
    assert pill["y"] >= name["y"] + name["height"] - 0.5 or pill["x"] >= name["x"] + name["width"]
    ctx.close()


def test_a_tables_message_does_not_follow_the_player_home(server: str, browser: Browser) -> None:
    ctx = browser.new_context(locale="en")
    page = ctx.new_page()
    page.goto(server + "/?practice=2")
    expect(page.locator(".coach")).to_have_attribute("data-phase", "go")  # a round is open
    page.click(".fly-card[data-card='R4-1']")
    page.wait_for_timeout(500)  # not a double tap (model.DOUBLE_TAP_MS), which is let be
    page.click(".fly-card[data-card='R4-1']")  # a second hand on one fly: the table says no
    toast = page.locator("#toast")
    expect(toast).to_have_text(strings("en")["error.same_card"])
    page.evaluate("window.__shown = performance.now()")
    page.click(".brand")
    expect(page.locator("form#create")).to_be_visible()
    hidden, elapsed = page.evaluate(
        "[document.getElementById('toast').hidden, performance.now() - window.__shown]"
    )
    # The message would go by itself after 3.5 s: before that, only leaving can hide it.
    assert hidden or elapsed > 3400, elapsed
    ctx.close()


def test_the_replay_says_no_hand_was_lifted_when_none_was_laid(
    server: str, browser: Browser, tmp_path: Path
) -> None:
    """R15: a swatter on an empty centre; and a round where nobody slapped."""
    cards = list(DECK)
    swatter = Card.parse("S-1")
    cards.remove(swatter)
    piles: list[list[Card]] = [[swatter, *cards[0::2]], cards[1::2]]
    game = Game(Rules(seats=2), piles)
    while not game.over:
        game.play_turn()
    seats = [{"name": "Ana", "kind": "human"}, {"name": "Bruno", "kind": "human"}]
    record = to_record(game, seats, id="empty", started_at="2026-12-01T00:00:00Z")
    path = tmp_path / "empty.json"
    path.write_text(json.dumps(record))
    ctx = browser.new_context(locale="en")
    page = ctx.new_page()
    page.goto(server + "/?replay")
    page.set_input_files("#record-file", str(path))
    s = strings("en")
    page.locator("#scrub").fill("2")
    expect(page.locator("#replay-text")).to_have_text(s["replay.resolvedEmpty"].format(n=1))
    k = next(k for k, t in enumerate(record["turns"]) if k and "round" in t)
    frame = 1 + k + sum(1 for t in record["turns"][:k] if "round" in t) + 1
    page.locator("#scrub").fill(str(frame))
    expect(page.locator("#replay-text")).to_have_text(s["replay.resolvedNone"].format(n=k + 1))
    ctx.close()


# -- the rulebook's words and marks ----------------------------------------------------------


def test_cards_mark_colours_by_shape_with_no_english_letter(server: str, browser: Browser) -> None:
    ctx = browser.new_context(locale="de")
    page = ctx.new_page()
    page.goto(server + "/")
    expect(page.locator(".cards-fan svg")).to_have_count(5)
    texts = page.eval_on_selector_all(".cards-fan svg text", "els => els.map(e => e.textContent)")
    assert texts and all(re.fullmatch(r"\d", t) for t in texts), texts
    expect(page.locator(".legend svg text")).to_have_count(0)
    expect(page.locator(".legend svg path")).to_have_count(12)  # each colour's own shape
    ctx.close()


def test_bots_and_keys_are_named_in_the_players_language(server: str, browser: Browser) -> None:
    ctx = browser.new_context(locale="vi")
    page = ctx.new_page()
    vi = strings("vi")
    page.goto(server + "/")
    page.fill("input[name=name]", "Lan")
    page.select_option("select[name=seats]", "2")
    page.click("form#create button[type=submit]")
    expect(page.locator(".seat-list li[data-seat='1'] .who")).to_have_text(
        vi["seat.botName"].format(n=2)
    )
    page.goto(server + "/?practice")
    expect(page.locator("button.reveal kbd")).to_have_text(vi["key.space"])
    ctx.close()


# -- protocol 2: a seat opened in another tab ------------------------------------------------


def lobby_with_its_socket_in_hand(
    browser: Browser, server: str, locale: str, name: str
) -> tuple[Any, Page, list[WebSocketRoute]]:
    """A new table's lobby, every socket of the page routed through the test (so that the
    test can close one with the server's close codes)."""
    ctx = browser.new_context(locale=locale)
    page = ctx.new_page()
    routes: list[WebSocketRoute] = []

    def route(ws: WebSocketRoute) -> None:
        ws.connect_to_server()
        routes.append(ws)

    page.route_web_socket(re.compile(r"/ws/"), route)
    page.goto(server + "/")
    page.fill("input[name=name]", name)
    page.click("form#create button[type=submit]")
    expect(page.locator("[data-action=start]")).to_be_visible()
    return ctx, page, routes


def test_a_seat_taken_over_by_another_tab_stops_here_and_can_be_taken_back(
    server: str, browser: Browser
) -> None:
    ctx, page, routes = lobby_with_its_socket_in_hand(browser, server, "en", "Fia")
    n = len(routes)
    routes[-1].close(code=4409, reason="replaced")
    s = strings("en")
    expect(page.locator(".stopped .error-text")).to_have_text(s["table.replaced"])
    page.wait_for_timeout(1500)  # an absence: a reconnect would have come by now (300 ms)
    assert len(routes) == n
    expect(page.locator("#conn")).to_be_hidden()
    page.click("[data-action=take-back]")
    expect(page.locator("[data-action=start]")).to_be_visible()
    assert len(routes) == n + 1
    ctx.close()


def test_sounds_wait_for_the_pages_first_gesture(server: str, browser: Browser) -> None:
    """A spectator's page gets reveals without anybody touching it: silent until a click."""
    host = _api(
        server,
        "/api/tables",
        {"name": "Gil", "seats": 2, "bots": [{"seat": 1}], "turn_timeout_ms": 300},
    )
    _api(server, f"/api/tables/{host['code']}/start", {"token": host["token"]})
    ctx = browser.new_context(locale="en")
    ctx.add_init_script(WATCH_JS)
    page = ctx.new_page()
    page.goto(f"{server}/?table={host['code']}")
    expect(page.locator(".watching")).to_be_visible()
    page.wait_for_function("document.querySelectorAll('.fly-card, .trigger-card').length > 0")
    assert page.evaluate("[window.__audio, window.__sounds.length]") == [0, 0]
    page.mouse.click(5, 300)
    page.wait_for_function("window.__sounds.length > 0", timeout=30_000)
    assert page.evaluate("window.__audio") == 1
    ctx.close()


def test_two_tabs_on_one_seat_never_fight_over_it(server: str, browser: Browser) -> None:
    """Protocol 2: a seat has one live socket. The tab that opens it last plays; the other
    says where the seat went and stays quiet until the player takes the seat back there."""
    ctx = browser.new_context(locale="en")
    first = ctx.new_page()
    first.goto(server + "/")
    first.fill("input[name=name]", "Hana")
    first.click("form#create button[type=submit]")
    expect(first.locator("[data-action=start]")).to_be_visible()
    second = ctx.new_page()  # the same browser: the same saved seat
    second.goto(first.url)
    expect(second.locator("[data-action=start]")).to_be_visible()
    replaced = strings("en")["table.replaced"]
    expect(first.locator(".stopped .error-text")).to_have_text(replaced)
    expect(second.locator("[data-action=start]")).to_be_visible()
    first.click("[data-action=take-back]")
    expect(first.locator("[data-action=start]")).to_be_visible()
    expect(second.locator(".stopped .error-text")).to_have_text(replaced)
    ctx.close()


def test_an_expired_lobby_says_so_and_stops_connecting(server: str, browser: Browser) -> None:
    """Protocol 2: a lobby left unused closes (4410); the page says so instead of retrying."""
    ctx, page, routes = lobby_with_its_socket_in_hand(browser, server, "pt-PT", "Ines")
    n = len(routes)
    routes[-1].close(code=4410, reason="expired")
    expect(page.locator(".stopped .error-text")).to_have_text(strings("pt")["error.expired"])
    page.wait_for_timeout(1500)  # an absence: a reconnect would have come by now (300 ms)
    assert len(routes) == n
    page.click(".stopped [data-action=home]")
    expect(page.locator("form#create")).to_be_visible()
    ctx.close()
