"""`kropki-server bot-play` (server/botplayer.py): the server's AI as an external bot, over real HTTP,
against a polling MultiPoints: it accepts what it plays, plays on its turn, and answers a proposition
as the AI players do (a draw when it is not behind)."""

from __future__ import annotations

import asyncio
import logging
import threading
import tracemalloc
from dataclasses import dataclass

import pytest
from aiohttp.test_utils import TestClient

from server.botplayer import ENDED_KEPT, AiBot, BotApi, Found
from server.cli import main
from server.hub.room import Room
from server.web.common import HUB_KEY, STORE_KEY
from tests.clients.conversation import log_in, poll
from tests.clients.multipoints import MultiPoints
from tests.web.test_bots import Feed, act, invited_bot, open_feed

FREE_GAME = "2020n0.0.a.F.a.180.15._SRATP_sratp."  # ServerZagram.getGameTypeString: the inviter is blue
TERRITORY_GAME = "2020t0.0.a.F.a.180.15._SRATP_sratp."
UNDO_GAME = "2020n0.0.a.F.a.180.15._SRAUTP_srautp."  # a move may be taken back (U)
GAME_FULL = {
    "type": "gameFull",
    "gameType": FREE_GAME,
    "width": 20,
    "height": 20,
    "blue": "*Ala",
    "red": "AiBot",
    "colour": "red",
    "setup": [],
    "moves": [],
}


async def test_the_ai_as_a_bot_accepts_plays_and_agrees_to_a_draw_when_not_behind(client: TestClient) -> None:
    token = await client.app[STORE_KEY].bots.create("AiBot")
    server = str(client.server.make_url("/")).rstrip("/")
    hub = client.app[HUB_KEY]
    playing = asyncio.create_task(asyncio.to_thread(AiBot(BotApi(server, token), 1, seed=1).run, 1))
    async with asyncio.timeout(10):
        while hub.roster.online("AiBot") is None:
            await asyncio.sleep(0.05)
    ala = MultiPoints("*Ala", "111111")
    await log_in(client, ala)
    ala.invite("AiBot", FREE_GAME)
    await poll(client, ala)
    async with asyncio.timeout(10):
        while not any(table.room is not None for table in hub.tables.values()):
            await asyncio.sleep(0.05)
    uid = max(uid for uid, table in hub.tables.items() if table.room is not None)
    room = hub.tables[uid].room
    assert room is not None and room.nick_of(2) == "AiBot"
    await poll(client, ala)
    ala.make_move(str(uid), 10, 10)
    await poll(client, ala)
    async with asyncio.timeout(10):
        while len(room.game.moves) < 2:
            await asyncio.sleep(0.05)
    ala.propose(str(uid), "draw")
    await poll(client, ala)
    async with asyncio.timeout(10):
        assert await playing == 1  # the game ended and was archived
    assert str(room.game.result) == "0"


def test_bot_play_wants_the_token_in_the_environment(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KROPKI_BOT_TOKEN", raising=False)
    assert main(["bot-play", "--server", "http://127.0.0.1:9"]) == 2
    assert "KROPKI_BOT_TOKEN" in capsys.readouterr().err


async def test_the_ai_as_a_bot_declines_an_invitation_to_rules_it_does_not_play(client: TestClient) -> None:
    """Before, bot-play accepted any unrated invitation, territory rules too, whose games it never plays
    (position_of): its opponent waited at a table where the bot never moved."""
    token = await client.app[STORE_KEY].bots.create("AiBot")
    feed = await open_feed(client, token)
    ala = MultiPoints("*Ala", "111111")
    await log_in(client, ala)
    ala.invite("AiBot", TERRITORY_GAME)
    await poll(client, ala)
    invitation = await feed.next("invitation")
    server = str(client.server.make_url("/")).rstrip("/")
    await asyncio.to_thread(AiBot(BotApi(server, token), 1, seed=1).take, invitation)
    await feed.next("invitationGone")
    assert not any(table.room is not None for table in client.app[HUB_KEY].tables.values())


def test_the_ai_as_a_bot_keeps_no_board_of_every_game_it_ever_played() -> None:
    """bot-play runs for ever (`--games 0`), and kept the moves of every game it played, and its archive
    number, for good: a bot playing its 60 games an hour of 200 moves each held 15 KB more a game, 640
    MB a month. A finished game's moves are left at its end; a few finished games are remembered for
    a `new` game at their table and to count a game said again by a feed opened again once."""
    bot = AiBot(BotApi("http://127.0.0.1:9", "token"), 1)  # these events call for no request
    tracemalloc.start()
    try:
        for table in range(1, 501):
            bot.take({**GAME_FULL, "table": table})
            for n in range(200):
                x, y = divmod(n, 19)
                bot.take({"type": "move", "table": table, "colour": ("blue", "red")[n % 2], "x": x, "y": y})
            bot.take({"type": "gameEnd", "table": table, "result": "W+R"})
            bot.take({"type": "archived", "table": table, "number": 1000 + table})
            if table == 100:
                kept = tracemalloc.get_traced_memory()[0]
        grown = tracemalloc.get_traced_memory()[0] - kept
    finally:
        tracemalloc.stop()
    bot.take({"type": "archived", "table": 500, "number": 1500})  # a feed opened again says it again
    assert bot.finished == 500
    assert len(bot.games) <= ENDED_KEPT
    assert grown < 40_000  # was 5.9 MB: 15 KB a game


async def undo_game_on_the_bots_move(client: TestClient) -> tuple[str, Feed, MultiPoints, int]:
    """Robo's token and feed (read up to its table's whole state), *Ala having played e6 at their game
    with take-backs, and the table."""
    token, feed, ala = await invited_bot(client, UNDO_GAME)
    await feed.next("invitation")
    await act(client, token, "invitation/accept")
    uid = (await feed.next("gameFull"))["table"]
    await poll(client, ala)
    ala.make_move(str(uid), 5, 5)
    await poll(client, ala)
    return token, feed, ala, uid


@dataclass
class Searching:
    """bot-play on move at *Ala's table (take-backs allowed), as its feed said it, with a search running
    (begun by the test, so that its steps are the test's to take in the order it chooses), and the
    move that search found."""

    feed: Feed
    ala: MultiPoints
    uid: int
    room: Room
    bot: AiBot
    searched: Found


async def searching(client: TestClient) -> Searching:
    token, feed, ala, uid = await undo_game_on_the_bots_move(client)
    room = client.app[HUB_KEY].tables[uid].room
    assert room is not None
    bot = AiBot(BotApi(str(client.server.make_url("/")).rstrip("/"), token), 1)
    bot.searching = threading.Thread(target=lambda: None)  # no other search is begun
    bot.searching.start()
    bot.take(next(event for event in feed.events if event["type"] == "gameFull"))
    bot.take(await feed.next("move"))  # *Ala's e6
    bot.take(await feed.next("clock", toMove="red"))
    searched = Found(uid, bot.games[uid].key(), bot.games[uid].board().index((10, 10)))
    return Searching(feed, ala, uid, room, bot, searched)


async def test_a_move_found_before_a_take_back_it_agreed_to_is_dropped_before_the_feed_shows_it(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    """bot-play agrees to a take-back at once, while it searches. Its search's move, for the position
    before, came back before the feed's `move` event of the take-back, and was sent: refused notYourTurn
    (a fresh-clone run on a loaded host). The steps in that order, on bot-play's own methods."""
    caplog.set_level(logging.INFO)
    at = await searching(client)
    feed, ala, uid, room, bot = at.feed, at.ala, at.uid, at.room, at.bot

    ala.propose(str(uid), "undo")
    await poll(client, ala)
    await asyncio.to_thread(bot.take, await feed.next("proposal"))  # agreed: e6 taken back
    assert len(room.game.moves) == 0
    await asyncio.to_thread(bot.found, at.searched)  # before the feed's take-back
    if bot.searching is not None:  # the search found() began next, for the game as the feed shows it
        bot.searching.join()

    assert len(room.game.moves) == 0
    assert "a move found for a position gone is dropped" in caplog.text
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING] == []


async def test_a_take_back_withdrawn_before_the_bot_agreed_leaves_its_search_s_move_to_be_played(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    """The server refuses the agreement (*Ala withdrew her take-back first): the game did not change,
    and no clock comes, so the move found for it is played."""
    caplog.set_level(logging.INFO)
    at = await searching(client)
    feed, ala, uid, room, bot = at.feed, at.ala, at.uid, at.room, at.bot

    ala.propose(str(uid), "undo")
    await poll(client, ala)
    proposal = await feed.next("proposal")
    ala.propose(str(uid), "cancel1undo")  # ServerZagram.cancelAskingUndo: roomId + "." + "cancel1undo"
    await poll(client, ala)
    await feed.next("proposalGone")
    await asyncio.to_thread(bot.take, proposal)  # answered late: refused
    await asyncio.to_thread(bot.found, at.searched)

    assert [move.player for move in room.game.moves] == [1, 2]  # e6, and its move
