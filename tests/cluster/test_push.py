"""A push connection (/push) in a cluster, on a real Redis and PostgreSQL: it lands where nginx sends the
player's id, as a poll does, and a session another member serves is brought there first."""

from __future__ import annotations

from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.web.common import HUB_KEY
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
