"""Bounded, numbered event logs: one per table, shared by everyone at it, and one per player for what
only that player sees (entry snapshots, private lines, refusals).

Events carry numbers from one counter for the whole hub, so a player's reply merges the logs of the
tables it sits at with its own log, in number order. Sharing a table's log instead of copying each
event into every reader's mailbox keeps a chat line in a lobby of thousands at one append.
"""

from __future__ import annotations

from collections import deque
from itertools import count, islice

TABLE_HISTORY = 2000  # events kept per table; an older msgNo gets the table's full state again
PLAYER_HISTORY = 1000  # events kept in a player's own log


class Counter:
    """The hub's event numbers, 1, 2, 3..."""

    def __init__(self) -> None:
        self._numbers = count(1)
        self.last = 0

    def next(self) -> int:
        self.last = next(self._numbers)
        return self.last


class EventLog:
    """Events (number, table, line, subscription line or not), oldest dropped first.

    Parallel deques rather than a deque of tuples: fewer objects for the garbage collector to walk.
    """

    def __init__(self, history: int) -> None:
        self.numbers: deque[int] = deque(maxlen=history)
        self.tables: deque[int] = deque(maxlen=history)
        self.lines: deque[str] = deque(maxlen=history)
        self.b_only: deque[bool] = deque(maxlen=history)
        self.dropped = 0  # the newest number no longer kept

    @property
    def last(self) -> int:
        return self.numbers[-1] if self.numbers else self.dropped

    def post(self, number: int, table: int, line: str, *, b_only: bool = False) -> None:
        if len(self.numbers) == self.numbers.maxlen:
            self.dropped = self.numbers[0]
        self.numbers.append(number)
        self.tables.append(table)
        self.lines.append(line)
        self.b_only.append(b_only)

    def covers(self, seen: int) -> bool:
        """True when no event numbered above `seen` has been dropped."""
        return seen >= self.dropped

    def since(self, seen: int) -> list[tuple[int, int, str, bool]]:
        """(number, table, line, b_only) of the events numbered above `seen`, oldest first."""
        found = 0
        for number in reversed(self.numbers):
            if number <= seen:
                break
            found += 1
        if not found:
            return []
        parts = (reversed(self.numbers), reversed(self.tables), reversed(self.lines), reversed(self.b_only))
        newest_first = list(zip(*(islice(part, found) for part in parts), strict=True))
        newest_first.reverse()
        return newest_first
