"""Seeks offered as invitations (docs/protocol.md, "What old clients see"): a reader whose client does
not read seeks (`ka`/`kd`) is offered one seek at a time as an ordinary incoming invitation, the `vg`
line every zagram client reads, and answers it as one: `v..a` accepts the seek (Seeks.accept, with all
its checks), `v..r` declines it for good and the next one is offered, `v..b` also blocks the seeker.

One at a time because zagram's `v..a` names no inviter; the seek a command answers is the one the
reader's last reply showed (`shown`), never one that took its place since. A real invitation always
wins: while one waits for the reader, no seek is offered, and an offer never makes the reader busy.

Every reply asks for the offer, quiet polls included, so the choice is kept per reader and made again
only when the seeks change (Seeks.changes) or the reader's own standing does. A member of a cluster
offers the other members' seeks as well, as it lists them (docs/cluster.md, "Seeks and pools").
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from server.engine.gametype import Rules
from server.hub.bus import EventBus
from server.hub.invitations import Invitations
from server.hub.model import Player
from server.hub.seeks import Seek, Seeks, refuse_each_other
from server.hub.tables import Tables
from server.protocol import events
from server.protocol.codec import ProtocolError
from server.protocol.seeks import seek_offered

# What a reader's offer was chosen by, besides the seeks: its rating, whom it blocks and ignores, its client
Standing = tuple[int, tuple[int, int, int, int, str] | None, int, int, str]
# A seek as readers decline it: ("", its number, "", "") for this member's; for another member's, that
# member, its number there, its player and its game type, which stay the same when it is listed again
# here under a new number (after Redis was unreachable), and tell it from a seek a restarted member
# numbers alike
SeekKey = tuple[str, int, str, str]
UNLISTED_DECLINES_KEPT = 1_000  # other members' seeks declined and not listed here now: the newest kept


def seek_key(seek: Seek) -> SeekKey:
    if seek.elsewhere is None:
        return ("", seek.number, "", "")
    member, number = seek.elsewhere
    return (member, number, seek.player.nick, events.game_type_text(seek.game_type))


class Offers:
    def __init__(self, bus: EventBus, tables: Tables, seeks: Seeks, invitations: Invitations) -> None:
        self.bus, self.tables, self.seeks, self.invitations = bus, tables, seeks, invitations
        self.shown: dict[Player, Seek] = {}  # the seek each reader's last reply offered
        self.declined: dict[SeekKey, set[Player]] = {}  # the readers who declined each seek
        # other members' seeks with declines that are not listed here now, the longest unlisted first:
        # their member's part of the lobby may come back (Redis unreachable a while), the seeks with it
        self.unlisted: OrderedDict[SeekKey, None] = OrderedDict()
        # what each reader's offer was chosen by, the seek (None: none) and its `vg` line
        self.chosen: dict[Player, tuple[Standing, Seek | None, str]] = {}
        self._pruned_at = 0  # Seeks.changes when `declined` last lost the seeks that ended

    def line(self, reader: Player) -> str | None:
        """The `vg` line offering the reader a seek in this reply, if any. When the offer passes from one
        seek to another of the same seeker, one reply offers nothing: MultiPoints keeps an invitation's
        row (by the inviter's nick) while `vg` lines of that nick keep coming, and would go on showing
        the first seek's game; the reader's next poll is answered at once (a nudge)."""
        seek, line = self._offer(reader)
        shown = self.shown.get(reader)
        if seek is not None and shown is not None and seek is not shown and seek.player is shown.player:
            seek = None
            self.bus.nudge(reader)
        if seek is None:
            if shown is not None:
                del self.shown[reader]
            return None
        self.shown[reader] = seek
        return line

    def answer(self, reader: Player, how: str) -> bool:
        """`a` accepts the seek the reader's last reply offered, `r` declines it for good, `b` also blocks
        its player's invitations and seeks. False when that reply offered none (an invitation's answer)."""
        seek = self.shown.get(reader)
        if seek is None or reader in self.declined.get(seek_key(seek), ()):
            return False
        if how == "a":
            if self.seeks.open.get(seek.number) is not seek:
                gone = f"{seek.player.nick} no longer offers that game: it was taken or withdrawn."
                raise ProtocolError("noSuchSeek", gone)
            self.seeks.accept(reader, seek.number)
            return True
        self.declined.setdefault(seek_key(seek), set()).add(reader)
        self.invitations.turned_away(reader, seek.player)
        self.chosen.pop(reader, None)
        if how == "b":
            self.invitations.block(reader, seek.player.nick)
        self.bus.nudge(reader)  # the next seek, if any, for an answer that came outside a poll
        return True

    def forget(self, reader: Player) -> None:
        """The reader's session ended: its declines go too (a seek lasts as long as its player's session,
        weeks for a bot's, and each decline held a whole ended session, 12 KB); a new session of the
        same person is another reader, offered the seek again."""
        self.shown.pop(reader, None)
        self.chosen.pop(reader, None)
        for key in [key for key, readers in self.declined.items() if reader in readers]:
            readers = self.declined[key]
            readers.discard(reader)
            if not readers:
                del self.declined[key]
                self.unlisted.pop(key, None)

    def _offer(self, reader: Player) -> tuple[Seek | None, str]:
        """The oldest open seek the reader may accept and has not declined, and its `vg` line; none to a
        client that reads seeks, a bot, a busy reader, one with an invitation waiting or a game to finish.
        Chosen again when the seeks change or the reader's standing does; a seeker who starts ignoring or
        blocking the reader meanwhile is seen then, and by Seeks.accept at once."""
        if (
            not self.seeks.open
            or reader.client == events.SEEKS_CLIENT
            or reader.bot
            or not reader.free
            or reader in self.invitations.incoming
        ):
            return None, ""
        standing = (
            self.seeks.changes,
            reader.record,
            len(reader.blocked),
            len(reader.ignored),
            reader.client,
        )
        chosen = self.chosen.get(reader)
        if chosen is None or chosen[0] != standing:
            self._prune()
            seek = next((seek for seek in self.seeks.open.values() if self._eligible(reader, seek)), None)
            line = (
                "" if seek is None else seek_offered(seek.player.nick, events.game_type_text(seek.game_type))
            )
            chosen = self.chosen[reader] = (standing, seek, line)
        _, seek, line = chosen
        return (None, "") if seek is None or self._has_a_game(reader) else (seek, line)

    def _eligible(self, reader: Player, seek: Seek) -> bool:
        """Whether Seeks.accept would let the reader take the seek (Seeks.open_to), neither ignores or
        blocks the other, the reader takes invitations from the seeker if a guest (a troll's fresh guests
        aimed seeks at one reader: Invitations.turning_guests_away), and the reader's client can play it:
        MultiPoints rejects every invitation to standard or territory rules by itself (ServerZagram.java,
        `isEmptyScored = rulesAsString.matches("t|s")`) and writes to the inviter that it cannot play them."""
        return (
            seek.player is not reader
            and (not self.declined or reader not in self.declined.get(seek_key(seek), ()))
            and not refuse_each_other(reader, seek.player)
            and not (seek.player.guest and self.invitations.turning_guests_away(reader, seek.player))
            and self.seeks.open_to(reader, seek.number)
            and (reader.client != events.JAVA_CLIENT or seek.game_type.rules is Rules.NO_TERRITORY)
        )

    def _has_a_game(self, reader: Player) -> bool:
        """A seat at an unfinished game (an analysis is none): MultiPoints rejects invitations while its
        player is busy, and a game of one's own waits to be finished first."""
        for uid in self.tables.seats.get(reader.nick, ()):
            table = self.tables.get(uid)
            room = table.room if table is not None else None
            if room is not None and not room.analysis and room.game.result is None and table.seat_of(reader):
                return True
        return False

    def _prune(self) -> None:
        """The declines of seeks that ended go, once after each change of the seeks; those of another
        member's seeks that are not listed here are kept a while (UNLISTED_DECLINES_KEPT)."""
        if self._pruned_at == self.seeks.changes:
            return
        self._pruned_at = self.seeks.changes
        listed = {seek_key(seek) for seek in self.seeks.open.values()}
        for key in [key for key in self.declined if key not in listed]:
            if not key[0]:
                del self.declined[key]
            elif key not in self.unlisted:
                self.unlisted[key] = None
        for key in [key for key in self.unlisted if key in listed]:
            del self.unlisted[key]
        while len(self.unlisted) > UNLISTED_DECLINES_KEPT:
            key, _ = self.unlisted.popitem(last=False)
            del self.declined[key]


def forgetting(offers: Offers, left: Callable[[Player], None]) -> Callable[[Player], None]:
    """What Sessions.left calls: `left`, and the offers forget the reader."""

    def both(player: Player) -> None:
        left(player)
        offers.forget(player)

    return both
