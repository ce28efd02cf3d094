"""A tournament's tables as its public answers list them, kept between builds (docs/tournaments.md, "How
fresh the answers are"): a build reads from the store only the rows changed since the last build's count
of the tournament's changes (server/store/changes.py), as an arena's wave does, and encodes only their
entries; every other table's entry is kept as its JSON bytes and joined. At 108,000 games a whole build
read, made and encoded every table, 3.4 to 4.8 s on the event loop (docs/performance.md).

A table's entry is kept for good once nothing but a count can change it: its result (or its cancel) is
stored and it has no open table on this server (a table closed here never opens again). The others (being
played, over and not stored yet, or stored with their table still open) are made again at every build
from the hub, as the whole build made every one.

The standings are kept the same way: what an organiser's are made of (`StandingsSums`), changed by the
tables whose summary changed, and an arena's settled games counted as they settle
(server/director/views.py, `KeptArena`), so a build counts the changes, not every game.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from server.director.history import Board
from server.director.views import ArenaBoards, KeptArena
from server.engine.standings import PairSums, Played
from server.hub.hub import Hub
from server.store.database import utc_text
from server.store.tournaments import TableRecord, Tournaments

Now = tuple[str, str | None, int | None]  # a table's state, result and moves now
Summary = tuple[str, str, str, str | None]  # state, blue, red, result: what an organiser's standings read


def encoded(value: Any) -> bytes:
    """JSON as json.dumps writes it by default, which json_response and the shared answers use."""
    return json.dumps(value).encode()


async def joined(fields: list[tuple[str, bytes | list[bytes]]]) -> bytes:
    """A JSON object of fields already encoded (a list: an array of them), the bytes json.dumps gives for
    the same dict. Joined in a thread when big: bytes.join copies without the GIL past a megabyte, and
    24 MB of entries took 30 ms of the loop."""
    pieces = [
        (name, value if isinstance(value, bytes) else None, value if isinstance(value, list) else [])
        for name, value in fields
    ]
    if sum(len(items) for _, _, items in pieces) < BIG:
        return _joined(pieces)
    return await asyncio.to_thread(_joined, pieces)


BIG = 1_000  # entries: joined in a thread from this many


def _joined(pieces: list[tuple[str, bytes | None, list[bytes]]]) -> bytes:
    return b"".join(
        [
            b"{",
            b", ".join(
                encoded(name) + b": " + (value if value is not None else b"[" + b", ".join(items) + b"]")
                for name, value, items in pieces
            ),
            b"}",
        ]
    )


def now_of(hub: Hub, row: TableRecord) -> Now:
    """A tournament table's state, result and moves now: the store's, or its live table's."""
    live = hub.tables.tournament_game(row.uid)
    result = row.result or (str(live.game.result) if live and live.game.result is not None else None)
    if row.cancelled or (live is not None and live.cancelled):
        state = "cancelled"
    elif live is not None and live.game.result is None:
        state = "playing"
    else:
        state = "finished" if result is not None else "closed"
    return state, result, len(live.game.moves) if live is not None else None


def entry(row: TableRecord, now: Now) -> dict[str, Any]:
    """The table as `/tournament/<name>` lists it."""
    state, result, moves = now
    return {
        "table": row.uid,
        "round": row.round,
        "created": utc_text(row.created_at),
        "blue": row.blue,
        "red": row.red,
        "gameType": row.game_type,
        "state": state,
        "moves": moves,
        "result": result,
        "game": row.game_number,
        "sgf": f"/sgf/{row.game_number}" if row.game_number is not None else None,
    }


class KeptTables:
    """One tournament's tables between builds: every entry encoded, oldest (lowest table) first, and for
    one the server runs, the boards of the games settled (result and moves stored)."""

    def __init__(self, with_boards: bool) -> None:
        self.read_up_to: int | None = None  # the highest count read; None: nothing read yet
        self.entries: dict[int, bytes] = {}  # every table's; an open one's as last built
        # their tables in table order: a table read after a higher one (numbers come in blocks to a
        # cluster's members, and PostgreSQL commits out of order) is sorted into a list of numbers, about
        # a millisecond at 108,000 tables, where re-sorting the entries took 20 to 50 ms of the loop
        self.order: list[int] = []
        self.summaries: dict[int, Summary] = {}  # every table's, as the standings count it now
        self.sums = StandingsSums()  # what an organiser's standings are made of: the summaries counted
        self.open: dict[int, TableRecord] = {}  # the tables whose entry the hub may still change
        self.with_boards = with_boards
        self.boards: dict[int, Board] = {}  # the settled games
        self.arena = KeptArena()  # ... as one the server runs, an arena, counts them
        self.unsettled: dict[int, TableRecord] = {}  # the other games: made again at each build
        # a tournament's two answers may be built at once: one build at a time, its read and its
        # standings in order (the read and the kept arena's count change what is kept)
        self.building = asyncio.Lock()
        self.rows_read = 0  # rows the store returned since the start (the tests count them)

    async def read(
        self,
        store: Tournaments,
        name: str,
        hub: Hub,
        board: Callable[[TableRecord], Board] | None,
        with_sums: bool = False,
    ) -> Snapshot:
        """Take in the rows changed since the last read and make the open tables' entries now;
        `with_sums`: the snapshot has a copy of what an organiser's standings are made of. The caller
        holds `building`."""
        changed = await store.tables(name, self.read_up_to)
        self.rows_read += len(changed)
        self._take_in(changed, board)
        open_now = {uid: now_of(hub, row) for uid, row in self.open.items()}
        for uid, now in open_now.items():
            row = self.open[uid]
            self.entries[uid] = encoded(entry(row, now))
            self._summarise(uid, (now[0], row.blue, row.red, now[1]))
            if (row.result is not None or row.cancelled) and hub.tables.tournament_game(uid) is None:
                del self.open[uid]  # nothing but a count changes it now
        boards, arena = None, None
        if board is not None:
            made = {uid: board(row) for uid, row in self.unsettled.items()}
            boards = functools.partial(self._boards_now, made)
            arena = ArenaBoards(self.arena, lambda: list(self.boards.values()), list(made.values()))
        unsettled = [(row, open_now[uid]) for uid, row in self.open.items() if _unsettled(row)]
        return Snapshot(
            list(map(self.entries.__getitem__, self.order)),
            self.sums.copy() if with_sums else None,
            self.order[:],
            {uid for uid, now in open_now.items() if now[0] == "playing"},
            boards,
            arena,
            lambda: tuple(now_of(hub, row) for row, _ in unsettled),
            tuple(now for _, now in unsettled),
        )

    def _boards_now(self, made: dict[int, Board]) -> list[Board]:
        """Every game in table order, the settled as kept and the others as this build `made` them: for
        the build that read them, while it holds `building` (a kept arena's count needs none of it)."""
        return [self.boards.get(uid) or made[uid] for uid in self.order]

    def _summarise(self, uid: int, summary: Summary) -> None:
        """The table's summary now: its old one taken out of the sums, the new one counted."""
        old = self.summaries.get(uid)
        if old != summary:
            if old is not None:
                self.sums.count(old, -1)
            self.sums.count(summary, 1)
            self.summaries[uid] = summary

    def _take_in(self, changed: list[TableRecord], board: Callable[[TableRecord], Board] | None) -> None:
        last, late = self.order[-1] if self.order else 0, False
        for row in changed:
            if row.uid not in self.entries:
                late = late or row.uid < last
                self.order.append(row.uid)
                self.entries[row.uid] = b""
            self.open[row.uid] = row
            if board is not None:
                was_settled = self.boards.pop(row.uid, None) is not None
                self.unsettled.pop(row.uid, None)
                if was_settled:
                    self.arena.changed()
                if row.result is not None and row.moves is not None:
                    self.boards[row.uid] = board(row)  # settled: the hub has no part in it
                    if not was_settled:
                        self.arena.settled(self.boards[row.uid])
                else:
                    self.unsettled[row.uid] = row
        if late:
            self.order.sort()
        self.read_up_to = max((row.changed for row in changed), default=self.read_up_to or 0)


def _unsettled(row: TableRecord) -> bool:
    """Not settled in the store: the hub's part of the answer, compared at every request."""
    return row.result is None and not row.cancelled


@dataclass
class StandingsSums:
    """What an organiser's standings are made of (docs/tournaments.md, "Standings"), kept with the
    tables and changed only by the tables whose summary changed, so that a build ranks the pairs of
    players instead of summing every game (at 108,000 games 0.63 s of CPU a build: docs/performance.md):
    the finished games per pair of players, each player's tables not cancelled (whoever has one is
    listed) and their games being played."""

    pairs: PairSums = field(default_factory=PairSums)
    tables: Counter[str] = field(default_factory=Counter)
    playing: Counter[str] = field(default_factory=Counter)

    def count(self, summary: Summary, times: int) -> None:
        """Count the table's summary `times` times (-1: take it out)."""
        state, blue, red, result = summary
        if state == "cancelled":
            return
        _add(self.tables, (blue, red), times)
        if state == "playing":
            _add(self.playing, (blue, red), times)
        elif state == "finished" and result is not None:
            self.pairs.count(Played(blue, red, result), times)

    def copy(self) -> StandingsSums:
        """A copy a thread ranks while the next read changes these."""
        return StandingsSums(self.pairs.copy(), Counter(self.tables), Counter(self.playing))


def _add(counts: Counter[str], nicks: tuple[str, str], times: int) -> None:
    """Add to the nicks' counts, forgetting a nick counted down to none (so a player with no table
    left is no longer listed)."""
    for nick in nicks:
        counts[nick] += times
        if not counts[nick]:
            del counts[nick]


@dataclass(frozen=True)
class Snapshot:
    """What one build reads of the kept tables, copied: the next read may change them meanwhile."""

    entries: list[bytes]  # every table's entry, encoded, oldest first
    sums: StandingsSums | None  # what an organiser's standings are made of, if asked for
    uids: list[int]  # ... their tables
    playing: set[int]  # the tables being played
    boards: Callable[[], list[Board]] | None  # the games, for one the server runs (made if asked)
    arena: ArenaBoards | None  # ... as an arena's standings count them
    live: Callable[[], Hashable]  # the state, result and moves now of those not settled in the store
    live_as_built: Hashable  # ... as the entries show them


class KeptTournaments:
    """The kept tables of the tournaments whose answers are kept (`kept(name)`), the least recently asked
    for forgotten first; a name without a tournament keeps nothing."""

    def __init__(self) -> None:
        self._kept: OrderedDict[str, KeptTables] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def of(self, name: str, with_boards: bool) -> KeptTables:
        kept = self._kept.get(name)
        if kept is None or kept.with_boards != with_boards:  # a tournament the server now runs: anew
            kept = self._kept[name] = KeptTables(with_boards)
        self._kept.move_to_end(name)
        return kept

    def forget(self, name: str) -> None:
        self._kept.pop(name, None)

    def keep_only(self, kept: Callable[[str], bool]) -> None:
        """Forget the tournaments whose answers are no longer kept."""
        for name in [name for name in self._kept if not kept(name)]:
            del self._kept[name]
