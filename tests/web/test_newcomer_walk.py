"""What a walk as a newcomer on a phone in Portuguese and Vietnamese (and a desktop in German)
still met after issue 22's fixes, each in a real browser: a page link that took two steps of
Back, your own name cut off at your seat, the profile's games and the leaderboard's headers cut
off on a phone, an empty rating column after the practice game, the centre's last row cut in a
live game, the turn-played-for-you message over your Reveal, the watching label over the
reactions, and names cut beside the trigger and the seats' tags on a desktop."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from .conftest import serve
from .test_newcomer import PHONE, strings
from .test_newcomer_table import _context, _create, _overlap, _quick_game, _rated_game, on_top
from .test_watch import live_game

TOUCH: dict[str, Any] = {**PHONE, "is_mobile": True}

#: Nothing of the element's text is cut: it is as wide and as tall as what it holds.
WHOLE_JS = """(el) => el.scrollWidth <= el.clientWidth + 1
  && el.scrollHeight <= el.clientHeight + 1"""


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of this module's own."""
    with serve(tmp_path_factory.mktemp("walk"), "--exempt", "127.0.0.1") as url:
        yield url


def _back_lands_on(page: Page, selector: str) -> None:
    """One step of Back shows ``selector`` again (a link is one step in the history)."""
    page.go_back()
    expect(page.locator(selector).first).to_be_visible()


def test_a_page_link_from_the_end_screen_or_the_home_page_is_one_step_of_back(
    own: str, browser: Browser
) -> None:
    ctx = _context(browser, "pt", TOUCH)
    page = ctx.new_page()
    _quick_game(page, own, "Joana Silva")
    steps = page.evaluate("history.length")
    page.locator(".end a[href='?ratings']").tap()
    expect(page.locator(".ratings-page h1")).to_be_visible()
    assert page.evaluate("history.length") == steps + 1
    _back_lands_on(page, ".end table.scores")
    page.locator(".end [data-action=home]").tap()
    expect(page.locator("#play-now")).to_be_visible()
    page.locator(".player-links a[href='?leaderboard']").tap()
    expect(page.locator(".leaderboard h1")).to_be_visible()
    _back_lands_on(page, "#play-now")
    page.locator(".player-links a[href^='?player=']").tap()
    expect(page.locator(".profile h1")).to_be_visible()
    _back_lands_on(page, "#play-now")
    ctx.close()


def test_the_rules_page_seen_twice_opens_the_practice_game_once(own: str, browser: Browser) -> None:
    ctx = _context(browser, "vi", TOUCH)
    page = ctx.new_page()
    page.goto(own + "/")
    for _ in range(2):
        page.locator("header a[data-nav=learn]").tap()
        expect(page.locator("[data-go=practice]").first).to_be_visible()
        page.locator("header a[data-nav=home]").first.tap()
        expect(page.locator("#play-now")).to_be_visible()
    page.locator("header a[data-nav=learn]").tap()
    steps = page.evaluate("history.length")
    page.locator("[data-go=practice]").first.tap()
    expect(page.locator(".coach")).to_be_visible()
    assert page.evaluate("history.length") == steps + 1
    _back_lands_on(page, "[data-go=practice]")
    ctx.close()


@pytest.mark.parametrize(("lang", "name"), [("pt", "Joana Silva"), ("vi", "Nguyễn Văn An")])
def test_your_own_name_at_your_seat_on_a_phone_is_not_cut_off(
    browser: Browser, own: str, lang: str, name: str
) -> None:
    ctx = _context(browser, lang, TOUCH)
    ctx.add_init_script(f"localStorage.setItem('flyswat.name', {json.dumps(name)});")
    page = ctx.new_page()
    page.goto(own + "/?practice=3")  # a lesson where your hand is laid by your name
    seat = page.locator(".seat.me .seat-name")
    expect(seat).to_contain_text(name)
    assert seat.evaluate(WHOLE_JS), seat.inner_text()
    expect(page.locator(".table.round-open")).to_be_visible()
    page.locator(".fly-card[data-card='B3-1']").tap()
    expect(page.locator(".seat.me .laid .hand")).not_to_have_count(0)
    assert seat.evaluate(WHOLE_JS), seat.inner_text()
    ctx.close()


def test_the_profiles_games_and_the_leaderboards_headers_fit_a_phone(
    own: str, browser: Browser
) -> None:
    """In the languages with the longest words, one rated game (a rating's change in the
    games' last column) and the language chosen in the header for each."""
    ctx = _context(browser, "pt", TOUCH)
    page = ctx.new_page()
    _rated_game(page, own, "Joana Silva")
    for lang in ("pt", "vi", "de"):
        page.select_option("#lang", lang)
        page.locator("header a[data-nav=profile]").tap()
        expect(page.locator(".profile h2").first).to_have_text(strings(lang)["players.gamesTitle"])
        expect(page.locator(".profile table.games td.delta")).not_to_have_count(0)
        scroll = page.locator(".profile .table-scroll")
        assert scroll.evaluate("(el) => el.scrollWidth <= el.clientWidth + 1"), (lang, "cut off")
        page.locator("header a[data-nav=leaderboard]").tap()
        heads = page.locator(".leaderboard table.scores th")
        expect(heads).to_have_count(4)
        expect(page.locator(".leaderboard h1")).to_have_text(strings(lang)["players.leaderboard"])
        for th in heads.all():
            assert th.evaluate(WHOLE_JS), (lang, th.inner_text())
    ctx.close()


def test_the_practice_games_end_has_no_rating_column(own: str, browser: Browser) -> None:
    ctx = _context(browser, "pt", TOUCH)
    page = ctx.new_page()
    page.goto(own + "/?practice=6")
    page.locator("button.reveal").tap()
    expect(page.locator(".end table.scores tbody tr")).to_have_count(2)
    expect(page.locator(".end thead")).not_to_contain_text(strings("pt")["end.rating"])
    expect(page.locator(".end td.rating-delta")).to_have_count(0)
    ctx.close()


#: The centre's cards all lie inside it (none cut at its bottom edge), by their laid-out boxes
#: (an arriving card's pop is a transform, not its place).
CENTRE_FITS_JS = """() => { const c = document.querySelector('.table .centre');
  const cards = c ? [...c.querySelectorAll('.fly-card')] : [];
  if (!cards.length) return null;
  const bottom = Math.max(...cards.map((k) => k.offsetTop + k.offsetHeight));
  return bottom - c.offsetTop <= c.clientHeight + 1; }"""


def test_on_a_phone_the_centres_cards_fit_beside_the_reactions_and_the_countdown(
    own: str, browser: Browser
) -> None:
    """The cards were sized before the reactions' bar and the slap window's bar took their room
    from the centre: in a live game the last row was cut at the bottom."""
    ctx = _context(browser, "pt", TOUCH)
    page = ctx.new_page()
    _create(page, own, "Joana Silva", 2, turn=0.3, remove=70)
    page.locator("[data-action=start]").tap()
    looks = {"open": 0, "shut": 0}
    while min(looks.values()) < 3 and not page.locator(".end").count():
        fits = page.evaluate(CENTRE_FITS_JS)
        if fits is not None:
            where = "open" if page.locator(".table.round-open").count() else "shut"
            assert fits, (where, page.locator(".centre .fly-card").count())
            looks[where] += 1
        page.wait_for_timeout(150)
    assert min(looks.values()) >= 3, looks
    ctx.close()


#: The boxes of the element ``one`` finds and of every element ``others`` finds (null for one
#: not shown), measured in one step: a live table draws itself again at every reveal, and an
#: element found in one step and measured in the next may be gone by then.
BOXES_JS = """([one, others]) => {
  const box = (el) => { if (!el || !el.getClientRects().length) return null;
    const b = el.getBoundingClientRect();
    return {x: b.x, y: b.y, width: b.width, height: b.height}; };
  return [box(document.querySelector(one)), [...document.querySelectorAll(others)].map(box)]; }"""


def _apart(page: Page, one: str, others: str) -> None:
    """``one`` overlaps none of ``others`` (each can be read and tapped)."""
    a, boxes = page.evaluate(BOXES_JS, [one, others])
    assert a is not None, one
    for b in boxes:
        assert b is not None and not _overlap(a, b), (one, a, b)


def test_on_a_phone_the_watching_label_and_the_see_the_end_button_leave_the_reactions_in_reach(
    own: str, browser: Browser
) -> None:
    ctx = _context(browser, "vi", TOUCH)
    page = ctx.new_page()
    _quick_game(page, own, "Nguyễn Văn An")
    page.locator(".end [data-action=close-end]").tap()
    expect(page.locator(".watching [data-action=show-end]")).to_be_visible()
    expect(page.locator(".react-bar button")).to_have_count(6)
    _apart(page, ".watching", ".react-bar button")
    fan = ctx.new_page()  # a spectator of a game going on
    fan.goto(own + f"/?table={live_game(own, 'normal', 0)}&watch")
    expect(fan.locator(".watching")).to_have_text(strings("vi")["table.watching"])
    expect(fan.locator(".react-bar .react-mute")).to_be_visible()
    _apart(fan, ".watching", ".react-bar button")
    ctx.close()


@pytest.mark.parametrize("lang", ["pt", "de"])
def test_on_a_phone_the_turn_played_for_you_message_leaves_your_seat_and_reveal_in_reach(
    own: str, browser: Browser, lang: str
) -> None:
    """The message that the server revealed for you came up over your Reveal button and your
    points (a narrow box of five lines), and took the taps meant for them."""
    ctx = _context(browser, lang, TOUCH)
    page = ctx.new_page()
    _create(page, own, "Joana Silva", 2, turn=0.3, remove=70)
    page.locator("[data-action=start]").tap()
    expect(page.locator("#toast")).to_have_text(strings(lang)["table.autoReveal"])
    # Your Reveal, or in its place Done while a round that the reveal made for you is open.
    for mine in (".actions .btn", ".seat.me .pts", ".seat.me .seat-name"):
        assert on_top(page, mine), mine
    ctx.close()


def test_on_a_desktop_the_seats_names_and_who_revealed_the_trigger_are_said_whole(
    own: str, browser: Browser
) -> None:
    """The trigger's caption beside the centre was cut to one line ('aufgedeckt von Friedri…'),
    and a seat's name to make room for its tag ('Langsam…' beside 'Bot · leicht')."""
    ctx = _context(browser, "de", {"viewport": {"width": 1366, "height": 768}})
    ctx.add_init_script("localStorage.setItem('flyswat.name', 'Friedrich Müller');")
    page = ctx.new_page()
    page.goto(own + "/?practice=5")  # your own reveal opens the round: a fifth colour
    page.click("button.reveal")
    caption = page.locator(".trigger-zone .trigger-text span")
    expect(caption).to_contain_text("Friedrich Müller")
    assert caption.evaluate(WHOLE_JS), caption.inner_text()
    for name in page.locator(".seat .seat-name").all():
        assert name.evaluate(WHOLE_JS), name.inner_text()
    ctx.close()
