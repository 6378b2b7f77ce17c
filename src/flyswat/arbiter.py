"""Fair slap arbitration: whose hand is underneath (R17) when slaps cross a network.

Pure: every time is an argument, in milliseconds on the server's monotonic clock. The table
(the async adapter) reads the clock, keeps when it sent each reveal to each seat and each
seat's recent round-trip times, and asks this module what a slap's *effective* time is and
when a round may be decided.

For a slap whose client measured its own reaction time ``c`` (from painting the trigger to
the input event) and that reached the server ``E`` ms after the reveal was sent to that seat:

- the allowance is ``A = min(p99 of the seat's recent RTTs + 10, 250)`` (250 with no RTT yet);
- a claim ``c < 100`` is refused: no human is that fast (:data:`MIN_HUMAN_MS`);
- the effective time is ``c`` clamped to ``[E - A, E]``: the client may say it was faster
  than the server saw, but never by more than the network could explain, nor slower;
- a slap whose effective time is past the slap window is refused (R21);
- hands on a card stack by effective time, exact ties by arrival.

A round may close as soon as no missing slap could still be underneath: when every seat has
laid all its hands or said done, or once, for every other seat, even the fastest claim it
could still make (``now - sent_at - A``) is past the window.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from flyswat.cards import Card
from flyswat.errors import IllegalActionError
from flyswat.rules import Rules

#: No human reacts faster than this (ms); claims under it are refused and counted.
MIN_HUMAN_MS = 100
#: The most a seat's network allowance can be (ms), whatever its round-trip times.
ALLOWANCE_CAP_MS = 250.0
#: Added to the p99 round-trip time (ms): scheduling jitter on both ends.
ALLOWANCE_MARGIN_MS = 10.0
#: How many recent round-trip times a seat's allowance is computed from.
RTT_SAMPLES = 30


def p99(samples: Iterable[float]) -> float:
    """The 99th percentile by nearest rank; raises ValueError for no samples."""
    ordered = sorted(samples)
    if not ordered:
        raise ValueError("p99 of no samples")
    return ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]


def allowance(rtts: Iterable[float]) -> float:
    """``min(p99(rtts) + 10, 250)`` ms; the cap when there is no sample yet."""
    samples = list(rtts)
    if not samples:
        return ALLOWANCE_CAP_MS
    return min(p99(samples) + ALLOWANCE_MARGIN_MS, ALLOWANCE_CAP_MS)


class RttLog:
    """A seat's recent round-trip times (ms), the last :data:`RTT_SAMPLES` of them."""

    def __init__(self, size: int = RTT_SAMPLES) -> None:
        self.samples: deque[float] = deque(maxlen=size)

    def add(self, rtt_ms: float) -> None:
        """Keep one measured round-trip time; negative values are impossible and ignored."""
        if rtt_ms >= 0:
            self.samples.append(rtt_ms)

    def allowance(self) -> float:
        """This seat's allowance now (:func:`allowance`)."""
        return allowance(self.samples)


def effective_ms(client_ms: float | None, elapsed_ms: float, allowance_ms: float) -> float:
    """A slap's effective reaction time: ``client_ms`` clamped to ``[E - A, E]``.

    ``client_ms`` None (the client did not measure) counts as ``elapsed_ms``. Raises
    :class:`IllegalActionError` ``too_fast`` for a claim under :data:`MIN_HUMAN_MS`.
    """
    if client_ms is None:
        return elapsed_ms
    if client_ms < MIN_HUMAN_MS:
        raise IllegalActionError(
            f"a reaction of {client_ms:g} ms is not humanly possible (at least {MIN_HUMAN_MS})",
            "too_fast",
        )
    return min(max(client_ms, elapsed_ms - allowance_ms), elapsed_ms)


@dataclass(frozen=True, slots=True)
class Claim:
    """One accepted hand: ``seat`` on ``card`` at effective time ``ms``; ``arrival`` orders ties."""

    seat: int
    card: Card
    ms: float
    arrival: int


class RoundArbiter:
    """The arbitration of one slap round.

    ``sent_at[seat]``: when the trigger was sent to that seat; ``allowance_ms[seat]``: its
    allowance (0 for a bot, whose planned time is exact); ``centre``: how many flies can be
    slapped (a seat needs no more hands than that). Seats absent from ``sent_at`` never
    got the reveal: they count as done. Slaps must already be legal for the engine
    (``Game.check_slap``); this class adds the checks that depend on the claims not yet
    applied (same card, hands left) and on time (too fast, too late).
    """

    def __init__(
        self,
        *,
        seats: int,
        hands: int,
        window_ms: float,
        sent_at: Mapping[int, float],
        allowance_ms: Mapping[int, float],
        centre: int | None = None,
    ) -> None:
        self.seats = seats
        # A seat with a hand on every centre fly can lay no more (R16).
        self.hands = hands if centre is None else min(hands, centre)
        self.window_ms = window_ms
        self.sent_at = dict(sent_at)
        self.allowance_ms = {s: allowance_ms.get(s, ALLOWANCE_CAP_MS) for s in self.sent_at}
        self.claims: list[Claim] = []
        self.done: set[int] = {s for s in range(seats) if s not in self.sent_at}
        self.too_fast: dict[int, int] = {}

    def _check_hand(self, seat: int, card: Card) -> None:
        mine = [c.card for c in self.claims if c.seat == seat]
        if seat in self.done:
            raise IllegalActionError("you already said you are done this round", "done")
        if card in mine:
            raise IllegalActionError(f"you already have a hand on {card}", "same_card")
        if len(mine) >= self.hands:
            raise IllegalActionError(
                f"all your hands are laid ({self.hands} per player)", "no_hands_left"
            )

    def _add(self, seat: int, card: Card, ms: float) -> Claim:
        if ms > self.window_ms:
            raise IllegalActionError(
                f"too late: {ms:.0f} ms after the trigger, the window is {self.window_ms:g} ms",
                "too_late",
            )
        claim = Claim(seat, card, ms, len(self.claims))
        self.claims.append(claim)
        return claim

    def claim(self, seat: int, card: Card, client_ms: float | None, now: float) -> Claim:
        """A human slap received at ``now``; returns the accepted claim or raises
        :class:`IllegalActionError` (``done``, ``same_card``, ``no_hands_left``,
        ``too_fast`` — counted in :attr:`too_fast` — or ``too_late``) and changes nothing
        else."""
        self._check_hand(seat, card)
        elapsed = now - self.sent_at[seat]
        try:
            ms = effective_ms(client_ms, elapsed, self.allowance_ms[seat])
        except IllegalActionError:
            self.too_fast[seat] = self.too_fast.get(seat, 0) + 1
            raise
        return self._add(seat, card, ms)

    def claim_planned(self, seat: int, card: Card, ms: float) -> Claim:
        """A bot's slap at its planned reaction time ``ms``: the same checks but no clamping."""
        self._check_hand(seat, card)
        return self._add(seat, card, ms)

    def say_done(self, seat: int) -> None:
        """``seat`` will lay no more hands (or never got the reveal)."""
        self.done.add(seat)

    def complete(self, seat: int) -> bool:
        """Has ``seat`` laid all its hands (or one on every centre fly) or said done?"""
        return seat in self.done or sum(1 for c in self.claims if c.seat == seat) >= self.hands

    def deadline(self) -> float | None:
        """The time after which no missing slap can be underneath any more; None when every
        seat is complete (decide now).

        A seat's next slap will have ``E >= now - sent_at``, so its effective time is at least
        ``now - sent_at - A``; once that is past the window for every incomplete seat, nothing
        can change.
        """
        waiting = [s for s in range(self.seats) if not self.complete(s)]
        if not waiting:
            return None
        return max(self.sent_at[s] + self.window_ms + self.allowance_ms[s] for s in waiting)

    def decided(self, now: float) -> bool:
        """May the round close at ``now``?"""
        deadline = self.deadline()
        return deadline is None or now > deadline

    def laid(self) -> list[int]:
        """Hands accepted so far, per seat."""
        counts = [0] * self.seats
        for c in self.claims:
            counts[c.seat] += 1
        return counts

    def ordered(self) -> list[Claim]:
        """The accepted hands in the order to apply them: effective time, then arrival."""
        return sorted(self.claims, key=lambda c: (c.ms, c.arrival))


class RoundClock:
    """The timing of one slap round, and nothing else: the hands themselves are the engine's
    (:class:`flyswat.engine.Round`).

    ``waited``: the seats the round waits for (those at the table when it opened; a seat not
    waited for cannot slap). ``opened_at``: when the trigger was stored and sent; each seat's
    clock starts when its socket was handed the trigger (:meth:`delivered`), never before.
    ``allowance_ms``: each waited seat's network allowance (0 for a bot, whose planned time
    is exact).
    """

    def __init__(
        self,
        *,
        rules: Rules,
        opened_at: float,
        waited: Iterable[int],
        allowance_ms: Mapping[int, float],
    ) -> None:
        self.rules = rules
        self.opened_at = opened_at
        self.sent_at = dict.fromkeys(waited, opened_at)
        self.allowance_ms = {s: allowance_ms.get(s, ALLOWANCE_CAP_MS) for s in self.sent_at}
        self._delivered: set[int] = set()

    def waits_for(self, seat: int) -> bool:
        """Does the round wait for ``seat`` (was it at the table when the round opened)?"""
        return seat in self.sent_at

    def delivered(self, seat: int, at: float) -> None:
        """``seat``'s socket was handed the trigger at ``at`` (the first hand-over counts)."""
        if seat in self.sent_at and seat not in self._delivered:
            self._delivered.add(seat)
            self.sent_at[seat] = max(at, self.opened_at)

    def _in_window(self, ms: float) -> float:
        if not self.rules.in_window(ms):
            window = self.rules.slap_window_ms
            raise IllegalActionError(
                f"too late: {ms:.0f} ms after the trigger, the window is {window} ms", "too_late"
            )
        return ms

    def judge(self, seat: int, client_ms: float | None, now: float) -> float:
        """The effective time of ``seat``'s slap received at ``now`` claiming ``client_ms``
        (:func:`effective_ms`); raises ``too_fast`` or ``too_late`` (R21)."""
        elapsed = now - self.sent_at[seat]
        return self._in_window(effective_ms(client_ms, elapsed, self.allowance_ms[seat]))

    def planned(self, ms: float) -> float:
        """A bot's planned reaction time, if it is inside the window; raises ``too_late``."""
        return self._in_window(ms)

    def deadline(self, incomplete: Iterable[int]) -> float | None:
        """The time from which no slap still to come from the ``incomplete`` seats can count:
        its effective time is at least ``now - sent_at - allowance``, and a hand at the
        window's edge is too late (R21). None when no seat is incomplete (decide now)."""
        ends = [self.sent_at[s] + self.rules.slap_window_ms + self.allowance_ms[s]
                for s in incomplete if s in self.sent_at]  # fmt: skip
        return max(ends) if ends else None

    def window_left(self, now: float) -> int:
        """ms left of the slap window as counted from the opening (for countdowns)."""
        return max(0, round(self.rules.slap_window_ms - (now - self.opened_at)))
