"""Who is online: the only owner of the index of live sessions, by id, by nick and by look.

The sessions (server/hub/sessions.py) add and remove players here; every other part only looks up.
"""

from __future__ import annotations

import logging
import math
from collections import OrderedDict

from server.hub.context import Context
from server.hub.model import RESERVED, RESERVED_LOOKS, Player, Standing
from server.logs import Fields
from server.protocol.codec import look_key, nick_key

log = logging.getLogger(__name__)

ENDED_KEPT = 3600.0  # seconds an ended session's networks are remembered (Roster.standing)
MOST_ENDED = 50_000  # ended sessions remembered at most, the oldest forgotten first
FAREWELL_KEPT = 600.0  # seconds a kicked or banned session's last line waits for its client's poll
MOST_FAREWELLS = 10_000
MOVED_KEPT = 60.0  # seconds a session handed to another member is remembered as having moved (moved_away)
MOST_MOVED = 50_000


class Roster:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.players: dict[str, Player] = {}  # by secret id
        self.unclaimed: dict[str, Player] = {}  # sessions restored after a restart, by id HMAC, until polled
        self.by_nick: dict[str, Player] = {}  # by nick_key(nick)
        self.by_look: dict[str, Player] = {}  # by look_key(nick): no two players online look alike
        self.guests = 0  # guests online, kept as they come and go: the cap's check is once per login
        # The players by their last request, the longest quiet first (not the AI players, who are never
        # timed out): the sweep reads only the front instead of every player (issue 19).
        self.by_last_request: OrderedDict[Player, None] = OrderedDict()
        # id HMAC -> (when, networks) of sessions that ended lately, the oldest first: their clients may
        # poll a while longer, and are not guessing (Roster.standing)
        self.ended: OrderedDict[str, tuple[float, tuple[str, ...]]] = OrderedDict()
        # id HMAC -> (when, the line) for a session a moderator ended: its client's next poll gets that
        # line, so that it shows why (Stream.reply), and then the ended session's answer
        self.farewells: OrderedDict[str, tuple[float, str]] = OrderedDict()
        # id HMAC -> when, of sessions handed to another member lately, the oldest first: a connection
        # that stays open here (a bot's feed) tells its client to connect again (moved_away), rather
        # than log the session in again and take it back from the member its requests now reach
        self.moved: OrderedDict[str, float] = OrderedDict()

    def online(self, nick: str) -> Player | None:
        return self.by_nick.get(nick_key(nick))

    def holder(self, nick: str) -> Player | None:
        """Who is online with this nick or one that looks like it."""
        return self.by_nick.get(nick_key(nick)) or self.by_look.get(look_key(nick))

    def unique_holder(self, nick: str) -> str | None:
        """The nick of whoever is online with this nick or a look-alike, unless it is an AI player's."""
        holder = self.holder(nick)
        return None if holder is None or nick_key(holder.nick) in RESERVED else holder.nick

    def unique_keys(self) -> tuple[list[str], list[str]]:
        """The nick keys and look keys of everyone online but the AI players, who play on every member
        of a cluster under the same names (server/cluster/nicks.py)."""
        return (
            [key for key in self.by_nick if key not in RESERVED],
            [key for key in self.by_look if key not in RESERVED_LOOKS],
        )

    def taken(self, nick: str) -> bool:
        return nick_key(nick) in self.by_nick or look_key(nick) in self.by_look

    def add(self, player: Player) -> None:
        self.players[player.secret] = player
        self.by_nick[nick_key(player.nick)] = player
        self.by_look[look_key(player.nick)] = player
        self.guests += player.guest
        self.by_last_request[player] = None
        if self.moved and player.id_hmac:
            self.moved.pop(player.id_hmac, None)  # back here: no longer moved away

    def seen(self, player: Player, moment: float) -> None:
        """A request from the player (timers' time): the time-out counts from here."""
        player.last_seen = moment
        if player in self.by_last_request:
            self.by_last_request.move_to_end(player)

    def hold(self, player: Player) -> None:
        """A poll of the player's waits for news (a long poll, a push connection's): present for as long
        as it waits, so out of the quiet order, whose front every sweep walks (10,000 push connections,
        each seen only every 20 s or so, made the heartbeat's walk 20-28 ms of a loaded loop)."""
        self.by_last_request.pop(player, None)

    def release(self, player: Player, moment: float) -> None:
        """The player's last waiting poll ended (`hold`): seen now, back in the order if still logged in."""
        if self.players.get(player.secret) is player and math.isfinite(player.last_seen):
            player.last_seen = moment
            self.by_last_request[player] = None
            self.by_last_request.move_to_end(player)

    def never_times_out(self, player: Player) -> None:
        player.last_seen = math.inf
        self.by_last_request.pop(player, None)

    def sort_by_last_request(self) -> None:
        """After a restart the sessions come back in the store's order, each with its own last request."""
        self.by_last_request = OrderedDict.fromkeys(sorted(self.by_last_request, key=lambda p: p.last_seen))

    def quiet_for(self, now: float, seconds: float) -> list[Player]:
        """The players who made no request in the `seconds` before `now`, the longest quiet first."""
        quiet = []
        for player in self.by_last_request:
            if now - player.last_seen < seconds:
                break
            quiet.append(player)
        return quiet

    def discard(self, player: Player) -> None:
        self.unclaimed.pop(player.id_hmac, None)
        del self.players[player.secret]
        del self.by_nick[nick_key(player.nick)]
        del self.by_look[look_key(player.nick)]
        self.guests -= player.guest
        self.by_last_request.pop(player, None)

    def standing(self, secret: str, network: str) -> tuple[Standing, str]:
        """How `secret` stands for a request from `network`, and the id's HMAC where it was needed (the
        fast path, a session used from its own network, needs none). Looks and changes nothing else:
        a restored session is claimed by `find`, not here."""
        player = self.players.get(secret)
        if player is not None and (not player.networks or network in player.networks):
            return Standing.HERE, ""
        hmac = self.ctx.persistence.id_hmac(secret)
        if player is None:
            player = self.unclaimed.get(hmac)
        if player is not None:
            if not player.networks or network in player.networks:
                return Standing.HERE, hmac
            return (Standing.ADOPTABLE if player.guest else Standing.STRANGER), hmac
        ended = self.ended.get(hmac)
        if ended is not None and network in ended[1]:
            return Standing.ENDED_HERE, hmac
        return Standing.STRANGER, hmac

    def note_ended(self, player: Player, now: float) -> None:
        """The session ended: its id, from its networks, is no guess for a while."""
        if not player.id_hmac or not player.networks:
            return
        self.ended.pop(player.id_hmac, None)
        self.ended[player.id_hmac] = (now, tuple(player.networks))
        while self.ended and (
            len(self.ended) > MOST_ENDED or next(iter(self.ended.values()))[0] < now - ENDED_KEPT
        ):
            self.ended.popitem(last=False)

    def note_moved(self, player: Player, now: float) -> None:
        self.moved.pop(player.id_hmac, None)
        self.moved[player.id_hmac] = now
        while self.moved and (
            len(self.moved) > MOST_MOVED or next(iter(self.moved.values())) < now - MOVED_KEPT
        ):
            self.moved.popitem(last=False)

    def moved_away(self, secret: str, now: float) -> bool:
        """Whether the session of `secret` was handed to another member lately and has not come back."""
        if secret in self.players or not self.moved:
            return False
        when = self.moved.get(self.ctx.persistence.id_hmac(secret))
        return when is not None and when >= now - MOVED_KEPT

    def say_farewell(self, player: Player, line: str, now: float) -> None:
        if not player.id_hmac:
            return
        self.farewells[player.id_hmac] = (now, line)
        while self.farewells and (
            len(self.farewells) > MOST_FAREWELLS
            or next(iter(self.farewells.values()))[0] < now - FAREWELL_KEPT
        ):
            self.farewells.popitem(last=False)

    def farewell(self, secret: str, now: float) -> str | None:
        """The last line of a session a moderator ended, once (None: none, or kept too long)."""
        if not self.farewells or not secret:
            return None
        said = self.farewells.pop(self.ctx.persistence.id_hmac(secret), None)
        return said[1] if said is not None and said[0] >= now - FAREWELL_KEPT else None

    def find(self, secret: str) -> Player | None:
        """The player with this id. A session restored after a restart is known only by its id's HMAC
        until a request names the id: the first one claims it."""
        player = self.players.get(secret)
        if player is None and self.unclaimed and secret:
            player = self.unclaimed.pop(self.ctx.persistence.id_hmac(secret), None)
            if player is not None:
                del self.players[player.secret]
                player.secret = secret
                self.players[secret] = player
                log.info("session resumed %s", Fields(nick=player.nick))
        return player
