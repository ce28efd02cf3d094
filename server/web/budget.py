"""One budget, for the whole server, for sending the public answers anyone may ask for in a loop (a
tournament's tables, standings and records' zip, the tournaments' list: server/web/shared.py).

Such an answer is built once and shared, so a request costs its sending alone; but the answer may be
megabytes, and clients from many networks, each within its own per-address limits, can make sending it
all the event loop does, the players' polls waiting behind it (docs/performance.md, "The public answers'
sending budget"). So all those answers together go out at most `rate` bytes a second, after a first
BURST seconds' worth at once, and each counts at least MIN_CHARGE bytes: what a request costs the loop
besides its body. What a flood can then take from the players is bounded, and the flood's own clients
wait their turn.

The turns are kept as one time (GCRA: when the budget will have sent everything promised), so there is no
queue to hold. An answer that would wait longer than `most_wait` before its first byte is refused
(`Overbooked`: 503 with Retry-After); a slice of an answer already begun always waits its turn, since its
headers promised the rest, and a waiting connection is one of the connection cap's.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable

from server.config import DEFAULT_PUBLIC_RATE

MEGABYTE = 1024 * 1024
BURST = 0.25  # seconds of the rate sent at once by a budget left alone: 16 MB at the default rate
MIN_CHARGE = 256 * 1024  # bytes an answer counts however small it is: at most 256 answers a second by default
MOST_WAIT = 10.0  # seconds an answer may wait for its first byte before it is refused instead


class Overbooked(Exception):
    """The budget is promised for longer than an answer may wait."""

    def __init__(self, wait: float) -> None:
        super().__init__(f"the public answers' budget is taken for {wait:.1f} s")
        self.retry_after = math.ceil(wait)


class SendingBudget:
    def __init__(
        self,
        rate: float = DEFAULT_PUBLIC_RATE * MEGABYTE,
        *,
        most_wait: float = MOST_WAIT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`rate`: bytes a second; by default --public-rate's default, about 3% of a core to send on this
        project's 2-CPU test host."""
        self.rate, self.most_wait, self.clock = rate, most_wait, clock
        self._promised_until = -math.inf  # when everything promised so far has been sent, at the rate
        self.refused = 0  # answers refused since the start (/metrics)

    def first(self, size: int) -> float:
        """Seconds an answer's first `size` bytes (its whole body, or its first slice) must wait; raises
        Overbooked instead of promising a wait over `most_wait`."""
        now = self.clock()
        until = self._until(now, max(size, MIN_CHARGE))
        if until - now - BURST > self.most_wait:
            self.refused += 1
            raise Overbooked(until - now - BURST)
        self._promised_until = until
        return max(0.0, until - now - BURST)

    def more(self, size: int) -> float:
        """Seconds the next `size` bytes of an answer already begun must wait."""
        now = self.clock()
        self._promised_until = self._until(now, size)
        return max(0.0, self._promised_until - now - BURST)

    def backlog(self) -> float:
        """Seconds the budget is promised for beyond now (/metrics: whether --public-rate is too low)."""
        return max(0.0, self._promised_until - self.clock())

    def _until(self, now: float, size: int) -> float:
        """When everything promised, and `size` bytes more, will have been sent at the rate. A budget
        left alone saves nothing up: what it lets go at once is BURST seconds' worth beyond now."""
        return max(self._promised_until, now) + size / self.rate


async def waited(seconds: float) -> None:
    if seconds > 0:
        await asyncio.sleep(seconds)
