"""The one way events leave the owner of a table or a session: publish an event for a table or for one
player; the bus numbers it and delivers it to the sessions that follow it, and wakes their long polls.

In-process today (`LocalBus`): a table's channel is its shared event log, read by everyone at the
table; a player's channel is the player's own log. A multi-process version puts a network bus (Redis
pub/sub, lanes hashed by table or player) behind the same `EventBus` methods. The game code (games,
chats, invitations, sessions, the lobby's state, and the rooms through the callbacks the tables give
them) sees only `EventBus`; the tables (which open and close a table's channel), the stream (which
reads the channels and waits on them) and the restore (numbering after a restart) use `LocalBus`.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from server.hub.clock import Handle, Timers
from server.hub.mailbox import Counter, EventLog
from server.hub.model import LOBBY, Player
from server.hub.persistence import Persistence
from server.logs import Fields

log = logging.getLogger(__name__)

FIRST_J = 1  # the `j` of a reply before any event: never 0, which a reader sends back as "all from the start"
RENUMBER_AT = 2**30  # event numbers start again at a restart above this: MultiPoints reads j as a Java int
# The lobby's news wakes the long polls waiting on the lobby at most this often: every reader in the lobby
# waits on it, so each lobby event (a login, a game starting or ending, lobby chat) would answer all of
# them at once, thousands of replies, as often as the events come. A lone event wakes them at once; the
# events after it within this time go together, one wake later (issue 19).
LOBBY_WAKE_EVERY = 1.0
# ... and the push connections waiting on it (server/web/push.py) at most this often: a push connection
# is a reader that never goes away, so a busy lobby would send each of them a frame a second, twice what
# a client polling every 2 s gets, and thousands of them cost a core (docs/performance.md, "push against
# polling"). Their own tables' events and their own lines still come at once.
PUSHED_LOBBY_WAKE_EVERY = 2.0
# Readers woken in one turn of the event loop: the rest in the turns after, so that waking thousands at
# once leaves the loop free in between to accept connections and carry moves.
WAKE_SLICE = 256
WAIT_TICK = 0.01  # seconds: a long poll with nothing new ends on the first tick after its wait is up


class EventBus(Protocol):
    """What the game code may do with events: nothing else reaches another session."""

    @property
    def last(self) -> int:
        """The newest event number handed out."""
        ...

    def publish(self, uid: int, line: str, *, b_only: bool = False) -> int:
        """An event for everyone at table `uid` (for the lobby: anonymous readers too); its number.
        `b_only`: only for readers who asked for subscription lines (`b`)."""
        ...

    def relay(self, line: str, *, b_only: bool = False) -> int:
        """A lobby line of another member of a cluster, for the readers here: published, not shared again."""
        ...

    def share(self, line: str) -> None:
        """A lobby line for the other members of a cluster alone, which no reader here is shown."""
        ...

    def send(self, player: Player, uid: int, line: str) -> None:
        """An event for one player only, in the section of table `uid`."""
        ...

    def mark(self) -> int:
        """A number with no event: where a player's view of a table starts again."""
        ...

    def nudge(self, *players: Player) -> None:
        """What every reply repeats changed for these players (invitations): end their long polls."""
        ...

    def watch(self, listener: Callable[[int], None]) -> None:
        """Call `listener(uid)` after every event at a game table (the AI players look then)."""
        ...


@dataclass(eq=False)
class Channel:
    log: EventLog
    waiters: set[asyncio.Future[None]] = field(default_factory=set)  # long polls to wake on the next event
    # a table of this member followed from other members of a cluster: member -> its people here
    members: dict[str, int] = field(default_factory=dict)

    def wake_waiters(self) -> None:
        wake_in_slices(self.waiters)


class _Pace:
    """Wakes the readers waiting on the lobby at once on a lone event, then at most once every `every`
    seconds: the events in between go together, one wake later (issue 19)."""

    __slots__ = ("every", "timers", "waiters", "woken_at", "due")

    def __init__(self, every: float, timers: Timers, waiters: set[asyncio.Future[None]]) -> None:
        self.every, self.timers, self.waiters = every, timers, waiters
        self.woken_at = float("-inf")  # timers' time of the last wake
        self.due: Handle | None = None  # the next one, when news waits for it

    def news(self) -> None:
        if self.due is not None:
            return  # this event goes with the wake already due
        due = self.woken_at + self.every
        if self.timers.now() >= due:
            self.wake()
        else:
            self.due = self.timers.call_at(due, self.wake)

    def wake(self) -> None:
        self.due = None
        self.woken_at = self.timers.now()
        wake_in_slices(self.waiters)


class LocalBus:
    """The in-process bus: the only owner of the event numbering, the channels and the waiting polls."""

    def __init__(
        self,
        persistence: Callable[[], Persistence],
        table_history: int,
        timers: Timers,
        lobby_history: int | None = None,
    ) -> None:
        self.counter = Counter(FIRST_J, reserve=lambda mark: persistence().events_reserved(mark))
        self.channels: dict[int, Channel] = {}
        self.table_history = table_history
        self.lobby_history = lobby_history or table_history
        self.timers = timers
        self._lobby_polls: _Pace | None = None  # the long polls waiting on the lobby: its channel's waiters
        self.pushed_lobby: set[asyncio.Future[None]] = set()  # the push connections waiting on it
        self._lobby_pushes = _Pace(PUSHED_LOBBY_WAKE_EVERY, timers, self.pushed_lobby)
        self._listeners: list[Callable[[int], None]] = []
        # a member of a cluster hears every lobby line made here, to share it (server/cluster/lobby.py)
        self.lobby_listener: Callable[[str, bool], None] | None = None
        # ... and the events of its tables that people of other members follow, and the lines for those
        # people alone (server/hub/visitors.py)
        self.table_listener: Callable[[int, dict[str, int], str, bool], None] | None = None
        self.visitor_listener: Callable[[Player, int, str], None] | None = None
        self._deadlines: _Deadlines | None = None  # the long polls' time-outs, on the running loop

    @property
    def last(self) -> int:
        return self.counter.last

    def open(self, uid: int) -> Channel:
        """The channel of a new table (one there before it is closed first)."""
        self.close(uid)
        channel = self.channels[uid] = Channel(
            EventLog(self.lobby_history if uid == LOBBY else self.table_history)
        )
        if uid == LOBBY:
            self._lobby_polls = _Pace(LOBBY_WAKE_EVERY, self.timers, channel.waiters)
        return channel

    def close(self, uid: int) -> None:
        """The polls waiting on the channel end: nothing wakes them on it any more, and a table closed
        may open again (another member's, taken over) with a channel of its own, which they would miss
        until their time is out."""
        channel = self.channels.pop(uid, None)
        if channel is not None:
            channel.wake_waiters()

    def publish(self, uid: int, line: str, *, b_only: bool = False) -> int:
        channel = self.channels[uid]
        number = self.counter.next()
        channel.log.post(number, uid, line, b_only=b_only)
        if uid == LOBBY:
            assert self._lobby_polls is not None  # opened with the lobby's channel
            self._lobby_polls.news()
            self._lobby_pushes.news()
            if self.lobby_listener is not None:
                self.lobby_listener(line, b_only)
            return number
        channel.wake_waiters()
        for listener in self._listeners:
            listener(uid)
        if channel.members and self.table_listener is not None:
            self.table_listener(uid, channel.members, line, b_only)
        return number

    def relay(self, line: str, *, b_only: bool = False) -> int:
        """A lobby line of another member, for the readers here: published, but not shared again."""
        listener, self.lobby_listener = self.lobby_listener, None
        try:
            return self.publish(LOBBY, line, b_only=b_only)
        finally:
            self.lobby_listener = listener

    def share(self, line: str) -> None:
        if self.lobby_listener is not None:
            self.lobby_listener(line, False)

    def send(self, player: Player, uid: int, line: str) -> None:
        if player.visiting_from:  # a person of another member: it numbers the line into their stream
            if self.visitor_listener is not None:
                self.visitor_listener(player, uid, line)
            return
        player.inbox.post(self.counter.next(), uid, line)
        for waiter in player.waiters:
            wake(waiter)

    def mark(self) -> int:
        return self.counter.next()

    def nudge(self, *players: Player) -> None:
        # Invitation lines (vg, vs, vr) are state repeated in every reply, not events: a long poll waiting
        # for an event would show a change only when it timed out.
        for player in players:
            if player.waiters:
                for waiter in player.waiters:
                    wake(waiter)
            else:  # between two polls: the next one is answered at once (Stream.wait_for_news)
                player.nudged = True

    def watch(self, listener: Callable[[int], None]) -> None:
        self._listeners.append(listener)

    def wake_all(self) -> None:
        """End every long poll (a clean stop)."""
        for channel in self.channels.values():
            channel.wake_waiters()
        wake_in_slices(self.pushed_lobby)

    async def wait(
        self,
        uids: list[int],
        player: Player | None,
        timeout: float,
        early: asyncio.Future[None] | None = None,
        pushed: bool = False,
    ) -> None:
        """Until the next event at one of `uids` or for `player`, `timeout` seconds, or a result of
        `early` (which is then the future the events wake). `pushed`: a push connection waits, whose
        lobby news comes at most every PUSHED_LOBBY_WAKE_EVERY."""
        # a bare future, and its time-out among everyone's (_Deadlines): no task, no cancellation and no
        # timer of its own per poll, which a server full of long polls would pay thousands of times a second
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future() if early is None else early
        for uid in uids:
            (self.pushed_lobby if pushed and uid == LOBBY else self.channels[uid].waiters).add(waiter)
        if player is not None:
            player.waiters.add(waiter)
        deadlines = self._deadlines
        if deadlines is None or deadlines.loop is not loop:
            deadlines = self._deadlines = _Deadlines(loop)
        tick = deadlines.add(waiter, timeout)
        try:
            await waiter
        finally:
            deadlines.discard(waiter, tick)
            for uid in uids:
                channel = self.channels.get(uid)
                if channel is not None:
                    channel.waiters.discard(waiter)
            if pushed:
                self.pushed_lobby.discard(waiter)
            if player is not None:
                player.waiters.discard(waiter)

    def continue_after(self, mark: int) -> None:
        """Event numbers go on above every number the earlier runs handed out: a msgNo from before the
        restart is then older than anything kept, and gets the whole state (never `sd`, never a gap)."""
        if mark >= RENUMBER_AT:
            log.info("event numbers start again %s", Fields(after=mark))
            mark = 0  # every old msgNo is then beyond j, which also gets the whole state
        self.counter.continue_after(max(mark, FIRST_J, self.counter.last))
        self.channels[LOBBY].log.dropped = self.counter.last  # for the anonymous stream as well


class _Deadlines:
    """The long polls' time-outs, by the tick (WAIT_TICK) they end on, woken by one timer that runs while
    any poll waits. A timer of the loop for each poll cost its handle, its context and two changes to
    the loop's heap of timers: about 1.8 us and three more objects for the collector to walk, thousands
    of times a second; a set for each tick costs a tenth of it (issue 19.2)."""

    __slots__ = ("loop", "ticks", "_done", "_timer")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.ticks: dict[int, set[asyncio.Future[None]]] = {}
        self._done = math.floor(loop.time() / WAIT_TICK)  # every tick up to this one is woken
        self._timer: asyncio.TimerHandle | None = None

    def add(self, waiter: asyncio.Future[None], timeout: float) -> int:
        """Wake `waiter` on the first tick at least `timeout` seconds away; the tick, for `discard`."""
        now = self.loop.time()
        if self._timer is None:  # nothing waits: the ticks since the last one went by without work
            self._done = math.floor(now / WAIT_TICK)
            self._timer = self.loop.call_at((self._done + 1) * WAIT_TICK, self._tick)
        tick = max(math.ceil((now + timeout) / WAIT_TICK), self._done + 1)
        waiting = self.ticks.get(tick)
        if waiting is None:
            waiting = self.ticks[tick] = set()
        waiting.add(waiter)
        return tick

    def discard(self, waiter: asyncio.Future[None], tick: int) -> None:
        waiting = self.ticks.get(tick)
        if waiting is not None:
            waiting.discard(waiter)
            if not waiting:  # so that the timer stops once nothing waits
                del self.ticks[tick]

    def _tick(self) -> None:
        now = math.floor(self.loop.time() / WAIT_TICK)
        for tick in range(self._done + 1, now + 1):
            for waiter in self.ticks.pop(tick, ()):
                wake(waiter)
        self._done = max(self._done, now)
        self._timer = self.loop.call_at((self._done + 1) * WAIT_TICK, self._tick) if self.ticks else None


def wake_in_slices(waiters: set[asyncio.Future[None]]) -> None:
    """Wake every waiter: WAKE_SLICE now, the rest a slice a turn of the loop."""
    if len(waiters) <= WAKE_SLICE:
        for waiter in waiters:
            wake(waiter)
        return
    _wake_slice(list(waiters), 0)


def _wake_slice(waiters: list[asyncio.Future[None]], start: int) -> None:
    end = start + WAKE_SLICE
    for waiter in waiters[start:end]:
        wake(waiter)
    if end < len(waiters):
        asyncio.get_running_loop().call_soon(_wake_slice, waiters, end)


def wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
