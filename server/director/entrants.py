"""Who plays each game of a tournament the server runs, whatever nick its account has had: an admin may
rename an account at any time (docs/operations.md, "Accounts"), and its entry follows it (the store gives
the entry the new nick and keeps the earlier ones: server/store/hosted.py). Tables and swiss pairings
keep the nick their game was set up under, as archived records do; here each is read as its entry's, so
that the pairing, the standings and the no-shows count one entrant."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from server.director.history import Board
from server.hub.hub import Hub
from server.hub.model import Player, account_number, owns
from server.protocol.codec import nick_key
from server.store.hosted import Entry, PairedRound


class Entrants:
    def __init__(self, entries: Iterable[Entry]) -> None:
        self.entries = list(entries)
        # nick key -> the entry's nick now; an entry's own nick wins over a nick another had before
        self.names = {nick_key(old): e.nick for e in self.entries for old in e.former}
        self.names |= {e.nick_key: e.nick for e in self.entries}
        self.by_nick = {e.nick: e for e in self.entries}

    def name(self, nick: str) -> str:
        """The entrant's nick now for a nick a game was set up under (a stranger's: as it is)."""
        return self.names.get(nick_key(nick), nick)

    def boards(self, boards: Sequence[Board]) -> list[Board]:
        """The boards under the entrants' nicks now: a board copied only when a nick changes, each nick
        looked up once (an arena's wave reads every game of the tournament)."""
        names: dict[str, str] = {}
        for board in boards:
            for nick in (board.blue, board.red):
                if nick not in names:
                    names[nick] = self.name(nick)
        return [
            b
            if names[b.blue] == b.blue and names[b.red] == b.red
            else replace(b, blue=names[b.blue], red=names[b.red])
            for b in boards
        ]

    def rounds(self, rounds: Sequence[PairedRound]) -> list[PairedRound]:
        return [
            replace(
                paired,
                boards=tuple((self.name(first), self.name(second)) for first, second in paired.boards),
                bye=self.name(paired.bye) if paired.bye is not None else None,
            )
            for paired in rounds
        ]

    def playing_as(self, hub: Hub, nick: str) -> tuple[str, str | None]:
        """The nick and seat owner (a Player.seat_key; None: nobody's entry) the entrant `nick`'s next table
        is set up for: the account's nick now, but for a session begun before an admin's rename, which
        goes on under the nick it logged in with until it ends (its seats then follow the account:
        server/hub/seating.py)."""
        entry = self.by_nick.get(nick)
        if entry is None:
            return nick, None
        number = account_number(entry.seat)
        for old in reversed(entry.former if number else ()):
            player = hub.roster.online(old)
            if player is not None and player.account == number:
                return player.nick, player.seat_key
        return entry.nick, entry.seat

    def gone(self, hub: Hub) -> set[str]:
        """Guests whose session is over: the nick may be somebody else's now, so they are withdrawn."""
        return {
            e.nick
            for e in self.entries
            if not e.withdrawn and e.seat[:1] != "@" and not hub.here(e.nick, e.seat)
        }

    def of(self, player: Player) -> Entry | None:
        """The player's entry: under the nick they are logged in with (now or before a rename), or their
        account's."""
        key = nick_key(self.name(player.nick))
        for entry in self.entries:
            if entry.nick_key == key or (player.account and account_number(entry.seat) == player.account):
                return entry
        return None


def theirs(entry: Entry, player: Player) -> bool:
    """Whether the entry is the player's: their session's (a guest), or their account's under any nick."""
    return owns(entry.seat, player.seat_key) or bool(
        player.account and account_number(entry.seat) == player.account
    )
