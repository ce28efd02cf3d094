"""The moderators' queue of open reports (docs/moderation.md, "Reports") against a troll who reports
from many networks under fresh guest nicks: a real report must still be among the ones shown."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from server.store.models import Report as ReportRow
from server.store.reports import OPEN_PER_NETWORK, OPEN_SHOWN, REPORTS_PER_NETWORK, NewReport, TooManyReports
from server.store.store import Store
from tests.store.test_accounts import store  # noqa: F401 (a fixture)


def report(by: str, network: str, whom: str) -> NewReport:
    return NewReport(by, by.lower(), network, whom, "", "", "", "spam", [])


async def test_a_real_report_is_shown_whatever_junk_guests_of_many_networks_reported_before_it(
    store: Store,  # noqa: F811
) -> None:
    """Oldest first, 200 shown: the troll's guests of 11 networks, 20 reports each, hid every report made
    after theirs until a moderator had closed 220 of them one by one."""
    networks = OPEN_SHOWN // REPORTS_PER_NETWORK + 1
    for network in range(networks):
        for n in range(REPORTS_PER_NETWORK):
            nick = f"*G{network}x{n}"
            await store.reports.make(report(nick, f"10.{network}.0.0/24", f"*Nobody{network}x{n}"))
    guest = await store.reports.make(report("*Ala", "203.0.113.0/24", "*Troll"))
    account = await store.reports.make(report("Ann", "198.51.100.0/24", "*Troll"))

    shown = [found.number for found in await store.reports.open_ones()]

    assert len(shown) == OPEN_SHOWN
    assert shown[0] == account  # accounts are not free to make: theirs come first
    assert guest in shown[: networks + 2]  # then each network's oldest, then each one's second...
    assert shown[1] == 1 and shown[2] == 1 + REPORTS_PER_NETWORK  # and so on, oldest first within


async def age_reports(store: Store) -> None:  # noqa: F811
    """Every report made so far as if made an hour ago: out of the limits' 10 minutes."""
    async with store.engine.begin() as connection:
        await connection.execute(update(ReportRow).values(made_at=datetime.now(UTC) - timedelta(hours=1)))


async def test_a_networks_guests_keep_a_bounded_number_of_reports_open(store: Store) -> None:  # noqa: F811
    """20 reports in 10 minutes, for ever: a troll's network kept 2,880 more open reports a day, quoted
    lines and all, with no moderator closing them; and guests of other networks and accounts are not held."""
    made = 0
    while made < OPEN_PER_NETWORK:
        for n in range(REPORTS_PER_NETWORK):
            await store.reports.make(report(f"*G{made}x{n}", "10.1.0.0/24", f"*Nobody{made}x{n}"))
        made += REPORTS_PER_NETWORK
        await age_reports(store)

    with pytest.raises(TooManyReports):
        await store.reports.make(report("*Fresh", "10.1.0.0/24", "*Troll"))

    await store.reports.make(report("*Ala", "203.0.113.0/24", "*Troll"))  # another network's guest
    await store.reports.make(report("Ann", "10.1.0.0/24", "*Troll"))  # an account of the same network
    oldest = min(
        found.number for found in await store.reports.open_ones(500) if found.reporter.startswith("*G")
    )
    await store.reports.close(oldest, by="Mod", action="none", note="junk")
    await store.reports.make(report("*Fresh", "10.1.0.0/24", "*Troll"))  # one closed: room for one
