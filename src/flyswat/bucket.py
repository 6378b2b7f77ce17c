"""A token bucket: the one rate limit of the server and of the tables.

Pure: every method takes ``now``, in whatever unit the caller counts (the server's limits
count seconds, a table's clock milliseconds); the rate is tokens per that unit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(slots=True)
class TokenBucket:
    """``burst`` tokens, refilled at ``rate`` per unit of ``now`` (per second for the
    server's limits, per millisecond on a table's clock); each allowed event takes one."""

    rate: float
    burst: float
    tokens: float
    stamp: float

    @classmethod
    def full(cls, rate: float, burst: float, now: float) -> TokenBucket:
        """A bucket with every token, as of ``now``."""
        return cls(rate, burst, burst, now)

    @classmethod
    def fresh(cls, rate: float, burst: float) -> TokenBucket:
        """A full bucket whose clock starts at the first :meth:`take` (whenever that is)."""
        return cls(rate, burst, burst, -math.inf)

    def _refill(self, now: float) -> None:
        if now > self.stamp:
            self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now

    def take(self, now: float, cost: float = 1.0) -> bool:
        """Take ``cost`` tokens if there are that many at ``now``; whether it could."""
        self._refill(now)
        if self.tokens < cost:
            return False
        self.tokens -= cost
        return True

    def give_back(self, cost: float = 1.0) -> None:
        """Return ``cost`` that :meth:`take` took (what it was taken for did not happen)."""
        self.tokens = min(self.burst, self.tokens + cost)

    def wait(self, now: float, cost: float = 1.0) -> float:
        """Seconds from ``now`` until ``cost`` tokens are there (0 when they are now)."""
        self._refill(now)
        return max(0.0, (cost - self.tokens) / self.rate)

    def full_at(self) -> float:
        """When the bucket is full again if nothing more is taken."""
        return self.stamp + (self.burst - self.tokens) / self.rate
