"""Quick-pairing pools (docs/protocol.md, "Seeks and quick pairing"): players wait in one, and the
server pairs them by rating, the gap it allows widening as they wait (as lichess's pools do).

The only owner of who waits in which pool. Not journalled: like a seek (server/hub/seeks.py), a place in
a pool is gone after a restart, and ends with its player's session or when its player begins another
game, any way, here or at another member of a cluster (`ended_by_a_game`, `began`). A game found here
starts as an accepted invitation does (Invitations.start_game).

In a cluster (docs/cluster.md, "Seeks and pools"), every member shares its waiters with the others
(`ja`/`jd` lines, for the members alone) and pairs its own with theirs as well: of two players of two
members, the one who came first (`_order`, the same at every member) is the one whose member looks for
a partner, and proposes the pairing to the other's member, which opens the table if its player still
waits (`paired_from`). While a pairing is proposed, both wait for its answer and are paired with nobody
else, for PROPOSAL_WAIT at most.
"""

from __future__ import annotations

import contextlib
from bisect import bisect_left, bisect_right
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from server.engine.gametype import GameKind, GameType, parse_game_type
from server.hub.bus import EventBus
from server.hub.context import Context
from server.hub.invitations import Invitations
from server.hub.limits import within_a_minute
from server.hub.model import LOBBY, Player
from server.hub.seeks import Seeks, rating_of, refuse_each_other
from server.hub.tables import Tables
from server.hub.visiting import person, visiting
from server.protocol.codec import ProtocolError, nick_key
from server.protocol.seeks import PoolWaiter, parse_pool_waiter, pool_left, pool_waiter, pool_waiting

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
# Seconds a pairing proposed to another member holds both players while its answer is awaited: the answer
# is a table or a refusal within a round trip, unless the message or the member was lost.
PROPOSAL_WAIT = 10.0
# Pools one player may join in a minute: each join is a line to every member of a cluster, so a client
# toggling pools in every command of every poll would flood them all (refused `tooFast`).
JOINS_PER_MINUTE = 20
# A pairing refused because the player of the member that proposed it may begin no game at the other's
# tables now (their games begun there in the hour): that member takes them out of the pool.
MAY_NOT_PLAY = "mayNotPlay"


@dataclass(eq=False)
class Waiting:
    player: Player  # for another member's waiter, who stands here for its player (visiting.visiting)
    pool: str
    since: float  # timers' time
    joined: float  # wall time, which every member shares: the order of the waiters of all members
    member: str | None = None  # another member's waiter: that member
    rating: int | None = None  # another member's waiter: its rating as that member said (None: a guest)
    line: str = ""  # another member's waiter: the `ja` line it was listed from
    proposed: float | None = None  # timers' time a pairing across members was proposed for it, unanswered

    def shared(self) -> str:
        """The `ja` line the other members pair this member's waiter by."""
        rating = rating_of(self.player)
        return pool_waiter(PoolWaiter(self.player.nick, self.pool, rating, self.joined, self.player.bot))


class Pools:
    def __init__(self, ctx: Context, bus: EventBus, tables: Tables, invitations: Invitations) -> None:
        self.ctx, self.bus, self.tables, self.invitations = ctx, bus, tables, invitations
        self.game_types = {name: parse_game_type(text) for name, text in POOLS.items()}
        self.waiting: dict[Player, Waiting] = {}  # in the order they came
        self.joins: dict[Player, deque[tuple[float, str]]] = {}  # the pools each joined in the last minute
        self.elsewhere: dict[str, dict[str, Waiting]] = {}  # member -> nick -> its waiter
        # (nick key here, nick key elsewhere): whom the other's member refused, as one blocks the other
        self.refused: set[tuple[str, str]] = set()
        # how many wait in each pool, every member's, counted again after a change (`waiting_in`)
        self._counts: Counter[str] | None = None
        self.send: Callable[[str, dict[str, Any]], None] | None = None  # a member of a cluster

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
        now = self.ctx.timers.now()
        joins = self.joins.setdefault(player, deque())
        within_a_minute(joins, now, JOINS_PER_MINUTE, "tooFast", "pools joined")
        self.ctx.limits.games_of(self.tables, player)
        self.tables.room_for_a_table(player)
        joins.append((now, pool))
        self.waiting.pop(player, None)
        waiting = self.waiting[player] = Waiting(player, pool, now, self.ctx.clock())
        self._counts = None
        self.bus.share(waiting.shared())
        self.bus.nudge(player)
        self.pair(pool)

    def leave(self, player: Player) -> None:
        if self.waiting.pop(player, None) is not None:
            self._counts = None
            self.bus.share(pool_left(player.nick))
            key = nick_key(player.nick)
            self.refused = {pair for pair in self.refused if pair[0] != key}
            self.bus.nudge(player)

    def left(self, player: Player) -> None:
        """The player's session ended."""
        self.leave(player)
        self.joins.pop(player, None)

    def end_all_of(self, nicks: Sequence[str]) -> None:
        keys = {nick_key(nick) for nick in nicks}
        for player in [player for player in self.waiting if nick_key(player.nick) in keys]:
            self.leave(player)

    def gap(self, waiting: Waiting, now: float) -> int:
        return GAP_AT_FIRST + int(GAP_GROWTH * max(0.0, now - waiting.since))

    def pair_all(self) -> None:
        """The sweep's turn: the gaps have grown, and the pairings proposed PROPOSAL_WAIT ago that no
        answer came for lapse. Whoever still waits is nudged, so that a long poll shows the time waited
        and the gap as they grow (the `w` line is not an event)."""
        lapsed = self.ctx.timers.now() - PROPOSAL_WAIT
        for waiting in self._everyone():
            if waiting.proposed is not None and waiting.proposed <= lapsed:
                waiting.proposed = None
        for pool in POOLS:
            self.pair(pool)
        self.bus.nudge(*self.waiting)

    def pair(self, pool: str) -> None:
        """Whoever waited longest first takes the nearest rating within the gap the longer waiter of the
        two allows, the earlier comer between equals. Not while storage fails: a game cannot open. The
        pools are rated: a bot is paired with bots only, unless the admin lets bots play people rated
        (--bots-rated), as a rated invitation between a bot and a person is refused `botUnrated`. Only
        those here look: another member's waiter is taken by one who came before it (`_may_propose`),
        and looks itself at its own member.

        Each looks only at the ratings within the widest gap (the longest waiter's), found by bisection
        in the pool sorted by rating: those who wait are spread over the ratings (two within
        GAP_AT_FIRST of each other are paired the moment the second comes), so few are that near."""
        if self.ctx.persistence.storage_failure is not None:
            return
        queue = [w for w in self.waiting.values() if w.pool == pool and w.proposed is None]  # oldest first
        theirs = [w for w in self._elsewhere() if w.pool == pool and w.proposed is None]
        if not queue or len(queue) + len(theirs) < 2:
            return
        now = self.ctx.timers.now()
        by_rating = sorted(queue + theirs, key=_rating_of_waiting)
        ratings = [_rating_of_waiting(waiting) for waiting in by_rating]
        widest = self.gap(min(by_rating, key=_since), now)
        for first in queue:
            if not self._free(first):  # paired, taken out or proposed meanwhile
                continue
            rating = _rating_of_waiting(first)
            near = by_rating[bisect_left(ratings, rating - widest) : bisect_right(ratings, rating + widest)]
            others = [
                other
                for other in near
                if other is not first
                and self._free(other)
                and (other.member is None or self._may_propose(first, other))
                and abs(_rating_of_waiting(other) - rating) <= self.gap(min(first, other, key=_since), now)
                and not refuse_each_other(first.player, other.player)
                and self.ctx.limits.may_play_rated(first.player, other.player)
            ]
            if others:
                nearest = min(others, key=lambda other: abs(_rating_of_waiting(other) - rating))
                if nearest.member is None:
                    self._start(first, nearest)
                else:
                    self._propose(first, nearest)

    def _free(self, waiting: Waiting) -> bool:
        """Still waits, and for no answer to a pairing across members."""
        if waiting.proposed is not None:
            return False
        if waiting.member is None:
            return self.waiting.get(waiting.player) is waiting
        return self.elsewhere.get(waiting.member, {}).get(waiting.player.nick) is waiting

    def _may_propose(self, first: Waiting, other: Waiting) -> bool:
        """Whether this member pairs its `first` with another member's `other`: when `first` came
        first (the other's member pairs them otherwise), and the other's member refused no pairing of
        the two for a block."""
        if self.send is None or _order(other) < _order(first):
            return False
        return (nick_key(first.player.nick), nick_key(other.player.nick)) not in self.refused

    def _start(self, first: Waiting, second: Waiting) -> None:
        """Their game (which takes both out of the pool: `game_started`), if both may still play one."""
        if self._may_play(first) and self._may_play(second):
            with contextlib.suppress(ProtocolError):  # no table free just now: both wait for the next sweep
                self.invitations.start_game(first.player, second.player, self.game_types[first.pool])

    def _may_play(self, waiting: Waiting) -> bool:
        """Whether a waiter here may begin a game now; one at the cap of games, or whose address's guests
        hold their most tables, leaves the pool, told why: waiting on, they would be chosen again at every
        sweep, and no table opened for those chosen with them."""
        try:
            self.ctx.limits.may_begin_a_game(self.tables, waiting.player)
        except ProtocolError as refused:
            self.leave(waiting.player)
            self.tables.tell(waiting.player, LOBBY, refused.code, str(refused))
            return False
        return True

    def lines(self, player: Player) -> list[str]:
        """What every reply to a waiting player repeats (`w`): the count is of every member's waiters."""
        waiting = self.waiting.get(player)
        if waiting is None:
            return []
        now = self.ctx.timers.now()
        count = self.waiting_in(waiting.pool)
        return [pool_waiting(waiting.pool, int(now - waiting.since), self.gap(waiting, now), count)]

    def waiting_in(self, pool: str) -> int:
        """Every member's waiters in `pool`: counted once a change, not once a waiting player's reply."""
        if self._counts is None:
            self._counts = Counter(waiting.pool for waiting in self._everyone())
        return self._counts[pool]

    def own_lines(self) -> list[str]:
        """This member's waiters, as the other members pair them (Hub.lobby_part)."""
        return [waiting.shared() for waiting in self.waiting.values()]

    def _everyone(self) -> Iterator[Waiting]:
        yield from self.waiting.values()
        yield from self._elsewhere()

    def _elsewhere(self) -> Iterator[Waiting]:
        for theirs in self.elsewhere.values():
            yield from theirs.values()

    # --- the other members' waiters (docs/cluster.md, "Seeks and pools") ----------------------------

    def follow(self, member: str, listed: Mapping[str, str]) -> None:
        """`member`'s waiters are `listed` now (nick -> its `ja` line; none once it left): those here
        are paired with them as well, at once when one came."""
        theirs = self.elsewhere.setdefault(member, {})
        changed = {theirs.pop(nick).pool for nick in [nick for nick in theirs if nick not in listed]}
        for nick, line in listed.items():
            known = theirs.get(nick)
            if known is not None and known.line == line:
                continue
            waiter = parse_pool_waiter(line)
            if waiter is None or waiter.nick != nick or waiter.pool not in self.game_types:
                if known is not None:  # gone to a pool this member does not have (a newer member's)
                    changed.add(theirs.pop(nick).pool)
                continue
            theirs[nick] = self._listed(member, waiter, line)
            changed |= {waiter.pool, *([known.pool] if known else [])}
        if not theirs:
            del self.elsewhere[member]
        if changed:
            self._counts = None
        for pool in changed:  # (the `w` lines' counts show at the next reply or sweep, as for a waiter here)
            self.pair(pool)

    def _listed(self, member: str, waiter: PoolWaiter, line: str) -> Waiting:
        """Another member's waiter, with the time it has waited as the wall clocks tell it."""
        stand_in = visiting(member, {"nick": waiter.nick, "guest": waiter.rating is None, "bot": waiter.bot})
        waited = max(0.0, self.ctx.clock() - waiter.joined)
        since = self.ctx.timers.now() - waited
        return Waiting(stand_in, waiter.pool, since, waiter.joined, member, waiter.rating, line)

    def _propose(self, first: Waiting, other: Waiting) -> None:
        """`first`, waiting here, paired with `other` of another member: that member opens the table if
        `other` still waits (`paired_from`), else says no (`refused_elsewhere`); both wait for its answer."""
        assert self.send is not None and other.member is not None  # (_may_propose)
        if not self._may_play(first):
            return
        first.proposed = other.proposed = self.ctx.timers.now()
        self.send(other.member, {"pool_pair": [other.pool, other.player.nick, person(first.player)]})

    def paired_from(self, member: str, pool: str, nick: str, someone: dict[str, Any]) -> None:
        """A player of `member` paired there with `nick`, waiting here: their table opens here, or the
        pairing is refused (`nick` waits no more, or for another pairing's answer; one blocks the other;
        either may not play now)."""
        stranger = visiting(member, someone)
        waiting = self._here(nick, pool)
        free = waiting is not None and waiting.proposed is None
        why = self._start_with(waiting, stranger) if waiting is not None and free else "gone"
        if why is not None and self.send is not None:
            self.send(member, {"pool_refused": [pool, stranger.nick, nick, why]})

    def _start_with(self, waiting: Waiting, stranger: Player) -> str | None:
        """The table of `waiting`, here, and `stranger` of another member; what refused it, if anything."""
        if refuse_each_other(waiting.player, stranger):
            return "blocked"
        if not self.ctx.limits.may_play_rated(waiting.player, stranger):
            return "botUnrated"
        if not self._may_play(waiting):
            return "gone"
        if not self._stranger_may_play(stranger):
            return MAY_NOT_PLAY
        try:
            self.ctx.writable()
            self.invitations.start_game(waiting.player, stranger, self.game_types[waiting.pool])
        except ProtocolError as refused:  # storage failing, no table free just now, the stranger's cap
            return refused.code
        return None

    def _stranger_may_play(self, stranger: Player) -> bool:
        """Whether a player of another member paired with one here may begin a game at this member's
        tables, which count the games begun here (Limits.may_begin); if not, they are told why, at their
        member, which takes them out of the pool (`MAY_NOT_PLAY`): its own count never knew of these games."""
        try:
            self.ctx.limits.may_begin_a_game(self.tables, stranger)
        except ProtocolError as refused:
            self.tables.tell(stranger, LOBBY, refused.code, str(refused), **refused.values)
            return False
        return True

    def refused_elsewhere(self, member: str, pool: str, nick: str, whom: str, code: str) -> None:
        """`member` refused to pair `nick`, waiting here, with its `whom`: `nick` is paired again at
        once, with others (`whom` waits out PROPOSAL_WAIT, so that the two are not proposed again and
        again), and never with `whom` again when one of them blocks the other; `nick`, who may begin no
        game there now, leaves the pool (told why by that member)."""
        waiting = self._here(nick, pool)
        if waiting is not None and code == MAY_NOT_PLAY:
            self.leave(waiting.player)
        elif waiting is not None:
            waiting.proposed = None
            if code == "blocked":
                self.refused.add((nick_key(nick), nick_key(whom)))
            self.pair(pool)

    def _here(self, nick: str, pool: str) -> Waiting | None:
        """This member's waiter `nick` (as written here) in `pool`."""
        return next((w for w in self.waiting.values() if w.player.nick == nick and w.pool == pool), None)


def _since(waiting: Waiting) -> float:
    return waiting.since


def _order(waiting: Waiting) -> tuple[float, str]:
    """Who came first, as every member tells it: the wall time each joined, to the millisecond as the `ja`
    line gives it (a waiter here unrounded and one of another member's rounded were each first at its
    own member, and neither paired them), then the nick."""
    return round(waiting.joined, 3), nick_key(waiting.player.nick)


def _rating_of_waiting(waiting: Waiting) -> int:
    rating = rating_of(waiting.player) if waiting.member is None else waiting.rating
    return UNRATED if rating is None else rating


def ended_by_a_game(
    seeks: Seeks, pools: Pools, invitations: Invitations
) -> Callable[[GameType, Sequence[str]], None]:
    """What Tables.game_started calls: players who begin a game (any way but an analysis: an invitation,
    a seek, a pool, an organiser's or the director's table, `new` at the table) neither seek nor wait
    any more, here or at their member, and withdraw the invitations they sent here."""

    def game_started(game_type: GameType, nicks: Sequence[str]) -> None:
        if game_type.kind is not GameKind.ANALYSIS:
            began(seeks, pools, nicks)
            seeks.tell_members(nicks)
            invitations.withdraw_sent_by(nicks)

    return game_started


def began(seeks: Seeks, pools: Pools, nicks: Sequence[str]) -> None:
    """These players began a game, here or at another member: their seeks and places in pools here end."""
    seeks.end_all_of(nicks)
    pools.end_all_of(nicks)


def ended_with_the_session(seeks: Seeks, pools: Pools) -> Callable[[Player], None]:
    """What Sessions.left calls: a session that ends takes its seeks and its place in a pool along."""

    def left(player: Player) -> None:
        seeks.left(player)
        pools.left(player)

    return left
