"""Finding a game without knowing anyone (docs/protocol.md, "Seeks and quick pairing"): seeks, open
challenges in the lobby that anyone eligible accepts; and quick-pairing pools, whose waiting players the
server pairs by rating, the gap it allows widening as they wait (as lichess's pools do).

The only owner of the open seeks and of who waits in which pool. Neither is journalled: like a pending
invitation, a seek or a place in a pool is gone after a restart, and ends with its player's session or
when its player begins another game, any way (`game_started`). A game found here starts as an accepted
invitation does (Invitations.start_game). Each member of a cluster has its own (docs/cluster.md).
"""

from __future__ import annotations

import contextlib
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from server.engine.gametype import GameKind, GameType, GameTypeError, StartKind, parse_game_type
from server.hub.bus import EventBus
from server.hub.context import Context
from server.hub.invitations import Invitations
from server.hub.limits import within_a_minute
from server.hub.model import LOBBY, Player
from server.hub.tables import Tables
from server.protocol import events
from server.protocol.codec import ProtocolError, nick_key
from server.protocol.seeks import (
    AcceptSeek,
    CancelSeek,
    PostSeek,
    RatingRange,
    SeekCommand,
    parse_seek_command,
    pool_waiting,
    seek_added,
    seek_gone,
)

MOST_SEEKS = 3  # open seeks of one player
# open seeks on the server: every whole lobby state lists them all (about 50 bytes each)
MOST_OPEN_SEEKS = 300
SEEKS_PER_MINUTE = 10  # seeks one player may post in a minute (a flood is refused `seekFlood`)
# The quick-pairing pools: name -> game type (ranked, standard rules, four starting crosses, the server
# draws who is blue: the lower rating in a ranked game between two accounts). docs/protocol.md names them.
POOLS = {
    "20x20_3_2": "2020s0.4.s.R.a.180.2..",
    "25x25_5_5": "2525s0.4.s.R.a.300.5..",
    "39x32_5_5": "3932s0.4.s.R.a.300.5..",
    "39x32_15_10": "3932s0.4.s.R.a.900.10..",
}
# The rating gap a pool allows between two players: GAP_AT_FIRST at once, GAP_GROWTH more for each second
# the one of them who waited longer has waited; so anyone is paired with anyone after about a minute.
GAP_AT_FIRST = 100
GAP_GROWTH = 20
UNRATED = 1500  # a guest's rating for pairing: where every account starts (docs/ratings.md)


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
    player: Player
    game_type: GameType
    rating_range: RatingRange

    def line(self) -> str:
        return seek_added(
            self.number, self.player.nick, self.rating_range, events.game_type_text(self.game_type)
        )


class Seeks:
    def __init__(self, ctx: Context, bus: EventBus, tables: Tables, invitations: Invitations) -> None:
        self.ctx, self.bus, self.tables, self.invitations = ctx, bus, tables, invitations
        self.open: dict[int, Seek] = {}  # by number, oldest first
        self.posted: dict[Player, deque[tuple[float, str]]] = {}  # the seeks each posted in the last minute
        self._last_number = 0
        self.changes = 0  # counts seeks posted and ended: what a reader was offered is kept until it moves

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
        if len(self.open) >= MOST_OPEN_SEEKS:
            raise ProtocolError(
                "tooManySeeks",
                f"The lobby has {MOST_OPEN_SEEKS} open seeks already: accept one, or try later.",
            )
        now = self.ctx.timers.now()
        posted = self.posted.setdefault(player, deque())
        within_a_minute(posted, now, SEEKS_PER_MINUTE, "seekFlood", "seeks")
        self.ctx.limits.games_of(self.tables.values(), player)
        self._last_number += 1
        seek = self.open[self._last_number] = Seek(self._last_number, player, game_type, rating_range)
        self.changes += 1
        posted.append((now, ""))
        self.bus.publish(LOBBY, seek.line())
        return seek.number

    def accept(self, player: Player, number: int) -> None:
        """The game starts at once, as an accepted invitation's does; blue is whom the game type says
        (`a` the seeker, `p` the one who accepts, `s` drawn by the server)."""
        seek = self._seek(number)
        self._check_eligible(player, seek)
        self.invitations.start_game(seek.player, player, seek.game_type)  # game_started ends the seek

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
        if nick_key(player.nick) in seeker.blocked or seeker.ignores(player.nick):
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
        self.bus.publish(LOBBY, seek_gone(seek.number))

    def end_all_of(self, nicks: Sequence[str]) -> None:
        """These players' seeks end (they began a game, or left)."""
        keys = {nick_key(nick) for nick in nicks}
        for seek in [seek for seek in self.open.values() if nick_key(seek.player.nick) in keys]:
            self._end(seek)

    def left(self, player: Player) -> None:
        self.end_all_of((player.nick,))
        self.posted.pop(player, None)

    def lines(self) -> list[str]:
        """The open seeks as the lobby's whole state lists them."""
        return [seek.line() for seek in self.open.values()]


@dataclass(eq=False)
class Waiting:
    player: Player
    pool: str
    since: float  # timers' time


class Pools:
    def __init__(self, ctx: Context, bus: EventBus, tables: Tables, invitations: Invitations) -> None:
        self.ctx, self.bus, self.tables, self.invitations = ctx, bus, tables, invitations
        self.game_types = {name: parse_game_type(text) for name, text in POOLS.items()}
        self.waiting: dict[Player, Waiting] = {}  # in the order they came

    def command(self, player: Player, text: str) -> None:
        """A `j` command: `<pool>` joins it (leaving another), an empty text leaves."""
        if text:
            self.join(player, text)
        else:
            self.leave(player)

    def join(self, player: Player, pool: str) -> None:
        """Wait in `pool`; paired at once when someone there is near enough in rating, else at the
        hub's sweeps, the gap allowed growing. Joining the pool one waits in changes nothing."""
        if pool not in self.game_types:
            raise ProtocolError(
                "noSuchPool", f"There is no pool {pool[:20]}; the pools are {', '.join(POOLS)}."
            )
        present = self.waiting.get(player)
        if present is not None and present.pool == pool:
            return
        self.ctx.limits.games_of(self.tables.values(), player)
        self.tables.room_for_a_table(player)
        self.waiting.pop(player, None)
        self.waiting[player] = Waiting(player, pool, self.ctx.timers.now())
        self.bus.nudge(player)
        self.pair(pool)

    def leave(self, player: Player) -> None:
        if self.waiting.pop(player, None) is not None:
            self.bus.nudge(player)

    def end_all_of(self, nicks: Sequence[str]) -> None:
        keys = {nick_key(nick) for nick in nicks}
        for player in [player for player in self.waiting if nick_key(player.nick) in keys]:
            self.leave(player)

    def gap(self, waiting: Waiting, now: float) -> int:
        return GAP_AT_FIRST + int(GAP_GROWTH * max(0.0, now - waiting.since))

    def pair_all(self) -> None:
        """The sweep's turn: the gaps have grown. Whoever still waits is nudged, so that a long poll
        shows the time waited and the gap as they grow (the `w` line is not an event)."""
        for pool in POOLS:
            self.pair(pool)
        self.bus.nudge(*self.waiting)

    def pair(self, pool: str) -> None:
        """Whoever waited longest first takes the nearest rating within the gap the longer waiter of the
        two allows, the earlier comer between equals. Not while storage fails: a game cannot open. The
        pools are rated: a bot is paired with bots only, unless the admin lets bots play people rated
        (--bots-rated), as a rated invitation between a bot and a person is refused `botUnrated`.

        Each looks only at the ratings within the widest gap (the longest waiter's), found by bisection
        in the pool sorted by rating: those who wait are spread over the ratings (two within
        GAP_AT_FIRST of each other are paired the moment the second comes), so few are that near."""
        if self.ctx.persistence.storage_failure is not None:
            return
        queue = [waiting for waiting in self.waiting.values() if waiting.pool == pool]  # oldest first
        if len(queue) < 2:
            return
        now = self.ctx.timers.now()
        by_rating = sorted(queue, key=_rating_of_waiting)
        ratings = [_rating_of_waiting(waiting) for waiting in by_rating]
        widest = self.gap(queue[0], now)
        for first in queue:
            if self.waiting.get(first.player) is not first:  # paired, or taken out, meanwhile
                continue
            rating = _rating_of_waiting(first)
            near = by_rating[bisect_left(ratings, rating - widest) : bisect_right(ratings, rating + widest)]
            others = [
                other
                for other in near
                if other is not first
                and self.waiting.get(other.player) is other
                and abs(_rating_of_waiting(other) - rating) <= self.gap(min(first, other, key=_since), now)
                and not refuse_each_other(first.player, other.player)
                and self.ctx.limits.may_play_rated(first.player, other.player)
            ]
            if others:
                self._start(first, min(others, key=lambda other: abs(_rating_of_waiting(other) - rating)))

    def _start(self, first: Waiting, second: Waiting) -> None:
        """Their game (which takes both out of the pool: `game_started`), if both may still play one;
        one who may not leaves the pool, told why."""
        for waiting in (first, second):
            try:
                self.ctx.limits.games_of(self.tables.values(), waiting.player)
            except ProtocolError as refused:
                self.leave(waiting.player)
                self.tables.tell(waiting.player, LOBBY, refused.code, str(refused))
                return
        with contextlib.suppress(ProtocolError):  # no table free just now: both wait for the next sweep
            self.invitations.start_game(first.player, second.player, self.game_types[first.pool])

    def lines(self, player: Player) -> list[str]:
        """What every reply to a waiting player repeats (`w`)."""
        waiting = self.waiting.get(player)
        if waiting is None:
            return []
        now = self.ctx.timers.now()
        count = sum(other.pool == waiting.pool for other in self.waiting.values())
        return [pool_waiting(waiting.pool, int(now - waiting.since), self.gap(waiting, now), count)]


def _range_words(rating_range: RatingRange) -> str:
    if rating_range.lowest is None:
        return f"up to {rating_range.highest}"
    if rating_range.highest is None:
        return f"from {rating_range.lowest}"
    return f"{rating_range.lowest} to {rating_range.highest}"


def _since(waiting: Waiting) -> float:
    return waiting.since


def _rating_of_waiting(waiting: Waiting) -> int:
    rating = rating_of(waiting.player)
    return UNRATED if rating is None else rating


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


def ended_by_a_game(seeks: Seeks, pools: Pools) -> Callable[[GameType, Sequence[str]], None]:
    """What Tables.game_started calls: players who begin a game (any way but an analysis) neither
    seek nor wait any more."""

    def game_started(game_type: GameType, nicks: Sequence[str]) -> None:
        if game_type.kind is not GameKind.ANALYSIS:
            seeks.end_all_of(nicks)
            pools.end_all_of(nicks)

    return game_started


def ended_with_the_session(seeks: Seeks, pools: Pools) -> Callable[[Player], None]:
    """What Sessions.left calls: a session that ends takes its seeks and its place in a pool along."""

    def left(player: Player) -> None:
        seeks.left(player)
        pools.leave(player)

    return left
