"""Sanctions and reports across two members on a real Redis and PostgreSQL: a moderator on one member
bans and mutes players served by the other, which applies them from the shared database within seconds;
a report made on one member is read and closed on the other."""

from __future__ import annotations

import asyncio
import dataclasses

from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.web.common import HUB_KEY
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import WITHIN, guest, said, two_members, until
from tests.cluster.test_tables import at_table, has, invited_table
from tests.web.test_auth import auth_from
from tests.web.test_moderation import ANN, TROLL_HOME, moderate, moderator
from tests.web.test_reports import line_ids, report, reports
from tests.web.test_stream import chat_texts
from tests.web.zagram import Zagram


async def test_a_ban_and_a_mute_made_on_one_member_hold_on_the_other(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    mod = await moderator(a)
    await guest(b, "trolTro11", "*Troll")
    loud = await guest(b, "loudLou22", "*Loud")

    assert await moderate(mod, what="mute", whom="*Loud", reason="caps", **{"for": "1h"}) == "ok"
    told = await until(loud, lambda lines: any(kind == "e" for _, kind, _ in chat_texts(lines)))
    assert [text for _, kind, text in chat_texts(told) if kind == "e"][0].startswith("You are muted until")
    loud.say(0, "HELLO")
    refused = chat_texts((await loud.poll(b=True)).lines(0))
    assert [
        text.endswith("(caps): your lines are not sent.") for _, kind, text in refused if kind == "e"
    ] == [True]

    # *Troll's network is loopback's, as every test client's: the ban keeps every guest out of it
    assert await moderate(mod, what="ban", whom="*Troll", reason="spam", **{"for": "1d"}) == "ok"
    deadline = asyncio.get_running_loop().time() + WITHIN
    while "trolTro11" in b.app[HUB_KEY].players:
        assert asyncio.get_running_loop().time() < deadline, "the ban did not reach member b"
        await asyncio.sleep(0.1)
    again = Zagram(b, "trolTro22", "*Guest4711")  # a fresh id and nick from the same network
    assert (await again.login()).startswith("err.banned.")
    assert (await Zagram(a, "trolTro33", "*Spammer").login()).startswith("err.banned.")  # on a too
    assert mod.secret in a.app[HUB_KEY].players  # an account is not a guest of the network


async def test_a_report_made_on_one_member_is_read_and_closed_on_the_other(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """The line was written on member b and reached a through Redis: the report made on a quotes a's copy
    of it; b's moderator reads the report and closes it by deleting the line, which is b's."""
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    mod = await moderator(b)
    troll = await guest(b, "trolTro11", "*Troll")
    ala = await guest(a, "alaAla11", "*Ala")
    troll.say(0, "BUY GOLD")
    await troll.poll(b=True)
    (gold,) = line_ids(await until(ala, said("BUY GOLD")), "BUY GOLD")

    assert await report(ala, line=f"0.{gold}", reason="spam") == "ok.1"
    (found,) = await reports(mod)
    assert (found["reporter"], found["reported"]) == ("*Ala", "*Troll")
    assert [(line["nick"], line["text"], line["reported"]) for line in found["lines"]] == [
        ("*Troll", "BUY GOLD", True)
    ]
    assert await moderate(mod, what="close", report="1", action="delete", note="gold") == "ok"
    await until(ala, lambda lines: f"cd{gold}" in lines)
    assert await reports(mod) == []


async def test_a_player_muted_by_address_is_refused_at_a_table_of_the_other_member(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """The table's member knows Ann's stand-in by her nick alone: her own member checks her mute."""
    settings = dataclasses.replace(postgres, trusted_proxies=("127.0.0.1",))
    a, b = await two_members(aiohttp_client, settings, redis_server)
    mod = await moderator(a)
    dan, eve = await guest(a, "danDan44", "*Dan"), await guest(a, "eveEve55", "*Eve")
    uid = await invited_table(dan, eve)
    await at_table(dan, uid, has("pr"))
    answer = await auth_from(b, TROLL_HOME, co="rejestruj", opisGracza="Ann", idGracza=ANN)
    assert answer == "ok.zarejestrowalem."  # and logged in
    ann = Zagram(b, ANN, "Ann")
    ann.headers = {"X-Forwarded-For": TROLL_HOME}
    await until(ann, lambda lines: any(line.startswith(f"d{uid}.") for line in lines))  # b knows the table
    ann.send("b", uid)
    await at_table(ann, uid, has("pr"))

    assert await moderate(mod, what="mute", whom=TROLL_HOME, reason="spam", **{"for": "1h"}) == "ok"
    await until(ann, lambda lines: any(kind == "e" for _, kind, _ in chat_texts(lines)))
    ann.say(uid, "TABLE LINE")
    told = await at_table(ann, uid, has("You are muted until"))
    eve.say(uid, "after it")
    await eve.poll(b=True)
    heard = await at_table(dan, uid, has("after it"))
    assert not [line for line in heard + told if "TABLE LINE" in line]


async def test_a_lobby_line_said_in_the_same_second_on_two_members_has_an_id_of_its_own(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """Each member numbered its lobby lines within a second by itself: *Troll's line of member b and *Bob's
    of member a, said in the same second, were both `<second>_0`, so that *Ala's report of the troll's
    line on member a quoted Bob's as the reported one (a moderator closing it muted Bob), and a `cd` of
    one took the other off the screens. A member hearing another's lobby line numbers its own after it."""
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    second = float(int(a.app[HUB_KEY].ctx.clock()))
    for client in (a, b):  # the same second on both, however long the test takes
        client.app[HUB_KEY].ctx.clock = lambda: second
    mod = await moderator(b)
    troll = await guest(b, "trolTro11", "*Troll")
    ala = await guest(a, "alaAla11", "*Ala")
    bob = await guest(a, "bobBob22", "*Bob")
    troll.say(0, "BUY GOLD")
    await troll.poll(b=True)
    (gold,) = line_ids(await until(ala, said("BUY GOLD")), "BUY GOLD")
    bob.say(0, "hello all")
    await bob.poll(b=True)
    (hello,) = line_ids(await until(ala, said("hello all")), "hello all")
    assert hello != gold

    assert await report(ala, line=f"0.{gold}", reason="spam") == "ok.1"
    (found,) = await reports(mod)
    assert found["reported"] == "*Troll"
    assert [(line["nick"], line["reported"]) for line in found["lines"]] == [
        ("*Troll", True),
        ("*Bob", False),
    ]
