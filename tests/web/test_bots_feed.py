"""The bot API's feed as an engine reads it (docs/bots.md): the grace before its clock runs (a
tournament's sayHi, a restart's), and a feed opened again; over real HTTP, the real app and database."""

from __future__ import annotations

import asyncio
import functools
import gc
import random
import time
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

import examples.random_bot
from examples.random_bot import Api, Game, Memory, play
from server.botplayer import AiBot, BotApi
from server.config import Settings
from server.engine.gametype import parse_game_type
from server.web.bots import STREAMS_KEY
from server.web.clients import LIMITS_KEY, WHOLE_STATES_PER_ID
from server.web.common import HUB_KEY
from server.web.limits import TokenBuckets
from tests.clients.conversation import log_in, poll
from tests.clients.multipoints import MultiPoints
from tests.conftest import served
from tests.web.test_bots import EVENT_WAIT, FREE_GAME, Feed, act, at_a_game, new_bot, open_feed


async def robo_on_side_3_and_a_draw_proposed(
    client: TestClient,
) -> tuple[str, Feed, MultiPoints, MultiPoints, int]:
    """A team table set up with *Ala and Robo against *Bob and *Dan (Robo side 3), *Ala having proposed a
    draw: Robo's token and feed (read up to its gameFull), *Ala, *Bob, the table."""
    token = await new_bot(client, "Robo")
    feed = await open_feed(client, token)
    ala, bob = MultiPoints("*Ala", "111111"), MultiPoints("*Bob", "222222")
    for mp in (ala, bob):
        await log_in(client, mp)
    uid = client.app[HUB_KEY].set_up_table(
        parse_game_type(FREE_GAME), "*Ala", "*Bob", (0,) * 4, None, None, {}, more=["Robo", "*Dan"]
    )
    await feed.next("gameFull", table=uid)
    await poll(client, ala)
    ala.propose(str(uid), "draw")
    await poll(client, ala)
    return token, feed, ala, bob, uid


def counting_down(grace: int, seconds: int, began: float) -> bool:
    """Whether `grace`, whole seconds, is what is left of `seconds` begun no sooner than `began`: the
    time since then, not a fixed second. A loaded machine once took two seconds between a table's set-up
    and its clock line, and the feed said 58 of 60, rightly."""
    return seconds - (time.monotonic() - began) - 1 <= grace <= seconds


async def test_the_feed_s_clock_says_the_say_hi_grace_before_the_bot_s_clock_runs(client: TestClient) -> None:
    """The `f` line carries `.g<s>` while the side on move has a grace before its clock runs. Before,
    the feed's clock left it out: an engine at a tournament table read 180 s left and thought its clock
    ran during the 60 s of sayHi it had first, and timed its first move by the wrong figure."""
    token = await new_bot(client, "Robo")
    feed = await open_feed(client, token)
    ala = MultiPoints("*Ala", "111111")
    await log_in(client, ala)
    began = time.monotonic()
    uid = client.app[HUB_KEY].set_up_table(
        parse_game_type(FREE_GAME), "Robo", "*Ala", (60, 45), "Cup", "1", {}
    )
    await feed.next("gameFull", table=uid)
    clock = await feed.next("clock", table=uid)
    assert (clock["toMove"], clock["blue"], clock["red"]) == ("blue", 180, 180)
    assert counting_down(clock["grace"], 60, began)  # Robo's sayHi, spent before its clock

    began = time.monotonic()
    assert await act(client, token, f"game/{uid}/move/3/3") == (200, {"ok": True})
    clock = await feed.next("clock", table=uid, toMove="red")
    assert counting_down(clock["grace"], 45, began)  # *Ala's sayHi now
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
    token, feed, ala, full = await at_a_game(client)
    table = full["table"]
    assert (await feed.next("clock", table=table, toMove="red"))["grace"] == 0
    feed.response.close()
    await client.close()

    began = time.monotonic()
    client = await served(aiohttp_client, settings)
    feed = await open_feed(client, token)
    await feed.next("gameFull", table=table)
    clock = await feed.next("clock", table=table)
    assert clock["toMove"] == "red" and counting_down(clock["grace"], 60, began)


async def _game_resigned_by_ala(
    client: TestClient, ala: MultiPoints, after: int, playing: asyncio.Future[int]
) -> int | None:
    """*Ala's invitation of Robo, accepted by the bot, one move each, then *Ala resigns: the table, or
    None when the bot (`playing`) stopped before it took the invitation."""
    hub = client.app[HUB_KEY]
    ala.invite("Robo", FREE_GAME)
    await poll(client, ala)
    async with asyncio.timeout(EVENT_WAIT):
        while not any(uid > after and table.room is not None for uid, table in hub.tables.items()):
            if playing.done():
                return None
            await asyncio.sleep(0.05)
    uid = max(uid for uid, table in hub.tables.items() if table.room is not None)
    room = hub.tables[uid].room
    assert room is not None
    await poll(client, ala)
    ala.make_move(str(uid), 5, 5)
    await poll(client, ala)
    async with asyncio.timeout(EVENT_WAIT):
        while len(room.game.moves) < 2:
            await asyncio.sleep(0.05)
    ala.propose(str(uid), "resign")
    await poll(client, ala)
    async with asyncio.timeout(EVENT_WAIT):
        while room.archive_number is None:
            await asyncio.sleep(0.05)
    return uid


@pytest.mark.parametrize("bot", ["example", "bot-play"])
async def test_a_game_archived_before_the_feed_opened_again_is_counted_once(
    client: TestClient, bot: str
) -> None:
    """A feed opened again (a restart's `stopping`, a cluster's `moved`, a broken connection) starts with
    the whole state of every table the bot sits at, a finished game's with its `archived` too. Before,
    both bots counted it again: `--games 2` stopped after one game and a restart."""
    token = await new_bot(client, "Robo")
    server = str(client.server.make_url("/")).rstrip("/")
    if bot == "example":
        run = functools.partial(play, Api(server, token), 2, None, random.Random(3))
    else:
        run = functools.partial(AiBot(BotApi(server, token), 1, seed=3).run, 2)
    playing = asyncio.create_task(asyncio.to_thread(run))
    ala = await ala_once_robo_is_online(client)
    first = await _game_resigned_by_ala(client, ala, 0, playing)
    assert first is not None

    client.app[STREAMS_KEY].end_all()  # as the server does when it stops: the bots open the feed again
    client.app[LIMITS_KEY].whole_states_per_id = TokenBuckets(*WHOLE_STATES_PER_ID)
    second = await _game_resigned_by_ala(client, ala, first, playing)
    async with asyncio.timeout(EVENT_WAIT):
        played = await playing
    archived = [uid for uid in (first, second) if uid is not None]
    assert played == len(archived) == 2


async def ala_once_robo_is_online(client: TestClient) -> MultiPoints:
    """*Ala logged in, once the bot Robo, started in a thread, has logged in."""
    async with asyncio.timeout(EVENT_WAIT):
        while client.app[HUB_KEY].roster.online("Robo") is None:
            await asyncio.sleep(0.05)
    ala = MultiPoints("*Ala", "111111")
    await log_in(client, ala)
    return ala


def boards_kept() -> int:
    return sum(isinstance(kept, Game) for kept in gc.get_objects())


async def test_the_example_forgets_a_finished_game_s_board_and_all_but_its_latest_archive_numbers(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, the example kept the board of every game it played and every archive number it saw, for
    as long as it ran: a bot left playing grew without end. A board goes at its game's end, and only the
    latest ENDED_KEPT archive numbers stay (to count once a finished game a feed opened again says)."""
    monkeypatch.setattr(examples.random_bot, "ENDED_KEPT", 1)
    token = await new_bot(client, "Robo")
    hub = client.app[HUB_KEY]
    memory = Memory()
    server = str(client.server.make_url("/")).rstrip("/")
    playing = asyncio.create_task(
        asyncio.to_thread(play, Api(server, token), 2, None, random.Random(3), memory=memory)
    )
    ala = await ala_once_robo_is_online(client)
    first = await _game_resigned_by_ala(client, ala, 0, playing)
    assert first is not None
    async with asyncio.timeout(EVENT_WAIT):
        while boards_kept():  # the finished game's board, let go while the bot plays on
            await asyncio.sleep(0.05)
    second = await _game_resigned_by_ala(client, ala, first, playing)
    assert second is not None
    async with asyncio.timeout(EVENT_WAIT):
        assert await playing == 2
    second_number = hub.tables[second].room.archive_number  # type: ignore[union-attr]
    assert memory.boards == {} and memory.archived == {second: second_number}


async def test_at_a_team_table_a_proposition_is_told_once_not_again_at_each_agreement(
    client: TestClient,
) -> None:
    """docs/teams.md: a proposition waits for every other player, and the table's `u` line lists who
    agreed so far. Before, the feed told the proposition again at each agreement (as if a new one came),
    and an engine answering each proposition it is told answered it again."""
    token, feed, ala, bob, uid = await robo_on_side_3_and_a_draw_proposed(client)
    proposal = await feed.next("proposal", table=uid)
    assert await act(client, token, f"game/{uid}/answer/draw/accept") == (200, {"ok": True})
    await feed.next("chat", table=uid, code="agree1draw")
    await poll(client, bob)
    bob.propose(str(uid), "ok1draw")
    await poll(client, bob)
    await feed.next(
        "chat", table=uid, code="agree1draw", text="*Bob agreed to end the game in a draw; waiting for *Dan."
    )
    assert [event for event in feed.events if event["type"] == "proposal"] == [proposal]


NOT_FOUND_PAGE = "<html><head><title>404 Not Found</title></head><body><h1>404 Not Found</h1></body></html>"


@pytest.mark.parametrize("bot_api", [Api, BotApi], ids=["example", "bot-play"])
@pytest.mark.parametrize("status", [404, 200])
async def test_a_server_address_that_answers_no_feed_ends_the_bots_with_a_sentence_not_a_traceback(
    aiohttp_server: Any, bot_api: type[Api] | type[BotApi], status: int
) -> None:
    """An engine author's first mistake: `--server` naming a web server that is not the bot API (a path
    prefix, another site: its 404 page, or a page for every address). Before, both bots died with a
    JSONDecodeError (the example, and bot-play) on the page's HTML."""

    async def page(request: web.Request) -> web.Response:
        return web.Response(status=status, text=NOT_FOUND_PAGE, content_type="text/html")

    site = web.Application()
    site.router.add_get("/api/bot/stream", page)
    server = await aiohttp_server(site)
    events = bot_api(str(server.make_url("/")), "token").events()
    async with asyncio.timeout(EVENT_WAIT):
        ended = await asyncio.to_thread(list, events)
    assert len(ended) == 1 and ended[0]["type"] == "error" and ended[0]["code"] == "notAFeed"
    assert f"HTTP {status}" in ended[0]["message"]
