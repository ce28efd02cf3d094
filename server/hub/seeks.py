"""Seeks (docs/protocol.md, "Seeks and quick pairing"): open challenges in the lobby that anyone eligible
accepts, a way to find a game without knowing anyone; the quick-pairing pools are server/hub/pools.py.

The only owner of the open seeks. Not journalled: like a pending invitation, a seek is gone after a
restart, and ends with its player's session or when its player begins another game, any way, here or at
another member of a cluster (server/hub/pools.py, `ended_by_a_game`, `began`). A game found here starts
as an accepted invitation does (Invitations.start_game).

In a cluster (docs/cluster.md, "Seeks and pools"), every member lists the other members' seeks as well,
numbered as its own (`follow`), and one accepted here goes to the seeker's member, which checks it as
its own and opens the table (`accepted_from`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from server.engine.gametype import GameKind, GameType, GameTypeError, StartKind, parse_game_type
from server.hub.bus import EventBus
from server.hub.context import Context
from server.hub.invitations import Invitations
from server.hub.limits import within_a_minute
from server.hub.model import LOBBY, Player, reserved
from server.hub.remote import RemoteLobby
from server.hub.tables import Tables
from server.hub.visiting import person, visiting
from server.protocol import events
from server.protocol.codec import ProtocolError, nick_key
from server.protocol.seeks import (
    AcceptSeek,
    CancelSeek,
    PostSeek,
    RatingRange,
    SeekCommand,
    parse_seek_added,
    parse_seek_command,
    seek_added,
    seek_gone,
)

MOST_SEEKS = 3  # open seeks of one player
# open seeks on the server: every whole lobby state lists them all (about 50 bytes each)
MOST_OPEN_SEEKS = 300
SEEKS_PER_MINUTE = 10  # seeks one player may post in a minute (a flood is refused `seekFlood`)


def rating_of(player: Player) -> int | None:
    return player.record[0] if player.record is not None else None


def refuse_each_other(one: Player, other: Player) -> bool:
    """Whether either refuses the other's invitations (`v..b`) or ignores them."""
    return (
        nick_key(other.nick) in one.blocked
        or nick_key(one.nick) in other.blocked
        or one.ignores(other.nick)
        or other.ignores(one.nick)
    )


@dataclass(eq=False)
class Seek:
    number: int
    player: Player  # for another member's seek, who stands here for its player (visiting.visiting)
    game_type: GameType
    rating_range: RatingRange
    elsewhere: tuple[str, int] | None = None  # another member's seek: that member, and its number there
    asked: set[Player] = field(default_factory=set)  # who here accepted it and waits for its member
    refused: set[Player] = field(default_factory=set)  # whom its player blocks or ignores, as its member said

    def line(self) -> str:
        return seek_added(
            self.number, self.player.nick, self.rating_range, events.game_type_text(self.game_type)
        )


class Seeks:
    def __init__(
        self, ctx: Context, bus: EventBus, tables: Tables, invitations: Invitations, remote: RemoteLobby
    ) -> None:
        self.ctx, self.bus, self.tables, self.invitations, self.remote = ctx, bus, tables, invitations, remote
        self.open: dict[int, Seek] = {}  # by number, oldest first: this member's and the others'
        self.posted: dict[Player, deque[tuple[float, str]]] = {}  # the seeks each posted in the last minute
        self._last_number = 0
        self.changes = 0  # counts seeks posted and ended: what a reader was offered is kept until it moves
        self.elsewhere: dict[str, dict[int, Seek]] = {}  # member -> its number -> its seek listed here
        self.send: Callable[[str, dict[str, Any]], None] | None = None  # a member of a cluster

    def command(self, player: Player, text: str) -> None:
        """A `k` command: post, accept or cancel (server/protocol/seeks.py)."""
        self.do(player, parse_seek_command(text))

    def do(self, player: Player, command: SeekCommand) -> int | None:
        """A `k` command or its endpoint (co=seek, acceptSeek, cancelSeek); a posted seek's number."""
        if isinstance(command, PostSeek):
            return self.add(player, command.game_type, command.rating_range)
        if isinstance(command, AcceptSeek):
            self.accept(player, command.number)
        elif isinstance(command, CancelSeek):
            self.cancel(player, command.number)
        return None

    def add(self, player: Player, game_type_text: str, rating_range: RatingRange) -> int:
        """A new seek, for everyone in the lobby (`ka`); its number."""
        game_type = _game_of_two(game_type_text)
        if sum(seek.player is player for seek in self.open.values()) >= MOST_SEEKS:
            raise ProtocolError(
                "tooManySeeks", f"You have {MOST_SEEKS} open seeks already: cancel one first."
            )
        self.ctx.limits.room_for_a_seek([seek.player for seek in self.open.values()], player, MOST_OPEN_SEEKS)
        now = self.ctx.timers.now()
        posted = self.posted.setdefault(player, deque())
        within_a_minute(posted, now, SEEKS_PER_MINUTE, "seekFlood", "seeks")
        self.ctx.limits.games_of(self.tables, player)
        seek = self._list(player, game_type, rating_range)
        posted.append((now, ""))
        return seek.number

    def _list(
        self,
        player: Player,
        game_type: GameType,
        rating_range: RatingRange,
        elsewhere: tuple[str, int] | None = None,
    ) -> Seek:
        """A seek for everyone in the lobby (`ka`); another member's is shown to the readers here only."""
        self._last_number += 1
        seek = Seek(self._last_number, player, game_type, rating_range, elsewhere)
        self.open[seek.number] = seek
        self.changes += 1
        if elsewhere is None:
            self.bus.publish(LOBBY, seek.line())
        else:
            self.bus.relay(seek.line())
        return seek

    def accept(self, player: Player, number: int) -> None:
        """The game starts at once, as an accepted invitation's does; blue is whom the game type says
        (`a` the seeker, `p` the one who accepts, `s` drawn by the server). Another member's seek: see
        `_ask`."""
        seek = self._seek(number)
        self._check_eligible(player, seek)
        if seek.elsewhere is not None:
            self._ask(player, seek)
            return
        self._start(seek, player)

    def _start(self, seek: Seek, player: Player) -> None:
        """The seek's game with `player` (game_started ends the seek). A seeker who may begin no game now
        (their address's guests hold their most tables) withdraws their seeks, told why, and `player`
        is refused as for a seek gone: that refusal speaks of the seeker's address, not the player's,
        and the seek would stay, offered to every old client (server/hub/offers.py), never playable."""
        seeker = seek.player
        try:
            self.ctx.limits.may_begin_a_game(self.tables, seeker)
        except ProtocolError as refused:
            self.end_all_of((seeker.nick,))
            self.tables.tell(seeker, LOBBY, refused.code, str(refused))
            raise ProtocolError(
                "noSuchSeek", f"{seeker.nick} cannot begin a game now: the seek is withdrawn."
            ) from None
        self.invitations.start_game(seeker, player, seek.game_type)

    def open_to(self, player: Player, number: int) -> bool:
        """Whether seek `number` is open and `player` may accept it (or it is theirs): what a bot's
        feed lists (docs/bots.md)."""
        seek = self.open.get(number)
        if seek is None or seek.player is player:
            return seek is not None
        try:
            self._check_eligible(player, seek)
        except ProtocolError:
            return False
        return True

    def _check_eligible(self, player: Player, seek: Seek) -> None:
        seeker = seek.player
        if seeker is player:
            raise ProtocolError("notEligible", "This is your own seek: cancel it instead.")
        if nick_key(player.nick) in seeker.blocked or seeker.ignores(player.nick) or player in seek.refused:
            raise ProtocolError("blocked", f"{seeker.nick} does not accept your invitations.")
        if not seek.rating_range.admits(rating_of(player)):
            raise ProtocolError("notEligible", f"This seek is for ratings {_range_words(seek.rating_range)}.")
        self.ctx.limits.rated_between(seek.game_type.ranked, seeker, player)

    def cancel(self, player: Player, number: int) -> None:
        seek = self._seek(number)
        if seek.player is not player:
            raise ProtocolError("noSuchSeek", "That is not your seek.")
        self._end(seek)

    def _seek(self, number: int) -> Seek:
        seek = self.open.get(number)
        if seek is None:
            raise ProtocolError("noSuchSeek", f"There is no seek {number}: it was taken or withdrawn.")
        return seek

    def _end(self, seek: Seek) -> None:
        del self.open[seek.number]
        self.changes += 1
        if seek.elsewhere is None:
            self.bus.publish(LOBBY, seek_gone(seek.number))
        else:
            self.bus.relay(seek_gone(seek.number))

    def end_all_of(self, nicks: Sequence[str]) -> None:
        """These players' seeks here end (they began a game, or left); another member's end when it says."""
        keys = {nick_key(nick) for nick in nicks}
        for seek in [seek for seek in self.open.values() if nick_key(seek.player.nick) in keys]:
            if seek.elsewhere is None:
                self._end(seek)

    def tell_members(self, nicks: Sequence[str]) -> None:
        """These players began a game here: the members of those who are people of another member end
        their seeks and pools there (`began`, server/hub/peers.py), as this member's end here."""
        if self.send is None:
            return
        for nick in nicks:
            found = None if reserved(nick) else self.remote.member_of(nick)  # the AI players are everywhere
            if found is not None:
                self.send(found[0], {"began": [found[1]]})

    # --- the other members' seeks (docs/cluster.md, "Seeks and pools") -----------------------------

    def follow(self, member: str, listed: Mapping[int, str]) -> None:
        """`member`'s open seeks are `listed` now (its number -> its `ka` line; none once it left): the
        readers here are shown the ones new to them and told of the ones gone, under numbers of this
        member, so that no two seeks here share one."""
        theirs = self.elsewhere.setdefault(member, {})
        for number in [number for number in theirs if number not in listed]:
            self._end(theirs.pop(number))
        for number, line in listed.items():
            if number not in theirs:
                seek = self._list_theirs(member, number, line)
                if seek is not None:
                    theirs[number] = seek
        if not theirs:
            del self.elsewhere[member]

    def _list_theirs(self, member: str, number: int, line: str) -> Seek | None:
        """`member`'s seek `number` listed here; None for a line this member cannot read, or a game type
        it would refuse (its readers could not play it)."""
        added = parse_seek_added(line)
        if added is None:
            return None
        try:
            game_type = _game_of_two(added.game_type)
        except ProtocolError:
            return None
        return self._list(self._seeker(member, added.nick), game_type, added.rating_range, (member, number))

    def _seeker(self, member: str, nick: str) -> Player:
        """Who stands here for a player of `member` with seeks: one for all of them, so that an offer
        tells one seeker's seeks from another's (server/hub/offers.py)."""
        for seek in self.elsewhere[member].values():
            if seek.player.nick == nick:
                return seek.player
        return visiting(
            member, {"nick": nick, "guest": nick.startswith("*"), "bot": self.remote.bot(member, nick)}
        )

    def _ask(self, player: Player, seek: Seek) -> None:
        """Another member's seek accepted here: what concerns the player is checked here (its rating and
        bots already were), the rest by the seeker's member, which opens the table (`accepted_from`);
        the player sits down at it as at any game of theirs on another member, or is told why not
        (`refused_elsewhere`). Asking twice sends once."""
        if player in seek.asked:
            return
        self.ctx.limits.games_of(self.tables, player)
        assert seek.elsewhere is not None
        if self.send is None:  # cut off from the members: their seeks are about to leave (drop_part)
            raise ProtocolError("notOnline", f"{seek.player.nick} cannot be reached now.")
        member, number = seek.elsewhere
        seek.asked.add(player)
        self.send(member, {"accept_seek": [number, person(player)]})

    def accepted_from(self, member: str, number: int, someone: dict[str, Any]) -> None:
        """A player of `member` accepts seek `number` of this member: checked as one accepted here, its
        game opened here; a refusal goes back."""
        stranger = visiting(member, someone)
        try:
            self.ctx.writable()
            seek = self.open.get(number)
            if seek is None or seek.elsewhere is not None:
                raise ProtocolError("noSuchSeek", "That seek was taken or withdrawn.")
            self._check_eligible(stranger, seek)
            self._start(seek, stranger)
        except ProtocolError as refused:
            if self.send is not None:
                self.send(member, {"seek_refused": [number, stranger.nick, refused.code, str(refused)]})

    def refused_elsewhere(self, member: str, number: int, nick: str, refused: ProtocolError) -> None:
        """The seeker's member refused the player here who accepted its seek `number`: told why; one its
        seeker blocks or ignores is not offered the seek again. After the seek ended here nobody is told:
        its `kd` said it is gone."""
        seek = self.elsewhere.get(member, {}).get(number)
        if seek is None:
            return
        for player in [player for player in seek.asked if player.nick == nick]:
            seek.asked.discard(player)
            if refused.code == "blocked":
                seek.refused.add(player)
                self.changes += 1  # the offers are chosen again (server/hub/offers.py)
            self.tables.tell(player, LOBBY, refused.code, str(refused))

    def not_delivered(self, member: str, number: int, nick: str) -> None:
        """An acceptance nobody took: `member` is gone or cut off."""
        seek = self.elsewhere.get(member, {}).get(number)
        if seek is not None:
            gone = ProtocolError("notOnline", f"{seek.player.nick} cannot be reached now.")
            self.refused_elsewhere(member, number, nick, gone)

    def left(self, player: Player) -> None:
        self.end_all_of((player.nick,))
        self.posted.pop(player, None)

    def lines(self) -> list[str]:
        """The open seeks as the lobby's whole state lists them."""
        return [seek.line() for seek in self.open.values()]

    def own_lines(self) -> list[str]:
        """This member's open seeks, as the other members list them (Lobby.own_part)."""
        return [seek.line() for seek in self.open.values() if seek.elsewhere is None]


def _range_words(rating_range: RatingRange) -> str:
    if rating_range.lowest is None:
        return f"up to {rating_range.highest}"
    if rating_range.highest is None:
        return f"from {rating_range.lowest}"
    return f"{rating_range.lowest} to {rating_range.highest}"


def _game_of_two(game_type_text: str) -> GameType:
    """A seek's game: ranked or free between two people, on an empty board or with crosses."""
    try:
        game_type = parse_game_type(game_type_text)
    except GameTypeError as refused:
        raise ProtocolError("badGameType", f"Game type refused: {refused}.") from None
    if game_type.kind not in (GameKind.RANKED, GameKind.FREE) or game_type.start.kind is StartKind.SGF:
        raise ProtocolError("badGameType", "A seek is a ranked or free game between two players.")
    if game_type.tournament:
        raise ProtocolError("badGameType", "Tournament games are set up by organisers.")
    return game_type
