"""The app fuzzer of tests/test_fuzz.py across two members on a real Redis and PostgreSQL: each request
goes where the cluster's nginx sends it (a hash of its player id), and now and then to the other member,
as after a change of members, so that sessions move in the middle of games, invitations and
tournaments. Judged as there, request by request and on both members' hubs, with each member's own
numbering of j (docs/cluster.md, "One lobby")."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import zlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.web.common import HUB_KEY
from server.web.tournament import TOURNAMENTS_KEY
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import WITHIN, two_members
from tests.store.breakers import PostgresProxy, until
from tests.test_fuzz import (
    Fuzzer,
    Request,
    check_archived,
    check_hub,
    check_idle,
    http_sender,
    lift_request_limits,
    no_endless_crosses,
    unexpected_errors,
    with_ids,
)
from tests.web.zagram import parse_reply

REQUESTS = 800
# (seed, what happens on a bad day, the request before which it happens): Redis killed and started
# again empty; the first member stopped (its players' requests then reach the other, which takes its
# sessions and tables over, as behind nginx); PostgreSQL away for DATABASE_AWAY seconds
RUNS = [
    (1, None, 0),
    (2, "redis restarts", REQUESTS // 2),
    (3, "a member stops", REQUESTS // 2),
    (4, "the database restarts", REQUESTS // 2),
]
DATABASE_AWAY = 2.0  # seconds PostgreSQL is away when it restarts
# the reader of the lobby at the end, from an address of its own: the fuzzer's failed logins and
# guessed ids hold its own address back
READER = {"X-Forwarded-For": "192.0.2.7"}
ELSEWHERE = 0.1  # of the requests with an id, those sent to the member its hash does not name


def member_of(request: Request, rng: random.Random, alive: list[int]) -> int:
    """The member nginx's consistent hash of the id would pick among those alive (any stable hash will
    do here), else another one now and then; a request without an id goes to any (by the client's
    address)."""
    secret = next((value for name, value in request.params if name in ("playerId", "idGracza")), None)
    if secret is None or request.raw is not None:
        return rng.choice(alive)
    home = zlib.crc32(secret.encode("utf-8", "surrogatepass")) % len(alive)
    return alive[(home + 1) % len(alive) if rng.random() < ELSEWHERE else home]


def lobby_view(body: str) -> tuple[set[str], set[str]]:
    """Who is in the lobby, and which tables it lists, as an anonymous reader's whole state says."""
    lines = parse_reply(body).lines(0)
    people = {nick for line in lines if line.startswith("pr") for nick in line[2:].split(".") if nick}
    return people, {line[1:].split(".", 1)[0] for line in lines if line.startswith("d")}


async def same_lobby(members: list[TestClient]) -> None:
    """Once the members have heard each other, each shows the same people and tables: no one left
    behind on a member their session moved from, no table one of them forgot."""
    deadline = asyncio.get_running_loop().time() + WITHIN
    while True:
        views = []
        for client in members:
            query = {"co": "getMsg", "idGracza": "reader1", "msgNo": "0"}
            response = await client.get("/a.kropki", params=query, headers=READER)
            views.append(lobby_view(await response.text()))
        if all(view == views[0] for view in views):
            return
        assert asyncio.get_running_loop().time() < deadline, views
        await asyncio.sleep(0.2)


@pytest.fixture
async def database(postgres: Settings, tmp_path: Path) -> AsyncIterator[PostgresProxy]:
    """PostgreSQL as the members reach it, through a proxy a test may stop and start again (asked for
    before the members, it is closed after them: tests/cluster/test_routing.py)."""
    proxy = PostgresProxy(tmp_path / "pg", postgres.db_url)
    await proxy.start()
    yield proxy
    await proxy.close()


async def back_after(proxy: PostgresProxy, seconds: float) -> None:
    await asyncio.sleep(seconds)
    await proxy.start()


@pytest.mark.parametrize(("seed", "bad_day", "at"), RUNS)
async def test_fuzz_two_members(
    database: PostgresProxy,
    aiohttp_client: AiohttpClient,
    postgres: Settings,
    redis_server: RedisServer,
    caplog: pytest.LogCaptureFixture,
    seed: int,
    bad_day: str | None,
    at: int,
) -> None:
    caplog.set_level(logging.INFO)  # the access log and the members' own lines, read for ids below
    behind_proxies = dataclasses.replace(postgres, trusted_proxies=("127.0.0.1",), db_url=database.url)
    members: list[TestClient] = list(await two_members(aiohttp_client, behind_proxies, redis_server))
    for client in members:
        lift_request_limits(client.server.app)
    key = await members[0].app[TOURNAMENTS_KEY].add_key(f"fuzz{seed}", None, False)
    fuzzer = Fuzzer(seed, key=key)
    sends = [http_sender(client.session, str(client.make_url("/")).rstrip("/")) for client in members]
    hubs = [client.app[HUB_KEY] for client in members]
    rng = random.Random(seed)
    alive = list(range(len(members)))
    last_j = [0] * len(members)  # each member numbers its own replies
    moves = 0  # requests of a guest reaching the other member than their last reply's
    numbered_by: dict[str, int] = {}  # a guest's id -> the member whose j its last reply had
    database_back: asyncio.Task[None] | None = None
    with no_endless_crosses(fuzzer.hangs):
        for n in range(REQUESTS):
            if n == at and bad_day == "redis restarts":
                redis_server.restart()
            elif n == at and bad_day == "a member stops":
                await members[0].close()
                alive = [1]
            elif n == at and bad_day == "the database restarts":
                await database.break_storage()
                database_back = asyncio.create_task(back_after(database, DATABASE_AWAY))
                fuzzer.storage_away = True
            elif database_back is not None and database_back.done() and fuzzer.storage_away:
                fuzzer.storage_away = False
            request = fuzzer.next()
            index = member_of(request, rng, alive)
            guest = request.guest
            seen = guest.seen if guest is not None else None
            if guest is not None and numbered_by.get(guest.secret, index) != index:
                request.msg_no = None  # its msgNo is the other member's numbering: a whole state comes
                moves += 1
            fuzzer.last_j = last_j[index]
            fuzzer.observe(request, *await sends[index](request))
            last_j[index] = fuzzer.last_j
            if guest is not None and guest.seen != seen:
                numbered_by[guest.secret] = index
            for index in alive:
                check_hub(hubs[index], boards=n % 25 == 0)
    if database_back is not None:
        await database_back
    for hub in (hubs[index] for index in alive):
        check_hub(hub)
        check_idle(hub)
        # stored once the writer has found the database back (it tries again after a back-off of up to
        # 10 s): till then a flush fails at once
        await until(lambda persistence=hub.persistence: persistence.storage_failure is None, WITHIN)
        await hub.persistence.flush()
    await same_lobby([members[index] for index in alive])
    for number in sorted(fuzzer.archived):
        for client in (members[index] for index in alive):  # one archive, read from any member
            response = await client.get(f"/sgf/{number}")
            assert response.status == 200, number
            check_archived(await response.text())
    logged = unexpected_errors(caplog.records)
    assert not logged, "\n".join(logged)
    assert not with_ids(caplog.records, fuzzer.ids_used)  # of either member
    assert not fuzzer.failures and not fuzzer.hangs, fuzzer.report()
    assert fuzzer.statuses[200] > REQUESTS // 2
    assert fuzzer.answers["ok"] > 50, fuzzer.answers  # the guests really played
    assert moves > 15  # sessions really moved between the members (19-28 with a member stopped early)
