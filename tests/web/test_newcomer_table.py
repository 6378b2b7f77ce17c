"""What a first-time player meets (issue 22's defects), each in a real browser against a real
server: the other device's code box, lobby names, Play now alone, the phone end screen, the
practice game's end, the replays page, ratings explained, the header under the end screen,
leaving a live game, and the smaller ones (profile dates and headings, a profile without an
identity, laid hands over the points, German words for replays)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from .conftest import serve
from .table_state import look
from .test_newcomer import PHONE, _api, _box, _inside, strings
from .test_play import WATCH_CONN_JS

DESK = {"viewport": {"width": 1366, "height": 768}}

#: How many lines an element's text takes (the distinct tops of its text's boxes).
LINES_JS = """(el) => { const r = document.createRange(); r.selectNodeContents(el);
  const rects = [...r.getClientRects()].filter((x) => x.width > 0);
  return new Set(rects.map((x) => Math.round(x.top))).size; }"""

#: The element at the middle of another's box is that one or inside it (nothing covers it).
ON_TOP_JS = """(el) => { const b = el.getBoundingClientRect();
  const hit = document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2);
  return !!hit && (hit === el || el.contains(hit)); }"""


def on_top(page: Page, selector: str) -> bool:
    """:data:`ON_TOP_JS` for the element ``selector`` finds, found and judged in one step in
    the page: a live table draws itself again at every reveal, and an element found in one
    step and judged in the next may be gone by then (no box: whatever is at the page's corner
    seemed to cover it)."""
    found: bool = page.evaluate(
        f"(sel) => {{ const el = document.querySelector(sel); return !!el && ({ON_TOP_JS})(el); }}",
        selector,
    )
    return found


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of this module's own (its tables and identities do not crowd the others')."""
    with serve(tmp_path_factory.mktemp("own"), "--exempt", "127.0.0.1") as url:
        yield url


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"]) > 1
        and min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"]) > 1
    )


def _context(browser: Browser, lang: str, size: dict[str, Any], practice: str | None = "skipped"):  # type: ignore[no-untyped-def]
    ctx = browser.new_context(locale=lang, **size)
    init = f"localStorage.setItem('flyswat.lang', {json.dumps(lang)});"
    if practice:
        init += f"localStorage.setItem('flyswat.practice', {json.dumps(json.dumps(practice))});"
    ctx.add_init_script(init)
    return ctx


def _create(page: Page, server: str, name: str, seats: int, humans: int = 0, turn: float = 0.2,
            remove: int = 106) -> None:  # fmt: skip
    """A table from the home page's form: ``seats`` seats, the first ``humans`` others free for
    friends, bots in the rest; the server reveals for an absent player after ``turn`` s."""
    page.goto(server + "/")
    page.fill("form#create input[name=name]", name)
    page.select_option("select[name=seats]", str(seats))
    for i in range(1, 1 + humans):
        page.select_option(f"select[name=seat{i}]", "human")
    page.fill("input[name=window]", "0.5")
    page.fill("input[name=turn]", str(turn))
    page.click("details summary")
    page.fill("input[name=remove]", str(remove))
    page.click("form#create button[type=submit]")
    expect(page.locator(".lobby")).to_be_visible()


def _practice_round(own: str, browser: Browser, size: dict[str, Any]) -> tuple[Any, Page]:
    """A new context of ``size`` on the practice's second lesson, its round open (R4-1 among
    its flies): the context and its page."""
    ctx = _context(browser, "en", size)
    page = ctx.new_page()
    page.goto(own + "/?practice=2")
    expect(page.locator(".table.round-open")).to_be_visible()
    return ctx, page


def _quick_game(page: Page, server: str, name: str) -> None:
    """A game of one player and one bot over 6 cards that plays itself to the end screen."""
    _create(page, server, name, 2)
    page.click("[data-action=start]")
    expect(page.locator(".end table.scores")).to_be_visible(timeout=30_000)
    expect(page.locator(".end tr[data-seat='0'] .delta")).to_be_visible()


def _rated_game(page: Page, server: str, name: str) -> None:
    """A game of one player and one bot that is rated (docs/PLAYERS.md, *What a rated game
    is*): 42 cards, so at least 28 reveals, the player revealing on their own turns (Space)
    rather than leaving them to the turn timer; to the end screen."""
    _create(page, server, name, 2, turn=10, remove=70)
    page.click("[data-action=start]")
    deadline = time.monotonic() + 150
    while not (st := look(page))["end"]:
        assert time.monotonic() < deadline, "the game did not end"
        if st["reveal"]:
            page.keyboard.press("Space")
        time.sleep(0.1)
    expect(page.locator(".end table.scores")).to_be_visible()
    expect(page.locator(".end tr[data-seat='0'] .delta")).to_be_visible()


# -- 1. the other device's code box ----------------------------------------------------------


def test_the_other_devices_code_box_stays_hidden_until_asked_and_the_table_code_box_is_in_sight(
    own: str, browser: Browser
) -> None:
    ctx = _context(browser, "en", PHONE, practice=None)
    page = ctx.new_page()
    page.goto(own + "/")
    expect(page.locator("#play-now-form button")).to_be_visible()
    expect(page.locator("#claim-form")).to_be_hidden()
    join = _box(page, "#join input[name=code]")
    assert join["y"] + join["height"] <= 844, join  # the real code box is above the fold
    page.click("[data-show-claim]")
    expect(page.locator("#claim-form input[name=code]")).to_be_visible()
    ctx.close()


# -- 2. lobby names ---------------------------------------------------------------------------


@pytest.mark.parametrize("size", [PHONE, DESK])
def test_lobby_names_keep_their_words_beside_the_pills_and_the_hosts_buttons(
    own: str, browser: Browser, size: dict[str, Any], artifacts: Path
) -> None:
    ctx = _context(browser, "en", size)
    page = ctx.new_page()
    _create(page, own, "Friendly Fritz", 4, humans=2)
    code = page.locator(".lobby h1").inner_text().split()[-1]
    _api(own, f"/api/tables/{code}/join", {"name": "Seat Two Person"})
    expect(page.locator(".seat-list li[data-seat='1'] [data-action=kick]")).to_be_visible()
    page.screenshot(path=str(artifacts / f"lobby-names-{size['viewport']['width']}.png"))
    for li in page.locator(".seat-list li").all():
        who = li.locator(".who")
        lines = who.evaluate(LINES_JS)
        assert lines <= 2, (who.inner_text(), lines)
        assert who.bounding_box()["width"] >= 90, who.inner_text()  # type: ignore[index]
    ctx.close()


# -- 3. Play now alone ------------------------------------------------------------------------


def test_play_now_lets_a_lone_newcomer_start_at_once_with_bots_and_shows_no_host_controls(
    browser: Browser, tmp_path: Path
) -> None:
    with serve(tmp_path, "--play-now-wait", "120", "--exempt", "127.0.0.1") as url:
        ctx = _context(browser, "en", PHONE)
        page = ctx.new_page()
        s = strings("en")
        page.goto(url + "/")
        page.fill("input[name=player_name]", "Lone Lou")
        page.click("#play-now-form button")
        expect(page.locator(".lobby")).to_be_visible()
        expect(page.locator(".seat-list li[data-seat='0']")).to_contain_text("Lone Lou")
        assert page.locator(".seat-list .pill", has_text=s["lobby.host"]).count() == 0
        assert page.locator(".lobby [data-action=seat-bot], .lobby [data-action=kick]").count() == 0
        start = page.locator("[data-action=start]")
        expect(start).to_have_text(s["lobby.startNow"])
        start.click()  # the wait is two minutes: only the button starts the game now
        expect(page.locator(".table")).to_be_visible()
        expect(page.locator(".seat")).to_have_count(4)
        ctx.close()


# -- 4. the phone's end screen ----------------------------------------------------------------


@pytest.mark.parametrize(("lang", "name"), [("en", "Friend Fritz"), ("de", "Freund Fritz"),
                                            ("vi", "Bạn Fritz")])  # fmt: skip
def test_the_phone_end_screen_keeps_names_headers_and_every_button_in_sight(
    own: str, browser: Browser, lang: str, name: str, artifacts: Path
) -> None:
    ctx = _context(browser, lang, PHONE)
    page = ctx.new_page()
    _quick_game(page, own, name)
    page.screenshot(path=str(artifacts / f"end-phone-{lang}.png"))
    dialog = _box(page, ".end .card-box")
    for th in page.locator(".end thead th").all():
        cut = th.evaluate("(el) => el.scrollWidth > el.clientWidth + 1")
        assert not cut and _inside(th.bounding_box(), dialog), th.inner_text()  # type: ignore[arg-type]
    for cell in page.locator(".end tbody td").all():
        assert _inside(cell.bounding_box(), dialog), cell.inner_text()  # type: ignore[arg-type]
    who = page.locator(".end tr[data-seat='0'] td.who")
    assert _box(page, ".end tr[data-seat='0'] td.who")["width"] >= 110
    assert who.locator(".name").evaluate(LINES_JS) == 1  # "Friend Fritz" on one line
    buttons = [b for b in page.locator(".end .btn").all() if b.is_visible()]
    boxes = [b.bounding_box() for b in buttons]
    for b, box in zip(buttons, boxes, strict=True):
        assert box is not None and _inside(box, dialog), (b.inner_text(), box, dialog)
    for i, a in enumerate(boxes):
        for j in range(i):
            assert not _overlap(a, boxes[j]), (buttons[i].inner_text(), buttons[j].inner_text())  # type: ignore[arg-type]
    ctx.close()


# -- 5. the practice game's end ---------------------------------------------------------------


def test_a_finished_lesson_offers_no_reveal_and_the_practice_end_has_no_rematch_nor_leave(
    own: str, browser: Browser
) -> None:
    ctx = _context(browser, "en", DESK)
    page = ctx.new_page()
    page.goto(own + "/?practice=2")
    expect(page.locator(".table.round-open")).to_be_visible()
    page.keyboard.press("Enter")  # done: the bot slaps, the round is decided, the lesson done
    expect(page.locator(".coach[data-phase=done]")).to_be_visible(timeout=30_000)
    expect(page.locator(".coach [data-coach=next]")).to_be_visible()
    expect(page.locator(".turn-flag")).to_have_count(0)
    expect(page.locator("[data-action=reveal]")).to_be_disabled()
    page.goto(own + "/?practice=6")
    expect(page.locator("[data-action=reveal]")).to_be_enabled()
    page.keyboard.press("Space")  # the last card of the draw pile (R22)
    expect(page.locator(".end")).to_be_visible()
    expect(page.locator(".end [data-action=rematch]")).to_have_count(0)
    expect(page.locator(".end [data-action=leave]")).to_have_count(0)
    expect(page.locator(".end [data-action=home]")).to_be_visible()
    ctx.close()


# -- 6. the replays page ----------------------------------------------------------------------


def test_the_replays_page_lists_your_games_each_one_click_from_its_replay(
    own: str, browser: Browser
) -> None:
    ctx = _context(browser, "en", DESK)
    page = ctx.new_page()
    _quick_game(page, own, "Replay Rita")
    page.click("header a[data-nav=replay]")
    games = page.locator(".my-games a[data-replay]")
    expect(games).to_have_count(1)
    games.first.click()
    expect(page.locator(".replay-controls")).to_be_visible()
    expect(page.locator(".replay-note")).to_contain_text("agrees with the rules")
    ctx.close()


# -- 7. ratings explained ---------------------------------------------------------------------


@pytest.mark.parametrize(("size", "lang"), [(PHONE, "pt"), (DESK, "en")])
def test_the_end_screen_shows_the_new_rating_marked_provisional_and_links_to_how_ratings_work(
    own: str, browser: Browser, size: dict[str, Any], lang: str, artifacts: Path
) -> None:
    ctx = _context(browser, lang, size)
    page = ctx.new_page()
    s = strings(lang)
    _rated_game(page, own, f"Rated Rui {lang}")
    mine = page.locator(".end tr[data-seat='0']")
    after = mine.locator(".rating-after")
    expect(after).to_be_visible()  # no hover needed
    expect(after).to_have_text(re.compile(r"^\d{3,4}$"))
    assert _inside(_box(page, ".end tr[data-seat='0'] .rating-after"), _box(page, ".end .card-box"))
    expect(mine.locator(".provisional")).to_be_visible()  # a first game: provisional
    expect(mine.locator(".provisional")).to_have_attribute("title", s["ratings.provisionalTitle"])
    bot = page.locator(".end tr[data-seat='1'] .rating-delta")
    expect(bot).not_to_contain_text("?")  # a bot's rating is fixed: nothing provisional
    page.screenshot(path=str(artifacts / f"end-rating-{lang}.png"))
    # The ratings at the table: the end closed, the seats show them.
    new = after.inner_text()
    page.click("[data-action=close-end]")
    expect(page.locator(".seat[data-seat='1'] .seat-rating")).to_have_text("1000")
    expect(page.locator(".seat.me .seat-rating")).to_have_text(new)  # not the one sat down with
    page.click("[data-action=show-end]")
    page.click(".end a[data-page='?ratings']")
    expect(page.locator(".ratings-page h1")).to_have_text(s["ratings.title"])
    page.click("header a[data-nav=leaderboard]")
    expect(page.locator(".leaderboard tr.mine .provisional")).to_be_visible()
    expect(page.locator(".leaderboard a[data-page='?ratings']")).to_be_visible()
    ctx.close()


def test_the_ratings_page_explains_them_in_every_language(own: str, browser: Browser) -> None:
    for lang in ("en", "pt", "es", "vi", "de"):
        ctx = _context(browser, lang, PHONE)
        page = ctx.new_page()
        page.goto(own + "/?ratings")
        s = strings(lang)
        expect(page.locator(".ratings-page h1")).to_have_text(s["ratings.title"])
        expect(page.locator(".ratings-page")).to_contain_text(s["ratings.provisional.p"][:20])
        ctx.close()


# -- 8. the header under the end screen -------------------------------------------------------


def test_the_end_screen_leaves_the_header_usable_and_back_from_the_replay_too(
    own: str, browser: Browser
) -> None:
    ctx = _context(browser, "en", DESK)
    page = ctx.new_page()
    _quick_game(page, own, "Header Hanna")
    for sel in ("#lang", "#sound", "header a[data-nav=leaderboard]"):
        assert on_top(page, sel), sel
    page.click(".end [data-action=replay]")
    expect(page.locator(".replay-controls")).to_be_visible()
    page.go_back()
    expect(page.locator(".end table.scores")).to_be_visible()
    for sel in ("#lang", "header a[data-nav=leaderboard]"):
        assert on_top(page, sel), sel
    page.click("header a[data-nav=leaderboard]")
    expect(page.locator(".leaderboard h1")).to_be_visible()
    ctx.close()


# -- 9. leaving a live game -------------------------------------------------------------------


def test_leaving_a_live_game_asks_first_and_home_leads_back_to_it(
    own: str, browser: Browser
) -> None:
    ctx = _context(browser, "en", DESK)
    page = ctx.new_page()
    s = strings("en")
    _create(page, own, "Stay Stefan", 2, turn=30, remove=60)
    page.click("[data-action=start]")
    expect(page.locator(".table")).to_be_visible()
    asked: list[str] = []

    def answer(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.dismiss() if len(asked) <= 2 else dialog.accept()

    page.on("dialog", answer)
    page.click("header nav a[data-nav=home]")
    expect(page.locator(".table")).to_be_visible()  # refused: still at the table
    assert asked == [s["table.leaveConfirm"]]
    url = page.url
    page.evaluate("history.back()")  # the browser's Back asks too; refused, the table stays
    for _ in range(100):
        if len(asked) == 2:
            break
        page.wait_for_timeout(100)
    assert asked == [s["table.leaveConfirm"]] * 2
    expect(page.locator(".table")).to_be_visible()
    assert page.url == url
    page.click("header nav a[data-nav=leaderboard]")
    expect(page.locator(".leaderboard h1")).to_be_visible()
    assert len(asked) == 3
    page.click("header nav a[data-nav=home]")
    back = page.locator("#back-to-game a")
    expect(back).to_be_visible()
    back.click()
    expect(page.locator(".table")).to_be_visible()
    expect(page.locator(".seat.me")).to_be_visible()  # still in the seat
    ctx.close()


# -- 10. the smaller ones ---------------------------------------------------------------------


def test_profile_dates_follow_the_chosen_language_and_a_long_name_stays_in_its_heading(
    own: str, browser: Browser
) -> None:
    ctx = browser.new_context(locale="en-US", **PHONE)
    ctx.add_init_script("localStorage.setItem('flyswat.practice', '\"skipped\"')")
    page = ctx.new_page()
    _quick_game(page, own, "M" * 32)
    page.select_option("#lang", "de")
    page.click("header a[data-nav=profile]")
    when = page.locator(".profile td.when").first
    expect(when).to_be_visible()
    text = when.inner_text()
    assert re.search(r"\d{1,2}\.\d{1,2}\.\d{2,4}", text) and not re.search("AM|PM|/", text), text
    heading, box = _box(page, ".profile h1"), _box(page, ".profile .card-box")
    assert _inside(heading, box), (heading, box)
    assert not page.locator(".profile h1").evaluate("(el) => el.scrollWidth > el.clientWidth + 1")
    ctx.close()


def test_you_without_an_identity_says_so_instead_of_showing_home(
    own: str, browser: Browser
) -> None:
    ctx = _context(browser, "es", PHONE)
    page = ctx.new_page()
    page.goto(own + "/")
    page.click("header a[data-nav=profile]")
    expect(page.locator(".no-profile")).to_have_text(strings("es")["players.noIdentity"])
    expect(page.locator(".no-profile-page [data-action=play-now]")).to_be_visible()
    ctx.close()


def test_on_a_phone_your_laid_hands_leave_your_points_in_sight(own: str, browser: Browser) -> None:
    ctx, page = _practice_round(own, browser, PHONE)
    page.locator(".fly-card[data-card='R4-1']").click()  # one of two hands: the round stays open
    expect(page.locator(".seat.me .laid .hand")).to_have_count(1)
    laid, pts = _box(page, ".seat.me .laid"), _box(page, ".seat.me .pts")
    assert not _overlap(laid, pts), (laid, pts)
    assert _inside(pts, _box(page, ".seat.me"))
    ctx.close()


def test_german_names_replays_one_way() -> None:
    de = strings("de")
    words = [de[k] for k in ("nav.replay", "end.replay", "players.replay", "replay.title")]
    assert all("Wiederholung" in w for w in words), words
    assert not any(re.search("Spielverl|nachspiel", w) for w in de.values() if "Wiederholung" in w)


#: A phone on its side.
LANDSCAPE: dict[str, Any] = {"viewport": {"width": 844, "height": 390}, "has_touch": True}


SMALL_LANDSCAPE: dict[str, Any] = {**LANDSCAPE, "viewport": {"width": 740, "height": 360}}


@pytest.mark.parametrize("size", [LANDSCAPE, SMALL_LANDSCAPE])
def test_a_phone_on_its_side_shows_every_fly_of_an_open_round_whole_and_tappable(
    own: str, browser: Browser, size: dict[str, Any], artifacts: Path
) -> None:
    ctx, page = _practice_round(own, browser, size)
    view = {"x": 0, "y": 0, **size["viewport"]}
    centre = _box(page, ".centre")
    cards = page.locator(".centre .fly-card")
    assert cards.count() >= 2
    for i in range(cards.count()):
        box = cards.nth(i).bounding_box()
        assert box is not None and box["height"] >= 40, box
        assert _inside(box, centre) and _inside(box, view), (box, centre)
    assert on_top(page, ".centre .fly-card") and on_top(page, ".trigger-card")
    assert _inside(_box(page, ".trigger-card"), view) and _inside(_box(page, ".my-bar"), view)
    page.screenshot(path=str(artifacts / f"landscape-{size['viewport']['width']}.png"))
    ctx.close()


def test_a_double_tap_on_a_fly_is_one_slap_and_no_error(own: str, browser: Browser) -> None:
    ctx, page = _practice_round(own, browser, PHONE)
    page.evaluate("""() => { const c = document.querySelector(".fly-card[data-card='R4-1']");
      for (const _ of [1, 2]) c.dispatchEvent(new PointerEvent("pointerdown", {bubbles: true}));
    }""")  # two touches within a few ms: a thumb's double tap
    expect(page.locator(".seat.me .laid .hand")).to_have_count(1)
    page.wait_for_timeout(300)
    assert page.locator("#toast").is_hidden()
    ctx.close()


def test_who_leaves_after_the_end_keeps_their_name_in_its_results(
    own: str, browser: Browser
) -> None:
    """Ana leaves the finished game's table ("Leave table" on her end screen): Bruno's end
    screen still names her in its results, says she left, and waits for nobody."""
    host, guest = _context(browser, "en", DESK), _context(browser, "en", PHONE)
    ana, bruno = host.new_page(), guest.new_page()
    _create(ana, own, "Ana", 2, humans=1)
    link = ana.input_value("#share-link")
    bruno.goto(link)
    bruno.fill("form#join-seat input[name=name]", "Bruno")
    bruno.click("form#join-seat button")
    bruno.click("[data-action=ready]")
    expect(ana.locator(".seat-list li[data-seat='1'] .pill.ready")).to_be_visible()
    ana.click("[data-action=start]")  # nobody plays: the server reveals for both, to the end
    for page in (ana, bruno):
        expect(page.locator(".end table.scores")).to_be_visible(timeout=60_000)
    leave = ana.locator(".end [data-action=home]")
    expect(leave).to_have_text(strings("en")["lobby.leave"])
    leave.click()
    expect(ana.locator("form#create")).to_be_visible()
    expect(bruno.locator(".end .rematch-status")).to_contain_text("Ana left the table.")
    expect(bruno.locator(".end tr[data-seat='0'] .name")).to_have_text("Ana")
    expect(bruno.locator(".end .rematch-status")).not_to_contain_text("waiting")
    host.close()
    guest.close()


def test_a_lost_network_is_said_at_once_and_play_comes_back_with_it(
    own: str, browser: Browser
) -> None:
    """The browser's word that the network is gone shows the reconnecting banner at once (an
    open socket may not close for minutes); back online, the client reconnects by itself."""
    ctx = _context(browser, "en", PHONE)
    page = ctx.new_page()
    _create(page, own, "Ana", 2)
    expect(page.locator("#conn")).to_be_hidden()
    ctx.set_offline(True)
    expect(page.locator("#conn")).to_be_visible(timeout=2000)
    ctx.set_offline(False)
    expect(page.locator("#conn")).to_be_hidden(timeout=10_000)
    page.click("[data-action=start]")  # the seat is still hers: the game starts
    expect(page.locator(".table")).to_be_visible()
    ctx.close()


def test_a_server_gone_silent_is_taken_for_a_lost_connection(own: str, browser: Browser) -> None:
    """No ping nor anything else for a few seconds (net.SILENT_MS) on a seat's open socket:
    the client says it is reconnecting, and does, on a socket that hears the server again."""
    ctx = _context(browser, "en", PHONE)
    page = ctx.new_page()
    sockets: list[Any] = []
    muted: set[int] = set()  # the sockets the server's words no longer reach

    def route(ws: Any) -> None:
        server = ws.connect_to_server()
        n = len(sockets)
        sockets.append(ws)
        server.on_message(lambda m: None if n in muted else ws.send(m))

    page.route_web_socket(re.compile(r"/ws/"), route)
    _create(page, own, "Ana", 2)
    page.evaluate(WATCH_CONN_JS)  # the banner may show for a moment only: watched
    opened = len(sockets)
    muted.update(range(opened))  # every socket open now (the lobby's) goes silent
    page.wait_for_function("() => window.connShown === true", timeout=8000)
    expect(page.locator("#conn")).to_be_hidden(timeout=10_000)
    assert len(sockets) > opened  # on a new socket
    page.click("[data-action=start]")
    expect(page.locator(".table")).to_be_visible()
    ctx.close()
