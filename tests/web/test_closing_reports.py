"""Closing many reports at once (docs/moderation.md, "Closing many reports"), with the real app and the
real database: all the open reports against one player, all from one reporter, or a list of numbers,
each closed with the same trail a single closing leaves; a sanction made once; bad requests change
nothing."""

from __future__ import annotations

import json

from aiohttp.test_utils import TestClient
from sqlalchemy import select

from server.store.models import Report
from server.store.reports import NewReport
from server.web.closing import MOST_AT_ONCE
from server.web.common import STORE_KEY
from tests.web.test_moderation import moderate, moderator
from tests.web.test_reports import guest, report, reports
from tests.web.test_stream import chat_texts
from tests.web.zagram import Zagram


async def four_reports(client: TestClient) -> tuple[Zagram, Zagram, Zagram]:
    """A moderator, *Troll, and reports 1 to 3 against *Troll (by *Ala, *Bob, *Cid), 4 against *Bob by
    *Ala."""
    mod, troll = await moderator(client), await guest(client, "*Troll")
    ala, bob, cid = await guest(client, "*Ala"), await guest(client, "*Bob"), await guest(client, "*Cid")
    for number, by in enumerate((ala, bob, cid), 1):
        assert await report(by, whom="*Troll", reason=f"spam {number}") == f"ok.{number}"
    assert await report(ala, whom="*Bob", reason="rude") == "ok.4"
    return mod, troll, ala


async def open_numbers(mod: Zagram) -> list[int]:
    return sorted(found["number"] for found in await reports(mod))


async def test_every_open_report_against_a_player_is_closed_with_one_mute_and_a_log_line_each(
    client: TestClient,
) -> None:
    mod, troll, _ = await four_reports(client)
    closing = {"what": "closemany", "action": "mute", "reason": "spam", "note": "three of them"}
    assert await moderate(mod, **closing, against="*troll", **{"for": "1h"}) == "ok.3.0"
    assert await open_numbers(mod) == [4]
    troll.say(0, "MORE SPAM")
    told = [text for _, kind, text in chat_texts((await troll.poll()).lines(0)) if kind == "e"]
    assert told and told[-1].startswith("You are muted until 20") and "(spam)" in told[-1]

    boss = await moderator(client, "Boss", "admin")
    log = [line for line in json.loads(await moderate(boss, what="log"))["log"] if line["actor"] == "Mod"]
    assert [(line["action"], line["target"], line["detail"], line["reason"]) for line in log] == [
        ("mute", "*Troll", log[0]["detail"], "spam"),
        *[("report", "*Troll", f"report {n} (a player): mute", "three of them") for n in (1, 2, 3)],
    ]
    async with client.app[STORE_KEY].writer.sessions() as session:
        rows = (await session.scalars(select(Report).order_by(Report.id))).all()
    assert [(row.closed_by, row.action, row.note) for row in rows] == [
        *[("Mod", "mute", "three of them")] * 3,
        (None, None, None),
    ]
    assert await moderate(mod, **closing, against="*Troll") == "err.noSuchReport"


async def test_every_open_report_from_a_reporter_or_by_number_is_closed(client: TestClient) -> None:
    mod, _, _ = await four_reports(client)
    assert await moderate(mod, what="closemany", action="none", **{"from": "*ALA"}) == "ok.2.0"
    assert await open_numbers(mod) == [2, 3]
    assert await moderate(mod, what="closemany", action="none", reports="3,2,3") == "ok.2.0"
    assert await open_numbers(mod) == []


async def test_closing_many_bad_requests_are_refused_and_change_nothing(client: TestClient) -> None:
    mod, _, ala = await four_reports(client)
    other = await moderator(client, "Mod2")
    assert await moderate(other, what="close", report="2", action="none") == "ok"
    many = {"what": "closemany", "action": "none"}
    too_many = ",".join(str(number) for number in range(1, MOST_AT_ONCE + 2))

    assert await moderate(ala, **many, reports="1") == "err.notModerator"
    assert await moderate(mod, **many) == "err.missing.reports"
    assert await moderate(mod, **many, reports="1", against="*Troll") == "err.badCommand"
    assert await moderate(mod, **many, reports="1,x") == "err.badCommand"
    assert await moderate(mod, **many, reports="1,,3") == "err.badCommand"
    assert await moderate(mod, **many, reports="1,99,98") == "err.noSuchReport.99.98"
    assert await moderate(mod, **many, reports="1,2,3") == "err.noSuchReport.2"  # closed already
    assert await moderate(mod, **many, reports=too_many) == "err.tooManyAtOnce"
    assert await moderate(mod, what="closemany", action="delete", reports="1") == "err.badCommand"
    assert await moderate(mod, what="closemany", action="jail", reports="1") == "err.badCommand"
    assert await moderate(mod, **many, against="a.b") == "err.badNick"
    assert await moderate(mod, **many, against="*Nobody") == "err.noSuchReport"
    assert await moderate(mod, what="closemany", action="mute", reports="1,4") == "err.severalReported"
    assert await open_numbers(mod) == [1, 3, 4]
    boss = await moderator(client, "Boss", "admin")
    log = json.loads(await moderate(boss, what="log"))["log"]
    assert [line["detail"] for line in log if line["action"] == "report"] == ["report 2 (a player): none"]


async def test_a_moderator_cannot_close_many_reports_with_a_sanction_of_a_moderator(
    client: TestClient,
) -> None:
    mod, _ = await moderator(client), await moderator(client, "Mod2")
    ala, bob = await guest(client, "*Ala"), await guest(client, "*Bob")
    assert await report(ala, whom="Mod2", reason="rude") == "ok.1"
    assert await report(bob, whom="mod2", reason="rude") == "ok.2"
    assert await moderate(mod, what="closemany", action="ban", against="Mod2") == "err.cannotSanction"
    assert await open_numbers(mod) == [1, 2]
    assert await moderate(mod, what="closemany", action="none", against="Mod2") == "ok.2.0"


async def test_a_flood_of_reports_against_one_player_is_closed_a_bounded_number_at_a_time(
    client: TestClient,
) -> None:
    mod, reports_kept = await moderator(client), client.app[STORE_KEY].reports
    for number in range(MOST_AT_ONCE + 3):  # accounts' reports: no network's limits
        await reports_kept.make(NewReport(f"R{number}", f"r{number}", "", "*Troll", "", "", "", "spam", []))
    many = {"what": "closemany", "action": "none", "against": "*Troll"}
    assert await moderate(mod, **many) == f"ok.{MOST_AT_ONCE}.3"
    assert await open_numbers(mod) == [MOST_AT_ONCE + 1, MOST_AT_ONCE + 2, MOST_AT_ONCE + 3]
    assert await moderate(mod, **many) == "ok.3.0"
