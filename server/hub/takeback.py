"""What players see is what is stored: the game actions storage had not taken when it failed are taken
back, at every table and on every screen (docs/operations.md, "When storage fails").

The hub shows an action at once and the store writes its journal entry behind it (server/store/writer.py),
so when storage fails the tables may show actions it never took: a move, the opponent's answer to it,
the end of the game they made, the time the clocks charged for them. A restart would bring the tables
back without them. So the moment storage is known to fail, each game table with an action not stored
goes back to its last stored one: that action and everything after it is withdrawn from the writer's
queue (never written, not even once storage is back), and the table's game is replayed from its journal
without them, as a restart replays it. Everyone at the table, spectators and the people of other members
of a cluster too, gets the table's whole state again, with a server line saying why; the lobby gets
the table's `d` and `x` lines; an AI player's search for a position that is gone is dropped (it checks
the position before it plays: server/hub/computer.py).

What is not play stays, and is written once storage is back: the table's opening and its seats, a
player showing up, what people wrote in its chat (and deletions of it), and the line that gives the
archive number of a stored game.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Collection
from typing import Any

from server.hub.bus import EventBus
from server.hub.context import Context
from server.hub.model import LOBBY, Table
from server.hub.room import Room, opening
from server.hub.tables import Tables
from server.logs import Fields

log = logging.getLogger(__name__)

# journal entries that are play: the first one not stored is where a table is taken back to
GAME_ACTIONS = frozenset({"move", "stop", "propose", "pause", "gift", "flag", "cancel", "left", "claim"})
KEPT = frozenset({"open", "seat", "renamed", "came", "chatdel"})  # never taken back (and "chat", see _kept)
# the table's, not its game's (not replayed: Table.opened names a renamed player's seat as it is now)
TABLE_ENTRIES = frozenset({"open", "seat", "renamed", "chat", "chatdel"})
UNSAVED = "unsaved"  # the server line's code (nickType)
UNSAVED_LINE = (
    "The server could not save what was last played here, so it was taken back: the game is as it "
    "was last saved, clocks included, and goes on once the server can save again."
)


class TakeBack:
    def __init__(self, ctx: Context, bus: EventBus, tables: Tables, archive: Callable[[Room], bool]) -> None:
        """`archive`: hand a finished game's record to the store (Games.archive)."""
        self.ctx, self.bus, self.tables, self.archive = ctx, bus, tables, archive

    def storage_failed(self) -> None:
        """Storage has just been found failing: every table goes back to what it stored."""
        for uid, unstored in self.ctx.persistence.unstored_journal().items():
            table = self.tables.get(uid)
            if table is not None and table.room is not None:  # a table closed since stays closed
                self._take_back(table, unstored)

    def _take_back(self, table: Table, unstored: list[tuple[int, str, dict[str, Any]]]) -> None:
        first = next((seq for seq, kind, _ in unstored if kind in GAME_ACTIONS), None)
        if first is None:
            return  # no play is missing from what storage has: the rest waits for it
        taken = {seq: (kind, data) for seq, kind, data in unstored if seq >= first and not _kept(kind, data)}
        old = table.room
        assert old is not None
        try:
            room = self._replayed(table, taken.keys())
        except Exception:  # a bug: the table stays as it is, its writes wait for storage as before
            log.exception("table could not be taken back %s", Fields(uid=table.uid))
            return
        self.ctx.persistence.withdraw(table.uid, taken.keys())
        for seq in taken:
            index = table.entry_at(seq)
            if index is not None:
                table.journal[index] = None
        table.chat.take_back({f"{data['t']}_{data['n']}" for kind, data in taken.values() if kind == "chat"})
        old.abandon()
        table.room = room  # its clock then stands still with the others' (Games.storage_changed)
        if room.game.result is not None and room.archive_number is None and not room.analysis:
            self.archive(room)  # it ended by what is stored; its record had not been written
        self.tables.show_again(table.uid)
        self.tables.server_line(table.uid, UNSAVED, UNSAVED_LINE)
        if room.description() != old.description():
            self.bus.publish(LOBBY, room.description())
        self.bus.publish(LOBBY, room.state())
        log.warning(
            "taken back: storage did not take them %s",
            Fields(
                uid=table.uid,
                entries=len(taken),
                moves=len(old.game.moves),
                now=len(room.game.moves),
                games=old.games_played,
                now_games=room.games_played,
            ),
        )

    def _replayed(self, table: Table, taken: Collection[int]) -> Room:
        """The table's game replayed from its journal without the entries `taken`, as a restart would."""
        room = self.tables.new_room(table.uid, *opening(table.opened))
        room.quiet = True
        first = table.journal_seq - len(table.journal) + 1
        try:
            for index, entry in enumerate(table.journal):
                if entry is None or first + index in taken or entry[0] in TABLE_ENTRIES:
                    continue
                kind, text = entry
                room.replay(kind, json.loads(text), entry)
        except Exception:
            room.abandon()  # its clock must not run out for a game nobody plays
            raise
        room.quiet = False
        room.last_activity = self.ctx.timers.now()
        return room


def _kept(kind: str, data: dict[str, Any]) -> bool:
    """What is not play: written once storage is back. Of the server lines, only a stored game's archive
    number (`l<number>`): the others tell of play."""
    if kind in KEPT:
        return True
    return kind == "chat" and (data["nick"] != "" or re.fullmatch(r"l\d+", data["type"]) is not None)
