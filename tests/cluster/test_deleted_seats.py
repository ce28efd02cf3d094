"""A game a deleted account left unfinished at one member of a cluster, and the stranger who registers its
nick on another (docs/operations.md, "Accounts (admins)"), on a real Redis and PostgreSQL: the
registering member used to release the seats of its own tables alone."""

from __future__ import annotations

import asyncio

from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.web.common import HUB_KEY, STORE_KEY
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import WITHIN, two_members
from tests.cluster.test_tables import invited_table
from tests.web.test_archive import pair
from tests.web.test_auth import register, registered_id
from tests.web.zagram import Zagram


async def test_whoever_registers_the_nick_on_another_member_takes_none_of_its_seats(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    alice, bob = await pair(a, "Alice", "Bob")
    uid = await invited_table(alice, bob)
    assert a.app[HUB_KEY].logout(bob.secret)  # the game waits for him at member a
    await a.app[STORE_KEY].writer.flush()
    await a.app[STORE_KEY].accounts.delete("Bob")

    assert await register(b, "Bob", password="mallory") == "ok.zarejestrowalem."
    mallory = Zagram(b, registered_id("Bob", "mallory"), "Bob")
    table = a.app[HUB_KEY].tables[uid]
    deadline = asyncio.get_running_loop().time() + WITHIN
    while "Bob" not in table.people:  # she comes to the table from member b: sat down, or watching
        assert asyncio.get_running_loop().time() < deadline, "the stranger never came to the table"
        await mallory.poll(b=True)
        await asyncio.sleep(0.05)

    assert table.seat_of(table.people["Bob"]) == 0
    await mallory.get(co="propose", idGracza=mallory.secret, table=str(uid), proposal="resign")
    await asyncio.sleep(0.5)
    await mallory.poll(b=True)
    assert table.room is not None and table.room.game.result is None
