"""How many games an arena begins for a player an hour (docs/tournaments.md, "How an arena runs"): every
tournament game is archived however short, and an arena pairs a free player again after a few seconds'
rest for as long as it runs, so players who resign at once filled the archive as fast as they were paired.
The bound is the hub's (Limits.arena, server/hub/hourly.py): a player, and the guests of an address and of
a network, begin at most so many arena games an hour; one at the bound waits unpaired, told once why."""

from __future__ import annotations

from collections.abc import Iterable

from server.hub.hourly import HOUR
from server.hub.hub import Hub
from server.hub.model import LOBBY
from server.protocol.codec import ProtocolError, nick_key


class ArenaPace:
    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.told: dict[str, float] = {}  # the held players told so -> when that is forgotten (timers)

    def pairable(self, free: list[str]) -> list[str]:
        """The free players (in order) but those at the bound, who are told why once while held."""
        now = self.hub.timers.now()
        for key in [key for key, until in self.told.items() if until <= now]:
            del self.told[key]
        kept = []
        for nick in free:
            player = self.hub.roster.online(nick)
            try:
                if player is not None:
                    self.hub.ctx.limits.arena.check_bound(player, "arenaFlood")
            except ProtocolError as held:
                if player is not None and nick_key(nick) not in self.told:
                    self.told[nick_key(nick)] = now + HOUR
                    self.hub.tables.tell(player, LOBBY, held.code, str(held))
                continue
            self.told.pop(nick_key(nick), None)
            kept.append(nick)
        return kept

    def began(self, nicks: Iterable[str]) -> None:
        """An arena game of these players was set up: it counts for each, and for their guests' places."""
        players = [self.hub.roster.online(nick) for nick in nicks]
        self.hub.ctx.limits.arena.add(player for player in players if player is not None)
