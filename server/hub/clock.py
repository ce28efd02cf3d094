"""Game clocks the server owns: deadlines on the event loop, not a polling task per game.

Each timed table has one timer, armed for the moment the player on move runs out of time and
re-armed on every move, pause or time gift. Time comes from a `Timers` object so tests can drive it.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from server.engine.gametype import MAX_ADDED_TIME, MAX_START_TIME

MAX_GIFT = 3600  # the most seconds a player may add to the opponent's clock at once
# The most seconds a clock holds: what the longest game type's own clock reaches (24 h start, 1 h added).
# Gifts never lift a clock above it, so every clock the server sends stays far below 2^31 s, where
# MultiPoints' Integer.parseInt of the `f` line fails (docs/protocol.md, "Clocks").
MAX_CLOCK = MAX_START_TIME + MAX_ADDED_TIME


class Handle(Protocol):
    def cancel(self) -> None: ...


class Timers(Protocol):
    def now(self) -> float: ...

    def call_at(self, when: float, callback: Callable[[], None]) -> Handle: ...


class LoopTimers:
    """The event loop's monotonic clock and `call_at`."""

    def now(self) -> float:
        return asyncio.get_running_loop().time()

    def call_at(self, when: float, callback: Callable[[], None]) -> Handle:
        return asyncio.get_running_loop().call_at(when, callback)


class _ManualHandle:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


@dataclass
class ManualTimers:
    """A clock that moves only when told: `advance(seconds)` fires what falls due, in order."""

    time: float = 1000.0
    _queue: list[tuple[float, int, Callable[[], None], _ManualHandle]] = field(default_factory=list)
    _order: itertools.count = field(default_factory=itertools.count)

    def now(self) -> float:
        return self.time

    def call_at(self, when: float, callback: Callable[[], None]) -> Handle:
        handle = _ManualHandle()
        heapq.heappush(self._queue, (when, next(self._order), callback, handle))
        return handle

    def advance(self, seconds: float) -> None:
        target = self.time + seconds
        while self._queue and self._queue[0][0] <= target:
            when, _, callback, handle = heapq.heappop(self._queue)
            self.time = max(self.time, when)
            if not handle.cancelled:
                callback()
        self.time = target


def _never_flags(player: int) -> None:
    """The flag callback of a stopped clock."""


class Clock:
    """Two players' remaining seconds; the side on move is charged from the server's own time.

    `start` seconds each, `added` after every own move; the remaining time is capped at
    start + added (zagram's records show 630 s with 600 + 30). `on_flag(player)` is called once
    when the player on move reaches zero, even if nobody polls.
    """

    def __init__(
        self,
        timers: Timers,
        start: float,
        added: float,
        on_flag: Callable[[int], None],
        *,
        first: int = 1,
        first_move_grace: tuple[float, float] = (0.0, 0.0),
    ) -> None:
        self.timers = timers
        self.added = added
        self.cap = start + added
        self.remaining = {1: float(start), 2: float(start)}
        # first-move grace (tournaments' sayHi), spent before the clock and gone after the first move
        self.extra = {1: float(first_move_grace[0]), 2: float(first_move_grace[1])}
        # the part of `extra` a restart gave to reconnect: spent first, and never journalled, since each
        # restart gives it afresh (what was left of the last one's is not added to it)
        self.reconnect = {1: 0.0, 2: 0.0}
        self.paused = {1: False, 2: False}
        self.running = first
        self.since = timers.now()
        self.on_flag = on_flag
        self._handle: Handle | None = None
        self.stopped = False
        self.held = False  # standing still for both players: nobody can move (storage is failing)
        self._arm()

    def left(self, player: int) -> float:
        """Seconds left now (the grace not included)."""
        if player != self.running or self.stands_still(player):
            return self.remaining[player]
        used = max(0.0, self.timers.now() - self.since - self.extra[player])
        return self.remaining[player] - used

    def stands_still(self, player: int) -> bool:
        """The player's clock does not run now, whoever is on move (`p` in the `f` line)."""
        return self.paused[player] or self.held or self.stopped

    def _charge(self) -> None:
        player = self.running
        now = self.timers.now()
        if not self.paused[player] and not self.held:
            elapsed = now - self.since
            grace = min(self.extra[player], elapsed)
            self.extra[player] -= grace
            self.reconnect[player] = max(0.0, self.reconnect[player] - grace)
            self.remaining[player] -= elapsed - grace
        self.since = now

    def _arm(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self.stands_still(self.running):
            return
        self._handle = self.timers.call_at(self._deadline(), self._flag)

    def _deadline(self) -> float:
        """When the player on move runs out of time, if their clock runs."""
        player = self.running
        return self.since + self.extra[player] + max(0.0, self.remaining[player])

    def flag_if_due(self) -> None:
        """Flag now if the deadline has passed and its timer has not run yet (a busy event loop runs it
        late): an action that comes after the deadline finds the game lost on time, as a moment later."""
        if self._handle is not None and self.timers.now() >= self._deadline():
            self._handle.cancel()
            self._flag()

    def _flag(self) -> None:
        self._handle = None
        if self.stopped:
            return
        self._charge()
        self.remaining[self.running] = 0.0
        self.stopped = True
        on_flag, self.on_flag = self.on_flag, _never_flags
        on_flag(self.running)

    def moved(self, player: int, next_player: int) -> None:
        """`player` has moved: charge them, add the increment, and run `next_player`'s clock."""
        self._charge()
        self.extra[player] = self.reconnect[player] = 0.0
        # the increment never lifts the time above start + added, but a gift above it stays
        self.remaining[player] = max(
            self.remaining[player], min(self.cap, self.remaining[player] + self.added)
        )
        self.running = next_player
        self._arm()

    def switch(self, next_player: int) -> None:
        """The side on move changed without a move by the running player (e.g. an undo)."""
        self._charge()
        self.running = next_player
        self._arm()

    def grant(self, player: int, seconds: float) -> None:
        """First-move grace for `player` from now on, in place of what was left of it (a team game's
        next player's sayHi, docs/teams.md)."""
        self._charge()
        self.extra[player], self.reconnect[player] = float(seconds), 0.0
        self._arm()

    def room_for_gift(self, player: int) -> float:
        """The most seconds a gift may add to the player's clock now: up to MAX_CLOCK."""
        return max(0.0, MAX_CLOCK - self.left(player))

    def give(self, player: int, seconds: float) -> None:
        """A time gift from the opponent: above start + added it stays, but never above MAX_CLOCK (the
        room refuses a larger one first)."""
        self._charge()
        self.remaining[player] = min(MAX_CLOCK, self.remaining[player] + seconds)
        self._arm()

    def pause(self, player: int, paused: bool) -> None:
        self._charge()
        self.paused[player] = paused
        self._arm()

    def state(self) -> tuple[float, float, bool, bool, float, float]:
        """Both players' seconds left, paused flags and unspent first-move grace (not a restart's), for
        the journal (an array in JSON). A tuple, not a list: every move's journal entry keeps one while
        the game lasts, and a tuple of numbers is one object the garbage collector stops tracking (issue
        19.2)."""
        return (
            round(self.left(1), 3),
            round(self.left(2), 3),
            self.paused[1],
            self.paused[2],
            round(self.grace_left(1) - self._spent_first(1, self.reconnect[1]), 3),
            round(self.grace_left(2) - self._spent_first(2, self.reconnect[2]), 3),
        )

    def grace_left(self, player: int) -> float:
        return self._spent_first(player, self.extra[player])

    def _spent_first(self, player: int, seconds: float) -> float:
        """What is left now of `seconds` of the player's grace that are spent first."""
        if player != self.running or self.stands_still(player):
            return seconds
        return max(0.0, seconds - (self.timers.now() - self.since))

    def set_state(self, state: Sequence[float | bool], *, grace: float = 0.0) -> None:
        """Take up a journalled state; `grace` more seconds (a restart's) pass before the player on move is
        charged."""
        left1, left2, paused1, paused2, extra1, extra2 = state
        # a journal written before gifts were bounded may hold more than MAX_CLOCK: it comes back at it
        self.remaining = {1: min(MAX_CLOCK, float(left1)), 2: min(MAX_CLOCK, float(left2))}
        self.paused = {1: bool(paused1), 2: bool(paused2)}
        self.extra = {1: float(extra1), 2: float(extra2)}
        self.reconnect = {1: 0.0, 2: 0.0}
        self.extra[self.running] += grace
        self.reconnect[self.running] = grace
        self.since = self.timers.now()
        self._arm()

    def hold(self) -> None:
        """Stand still until `release`: while storage fails nobody can move, so nobody runs out of time."""
        if not self.held:
            self._charge()
            self.held = True
            self._arm()

    def release(self) -> None:
        if self.held:
            self.held = False
            self.since = self.timers.now()
            self._arm()

    def stop(self) -> None:
        """The game is over: freeze both clocks. A stopped clock never flags, so it lets go of its
        room's callback: the room and its clock were a reference cycle, which kept a closed table's
        whole game in memory until the next full collection (issue 19.2)."""
        self.on_flag = _never_flags
        if not self.stopped:
            self._charge()
            self.stopped = True
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
