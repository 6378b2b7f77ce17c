"""What the browser tests read of a live table, in one look: one ``page.evaluate`` returns all
of it, where a look made of one call per element would be five or six round trips to the
renderer at every poll (each wakes its main thread: a game's polling cost more of the
browser's time than drawing the game did; docs/BENCHMARKS.md, *The test suite*)."""

from __future__ import annotations

from typing import TypedDict, cast

from playwright.sync_api import Page

#: What tells one slap round from the next on the page (null with no trigger shown): the
#: trigger and every seat's draw and won counts. The trigger alone does not: two rounds
#: opened by alike cards (two swatters) look the same, and a round may open between two looks
#: (the player's own reveal opens one); every reveal changes a draw count, a win or a
#: penalty a won count.
ROUND_KEY_JS = """(() => {
  const trigger = document.querySelector('.trigger-zone .trigger-card');
  if (!trigger) return null;
  const counts = [...document.querySelectorAll('.count-draw, .count-won')];
  return trigger.innerHTML + '|' + counts.map((e) => e.textContent).join(',');
})()"""

LOOK_JS = """() => ({
  end: !!document.querySelector('.end'),
  reveal: !!document.querySelector('button.reveal:not([disabled])'),
  open: !!document.querySelector('.table.round-open'),
  slappable: document.querySelectorAll('.fly-card.slappable').length,
  free: document.querySelectorAll('.my-hand.free').length,
  resolved: document.querySelectorAll('.fly-card.won, .fly-card.wrong').length,
  trigger: ROUND_KEY,
})""".replace("ROUND_KEY", ROUND_KEY_JS)


class Look(TypedDict):
    """A table as a player sees it at one moment."""

    end: bool  # the end screen is shown
    reveal: bool  # our Reveal button is enabled: it is our turn
    open: bool  # a slap round is open
    slappable: int  # flies a hand may be laid on
    free: int  # our hands not yet laid this round
    resolved: int  # flies shown won or wrongly slapped
    trigger: str | None  # the open round's key (ROUND_KEY_JS)


def look(page: Page) -> Look:
    """The table on ``page`` now, read in one call."""
    return cast(Look, page.evaluate(LOOK_JS))


def tap_now(page: Page, selector: str, last: bool = False, timeout: float = 500) -> bool:
    """Tap the element ``selector`` finds now (its first, or its ``last``), if any: never one
    that appears later, as a locator's tap waits for — in a game, the next round's fly as it
    opens, a slap within ms of its trigger, refused as too fast. False when there was none or
    it went (the round re-drawn, or closed under the finger)."""
    found = page.query_selector_all(selector)
    if not found:
        return False
    try:
        found[-1 if last else 0].tap(timeout=timeout)
    except Exception:
        return False
    return True
