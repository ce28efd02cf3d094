"""The other members' parts of the lobby, in a cluster: their people, tables, seeks, pools' waiters and
chat, as their lobby event lines tell them (docs/cluster.md, "One lobby").

Each member runs its own players and tables and publishes its lobby lines to the others; this is what
one member keeps of the others, so that a newcomer's whole lobby state shows everyone, and what it
makes of a part that changed while lines were lost (a whole part after a Redis outage, a member that
died). It only keeps lines: what changes for the local readers comes back as lines to publish to them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field

from server.engine.gametype import GameKind
from server.hub.chat import LOBBY_CHAT_KEPT
from server.protocol import events
from server.protocol.codec import nick_key, parse_number


@dataclass(slots=True)
class RemoteChatLine:
    time_n: str
    line: str  # the `ca` line
    event: int = 0  # the local event number that relayed it (0: had in a whole part)

    @property
    def order(self) -> tuple[int, int]:
        time, _, n = self.time_n.partition("_")
        return (int(time), int(n)) if time.isdigit() and n.isdigit() else (0, 0)

    @property
    def time(self) -> int:
        return self.order[0]

    @property
    def n(self) -> int:
        return self.order[1]


@dataclass
class LobbyPart:
    """One member's part of the lobby, kept in the order its lines came."""

    people: dict[str, None] = field(default_factory=dict)
    infos: dict[str, str] = field(default_factory=dict)  # nick -> `i` line
    subscriptions: dict[str, str] = field(default_factory=dict)  # nick -> `b` line
    tables: dict[int, list[str]] = field(default_factory=dict)  # uid -> [`d` line, `x` line]
    # nick -> the tables whose `d` line names it: a player's games are found without reading every table
    seated: dict[str, list[int]] = field(default_factory=dict)  # lists: a third of a set's memory
    chat: deque[RemoteChatLine] = field(default_factory=lambda: deque(maxlen=LOBBY_CHAT_KEPT))
    seeks: dict[int, str] = field(default_factory=dict)  # its number -> `ka` line (Seeks.follow lists them)
    waiters: dict[str, str] = field(default_factory=dict)  # nick -> `ja` line (Pools.follow pairs them)

    def apply(self, line: str) -> bool:
        """Takes one lobby line into the part; False for a line that is no part of a lobby's state."""
        kind, key = events.lobby_subject(line)
        if kind == "people":
            nicks = [nick for nick in line[2:].split(".") if nick]
            if key == "r":
                self.people = dict.fromkeys(nicks)
            elif key == "a":
                self.people.update(dict.fromkeys(nicks))
            else:
                for nick in nicks:
                    self.people.pop(nick, None)
                    self.infos.pop(nick, None)
                    self.subscriptions.pop(nick, None)
        elif kind == "tables":
            uids = [int(uid) for uid in line[2:].split(".") if uid.isdigit()]
            if key == "r":
                for uid in self.tables.keys() - uids:
                    self.drop_table(uid)
                self.tables = {uid: self.tables.get(uid, ["", ""]) for uid in uids}
            elif key == "a":
                for uid in uids:
                    self.tables.setdefault(uid, ["", ""])
            else:
                for uid in uids:
                    self.drop_table(uid)
        elif kind in ("description", "state"):
            if not key.isdigit() or int(key) not in self.tables:
                return False
            if kind == "description":
                self._seat(int(key), line)
            self.tables[int(key)][kind == "state"] = line
        elif kind == "info":
            self.infos[key] = line
        elif kind == "subscriptions":
            self.subscriptions[key] = line
        elif kind == "chat":
            self.chat.append(RemoteChatLine(key, "ca" + line[2:]))
        elif kind == "unchat":
            for entry in self.chat:
                if entry.time_n == key:
                    entry.line = _deleted(entry.line)
        elif kind in ("seek", "unseek"):
            number = parse_number(key)
            if number is None:
                return False
            if kind == "seek":
                self.seeks[number] = line
            else:
                self.seeks.pop(number, None)
        elif kind == "waiter":
            self.waiters[key] = line
        elif kind == "unwaiter":
            self.waiters.pop(key, None)
        else:
            return False
        return True

    def drop_table(self, uid: int) -> None:
        if uid in self.tables:
            self._seat(uid, "")
            del self.tables[uid]

    def _seat(self, uid: int, description: str) -> None:
        """Table `uid`'s players in `seated` as its `d` line `description` names them (""; none)."""
        before = self.tables[uid][0] if uid in self.tables else ""
        if before:
            for nick in events.described_players(before):
                uids = self.seated.get(nick)
                if uids is not None and uid in uids:
                    uids.remove(uid)
                    if not uids:
                        del self.seated[nick]
        if description:
            for nick in events.described_players(description):
                uids = self.seated.setdefault(nick, [])
                if uid not in uids:
                    uids.append(uid)


def _unfinished(state: str) -> bool:
    """An `x` line with no result yet (`-`), or none come yet."""
    return not state or state.split(".")[2:3] == ["-"]


def part_of(lines: Iterable[str]) -> LobbyPart:
    part = LobbyPart()
    for line in lines:
        part.apply(line)
    return part


class RemoteLobby:
    """Every other live member's part of the lobby, by member name."""

    def __init__(self) -> None:
        self.parts: dict[str, LobbyPart] = {}
        # the chat of members that left: the lobby's history does not lose their lines, and a member
        # that comes back (after a Redis outage) does not show them to the readers here a second time
        self.departed: dict[str, deque[RemoteChatLine]] = {}

    def take(self, member: str, line: str) -> bool:
        """A lobby line of `member`; whether the local readers should have it too."""
        part = self.parts.setdefault(member, LobbyPart())
        return part.apply(line)

    def note_relayed(self, member: str, event: int) -> None:
        """The chat line just taken was relayed to the local readers as `event` (so that a reader back
        after a gap is not sent it again: ChatRoom.lines)."""
        self.parts[member].chat[-1].event = event

    def replace(self, member: str, lines: list[str]) -> list[str]:
        """`member`'s whole part (it was asked for after lines were lost); what the local readers need
        to go from the part they were shown to this one."""
        new = part_of(lines)
        old = self.parts.get(member) or LobbyPart(chat=self.departed.pop(member, deque()))
        relayed = {entry.time_n: entry.event for entry in old.chat}
        for entry in new.chat:
            entry.event = relayed.get(entry.time_n, 0)
        self.parts[member] = new
        return _difference(old, new)

    def drop(self, member: str) -> list[str]:
        """`member` left the cluster: its people and tables leave the lobby; its chat stays."""
        old = self.parts.pop(member, None)
        if old is None:
            return []
        self.departed[member] = old.chat
        return _difference(old, LobbyPart(chat=old.chat))

    def forget_table(self, uid: int, *, keep: str | None) -> None:
        """Table `uid` is `keep`'s now (None: this member's): no other part has it, so that it is sat
        down at there and a part dropped later does not take it out of the lobby."""
        for member, part in self.parts.items():
            if member != keep:
                part.drop_table(uid)

    def owner_of_table(self, uid: int) -> str | None:
        for member, part in self.parts.items():
            if uid in part.tables:
                return member
        return None

    def games_of(self, nick: str) -> Iterator[int]:
        """The tables of other members where `nick` plays an unfinished game (as their `d` and `x`
        lines say: `d<uid>.<type>.<blue>.<red>`, blue and red a team's nicks at a team table, and
        `x<uid>.<to move>.<result or ->...`)."""
        for part in self.parts.values():
            for uid in part.seated.get(nick, ()):
                if _unfinished(part.tables[uid][1]):
                    yield uid

    def seating(self, keys: Collection[str]) -> list[str]:
        """The members whose unfinished games seat a nick with one of these nick keys (an account's
        earlier nicks: Mirrors.follow_rename). It reads every seated nick: asked for a renamed account's
        logins alone."""
        return [
            member
            for member, part in self.parts.items()
            if any(
                nick_key(nick) in keys and any(_unfinished(part.tables[uid][1]) for uid in uids)
                for nick, uids in part.seated.items()
            )
        ]

    def held_by(self, nick: str, analysis: bool) -> int:
        """How many of the other members' tables count towards `nick`'s cap (Limits.games_of): the
        unfinished games it plays there, or (`analysis`) its analysis tables there."""
        held = 0
        for part in self.parts.values():
            for uid in part.seated.get(nick, ()):
                description, state = part.tables[uid]
                if (events.described_kind(description) == GameKind.ANALYSIS) is not analysis:
                    continue
                if analysis or _unfinished(state):
                    held += 1
        return held

    def member_of(self, nick: str) -> tuple[str, str] | None:
        """The member serving `nick`, and the nick as that member writes it (the case may differ)."""
        for member, part in self.parts.items():
            if nick in part.people:
                return member, nick
        key = nick_key(nick)  # the rarer way: the nick as typed, not as the lobby lists it
        for member, part in self.parts.items():
            for person in part.people:
                if nick_key(person) == key:
                    return member, person
        return None

    def seeks_of(self, member: str) -> dict[int, str]:
        """`member`'s open seeks as it numbers them (none once it left)."""
        part = self.parts.get(member)
        return part.seeks if part is not None else {}

    def waiters_of(self, member: str) -> dict[str, str]:
        """`member`'s players waiting in its pools (none once it left)."""
        part = self.parts.get(member)
        return part.waiters if part is not None else {}

    def bot(self, member: str, nick: str) -> bool:
        """Whether `member`'s `i` line of `nick` marks a bot (docs/bots.md)."""
        part = self.parts.get(member)
        return part is not None and events.marks_a_bot(part.infos.get(nick, ""))

    # --- what a whole lobby state merges in ------------------------------------------------------

    def people(self) -> Iterator[str]:
        for part in self.parts.values():
            yield from part.people

    def has_person(self, nick: str) -> bool:
        return any(nick in part.people for part in self.parts.values())

    def tables(self) -> Iterator[int]:
        for part in self.parts.values():
            yield from part.tables

    def table_lines(self) -> Iterator[str]:
        for part in self.parts.values():
            for description, state in part.tables.values():
                yield from (line for line in (description, state) if line)

    def infos(self) -> Iterator[str]:
        for part in self.parts.values():
            yield from part.infos.values()

    def subscriptions(self) -> Iterator[str]:
        for part in self.parts.values():
            yield from part.subscriptions.values()

    def chat(self, after: int = 0) -> list[RemoteChatLine]:
        """Every other member's chat lines kept, but those relayed by events up to `after`."""
        chats = [*self.departed.values(), *(part.chat for part in self.parts.values())]
        return [entry for chat in chats for entry in chat if not entry.event or entry.event > after]


def _deleted(line: str) -> str:
    """A chat line as it stays for newcomers once a moderator deleted it (ChatEntry.line)."""
    time_n, nick = (line[2:].split(".", 2) + ["", ""])[:2]
    return f"ca{time_n}.{nick}.d."


def _difference(old: LobbyPart, new: LobbyPart) -> list[str]:
    """The lobby lines that take a reader who was shown `old` to `new`."""
    lines: list[str] = []
    gone_tables = [uid for uid in old.tables if uid not in new.tables]
    if gone_tables:
        lines.append(events.tables("d", gone_tables))
    gone_people = [nick for nick in old.people if nick not in new.people]
    if gone_people:
        lines.append(events.people("d", gone_people))
    came = [nick for nick in new.people if nick not in old.people]
    if came:
        lines.append(events.people("a", came))
    lines += [info for nick, info in new.infos.items() if old.infos.get(nick) != info]
    lines += [line for nick, line in new.subscriptions.items() if old.subscriptions.get(nick) != line]
    opened = [uid for uid in new.tables if uid not in old.tables]
    if opened:
        lines.append(events.tables("a", opened))
    for uid, now in new.tables.items():
        before = old.tables.get(uid, ["", ""])
        lines += [line for line, was in zip(now, before, strict=True) if line and line != was]
    had = {entry.time_n: entry.line for entry in old.chat}
    for entry in new.chat:
        if entry.time_n not in had:
            lines.append(entry.line)
        elif had[entry.time_n] != entry.line and entry.line.endswith(".d."):
            lines.append(events.chat_deleted(entry.time_n))
    return lines
