"""What an arena's wave works out on the event loop before its pairing (server/director/director.py's
`_arena` runs the wave; the pairing itself goes to the worker process): the no-shows of the games
ended since the last wave, who rests after a game, everyone's games and ranks, and who waits for a
game, the longest-waiting first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from server.director.entrants import Entrants
from server.director.history import Board, arena_histories, last_ended, no_shows_still_in
from server.director.pacing import ArenaPace
from server.director.times import joined
from server.engine import arena
from server.hub.hub import Hub
from server.store.hosted import Entry
from server.store.tournaments import TableRecord

# an arena player is paired again this long after their game ended, not at once: they see the result
# (lichess waits a few seconds too before it pairs a small group)
ARENA_REST = 8.0


@dataclass
class ArenaField:
    """Everyone's games as the pairing reads them, their places, and who is at a game now."""

    everyone: dict[str, arena.ArenaPlayer]
    ranks: dict[str, int]
    busy: set[str]  # at one of the tournament's games
    free_since: dict[str, float]  # the wall time their last game ended (0: none yet)


def arena_field(entries: Sequence[Entry], boards: Sequence[Board]) -> ArenaField:
    """In passes over the boards, none per player: at 150 players after 9,000 games, scanning every
    board for each player took 2.3 s of CPU a wave (docs/performance.md)."""
    busy = {nick for board in boards if board.result is None for nick in (board.blue, board.red)}
    games = arena_histories(boards)
    everyone = {e.nick: arena.ArenaPlayer(e.nick, e.rating, games.get(e.nick, ())) for e in entries}
    ranks = {standing.key: standing.rank for standing in arena.standings(list(everyone.values()))}
    ended = last_ended(boards)
    free_since = {nick: ended.get(nick, 0.0) for nick in everyone}
    return ArenaField(everyone, ranks, busy, free_since)


@dataclass
class ArenaMemory:
    """What the director keeps in memory of a running arena between waves."""

    # its games whose no-shows were withdrawn; None until the first look after a (re)start
    ended: set[int] | None = None
    # its ended games -> the timers' time their players' rest ends (see `resting`)
    rest_ends: dict[int, float] = field(default_factory=dict)
    # its tables as read from the store: the games whose result and moves are stored as boards, the
    # others as rows, which the live tables complete at each wave; and the highest count of its changes
    # read (server/store/changes.py), None until the first read after a (re)start, which reads them all
    settled: dict[int, Board] = field(default_factory=dict)
    unsettled: dict[int, TableRecord] = field(default_factory=dict)
    read_up_to: int | None = None

    def tables_read(
        self, changed: Sequence[TableRecord], board: Callable[[TableRecord], Board]
    ) -> list[Board]:
        """All its games, with the tables changed since the last read (`since` read_up_to) as they are
        now, in no particular order; `board`: a table's game. A settled game's board is made once: at
        108,000 games, making them all took half a second a wave."""
        for row in changed:
            if row.result is not None and row.moves is not None:
                self.settled[row.uid] = board(row)
                self.unsettled.pop(row.uid, None)
            else:
                self.unsettled[row.uid] = row
                self.settled.pop(row.uid, None)
        self.read_up_to = max((row.changed for row in changed), default=self.read_up_to or 0)
        return [*self.settled.values(), *map(board, self.unsettled.values())]

    def no_shows(self, entries: Sequence[Entry], boards: Sequence[Board]) -> set[str]:
        """The no-shows of the games ended since the last look; after a (re)start of every ended game, so
        that a no-show whose game ended just before the process stopped is withdrawn too (not one
        withdrawn and back since)."""
        ended = {board.table for board in boards if board.result is not None}
        new = ended - (self.ended or set())
        unseen = [board for board in boards if board.table in new]
        self.ended = ended
        return no_shows_still_in(joined(list(entries)), unseen)

    def resting(self, boards: Sequence[Board], now: float, moment: float) -> set[str]:
        """The players of games ended less than ARENA_REST ago, on the timers (`moment`) from the first
        look that saw the end: its stored wall time says only how much of the rest a restart took, so a
        step of the wall clock (`now`; back an hour: an hour's wait) makes no rest longer."""
        for board in boards:
            if board.result is not None and board.table not in self.rest_ends:
                passed = min(max(0.0, now - (board.ended or 0.0)), ARENA_REST)
                self.rest_ends[board.table] = moment + ARENA_REST - passed
        return {
            nick
            for board in boards
            if board.result is not None and self.rest_ends[board.table] > moment
            for nick in (board.blue, board.red)
        }


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
