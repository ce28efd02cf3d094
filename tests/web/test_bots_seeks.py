"""Seeks and quick-pairing pools in the bot API (docs/bots.md), with the real app and database: the
feed lists the open seeks a bot may take, a bot posts, cancels and accepts seeks and waits in pools
with the stream commands' checks and refusal codes, and a rated game between a bot and a person is
found neither way (`botUnrated`)."""

from __future__ import annotations

import asyncio
import random

from aiohttp.test_utils import TestClient

from examples.random_bot import Api, play
from server.web.common import HUB_KEY, STORE_KEY
from tests.web.test_bots import act, new_bot, open_feed
from tests.web.test_ignoring import guests

FREE = "2020s0.4.a.F.a.180.2.."  # the seeker is blue
RATED = "2020s0.4.a.R.a.180.2.."


async def test_the_feed_lists_the_seeks_a_bot_may_take_and_the_bot_takes_one(client: TestClient) -> None:
    ala, bob = await guests(client, "*Ala", "*Bob")
    ala.send("k", 0, f"s...{FREE}")  # open before the feed starts
    ala.send("k", 0, f"s...{RATED}")  # rated, by a person: not for a bot
    await ala.poll()
    token = await new_bot(client, "Robo")
    feed = await open_feed(client, token)
    first = await feed.next("seek")
    assert first == {
        "type": "seek",
        "id": 1,
        "from": "*Ala",
        "gameType": FREE,
        "width": 20,
        "height": 20,
        "rated": False,
        "minRating": None,
        "maxRating": None,
    }
    bob.send("k", 0, f"s.1400..{FREE}")  # Robo is rated 1500: it may
    bob.send("k", 0, f"s.1600..{FREE}")  # above Robo's rating: not listed
    await bob.poll()
    assert (await feed.next("seek", id=3))["minRating"] == 1400
    bob.send("k", 0, "c.3")
    await bob.poll()
    await feed.next("seekGone", id=3)
    assert [event["id"] for event in feed.events if event["type"] == "seek"] == [1, 3]

    hub = client.app[HUB_KEY]
    assert await act(client, token, "seek/2/accept") == (
        400,
        {"error": "botUnrated", "message": "A bot and a person play unrated games only here."},
    )
    assert (await act(client, token, "seek/4/accept"))[1]["error"] == "notEligible"
    assert (await act(client, token, "seek/99/accept"))[1]["error"] == "noSuchSeek"
    assert (await act(client, token, "seek/x/accept"))[1]["error"] == "noSuchSeek"
    assert sorted(hub.seeks.open) == [1, 2, 4] and not any(table.room for table in hub.tables.values())

    assert await act(client, token, "seek/1/accept") == (200, {"ok": True})
    full = await feed.next("gameFull")
    assert (full["blue"], full["red"], full["colour"]) == ("*Ala", "Robo", "red")
    assert {"type": "seekGone", "id": 1} in feed.events  # before the game, in the lobby's order
    assert (await ala.poll()).sections.keys() == {0, full["table"]}


async def test_a_bots_seek_is_posted_taken_by_a_person_and_cancelled_with_every_refusal(
    client: TestClient,
) -> None:
    ala, oli = await guests(client, "*Ala", "*Oli")
    token = await new_bot(client, "Robo")
    feed = await open_feed(client, token)
    hub = client.app[HUB_KEY]
    for fields, code in [
        ({}, "badRequest"),
        ({"gameType": "2020"}, "badGameType"),
        ({"gameType": "2020s0.4.a.A.a.180.2.."}, "badGameType"),
        ({"gameType": FREE, "minRating": "1800", "maxRating": "1200"}, "badRange"),
        ({"gameType": FREE, "minRating": "x"}, "badRange"),
    ]:
        status, body = await act(client, token, "seek", **fields)
        assert (status, body["error"]) == (400, code), fields
    assert hub.seeks.open == {}

    assert await act(client, token, "seek", gameType=FREE) == (200, {"ok": True, "id": 1})
    assert await act(client, token, "seek", gameType=RATED, maxRating="1700") == (200, {"ok": True, "id": 2})
    assert (await feed.next("seek", id=1))["from"] == "Robo"  # its own are listed too
    # listed before it goes: one posted and gone between two reads of the feed is never listed (a busy
    # host's feed read both at once, and the test waited for a seekGone that could not come)
    await feed.next("seek", id=2)
    assert (await act(client, token, "seek/1/accept"))[1]["error"] == "notEligible"
    assert await act(client, token, "seek/2/cancel") == (200, {"ok": True})
    await feed.next("seekGone", id=2)
    assert (await act(client, token, "seek/2/cancel"))[1]["error"] == "noSuchSeek"
    await act(client, token, "seek", gameType=FREE)
    await act(client, token, "seek", gameType=FREE)
    assert (await act(client, token, "seek", gameType=FREE))[1]["error"] == "tooManySeeks"
    assert sorted(hub.seeks.open) == [1, 3, 4]

    oli.send("k", 0, f"s...{FREE}")
    await oli.poll()
    assert (await act(client, token, "seek/5/cancel"))[1]["error"] == "noSuchSeek"  # not the bot's
    assert 5 in hub.seeks.open

    ala.send("k", 0, "a.1")
    await ala.poll()
    full = await feed.next("gameFull")
    assert (full["blue"], full["red"], full["colour"]) == ("Robo", "*Ala", "blue")
    assert list(hub.seeks.open) == [5]  # a game ends its player's seeks: each listed is said gone
    listed = {event["id"] for event in feed.events if event["type"] == "seek"} - {5}  # *Oli's is open
    while listed != {event["id"] for event in feed.events if event["type"] == "seekGone"}:
        await feed.next("seekGone")
    assert {1, 2} <= listed <= {1, 2, 3, 4}  # 3 and 4 if the feed read them before the game began


async def test_a_pool_pairs_two_bots_and_never_a_bot_with_a_person(client: TestClient) -> None:
    [ala] = await guests(client, "*Ala")
    robo, zed = await new_bot(client, "Robo"), await new_bot(client, "Zed")
    robo_feed, zed_feed = await open_feed(client, robo), await open_feed(client, zed)
    hub = client.app[HUB_KEY]
    assert (await act(client, robo, "pool/9x9/join"))[1]["error"] == "noSuchPool"
    assert hub.pools.waiting == {}

    ala.send("j", 0, "20x20_3_2")
    await ala.poll()
    assert await act(client, robo, "pool/20x20_3_2/join") == (200, {"ok": True})
    await robo_feed.next("poolWaiting", pool="20x20_3_2")
    await asyncio.sleep(2.5)  # two sweeps: the gap grows, but a bot is paired with bots only
    assert len(hub.pools.waiting) == 2 and not any(table.room for table in hub.tables.values())
    assert await act(client, robo, "pool/leave") == (200, {"ok": True})
    await robo_feed.next("poolLeft", pool="20x20_3_2")

    assert await act(client, zed, "pool/25x25_5_5/join") == (200, {"ok": True})
    assert await act(client, robo, "pool/25x25_5_5/join") == (200, {"ok": True})
    full = await robo_feed.next("gameFull")
    assert {full["blue"], full["red"]} == {"Robo", "Zed"} and full["gameType"] == "2525s0.4.s.R.a.300.5.."
    assert (await zed_feed.next("gameFull"))["table"] == full["table"]
    await zed_feed.next("poolLeft", pool="25x25_5_5")
    assert list(hub.pools.waiting) == [hub.players[ala.secret]]


async def test_two_example_bots_meet_through_a_seek_and_play_it_to_the_end(client: TestClient) -> None:
    """examples/random_bot.py over real HTTP: one posts a seek (`--seek`), the other finds it in its
    feed and accepts it, and both play the game to its end and archive."""
    server = str(client.server.make_url("/")).rstrip("/")
    seeker, taker = await new_bot(client, "Seeker"), await new_bot(client, "Taker")
    hub = client.app[HUB_KEY]
    taking = asyncio.create_task(asyncio.to_thread(play, Api(server, taker), 1, None, random.Random(3)))
    async with asyncio.timeout(10):
        while hub.roster.online("Taker") is None:
            await asyncio.sleep(0.05)
    seeking = asyncio.to_thread(play, Api(server, seeker), 1, None, random.Random(4), True)
    async with asyncio.timeout(120):
        assert await seeking == 1
        assert await taking == 1
    [game] = await client.app[STORE_KEY].games.recent("Seeker", 5)
    assert {game.blue, game.red} == {"Seeker", "Taker"} and game.result
    assert hub.seeks.open == {}
