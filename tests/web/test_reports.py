"""Reports over the protocol (docs/moderation.md, "Reports"), with the real app and the real database:
a player reports a lobby line, a private line or a player; the report keeps the lines around it; the
limits; moderators list the open reports and close one with an action; the log; a kicked player is told
why, as MultiPoints shows it."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.store.reports import REPORTS_PER_PLAYER, REPORTS_PER_PLAYER_A_DAY
from server.web.common import HUB_KEY, STORE_KEY
from tests.clients.conversation import log_in, poll
from tests.clients.multipoints import MultiPoints
from tests.conftest import served
from tests.store.test_reports_a_day import a_window_later
from tests.web.test_moderation import (
    ELSEWHERE,
    TROLL_HOME,
    TROLL_NEIGHBOUR,
    from_address,
    moderate,
    moderator,
    troll_online,
)
from tests.web.test_stream import chat_texts
from tests.web.zagram import Zagram


async def guest(client: TestClient, nick: str, lang: str = "en") -> Zagram:
    player = Zagram(client, f"{nick.strip('*').lower()}123", nick)
    assert await player.login(lang) == ""
    await player.poll()
    return player


def line_ids(lines: list[str], text: str) -> list[str]:
    """The ids (time_n) of the `ca`/`cr` lines that say `text`."""
    return [line[2:].split(".")[0] for line in lines if line.endswith(f".{text}")]


async def report(by: Zagram, **params: str) -> str:
    return await by.get(co="report", idGracza=by.secret, **params)


async def reports(mod: Zagram) -> list[dict[str, Any]]:
    return json.loads(await moderate(mod, what="reports"))["reports"]


async def test_a_reported_lobby_line_keeps_the_lines_around_it_and_a_mute_closes_it(
    client: TestClient,
) -> None:
    mod = await moderator(client)
    ala, troll = await guest(client, "*Ala"), await guest(client, "*Troll")
    for number in range(12):
        troll.say(0, f"BUY CHEAP GOLD {number}")
        await troll.poll()  # one a poll: the chat limit counts lines a minute, not polls
    lines = (await ala.poll()).lines(0)
    (reported,) = line_ids(lines, "BUY CHEAP GOLD 6")

    answer = await report(ala, line=f"0.{reported}", reason="spam: gold sellers")
    assert answer.startswith("ok.") and answer[3:].isdigit()
    for number in range(12, 16):  # the lobby moves on: the report keeps what was around the line
        troll.say(0, f"BUY CHEAP GOLD {number}")
        await troll.poll()

    (found,) = await reports(mod)
    assert (found["reporter"], found["reported"], found["place"], found["line"]) == (
        "*Ala",
        "*Troll",
        "0",
        reported,
    )
    assert found["reason"] == "spam: gold sellers"
    assert [line["text"] for line in found["lines"]] == [f"BUY CHEAP GOLD {n}" for n in range(1, 12)]
    assert [line["text"] for line in found["lines"] if line["reported"]] == ["BUY CHEAP GOLD 6"]
    assert {line["nick"] for line in found["lines"]} == {"*Troll"}

    closed = await moderate(
        mod,
        what="close",
        report=str(found["number"]),
        action="mute",
        reason="spam",
        note="gold",
        **{"for": "1h"},
    )
    assert closed == "ok"
    assert await reports(mod) == []
    troll.say(0, "BUY MORE GOLD")
    told = [text for _, kind, text in chat_texts((await troll.poll()).lines(0)) if kind == "e"]
    assert told and told[-1].startswith("You are muted until 20") and "(spam)" in told[-1]
    assert "BUY MORE GOLD" not in str((await ala.poll()).sections)

    assert await moderate(mod, what="log") == "err.notAdmin"
    boss = await moderator(client, "Boss", "admin")
    log = json.loads(await moderate(boss, what="log"))["log"]
    closing = [line for line in log if line["actor"] == "Mod"]
    assert [(line["action"], line["target"], line["reason"]) for line in closing] == [
        ("mute", "*Troll", "spam"),
        ("report", "*Troll", "gold"),
    ]
    assert closing[-1]["detail"] == f"report {found['number']} (lobby): mute"
    assert await moderate(mod, what="close", report=str(found["number"]), action="none") == "err.noSuchReport"


async def test_a_private_line_is_reported_by_the_one_it_was_sent_to(client: TestClient) -> None:
    mod = await moderator(client)
    ala, troll = await guest(client, "*Ala"), await guest(client, "*Troll")
    ala.say("_*Troll", "hello")
    await ala.poll()
    troll.say("_*Ala", "you will regret it")
    await troll.poll()
    (said,) = line_ids((await ala.poll()).lines(0), "you will regret it")

    assert await report(ala, line=f"_*Troll.{said}", reason="threats") == "ok.1"
    assert await report(troll, line=f"_*Ala.{said}", reason="mine") == "err.cannotReport"  # its own line
    (found,) = await reports(mod)
    assert found["place"] == "_*Troll"
    assert [(line["nick"], line["text"], line["reported"]) for line in found["lines"]] == [
        ("*Ala", "hello", False),
        ("*Troll", "you will regret it", True),
    ]
    # a private line cannot be deleted: the report is closed otherwise
    closing = {"what": "close", "report": "1"}
    assert await moderate(mod, **closing, action="delete") == "err.cannotDelete"
    assert await moderate(mod, **closing, action="kick", reason="threats") == "ok"
    assert "troll123" not in client.app[HUB_KEY].players


async def test_a_player_is_reported_with_their_last_lines_and_a_line_deleted_on_closing(
    client: TestClient,
) -> None:
    mod = await moderator(client)
    ala, bob, troll = await guest(client, "*Ala"), await guest(client, "*Bob"), await guest(client, "*Troll")
    troll.say(0, "first insult")
    await troll.poll()
    bob.say(0, "calm down")
    await bob.poll()
    troll.say(0, "second insult")
    await troll.poll()
    assert await report(ala, whom="*Troll", reason="insults") == "ok.1"
    (found,) = await reports(mod)
    assert (found["place"], found["line"]) == ("", "")
    assert [line["text"] for line in found["lines"]] == ["first insult", "second insult"]

    (insult,) = line_ids((await ala.poll()).lines(0), "second insult")
    assert await report(bob, line=f"0.{insult}", reason="insults") == "ok.2"
    assert await moderate(mod, what="close", report="2", action="delete", note="removed") == "ok"
    assert f"cd{insult}" in (await ala.poll()).lines(0)
    assert await moderate(mod, what="close", report="1", action="none", note="dealt with in 2") == "ok"
    assert await reports(mod) == []


async def test_a_guest_reported_under_its_nick_in_another_case_is_banned_with_its_network(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client, mod, troll = await troll_online(aiohttp_client, settings)
    ala = await guest(client, "*Ala")
    await troll.poll()
    assert await report(ala, whom="*troll", reason="spam") == "ok.1"

    await client.app[STORE_KEY].writer.flush()  # the ban reads the guest's network from its session's row
    assert await moderate(mod, what="close", report="1", action="ban", **{"for": "1d"}) == "ok"
    assert "troll1" not in client.app[HUB_KEY].players
    fresh = from_address(client, "troll2", "*Guest4711", TROLL_NEIGHBOUR)
    assert (await fresh.login()).startswith("err.banned.")


async def test_a_reports_ban_covers_the_reported_guests_network_not_the_next_holder_of_the_nick(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client, mod, troll = await troll_online(aiohttp_client, settings)
    ala = await guest(client, "*Ala")
    troll.say(0, "BUY GOLD")
    await troll.poll()
    (gold,) = line_ids((await ala.poll()).lines(0), "BUY GOLD")
    await client.app[STORE_KEY].writer.flush()  # the guest's network is read from its session's row
    assert await report(ala, line=f"0.{gold}", reason="spam") == "ok.1"
    assert await troll.get(co="usunGracza", playerId=troll.secret) == ""
    stranger = from_address(client, "strang1", "*Troll", ELSEWHERE)  # the nick is free: anyone takes it
    assert await stranger.login() == ""
    await client.app[STORE_KEY].writer.flush()

    assert await moderate(mod, what="close", report="1", action="ban", **{"for": "1d"}) == "ok"
    assert await from_address(client, "bystand1", "*Bystander", ELSEWHERE).login() == ""
    fresh = from_address(client, "troll2", "*Guest4711", TROLL_NEIGHBOUR)
    assert (await fresh.login()).startswith("err.banned.")


async def test_a_reports_ban_of_a_guest_not_online_when_reported_bans_the_nick_alone(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await served(aiohttp_client, dataclasses.replace(settings, trusted_proxies=("127.0.0.1",)))
    mod, ala = await moderator(client), await guest(client, "*Ala")
    assert await report(ala, whom="*Ghost", reason="cheated me yesterday") == "ok.1"
    holder = from_address(client, "ghost1", "*Ghost", TROLL_HOME)  # whoever takes the nick later
    assert await holder.login() == ""
    await client.app[STORE_KEY].writer.flush()

    assert await moderate(mod, what="close", report="1", action="ban", **{"for": "1d"}) == "ok"
    assert (await from_address(client, "ghost2", "*Gh0st", ELSEWHERE).login()).startswith("err.banned.")
    assert await from_address(client, "neigh1", "*Neighbour", TROLL_NEIGHBOUR).login() == ""


async def test_reports_that_are_refused_change_nothing(client: TestClient) -> None:
    mod = await moderator(client)
    ala, troll = await guest(client, "*Ala"), await guest(client, "*Troll")
    troll.say(0, "spam")
    await troll.poll()
    (spam,) = line_ids((await ala.poll()).lines(0), "spam")
    stranger = Zagram(client, "nobody1", "*Nobody")

    assert await report(stranger, line=f"0.{spam}", reason="spam") == "err.notLoggedIn"
    assert await report(ala, line=f"0.{spam}") == "err.missing.reason"
    assert await report(ala, line=f"0.{spam}", reason="x" * 301) == "err.tooLong"
    assert await report(ala, line="0.1_0", reason="spam") == "err.noSuchLine"
    assert await report(ala, line=f"17.{spam}", reason="spam") == "err.noSuchLine"  # not at table 17
    assert await report(ala, line=f"_*Troll.{spam}", reason="spam") == "err.noSuchLine"
    assert await report(ala, reason="spam") == "err.missing.whom"
    assert await report(ala, whom="*Ala", reason="me") == "err.cannotReport"
    assert await report(ala, whom="AI easy", reason="too strong") == "err.cannotReport"
    assert await report(ala, whom="a.b", reason="spam") == "err.badNick"
    assert await reports(mod) == []

    assert await report(ala, line=f"0.{spam}", reason="spam") == "ok.1"
    assert await report(ala, line=f"0.{spam}", reason="spam again") == "err.alreadyReported"
    for number in range(REPORTS_PER_PLAYER - 1):
        assert await report(ala, whom=f"*Other{number}", reason="spam") == f"ok.{number + 2}"
    assert await report(ala, whom="*Another", reason="spam") == "err.tooManyReports"
    assert len(await reports(mod)) == REPORTS_PER_PLAYER

    closing = {"what": "close", "report": "1"}
    assert await moderate(ala, **closing, action="none") == "err.notModerator"
    assert await moderate(mod, **closing, action="jail") == "err.badCommand"
    assert await moderate(mod, what="close", action="none") == "err.missing.report"
    assert await moderate(mod, what="close", report="99", action="none") == "err.noSuchReport"
    assert await moderate(ala, what="reports") == "err.notModerator"
    assert len(await reports(mod)) == REPORTS_PER_PLAYER  # none closed


async def test_a_moderator_cannot_close_a_report_with_a_sanction_of_a_moderator(client: TestClient) -> None:
    mod, other = await moderator(client), await moderator(client, "Mod2")
    ala = await guest(client, "*Ala")
    other.say(0, "rude words")
    await other.poll()
    (rude,) = line_ids((await ala.poll()).lines(0), "rude words")
    assert await report(ala, line=f"0.{rude}", reason="insults") == "ok.1"
    assert await moderate(mod, what="close", report="1", action="ban") == "err.cannotSanction"
    assert len(await reports(mod)) == 1  # still open
    assert await moderate(mod, what="close", report="1", action="none", note="banter") == "ok"


async def test_reports_and_sanctions_are_read_after_a_restart(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await served(aiohttp_client, settings)
    mod = await moderator(client)
    ala, troll = await guest(client, "*Ala"), await guest(client, "*Troll")
    troll.say(0, "BUY GOLD")
    await troll.poll()
    (gold,) = line_ids((await ala.poll()).lines(0), "BUY GOLD")
    assert await report(ala, line=f"0.{gold}", reason="spam") == "ok.1"
    assert await moderate(mod, what="ban", whom="*Troll", reason="gold", **{"for": "1d"}) == "ok"
    await client.close()

    client = await served(aiohttp_client, settings)
    mod = await moderator(client, "Mod2")
    (found,) = await reports(mod)
    assert [line["text"] for line in found["lines"]] == ["BUY GOLD"]
    (ban,) = json.loads(await moderate(mod, what="sanctions"))["sanctions"]
    assert (ban["kind"], ban["target"], ban["reason"], ban["by"]) == ("ban", "*Troll", "gold", "Mod")
    assert ban["until"].endswith("Z")


async def test_a_kicked_multipoints_player_is_shown_why_in_its_lobby_chat(client: TestClient) -> None:
    """MultiPoints (ServerZagram.handleText) reads an `ok...end` reply line by line, and its `ca` branch
    shows a line whose nick has no `-` in the lobby's chat: `else if (currentRoom.equals("0"))
    gui.chatReceived(this, "0", nick, chatMessage)`. An `sd` reply it takes as an error and stops
    ("error handling server response, exiting"): so the ended session's next poll gets the line first."""
    mod = await moderator(client)
    troll = MultiPoints("*Troll", "777123")
    await log_in(client, troll)  # MultiPoints logs in with lang=ru
    await poll(client, troll)
    assert await moderate(mod, what="kick", whom="*Troll", reason="flood") == "ok"
    await poll(client, troll)
    told = [text for nick, text in troll.lobby_chat if nick == ""]
    assert told == ["Модератор завершил ваш сеанс (flood)."]
    assert not troll.failures and not troll.disposed
    await poll(client, troll)  # then the ended session's answer, which stops it, as before
    assert troll.disposed


async def test_the_i_line_says_a_moderators_and_an_admins_powers(client: TestClient) -> None:
    await moderator(client)
    await moderator(client, "Boss", "admin")
    ala = await guest(client, "*Ala")
    infos = {line[1:].split(".")[0]: line for line in (await ala.poll(msg_no="0")).lines(0, "i")}
    assert infos["Mod"].endswith(".P2x1c3") and infos["Boss"].endswith(".P3x2c3")
    assert infos["*Ala"] == "i*Ala..F.en"


@pytest.mark.parametrize(
    "line",
    [".", "0.", ".1_0", "_.1_0", "__.x", "0..", "abc.def", "99999999999999999999.1_0", "-1.1_0", "_@S.1_0"],
)
async def test_a_line_named_oddly_is_no_line_and_nothing_is_kept(client: TestClient, line: str) -> None:
    mod = await moderator(client)
    ala = await guest(client, "*Ala")
    assert await report(ala, line=line, reason="spam") == "err.noSuchLine"
    assert await reports(mod) == []


async def test_a_day_of_reports_is_bounded_and_the_refusal_says_so(client: TestClient) -> None:
    """Each report is kept for good with its quoted lines (12 KB at most): the 10 minutes' limits alone let
    a player make 720 a day; the day's bound answers with its own code."""
    ala = await guest(client, "*Ala")
    store = client.app[STORE_KEY]
    for number in range(REPORTS_PER_PLAYER_A_DAY):
        assert await report(ala, whom=f"*Other{number}", reason="spam") == f"ok.{number + 1}"
        await a_window_later(store)
    assert await report(ala, whom="*Another", reason="spam") == "err.reportsToday"
    assert len(await store.reports.open_ones()) == REPORTS_PER_PLAYER_A_DAY
