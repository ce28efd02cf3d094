"""Tournaments the server runs (swiss, arena): their settings, players and swiss pairings (SQL only here).

The games themselves are tournament tables like an organiser's (server/store/tournaments.py), so their
results are read back from there.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.engine.record import NAMES_SEPARATOR
from server.hub.model import ACCOUNT_MARK, account_number
from server.protocol.codec import nick_key
from server.store.changes import note_change
from server.store.database import findable
from server.store.models import HostedEntry, HostedRound, HostedTournament, TournamentTable, User
from server.store.outage import unique_violation

LISTED = 50  # tournaments in the list: the unfinished ones, then the latest finished
UNFINISHED = ("registering", "running")


class NameTaken(Exception):
    """Another tournament, hosted or set up by an organiser, has this name."""


class PlayedUnder(Exception):
    """A rename refused: another player of a tournament the account is entered in played under the nick,
    and a game is the entry's by its nick."""


@dataclass(frozen=True)
class Settings:
    """What the organiser chose."""

    name: str
    kind: str  # swiss | arena
    game_type: str
    rounds: int  # swiss; 0 for an arena
    minutes: int  # arena; 0 for a swiss
    starts_at: datetime
    min_rating: int | None
    max_rating: int | None
    registered_only: bool
    say_hi: int
    created_by: str


@dataclass(frozen=True)
class Hosted:
    id: int
    settings: Settings
    created_at: datetime
    state: str  # registering | running | finished | cancelled
    round: int  # swiss: the round being played, 0 before the first
    finished_at: datetime | None


@dataclass(frozen=True)
class Entry:
    nick: str
    nick_key: str
    seat: str  # Player.seat_key of who registered (an account's, under its nick now); "" for a deleted one's
    rating: float
    registered_at: datetime
    withdrawn: bool
    former: tuple[str, ...] = ()  # the account's earlier nicks in the tournament, oldest first (renames)


@dataclass(frozen=True)
class PairedRound:
    round: int
    boards: tuple[tuple[str, str], ...]  # (first to move, second), in board order
    bye: str | None


def _hosted(row: HostedTournament) -> Hosted:
    settings = Settings(
        row.name,
        row.kind,
        row.game_type,
        row.rounds,
        row.minutes,
        row.starts_at,
        row.min_rating,
        row.max_rating,
        row.registered_only,
        row.say_hi,
        row.created_by,
    )
    return Hosted(row.id, settings, row.created_at, row.state, row.round, row.finished_at)


class HostedTournaments:
    def __init__(self, sessions: async_sessionmaker) -> None:
        self.sessions = sessions

    async def create(self, settings: Settings, now: datetime) -> Hosted:
        row = HostedTournament(
            name=settings.name,
            kind=settings.kind,
            game_type=settings.game_type,
            rounds=settings.rounds,
            minutes=settings.minutes,
            starts_at=settings.starts_at,
            min_rating=settings.min_rating,
            max_rating=settings.max_rating,
            registered_only=settings.registered_only,
            say_hi=settings.say_hi,
            created_by=settings.created_by,
            created_at=now,
            state="registering",
            round=0,
            finished_at=None,
        )
        try:
            async with self.sessions.begin() as session:
                organisers = select(func.count()).where(TournamentTable.tournament == settings.name)
                if await session.scalar(organisers):
                    raise NameTaken(settings.name)
                session.add(row)
        except IntegrityError as refused:
            if not unique_violation(refused):  # another constraint: a bug, not a name taken
                raise
            raise NameTaken(settings.name) from None
        return _hosted(row)

    async def get(self, name: str) -> Hosted | None:
        if not findable(name):
            return None
        async with self.sessions() as session:
            row = await session.scalar(select(HostedTournament).where(HostedTournament.name == name))
            return _hosted(row) if row is not None else None

    async def unfinished(self) -> list[Hosted]:
        async with self.sessions() as session:
            rows = await session.scalars(
                select(HostedTournament)
                .where(HostedTournament.state.in_(UNFINISHED))
                .order_by(HostedTournament.id)
            )
            return [_hosted(row) for row in rows]

    async def listing(self) -> list[Hosted]:
        """The unfinished tournaments by start, then the latest finished: what the lobby lists."""
        async with self.sessions() as session:
            open_ = await session.scalars(
                select(HostedTournament)
                .where(HostedTournament.state.in_(UNFINISHED))
                .order_by(HostedTournament.starts_at, HostedTournament.id)
                .limit(LISTED)
            )
            listed = [_hosted(row) for row in open_]
            done = await session.scalars(
                select(HostedTournament)
                .where(HostedTournament.state.in_(("finished", "cancelled")))
                .order_by(HostedTournament.id.desc())
                .limit(max(0, LISTED - len(listed)))
            )
            return listed + [_hosted(row) for row in done]

    async def entries(self, tournament_id: int) -> list[Entry]:
        """In the order they registered first."""
        async with self.sessions() as session:
            rows = await session.scalars(
                select(HostedEntry).where(HostedEntry.tournament_id == tournament_id).order_by(HostedEntry.id)
            )
            return [
                Entry(
                    row.nick,
                    row.nick_key,
                    row.seat,
                    row.rating,
                    row.registered_at,
                    row.withdrawn_at is not None,
                    tuple(json.loads(row.former)),
                )
                for row in rows
            ]

    async def register(self, tournament_id: int, entry: Entry) -> bool:
        """A new entry, or a withdrawn one back (as who registers now, and when: a no-show back since is
        not withdrawn again for the same game); False when the player is registered already. An account
        is entered under its nick now, which a session begun before an admin's rename does not have."""
        async with self.sessions.begin() as session:
            entry = await _under_accounts_nick(session, entry)
            row = await session.scalar(
                select(HostedEntry).where(
                    HostedEntry.tournament_id == tournament_id, HostedEntry.nick_key == entry.nick_key
                )
            )
            if row is None:
                session.add(
                    HostedEntry(
                        tournament_id=tournament_id,
                        nick=entry.nick,
                        nick_key=entry.nick_key,
                        seat=entry.seat,
                        rating=entry.rating,
                        registered_at=entry.registered_at,
                        withdrawn_at=None,
                        former=json.dumps(entry.former),
                    )
                )
                return True
            if row.withdrawn_at is None:
                return False
            row.nick, row.seat = entry.nick, entry.seat
            row.former = json.dumps(_former(json.loads(row.former) + list(entry.former), entry.nick))
            row.registered_at, row.withdrawn_at = entry.registered_at, None
            return True

    async def withdraw(self, tournament_id: int, nick_key: str, now: datetime) -> bool:
        """False when the player is not registered (or withdrew already)."""
        async with self.sessions.begin() as session:
            done = await session.execute(
                update(HostedEntry)
                .where(
                    HostedEntry.tournament_id == tournament_id,
                    HostedEntry.nick_key == nick_key,
                    HostedEntry.withdrawn_at.is_(None),
                )
                .values(withdrawn_at=now)
            )
            return bool(done.rowcount)  # type: ignore[attr-defined]

    async def set_state(self, tournament_id: int, state: str, finished_at: datetime | None = None) -> None:
        async with self.sessions.begin() as session:
            await session.execute(
                update(HostedTournament)
                .where(HostedTournament.id == tournament_id)
                .values(state=state, finished_at=finished_at)
            )

    async def save_round(self, tournament_id: int, paired: PairedRound, now: datetime) -> None:
        """The pairing and the tournament's round number, in one transaction."""
        async with self.sessions.begin() as session:
            session.add(
                HostedRound(
                    tournament_id=tournament_id,
                    round=paired.round,
                    paired_at=now,
                    boards=json.dumps([list(board) for board in paired.boards]),
                    bye=paired.bye,
                )
            )
            await session.execute(
                update(HostedTournament)
                .where(HostedTournament.id == tournament_id)
                .values(round=paired.round, state="running")
            )

    async def rounds(self, tournament_id: int) -> list[PairedRound]:
        async with self.sessions() as session:
            rows = await session.scalars(
                select(HostedRound)
                .where(HostedRound.tournament_id == tournament_id)
                .order_by(HostedRound.round)
            )
            return [
                PairedRound(
                    row.round, tuple((white, black) for white, black in json.loads(row.boards)), row.bye
                )
                for row in rows
            ]


async def pass_over(session: AsyncSession, keys: Collection[str], name: str, now: datetime) -> None:
    """A deleted account's part in tournaments (docs/operations.md, "Accounts"): its entries, under any
    nick of `keys`, withdrawn from the unfinished ones, and they, their pairings and its tables (an
    organiser's too) naming `name`, under any nick the entry had, so that whoever registers the nick next
    joins as a newcomer and is credited with none of its games. Tables name players by nick alone, so all
    are read: deleting is rare."""
    entries = list(
        await session.scalars(
            select(HostedEntry).where(HostedEntry.nick_key.in_(keys)).order_by(HostedEntry.id)
        )
    )
    ids = {entry.tournament_id for entry in entries}
    found = await session.execute(
        select(HostedTournament.id, HostedTournament.name, HostedTournament.state).where(
            HostedTournament.id.in_(ids)
        )
    )
    tournaments = {tournament_id: (tournament, state) for tournament_id, tournament, state in found}
    names: dict[str, dict[str, str]] = {}  # tournament -> nick of an entry -> its new name
    counted: dict[str, int] = {}  # tournament -> its entries renamed so far
    for entry in entries:
        tournament, state = tournaments[entry.tournament_id]
        renamed = names.setdefault(tournament, {})
        # an entry made before entries followed renames: the account may have one under each nick
        counted[tournament] = counted.get(tournament, 0) + 1
        new = f"{name}.{counted[tournament]}" if counted[tournament] > 1 else name
        for nick in (*json.loads(entry.former), entry.nick):
            renamed[nick] = new
        # no session's or account's seat: whoever registers `new` cannot take the entry back either
        entry.nick, entry.nick_key, entry.seat, entry.former = new, nick_key(new), "", "[]"
        if state in UNFINISHED and entry.withdrawn_at is None:
            entry.withdrawn_at = now
    for paired in await session.scalars(select(HostedRound).where(HostedRound.tournament_id.in_(ids))):
        renamed = names[tournaments[paired.tournament_id][0]]
        boards = [[renamed.get(nick, nick) for nick in board] for board in json.loads(paired.boards)]
        paired.boards = json.dumps(boards)
        paired.bye = renamed.get(paired.bye, paired.bye) if paired.bye is not None else None
    tables = await session.execute(
        select(TournamentTable.uid, TournamentTable.tournament, TournamentTable.blue, TournamentTable.red)
    )
    for uid, tournament, *sides in tables.all():
        blue, red = (_side(side, names.get(tournament, {}), keys, name) for side in sides)
        if [blue, red] != sides:
            await session.execute(
                update(TournamentTable).where(TournamentTable.uid == uid).values(blue=blue, red=red)
            )
            note_change(session.info, tournament, uid)


def _side(side: str, renamed: dict[str, str], keys: Collection[str], name: str) -> str:
    """A table's side (a nick, or a team's nicks) with the deleted account's nicks renamed: an entry's
    as `renamed` says, any other (an organiser's table) `name`."""
    nicks = side.split(NAMES_SEPARATOR)
    return NAMES_SEPARATOR.join(renamed.get(n) or (name if nick_key(n) in keys else n) for n in nicks)


async def follow_rename(session: AsyncSession, number: int, nick: str) -> None:
    """An admin renamed account `number` `nick`: each of its entries takes the new nick and seat, and keeps
    the one it had among its former nicks, under which its games were set up (docs/tournaments.md,
    "Joining and withdrawing"). Refused (PlayedUnder) when another player of one of those tournaments
    played under `nick`: the games under it would be counted for both."""
    key = nick_key(nick)
    mine = list(await session.scalars(select(HostedEntry).where(_of_account(number))))
    tournaments = {entry.tournament_id for entry in mine}
    others = await session.scalars(
        select(HostedEntry).where(HostedEntry.tournament_id.in_(tournaments), ~_of_account(number))
    )
    for other in others:
        if key in {nick_key(n) for n in (other.nick, *json.loads(other.former))}:
            name = await session.scalar(
                select(HostedTournament.name).where(HostedTournament.id == other.tournament_id)
            )
            raise PlayedUnder(name)
    for entry in mine:
        if entry.nick_key != key:
            entry.former = json.dumps(_former([*json.loads(entry.former), entry.nick], nick))
        entry.nick, entry.nick_key, entry.seat = nick, key, f"@{key}{ACCOUNT_MARK}{number}"


def _of_account(number: int) -> Any:
    """The entries of account `number`: its seat names it (`@<nick key>#<number>`; no nick has a `#`)."""
    return HostedEntry.seat.like(f"@%{ACCOUNT_MARK}{number}")


async def _under_accounts_nick(session: AsyncSession, entry: Entry) -> Entry:
    """The entry of a registered player under the account's nick now, with the nick it was asked under
    among its former ones: a session begun before an admin's rename goes on under the nick it had."""
    number = account_number(entry.seat)
    account = await session.get(User, number) if number else None
    if account is None or account.nick_key == entry.nick_key:
        return entry
    seat = f"@{account.nick_key}{ACCOUNT_MARK}{number}"
    return replace(entry, nick=account.nick, nick_key=account.nick_key, seat=seat, former=(entry.nick,))


def _former(nicks: list[str], nick: str) -> list[str]:
    """Each earlier nick once, in the order first left, but the one the entry has now (renamed back)."""
    seen, kept = {nick_key(nick)}, []
    for earlier in nicks:
        if nick_key(earlier) not in seen:
            seen.add(nick_key(earlier))
            kept.append(earlier)
    return kept
