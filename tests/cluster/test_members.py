"""Members of a cluster on one PostgreSQL database and one Redis: each holds the database's lock shared
(a server alone is kept out, and keeps them out), numbers its tables apart from the others', reads
back only what it owns after a restart, and says in /readyz how it stands with Redis."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.hub.numbers import TABLE_BLOCK
from server.store.serverlock import Holder, ServerLockError
from server.store.store import Store
from server.web.common import HUB_KEY, STORE_KEY
from tests.cluster.conftest import CLUSTER_SECRET, RedisServer
from tests.conftest import served
from tests.web.zagram import Zagram


def member(
    settings: Settings, redis: RedisServer, name: str, port: int, secret: str = CLUSTER_SECRET
) -> Settings:
    return dataclasses.replace(
        settings, redis_url=redis.url, member=name, port=port, cluster_secrets=(secret,)
    )


async def open_table(client: TestClient, blue: str, red: str) -> int:
    """Two guests on `client` play a game: the new table's number."""
    ala = Zagram(client, f"{blue.lower()}{blue}11", f"*{blue}")
    bob = Zagram(client, f"{red.lower()}{red}22", f"*{red}")
    for player in (ala, bob):
        assert await player.login() == ""
        await player.poll(b=True, msg_no="0.0")
    ala.send("v", 0, f"s.*{red}.0808stanF0.0.0")
    await ala.poll(b=True)
    bob.send("v", 0, "a")
    reply = await bob.poll(b=True)
    return next(table for table in reply.sections if table)


async def readiness(client: TestClient, until: Any, seconds: float = 8.0) -> dict[str, Any]:
    """/readyz, asked again until `until(answer)` or `seconds` pass (the heartbeat is 2 s)."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        response = await client.get("/readyz")
        assert response.status == 200
        answer = await response.json()
        if until(answer) or asyncio.get_running_loop().time() > deadline:
            return answer
        await asyncio.sleep(0.2)


async def test_members_share_the_database_and_number_their_tables_apart(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    first = await served(aiohttp_client, member(postgres, redis_server, "kropki-a", 8081))
    second = await served(aiohttp_client, member(postgres, redis_server, "kropki-b", 8082))
    numbers = {client.app[STORE_KEY].writer.member for client in (first, second)}
    assert len(numbers) == 2 and 0 not in numbers
    tables = [await open_table(first, "Ala", "Bob"), await open_table(second, "Cyd", "Dan")]
    assert abs(tables[0] - tables[1]) >= TABLE_BLOCK  # from blocks reserved one after the other
    assert tables[0] in first.app[HUB_KEY].tables and tables[0] not in second.app[HUB_KEY].tables

    answer = await readiness(first, lambda a: a["cluster"].get("members") == ["kropki-a", "kropki-b"])
    assert answer["status"] == "ready"
    assert answer["cluster"]["member"] == "kropki-a" and answer["cluster"]["redis"] == "connected"
    assert answer["cluster"]["members"] == ["kropki-a", "kropki-b"]


async def test_a_server_alone_and_members_keep_each_other_out(postgres: Settings) -> None:
    alone = await Store.open(postgres.db_url, serving=Holder.this_process(8080))
    try:
        with pytest.raises(ServerLockError, match="another kropki-server is serving this database"):
            await Store.open(postgres.db_url, serving=Holder.this_process(8081), member="kropki-a")
    finally:
        await alone.close()
    members = [
        await Store.open(postgres.db_url, serving=Holder.this_process(8081 + n), member=f"kropki-{n}")
        for n in range(2)
    ]
    try:
        with pytest.raises(ServerLockError, match="shared by the members of a cluster"):
            await Store.open(postgres.db_url, serving=Holder.this_process(8080))
    finally:
        for store in members:
            await store.close()


async def test_a_member_that_restarts_gets_back_its_own_tables_only(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    settings = member(postgres, redis_server, "kropki-a", 8081)
    first = await served(aiohttp_client, settings)
    second = await served(aiohttp_client, member(postgres, redis_server, "kropki-b", 8082))
    own, others = await open_table(first, "Ala", "Bob"), await open_table(second, "Cyd", "Dan")
    number = first.app[STORE_KEY].writer.member
    await first.close()

    again = await served(aiohttp_client, settings)
    assert again.app[STORE_KEY].writer.member == number  # the same name is the same member
    tables = again.app[HUB_KEY].tables
    assert own in tables and others not in tables
    assert {p.nick for p in again.app[HUB_KEY].players.values()} == {"*Ala", "*Bob"}
    assert others in second.app[HUB_KEY].tables
    newer = await open_table(again, "Eve", "Fay")
    assert newer not in (own, others)


async def test_readyz_says_when_redis_is_gone_and_when_it_is_back(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    client = await served(aiohttp_client, member(postgres, redis_server, "kropki-a", 8081))
    await readiness(client, lambda a: a["cluster"]["redis"] == "connected")
    redis_server.stop()
    answer = await readiness(client, lambda a: a["status"] == "degraded")
    assert answer["status"] == "degraded" and answer["cluster"]["redis"] == "unreachable"
    assert "serving this member's players only" in answer["reason"]
    redis_server.start()
    answer = await readiness(client, lambda a: a["status"] == "ready")
    assert answer["status"] == "ready" and answer["cluster"]["members"] == ["kropki-a"]
