"""`kropki-server bot-play` (server/botplayer.py) reads its feed while its engine searches: on a busy
server, whose lobby's seeks are lines of every bot's feed, a long search must not get the feed closed as
not read (server/web/botstreams.py), and a move found for a position that changed meanwhile is dropped.
Over real HTTP, the real app and database, bot-play's own threads."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import re
import threading
import time
from collections import deque
from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient

from server.botplayer import AiBot, BotApi
from server.engine import ai
from server.engine.board import Board
from server.hub import computer
from server.hub.model import Origin
from server.hub.room import Room
from server.protocol.codec import ProtocolError
from server.protocol.seeks import CancelSeek, PostSeek, parse_range
from server.web import botstreams
from server.web.bots import STREAMS_KEY
from server.web.common import HUB_KEY, STORE_KEY
from tests.clients.conversation import log_in, poll
from tests.clients.multipoints import MultiPoints
from tests.store.breakers import until

FREE_GAME = "2020n0.0.a.F.a.180.15._SRAUTP_srautp."  # *Ala blue, the bot red; 180 s, 15 s a move; undo
SEARCH_SECONDS = 8.0  # each of the bot's searches: far longer than the feed's patched SEND_TIMEOUT
GUESTS = 1500  # posting and cancelling seeks, each a line of the bot's feed
SEEK_LIVES = 0.5  # seconds
GAME_WAIT = 60.0
HELD_SEARCH_SECONDS = 0.1  # a held search, once let go: any move will do


@pytest.fixture
def impatient_feeds(monkeypatch: pytest.MonkeyPatch) -> None:
    """A feed not read for 1 s is closed (the server's is 10 s, its send buffer 64 KB): a busy server's
    feed behind a long search, made quick."""
    monkeypatch.setattr(botstreams, "SEND_TIMEOUT", 1.0)
    monkeypatch.setattr(botstreams, "SEND_BUFFER", 4096)


@pytest.fixture
def long_searches(monkeypatch: pytest.MonkeyPatch, impatient_feeds: None) -> None:
    """Level 1 searches for SEARCH_SECONDS (its playouts unbounded)."""
    monkeypatch.setitem(ai.LEVELS, 1, ai.Level("long", playouts=10**9, playout_depth=20))
    monkeypatch.setattr(computer, "MOST_SECONDS", SEARCH_SECONDS)


@pytest.fixture
def slow_searches(monkeypatch: pytest.MonkeyPatch, impatient_feeds: None) -> None:
    """Each of bot-play's searches waits SEARCH_SECONDS, then searches for a moment (any move will do).
    The wait spends no CPU, the lobby's churn keeps the server busy: two real searches of 8 s made the
    test cost 16 s of CPU, now 3.4. Bot-play before e273346 still fails it: the feed is closed as not
    read."""
    searched = ai.choose_move

    def choose_move(board: Board, colour: int, level: int, seconds: float, seed: int) -> tuple[int, int]:
        time.sleep(SEARCH_SECONDS)
        return searched(board, colour, level, HELD_SEARCH_SECONDS, seed)

    monkeypatch.setattr(ai, "choose_move", choose_move)


class HeldSearches:
    """bot-play's searches, each held (telling `waiting`) until the test lets it go, then a moment's
    search: what the test does meanwhile surely comes while a search runs. With searches of a fixed
    length, a loaded machine (the search's thread and the server share one process and its GIL) once
    delivered a proposal after the search had ended, and the move was played first."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.waiting = threading.Event()
        self.turns = threading.Semaphore(0)
        searched = ai.choose_move

        def choose_move(board: Board, colour: int, level: int, seconds: float, seed: int) -> tuple[int, int]:
            self.waiting.set()
            assert self.turns.acquire(timeout=GAME_WAIT)
            return searched(board, colour, level, HELD_SEARCH_SECONDS, seed)

        monkeypatch.setattr(ai, "choose_move", choose_move)

    def let_go(self) -> None:
        """The search waiting goes on; `waiting` tells of the next one."""
        self.waiting.clear()
        self.turns.release()


async def churn(client: TestClient, stop: asyncio.Event) -> None:
    """Guests posting seeks, each cancelled SEEK_LIVES later, until `stop`: the lobby of a busy server (a
    seek posted and cancelled between two reads of a feed is not listed)."""
    hub = client.app[HUB_KEY]
    secrets = [f"g{n:07d}" for n in range(GUESTS)]
    for n, secret in enumerate(secrets):
        hub.guest_login(secret, f"*G{n}", "en", Origin(f"10.1.{n // 250}.{n % 250}", True))
    open_seeks: deque[tuple[float, str, int]] = deque()
    turn = itertools.cycle(secrets)
    while not stop.is_set():
        for _ in range(20):
            secret = next(turn)
            with contextlib.suppress(ProtocolError):  # the lobby's or the guest's most seeks: the next
                number = hub.seek(secret, PostSeek(FREE_GAME, parse_range("", "")))
                if number is not None:
                    open_seeks.append((time.monotonic(), secret, number))
        while open_seeks and open_seeks[0][0] < time.monotonic() - SEEK_LIVES:
            _, owner, number = open_seeks.popleft()
            hub.seek(owner, CancelSeek(number))
        await asyncio.sleep(0.02)


async def feeds_not_read(client: TestClient) -> float:
    metrics = await (await client.get("/metrics")).text()
    found = re.search(r"^kropki_bot_feeds_not_read_total (\S+)$", metrics, re.M)
    assert found is not None, metrics
    return float(found[1])


@contextlib.asynccontextmanager
async def bot_game(client: TestClient) -> AsyncIterator[tuple[asyncio.Future[int], MultiPoints, int, Room]]:
    """bot-play (AiBot, level 1) playing one game as Robo, invited by *Ala: its run, *Ala, the table.
    bot-play is stopped at the end whatever happened (its token replaced ends its feed)."""
    token = await client.app[STORE_KEY].bots.create("Robo")
    server = str(client.server.make_url("/")).rstrip("/")
    hub = client.app[HUB_KEY]
    playing = asyncio.ensure_future(asyncio.to_thread(AiBot(BotApi(server, token), 1, seed=1).run, 1))
    try:
        await until(lambda: hub.roster.online("Robo") is not None)
        ala = MultiPoints("*Ala", "111111")
        await log_in(client, ala)
        ala.invite("Robo", FREE_GAME)
        await poll(client, ala)
        await until(lambda: any(table.room is not None for table in hub.tables.values()))
        uid = max(uid for uid, table in hub.tables.items() if table.room is not None)
        room = hub.tables[uid].room
        assert room is not None and room.nick_of(2) == "Robo"
        await poll(client, ala)
        yield playing, ala, uid, room
    finally:
        await client.app[STORE_KEY].bots.issue_token("Robo")
        async with asyncio.timeout(GAME_WAIT):
            await asyncio.wait([playing])


async def test_bot_play_reads_its_feed_while_it_searches_on_a_busy_server(
    client: TestClient, slow_searches: None, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, bot-play read its feed only between searches: while its engine searched, the lobby's
    seeks filled the feed's buffers, and the server closed the feed as not read, mid-game."""
    caplog.set_level(logging.INFO)
    async with bot_game(client) as (playing, ala, uid, room):
        stop = asyncio.Event()
        churning = asyncio.create_task(churn(client, stop))
        try:
            for n in range(2):
                ala.make_move(str(uid), 15, 15 + n)
                await poll(client, ala)
                await until(lambda n=n: len(room.game.moves) == 2 * n + 2, GAME_WAIT)  # type: ignore[misc]
        finally:
            stop.set()
            await churning
        assert [move.player for move in room.game.moves] == [1, 2, 1, 2]  # no move made twice
        assert await feeds_not_read(client) == 0.0
        ala.propose(str(uid), "resign")
        await poll(client, ala)
        async with asyncio.timeout(GAME_WAIT):
            assert await playing == 1
    assert str(room.game.result) == "W+R"  # Robo won: it never lost on time, nor stalled
    warned = [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]
    assert not warned


async def test_bot_play_plays_on_through_a_feed_opened_again_and_drops_a_move_for_a_position_gone(
    client: TestClient, long_searches: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """While bot-play searches, its feed ends (`stopping`) and is opened again: the move found is still
    for the game as the new feed's whole state shows it, and is played, once. While it searches again
    *Ala asks to take her move back: bot-play agrees at once (before, only after its search, and then
    played its move first), and drops the move found for the position gone."""
    held = HeldSearches(monkeypatch)
    caplog.set_level(logging.INFO)
    async with bot_game(client) as (playing, ala, uid, room):
        ala.make_move(str(uid), 3, 3)
        await poll(client, ala)
        await until(held.waiting.is_set, GAME_WAIT)  # bot-play searches
        client.app[STREAMS_KEY].end_all()  # as a server that stops does
        await until(lambda: caplog.text.count("bot stream opened") == 2, GAME_WAIT)
        assert "the feed opens again: stopping" in caplog.text
        held.let_go()
        await until(lambda: len(room.game.moves) == 2, GAME_WAIT)

        await poll(client, ala)
        ala.make_move(str(uid), 18, 3)
        await poll(client, ala)
        await until(held.waiting.is_set, GAME_WAIT)  # bot-play searches
        ala.propose(str(uid), "undo")
        await poll(client, ala)
        await until(lambda: len(room.game.moves) == 2, GAME_WAIT)  # agreed while it searched
        held.let_go()
        await until(lambda: "a move found for a position gone is dropped" in caplog.text, GAME_WAIT)
        await asyncio.sleep(0.5)
        assert len(room.game.moves) == 2

        await poll(client, ala)
        ala.make_move(str(uid), 3, 18)
        await poll(client, ala)
        await until(held.waiting.is_set, GAME_WAIT)
        held.let_go()
        await until(lambda: len(room.game.moves) == 4, GAME_WAIT)
        assert [move.player for move in room.game.moves] == [1, 2, 1, 2]
        ala.propose(str(uid), "resign")
        await poll(client, ala)
        async with asyncio.timeout(GAME_WAIT):
            assert await playing == 1
    assert str(room.game.result) == "W+R"
    warned = [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]
    assert not warned
