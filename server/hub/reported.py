"""What a report quotes (docs/moderation.md, "Reports"): the reported line with the lines around it, or a
reported player's last lines, read from what this server holds at the moment of the report, so that the
report keeps them after the chat has moved on, after a restart and on every member of a cluster.

A player quotes only what they were shown: the lobby (this member's lines and the other members'), a
table they are at (of this member, or of another one through its mirror), and their own private
conversations.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.hub.chat import ChatEntry, PrivateChats
from server.hub.mirrors import Mirrors
from server.hub.model import LOBBY, Player
from server.hub.remote import RemoteLobby
from server.hub.tables import Tables
from server.protocol.codec import decode_client_text, nick_key, parse_number, read_chat_line

LINES_BEFORE, LINES_AFTER = 5, 5  # around a reported line
PLAYERS_LINES = 10  # a reported player's last lines


@dataclass(frozen=True)
class Quoted:
    id: str  # time_n
    nick: str  # who wrote it ("": the server)
    text: str
    deleted: bool = False
    reported: bool = False


class Quotes:
    def __init__(self, tables: Tables, mirrors: Mirrors, remote: RemoteLobby, private: PrivateChats) -> None:
        self.tables, self.mirrors, self.remote, self.private = tables, mirrors, remote, private

    def line(self, player: Player, place: str, line_id: str) -> list[Quoted] | None:
        """The line `line_id` of `place` (`0`, a table's number, `_<nick>` for a private conversation)
        as `player` was shown it, with the lines around it; None when they were shown no such line."""
        lines = self._shown(player, place)
        found = next((index for index, quoted in enumerate(lines) if quoted.id == line_id), None)
        if found is None:
            return None
        first = max(0, found - LINES_BEFORE)
        return [
            Quoted(q.id, q.nick, q.text, q.deleted, reported=first + index == found)
            for index, q in enumerate(lines[first : found + LINES_AFTER + 1])
        ]

    def player(self, player: Player, nick: str) -> list[Quoted]:
        """The last lines `nick` wrote where `player` reads: the lobby, their tables, their conversation."""
        key = nick_key(nick)
        places = [str(uid) for uid in player.tables] + ["_" + nick]
        shown = [q for place in places for q in self._shown(player, place)]
        said = [q for q in shown if q.nick and nick_key(q.nick) == key]
        return sorted(said, key=_order)[-PLAYERS_LINES:]

    def _shown(self, player: Player, place: str) -> list[Quoted]:
        if place.startswith("_"):
            return self._private(player, decode_client_text(place[1:]))
        uid = parse_number(place)
        if uid is None or uid not in player.tables:
            return []
        if uid in self.tables:
            lines = [_local(entry) for entry in self.tables[uid].chat.entries]
            if uid == LOBBY:
                lines += [q for q in (_remote(entry.line) for entry in self.remote.chat()) if q is not None]
            return sorted(lines, key=_order)
        if uid in self.mirrors.by_uid:
            return _from_lines(self.mirrors.snapshot(uid))
        return []

    def _private(self, player: Player, other: str) -> list[Quoted]:
        talk = self.private.get(player.nick, other)
        if talk is None:
            return []
        return [
            Quoted(entry.chat_id, talk.first if entry.nick_type == "1" else talk.second, entry.text)
            for entry in talk.visible_to(player.nick)
        ]


def _local(entry: ChatEntry) -> Quoted:
    return Quoted(entry.chat_id, entry.nick, entry.text, entry.deleted)


def _remote(line: str) -> Quoted | None:
    read = read_chat_line(line)
    if read is None:
        return None
    time_n, nick, nick_type, text = read
    return Quoted(time_n, nick, text, deleted=nick_type == "d")


def _from_lines(lines: list[str]) -> list[Quoted]:
    """A mirrored table's chat as its owner's lines tell it: history, new lines, deletions."""
    quoted: dict[str, Quoted] = {}
    for line in lines:
        if line.startswith("cd"):
            gone = quoted.get(line[2:])
            if gone is not None:
                quoted[gone.id] = Quoted(gone.id, gone.nick, gone.text, deleted=True)
        elif (read := _remote(line)) is not None:
            quoted[read.id] = read
    return list(quoted.values())


def _order(quoted: Quoted) -> tuple[int, int]:
    time, _, n = quoted.id.partition("_")
    return (int(time), int(n)) if time.isdigit() and n.isdigit() else (0, 0)
