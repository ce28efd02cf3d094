"""A bot in a cluster, on a real Redis and PostgreSQL: marked in the other member's lobby, invited by a
person of that member, and playing the game across the two members through its feed; its session
taken by the other member, when its requests reach that one, and its feed told to open again there."""

from __future__ import annotations

import asyncio

from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.web.common import HUB_KEY, STORE_KEY
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import ala_and_cyd, guest, two_members, until
from tests.cluster.test_tables import at_table, set_up
from tests.web.test_bots import EVENT_WAIT, RATED_GAME, act, open_feed

FREE_GAME = "2020n0.0.a.F.a.180.15._SRATP_sratp."  # the inviter is blue


async def test_a_bot_on_one_member_plays_a_person_of_another(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    token = await a.app[STORE_KEY].bots.create("Robo")
    feed = await open_feed(a, token)
    cyd = await guest(b, "cydCyd33", "*Cyd")
    seen = [*cyd.first]  # type: ignore[attr-defined]
    if not any(line.startswith("iRobo.") for line in seen):
        seen += await until(cyd, lambda lines: any(line.startswith("iRobo.") for line in lines))
    info = next(line for line in seen if line.startswith("iRobo."))
    assert info.split(".")[2] == "FR"  # the mark crosses the cluster with the lobby's lines

    cyd.send("v", 0, f"s.Robo.{RATED_GAME}")  # refused: Robo's `i` line marks a bot
    await until(cyd, lambda lines: any("unrated" in line for line in lines))
    cyd.send("v", 0, f"s.Robo.{FREE_GAME}")
    await cyd.poll(b=True)
    await feed.next("invitation", **{"from": "*Cyd"})
    assert await act(a, token, "invitation/accept") == (200, {"ok": True})
    full = await feed.next("gameFull")
    uid = full["table"]
    assert (full["blue"], full["red"], full["colour"]) == ("*Cyd", "Robo", "red")
    cyd.send("s", uid, "ee")
    await cyd.poll(b=True)
    await feed.next("move", colour="blue", x=4, y=4)
    assert await act(a, token, f"game/{uid}/move/9/9") == (200, {"ok": True})
    await at_table(cyd, uid, lambda lines: any(line.startswith("sa;W[jj]") for line in lines))


async def test_a_bots_rated_invitation_to_a_person_of_another_member_is_refused_either_way(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """Either member refuses a rated game between a bot and a person with `botUnrated`, as one member
    does: each knows whether the other's player is a bot by the `R` flag of its `i` line."""
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    token = await a.app[STORE_KEY].bots.create("Robo")
    await open_feed(a, token)
    cyd = await guest(b, "cydCyd33", "*Cyd")
    ala = await guest(a, "alaAla11", "*Ala")  # once she sees Cyd, member a has b's `i` line of him
    await until(ala, lambda lines: any(line.startswith("i*Cyd.") for line in [*ala.first, *lines]))  # type: ignore[attr-defined]

    status, body = await act(a, token, "invite/*Cyd", gameType=RATED_GAME)
    assert (status, body["error"]) == (400, "botUnrated")
    cyd.send("v", 0, f"s.Robo.{RATED_GAME}")  # refused at once by his own member: Robo is marked
    refused = await cyd.poll(b=True)
    assert any(".e." in line and "unrated" in line for line in refused.sections.get(0, [])), refused.sections
    assert not any(line[:2] in ("vg", "vs") for line in refused.sections.get(0, []))

    assert await act(a, token, "invite/*Cyd", gameType=FREE_GAME) == (200, {"ok": True})
    await until(cyd, lambda lines: any(line.startswith("vgRobo.") for line in lines))


async def test_a_bot_whose_action_reaches_the_other_member_is_told_to_open_its_feed_there(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """The feed stays open on the member it reached; an action that reaches the other member takes the
    session there (members added or removed behind nginx). The feed said nothing for up to 20 s, then
    logged the session in again and took it back, to lose it again at the next action: it now ends at
    once with `moved`, and the feed opened again follows the game from the other member."""
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    token = await a.app[STORE_KEY].bots.create("Robo")
    feed = await open_feed(a, token)
    cyd = await guest(b, "cydCyd33", "*Cyd")
    await until(cyd, lambda lines: any(line.startswith("iRobo.") for line in [*cyd.first, *lines]))  # type: ignore[attr-defined]
    cyd.send("v", 0, f"s.Robo.{FREE_GAME}")
    await cyd.poll(b=True)
    await feed.next("invitation", **{"from": "*Cyd"})
    assert await act(a, token, "invitation/accept") == (200, {"ok": True})
    uid = (await feed.next("gameFull"))["table"]
    cyd.send("s", uid, "ee")
    await cyd.poll(b=True)
    await feed.next("move", colour="blue", x=4, y=4)

    started = asyncio.get_running_loop().time()
    assert await act(b, token, f"game/{uid}/move/9/9") == (200, {"ok": True})  # the session comes to b
    moved = await feed.next("error")
    assert moved["code"] == "moved" and asyncio.get_running_loop().time() - started < EVENT_WAIT / 2
    async with asyncio.timeout(EVENT_WAIT):
        assert await feed.response.content.read() == b""  # and nothing more

    again = await open_feed(b, token)
    full = await again.next("gameFull", table=uid)  # the game as it stands, the bot's move in it
    assert [(move["x"], move["y"]) for move in full["moves"]] == [(4, 4), (9, 9)]
    cyd.send("s", uid, "ef")
    await cyd.poll(b=True)
    await again.next("move", colour="blue", x=4, y=5)
    assert await act(b, token, f"game/{uid}/move/9/10") == (200, {"ok": True})
    await at_table(cyd, uid, lambda lines: any(line.startswith("sa;W[jk]") for line in lines))
    assert "robo" in b.app[HUB_KEY].roster.by_nick and "robo" not in a.app[HUB_KEY].roster.by_nick


async def test_an_action_at_a_table_of_the_other_member_is_answered_as_that_member_did_it(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """A bot's action, or an old-style zagram request, at another member's table was answered as soon
    as it was sent there: a refused move got `200 ok` (or "" from graczStawiaKropke), and the bot,
    which learns of a point inside a realm from its `illegalMove`, waited for a turn that never came.
    Now the answer is the owner's: done once it stored it, or its refusal."""
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    token = await a.app[STORE_KEY].bots.create("Robo")
    feed = await open_feed(b, token)  # Robo's session on member b
    await until(ala, lambda lines: any(line.startswith("iRobo.") for line in lines))
    uid = await set_up(a, "Robo", "*Ala")  # the table on member a, Robo blue
    await feed.next("gameFull", table=uid)
    owner = a.app[HUB_KEY].tables[uid].room
    assert owner is not None

    assert await act(b, token, f"game/{uid}/move/4/4") == (200, {"ok": True})
    assert [move.point for move in owner.game.moves] == [(4, 4)]  # done there before the answer
    status, body = await act(b, token, f"game/{uid}/move/5/5")  # not its turn
    assert (status, body["error"]) == (400, "notYourTurn") and "not your move" in body["message"]
    ala.send("s", uid, "hh")
    await ala.poll(b=True)
    await feed.next("move", colour="red", x=7, y=7)
    status, body = await act(b, token, f"game/{uid}/move/4/4")
    assert (status, body["error"]) == (400, "illegalMove")
    assert [move.point for move in owner.game.moves] == [(4, 4), (7, 7)]

    uid = await set_up(a, "*Cyd", "*Ala", "second-cup-bot")  # zagram's old-style requests, from b
    await at_table(cyd, uid, lambda lines: any(line.startswith("pr") and "*Cyd" in line for line in lines))
    assert await cyd.get(co="graczStawiaKropke", idGracza=cyd.secret, table=str(uid), where="aa") == ""
    answer = await cyd.get(co="graczStawiaKropke", idGracza=cyd.secret, table=str(uid), where="bb")
    assert answer == "err.notYourTurn"  # its second move in a row


async def test_a_replaced_token_ends_the_bot_s_feed_on_the_other_member_at_once(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """The token is replaced through the store (`kropki-server bot token`, on any machine): each member
    ends its own feeds of it. Before, a feed asked once every 20 s after a poll, up to 40 s."""
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    token = await a.app[STORE_KEY].bots.create("Robo")
    feed = await open_feed(b, token)
    await a.app[STORE_KEY].bots.issue_token("Robo")
    assert (await feed.next("error"))["code"] == "badToken"
