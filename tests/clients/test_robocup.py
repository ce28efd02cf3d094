"""roboCup (vn971/roboCup), the organisers' bot, against the real app: it sets up tournament tables
with its default settings and reads the results from the anonymous stream as FromZagram.scala does."""

from __future__ import annotations

import random

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.app import STORE_KEY
from server.config import Settings
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from tests.clients.conversation import read
from tests.clients.robocup import RoboCupReader, game_settings, set_up_table_query
from tests.conftest import served
from tests.web.zagram import Zagram

TOURNAMENT = "robocup autumn"  # FromZagram marks a game as the tournament's when its `d` line holds "robocup"


class Organiser:
    def __init__(self, client: TestClient, hub: Hub, key: str) -> None:
        self.client, self.hub, self.key = client, hub, key
        self.reader = RoboCupReader()

    async def assign(self, first: str, second: str, game_type: str, round_: int = 1) -> str:
        query = set_up_table_query(self.key, first, second, game_type, TOURNAMENT, round_)
        response = await self.client.get("/a.kropki", params=query)
        return await response.text()

    async def read(self) -> None:
        await read(self.client, self.reader)


@pytest.fixture
async def organiser(aiohttp_client: AiohttpClient, settings: Settings) -> Organiser:
    hub = Hub(timers=ManualTimers(), rng=random.Random(11))
    client = await served(aiohttp_client, settings, hub)
    key = await client.app[STORE_KEY].tournaments.add_key("robocup", TOURNAMENT, False)
    return Organiser(client, hub, key)


async def seated(client: TestClient, secret: str, nick: str) -> Zagram:
    player = Zagram(client, secret, nick)
    assert await player.login() == ""
    await player.poll()
    return player


async def test_a_tournament_game_with_roboCups_defaults_and_its_result_read_once(
    organiser: Organiser,
) -> None:
    await organiser.read()
    ala = await seated(organiser.client, "ala123", "*Ala")
    bob = await seated(organiser.client, "bob456", "*Bob")
    answer = await organiser.assign("*Ala", "*Bob", game_settings())  # crossesCount=2, 25x25, 5 min + 5 s
    assert answer.startswith("ok."), answer
    uid = int(answer.split(".")[1])
    room = organiser.hub.tables[uid].room
    assert room is not None and (room.blue, room.red) == ("*Ala", "*Bob")
    assert len(room.game.setup.black) == len(room.game.setup.white) == 4, "two crosses"
    await organiser.read()
    for player, where in [(ala, "aa"), (bob, "yy"), (ala, "ab")]:
        player.send("s", uid, where)
        await player.poll()
        await organiser.read()
    bob.send("u", uid, "resign")
    await bob.poll()
    for _ in range(3):  # the archive is written in the background: read until it is surely announced
        await organiser.hub.persistence.flush()
        await organiser.read()
    assert organiser.reader.results == [("won", "*Ala", "*Bob")]
    assert organiser.reader.warnings == []


async def test_each_result_once_over_a_round_of_tables(organiser: Organiser) -> None:
    players = {
        nick: await seated(organiser.client, f"id{n}", nick) for n, nick in enumerate("*A *B *C *D".split())
    }
    await organiser.read()
    tables = [
        int((await organiser.assign(first, second, game_settings(crosses=1))).split(".")[1])
        for first, second in [("*A", "*B"), ("*C", "*D")]
    ]
    await organiser.read()
    players["*A"].send("s", tables[0], "aa")
    await players["*A"].poll()
    players["*B"].send("u", tables[0], "resign")
    await players["*B"].poll()
    players["*C"].send("s", tables[1], "aa")
    await players["*C"].poll()
    players["*D"].send("s", tables[1], "bb")
    await players["*D"].poll()
    players["*C"].send("u", tables[1], "resign")
    await players["*C"].poll()
    for _ in range(3):
        await organiser.hub.persistence.flush()
        await organiser.read()
    assert sorted(organiser.reader.results) == [("won", "*A", "*B"), ("won", "*D", "*C")]


async def test_the_first_lobby_line_of_a_quiet_server_reaches_the_reader_as_new(organiser: Organiser) -> None:
    """roboCup registers players who write `!register` in the lobby; it reads only `ca` lines."""
    await organiser.read()
    await organiser.read()
    ala = await seated(organiser.client, "ala123", "*Ala")
    ala.say(0, "!register")
    await ala.poll()
    await organiser.read()
    assert organiser.reader.registrations == ["*Ala"]
