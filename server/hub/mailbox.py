"""Bounded, numbered event logs: one per table, shared by everyone at it, and one per player for what
only that player sees (entry snapshots, private lines, refusals).

Events carry numbers from one counter for the whole hub, so a player's reply merges the logs of the
tables it sits at with its own log, in number order. Sharing a table's log instead of copying each
event into every reader's mailbox keeps a chat line in a lobby of thousands at one append.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from collections.abc import Callable
from itertools import islice

TABLE_HISTORY = 2000  # events kept per table; an older msgNo gets the table's full state again
PLAYER_HISTORY = 1000  # events kept in a player's own log
# Events kept in the lobby's log: each login, logout and game start or end is a few lobby events for
# everyone, and a reader whose msgNo falls behind what is kept gets the whole lobby (150 KB at 7,000
# players) instead of the news. 2,000 events lasted 5 s while players logged in at 200 a second, less
# than a 2-s poller's or a push connection's wait for a busy lobby: with 10,000 push connections each
# frame became a whole state, 3 GB of them at once (docs/performance.md, "push against polling"). At
# about 200 bytes an event, these cost 2 MB.
LOBBY_HISTORY = 10_000
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
        self._transcripts: dict[bool, Transcript] = {}  # made on first use (the lobby's log)

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

    def transcript(self, with_b_only: bool) -> Transcript:
        """The log's lines joined as a reply sends them, kept up to date (see Transcript)."""
        found = self._transcripts.get(with_b_only)
        if found is None:
            found = self._transcripts[with_b_only] = Transcript(self, with_b_only=with_b_only)
        return found


class Transcript:
    """An event log's lines joined as a reply frames them (`/` between the non-empty lines), brought up
    to date with each new event, so that the part after a reader's msgNo is one slice of shared text.

    The lobby's log is read by every poll and gets three lines at every login: building each reply
    from a list of those lines cost O(players) a login once thousands poll (issue 19). `with_b_only`:
    the subscription lines (`b`) included, for the readers who asked for them.
    """

    def __init__(self, log: EventLog, *, with_b_only: bool) -> None:
        self.log, self.with_b_only = log, with_b_only
        self.text = ""
        self.base = 0  # where text[0] stands in everything ever taken in
        self.numbers: list[int] = []  # the events in the text, oldest first
        self.starts: list[int] = []  # where each one's line begins (counted as `base`)
        self.first = 0  # numbers[first] is the oldest event the log still keeps
        self.upto = 0  # the newest event number taken in

    def since(self, seen: int) -> str:
        """The lines of the events numbered above `seen`, joined; the log must cover `seen`."""
        if self.log.last != self.upto:
            self._catch_up()
        at = bisect_right(self.numbers, seen, self.first)
        if at == len(self.numbers):
            return ""
        return self.text[self.starts[at] - self.base :]

    def _catch_up(self) -> None:
        log = self.log
        if not log.covers(self.upto):  # events dropped unseen: start again from what is kept
            self.base += len(self.text)
            self.text, self.numbers, self.starts, self.first = "", [], [], 0
            self.upto = log.dropped
        position = self.base + len(self.text)
        parts = [self.text] if self.text else []
        for number, _, line, b_only in log.since(self.upto):
            if not line or (b_only and not self.with_b_only):
                continue
            if parts:
                position += 1  # the "/" before it
            self.numbers.append(number)
            self.starts.append(position)
            parts.append(line)
            position += len(line)
        self.text = "/".join(parts)
        self.upto = log.last
        self._forget_dropped()

    def _forget_dropped(self) -> None:
        """Lines the log no longer keeps leave the text once they are half of it."""
        self.first = bisect_right(self.numbers, self.log.dropped, self.first)
        if self.first and self.first * 2 >= len(self.numbers):
            cut = self.starts[self.first] - self.base if self.first < len(self.numbers) else len(self.text)
            self.text = self.text[cut:]
            self.base += cut
            del self.numbers[: self.first]
            del self.starts[: self.first]
            self.first = 0
