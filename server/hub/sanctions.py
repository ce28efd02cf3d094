"""Sanctions as the hub holds them (docs/moderation.md): who may not chat, who may not log in, and the
lobby's chat modes. The book is in the Context, where chat and logins read it; what a new sanction does
to the sessions here is server/hub/sanctioning.py's.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from server.hub.model import Player
from server.protocol.codec import ProtocolError, look_key, nick_key

MUTE, KICK, BAN = "mute", "kick", "ban"
REGISTERED, SLOW = "registered", "slow"  # the lobby's chat modes
SLOWEST = 3600  # the most seconds a slow mode may ask between two lines of one player
KICK_KEPT = timedelta(minutes=1)  # a kick is in the store this long, for every member to see it
GUEST, PLAYER, STAFF = "guest", "player", "staff"  # who a person is, for a network's sanctions


@dataclass(frozen=True)
class Sanction:
    key: str
    kind: str
    target: str  # as the moderator named it
    look: str | None  # the nick's look (codec.look_key): the nick and its look-alikes
    network: str | None  # an address or network in CIDR form
    seconds: int | None  # the slow mode's seconds between two lines of one player
    ends: float | None  # wall time; None: for good
    reason: str
    by: str

    def names(self, nick: str, host: str, who: str) -> bool:
        """Whether it names this person (`who`: GUEST, PLAYER or STAFF): by the nick's look, or from the
        network. A network banned with a guest's nick keeps guests out; an address or network banned by
        itself, everyone but moderators and admins (a moderator cannot lock an admin out that way)."""
        if self.look is not None and look_key(nick) == self.look:
            return True
        if self.network is None or not host or not within(host, self.network):
            return False
        return who == GUEST or (who == PLAYER and self.look is None)

    @property
    def until(self) -> str:
        """The end as every language shows it: `2026-12-01 18:00 UTC`."""
        return "" if self.ends is None else f"{datetime.fromtimestamp(self.ends, UTC):%Y-%m-%d %H:%M} UTC"


def within(host: str, network: str) -> bool:
    """Whether a session's host (an address, or an IPv6 /64) lies in a banned address or network."""
    try:
        inside, banned = ipaddress.ip_network(host, strict=False), ipaddress.ip_network(network)
    except ValueError:
        return host == network
    return inside.version == banned.version and inside.subnet_of(banned)  # type: ignore[arg-type]


class SanctionBook:
    """The active sanctions and the checks that read them; in the Context, for chat and logins."""

    def __init__(self) -> None:
        self.active: list[Sanction] = []
        # nick_key -> when they last wrote in a slow lobby (monotonic), the longest ago first
        self.spoke: dict[str, float] = {}

    def _in_force(self, kind: str, wall: float) -> list[Sanction]:
        return [s for s in self.active if s.kind == kind and (s.ends is None or s.ends > wall)]

    def check_login(self, nick: str, host: str, who: str, wall: float) -> None:
        """A banned nick, look-alike, account, address or network: refused with the end and the reason,
        `banned.<end>.<reason>` (the end `2026-12-01T18:00Z`, or `forGood`)."""
        for ban in self._in_force(BAN, wall):
            if ban.names(nick, host, who):
                end = (
                    "forGood"
                    if ban.ends is None
                    else f"{datetime.fromtimestamp(ban.ends, UTC):%Y-%m-%dT%H:%MZ}"
                )
                raise ProtocolError(f"banned.{end}.{_one_line(ban.reason)}", "You are banned.")

    def check_chat(self, player: Player, wall: float) -> None:
        """A muted player's line, anywhere: refused with a line for them alone, until when and why."""
        for mute in self._in_force(MUTE, wall):
            if mute.names(player.nick, player.host, who_is(player)):
                raise muted(mute)

    def check_lobby(self, player: Player, wall: float, now: float) -> None:
        """The lobby's chat modes (`now`: monotonic); moderators write as ever."""
        if player.moderator:
            return
        for mode in self._in_force(REGISTERED, wall):
            if player.guest:
                raise ProtocolError(
                    "lobbyRegistered",
                    f"Until {mode.until or 'further notice'} only registered players write in the lobby.",
                    until=mode.until,
                )
        for mode in self._in_force(SLOW, wall):
            seconds = mode.seconds or 0
            last = self.spoke.get(nick_key(player.nick))
            if last is not None and now - last < seconds:
                raise ProtocolError(
                    "lobbySlow",
                    f"The lobby is in slow mode: one line every {seconds} seconds.",
                    seconds=str(seconds),
                )

    def spoke_in_lobby(self, player: Player, now: float) -> None:
        """A lobby line was said: the slow mode counts from it (while a slow mode is on). A line said
        SLOWEST seconds ago holds nobody back under any mode: those are forgotten, or a slow mode left on
        for weeks kept every nick that wrote while it lasted."""
        if any(mode.kind == SLOW for mode in self.active):
            key = nick_key(player.nick)
            self.spoke.pop(key, None)
            self.spoke[key] = now
            while (oldest := next(iter(self.spoke))) != key and self.spoke[oldest] <= now - SLOWEST:
                del self.spoke[oldest]


def who_is(player: Player) -> str:
    return GUEST if player.guest else STAFF if player.moderator else PLAYER


def muted(mute: Sanction) -> ProtocolError:
    if mute.ends is None:
        return ProtocolError(
            "mutedForGood",
            f"You are muted for good ({mute.reason}): your lines are not sent.",
            reason=mute.reason,
        )
    return ProtocolError(
        "muted",
        f"You are muted until {mute.until} ({mute.reason}): your lines are not sent.",
        until=mute.until,
        reason=mute.reason,
    )


def _one_line(text: str) -> str:
    return " ".join(text.replace("/", " ").split())
