"""What an arena's wave works out on the event loop before its pairing (server/director/director.py's
`_arena` runs the wave; the pairing itself goes to the worker process): the no-shows of the games
ended since the last wave, who rests after a game, everyone's games and ranks, and who waits for a
game, the longest-waiting first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from server.director.entrants import Entrants
from server.director.history import Board, no_shows_still_in
from server.director.ledger import ArenaField, ArenaLedger
from server.director.pacing import ArenaPace
from server.director.times import joined
from server.hub.hub import Hub
from server.store.hosted import Entry
from server.store.tournaments import TableRecord

# an arena player is paired again this long after their game ended, not at once: they see the result
# (lichess waits a few seconds too before it pairs a small group)
ARENA_REST = 8.0


@dataclass
class ArenaMemory:
    """What the director keeps in memory of a running arena between waves: its games, and what the
    waves worked out of them, so that a wave works on the games changed since the last one."""

    # its tables as read from the store: the games whose result and moves are stored as boards, the
    # others as rows, which the live tables complete at each wave; and the highest count of its changes
    # read (server/store/changes.py), None until the first read after a (re)start, which reads them all
    settled: dict[int, Board] = field(default_factory=dict)
    unsettled: dict[int, TableRecord] = field(default_factory=dict)
    read_up_to: int | None = None
    # the settled games counted per player; None: to be counted again (a settled game changed)
    ledger: ArenaLedger | None = None
    # this wave's boards of the games not settled, under the entrants' nicks now
    live: dict[int, Board] = field(default_factory=dict)
    # its games whose no-shows were withdrawn; None until the first look after a (re)start
    ended: set[int] | None = None
    unlooked: set[int] = field(default_factory=set)  # its tables changed since that look
    # its ended games -> the timers' time their players' rest ends (see `resting`)
    rest_ends: dict[int, float] = field(default_factory=dict)
    unrested: set[int] | None = None  # its tables changed since the last look at rests; None: every one
    rest_not_over: set[int] = field(default_factory=set)  # the games whose rest had not ended then

    def tables_read(
        self, changed: Sequence[TableRecord], board: Callable[[TableRecord], Board], entrants: Entrants
    ) -> list[Board]:
        """Take in the tables changed since the last read (`since` read_up_to) as they are now, and
        count the games settled since; the games not settled, as they are now (`board`: a table's game).
        A settled game's board is made once: at 108,000 games, making them all took half a second a
        wave; a settled game that changed (an account's deletion renames its players) or a nick now
        another entrant's has every game counted again."""
        fresh = []
        for row in changed:
            self.unlooked.add(row.uid)
            if self.unrested is not None:
                self.unrested.add(row.uid)
            kept = self.settled.pop(row.uid, None)
            if row.result is not None and row.moves is not None:
                self.settled[row.uid] = made = board(row)
                self.unsettled.pop(row.uid, None)
                if kept is None:
                    fresh.append(made)
                elif kept != made:
                    self.ledger = None
            else:
                self.unsettled[row.uid] = row
                if kept is not None:
                    self.ledger = None
        self.read_up_to = max((row.changed for row in changed), default=self.read_up_to or 0)
        if self.ledger is None or self.ledger.outdated(entrants):
            self.ledger, fresh = ArenaLedger(), list(self.settled.values())
        self.ledger.add(fresh, entrants)
        live = [board(row) for row in self.unsettled.values()]
        self.live = {board.table: board for board in entrants.boards(live)}
        return live

    def field(self, entries: Sequence[Entry]) -> ArenaField:
        """Everyone's games as the pairing reads them, their places, who is busy and since when free."""
        assert self.ledger is not None, "a wave reads its tables first"
        return self.ledger.field(entries, self.live.values())

    def no_shows(self, entries: Sequence[Entry]) -> set[str]:
        """The no-shows of the games ended since the last look; after a (re)start of every ended game, so
        that a no-show whose game ended just before the process stopped is withdrawn too (not one
        withdrawn and back since). A settled game not changed since the last look had ended then."""
        if self.ended is None:
            self.ended, tables = set(), [*self.settled, *self.live]
        else:
            tables = [*(self.unlooked | self.live.keys())]
        self.unlooked = set()
        unseen = []
        for table in tables:
            board = self._board(table)
            if board.result is None:
                self.ended.discard(table)
            elif table not in self.ended:
                self.ended.add(table)
                unseen.append(board)
        return no_shows_still_in(joined(list(entries)), unseen)

    def resting(self, now: float, moment: float) -> set[str]:
        """The players of games ended less than ARENA_REST ago, on the timers (`moment`, which never goes
        back) from the first look that saw the end: its stored wall time says only how much of the rest a
        restart took, so a step of the wall clock (`now`; back an hour: an hour's wait) makes no rest
        longer."""
        tables = [*self.settled, *self.live] if self.unrested is None else self.unrested | self.live.keys()
        self.unrested = set()
        for table in tables:
            board = self._board(table, named=False)
            if board.result is not None and table not in self.rest_ends:
                passed = min(max(0.0, now - (board.ended or 0.0)), ARENA_REST)
                self.rest_ends[table] = moment + ARENA_REST - passed
                self.rest_not_over.add(table)
        self.rest_not_over = {table for table in self.rest_not_over if self.rest_ends[table] > moment}
        return {
            nick
            for table in self.rest_not_over
            if (board := self._board(table)).result is not None
            for nick in (board.blue, board.red)
        }

    def _board(self, table: int, named: bool = True) -> Board:
        """A game as this wave reads it, under the entrants' nicks now (`named`, else perhaps under those
        it was set up under)."""
        assert self.ledger is not None, "a wave reads its tables first"
        board = self.live.get(table) or self.settled[table]
        return self.ledger.named(board) if named and table in self.settled else board


def waiting(
    hub: Hub,
    entrants: Entrants,
    entries: Sequence[Entry],
    ready: ArenaField,
    resting: set[str],
    pace: ArenaPace,
) -> tuple[list[str], dict[str, tuple[str, str | None]]]:
    """The entrants to pair now, the longest-waiting first (an odd one out is the latest), and the nick
    and seat each still in plays as: here, at no game of the tournament or elsewhere (one at another
    game is paired once it is over), not resting, and not at the bound of arena games an hour."""
    playing_as = {e.nick: entrants.playing_as(hub, e.nick) for e in entries if not e.withdrawn}
    free = sorted(
        (
            nick
            for nick, (online, seat) in playing_as.items()
            if nick not in ready.busy
            and nick not in resting
            and seat is not None
            and hub.here(online, seat)
            and not hub.playing(online)
        ),
        key=lambda nick: ready.free_since[nick],
    )
    # the bound is told under the nick they play as
    entrant = {playing_as[nick][0]: nick for nick in free}
    return [entrant[online] for online in pace.pairable(list(entrant))], playing_as
