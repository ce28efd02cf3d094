"""Quick-pairing pools (docs/protocol.md, "Seeks and quick pairing"): players wait in one, and the
server pairs them by rating, the gap it allows widening as they wait (as lichess's pools do).

The only owner of who waits in which pool. Not journalled: like a seek (server/hub/seeks.py), a place in
a pool is gone after a restart, and ends with its player's session or when its player begins another
game, any way, here or at another member of a cluster (`ended_by_a_game`, `began`). A game found here
starts as an accepted invitation does (Invitations.start_game). Each member of a cluster has its own
pools (docs/cluster.md, "Seeks and pools").
"""

from __future__ import annotations

import contextlib
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from server.engine.gametype import GameKind, GameType, parse_game_type
from server.hub.bus import EventBus
from server.hub.context import Context
from server.hub.invitations import Invitations
from server.hub.model import LOBBY, Player
from server.hub.seeks import Seeks, rating_of, refuse_each_other
from server.hub.tables import Tables
from server.protocol.codec import ProtocolError, nick_key
from server.protocol.seeks import pool_waiting

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


def _since(waiting: Waiting) -> float:
    return waiting.since


def _rating_of_waiting(waiting: Waiting) -> int:
    rating = rating_of(waiting.player)
    return UNRATED if rating is None else rating


def ended_by_a_game(seeks: Seeks, pools: Pools) -> Callable[[GameType, Sequence[str]], None]:
    """What Tables.game_started calls: players who begin a game (any way but an analysis) neither
    seek nor wait any more, here or at their member."""

    def game_started(game_type: GameType, nicks: Sequence[str]) -> None:
        if game_type.kind is not GameKind.ANALYSIS:
            began(seeks, pools, nicks)
            seeks.tell_members(nicks)

    return game_started


def began(seeks: Seeks, pools: Pools, nicks: Sequence[str]) -> None:
    """These players began a game, here or at another member: their seeks and places in pools here end."""
    seeks.end_all_of(nicks)
    pools.end_all_of(nicks)


def ended_with_the_session(seeks: Seeks, pools: Pools) -> Callable[[Player], None]:
    """What Sessions.left calls: a session that ends takes its seeks and its place in a pool along."""

    def left(player: Player) -> None:
        seeks.left(player)
        pools.leave(player)

    return left
