"""Fair slap arbitration: whose hand is underneath (R17) when slaps cross a network.

Pure: every time is an argument, in milliseconds on the server's monotonic clock. The table
(the async adapter) reads the clock, keeps when it sent each reveal to each seat, feeds each
seat's :class:`Link` with what it measures of that seat's network, and asks this module what
a slap's *effective* time is and when a round may be decided.

Threat model: the client is the adversary. It chooses its claimed reaction time, when (and
whether) it answers ``ping``, and when it sends its slap. It cannot make a packet cross the
network faster than the network does, and it cannot cheaply delay what the peer's *kernel*
measures of the TCP connection (or what a trusted front measures of its own connection to
the client). So compensation rests on the smaller of the round trips the pings and the
network show, never on what the client alone makes it look like:

- ``measured = min(median of recent ping RTTs, median of recent network RTTs)``; with no
  ping answered, or no network measurement, there is no compensation at all (allowance 0);
- the allowance is ``A = min(measured + min(JITTER_MS, budget), 250)``: jitter above the
  measured round trip is compensated only out of a per-seat budget that drains by what each
  slap takes above ``measured`` and refills by a little per slap (lichess's lag quota), so a
  player who keeps claiming the edge gets little more than its plain round trip; and only
  for a seat whose pings confirm the network (its fastest pong within ``JITTER_MS`` of the
  network's round trip): one that slows its pongs gets the network's figure alone;
- the effective time is the claim ``c`` clamped to ``[E - A, E]`` (``E``: when the slap reached
  the server after the reveal was sent to that seat);
- a claim under 100 ms is refused, and so is a slap that reached the server less than 100 ms
  after the reveal plus the network time it surely took (``sure_ms``): no human is that fast
  (:data:`MIN_HUMAN_MS`), and no effective time is ever under it;
- a slap whose effective time is past the slap window is refused (R21);
- hands on a card stack by effective time, exact ties by arrival.

A round may close as soon as no missing slap could still be underneath: when every seat has
laid all its hands or said done, or once, for every other seat, even the fastest claim it
could still make (``now - sent_at - A``) is past the window.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

from flyswat.cards import Card
from flyswat.errors import IllegalActionError

#: No human reacts faster than this (ms): claims under it, and slaps that reached the server
#: sooner than this after the reveal plus the network's sure time, are refused and counted.
MIN_HUMAN_MS = 100
#: The most a seat's network allowance can be (ms), whatever its round-trip times.
ALLOWANCE_CAP_MS = 250.0
#: The most one slap is compensated above the seat's measured minimum round trip (ms): the
#: jitter an honest slap may meet. Kept under the 20 ms that must always separate two hands.
JITTER_MS = 12.0
#: What each accepted slap adds back to the seat's compensation budget (ms).
BUDGET_GAIN_MS = 6.0
#: The most the budget holds, and what a seat starts with (ms).
BUDGET_MAX_MS = 36.0
#: Round-trip samples older than this (ms) are forgotten: a seat that stops answering pings
#: loses its compensation.
RTT_WINDOW_MS = 30_000.0


class Link:
    """What the server knows of one seat's network path, and its compensation budget.

    Observations: :meth:`pong` (a ping's round trip: the client can delay it, never hasten it,
    since ping ids are unpredictable), :meth:`network_rtt` (the kernel's ``TCP_INFO`` of the
    seat's socket, or a trusted front's measurement: the client cannot cheaply inflate it) and
    :meth:`compensated` (what an accepted slap was granted). Answers: :meth:`allowance` and
    :meth:`sure_ms`. Every time is an argument.
    """

    def __init__(
        self,
        *,
        window_ms: float = RTT_WINDOW_MS,
        jitter_ms: float = JITTER_MS,
        gain_ms: float = BUDGET_GAIN_MS,
        budget_max_ms: float = BUDGET_MAX_MS,
    ) -> None:
        self.window_ms = window_ms
        self.jitter_ms = jitter_ms
        self.gain_ms = gain_ms
        self.budget_max_ms = budget_max_ms
        self.budget = budget_max_ms
        self._pings: deque[tuple[float, float]] = deque()
        self._network: deque[tuple[float, float]] = deque()

    def _keep(self, samples: deque[tuple[float, float]], rtt_ms: float, now: float) -> None:
        if rtt_ms >= 0:
            samples.append((now, rtt_ms))

    def _fresh(self, samples: deque[tuple[float, float]], now: float) -> list[float]:
        while samples and samples[0][0] < now - self.window_ms:
            samples.popleft()
        return sorted(rtt for _, rtt in samples)

    def _min(self, samples: deque[tuple[float, float]], now: float) -> float | None:
        fresh = self._fresh(samples, now)
        return fresh[0] if fresh else None

    def _median(self, samples: deque[tuple[float, float]], now: float) -> float | None:
        fresh = self._fresh(samples, now)
        return fresh[(len(fresh) - 1) // 2] if fresh else None

    def pong(self, rtt_ms: float, now: float) -> None:
        """A ping's round trip (ms) measured at ``now``; negative values are ignored."""
        self._keep(self._pings, rtt_ms, now)

    def network_rtt(self, rtt_ms: float, now: float) -> None:
        """The network's own round-trip time (ms) for this seat, read at ``now``."""
        self._keep(self._network, rtt_ms, now)

    def measured(self, now: float) -> float | None:
        """The seat's typical round trip, as both the pings and the network allow it:
        ``min(median of recent pings, median of recent network figures)`` (the lower
        median); None unless both have recent samples. A client that delays its pongs can
        only raise the first, so the network's figure bounds it."""
        ping, network = self._median(self._pings, now), self._median(self._network, now)
        if ping is None or network is None:
            return None
        return min(ping, network)

    def sure_ms(self, now: float) -> float:
        """Network time every slap of this seat surely took (ms): the smallest recent round
        trip of any source, 0 with none. No slap is humanly possible sooner than
        :data:`MIN_HUMAN_MS` past it."""
        ping, network = self._min(self._pings, now), self._min(self._network, now)
        return min((m for m in (ping, network) if m is not None), default=0.0)

    def allowance(self, now: float) -> float:
        """How much sooner than the server saw it a slap may say it was (ms): 0 without a
        ping answered and a network measurement, else ``measured + min(jitter, budget)``,
        at most :data:`ALLOWANCE_CAP_MS`.

        The jitter margin is only for a seat whose pings confirm the network's figure: when
        even its fastest pong comes back more than the margin later than the network's round
        trip, its pongs are slowed (a doctored client, or a badly stalled one) and it gets
        the network's figure alone."""
        base = self.measured(now)
        fastest, network = self._min(self._pings, now), self._median(self._network, now)
        if base is None or fastest is None or network is None:
            return 0.0
        confirmed = fastest - network <= self.jitter_ms
        margin = min(self.jitter_ms, self.budget) if confirmed else 0.0
        return min(base + margin, ALLOWANCE_CAP_MS)

    def compensated(self, ms: float, now: float) -> None:
        """An accepted slap was granted ``ms`` of compensation (``E`` minus its effective
        time): what it took above the measured round trip drains the budget, and every slap
        adds :data:`BUDGET_GAIN_MS` back, up to the budget's maximum."""
        excess = max(0.0, ms - (self.measured(now) or 0.0))
        self.budget = max(0.0, min(self.budget_max_ms, self.budget - excess + self.gain_ms))


def effective_ms(
    client_ms: float | None, elapsed_ms: float, allowance_ms: float, sure_ms: float = 0.0
) -> float:
    """A slap's effective reaction time: ``client_ms`` clamped to ``[E - A, E]``, and never
    under :data:`MIN_HUMAN_MS`.

    ``client_ms`` None (the client did not measure) counts as ``elapsed_ms``. Raises
    :class:`IllegalActionError` ``too_fast`` for a claim under :data:`MIN_HUMAN_MS`, and for a
    slap that arrived less than :data:`MIN_HUMAN_MS` after the reveal plus ``sure_ms`` (the
    network time it surely took), whatever it claims.
    """
    if client_ms is not None and client_ms < MIN_HUMAN_MS:
        raise IllegalActionError(
            f"a reaction of {client_ms:g} ms is not humanly possible (at least {MIN_HUMAN_MS})",
            "too_fast",
        )
    if elapsed_ms - sure_ms < MIN_HUMAN_MS:
        raise IllegalActionError(
            f"your slap arrived {elapsed_ms:.0f} ms after the reveal, {sure_ms:.0f} ms of it on "
            f"the network: not humanly possible (at least {MIN_HUMAN_MS})",
            "too_fast",
        )
    if client_ms is None:
        return max(float(MIN_HUMAN_MS), elapsed_ms)
    return max(float(MIN_HUMAN_MS), min(max(client_ms, elapsed_ms - allowance_ms), elapsed_ms))


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
    allowance (0 for a bot, whose planned time is exact, and for a seat not given);
    ``sure_ms[seat]``: the network time its slaps surely take (:meth:`Link.sure_ms`, 0 when not
    given); ``centre``: how many flies can be slapped (a seat needs no more hands than that).
    Seats absent from ``sent_at`` never got the reveal: they count as done. Slaps must already
    be legal for the engine (``Game.check_slap``); this class adds the checks that depend on
    the claims not yet applied (same card, hands left) and on time (too fast, too late).
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
        sure_ms: Mapping[int, float] | None = None,
    ) -> None:
        self.seats = seats
        # A seat with a hand on every centre fly can lay no more (R16).
        self.hands = hands if centre is None else min(hands, centre)
        self.window_ms = window_ms
        self.sent_at = dict(sent_at)
        self.allowance_ms = {s: allowance_ms.get(s, 0.0) for s in self.sent_at}
        self.sure_ms = {s: (sure_ms or {}).get(s, 0.0) for s in self.sent_at}
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
            ms = effective_ms(client_ms, elapsed, self.allowance_ms[seat], self.sure_ms[seat])
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
