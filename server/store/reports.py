"""Players' reports and their closing (docs/moderation.md, "Reports"): SQL only here.

A report keeps the lines it quotes, so that any member of a cluster, after any restart, shows them.
Its limits are counted here, in the database, for the same reason: a reporter may come back on another
member or under a fresh guest nick from the same network. A report is closed once, in one transaction
with its action's sanction (if any) and its line of the moderation log.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.ext.asyncio import async_sessionmaker

from server.protocol.codec import nick_key
from server.store.accounts import log_entry
from server.store.models import Report as ReportRow
from server.store.moderation import Target, sanction_rows

REPORTS_WINDOW = timedelta(minutes=10)
REPORTS_PER_PLAYER = 5  # reports one nick may make in REPORTS_WINDOW
REPORTS_PER_NETWORK = 20  # and everyone from one network (guests under ever new nicks)
# and in a day: a report is kept for good, up to 12 KB with its quoted lines (benchmarks/diskrows.py)
REPORTS_DAY = timedelta(days=1)
REPORTS_PER_PLAYER_A_DAY = 20
REPORTS_PER_NETWORK_A_DAY = 100
# open reports the guests of one network may have (20 in 10 minutes kept 2,880 more open a day, each
# with its quoted lines, for as long as no moderator closed them); accounts are not free to make
OPEN_PER_NETWORK = 40
OPEN_SHOWN = 200  # open reports a moderator's list shows, the oldest first


class TooManyReports(Exception):
    """The reporter, or their network, reached the limit of reports in REPORTS_WINDOW (`today`: in
    REPORTS_DAY)."""

    def __init__(self, today: bool = False) -> None:
        super().__init__()
        self.today = today


class AlreadyReported(Exception):
    """The reporter's same report is still open."""


class ReportGone(Exception):
    """No open report has these numbers (`args`: closed by another moderator, or never made)."""


@dataclass(frozen=True)
class NewReport:
    reporter: str
    reporter_key: str
    reporter_network: str
    reported: str
    reported_network: str  # a guest's, when it was online: a ban on closing covers it ("": none known)
    place: str
    line: str
    reason: str
    context: list[dict[str, Any]]


@dataclass(frozen=True)
class OpenReport:
    number: int
    made_at: datetime
    reporter: str
    reported: str
    reported_network: str
    place: str
    line: str
    reason: str
    context: list[dict[str, Any]]


@dataclass(frozen=True)
class SanctionOrder:
    """The sanction a report's closing makes, in the same transaction."""

    kind: str
    target: Target
    reason: str
    lasting: timedelta | None


class Reports:
    def __init__(self, sessions: async_sessionmaker) -> None:
        self.sessions = sessions

    async def make(self, report: NewReport) -> int:
        """Kept, or refused by the limits: the reporter's own reports and their network's (in 10 minutes
        and in a day), a guest's network's open ones, and the same report while it is still open."""
        now = datetime.now(UTC)
        async with self.sessions.begin() as session:
            counted = [
                (ReportRow.reporter_key, report.reporter_key, REPORTS_PER_PLAYER, REPORTS_PER_PLAYER_A_DAY)
            ]
            if report.reporter_network:
                network = report.reporter_network
                counted.append(
                    (ReportRow.reporter_network, network, REPORTS_PER_NETWORK, REPORTS_PER_NETWORK_A_DAY)
                )
            for column, value, most, most_a_day in counted:
                today, lately = (
                    await session.execute(
                        select(func.count(), func.count().filter(ReportRow.made_at > now - REPORTS_WINDOW))
                        .select_from(ReportRow)
                        .where(column == value, ReportRow.made_at > now - REPORTS_DAY)
                    )
                ).one()
                if today >= most_a_day:
                    raise TooManyReports(today=True)
                if lately >= most:
                    raise TooManyReports
            if report.reporter_network and report.reporter.startswith("*"):
                open_ones = await session.scalar(
                    select(func.count())
                    .select_from(ReportRow)
                    .where(
                        ReportRow.reporter_network == report.reporter_network,
                        ReportRow.reporter.startswith("*"),
                        ReportRow.closed_at.is_(None),
                    )
                )
                if open_ones >= OPEN_PER_NETWORK:
                    raise TooManyReports
            again = await session.scalar(
                select(ReportRow.id).where(
                    ReportRow.reporter_key == report.reporter_key,
                    ReportRow.reported == report.reported,
                    ReportRow.place == report.place,
                    ReportRow.line == report.line,
                    ReportRow.closed_at.is_(None),
                )
            )
            if again is not None:
                raise AlreadyReported
            row = ReportRow(
                made_at=now,
                reporter=report.reporter,
                reporter_key=report.reporter_key,
                reporter_network=report.reporter_network,
                reported=report.reported,
                reported_network=report.reported_network,
                place=report.place,
                line=report.line,
                reason=report.reason,
                context=json.dumps(report.context, ensure_ascii=False),
            )
            session.add(row)
            await session.flush()
            return row.id

    async def open_ones(self, most: int = OPEN_SHOWN) -> list[OpenReport]:
        """The `most` a moderator reads first: the reports of accounts, oldest first, then the guests'
        taken in turn from each network (every network's oldest, then every network's second, ...), so
        that guests of many networks, under ever new nicks, bury no other report under theirs."""
        guest = case((ReportRow.reporter.startswith("*"), 1), else_=0)
        turn = func.row_number().over(partition_by=(guest, ReportRow.reporter_network), order_by=ReportRow.id)
        ranked = (
            select(ReportRow.id, guest.label("guest"), turn.label("turn"))
            .where(ReportRow.closed_at.is_(None))
            .subquery()
        )
        async with self.sessions() as session:
            rows = await session.scalars(
                select(ReportRow)
                .join(ranked, ranked.c.id == ReportRow.id)
                .order_by(ranked.c.guest, ranked.c.guest * ranked.c.turn, ReportRow.id)
                .limit(most)
            )
            return [_open(row) for row in rows.all()]

    async def get_open(self, number: int) -> OpenReport:
        (found,) = await self.get_open_ones((number,))
        return found

    async def get_open_ones(self, numbers: Sequence[int]) -> list[OpenReport]:
        """These open reports, in the order named; ReportGone naming those that are not open."""
        async with self.sessions() as session:
            rows = {
                row.id: row
                for row in await session.scalars(
                    select(ReportRow).where(ReportRow.id.in_(numbers), ReportRow.closed_at.is_(None))
                )
            }
        missing = [number for number in numbers if number not in rows]
        if missing:
            raise ReportGone(*missing)
        return [_open(rows[number]) for number in numbers]

    async def open_numbers(self, *, against: str = "", reporter_key: str = "") -> list[int]:
        """The open reports of one reported player (`against`, any case) or by one reporter (their nick
        key), oldest first. A report keeps the reported nick as written, so the open ones' nicks are
        read here: open reports are few next to all that are kept."""
        query = select(ReportRow.id, ReportRow.reported).where(ReportRow.closed_at.is_(None))
        if reporter_key:
            query = query.where(ReportRow.reporter_key == reporter_key)
        async with self.sessions() as session:
            rows = (await session.execute(query.order_by(ReportRow.id))).all()
        return [number for number, reported in rows if not against or nick_key(reported) == nick_key(against)]

    async def close(
        self, number: int, *, by: str, action: str, note: str, sanction: SanctionOrder | None = None
    ) -> None:
        await self.close_many((number,), by=by, action=action, note=note, sanction=sanction)

    async def close_many(
        self,
        numbers: Sequence[int],
        *,
        by: str,
        action: str,
        note: str,
        sanction: SanctionOrder | None = None,
    ) -> None:
        """Closed with their action, the sanction made once and each report's line of the log written at
        once; ReportGone, naming them, when any is not open (another moderator closed it first): then
        none is closed and nothing is done twice."""
        numbers = list(dict.fromkeys(numbers))
        async with self.sessions.begin() as session:
            rows = {
                row.id: row
                for row in await session.scalars(
                    select(ReportRow)
                    .where(ReportRow.id.in_(numbers), ReportRow.closed_at.is_(None))
                    .with_for_update()
                )
            }
            missing = [number for number in numbers if number not in rows]
            if missing:
                raise ReportGone(*missing)
            now = datetime.now(UTC)
            if sanction is not None:
                kind, target, lasting = sanction.kind, sanction.target, sanction.lasting
                session.add_all(sanction_rows(kind, target, by=by, reason=sanction.reason, lasting=lasting))
            for number in numbers:
                row = rows[number]
                row.closed_at, row.closed_by, row.action, row.note = now, by, action, note
                detail = f"report {number} ({place_name(row.place)}): {action}"
                session.add(log_entry(by, "report", row.reported, detail, note))


def place_name(place: str) -> str:
    """Where a report's line was, as the log and the admin's list say it."""
    if not place:
        return "a player"
    return "lobby" if place == "0" else "private" if place.startswith("_") else f"table {place}"


def _open(row: ReportRow) -> OpenReport:
    return OpenReport(
        number=row.id,
        made_at=row.made_at if row.made_at.tzinfo is not None else row.made_at.replace(tzinfo=UTC),
        reporter=row.reporter,
        reported=row.reported,
        reported_network=row.reported_network,
        place=row.place,
        line=row.line,
        reason=row.reason,
        context=json.loads(row.context),
    )
