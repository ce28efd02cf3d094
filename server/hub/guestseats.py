"""The open game tables each address's and each network's guests hold a seat at (Table.guest_places),
kept as the seats change: every game start, invitation accepted, seek or pool pairing and table set up
checks them (Limits.guest_tables), and a walk of every open table there cost 5.7 ms a check with
2,000 tables open (docs/performance.md, 2026-12-02). Only server/hub/seating.py changes a table's guest
places, and tells this index each time; a table that closes is forgotten
(tests/hub/test_guest_seats.py compares it with the walk after every step of random play).
"""

from __future__ import annotations

from collections import Counter

from server.hub.model import Table
from server.protocol.codec import nick_key


def _drop(counts: Counter[str], keys: frozenset[str]) -> None:
    for key in keys:
        counts[key] -= 1
        if not counts[key]:
            del counts[key]


class GuestSeats:
    def __init__(self) -> None:
        # tables with a seat of a guest of each host, and of each network ("": an --unlimited guest's
        # host, counted for neither)
        self.hosts: Counter[str] = Counter()
        self.networks: Counter[str] = Counter()
        # a guest's nick_key -> the tables with a guest place of that nick (a tournament entry is at its
        # table when one of them plays its tournament's unfinished game: `at_game_of`)
        self.by_key: dict[str, dict[int, Table]] = {}
        # what each table adds to the above: its hosts, its networks, its guests' nick_keys
        self.held: dict[int, tuple[frozenset[str], frozenset[str], frozenset[str]]] = {}

    def changed(self, table: Table) -> None:
        """`table.guest_places` changed: count it again."""
        self.forget(table)
        places = table.guest_places
        if not places:
            return
        hosts = frozenset(host for host, _ in places.values() if host)
        networks = frozenset(network for host, network in places.values() if host)
        keys = frozenset(nick_key(nick) for nick in places)
        self.held[table.uid] = (hosts, networks, keys)
        self.hosts.update(hosts)
        self.networks.update(networks)
        for key in keys:
            self.by_key.setdefault(key, {})[table.uid] = table

    def forget(self, table: Table) -> None:
        """The table counts no more (closed, or its guest places about to be counted again)."""
        held = self.held.pop(table.uid, None)
        if held is None:
            return
        hosts, networks, keys = held
        _drop(self.hosts, hosts)
        _drop(self.networks, networks)
        for key in keys:
            uids = self.by_key[key]
            del uids[table.uid]
            if not uids:
                del self.by_key[key]

    def at_game_of(self, tournament: str, key: str) -> bool:
        """Whether a guest place of the nick with `key` is at an unfinished game of `tournament`."""
        for table in self.by_key.get(key, {}).values():
            room = table.room
            if room is not None and room.auto is not None and room.auto.tournament == tournament:
                if room.game.result is None:
                    return True
        return False
