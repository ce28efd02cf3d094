"""Moderators' sanctions over the protocol, and every server taking the sanctions the store has
(docs/moderation.md).

`co=moderate` is a request of its own, like the organisers' (server/web/hosted.py): the moderator's
client sends it with their `idGracza`, the server checks their role and the target's, writes the
sanction with its line of the moderation log, and applies it here at once. Every server, each member of
a cluster alike, reads the active sanctions every SANCTIONS_EVERY seconds, so a sanction made on another
member or with the CLI (server/admin.py) holds everywhere within that time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator
from datetime import timedelta

from aiohttp import web

from server.hub.persistence import ADMIN, NO_ROLE
from server.hub.sanctioning import Sanctions
from server.hub.sanctions import BAN, KICK, MUTE, REGISTERED, SLOW
from server.logs import Fields
from server.protocol.codec import MAX_CHAT, ProtocolError, clean_text, look_key
from server.store.moderation import Target
from server.store.outage import unavailable
from server.web.clients import POLICY_KEY
from server.web.common import HUB_KEY, STORE_KEY
from server.web.networks import banned_network

log = logging.getLogger(__name__)

SANCTIONS_EVERY = 2.0  # seconds between two readings of the active sanctions
SANCTIONS_KEY = web.AppKey("sanctions", Sanctions)
ACTIONS = (MUTE, KICK, BAN, "unmute", "unban", "lobby")
LOBBY_MODES = (REGISTERED, SLOW, "normal")
SLOW_SECONDS = (5, 3600)


async def keep_sanctions(app: web.Application) -> AsyncIterator[None]:
    """The hub takes the store's sanctions at the start and every SANCTIONS_EVERY seconds after."""
    hub = app[HUB_KEY]
    app[SANCTIONS_KEY] = Sanctions(hub.ctx, hub.roster, hub.tables, hub.sessions)
    await refresh(app)
    task = asyncio.create_task(_keep_reading(app))
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def refresh(app: web.Application) -> None:
    app[SANCTIONS_KEY].take(await app[STORE_KEY].moderation.active())


async def _keep_reading(app: web.Application) -> None:
    failing = False
    while True:
        await asyncio.sleep(SANCTIONS_EVERY)
        try:
            await refresh(app)
            failing = False
        except Exception as failure:  # storage down: the sanctions read last hold until it is back
            reason = unavailable(failure)
            if reason is None:
                log.exception("cannot read the sanctions")
            elif not failing:
                log.warning("cannot read the sanctions until storage is back %s", Fields(reason=reason))
            failing = True


async def moderate(request: web.Request) -> str:
    """`co=moderate&idGracza=ID&what=mute|kick|ban|unmute|unban&whom=NICK|ADDRESS[&for=DURATION]
    [&reason=TEXT]`, or `what=lobby&mode=registered|slow|normal[&seconds=N][&for=DURATION]` -> `ok`."""
    query = request.query
    secret = query.get("idGracza") or query.get("playerId") or ""
    moderator = request.app[HUB_KEY].players.get(secret)
    if moderator is None or not moderator.moderator:
        raise ProtocolError("notModerator", "Only moderators may do that.")
    what = query.get("what", "")
    if what not in ACTIONS:
        raise ProtocolError("badCommand", f"what is one of {', '.join(ACTIONS)}.")
    reason = clean_text(query.get("reason", "")).strip()[:MAX_CHAT]
    lasting = parse_duration(query.get("for", ""))
    moderation = request.app[STORE_KEY].moderation
    if what == "lobby":
        await _lobby_mode(request, moderator.nick, reason, lasting)
    else:
        target = await _target(request, query.get("whom", ""), what == BAN)
        if target.role != NO_ROLE and (moderator.role != ADMIN or target.role == ADMIN):
            raise ProtocolError("cannotSanction", "A moderator cannot sanction a moderator or an admin.")
        if target.look is not None and target.look == look_key(moderator.nick):
            raise ProtocolError("cannotSanction", "You cannot sanction yourself.")
        if what in ("unmute", "unban"):
            await moderation.lift((what[2:],), target, by=moderator.nick, reason=reason)
        else:
            await moderation.sanction(what, target, by=moderator.nick, reason=reason, lasting=lasting)
    await refresh(request.app)
    return "ok"


async def _target(request: web.Request, whom: str, ban: bool) -> Target:
    """An address or network, or a nick: an online guest's ban covers its network too (Moderation.target)."""
    if not whom:
        raise ProtocolError("missing.whom")
    network = banned_network(whom, request.app[POLICY_KEY].grouping)
    if network is not None:
        return Target(whom, network=network)
    return await request.app[STORE_KEY].moderation.target(whom, guests_network=ban)


async def _lobby_mode(request: web.Request, by: str, reason: str, lasting: timedelta | None) -> None:
    """One mode at a time: a new one (or `normal`) lifts the one before."""
    mode, seconds = request.query.get("mode", ""), request.query.get("seconds", "")
    if mode not in LOBBY_MODES:
        raise ProtocolError("badCommand", f"mode is one of {', '.join(LOBBY_MODES)}.")
    low, high = SLOW_SECONDS
    if mode == SLOW and (not seconds.isdigit() or not low <= int(seconds) <= high):
        raise ProtocolError("badCommand", f"seconds is a whole number from {low} to {high}.")
    if lasting is None and mode != "normal":
        raise ProtocolError("badDuration", "A lobby mode lasts a while: say how long (for=1h).")
    moderation, lobby = request.app[STORE_KEY].moderation, Target("lobby")
    await moderation.lift((REGISTERED, SLOW), lobby, by=by, reason=reason)
    if mode == SLOW:
        await moderation.sanction(SLOW, lobby, by=by, reason=reason, lasting=lasting, seconds=int(seconds))
    elif mode == REGISTERED:
        await moderation.sanction(REGISTERED, lobby, by=by, reason=reason, lasting=lasting)


DURATION = re.compile(r"([1-9][0-9]{0,5})([smhdw])")
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
LONGEST = timedelta(days=3650)


def parse_duration(text: str) -> timedelta | None:
    """`30m`, `2h`, `7d`, `2w` (s, m, h, d, w); `forever` or nothing: None, for good."""
    if text in ("", "forever"):
        return None
    found = DURATION.fullmatch(text)
    if found is None:
        raise ProtocolError(
            "badDuration", "A duration is a number with s, m, h, d or w (30m, 7d), or forever."
        )
    lasting = timedelta(seconds=int(found[1]) * UNITS[found[2]])
    if lasting > LONGEST:
        raise ProtocolError("badDuration", "A duration is at most ten years; for longer, say forever.")
    return lasting
