"""What a newcomer to a table is sent: the table's whole state (people, tables, descriptions, `i`
lines, chat); and the lobby's whole state, built once per change and shared by every reply that needs it.

The only owner of the shared lobby state; it reads the tables, and changes nothing.
"""

from __future__ import annotations

from itertools import chain

from server.hub.bus import EventBus
from server.hub.chat import LOBBY_CHAT_KEPT
from server.hub.mirrors import Mirrors
from server.hub.model import LOBBY
from server.hub.remote import RemoteLobby
from server.hub.room import Room
from server.hub.seeks import Seeks
from server.hub.tables import Tables
from server.protocol import events
from server.protocol.codec import LINE_SEPARATOR, joined_lines


class Lobby:
    def __init__(
        self, bus: EventBus, tables: Tables, remote: RemoteLobby, mirrors: Mirrors, seeks: Seeks
    ) -> None:
        self.bus, self.tables, self.remote, self.mirrors, self.seeks = bus, tables, remote, mirrors, seeks
        self.states_built = 0  # for benchmarks and tests
        # with_subscriptions -> (the last event number then, all but the chat, with all the chat): the
        # lobby's whole state when built, as texts a reply sends
        self._states: dict[bool, tuple[int, str, str]] = {}

    def snapshot(self, uid: int, *, with_subscriptions: bool = False, seen: int = 0) -> list[str]:
        """Everything someone entering a table needs: people, tables, descriptions, info, chat, as the
        lines of a reply's section (the lobby's as one text: the lines joined as a reply joins them).

        `seen`: a reader who was at the table up to that event number (a gap, a restart) is not
        sent again the chat lines it has had: MultiPoints shows a history line like a new one."""
        if uid == LOBBY:
            return [self._shared(with_subscriptions, seen)]
        if uid in self.mirrors.by_uid:  # another member's table: as its owner last sent it, and since
            return self.mirrors.snapshot(uid)
        return self._build(uid, seen=seen)

    def _shared(self, with_subscriptions: bool, seen: int) -> str:
        """The lobby's whole state, built once and shared by every reply that needs it until the next
        event. Building it costs a line per player and per table (100-166 KB with 5,000 players);
        5,000 of them at once used to take 1.6 GB and stall everyone for seconds. It is kept as the
        text a reply sends, joined once: a newcomer's first reply copies it instead of handling its
        thousands of lines (issue 19). (A state kept longer and brought up to date with the lobby's
        events would differ from a whole state: new people as `pa` after `pr`, chat history as new
        `ca` lines.)

        A reader who had the lobby up to `seen` (its msgNo fell behind the lobby's log, or the server
        restarted) shares all but the chat, which is the chat after `seen`: built for each such reader,
        the whole state cost 4-10 ms with 2,000 tables, a hundred times a second while 4,000 players
        caught up after logging in (issue 19.2)."""
        built = self._states.get(with_subscriptions)
        if built is None or built[0] != self.bus.last:
            before_chat = joined_lines(self._lobby_lines(with_subscriptions))
            built = (self.bus.last, before_chat, joined_lines([before_chat, *self._chat_lines(0)]))
            self._states[with_subscriptions] = built
            self.states_built += 1
        if not seen:
            return built[2]
        return joined_lines([built[1], *self._chat_lines(seen)])

    def _build(self, uid: int, *, seen: int = 0) -> list[str]:
        table = self.tables[uid]
        lines = [events.people("r", table.people)]
        if table.room is not None:
            lines += table.room.snapshot()
        return lines + [events.chat_replaced(line) for line in table.chat.lines(after=seen)]

    def _lobby_lines(self, with_subscriptions: bool) -> list[str]:
        """The lobby's whole state but its chat."""
        tables = self.tables
        remote = self.remote
        if remote.parts:  # a person may be here and at another member at once
            people = events.people("r", dict.fromkeys(chain(tables[LOBBY].people, remote.people())))
        else:
            people = events.people_joined("r", tables.lobby_nicks.joined)
        numbers = tables.lobby_table_numbers.joined
        if remote.parts:
            numbers = ".".join(filter(None, (numbers, *map(str, remote.tables()))))
        lines = [
            people,
            events.tables_joined("r", numbers),
            self._table_lines(),
            *remote.table_lines(),
        ]
        lines.append(tables.lobby_infos.joined)
        lines += remote.infos()
        lines += self.seeks.lines()  # the other members' too, numbered here (Seeks.follow)
        if with_subscriptions:
            lines += self.subscription_lines()
        return lines

    def _table_lines(self) -> str:
        """Every game table's description and state, as the lobby lists them, joined: only the tables
        with events since the last time are asked again (a state changes only with an event there)."""
        tables = self.tables
        lines = tables.lobby_table_lines
        for uid in tables.lines_stale:
            table = tables.get(uid)
            room = table.room if table is not None else None
            if room is not None:  # not another member's table, which has events here too (mirrors.py)
                lines[uid] = f"{room.description()}{LINE_SEPARATOR}{room.state()}"
        tables.lines_stale.clear()
        return lines.joined

    def _chat_lines(self, seen: int) -> list[str]:
        """The lobby's chat after `seen` as a whole state ends with it (`cr` lines)."""
        return [events.chat_replaced(line) for line in self._lobby_chat(seen)]

    def _lobby_chat(self, seen: int) -> list[str]:
        """The lobby's chat lines after `seen`, this member's and the others' in time order."""
        local = self.tables.lobby.chat
        if not self.remote.parts and not self.remote.departed:
            return local.lines(after=seen)
        # within a second, the order in which this member published them (the members' clocks and
        # counters know nothing of each other); lines had in a whole part (event 0) come first
        timed = [
            ((entry.time, entry.event, entry.n), entry.line())
            for entry in local.entries
            if not entry.event or entry.event > seen
        ]
        timed += [
            ((entry.order[0], entry.event, entry.order[1]), entry.line[2:])
            for entry in self.remote.chat(after=seen)
        ]
        timed.sort(key=lambda pair: pair[0])
        return [line for _, line in timed[-LOBBY_CHAT_KEPT:]]

    def subscription_lines(self) -> list[str]:
        return [self.tables.lobby_subscriptions.joined, *self.remote.subscriptions()]

    def own_subscription_lines(self) -> list[str]:
        """The `b` lines of this member's people, in the lobby's order (Tables.lobby_subscriptions)."""
        return list(self.tables.lobby_subscriptions.values())

    def own_part(self) -> list[str]:
        """This member's part of the lobby, as lines the other members rebuild it from (remote.py):
        its people, tables, `i` and `b` lines, seeks and its people's chat (not its server lines)."""
        lobby = self.tables.lobby
        rooms = self._rooms()
        lines = [
            events.people("r", lobby.people),
            events.tables("r", (room.uid for room in rooms)),
            *_described(rooms),
        ]
        lines += filter(None, self.tables.lobby_infos.values())
        lines += self.own_subscription_lines()
        lines += self.seeks.own_lines()
        lines += [events.chat_added(entry.line()) for entry in lobby.chat.entries if entry.nick]
        return lines

    def _rooms(self) -> list[Room]:
        return [t.room for t in self.tables.values() if t.room is not None]


def _described(rooms: list[Room]) -> list[str]:
    """Each game table's description and state, as the lobby lists them."""
    return [line for room in rooms for line in (room.description(), room.state())]
