"""Members of a cluster on one PostgreSQL database and one Redis: each holds the database's lock shared
(a server alone is kept out, and keeps them out), numbers its tables apart from the others', reads
back only what it owns after a restart, and says in /readyz how it stands with Redis. A member whose
lock connection is lost takes its locks back, so that no other member takes the tables of a member
that is alive even when Redis (just restarted, say) does not show it alive."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from datetime import UTC, datetime
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient
from sqlalchemy.engine import make_url

from server.config import Settings
from server.hub.numbers import TABLE_BLOCK
from server.store.idhash import MIN_COST
from server.store.serverlock import MEMBER_LOCK_CLASS, Holder, ServerLockError
from server.store.store import Store
from server.web.common import HUB_KEY, STORE_KEY
from tests.cluster.conftest import CLUSTER_SECRET, RedisServer
from tests.conftest import POSTGRES, served
from tests.store.test_server_lock import (
    TAKEN_BACK_WITHIN,
    end_backend,
    held_again,
    lock_connection,
    lock_taken_by,
    logged,
    sql,
    unready,
)
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
    alone = await Store.open(postgres.db_url, serving=Holder.this_process(8080), id_hash_cost=MIN_COST)
    try:
        with pytest.raises(ServerLockError, match="another kropki-server is serving this database"):
            await Store.open(
                postgres.db_url, serving=Holder.this_process(8081), member="kropki-a", id_hash_cost=MIN_COST
            )
    finally:
        await alone.close()
    members = [
        await Store.open(
            postgres.db_url,
            serving=Holder.this_process(8081 + n),
            member=f"kropki-{n}",
            id_hash_cost=MIN_COST,
        )
        for n in range(2)
    ]
    try:
        with pytest.raises(ServerLockError, match="shared by the members of a cluster"):
            await Store.open(postgres.db_url, serving=Holder.this_process(8080), id_hash_cost=MIN_COST)
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


async def owner_of(url: str, uid: int) -> str:
    [(name,)] = await sql(
        url, "SELECT m.name FROM tables AS t JOIN members AS m ON m.id = t.owner WHERE t.uid = :uid", uid=uid
    )
    return str(name)


async def test_a_member_whose_lock_connection_is_ended_takes_its_locks_back_and_keeps_its_tables(
    aiohttp_client: AiohttpClient,
    postgres: Settings,
    redis_server: RedisServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = postgres.db_url
    first = await served(aiohttp_client, member(postgres, redis_server, "kropki-a", 8081))
    second = await served(aiohttp_client, member(postgres, redis_server, "kropki-b", 8082))
    table = await open_table(first, "Ala", "Bob")
    number, holder = first.app[STORE_KEY].writer.member, Holder.this_process(8081)
    backend, locks = await lock_connection(url, holder)
    assert locks == {"database ShareLock", f"member {number} ExclusiveLock"}

    await end_backend(url, backend)  # as a PostgreSQL restart ends every connection
    seconds = await held_again(url, holder, backend, locks)
    # Just after a Redis restart every member sees only itself alive for a heartbeat: the lock, not
    # Redis, tells a member that is alive from one that is dead.
    assert await second.app[STORE_KEY].writer.take_orphans(("kropki-b",)) == ({}, True)
    assert await owner_of(url, table) == "kropki-a" and table in first.app[HUB_KEY].tables
    assert seconds < TAKEN_BACK_WITHIN
    [lost] = logged(caplog, "database lock lost (connection lost)")
    assert (
        "other members may take this member's tables and sessions over if it also seems dead in Redis"
        in lost.getMessage()
    )
    [back] = logged(caplog, "database lock held again ")
    assert back.getMessage().endswith(
        "other members cannot take this member's tables and sessions over while it lives"
    )


async def test_readyz_says_when_a_members_lock_is_lost_and_when_it_is_back(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """PostgreSQL refusing new connections (as while it starts, or at its connection limit) when the
    lock's connection ends: the member goes on serving, degraded, and takes its locks back once it can."""
    url = postgres.db_url
    first = await served(aiohttp_client, member(postgres, redis_server, "kropki-a", 8081))
    second = await served(aiohttp_client, member(postgres, redis_server, "kropki-b", 8082))
    table = await open_table(first, "Ala", "Bob")
    await readiness(first, lambda a: a["cluster"].get("members") == ["kropki-a", "kropki-b"])
    holder = Holder.this_process(8081)
    backend, locks = await lock_connection(url, holder)
    database = make_url(url).database
    await sql(POSTGRES or "", f"ALTER DATABASE {database} ALLOW_CONNECTIONS false")
    try:
        await end_backend(POSTGRES or "", backend)
        # first "connection lost", the lock's connection ended; then why it could not be taken back
        answer = await readiness(first, lambda a: "(55000)" in a.get("reason", ""))
        assert answer["status"] == "degraded", answer
        assert answer["reason"].startswith("database lock lost since ")
        assert answer["reason"].endswith(
            "(server not accepting writes (55000)): other members may take this member's tables and "
            "sessions over if it also seems dead in Redis, and a server alone could start on the database"
        )
        assert answer["cluster"]["members"] == ["kropki-a", "kropki-b"]
        page = await (await first.get("/metrics")).text()
        assert "kropki_database_lock_held 0.0" in page and "kropki_database_lock_losses_total 1.0" in page
        # Alive in Redis, the member keeps its tables while its lock is lost.
        assert await second.app[STORE_KEY].writer.take_orphans(("kropki-a", "kropki-b")) == ({}, False)
    finally:
        await sql(POSTGRES or "", f"ALTER DATABASE {database} ALLOW_CONNECTIONS true")
    await held_again(url, holder, backend, locks)
    answer = await readiness(first, lambda a: a["status"] == "ready")
    assert answer["status"] == "ready" and "reason" not in answer
    assert "kropki_database_lock_held 1.0" in await (await first.get("/metrics")).text()
    assert await second.app[STORE_KEY].writer.take_orphans(("kropki-b",)) == ({}, True)
    assert await owner_of(url, table) == "kropki-a"


async def test_a_members_lock_held_by_a_namesake_when_it_is_taken_back_is_an_error_and_unready(
    aiohttp_client: AiohttpClient,
    postgres: Settings,
    redis_server: RedisServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = postgres.db_url
    first = await served(aiohttp_client, member(postgres, redis_server, "kropki-a", 8081))
    number, holder = first.app[STORE_KEY].writer.member, Holder.this_process(8081)
    backend, locks = await lock_connection(url, holder)
    namesake = Holder(4242, "other.example", 8081, datetime.now(UTC))
    lock = "pg_try_advisory_lock(:kind, :number)"
    async with lock_taken_by(url, backend, namesake, lock, kind=MEMBER_LOCK_CLASS, number=number):
        answer = await unready(first)
        assert answer["reason"].startswith(
            "database lock held by another process: member 'kropki-a': its own lock is held by "
            "pid 4242 on host other.example, port 8081, since "
        )
        assert (
            "another live process serves under this member's name (stop one of the two)" in answer["reason"]
        )
        # It holds the database's lock shared again meanwhile: a server alone stays out.
        assert (await lock_connection(url, holder))[1] == {"database ShareLock"}
        [error] = logged(caplog, "database lock not taken back: member 'kropki-a': its own lock is held by")
        assert error.levelno == logging.ERROR
    await held_again(url, holder, backend, locks)
    answer = await readiness(first, lambda a: a["status"] == "ready")
    assert answer["status"] == "ready"
