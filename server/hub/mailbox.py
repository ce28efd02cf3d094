"""Numbered events for one reader, bounded, with a wake-up for long polls."""

from __future__ import annotations

import asyncio
from collections import deque

HISTORY = 2000  # events kept per reader; an older msgNo gets the full state again


class Mailbox:
    """Events numbered 1, 2, 3... Each event belongs to a table section (`q<table>`).

    `b_only` events (subscription lines) go only to getBMsg readers.
    """

    def __init__(self, history: int = HISTORY) -> None:
        self.events: deque[tuple[int, int, str, bool]] = deque(maxlen=history)
        self.last = 0
        self._waiter: asyncio.Event | None = None

    def post(self, table: int, line: str, *, b_only: bool = False) -> int:
        self.last += 1
        self.events.append((self.last, table, line, b_only))
        if self._waiter is not None:
            self._waiter.set()
        return self.last

    def covers(self, seen: int) -> bool:
        """True when every event after `seen` is still kept, so no full state is needed."""
        if seen > self.last:
            return False
        oldest = self.events[0][0] if self.events else self.last + 1
        return seen >= oldest - 1

    def since(self, seen: int) -> list[tuple[int, str, bool]]:
        """(table, line, b_only) of the events numbered above `seen`, oldest first."""
        found = []
        for number, table, line, b_only in reversed(self.events):
            if number <= seen:
                break
            found.append((table, line, b_only))
        found.reverse()
        return found

    async def wait(self, seen: int, timeout: float) -> None:
        """Return when an event above `seen` exists or the time is up."""
        if self.last > seen or timeout <= 0:
            return
        self._waiter = self._waiter or asyncio.Event()
        self._waiter.clear()
        try:
            await asyncio.wait_for(self._waiter.wait(), timeout)
        except TimeoutError:
            pass
