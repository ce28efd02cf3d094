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
