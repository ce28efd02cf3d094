"""Things a player does that leave rows for good, counted over the last hour (docs/operations.md, "Abuse
limits"): games begun (each finished one with a move is archived), analysis tables opened (each table
ever opened keeps its row, so that its number is never reused), tournament entries made (kept with the
tournament), games of the server's arenas begun (archived however short). A guest is free to make, a new
one for every game, so the guests of one address and of one network share a count too; accounts count
for themselves only.

A server alone forgets them at a restart. A member of a cluster hands each thing it counts to `shared`
(server/cluster/hourly.py shares it with the other members and keeps it in Redis for an hour) and
`take`s those of the other members, so that every member's check, still made here and at once, counts
the whole cluster's last hour.
"""

from __future__ import annotations

import bisect
import math
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import islice

from server.hub.model import Player, reserved
from server.protocol.codec import ProtocolError, nick_key

HOUR = 3600.0


@dataclass(frozen=True)
class Counted:
    """What is counted, as its refusals say it: `did` holds `{most}`, `next` what the next one does."""

    name: str  # what the members of a cluster call it
    did: str  # "begun {most} games"
    next: str  # "the next can begin"


GAMES_BEGUN = Counted("games", "begun {most} games", "the next can begin")
ANALYSES_OPENED = Counted("analyses", "opened {most} analysis tables", "the next can open")
ENTRIES_MADE = Counted("entries", "joined tournaments {most} times", "the next can join")
ARENA_GAMES_BEGUN = Counted("arena", "begun {most} arena games", "the next is paired")
KINDS = ("nick", "host", "network")  # what a key counts: a player, a guest's address, a guest's network

Key = tuple[str, str]  # (one of KINDS, its value)


class Hourly:
    """When each of the last hour's things began: by each player ("nick" key; `per_player` of them, None:
    not counted), and by the guests of each host and network (`per_address`, times `network_factor`)."""

    def __init__(
        self,
        counted: Counted,
        per_player: int | None,
        per_address: int,
        network_factor: int,
        now: Callable[[], float],
    ) -> None:
        self.counted = counted
        self.per_player = per_player
        self.per_address = per_address
        self.network_factor = network_factor
        self.now = now
        # forgotten once an hour old; the longest unread first. An OrderedDict, not a dict: a dict's keys
        # moved to its end leave holes at its start that every walk from the start steps over, until it is
        # resized (an add at 100,000 keys cost 41 us instead of 27: benchmarks/hourly.py)
        self.done: OrderedDict[Key, deque[float]] = OrderedDict()
        # a member of a cluster hears every thing counted here, under its keys (server/cluster/hourly.py)
        self.shared: Callable[[tuple[Key, ...]], None] | None = None

    def check_bound(self, player: Player, code: str) -> None:
        """Refuse with `code` (nothing counted) when `player`, or a guest's address or network, did their
        most."""
        if player.unlimited or reserved(player.nick):
            return
        now, did = self.now(), self.counted.did
        if self.per_player is not None:
            done = self._within(("nick", nick_key(player.nick)), now)
            if len(done) >= self.per_player:
                raise ProtocolError(
                    code,
                    f"{player.nick} has {did.format(most=self.per_player)} in the last hour; "
                    f"{self.counted.next} in {_minutes_until(done[0] + HOUR, now)} minutes.",
                )
        if not player.guest or not player.host:
            return
        for key, most, where in (
            (("host", player.host), self.per_address, "address"),
            (("network", player.network), self.per_address * self.network_factor, "network"),
        ):
            done = self._within(key, now)
            if len(done) >= most:
                raise ProtocolError(
                    code,
                    f"Guests from the {where} of {player.nick} have {did.format(most=most)} in the last "
                    f"hour; log in with an account, or wait {_minutes_until(done[0] + HOUR, now)} minutes.",
                )

    def add(self, players: Iterable[Player]) -> None:
        """These players did one: it counts once for each of them, and once for each address and network
        of its guests."""
        keys = set()
        for player in players:
            if player.unlimited or reserved(player.nick):
                continue
            keys.add(("nick", nick_key(player.nick)))
            if player.guest and player.host:
                keys.update((("host", player.host), ("network", player.network)))
        if keys:
            self._count(keys, self.now())
            if self.shared is not None:
                self.shared(tuple(sorted(keys)))

    def take(self, keys: Iterable[Key], age: float) -> None:
        """Another member of a cluster did one `age` seconds ago, counted under `keys` (ones of KINDS)."""
        if 0 <= age < HOUR:
            self._count({key for key in keys if key[0] in KINDS}, self.now() - age)

    def _count(self, keys: set[Key], when: float) -> None:
        now = self.now()
        for key in list(islice(self.done, len(keys) + 1)):  # the longest unread: forgotten an hour old,
            self._within(key, now)  # so that keys go at least as fast as they come
        for key in keys:
            done = self.done.setdefault(key, deque())
            if not done or done[-1] <= when:
                done.append(when)
            else:  # another member's, heard late: in its place, so that the oldest stays first
                bisect.insort(done, when)

    def _within(self, key: Key, now: float) -> deque[float]:
        """When the last hour's things under `key` were done, oldest first (older ones forgotten)."""
        done = self.done.get(key)
        if done is None:
            return deque()
        while done and done[0] <= now - HOUR:
            done.popleft()
        if not done:
            del self.done[key]
        else:  # the key goes to the end, so that the first one is the one longest unread
            self.done.move_to_end(key)
        return done


def _minutes_until(when: float, now: float) -> int:
    return max(1, math.ceil((when - now) / 60))
