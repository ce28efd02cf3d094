"""A push connection (/push) in a cluster, on a real Redis and PostgreSQL: it lands where nginx sends the
player's id, as a poll does, and a session another member serves is brought there first; one whose
session another member takes is told at once to connect again, without a login."""

from __future__ import annotations

import asyncio

from aiohttp import WSMsgType
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.web.common import HUB_KEY
from server.web.push import CONNECT_AGAIN
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import guest, two_members
from tests.cluster.test_tables import at_table, colours, has, invited_table
from tests.web.test_push import Pushed


async def test_a_push_connection_brings_the_session_and_plays_at_the_other_members_table(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    ala = await guest(a, "alaAla11", "*Ala")
    bob = await guest(a, "bobBob22", "*Bob")
    uid = await invited_table(ala, bob)  # member a's table
    ala_blue = colours(await at_table(ala, uid, has("pr")), uid, ala, bob)[0] is ala
    if not ala_blue:
        bob.send("s", uid, "aa")
        await bob.poll(b=True)
        await at_table(ala, uid, has("aa"))
    k = (await ala.poll(b=True)).processed

    # nginx now sends Ala's id to member b, and her browser pushes
    socket_ = await b.ws_connect(f"/push?co=getBMsg&idGracza={ala.secret}&msgNo={ala.seen}.1")
    try:
        push = Pushed(socket_)
        push.commands = list(ala.commands)
        first = await push.reply()
        assert first.status == "ok" and first.processed == k  # the same session, brought to b
        assert "*ala" not in a.app[HUB_KEY].by_nick and "*ala" in b.app[HUB_KEY].by_nick
        if not first.lines(uid, "pr"):  # member a's table comes to b's mirror as its owner sends it
            await push.until(lambda reply: bool(reply.lines(uid, "pr")))
        number = await push.send("s", uid, "ab")  # played at member a's table, from member b
        acknowledged = await push.until(lambda reply: reply.processed >= number)
        assert acknowledged.processed == number  # once member a stored it
        assert not [line for line in push.lines(uid) + push.lines(0) if "..e." in line], push.replies
        await at_table(bob, uid, has("ab"))
    finally:
        await socket_.close()


async def test_a_push_connection_whose_session_another_member_took_is_told_to_connect_again(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """It was sent `sd` and closed with 4003 (log in, then connect again), with the next news or
    keep-alive (up to 75 s later): a login for nothing, as the session went on on the other member. It
    now closes at once with 4004 and no frame, and the client connecting again with the same id and
    msgNo lands where nginx sends it, which has the session."""
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    ala = await guest(a, "alaAla11", "*Ala")
    k = (await ala.poll(b=True)).processed
    socket_ = await a.ws_connect(f"/push?co=getBMsg&idGracza={ala.secret}&msgNo={ala.seen}.1")
    try:
        push = Pushed(socket_)
        await push.reply()
        started = asyncio.get_running_loop().time()
        ala.client = b  # nginx now sends Ala's id to member b: her next request brings the session
        assert (await ala.poll(b=True)).status == "ok"
        closing = await socket_.receive(timeout=5)  # the next message: no `sd` frame before it
        assert (closing.type, closing.data) == (WSMsgType.CLOSE, CONNECT_AGAIN), closing
        assert asyncio.get_running_loop().time() - started < 5
    finally:
        await socket_.close()
    again = await b.ws_connect(f"/push?co=getBMsg&idGracza={ala.secret}&msgNo={ala.seen}.1")
    try:
        first = await Pushed(again).reply()
        assert first.status == "ok" and first.processed == k  # the same session
    finally:
        await again.close()
