"""Per-address limits on expensive or guessable requests (failed logins, registrations)."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

MAX_ADDRESSES = 10_000  # beyond this many tracked addresses, the quiet ones are forgotten first


class AddressLimiter:
    """At most `limit` events per address in any `window` seconds."""

    def __init__(self, limit: int, window: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.window, self.clock = limit, window, clock
        self._events: dict[str, deque[float]] = {}

    def _recent(self, address: str) -> deque[float]:
        events = self._events.get(address)
        if events is None:
            return deque()
        cutoff = self.clock() - self.window
        while events and events[0] <= cutoff:
            events.popleft()
        if not events:
            del self._events[address]
        return events

    def exhausted(self, address: str) -> bool:
        return len(self._recent(address)) >= self.limit

    def record(self, address: str) -> None:
        if len(self._events) >= MAX_ADDRESSES and address not in self._events:
            self._forget_stale()
        self._events.setdefault(address, deque()).append(self.clock())

    def _forget_stale(self) -> None:
        for address in list(self._events):
            self._recent(address)
        while len(self._events) >= MAX_ADDRESSES:  # all busy: drop the one idle longest
            oldest = min(self._events, key=lambda a: self._events[a][-1])
            del self._events[oldest]


class TokenBuckets:
    """Requests per second per key (a player id or an address): `rate` a second, bursts up to `burst`."""

    def __init__(self, rate: float, burst: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self.clock = rate, burst, clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, when)
        self._swept = clock()

    def take(self, key: str) -> bool:
        """Spend one token if there is one; False means: too fast, refuse."""
        now = self.clock()
        tokens, when = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - when) * self.rate)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            return False
        self._buckets[key] = (tokens - 1.0, now)
        if len(self._buckets) > MAX_ADDRESSES and now - self._swept >= self._refill_seconds:
            self._forget_full(now)
        return True

    @property
    def _refill_seconds(self) -> float:
        return self.burst / self.rate

    def _forget_full(self, now: float) -> None:
        """A bucket that has refilled is the same as no bucket: drop those.

        At most once per refill time: when more than MAX_ADDRESSES keys are all busy (many clients, or
        made-up ids), sweeping on every request would cost a pass over all of them per request.
        """
        self._swept = now
        for key in [k for k, (_, when) in self._buckets.items() if now - when >= self._refill_seconds]:
            del self._buckets[key]
