"""Numbered events for one reader, bounded, with a wake-up for long polls."""

from __future__ import annotations

import asyncio
from collections import deque
from itertools import islice

HISTORY = 1000  # events kept per reader; an older msgNo gets the full state again


class Mailbox:
    """Events numbered 1, 2, 3... Each belongs to a table section (`q<table>`).

    Two parallel deques instead of a deque of tuples: a busy lobby copies every event into every
    reader's mailbox, and this keeps each copy at two pointers. A subscription line (getBMsg only)
    is stored with the table number negated, minus one.
    """

    def __init__(self, history: int = HISTORY) -> None:
        self.tables: deque[int] = deque(maxlen=history)
        self.lines: deque[str] = deque(maxlen=history)
        self.last = 0
        self._waiter: asyncio.Event | None = None

    def post(self, table: int, line: str, *, b_only: bool = False) -> int:
        self.last += 1
        self.tables.append(-1 - table if b_only else table)
        self.lines.append(line)
        if self._waiter is not None:
            self._waiter.set()
        return self.last

    def covers(self, seen: int) -> bool:
        """True when every event after `seen` is still kept, so no full state is needed."""
        return self.last - len(self.lines) <= seen <= self.last

    def since(self, seen: int) -> list[tuple[int, str, bool]]:
        """(table, line, b_only) of the events numbered above `seen`, oldest first."""
        count = min(self.last - seen, len(self.lines))
        if count <= 0:
            return []
        tables = list(islice(reversed(self.tables), count))
        lines = list(islice(reversed(self.lines), count))
        return [
            (-1 - table, line, True) if table < 0 else (table, line, False)
            for table, line in zip(reversed(tables), reversed(lines), strict=True)
        ]

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
