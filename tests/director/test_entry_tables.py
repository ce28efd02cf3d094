"""The tables the server opens for its own tournaments seat guests too: a guest who entered many swiss
tournaments that start together played at one table for each (12 tables from one address whose guests may
hold 10). A guest's live entry now holds one of their address's and network's guest tables, from the
entry until the tournament is over, the entry withdrawn or the session ended (docs/operations.md, "Abuse
limits")."""

from __future__ import annotations

import dataclasses

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.hub.limits import GUEST_TABLES_PER_ADDRESS
from server.hub.sentences import CATALOGUE
from server.protocol.codec import encode_server_text
from server.web.common import HUB_KEY, STORE_KEY
from tests.clients.conversation import log_in, poll
from tests.clients.multipoints import MultiPoints
from tests.director.bots import GAME_TYPE, Bot, Time, organiser_creates, served_on, tick

ADDRESS = "203.0.113.5"
CUPS = GUEST_TABLES_PER_ADDRESS + 2


async def from_address(client: TestClient, address: str) -> TestClient:
    other = TestClient(client.server, headers={"X-Forwarded-For": address})
    await other.start_server()
    return other


def tables_of(client: TestClient, nick: str) -> int:
    """The open game tables with a seat of `nick`."""
    tables = client.app[HUB_KEY].tables.values()
    return sum(1 for table in tables if table.room is not None and table.room.seat_of(nick))


async def test_a_guests_entries_hold_no_more_tables_than_the_address_may(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    settings = dataclasses.replace(settings, trusted_proxies=("127.0.0.1",))  # 127.0.0.1 stays unlimited
    clock = Time()
    client = await served_on(aiohttp_client, settings, clock, 3)
    keys = [await client.app[STORE_KEY].tournaments.add_key(f"cups {n}", None, False) for n in (1, 2)]
    start = str(int(clock.clock()) + 10)
    for number in range(1, CUPS + 1):
        query = {"tourn": f"Cup {number}", "kind": "swiss", "rounds": "2", "start": start}
        assert await organiser_creates(client, keys[number % 2], **query) == "ok"  # 10 an organiser
    guest_client = await from_address(client, ADDRESS)
    try:
        ala = Bot(guest_client, MultiPoints("*Ala", "alapw"))
        opponent = Bot(client, MultiPoints("*Opp", "opppw"))  # from an --unlimited address
        bob = Bot(guest_client, MultiPoints("*Bob", "bobpw"))
        for bot in (ala, opponent, bob):
            await log_in(bot.client, bot.mp)
        answers = []
        for number in range(1, CUPS + 1):
            answers.append(await ala.ask("joinTournament", tourn=f"Cup {number}"))
            assert await opponent.ask("joinTournament", tourn=f"Cup {number}") == "ok"
        full = "err.tooManyTables"
        assert answers == ["ok"] * GUEST_TABLES_PER_ADDRESS + [full] * (CUPS - GUEST_TABLES_PER_ADDRESS)
        # the address's share is held by the entries: its other guests open no table meanwhile
        bob.mp.invite("*Opp", GAME_TYPE)
        await poll(bob.client, bob.mp)
        await poll(opponent.client, opponent.mp)
        opponent.mp.accept_invite()
        told = await poll(opponent.client, opponent.mp)
        assert encode_server_text(CATALOGUE["tooManyTables"]["ru"]) in told  # the players read Russian
        assert "vg*Bob" in told  # and the invitation stays, to be accepted once there is room
        await tick(client, clock.timers, 11)
        held = tables_of(client, "*Ala")
        print(f"tables of one guest of {ADDRESS} after the cups' start: {held}")
        assert held == GUEST_TABLES_PER_ADDRESS  # 12 before: one for each cup entered
        assert await ala.ask("leaveTournament", tourn="Cup 1") == "ok"
        assert await bob.ask("joinTournament", tourn="Cup 1") == "err.tooManyTables"  # her table is open
    finally:
        await guest_client.close()
