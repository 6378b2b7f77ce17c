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

- hands on a card stack by effective time, exact ties by arrival (the engine's round holds
  them and orders them when it closes).

A round may close as soon as no missing slap could still count: when every seat has laid all
its hands or said done, or once, for every other seat, even the fastest claim it could still
make (``now - sent_at - A``) is at or past the window's edge (:class:`RoundClock`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from flyswat.errors import IllegalActionError
from flyswat.rules import Rules

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
        self._pings = _Samples(window_ms)
        self._network = _Samples(window_ms)

    def _min(self, samples: _Samples, now: float) -> float | None:
        fresh = samples.fresh(now)
        return fresh[0] if fresh else None

    def _median(self, samples: _Samples, now: float) -> float | None:
        fresh = samples.fresh(now)
        return _lower_median(fresh) if fresh else None

    def pong(self, rtt_ms: float, now: float) -> None:
        """A ping's round trip (ms) measured at ``now``; negative values are ignored."""
        self._pings.add(rtt_ms, now)

    def network_rtt(self, rtt_ms: float, now: float) -> None:
        """The network's own round-trip time (ms) for this seat, read at ``now``."""
        self._network.add(rtt_ms, now)

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
        pings, networks = self._pings.fresh(now), self._network.fresh(now)
        if not pings or not networks:
            return 0.0
        network = _lower_median(networks)
        base = min(_lower_median(pings), network)  # measured(now), its lists at hand
        confirmed = pings[0] - network <= self.jitter_ms
        margin = min(self.jitter_ms, self.budget) if confirmed else 0.0
        return min(base + margin, ALLOWANCE_CAP_MS)

    def compensated(self, ms: float, now: float) -> None:
        """An accepted slap was granted ``ms`` of compensation (``E`` minus its effective
        time): what it took above the measured round trip drains the budget, and every slap
        adds :data:`BUDGET_GAIN_MS` back, up to the budget's maximum."""
        excess = max(0.0, ms - (self.measured(now) or 0.0))
        self.budget = max(0.0, min(self.budget_max_ms, self.budget - excess + self.gain_ms))


def _lower_median(ordered: list[float]) -> float:
    """The lower median of a sorted, non-empty list."""
    return ordered[(len(ordered) - 1) // 2]


class _Samples:
    """Round trips (ms) by when they were measured, within a window that ends at ``now``, and
    the same in order, sorted only when asked after a change.

    A seat answers a ping every second and is asked of its round trips once a round (every
    few seconds), so a sort of the window's few dozen floats at the question (in C, once for
    the round's several questions) costs less than keeping them in order at every pong: a
    ``bisect.insort`` compares through the generic sequence protocol, two for every pong of
    every link, 3 % of a loaded server's CPU (docs/BENCHMARKS.md, *The round trips sorted
    when asked*). The window is trimmed at every sample too, so a seat never asked keeps no
    more than the window.

    Floats only, in two lists side by side: a float is none of the collector's business,
    where a ``(when, rtt)`` pair would be one more object for a young collection to walk,
    two for every pong of every link (docs/BENCHMARKS.md, *The burst's survivors*). Lists,
    not queues: compiled, a list's item and its append are a few instructions where a
    deque's are calls through the interpreter, and the window's few dozen samples move up
    in one short copy when the oldest leave (docs/BENCHMARKS.md, *Client messages and
    events as msgspec Structs*)."""

    __slots__ = ("_ordered", "times", "values", "window_ms")

    def __init__(self, window_ms: float) -> None:
        self.window_ms = window_ms
        self.times: list[float] = []
        self.values: list[float] = []
        self._ordered: list[float] | None = []  # None: to sort at the next question

    def add(self, rtt_ms: float, now: float) -> None:
        if rtt_ms >= 0:
            self._trim(now)
            self.times.append(now)
            self.values.append(rtt_ms)
            self._ordered = None

    def _trim(self, now: float) -> None:
        times, cutoff = self.times, now - self.window_ms
        if not times or times[0] >= cutoff:
            return
        gone, end = 1, len(times)
        while gone < end and times[gone] < cutoff:
            gone += 1
        del times[:gone]
        del self.values[:gone]
        self._ordered = None

    def fresh(self, now: float) -> list[float]:
        """The samples of the window, smallest first (not to be changed by the caller)."""
        self._trim(now)
        ordered = self._ordered
        if ordered is None:
            ordered = self._ordered = sorted(self.values)
        return ordered


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


class RoundClock:
    """The timing of one slap round, and nothing else: the hands themselves are the engine's
    (:class:`flyswat.engine.Round`), the one R16 check is :meth:`flyswat.engine.Game.check_slap`.

    ``waited``: the seats the round waits for (those at the table when it opened; a seat not
    waited for cannot slap). ``opened_at``: when the trigger was stored and sent; each seat's
    clock starts when its socket was handed the trigger (:meth:`delivered`), never before.
    ``allowance_ms``: each waited seat's network allowance (:meth:`Link.allowance`; 0 for a bot,
    whose planned time is exact, and for a seat not given); ``sure_ms``: the network time each
    seat's slaps surely take (:meth:`Link.sure_ms`; 0 when not given).
    """

    def __init__(
        self,
        *,
        rules: Rules,
        opened_at: float,
        waited: Iterable[int],
        allowance_ms: Mapping[int, float],
        sure_ms: Mapping[int, float] | None = None,
    ) -> None:
        self.rules = rules
        self.opened_at = opened_at
        self.sent_at = dict.fromkeys(waited, opened_at)
        self.allowance_ms = {s: allowance_ms.get(s, 0.0) for s in self.sent_at}
        self.sure_ms = {s: (sure_ms or {}).get(s, 0.0) for s in self.sent_at}
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

    def elapsed(self, seat: int, now: float) -> float:
        """``E``: ms from the trigger's hand-over to ``seat``'s socket until ``now``."""
        return now - self.sent_at[seat]

    def judge(self, seat: int, client_ms: float | None, now: float) -> float:
        """The effective time of ``seat``'s slap received at ``now`` claiming ``client_ms``
        (:func:`effective_ms`); raises ``too_fast`` or ``too_late`` (R21)."""
        ms = effective_ms(
            client_ms, self.elapsed(seat, now), self.allowance_ms[seat], self.sure_ms[seat]
        )
        return self._in_window(ms)

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
