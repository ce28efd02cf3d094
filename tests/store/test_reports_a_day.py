"""Reports kept for good (docs/operations.md, "Abuse limits"): each quotes up to 11 lines of 300 characters,
12 KB on SQLite (benchmarks/abuse.py --only rows), and the limits of 10 minutes alone let one network make
2,880 a day under fresh guest nicks, 36 MB a day; so a day has its own bound, per nick and per network."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from server.store.models import Report
from server.store.reports import (
    REPORTS_PER_NETWORK,
    REPORTS_PER_NETWORK_A_DAY,
    REPORTS_PER_PLAYER,
    REPORTS_PER_PLAYER_A_DAY,
    REPORTS_WINDOW,
    NewReport,
    TooManyReports,
)
from server.store.store import Store
from tests.store.test_accounts import store  # noqa: F401 (the fixture)

NETWORK = "203.0.113.0/24"


def reported_by(nick: str, whom: str, network: str = NETWORK) -> NewReport:
    return NewReport(nick, nick.casefold(), network, whom, "", "0", "", "spam", [])


async def a_window_later(store: Store, earlier: timedelta = REPORTS_WINDOW) -> None:  # noqa: F811
    """The reports made so far, as if made `earlier` (each row's time moved in Python: SQLite keeps a
    time as text, which SQL arithmetic would not move)."""
    async with store.writer.sessions.begin() as session:
        for number, made_at in (await session.execute(select(Report.id, Report.made_at))).all():
            await session.execute(update(Report).where(Report.id == number).values(made_at=made_at - earlier))


async def closed_by_moderators(store: Store) -> None:  # noqa: F811
    """Every report closed, as moderators keeping up would: the guests' bound on open reports
    (OPEN_PER_NETWORK) is not what is measured here."""
    async with store.writer.sessions.begin() as session:
        await session.execute(
            update(Report).where(Report.closed_at.is_(None)).values(closed_at=datetime.now(UTC))
        )


async def test_a_network_of_ever_new_guests_makes_a_bounded_number_of_reports_a_day(
    store: Store,  # noqa: F811
) -> None:
    made = 0
    with pytest.raises(TooManyReports) as refused:
        while made <= REPORTS_PER_NETWORK_A_DAY:
            for _ in range(REPORTS_PER_NETWORK):
                await store.reports.make(reported_by(f"*Guest{made}", "*Troll"))
                made += 1
            await a_window_later(store)
            await closed_by_moderators(store)
    assert made == REPORTS_PER_NETWORK_A_DAY and refused.value.today
    await store.reports.make(reported_by("*Guest", "*Troll", "198.51.100.0/24"))  # another network: its own
    await a_window_later(store, timedelta(days=1))
    await store.reports.make(reported_by("*Guest", "*Troll2"))  # a day on


async def test_one_nick_makes_a_bounded_number_of_reports_a_day(store: Store) -> None:  # noqa: F811
    made = 0
    with pytest.raises(TooManyReports) as refused:
        while made <= REPORTS_PER_PLAYER_A_DAY:
            for _ in range(REPORTS_PER_PLAYER):
                await store.reports.make(reported_by("*Ala", f"*Troll{made}", f"192.0.2.{made}/32"))
                made += 1
            await a_window_later(store)
    assert made == REPORTS_PER_PLAYER_A_DAY and refused.value.today
