"""Bot accounts and their tokens (docs/bots.md); SQL only here.

A token is made by the server (32 random bytes), shown once and kept as its SHA-256: unlike a player's
id, which people choose and which is kept under a slow salted hash, a random token needs no slowing
down, and its hash finds the account in one indexed look-up on every request of the bot API.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Iterable

from sqlalchemy import func, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import async_sessionmaker

from server.hub.persistence import Account
from server.protocol.codec import ProtocolError, check_nick, nick_key
from server.store.accounts import NickTaken, UnknownNick, account_of, holding, ignored_by, new_user
from server.store.idhash import IdHashing
from server.store.models import ArchivedGame, GamePlayer, User
from server.store.outage import unique_violation

TOKEN_BYTES = 32


class NotABot(Exception):
    """The account is not a bot: it gets no token."""


class HasPlayed(Exception):
    """A player's account with games already played cannot become a bot: its results are a person's."""


class InPlay(Exception):
    """The account is logged in or sits at an unfinished game: that session and that game are a person's,
    and as a bot's they would be marked so and rated against people."""


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _new_token() -> tuple[str, str]:
    token = secrets.token_urlsafe(TOKEN_BYTES)
    return token, token_hash(token)


class Bots:
    def __init__(self, sessions: async_sessionmaker, hashing: IdHashing) -> None:
        self.sessions = sessions
        self.hashing = hashing

    async def among(self, nicks: Iterable[str]) -> set[str]:
        """Which of these nicks name bots (a live game's record marks them, docs/bots.md): one query,
        and none for guests alone (a guest is never a bot)."""
        registered = [nick for nick in nicks if not nick.startswith("*")]
        if not registered:
            return set()
        keys = {nick_key(nick) for nick in registered}
        async with self.sessions() as session:
            bots = set(
                await session.scalars(
                    select(User.nick_key).where(User.nick_key.in_(keys), User.bot.is_(True))
                )
            )
        return {nick for nick in registered if nick_key(nick) in bots}

    async def create(self, nick: str) -> str:
        """A new bot account and its first token (returned, never kept). It has no id a person could
        log in with (a random one, forgotten at once): the bot plays through its token only."""
        check_nick(nick, guest=False)
        token, hashed = _new_token()
        secret_hash = await self.hashing.hash_async(secrets.token_urlsafe(TOKEN_BYTES))
        user = new_user(nick, secret_hash, bot=True, bot_token_hash=hashed)
        try:
            async with self.sessions.begin() as session:
                if await session.scalar(holding(nick).limit(1)) is not None:
                    raise NickTaken(nick)
                session.add(user)
        except IntegrityError as refused:
            if not unique_violation(refused):  # another constraint: a bug, not a name taken
                raise
            raise NickTaken(nick) from None
        return token

    async def issue_token(self, nick: str) -> str:
        """A new token for a bot; the one before stops working at once (a rotation)."""
        token, hashed = _new_token()
        async with self.sessions.begin() as session:
            user = await session.scalar(select(User).where(User.nick_key == nick_key(nick)))
            if user is None:
                raise UnknownNick(nick)
            if not user.bot:
                raise NotABot(nick)
            user.bot_token_hash = hashed
        return token

    async def upgrade(self, nick: str, secret: str, in_play: Callable[[str], bool]) -> str | None:
        """A registered player makes their own account a bot, proving it with its id: the first token,
        or None for a wrong nick or id. HasPlayed if the account has any game, rated or not; InPlay if
        `in_play(nick)` (the hub's) says it is logged in or at an unfinished game, asked last."""
        try:  # a nick no account can have (a NUL in it failed PostgreSQL's query): nothing to look up or hash
            check_nick(nick, guest=False)
        except ProtocolError:
            return None
        async with self.sessions() as session:
            user = await session.scalar(select(User).where(User.login_key == nick_key(nick)))
        if not await self.hashing.check_async(secret, user.secret_hash if user is not None else None):
            return None
        assert user is not None
        token, hashed = _new_token()
        async with self.sessions.begin() as session:
            user = await session.get(User, user.id)
            if user is None:
                return None
            played = await session.scalar(
                select(func.count())
                .select_from(ArchivedGame)
                .where(or_(ArchivedGame.blue_id == user.id, ArchivedGame.red_id == user.id))
            )
            in_a_team = await session.scalar(
                select(GamePlayer.game_number).where(GamePlayer.user_id == user.id).limit(1)
            )
            if played or in_a_team is not None or user.wins or user.draws or user.losses:
                raise HasPlayed(nick)
            if in_play(user.nick):
                raise InPlay(nick)
            user.bot, user.bot_token_hash = True, hashed
        return token

    async def account(self, token: str, *, for_session: bool = False) -> Account | None:
        """The bot whose token this is, or None; `for_session`: with the players it ignores, which a
        login needs and the bot API's other requests do not (one query less on each)."""
        if not token:
            return None
        async with self.sessions() as session:
            user = await session.scalar(select(User).where(User.bot_token_hash == token_hash(token)))
            if user is None or not user.bot:
                return None
            if not for_session:
                return account_of(user)
            ignored = await ignored_by(session, [user.id])
        return account_of(user, ignored[user.id])

    async def token_hashes(self) -> list[str]:
        """The hashes of the bots' tokens: the tokens a server starting knows to be right."""
        async with self.sessions() as session:
            rows = await session.scalars(
                select(User.bot_token_hash).where(User.bot.is_(True), User.bot_token_hash.is_not(None))
            )
            return [hashed for hashed in rows if hashed is not None]

    async def still_valid_among(self, tokens: list[str]) -> set[str]:
        """Which of these tokens still name a bot (a rotation or a deletion ends the feeds that used
        them): one query for all of a server's open feeds."""
        hashes = {token_hash(token): token for token in tokens}
        async with self.sessions() as session:
            found = await session.scalars(
                select(User.bot_token_hash).where(User.bot_token_hash.in_(hashes), User.bot.is_(True))
            )
            return {hashes[hashed] for hashed in found if hashed is not None}
