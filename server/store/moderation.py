"""Sanctions and the moderation log (docs/moderation.md): SQL only here.

A sanction is made by a moderator's request or by the CLI, and every running server reads the active
ones every few seconds (server/web/moderation.py), so a ban made anywhere holds on every member of a
cluster. Each sanction, and each lift, writes its line of the moderation log in the same transaction:
nothing a moderator does goes unrecorded.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.hub.persistence import NO_ROLE, ROLES
from server.hub.sanctions import BAN, KICK, KICK_KEPT, MUTE, Sanction
from server.protocol.codec import look_key, nick_key
from server.store.accounts import log_entry
from server.store.database import findable
from server.store.models import LiveSession, ModerationEntry, User
from server.store.models import Sanction as SanctionRow

LOG_SHOWN = 200  # lines of the log `moderation log` prints, the newest last


@dataclass(frozen=True)
class Target:
    """Whom a sanction names: an account, a nick with its look-alikes, or an address or network; the
    lobby (all None) for its chat modes. `role`: the account's, for the check that a moderator may."""

    shown: str
    user_id: int | None = None
    look: str | None = None
    network: str | None = None
    role: str = "none"


@dataclass(frozen=True)
class LogLine:
    at: datetime
    actor: str
    action: str
    target: str
    detail: str
    reason: str


class Moderation:
    def __init__(self, sessions: async_sessionmaker) -> None:
        self.sessions = sessions

    async def target(self, nick: str, *, guests_network: bool = False) -> Target:
        """The target a nick names: its account if it has one (followed through a rename), else the nick
        and its look-alikes, with the strictest role of the accounts that look like it (`B0ss` names
        the admin Boss's look: a moderator may not sanction it); with `guests_network`, also the
        network of the guest online with that nick or a look-alike on any member (its session's row:
        the one the ban names, as no two players online look alike), since a guest's client may come
        back at once under a fresh nick (MultiPoints draws one at every start)."""
        look = look_key(nick)
        if not findable(nick):
            return Target(nick, None, look)
        async with self.sessions() as session:
            user = await session.scalar(select(User).where(User.nick_key == nick_key(nick)))
            if user is not None:
                return Target(user.nick, user.id, user.look_key or look_key(user.nick), None, user.role)
            # staff are few; an account from before 0004 may keep no look_key, so each look is read here
            staff = await session.execute(
                select(User.nick, User.look_key, User.role).where(User.role != NO_ROLE)
            )
            network = await _guests_network(session, look) if guests_network else None
        roles = [role for shown, kept, role in staff.all() if (kept or look_key(shown)) == look]
        return Target(nick, None, look, network, max(roles, key=ROLES.index, default=NO_ROLE))

    async def guests_network(self, nick: str) -> str | None:
        """The network of the guest online with this nick or a look-alike on any member, if any."""
        if not findable(nick):
            return None
        async with self.sessions() as session:
            return await _guests_network(session, look_key(nick))

    async def sanction(
        self,
        kind: str,
        target: Target,
        *,
        by: str,
        reason: str,
        lasting: timedelta | None,
        seconds: int | None = None,
    ) -> Sanction:
        """Made now, for `lasting` (None: for good; a kick is kept KICK_KEPT for every server to see)."""
        rows = sanction_rows(kind, target, by=by, reason=reason, lasting=lasting, seconds=seconds)
        async with self.sessions.begin() as session:
            session.add_all(rows)
        return _sanction(rows[0], target.look)

    async def lift(self, kinds: tuple[str, ...], target: Target, *, by: str, reason: str) -> int:
        """Lift the active sanctions of these kinds on this target; how many were lifted."""
        now = datetime.now(UTC)
        names = [SanctionRow.target == target.shown]
        if target.user_id is not None:
            names.append(SanctionRow.user_id == target.user_id)
        if target.look is not None:
            names.append(SanctionRow.look_key == target.look)
        if target.network is not None:
            names.append(SanctionRow.network == target.network)
        async with self.sessions.begin() as session:
            rows = (
                await session.scalars(
                    _active(now).where(SanctionRow.kind.in_(kinds), or_(*names)).with_for_update()
                )
            ).all()
            for row in rows:
                row.lifted_at, row.lifted_by = now, by
            action = "unban" if BAN in kinds else "unmute" if MUTE in kinds else "lift"
            session.add(log_entry(by, action, target.shown, f"{len(rows)} lifted", reason))
        return len(rows)

    async def active(self) -> list[Sanction]:
        """Every sanction in force now (and the kicks of the last KICK_KEPT), oldest first."""
        async with self.sessions() as session:
            found = await session.execute(
                _active(datetime.now(UTC))
                .add_columns(User.look_key, User.nick)
                .outerjoin(User, User.id == SanctionRow.user_id)
                .order_by(SanctionRow.id)
            )
            return [
                _sanction(row, account_look or (look_key(nick) if nick else row.look_key))
                for row, account_look, nick in found.all()
            ]

    async def log(self, most: int = LOG_SHOWN) -> list[LogLine]:
        """The last `most` lines of the moderation log, oldest first."""
        async with self.sessions() as session:
            rows = await session.scalars(
                select(ModerationEntry).order_by(ModerationEntry.id.desc()).limit(most)
            )
            return [
                LogLine(row.at, row.actor, row.action, row.target, row.detail, row.reason)
                for row in reversed(rows.all())
            ]


def sanction_rows(
    kind: str, target: Target, *, by: str, reason: str, lasting: timedelta | None, seconds: int | None = None
) -> tuple[SanctionRow, ModerationEntry]:
    """A sanction made now and its line of the log, for one transaction (also a report's closing)."""
    now = datetime.now(UTC)
    ends = now + KICK_KEPT if kind == KICK else None if lasting is None else now + lasting
    row = SanctionRow(
        key=secrets.token_hex(16),
        kind=kind,
        target=target.shown,
        user_id=target.user_id,
        look_key=target.look,
        network=target.network,
        seconds=seconds,
        starts_at=now,
        ends_at=ends,
        reason=reason,
        made_by=by,
    )
    detail = "now" if kind == KICK else _detail(ends, seconds, target.network)
    return row, log_entry(by, kind, target.shown, detail, reason)


async def _guests_network(session: AsyncSession, look: str) -> str | None:
    """The network of the guest online with this look, from its session's row. The rows keep only the
    nick as the guest typed it, so each guest's look is read here: a ban is rare, and a scan of the
    guests' nicks is cheap next to it."""
    guests = await session.execute(
        select(LiveSession.nick, LiveSession.origin).where(~LiveSession.registered)
    )
    found = [
        json.loads(origin).get("network") for held, origin in guests if look_key(held) == look and origin
    ]
    return next((network for network in found if network), None)


def _active(now: datetime):
    return select(SanctionRow).where(
        SanctionRow.lifted_at.is_(None), or_(SanctionRow.ends_at.is_(None), SanctionRow.ends_at > now)
    )


def _sanction(row: SanctionRow, look: str | None) -> Sanction:
    ends = row.ends_at
    return Sanction(
        key=row.key,
        kind=row.kind,
        target=row.target,
        look=look,
        network=row.network,
        seconds=row.seconds,
        ends=None if ends is None else _utc(ends).timestamp(),
        reason=row.reason,
        by=row.made_by,
    )


def _utc(moment: datetime) -> datetime:
    """SQLite gives back the moments it keeps without their zone: they are UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _detail(ends: datetime | None, seconds: int | None, network: str | None) -> str:
    parts = ["for good" if ends is None else f"until {ends:%Y-%m-%d %H:%M} UTC"]
    if seconds is not None:
        parts.append(f"a line every {seconds} s")
    if network is not None:
        parts.append(f"network {network}")
    return ", ".join(parts)
