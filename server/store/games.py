"""Reading the archive: a game's SGF by number, and a player's recent games."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import async_sessionmaker

from server.protocol.codec import nick_key
from server.store.database import MAX_INTEGER
from server.store.models import ArchivedGame, User


@dataclass(frozen=True)
class GameSummary:
    number: int
    finished_at: datetime
    blue: str
    red: str
    game_type: str
    result: str | None
    rated: bool
    tournament: str | None


class Games:
    def __init__(self, sessions: async_sessionmaker) -> None:
        self.sessions = sessions

    async def sgf(self, number: int) -> str | None:
        if not 0 < number <= MAX_INTEGER:
            return None
        async with self.sessions() as session:
            return await session.scalar(select(ArchivedGame.sgf).where(ArchivedGame.number == number))

    async def recent(self, nick: str, limit: int) -> list[GameSummary]:
        """Newest first. A registered nick finds the account's games (under any nick it had);
        a guest nick finds the games played under that exact nick."""
        async with self.sessions() as session:
            user_id = await session.scalar(select(User.id).where(User.nick_key == nick_key(nick)))
            if user_id is not None and not nick.startswith("*"):
                who = or_(ArchivedGame.blue_id == user_id, ArchivedGame.red_id == user_id)
            else:
                who = or_(ArchivedGame.blue_nick == nick, ArchivedGame.red_nick == nick)
            rows = await session.scalars(
                select(ArchivedGame).where(who).order_by(ArchivedGame.number.desc()).limit(limit)
            )
            return [
                GameSummary(
                    number=row.number,
                    finished_at=row.finished_at,
                    blue=row.blue_nick,
                    red=row.red_nick,
                    game_type=row.game_type,
                    result=row.result,
                    rated=row.rated,
                    tournament=row.tournament,
                )
                for row in rows
            ]
