"""Registered players: registration, login, and the admin's changes (SQL only here)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.engine.board import BLACK, WHITE
from server.engine.rating import INITIAL, Rating, shown
from server.engine.record import renamed
from server.engine.sgf import read_record, write_record
from server.hub.lineup import colour_of
from server.hub.persistence import NO_ROLE, ROLES, Account
from server.logs import Fields
from server.protocol.codec import look_key, nick_key
from server.store.changes import stamp_changes
from server.store.database import as_utc, findable
from server.store.hosted import PlayedUnder, follow_rename, pass_over
from server.store.idhash import HashesBusy, IdHashing
from server.store.models import (
    ArchivedGame,
    GamePlayer,
    IgnoredPlayer,
    LiveSession,
    ModerationEntry,
    Report,
    Sanction,
    User,
)
from server.store.outage import unavailable, unique_violation

log = logging.getLogger(__name__)

DELETED_NICK = "deleted"  # archived games of a deleted account name the player "deleted<number>"


def log_entry(actor: str, action: str, target: str, detail: str, reason: str) -> ModerationEntry:
    """A line of the moderation log, made now."""
    return ModerationEntry(
        at=datetime.now(UTC), actor=actor, action=action, target=target, detail=detail, reason=reason
    )


class NickTaken(Exception):
    pass


class StillOnline(Exception):
    """The account's player is logged in: a running server keeps the session (and saves it again), and
    one started again would tie it to whoever registered the nick next."""


def anonymous(nick: str) -> bool:
    """Whether `nick` is the name a deleted account's games and entries go by (`deleted<number>`): nobody
    registers it or is renamed to it, or they would pass for the deleted player on every page."""
    return re.fullmatch(DELETED_NICK + "[0-9]+", nick_key(nick)) is not None


class UnknownNick(Exception):
    pass


@dataclass(frozen=True)
class Profile:
    """Everything about an account but the id hash: for admins and the public look-ups."""

    nick: str
    email: str
    lang: str
    avatar: str
    about: str
    registered_at: datetime
    rating: Rating
    wins: int
    draws: int
    losses: int
    role: str
    bot: bool = False


def account_of(user: User, ignored: tuple[str, ...] | None = None) -> Account:
    """`ignored`: the nicks the player ignores, read for a session (`ignored_by`); None elsewhere. With
    it the session takes the account's settings too (refusing guests' private lines); without it, the
    account read again for its rating changes nothing a session holds."""
    return Account(
        nick=user.nick,
        rating=shown(Rating(user.rating, user.deviation, user.volatility)),
        wins=user.wins,
        draws=user.draws,
        losses=user.losses,
        role=user.role,
        avatar=user.avatar,
        lang=user.lang,
        ignored=ignored,
        refuses_guest_privates=None if ignored is None else user.refuses_guest_privates,
        registered_at=as_utc(user.registered_at).timestamp(),
        bot=user.bot,
        login_key=user.login_key,
        number=user.id,
        former=tuple(json.loads(user.former or "[]")),
    )


async def ignored_by(session: AsyncSession, user_ids: Iterable[int]) -> dict[int, tuple[str, ...]]:
    """The nicks each of these accounts ignores (docs/protocol.md, "Ignoring"); none for most."""
    ids = list(user_ids)
    found: dict[int, tuple[str, ...]] = dict.fromkeys(ids, ())
    if ids:
        rows = await session.execute(
            select(IgnoredPlayer.user_id, IgnoredPlayer.nick)
            .where(IgnoredPlayer.user_id.in_(ids))
            .order_by(IgnoredPlayer.user_id, IgnoredPlayer.nick_key)
        )
        for user_id, nick in rows.all():
            found[user_id] += (nick,)
    return found


def _profile(user: User) -> Profile:
    return Profile(
        nick=user.nick,
        email=user.email,
        lang=user.lang,
        avatar=user.avatar,
        about=user.about,
        registered_at=user.registered_at,
        rating=Rating(user.rating, user.deviation, user.volatility),
        wins=user.wins,
        draws=user.draws,
        losses=user.losses,
        role=user.role,
        bot=user.bot,
    )


def _by_nick(nick: str):
    return select(User).where(User.nick_key == nick_key(nick))


def holding(nick: str):
    """The accounts that show this nick or one that looks like it, or still log in with it after a
    rename."""
    key = nick_key(nick)
    return select(User).where(
        or_(User.nick_key == key, User.login_key == key, User.look_key == look_key(nick))
    )


def new_user(nick: str, secret_hash: str, *, email: str = "", lang: str = "en", **kind: Any) -> User:
    """A new account's row: the starting rating, no games, no role (`kind`: a bot's columns)."""
    key = nick_key(nick)
    return User(
        nick=nick,
        nick_key=key,
        login_key=key,
        look_key=look_key(nick),
        secret_hash=secret_hash,
        email=email,
        lang=lang,
        avatar="",
        about="",
        registered_at=datetime.now(UTC),
        rating=INITIAL.rating,
        deviation=INITIAL.deviation,
        volatility=INITIAL.volatility,
        wins=0,
        draws=0,
        losses=0,
        role=NO_ROLE,
        **kind,
    )


class Accounts:
    def __init__(self, sessions: async_sessionmaker, hashing: IdHashing) -> None:
        self.sessions = sessions
        self.hashing = hashing

    async def register(self, nick: str, secret: str, email: str, lang: str) -> Account:
        """A new account with the starting rating; NickTaken if the nick, or one that looks like it,
        is."""
        if anonymous(nick):
            raise NickTaken(nick)
        async with self.sessions() as session:
            if await session.scalar(holding(nick).limit(1)) is not None:
                raise NickTaken(nick)
        user = new_user(nick, await self.hashing.hash_async(secret), email=email, lang=lang)
        try:
            async with self.sessions.begin() as session:
                session.add(user)
        except IntegrityError as refused:
            if not unique_violation(refused):  # another constraint: a bug, not a name taken
                raise
            raise NickTaken(nick) from None
        return account_of(user, ignored=())

    async def authenticate(self, nick: str, secret: str, *, first: bool = False) -> Account | None:
        """The account if `secret` is its id; None otherwise, in the same time for an unknown nick.
        `first`: checked ahead of those waiting without it (server/store/idhash.py)."""
        async with self.sessions() as session:
            key = nick_key(nick)
            user = await session.scalar(select(User).where(User.login_key == key))
        if not await self.hashing.check_async(
            secret, user.secret_hash if user is not None else None, first=first
        ):
            return None
        assert user is not None
        if self.hashing.outdated(user.secret_hash):
            await self._hash_again(user, secret)
        async with self.sessions() as session:
            ignored = await ignored_by(session, [user.id])
        return account_of(user, ignored[user.id])

    async def _hash_again(self, user: User, secret: str) -> None:
        """The id's hash made again at the current cost (the operator changed it), in place of the one it
        was just checked against, unless a login elsewhere replaced that meanwhile. Storage that takes no
        writes now does not stop the login: the next one tries again."""
        try:
            renewed = await self.hashing.hash_async(secret)
        except HashesBusy:  # a flood of logins: no thread for it now
            log.warning("id hash not renewed %s", Fields(nick=user.nick, reason="the hashes are busy"))
            return
        try:
            async with self.sessions.begin() as session:
                await session.execute(
                    update(User)
                    .where(User.id == user.id, User.secret_hash == user.secret_hash)
                    .values(secret_hash=renewed)
                )
        except Exception as failure:
            why = unavailable(failure)
            if why is None:
                raise
            log.warning("id hash not renewed %s", Fields(nick=user.nick, reason=why))

    async def profile(self, nick: str) -> Profile | None:
        if not findable(nick):
            return None
        async with self.sessions() as session:
            user = await session.scalar(_by_nick(nick))
        return _profile(user) if user is not None else None

    async def set_role(self, nick: str, role: str, by: str) -> None:
        """The account's role (ROLES), kept with a line of the moderation log naming `by`."""
        if role not in ROLES:
            raise ValueError(f"a role is one of {', '.join(ROLES)}, not {role!r}")
        async with self.sessions.begin() as session:
            user = await self._user(session, nick)
            user.role = role
            session.add(log_entry(by, "set-role", user.nick, role, ""))

    async def roles(self, nicks: Iterable[str]) -> dict[str, str]:
        """The role of each of these nicks that names an account, by nick_key."""
        keys = {nick_key(nick) for nick in nicks if findable(nick)}
        if not keys:
            return {}
        async with self.sessions() as session:
            rows = await session.execute(select(User.nick_key, User.role).where(User.nick_key.in_(keys)))
        return {key: role for key, role in rows.all()}

    async def rename(self, nick: str, new_nick: str) -> None:
        """A new nick for the account. The player keeps logging in with the old one (the id is
        derived from it); archived records keep the nick the games were played under; its entries in
        tournaments the server runs take the new one (follow_rename)."""
        if anonymous(new_nick):
            raise NickTaken(new_nick)
        try:
            async with self.sessions.begin() as session:
                user = await self._user(session, nick)
                holders = await session.scalars(holding(new_nick).where(User.id != user.id).limit(1))
                if holders.first() is not None:
                    raise NickTaken(new_nick)
                old_look = user.look_key
                try:
                    await follow_rename(session, user.id, new_nick)
                except PlayedUnder as tournament:
                    raise NickTaken(f"{new_nick} (another player played under it in {tournament})") from None
                user.former = json.dumps(
                    _left(json.loads(user.former or "[]"), user.nick_key, nick_key(new_nick))
                )
                user.nick, user.nick_key, user.look_key = new_nick, nick_key(new_nick), look_key(new_nick)
                if old_look is not None and old_look != user.look_key:
                    await session.flush()
                    await _pass_on(session, old_look)
        except IntegrityError as refused:
            if not unique_violation(refused):  # another constraint: a bug, not a name taken
                raise
            raise NickTaken(new_nick) from None

    async def delete(self, nick: str, by: str = "admin") -> int:
        """Delete the account; its archived games stay, naming the player `deleted<account number>`.
        Its sanctions in force are lifted (by `by`, in the moderation log): each also names the nick's
        look, which would otherwise ban or mute whoever registers the nick next.

        Returns how many archived games were anonymised. Refused (StillOnline) while its player is logged
        in: a moderator's kick ends the session (docs/operations.md, "Accounts").
        """
        async with self.sessions.begin() as session:
            user = await self._user(session, nick)
            keys = {user.nick_key, user.login_key}
            online = await session.scalars(select(LiveSession.nick).where(LiveSession.registered))
            if any(nick_key(held) in keys for held in online):
                raise StillOnline(user.nick)
            seats: dict[int, list[GamePlayer]] = {}
            for seat in await session.scalars(select(GamePlayer).where(GamePlayer.user_id == user.id)):
                seats.setdefault(seat.game_number, []).append(seat)
            games = (
                await session.scalars(
                    select(ArchivedGame).where(
                        or_(
                            ArchivedGame.blue_id == user.id,
                            ArchivedGame.red_id == user.id,
                            ArchivedGame.number.in_(seats),
                        )
                    )
                )
            ).all()
            name = f"{DELETED_NICK}{user.id}"
            for game in games:
                _anonymise(game, seats.get(game.number, []), user.id, name)
            now = datetime.now(UTC)
            await pass_over(session, keys, name, now)
            await _lift_sanctions(session, user, by, now)
            await session.execute(delete(IgnoredPlayer).where(IgnoredPlayer.nick_key.in_(keys)))
            await _rename_in_reports(session, keys, name)
            await session.flush()
            look = user.look_key
            await session.delete(user)
            if look is not None:
                await session.flush()
                await _pass_on(session, look)
            await session.run_sync(stamp_changes)  # last: its locks are held until the commit
        return len(games)

    @staticmethod
    async def _user(session, nick: str) -> User:
        user = await session.scalar(_by_nick(nick))
        if user is None:
            raise UnknownNick(nick)
        return user


async def _lift_sanctions(session, user: User, by: str, now: datetime) -> None:
    """The deleted account's sanctions in force, lifted with a line of the moderation log."""
    lifted = await session.execute(
        update(Sanction)
        .where(
            Sanction.user_id == user.id,
            Sanction.lifted_at.is_(None),
            or_(Sanction.ends_at.is_(None), Sanction.ends_at > now),
        )
        .values(lifted_at=now, lifted_by=by)
    )
    count = lifted.rowcount  # type: ignore[attr-defined]
    if count:
        session.add(log_entry(by, "lift", user.nick, f"{count} lifted", "account deleted"))


async def _rename_in_reports(session, keys: set[str], name: str) -> None:
    """The deleted account's reports, made and received, naming it `name`, and the lines the open ones
    quote: a report kept its nick, and closing it with a ban banned whoever registered the nick next.
    Reports name players by nick alone, so all are read: deleting is rare."""
    for report in await session.scalars(select(Report)):
        if report.reporter_key in keys:
            report.reporter, report.reporter_key = name, nick_key(name)
        if nick_key(report.reported) in keys:
            report.reported = name
        lines = json.loads(report.context) if report.closed_at is None else []
        quoted = [line for line in lines if nick_key(line.get("nick", "")) in keys]
        for line in quoted:
            line["nick"] = name
        if quoted:
            report.context = json.dumps(lines, ensure_ascii=False)


def _left(former: list[str], old: str, new: str) -> list[str]:
    """The nick keys an account had before (users.former), once it left `old` for `new`: each once, in
    the order last left, and never the one it has now (renamed back)."""
    return [key for key in former if key not in (old, new)] + ([old] if old != new else [])


async def _pass_on(session, look: str) -> None:
    """A look no account holds any longer goes to the oldest account that still shows it: one of the
    look-alikes registered before they were refused (migration 0004 left them without a look key)."""
    for heir in await session.scalars(select(User).where(User.look_key.is_(None)).order_by(User.id)):
        if look_key(heir.nick) == look:
            heir.look_key = look
            return


def _anonymise(game: ArchivedGame, seats: list[GamePlayer], user_id: int, name: str) -> None:
    """The deleted player's part in an archived game: no account, and `name` in the rows and the SGF. A
    team game (`seats`: the player's rows in `game_players`) names side 1 and 2 in its own row too."""
    record = read_record(game.sgf)
    if game.blue_id == user_id:
        record = renamed(record, BLACK, game.blue_nick, name)
        game.blue_id, game.blue_nick = None, name
    if game.red_id == user_id:
        record = renamed(record, WHITE, game.red_nick, name)
        game.red_id, game.red_nick = None, name
    for seat in seats:
        record = renamed(record, colour_of(seat.side), seat.nick, name)
        if seat.side == 1:
            game.blue_nick = name
        elif seat.side == 2:
            game.red_nick = name
        seat.user_id, seat.nick = None, name
    game.sgf = write_record(record)
