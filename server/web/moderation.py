"""Moderators' sanctions over the protocol, and every server taking the sanctions the store has
(docs/moderation.md).

`co=moderate` is a request of its own, like the organisers' (server/web/hosted.py): the moderator's
client sends it with their `idGracza`, the server checks their role and the target's, writes the
sanction with its line of the moderation log, and applies it here at once. Every server, each member of
a cluster alike, reads the active sanctions every SANCTIONS_EVERY seconds, so a sanction made on another
member or with the CLI (server/admin.py) holds everywhere within that time.

`co=report` is any player's report of a chat line or of a player; moderators read the open reports,
the active sanctions and (admins) the moderation log with `co=moderate&what=reports|sanctions|log`,
answered as JSON, close a report with `what=close` and many at once with `what=closemany`
(docs/moderation.md, "Reports").
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import logging
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from server.hub.model import COMPUTER_NICKS, Player
from server.hub.persistence import ADMIN, NO_ROLE
from server.hub.sanctioning import Sanctions
from server.hub.sanctions import BAN, KICK, MUTE, REGISTERED, SLOW, SLOWEST
from server.logs import Fields
from server.protocol.codec import (
    MAX_CHAT,
    ProtocolError,
    check_nick,
    clean_text,
    look_key,
    nick_key,
    parse_number,
)
from server.store.moderation import Target
from server.store.reports import (
    REPORTS_PER_NETWORK_A_DAY,
    REPORTS_PER_PLAYER_A_DAY,
    AlreadyReported,
    NewReport,
    OpenReport,
    ReportGone,
    TooManyReports,
)
from server.web.clients import POLICY_KEY
from server.web.closing import MANY_CLOSINGS, choose, not_open, sanction_order
from server.web.common import HUB_KEY, STORE_KEY, read_every
from server.web.networks import banned_network

log = logging.getLogger(__name__)

SANCTIONS_EVERY = 2.0  # seconds between two readings of the active sanctions
SANCTIONS_KEY = web.AppKey("sanctions", Sanctions)
# One reading of the sanctions at a time, each applied before the next begins: a reading begun before a
# moderator's sanction was stored and ended after the moderator's own reading would otherwise undo it
# until the next, which then told the player again.
SANCTIONS_READ_KEY = web.AppKey("sanctions_read", asyncio.Lock)
ACTIONS = (MUTE, KICK, BAN, "unmute", "unban", "lobby")
READS = ("reports", "sanctions", "log")  # answered as JSON
CLOSES = ("close", "closemany")
CLOSINGS = ("none", "delete", MUTE, KICK, BAN)  # what closes a report
LOBBY_MODES = (REGISTERED, SLOW, "normal")
SLOW_SECONDS = (5, SLOWEST)


async def keep_sanctions(app: web.Application) -> AsyncIterator[None]:
    """The hub takes the store's sanctions at the start and every SANCTIONS_EVERY seconds after."""
    hub = app[HUB_KEY]
    app[SANCTIONS_KEY] = Sanctions(hub.ctx, hub.roster, hub.tables, hub.sessions)
    app[SANCTIONS_READ_KEY] = asyncio.Lock()
    await refresh(app)
    async with read_every(SANCTIONS_EVERY, functools.partial(refresh, app), "read the sanctions"):
        yield


async def refresh(app: web.Application) -> None:
    async with app[SANCTIONS_READ_KEY]:
        app[SANCTIONS_KEY].take(await app[STORE_KEY].moderation.active())


async def moderate(request: web.Request) -> str:
    """`co=moderate&idGracza=ID&what=mute|kick|ban|unmute|unban&whom=NICK|ADDRESS[&for=DURATION]
    [&reason=TEXT]`, or `what=lobby&mode=registered|slow|normal[&seconds=N][&for=DURATION]` -> `ok`."""
    query = request.query
    moderator = _player(request)
    if moderator is None or not moderator.moderator:
        raise ProtocolError("notModerator", "Only moderators may do that.")
    what = query.get("what", "")
    if what in READS:
        return json.dumps(await _read(request, moderator, what), ensure_ascii=False)
    if what not in (*ACTIONS, *CLOSES):
        raise ProtocolError("badCommand", f"what is one of {', '.join((*ACTIONS, *CLOSES, *READS))}.")
    reason = clean_text(query.get("reason", "")).strip()[:MAX_CHAT]
    lasting = parse_duration(query.get("for", ""))
    moderation = request.app[STORE_KEY].moderation
    answer = "ok"
    if what == "close":
        await _close(request, moderator, reason, lasting)
    elif what == "closemany":
        answer = await _close_many(request, moderator, reason, lasting)
    elif what == "lobby":
        await _lobby_mode(request, moderator.nick, reason, lasting)
    else:
        target = await _target(request, query.get("whom", ""), what == BAN)
        _may_sanction(moderator, target)
        if what in ("unmute", "unban"):
            await moderation.lift((what[2:],), target, by=moderator.nick, reason=reason)
        else:
            await moderation.sanction(what, target, by=moderator.nick, reason=reason, lasting=lasting)
    await refresh(request.app)
    return answer


def _player(request: web.Request) -> Player | None:
    query = request.query
    return request.app[HUB_KEY].requester(query.get("idGracza") or query.get("playerId") or "")


def _may_sanction(moderator: Player, target: Target) -> None:
    if target.role != NO_ROLE and (moderator.role != ADMIN or target.role == ADMIN):
        raise ProtocolError("cannotSanction", "A moderator cannot sanction a moderator or an admin.")
    if target.look is not None and target.look == look_key(moderator.nick):
        raise ProtocolError("cannotSanction", "You cannot sanction yourself.")


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


# --- reports (docs/moderation.md, "Reports") -------------------------------------------------------


async def report(request: web.Request) -> str:
    """`co=report&idGracza=ID&reason=TEXT&line=PLACE.TIME_N` (a line: PLACE `0`, a table's number or
    `_<nick>` for a private conversation) or `&whom=NICK` (a player) -> `ok.<number>`."""
    query = request.query
    hub, player = request.app[HUB_KEY], _player(request)
    if player is None:
        raise ProtocolError("notLoggedIn", "You are not logged in.")
    reason = clean_text(query.get("reason", "")).strip()
    if not reason:
        raise ProtocolError("missing.reason", "Say why you report it.")
    if len(reason) > MAX_CHAT:
        raise ProtocolError("tooLong", f"A report's reason is at most {MAX_CHAT} characters.")
    place, line_id = "", ""
    if query.get("line"):
        place, _, line_id = query["line"].rpartition(".")
        quoted = hub.quote_line(player, place, line_id) if place else None
        if quoted is None:
            raise ProtocolError("noSuchLine", "There is no such line where you are.")
        reported = next(line.nick for line in quoted if line.reported)
    else:
        reported = query.get("whom", "")
        if not reported:
            raise ProtocolError("missing.whom")
        check_nick(reported, guest=reported.startswith("*"))
        quoted = hub.quote_player(player, reported)
    if not reported or nick_key(reported) == nick_key(player.nick) or reported in COMPUTER_NICKS.values():
        raise ProtocolError("cannotReport", "You cannot report yourself, the server or the computer.")
    new = NewReport(
        reporter=player.nick,
        reporter_key=nick_key(player.nick),
        reporter_network=player.network,
        reported=reported,
        reported_network=await _reported_network(request, reported),
        place=place,
        line=line_id,
        reason=reason,
        context=[dataclasses.asdict(line) for line in quoted],
    )
    try:
        number = await request.app[STORE_KEY].reports.make(new)
    except TooManyReports as refused:
        if refused.today:  # each is kept for good: a day's are bounded too (docs/operations.md)
            raise ProtocolError(
                "reportsToday",
                f"At most {REPORTS_PER_PLAYER_A_DAY} reports a day from one player, "
                f"{REPORTS_PER_NETWORK_A_DAY} from one network; moderators read those first.",
            ) from None
        raise ProtocolError("tooManyReports", "Too many reports lately; wait before the next.") from None
    except AlreadyReported:
        raise ProtocolError("alreadyReported", "You reported this already; a moderator will see.") from None
    log.info("report %s", Fields(number=number, by=player.nick, whom=reported))
    return f"ok.{number}"


async def _reported_network(request: web.Request, nick: str) -> str:
    """A reported guest's network, kept with the report, so that a ban closing it covers the guest
    reported rather than whoever holds the nick by then ("": not a guest, or not online)."""
    holder = request.app[HUB_KEY].by_look.get(look_key(nick))
    if holder is not None:
        return holder.network if holder.guest else ""
    return await request.app[STORE_KEY].moderation.guests_network(nick) or ""


async def _close(request: web.Request, moderator: Player, reason: str, lasting: timedelta | None) -> None:
    """`what=close&report=N&action=none|delete|mute|kick|ban[&for=DURATION][&reason=TEXT][&note=TEXT]`:
    the sanction is checked as `what=mute` would check it; a ban covers the network the report kept of
    a guest, never that of whoever holds the nick now; a line is deleted only on the server that has it
    (this one: the lobby's lines written here, and its own tables)."""
    query = request.query
    number = parse_number(query.get("report", ""))
    action = query.get("action", "")
    if number is None:
        raise ProtocolError("missing.report")
    if action not in CLOSINGS:
        raise ProtocolError("badCommand", f"action is one of {', '.join(CLOSINGS)}.")
    reports = request.app[STORE_KEY].reports
    try:
        found = await reports.get_open(number)
    except ReportGone:
        raise ProtocolError("noSuchReport", f"No open report {number}: closed already?") from None
    note = clean_text(query.get("note", "")).strip()[:MAX_CHAT] or reason
    order = await sanction_order(request.app[STORE_KEY].moderation, [found], action, reason, lasting)
    if order is not None:
        _may_sanction(moderator, order.target)
    if action == "delete":
        uid = parse_number(found.place)
        hub = request.app[HUB_KEY]
        if uid is None or not found.line or not hub.delete_chat_line(moderator, uid, found.line):
            raise ProtocolError(
                "cannotDelete", "That line is not here to delete: private, gone, or on another member."
            )
    try:
        await reports.close(number, by=moderator.nick, action=action, note=note, sanction=order)
    except ReportGone:
        raise ProtocolError("noSuchReport", f"No open report {number}: closed already?") from None
    if order is not None:
        await refresh(request.app)


async def _close_many(request: web.Request, moderator: Player, reason: str, lasting: timedelta | None) -> str:
    """`what=closemany&reports=3,8,12|against=NICK|from=NICK&action=none|mute|kick|ban[&for=DURATION]
    [&reason=TEXT][&note=TEXT]` -> `ok.<closed>.<still open>`: each report closed as `what=close` closes
    it, with its own line of the log, in one transaction; a sanction made once, on the one player they
    name (server/web/closing.py)."""
    query = request.query
    action = query.get("action", "")
    if action not in MANY_CLOSINGS:
        raise ProtocolError("badCommand", f"action is one of {', '.join(MANY_CLOSINGS)}.")
    store = request.app[STORE_KEY]
    chosen = await choose(
        store.reports, query.get("reports", ""), query.get("against", ""), query.get("from", "")
    )
    order = await sanction_order(store.moderation, chosen.reports, action, reason, lasting)
    if order is not None:
        _may_sanction(moderator, order.target)
    note = clean_text(query.get("note", "")).strip()[:MAX_CHAT] or reason
    numbers = [found.number for found in chosen.reports]
    try:
        await store.reports.close_many(numbers, by=moderator.nick, action=action, note=note, sanction=order)
    except ReportGone as gone:
        raise not_open(gone) from None
    log.info("reports closed %s", Fields(by=moderator.nick, count=len(numbers), action=action))
    return f"ok.{len(numbers)}.{chosen.left}"


async def _read(request: web.Request, moderator: Player, what: str) -> dict[str, Any]:
    store = request.app[STORE_KEY]
    if what == "reports":
        return {"reports": [_report_json(found) for found in await store.reports.open_ones()]}
    if what == "sanctions":
        active = [s for s in await store.moderation.active() if s.kind != KICK]
        return {
            "sanctions": [
                {
                    "kind": s.kind,
                    "target": s.target,
                    "network": s.network,
                    "seconds": s.seconds,
                    "until": None if s.ends is None else _iso(datetime.fromtimestamp(s.ends, UTC)),
                    "reason": s.reason,
                    "by": s.by,
                }
                for s in active
            ]
        }
    if moderator.role != ADMIN:
        raise ProtocolError("notAdmin", "Only admins read the moderation log.")
    return {
        "log": [
            {
                "at": _iso(line.at),
                "actor": line.actor,
                "action": line.action,
                "target": line.target,
                "detail": line.detail,
                "reason": line.reason,
            }
            for line in await store.moderation.log()
        ]
    }


def _report_json(found: OpenReport) -> dict[str, Any]:
    return {
        "number": found.number,
        "at": _iso(found.made_at),
        "reporter": found.reporter,
        "reported": found.reported,
        "place": found.place,
        "line": found.line,
        "reason": found.reason,
        "lines": found.context,
    }


def _iso(moment: datetime) -> str:
    """`2026-12-01T18:00:05Z`: SQLite gives its moments back without their zone, and they are UTC."""
    utc = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return utc.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
