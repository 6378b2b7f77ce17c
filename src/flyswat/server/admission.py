"""Tables in play first: new tables' set-up paced by how late the event loop runs.

Opening a table (a create, three joins, four sockets and their ``hello``) costs the node
about 2 ms of its loop a player (``bench/table_setup.py``). When hundreds of games end
together, their players open hundreds of tables at once, and that work would go into the
same turns of the loop as the rounds in play, whose results then wait behind it. So a create
or a join waits at :class:`Admission`'s door: a few go in each :data:`PERIOD_S`, as many as
the loop can take without running late — the number grows by one each period the loop is on
time and halves each period it runs :data:`LATE_MS` late (additive increase, multiplicative
decrease, as TCP paces a link). A lone request on a calm node goes straight in; a request
that has waited :data:`MAX_WAIT_S` is answered ``503 busy`` (``Retry-After``), never left
hanging.

:class:`Pace` is the pure rule; :class:`Admission` is its adapter on the running loop.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass

from flyswat.errors import IllegalActionError

#: How often the door opens while requests wait, and how late is late, and on time.
PERIOD_S = 0.02
LATE_MS = 10.0
ON_TIME_MS = 5.0
#: Admissions a period: at most, and to begin with (200 a second, 50 tables: a busy site's
#: node sees a few tens). The loop's lateness shows a set-up's cost only after it, when its
#: sockets and ``hello`` follow the request the door let in; a door that opened 16 a period
#: let the first 20 ms of a burst of games' ends in before the loop could say it was late
#: (docs/BENCHMARKS.md, *A narrower door*).
MOST = 4
#: The longest a request waits at the door before it is told to come back.
MAX_WAIT_S = 10.0


@dataclass
class Pace:
    """How many set-ups may start in the next period, from how late the last one ended."""

    budget: int = MOST
    most: int = MOST

    def after(self, late_ms: float) -> int:
        """The loop ran ``late_ms`` late at the end of a period: the next period's budget."""
        if late_ms > LATE_MS:
            self.budget = max(1, self.budget // 2)
        elif late_ms < ON_TIME_MS:
            self.budget = min(self.most, self.budget + 1)
        return self.budget


class Admission:
    """The door a table's set-up passes on the running loop (:meth:`enter`)."""

    def __init__(self, pace: Pace | None = None, period_s: float = PERIOD_S,
                 max_wait_s: float = MAX_WAIT_S) -> None:  # fmt: skip
        self.pace = pace or Pace()
        self.period_s = period_s
        self.max_wait_s = max_wait_s
        self.tokens = self.pace.budget
        self.waiting: deque[asyncio.Future[None]] = deque()
        self._due: float | None = None  # when the running period ends (None: not running)
        self.admitted = 0
        self.waited = 0
        self.refused = 0

    async def enter(self) -> None:
        """Return when this set-up may go on; raise ``busy`` after :attr:`max_wait_s`."""
        loop = asyncio.get_running_loop()
        self._run(loop)
        if not self.waiting and self.tokens > 0:
            self.tokens -= 1
            self.admitted += 1
            return
        door: asyncio.Future[None] = loop.create_future()
        self.waiting.append(door)
        self.waited += 1
        try:
            await asyncio.wait_for(door, self.max_wait_s)  # gone on a timeout or a cancel
        except TimeoutError:
            self.refused += 1
            raise IllegalActionError("too many new tables at once: try again", "busy") from None

    def _run(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._due is None:
            self._due = loop.time() + self.period_s
            loop.call_at(self._due, self._period, loop)

    def _period(self, loop: asyncio.AbstractEventLoop) -> None:
        due = self._due
        assert due is not None
        now = loop.time()
        self.tokens = self.pace.after((now - due) * 1000)
        waiting = self.waiting
        while waiting and self.tokens > 0:
            door = waiting.popleft()
            if not door.done():
                door.set_result(None)
                self.tokens -= 1
                self.admitted += 1
        if waiting or self.tokens < self.pace.budget:  # busy: keep measuring
            self._due = now + self.period_s
            loop.call_at(self._due, self._period, loop)
        else:
            self._due = None
