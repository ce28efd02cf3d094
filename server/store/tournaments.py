"""Organisers' keys and the tables they set up (SQL only here)."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import async_sessionmaker

from server.store.database import findable, one_snapshot
from server.store.models import ArchivedGame, TournamentChange, TournamentKey, TournamentTable
from server.store.outage import unique_violation

WHOLE_READ_PAGE = 5_000  # rows of a tournament's whole read made at a time (about 40 ms of the loop)
KEY_BYTES = 24  # 32 URL-safe characters: far beyond guessing, so a fast hash is enough to keep it


class KeyNameTaken(Exception):
    pass


@dataclass(frozen=True)
class KeyInfo:
    name: str
    tournament: str | None
    registered_only: bool
    created_at: datetime
    revoked_at: datetime | None


@dataclass(frozen=True)
class TableRecord:
    uid: int
    tournament: str
    round: str | None
    created_at: datetime
    blue: str
    red: str
    game_type: str
    result: str | None
    game_number: int | None
    cancelled: bool  # the organiser cancelled its tournament game
    finished_at: datetime | None = None  # when its tournament game ended, once archived
    moves: int | None = None  # its tournament game's moves, once archived
    changed: int = 0  # its tournament's count of changes when it was last written (server/store/changes.py)


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _info(row: TournamentKey) -> KeyInfo:
    return KeyInfo(row.name, row.tournament, row.registered_only, row.created_at, row.revoked_at)


class Tournaments:
    def __init__(self, sessions: async_sessionmaker) -> None:
        self.sessions = sessions

    async def add_key(self, name: str, tournament: str | None, registered_only: bool) -> str:
        """A new key, returned once: only its hash is stored."""
        key = secrets.token_urlsafe(KEY_BYTES)
        row = TournamentKey(
            name=name,
            key_hash=key_hash(key),
            tournament=tournament,
            registered_only=registered_only,
            created_at=datetime.now(UTC),
            revoked_at=None,
        )
        try:
            async with self.sessions.begin() as session:
                session.add(row)
        except IntegrityError as refused:
            if not unique_violation(refused):  # another constraint: a bug, not a name taken
                raise
            raise KeyNameTaken(name) from None
        return key

    async def keys(self) -> list[KeyInfo]:
        async with self.sessions() as session:
            rows = await session.scalars(select(TournamentKey).order_by(TournamentKey.id))
            return [_info(row) for row in rows]

    async def revoke(self, name: str) -> bool:
        async with self.sessions.begin() as session:
            row = await session.scalar(select(TournamentKey).where(TournamentKey.name == name))
            if row is None or row.revoked_at is not None:
                return False
            row.revoked_at = datetime.now(UTC)
            return True

    async def key_hashes(self) -> list[str]:
        """The hashes of the keys not revoked: the keys a server starting knows to be right."""
        async with self.sessions() as session:
            rows = await session.scalars(
                select(TournamentKey.key_hash).where(TournamentKey.revoked_at.is_(None))
            )
            return list(rows)

    async def check(self, key: str) -> KeyInfo | None:
        """The key's settings if it exists and is not revoked."""
        async with self.sessions() as session:
            row = await session.scalar(select(TournamentKey).where(TournamentKey.key_hash == key_hash(key)))
        if row is None or row.revoked_at is not None:
            return None
        return _info(row)

    async def tables(self, tournament: str, since: int | None = None) -> list[TableRecord]:
        """The tournament's tables; with `since`, only those changed after that count of its changes (an
        arena's wave: server/store/changes.py). The highest count among them says that every change up
        to it was read."""
        if not findable(tournament):
            return []
        # columns, not ORM objects: the first wave of an arena after a start reads every game of the
        # tournament (docs/performance.md)
        rows = select(
            TournamentTable.uid,
            TournamentTable.tournament,
            TournamentTable.round,
            TournamentTable.created_at,
            TournamentTable.blue,
            TournamentTable.red,
            TournamentTable.game_type,
            TournamentTable.result,
            TournamentTable.game_number,
            TournamentTable.cancelled_at.is_not(None),
            ArchivedGame.finished_at,
            TournamentTable.moves,
            TournamentTable.changed,
        ).outerjoin(ArchivedGame, ArchivedGame.number == TournamentTable.game_number)
        of_it = TournamentTable.tournament == tournament
        async with self.sessions() as session:
            if since is not None:
                found = await session.execute(
                    rows.where(of_it, TournamentTable.changed > since).order_by(TournamentTable.uid)
                )
                return [TableRecord(*row) for row in found]
            # a whole read, a page at a time: the event loop serves the others between pages (108,000
            # rows made at once held it 0.7 to 0.8 s), every page of one snapshot (see one_snapshot)
            await one_snapshot(session)
            records: list[TableRecord] = []
            after = -1
            while True:
                found = await session.execute(
                    rows.where(of_it, TournamentTable.uid > after)
                    .order_by(TournamentTable.uid)
                    .limit(WHOLE_READ_PAGE)
                )
                page = [TableRecord(*row) for row in found]
                records += page
                if len(page) < WHOLE_READ_PAGE:
                    return records
                after = page[-1].uid

    async def changes(self, tournament: str) -> int:
        """The tournament's count of changes to its tables (0: none yet): a reader that saw the same count
        has seen every row as it is (server/store/changes.py)."""
        if not findable(tournament):
            return 0
        async with self.sessions() as session:
            count = await session.scalar(
                select(TournamentChange.count).where(TournamentChange.tournament == tournament)
            )
        return count or 0

    async def records(self, tournament: str, after: int, limit: int) -> list[tuple[int, str, str, str]]:
        """(number, blue, red, SGF) of the tournament's archived games numbered above `after`, the first
        `limit` of them: a day's arena has some 108,000, read a page at a time."""
        if not findable(tournament):
            return []
        async with self.sessions() as session:
            rows = await session.execute(
                select(ArchivedGame.number, ArchivedGame.blue_nick, ArchivedGame.red_nick, ArchivedGame.sgf)
                .where(ArchivedGame.tournament == tournament, ArchivedGame.number > after)
                .order_by(ArchivedGame.number)
                .limit(limit)
            )
            return [tuple(row) for row in rows]  # type: ignore[misc]

    async def archived(self, tournament: str) -> tuple[int, int]:
        """How many archived games the tournament has, and the highest number among them (0: none): with
        its count of changes (an account's deletion renames its tables' players), what tells that its
        records changed. A game played at one of its tables after the tournament's game is archived
        under the tournament without changing a table."""
        if not findable(tournament):
            return 0, 0
        async with self.sessions() as session:
            counted = await session.execute(
                select(func.count(), func.max(ArchivedGame.number)).where(
                    ArchivedGame.tournament == tournament
                )
            )
            games, highest = counted.one()
        return games, highest or 0
