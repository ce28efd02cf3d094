"""Reading the archive: a game by number, the list of games (all, or a player's), a player's ratings.

A team game (docs/teams.md) has its players in `game_players`; its summary names each team by its
nicks joined, and lists the players in turn order."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, or_, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import defer

from server.engine.record import NAMES_SEPARATOR
from server.protocol.codec import nick_key
from server.store.database import MAX_INTEGER
from server.store.models import ArchivedGame, GamePlayer, RatingChange, User


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
    players: tuple[str, ...] = ()  # a team game's players in turn order (side n is players[n-1])
    registered: bool = False  # both players had an account when it was archived (and still have)
    bots: tuple[str, ...] = ()  # the nicks of its players who are bots (docs/bots.md), in turn order


@dataclass(frozen=True)
class RatingPoint:
    """A player's rating and deviation after a rated game."""

    game_number: int
    rated_at: datetime
    rating: float
    deviation: float


class Games:
    def __init__(self, sessions: async_sessionmaker) -> None:
        self.sessions = sessions

    async def sgf(self, number: int) -> str | None:
        if not 0 < number <= MAX_INTEGER:
            return None
        async with self.sessions() as session:
            return await session.scalar(select(ArchivedGame.sgf).where(ArchivedGame.number == number))

    async def game(self, number: int) -> tuple[GameSummary, str] | None:
        """A game's summary and its record."""
        if not 0 < number <= MAX_INTEGER:
            return None
        async with self.sessions() as session:
            row = await session.get(ArchivedGame, number)
            if row is None:
                return None
            return (await _summaries(session, [row]))[0], row.sgf

    async def summary(self, number: int) -> GameSummary | None:
        """A game's summary, without reading its record."""
        if not 0 < number <= MAX_INTEGER:
            return None
        async with self.sessions() as session:
            row = await session.scalar(
                select(ArchivedGame).where(ArchivedGame.number == number).options(defer(ArchivedGame.sgf))
            )
            return (await _summaries(session, [row]))[0] if row is not None else None

    async def recent(self, nick: str | None, limit: int, before: int | None = None) -> list[GameSummary]:
        """Newest first, numbered below `before` when given (the next page). Without a nick, every game;
        a registered nick finds the account's games (under any nick it had), a guest nick the games
        played under that exact nick."""
        query = select(ArchivedGame).order_by(ArchivedGame.number.desc()).limit(limit)
        if before is not None:
            query = query.where(ArchivedGame.number < before)
        async with self.sessions() as session:
            if nick is not None:
                query = query.where(await _played_by(session, nick))
            return await _summaries(session, list(await session.scalars(query)))

    async def has_played(self, nick: str) -> bool:
        """Whether any archived game was played under this nick (by a guest, or an account's old nick)."""
        async with self.sessions() as session:
            found = await session.scalar(
                select(ArchivedGame.number)
                .where(or_(ArchivedGame.blue_nick == nick, ArchivedGame.red_nick == nick))
                .limit(1)
            )
            if found is None:
                found = await session.scalar(
                    select(GamePlayer.game_number).where(GamePlayer.nick == nick).limit(1)
                )
            return found is not None

    async def ratings(self, nick: str) -> list[RatingPoint]:
        """A registered player's rating after each rated game, oldest first (empty for a guest)."""
        if nick.startswith("*"):
            return []
        async with self.sessions() as session:
            rows = await session.scalars(
                select(RatingChange)
                .join(User, User.id == RatingChange.user_id)
                .where(User.nick_key == nick_key(nick))
                .order_by(RatingChange.game_number)
            )
            return [RatingPoint(row.game_number, row.rated_at, row.rating, row.deviation) for row in rows]


async def _played_by(session: AsyncSession, nick: str) -> ColumnElement[bool]:
    """The games of a player: as blue or red, or in a team (by account for a registered nick)."""
    user_id = await session.scalar(select(User.id).where(User.nick_key == nick_key(nick)))
    if user_id is not None and not nick.startswith("*"):
        teams = select(GamePlayer.game_number).where(GamePlayer.user_id == user_id)
        return or_(
            ArchivedGame.blue_id == user_id, ArchivedGame.red_id == user_id, ArchivedGame.number.in_(teams)
        )
    teams = select(GamePlayer.game_number).where(GamePlayer.nick == nick)
    return or_(ArchivedGame.blue_nick == nick, ArchivedGame.red_nick == nick, ArchivedGame.number.in_(teams))


async def _summaries(session: AsyncSession, rows: list[ArchivedGame]) -> list[GameSummary]:
    """A page of games summed up: their team players and which players are bots, one query each."""
    players = await _players(session, [row.number for row in rows])
    accounts = {row.blue_id for row in rows} | {row.red_id for row in rows}
    accounts |= {player.user_id for team in players.values() for player in team}
    accounts.discard(None)
    bots = (
        set(await session.scalars(select(User.id).where(User.id.in_(accounts), User.bot.is_(True))))
        if accounts
        else set()
    )
    return [_summary(row, players.get(row.number, []), bots) for row in rows]


async def _players(session: AsyncSession, numbers: list[int]) -> dict[int, list[GamePlayer]]:
    """The players of the team games among `numbers`, in turn order (one query for a page)."""
    if not numbers:
        return {}
    found: dict[int, list[GamePlayer]] = {}
    query = select(GamePlayer).where(GamePlayer.game_number.in_(numbers)).order_by(GamePlayer.side)
    for row in await session.scalars(query):
        found.setdefault(row.game_number, []).append(row)
    return found


def _summary(row: ArchivedGame, team: list[GamePlayer], bots: set[int]) -> GameSummary:
    """A team game's blue and red are its teams, each its nicks in its own order, joined. A bot is an
    account's flag, and no account with a game becomes a bot (store/bots.py), so the account says
    today what it was then."""
    players = tuple(player.nick for player in team)
    blue, red = (
        (NAMES_SEPARATOR.join(players[0::2]), NAMES_SEPARATOR.join(players[1::2]))
        if players
        else (
            row.blue_nick,
            row.red_nick,
        )
    )
    seats = [(player.nick, player.user_id) for player in team] or [
        (row.blue_nick, row.blue_id),
        (row.red_nick, row.red_id),
    ]
    return GameSummary(
        number=row.number,
        finished_at=row.finished_at,
        blue=blue,
        red=red,
        game_type=row.game_type,
        result=row.result,
        rated=row.rated,
        tournament=row.tournament,
        players=players,
        registered=row.blue_id is not None and row.red_id is not None,
        bots=tuple(nick for nick, account in seats if account in bots),
    )
