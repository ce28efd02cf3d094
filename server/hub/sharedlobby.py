"""One lobby across the members of a cluster (docs/cluster.md, "One lobby"): the other members' lines
kept in their parts (server/hub/remote.py) and shown to the readers here through the bus, a
table's description handed to its mirror here (server/hub/mirrors.py), their seeks listed here
under this member's numbers (server/hub/seeks.py), and their pools' waiters paired with those here
(server/hub/pools.py). The transport is server/cluster/lobby.py."""

from __future__ import annotations

from collections.abc import Iterator

from server.hub.bus import LocalBus
from server.hub.mirrors import Mirrors
from server.hub.model import LOBBY
from server.hub.pools import Pools
from server.hub.remote import RemoteChatLine, RemoteLobby
from server.hub.seeks import Seeks
from server.hub.tables import Tables
from server.protocol import events
from server.protocol.seeks import POOL_LEFT, POOL_WAITER, SEEK_ADDED, SEEK_GONE


class SharedLobby:
    def __init__(
        self, bus: LocalBus, remote: RemoteLobby, mirrors: Mirrors, tables: Tables, seeks: Seeks, pools: Pools
    ) -> None:
        self.bus, self.remote, self.mirrors, self.tables = bus, remote, mirrors, tables
        self.seeks, self.pools = seeks, pools

    def chat_elsewhere(self) -> Iterator[RemoteChatLine]:
        """The other members' lobby lines this member keeps (the lobby's ChatRoom.kept_elsewhere)."""
        for part in self.remote.parts.values():
            yield from part.chat

    def take_line(self, member: str, line: str, b_only: bool) -> None:
        """Another member's lobby line: kept in its part, and shown to the readers here."""
        if self.remote.take(member, line):
            if line.startswith("ca"):
                self._numbered_after(self.remote.parts[member].chat[-1])
            if line.startswith((SEEK_ADDED, SEEK_GONE)):  # numbered here
                self.seeks.follow(member, self.remote.seeks_of(member))
                return
            if line.startswith((POOL_WAITER, POOL_LEFT)):  # for this member alone
                self.pools.follow(member, self.remote.waiters_of(member))
                return
            line = self._gone_only(line)
            if not line:
                return
            event = self.bus.relay(line, b_only=b_only)
            if line.startswith("ca"):
                self.remote.note_relayed(member, event)
            elif line.startswith("d"):
                self.mirrors.described(member, line)

    def take_part(self, member: str, lines: list[str]) -> None:
        """Another member's whole part: the readers here get what changed since they last saw it."""
        changed = self.remote.replace(member, lines)
        for entry in self.remote.parts[member].chat:
            self._numbered_after(entry)
        self._relay(changed)
        for line in changed:
            if line.startswith("d"):
                self.mirrors.described(member, line)
        self.seeks.follow(member, self.remote.seeks_of(member))
        self.pools.follow(member, self.remote.waiters_of(member))

    def drop_part(self, member: str) -> None:
        """A member left the cluster (or this one lost Redis): its people and tables leave the lobby."""
        self._relay(self.remote.drop(member))
        self.seeks.follow(member, {})
        self.pools.follow(member, {})

    def _numbered_after(self, entry: RemoteChatLine) -> None:
        """This member's next lobby line of the second of another member's line `entry` is numbered
        after it: each member numbered its own, and two lines said in the same second on two members
        had the same `time_n`, so that a report of one quoted the other, and a `cd` of one took the
        other off the screens (docs/cluster.md, "One lobby")."""
        self.tables[LOBBY].chat.counter.seen(*entry.order)

    def _relay(self, lines: list[str]) -> None:
        for line in map(self._gone_only, lines):
            if line:
                self.bus.relay(line, b_only=line.startswith("b"))

    def _gone_only(self, line: str) -> str:
        """A member's `pd` with only the nicks gone from the whole lobby, here and at every other member
        ("" when none is): the AI players are at every member, and a player whose session another
        member took over (it died, it gave the session up, nginx moved it) is online there. Relayed
        whole, it took them out of every reader's list here until the reader logged in again."""
        if not line.startswith("pd"):
            return line
        here = self.tables.lobby.people
        gone = [
            nick
            for nick in line[2:].split(events.NICK_SEPARATOR)
            if nick and nick not in here and not self.remote.has_person(nick)
        ]
        return events.people("d", gone) if gone else ""
