"""Token buckets on the hub's own monotonic clock: how often a player or a table may act."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Bucket:
    """`rate` actions a second on average, `burst` at once; `take` says whether one more may go now."""

    rate: float
    burst: float
    tokens: float = -1.0  # full at the first take
    at: float = 0.0

    def take(self, now: float, cost: float = 1.0) -> bool:
        """`cost`: how many actions this one counts as (at most `burst`, or it never goes)."""
        if self.tokens < 0:
            self.tokens, self.at = self.burst, now
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < cost:
            return False
        self.tokens -= cost
        return True

    def full(self, now: float) -> bool:
        """Whether a whole burst may go now: this bucket is as good as a new one."""
        return self.tokens < 0 or self.tokens + (now - self.at) * self.rate >= self.burst
