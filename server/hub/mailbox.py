"""Bounded, numbered event logs: one per table, shared by everyone at it, and one per player for what
only that player sees (entry snapshots, private lines, refusals).

Events carry numbers from one counter for the whole hub, so a player's reply merges the logs of the
tables it sits at with its own log, in number order. Sharing a table's log instead of copying each
event into every reader's mailbox keeps a chat line in a lobby of thousands at one append.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from itertools import islice

TABLE_HISTORY = 2000  # events kept per table; an older msgNo gets the table's full state again
PLAYER_HISTORY = 1000  # events kept in a player's own log
RESERVE_AHEAD = 100_000  # event numbers reserved in the store at a time (see Counter)


class Counter:
    """The hub's event numbers, each one above the last: `last` + 1, + 2...

    Numbers go on across restarts, so that a client's msgNo from before one is below every new number.
    The store cannot be written for each event, so numbers are reserved ahead: `reserve(mark)` is called
    when fewer than RESERVE_AHEAD / 2 are left, with a mark RESERVE_AHEAD above the newest number. A run
    that dies then hands out at most numbers up to the last mark written, and the next run starts there.
    """

    def __init__(self, last: int = 0, reserve: Callable[[int], None] | None = None) -> None:
        self.last = last
        self._renew_at = last
        self._reserve = reserve

    def next(self) -> int:
        self.last += 1
        if self.last > self._renew_at:
            self._renew_at = self.last + RESERVE_AHEAD // 2
            if self._reserve is not None:
                self._reserve(self.last + RESERVE_AHEAD)
        return self.last

    def continue_after(self, mark: int) -> None:
        """Go on above `mark`, the numbers an earlier run reserved (and reserve more at the next event)."""
        self.last = self._renew_at = mark


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
