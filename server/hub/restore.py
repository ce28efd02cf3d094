"""The live state after a restart, rebuilt from the journal; and compaction, which writes a table's
journal again as the few entries that rebuild it as it is now.

Tables, the lobby's chat and private chat come back first, then the sessions, whose players sit back
at their tables. Clocks stand still while the server is down.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from server.hub.bus import LocalBus
from server.hub.chat import ChatEntry
from server.hub.chats import PRIVATE_JOURNAL, Chats
from server.hub.context import Context
from server.hub.games import RESTORED_TABLE_KEPT, TOURNAMENT_TABLE_KEPT, Games
from server.hub.model import LOBBY, Table
from server.hub.persistence import LiveSessions
from server.hub.room import JournalText, journal_entry, opening
from server.hub.saved import SESSION_JOURNAL, SavedSessions
from server.hub.sessions import Sessions
from server.hub.tables import Tables
from server.logs import Fields
from server.protocol.codec import unicode_text

log = logging.getLogger(__name__)

RESTART_GRACE = 60.0  # seconds before the clock of the player on move runs again after a restart
# A table whose journal grew by this many entries is compacted at the next sweep (see compact).
COMPACT_AFTER = 1_000

Journals = dict[int, list[tuple[int, str, dict[str, Any]]]]


class Restorer:
    def __init__(
        self,
        ctx: Context,
        bus: LocalBus,
        saved: SavedSessions,
        tables: Tables,
        games: Games,
        chats: Chats,
        sessions: Sessions,
    ) -> None:
        self.ctx, self.bus, self.saved, self.tables = ctx, bus, saved, tables
        self.games, self.chats, self.sessions = games, chats, sessions

    def restore(self, journals: Journals, next_uid: int, sessions: LiveSessions | None = None) -> None:
        """Rebuild the live tables, the lobby's chat and private chat from the journal after a restart,
        then the sessions, whose players sit back at their tables.

        Clocks stand still while the server is down; the player on move gets RESTART_GRACE seconds
        before theirs runs again, and players have RESTORED_TABLE_KEPT to come back.
        """
        if sessions is not None:
            self.bus.continue_after(sessions.event_mark)
        self.tables.numbers.next_uid = max(self.tables.numbers.next_uid, next_uid)
        k_noted = journals.pop(SESSION_JOURNAL, [])
        self.saved.seq = max((seq for seq, _, _ in k_noted), default=0)
        for seq, kind, data in journals.pop(PRIVATE_JOURNAL, []):
            with self._setting_aside(PRIVATE_JOURNAL, seq, kind):
                self.chats.replay_private(seq, kind, data)
        self.chats.forget_old()
        for uid, entries in sorted(journals.items()):
            self._restore_or_set_aside(uid, entries)
        if sessions is not None:
            self.sessions.restore(sessions, {data["s"]: data["k"] for _, _, data in k_noted})

    def take_over(self, journals: Journals) -> None:
        """The tables of a member of a cluster that died, as the store hands them over (docs/cluster.md,
        "Take-over"): restored as after a restart (the clocks stood still since their last entry, and
        the player on move has RESTART_GRACE), shown in the lobby, their players here seated again."""
        for uid, entries in sorted(journals.items()):
            if uid <= LOBBY or uid in self.tables or not entries:
                log.warning("table not taken over %s", Fields(uid=uid, entries=len(entries)))
                continue
            elsewhere = self.tables.elsewhere  # people here who followed it at the member that died
            watching = elsewhere.moved(uid, None) if elsewhere is not None else []
            if not self._restore_or_set_aside(uid, entries):
                continue
            room = self.tables[uid].room
            assert room is not None
            self.tables.announce(room)
            for nick in room.lineup.seats:
                player = self.sessions.roster.online(nick)
                if player is not None:
                    self.tables.seat_back(player)
            for player in watching:
                if uid not in player.tables and self.sessions.roster.online(player.nick) is player:
                    self.tables.enter(player, uid)
            log.info("table taken over %s", Fields(uid=uid))

    def _restore_or_set_aside(self, uid: int, entries: list[tuple[int, str, dict[str, Any]]]) -> bool:
        """A table that cannot be opened again: its entries are set aside, kept for inspection."""
        try:
            self._restore_table(uid, entries)
        except Exception as failure:
            log.exception("table could not be restored %s", Fields(uid=uid))
            self.tables.discard(uid)
            reason = f"its table could not be opened: {failure!r}"
            for seq, _, _ in entries:
                self.ctx.persistence.journal_set_aside(uid, seq, reason)
            return False
        return True

    def _restore_table(self, uid: int, entries: list[tuple[int, str, dict[str, Any]]]) -> None:
        first_seq, last_seq = entries[0][0], entries[-1][0]
        # a game table keeps its journal as it is stored (Table.journal): a number without an entry (set
        # aside, or taken back) is None there
        journal: list[JournalText | None] = [None] * (last_seq - first_seq + 1)
        if uid == LOBBY:
            table, room = self.tables.lobby, None
        else:
            _, kind, data = entries[0]
            if kind != "open":
                raise ValueError(f"journal of table {uid} starts with {kind!r}")
            game_type, blue, red, seed, auto, setup, more = opening(data)
            table = self.tables.new_table(uid, game_type, blue, red, seed, auto, setup, more=more)
            table.opened = data
            journal[0] = journal_entry(kind, data)
            room = table.room
            assert room is not None
            room.quiet = True
            entries = entries[1:]
        for seq, kind, data in entries:
            entry = journal_entry(kind, data) if room is not None else None
            with self._setting_aside(uid, seq, kind):
                if kind == "seat":
                    self.tables.seating.set_owner(table, data["nick"], data["owner"])
                    if "host" in data:
                        self.tables.seating.place(table, data["nick"], data["host"], data["network"])
                elif kind == "chat":
                    table.chat.restore(
                        ChatEntry(
                            data["t"],
                            data["n"],
                            data["nick"],
                            data["type"],
                            unicode_text(data["text"]),
                            event=data.get("e", 0),
                        )
                    )
                elif kind == "renamed":
                    self.tables.seating.rename(table, data["from"], data["to"])
                elif kind == "chatdel":
                    for chat_id in data["ids"]:
                        table.chat.delete(chat_id)
                elif room is not None:
                    room.replay(kind, data, entry)
                else:
                    raise ValueError(f"unknown lobby entry {kind!r}")
                journal[seq - first_seq] = entry
        table.journal_seq = last_seq
        if room is not None:
            table.journal = journal
        table.since_compaction = len(entries)
        if room is None:
            return
        room.quiet = False
        kept = TOURNAMENT_TABLE_KEPT if room.tournament_game and room.auto.tournament else RESTORED_TABLE_KEPT
        table.kept_until = self.ctx.timers.now() + kept
        self.tables.note_presence(table)
        if room.clock is not None and room.game.result is None:
            room.clock.set_state(room.clock.state(), grace=RESTART_GRACE)
        if room.game.result is not None and room.archive_number is None:
            self.games.archive(room)  # it ended just before the server stopped, and was not yet written
        log.info("table restored %s", Fields(uid=uid, moves=len(room.game.moves), result=room.game.result))

    @contextlib.contextmanager
    def _setting_aside(self, uid: int, seq: int, kind: str) -> Iterator[None]:
        """Replay one journal entry; one that fails is set aside (kept for inspection) and the rest of
        its table still comes back."""
        try:
            yield
        except Exception as failure:
            log.warning(
                "journal entry could not be replayed %s",
                Fields(uid=uid, seq=seq, kind=kind, error=repr(failure)),
            )
            self.ctx.persistence.journal_set_aside(uid, seq, f"could not be replayed: {failure!r}")

    # --- compaction ----------------------------------------------------------------------------

    def compact_grown(self) -> None:
        """Compact every game table whose journal grew by COMPACT_AFTER entries (at each sweep)."""
        for table in self.tables.values():
            if table.room is not None and table.since_compaction >= COMPACT_AFTER:
                self.compact(table)

    def compact(self, table: Table) -> None:
        """Write the table's journal again as the few entries that rebuild it as it is now, in place of
        all it has: a restart then replays a short journal however long the table has lived."""
        room = table.room
        assert room is not None
        if room.game.result is not None and room.archive_number is None:
            return  # the game's record is on its way to the archive: the journal must say when it is there
        if self.ctx.persistence.written < table.written_mark:
            return  # not all stored: what storage has not taken may yet be taken back (takeback.py)
        entries: list[tuple[str, dict[str, Any]]] = [("open", table.opened)]
        entries += [("seat", table.seat_entry(nick)) for nick in table.owners]
        if room.games_played:
            entries.append(("games", {"n": room.games_played}))
            if room.gone_before:  # their "left" entries were in the earlier games'
                entries.append(("gone", {"nicks": sorted(room.gone_before)}))
            if room.cancelled:  # the tournament game's entries are gone; that it was cancelled stays
                entries.append(("cancel", {}))
        game_from = len(entries)
        entries += room.compacted()
        game_to = len(entries)
        if room.archive_number is not None:
            entries.append(("archived", {"number": room.archive_number, "game": room.games_played}))
        entries += [("chat", entry.journal_data()) for entry in table.chat.entries]
        gone = [entry.chat_id for entry in table.chat.entries if entry.deleted]
        if gone:
            entries.append(("chatdel", {"ids": gone}))
        first = table.journal_seq + 1
        rows = [(first + i, kind, data) for i, (kind, data) in enumerate(entries)]
        self.ctx.persistence.journal_compacted(table.uid, table.journal_seq, rows)
        table.written_mark = self.ctx.persistence.queued
        log.info("journal compacted %s", Fields(uid=table.uid, entries=table.since_compaction, now=len(rows)))
        table.journal_seq += len(rows)
        texts = [journal_entry(kind, data) for kind, data in entries]
        room.game_entries = texts[game_from:game_to]  # the room's and the table's, kept once
        table.journal = [*texts]
        table.since_compaction = 0
