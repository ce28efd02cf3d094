"""Whose each seat at a game table is: the first session (a registered player: their account) to sit in
it owns it, a guest back with a new id takes its own seat again, and a renamed account's seats move to
its new nick (docs/operations.md, "Accounts").

The seats are the tables' (server/hub/tables.py): this part decides who owns them and journals it.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from server.hub.bus import LocalBus
from server.hub.guestseats import GuestSeats
from server.hub.model import LOBBY, Player, Table, account_number, account_seat_key, owns
from server.hub.room import renamed_opening
from server.hub.roster import Roster
from server.logs import Fields

log = logging.getLogger(__name__)


class SeatedTables(Protocol):
    """The tables (server/hub/tables.py) as their seats' owners need them."""

    by_uid: dict[int, Table]
    seats: dict[str, dict[int, None]]  # nick -> the tables it has a seat at
    guest_seats: GuestSeats  # changed here, with Table.guest_places
    bus: LocalBus

    def journal(self, uid: int, kind: str, data: dict[str, Any]) -> None: ...
    def unseat(self, nick: str, uid: int) -> None: ...


class Seating:
    def __init__(self, tables: SeatedTables, roster: Roster) -> None:
        self.tables, self.roster = tables, roster
        # account number -> the tables where it was given a seat (a renamed player's seats are found by
        # it, not by a walk of every table at each login); Table.owners says whether it still has one
        self.by_account: dict[int, dict[int, None]] = {}

    def set_owner(self, table: Table, nick: str, owner: str) -> None:
        """The seat of `nick` at `table` is `owner`'s (a Player.seat_key), as a journal's `seat` says."""
        table.owners[nick] = owner
        if table.guest_places.pop(nick, None) is not None:
            self.tables.guest_seats.changed(table)
        number = account_number(owner)
        if number:
            self.by_account.setdefault(number, {})[table.uid] = None

    def place(self, table: Table, nick: str, host: str, network: str) -> None:
        """The seat of `nick` is a guest's from `host` and `network` (Table.guest_places): what its
        address and network hold (Limits.guest_tables), and who may take the seat back."""
        table.guest_places[nick] = (host, network)
        self.tables.guest_seats.changed(table)

    def forget(self, table: Table) -> None:
        """The table closed: its seats are nobody's to move, nor held by any guest's address."""
        self.tables.guest_seats.forget(table)
        for owner in table.owners.values():
            uids = self.by_account.get(account_number(owner))
            if uids is not None:
                uids.pop(table.uid, None)
                if not uids:
                    del self.by_account[account_number(owner)]

    def reclaim(self, table: Table, player: Player) -> bool:
        """Whether the player's nick has a seat at the unfinished game at `table` that is theirs: their
        session's or account's, or a guest's they come back to (`_comes_back_to`), owned from now on."""
        room = table.room
        if room is None or not room.seat_of(player.nick) or room.game.result is not None:
            return False
        owner = table.owners.get(player.nick, player.seat_key)
        if not owns(owner, player.seat_key) and self._comes_back_to(table, player, owner):
            self.own(table, player)
        return owns(table.owners.get(player.nick, player.seat_key), player.seat_key)

    def _comes_back_to(self, table: Table, player: Player, owner: str) -> bool:
        """Whether `player`, a guest, is the seat's guest session back with a new id, from the network it
        sat down from or was used from (docs/protocol.md, "A guest who comes back")."""
        if not player.guest or not player.network or owner.startswith("@"):
            return False
        place = table.guest_places.get(player.nick)
        ended = self.roster.ended.get(owner)
        return (place is not None and place[1] == player.network) or (
            ended is not None and player.network in ended[1]
        )

    def reserve(self, table: Table, nick: str, owner: str) -> None:
        """A seat kept for the session or account `owner` (a Player.seat_key) before anyone sits: the
        server's own tournaments seat the player who registered, not a stranger who took the nick since."""
        self.set_owner(table, nick, owner)
        self.tables.journal(table.uid, "seat", table.seat_entry(nick))

    def claim(self, player: Player, table: Table) -> None:
        """The first session to sit in a seat of its nick owns it (a registered player: their account).
        A table set up for a tournament waits for its players' first sessions; an invitation's table is
        claimed by the two players as they sit down."""
        room = table.room
        if room is None or not room.seat_of(player.nick) or player.nick in table.owners:
            return
        self.own(table, player)

    def own(self, table: Table, player: Player) -> None:
        """The player's session (or account) owns their nick's seat from now on; a guest's host and
        network go with it (Table.guest_places), an --unlimited guest's network alone."""
        self.set_owner(table, player.nick, player.seat_key)
        if player.guest and player.host:
            self.place(table, player.nick, "" if player.unlimited else player.host, player.network)
        self.tables.journal(table.uid, "seat", table.seat_entry(player.nick))

    def follow_rename(self, player: Player) -> list[int]:
        """The tables whose unfinished game the player's account plays under a nick it had before an
        admin renamed it: each such seat moves to the player's nick, journalled as one `renamed` entry
        (a crash cannot keep half of it), so that the game goes on with them (their turn, their clock).
        Only a seat owned by the account's number moves: whoever holds the old nick now is somebody
        else. `player` may be a person of another member of a cluster who logged in there
        (Visitors.renamed)."""
        if player.guest or not player.account:
            return []
        moved = []
        for uid in list(self.by_account.get(player.account, ())):
            table = self.tables.by_uid.get(uid)
            room = table.room if table is not None else None
            if table is None or room is None or room.game.result is not None or room.seat_of(player.nick):
                continue
            for nick, owner in list(table.owners.items()):
                mine = owner.startswith("@") and account_number(owner) == player.account
                present = table.people.get(nick)  # its session under the old nick, still at the table
                if (
                    mine
                    and nick != player.nick
                    and room.seat_of(nick)
                    and not (present and owns(owner, present.seat_key))
                ):
                    self.tables.journal(uid, "renamed", {"from": nick, "to": player.nick})
                    self.rename(table, nick, player.nick)
                    self.tables.bus.publish(LOBBY, room.description())
                    log.info(
                        "seat of a renamed account moved %s", Fields(table=uid, nick=nick, now=player.nick)
                    )
                    moved.append(uid)
                    break
        return moved

    def rename(self, table: Table, old: str, new: str) -> None:
        """The seat of `old` is `new`'s (a journal's `renamed` entry, replayed too): the game, its opening
        as a compacted journal writes it, the seat's owner (the same account, under its new nick: the
        entry alone says whose the seat is, with no `seat` entry after it that a crash could lose) and
        the tables' index of seats by nick."""
        room = table.room
        assert room is not None
        room.rename_seat(old, new)
        table.opened = renamed_opening(table.opened, old, new)
        owner = table.owners.pop(old, None)
        if owner is not None:
            number = account_number(owner)
            self.set_owner(table, new, account_seat_key(new, number) if number else owner)
        self.tables.unseat(old, table.uid)
        self.tables.seats.setdefault(new, {})[table.uid] = None
