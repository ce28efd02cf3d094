"""The clock as an engine reads it through the bot API's feed (docs/bots.md): the grace before its clock
runs (a tournament's sayHi, a restart's), over real HTTP against the real app and database."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.engine.gametype import parse_game_type
from server.web.common import HUB_KEY
from tests.clients.conversation import log_in, poll
from tests.clients.multipoints import MultiPoints
from tests.conftest import served
from tests.web.test_bots import FREE_GAME, act, invited_bot, new_bot, open_feed


async def test_the_feed_s_clock_says_the_say_hi_grace_before_the_bot_s_clock_runs(client: TestClient) -> None:
    """The `f` line carries `.g<s>` while the side on move has a grace before its clock runs. Before,
    the feed's clock left it out: an engine at a tournament table read 180 s left and thought its clock
    ran during the 60 s of sayHi it had first, and timed its first move by the wrong figure."""
    token = await new_bot(client, "Robo")
    feed = await open_feed(client, token)
    ala = MultiPoints("*Ala", "111111")
    await log_in(client, ala)
    uid = client.app[HUB_KEY].set_up_table(
        parse_game_type(FREE_GAME), "Robo", "*Ala", (60, 45), "Cup", "1", {}
    )
    await feed.next("gameFull", table=uid)
    clock = await feed.next("clock", table=uid)
    assert (clock["toMove"], clock["blue"], clock["red"]) == ("blue", 180, 180)
    assert 59 <= clock["grace"] <= 60  # Robo's sayHi, spent before its clock

    assert await act(client, token, f"game/{uid}/move/3/3") == (200, {"ok": True})
    clock = await feed.next("clock", table=uid, toMove="red")
    assert 44 <= clock["grace"] <= 45  # *Ala's sayHi now
    await poll(client, ala)
    ala.make_move(str(uid), 10, 10)
    await poll(client, ala)
    clock = await feed.next("clock", table=uid, toMove="blue")
    assert clock["grace"] == 0  # sayHi is for the first move only


async def test_the_feed_s_clock_says_the_grace_after_a_restart(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """After a restart the player on move has 60 s before their clock runs again (docs/protocol.md,
    "After a restart"): the feed opened again says so in its clock."""
    client = await served(aiohttp_client, settings)
    token, feed, ala = await invited_bot(client)
    await feed.next("invitation")
    await act(client, token, "invitation/accept")
    table = (await feed.next("gameFull"))["table"]
    await poll(client, ala)
    ala.make_move(str(table), 5, 5)
    await poll(client, ala)
    assert (await feed.next("clock", table=table, toMove="red"))["grace"] == 0
    feed.response.close()
    await client.close()

    client = await served(aiohttp_client, settings)
    feed = await open_feed(client, token)
    await feed.next("gameFull", table=table)
    clock = await feed.next("clock", table=table)
    assert clock["toMove"] == "red" and 59 <= clock["grace"] <= 60
