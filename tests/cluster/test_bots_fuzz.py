"""The bot API fuzzer of tests/web/test_bots_fuzz.py across two members on a real Redis and PostgreSQL:
each request goes where the cluster's nginx sends it (a hash of its `Authorization` header,
docs/cluster.md "Routing"), and one in ten to the other member, as after a change of members, so that
a bot's session moves in the middle of its games, invitations and seeks. Judged as there, after each
request on both members' hubs."""

from __future__ import annotations

import logging
import random
import zlib
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.web.common import HUB_KEY, STORE_KEY
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import two_members
from tests.test_fuzz import (
    check_archived,
    check_hub,
    check_idle,
    lift_request_limits,
    unexpected_errors,
    with_ids,
)
from tests.web.test_bots_fuzz import BOTS, BotFuzzer, guest_turn
from tests.web.zagram import Zagram

REQUESTS = 600
# (seed, the request before which the first member stops: its bots' requests then reach the other,
# which takes their sessions and its tables over, as behind nginx)
RUNS = [(1, None), (2, REQUESTS // 2)]
ELSEWHERE = 0.1  # of the requests, those sent to the member the header's hash does not name


def home_of(kwargs: dict[str, Any], members: int) -> int:
    """The member nginx's hash of the `Authorization` header would pick (any stable hash will do)."""
    return zlib.crc32(kwargs["headers"].get("Authorization", "").encode()) % members


@pytest.mark.parametrize(("seed", "member_stops_at"), RUNS)
async def test_fuzz_the_bot_api_on_two_members(
    aiohttp_client: AiohttpClient,
    postgres: Settings,
    redis_server: RedisServer,
    caplog: pytest.LogCaptureFixture,
    seed: int,
    member_stops_at: int | None,
) -> None:
    caplog.set_level(logging.INFO)
    members: list[TestClient] = list(await two_members(aiohttp_client, postgres, redis_server))
    for client in members:
        lift_request_limits(client.server.app)
    hubs = [client.app[HUB_KEY] for client in members]
    tokens = {nick: await members[0].app[STORE_KEY].bots.create(nick) for nick in BOTS}
    fuzzer = BotFuzzer(random.Random(seed), tokens)
    rng = random.Random(seed)
    ala = Zagram(members[1], "ala123", "*Ala")  # the person the bots play with, on the second member
    assert await ala.login() == ""
    moved = 0
    alive = list(range(len(members)))
    for n in range(REQUESTS):
        if n == member_stops_at:
            await members[0].close()
            alive = [1]
        if n % 3 == 0:
            await guest_turn(fuzzer, ala)
        method, path, kwargs = fuzzer.request()
        home = home_of(kwargs, len(alive))
        index = alive[(home + 1) % len(alive) if rng.random() < ELSEWHERE else home]
        moved += index != alive[home]
        async with members[index].request(method, path, **kwargs) as response:
            text = await response.text(errors="replace")
            fuzzer.judge(method, path, response.status, response.content_type, text)
        fuzzer.look(*(hubs[index] for index in alive))
        for index in alive:
            check_hub(hubs[index], boards=n % 25 == 0)
    for index in alive:
        check_hub(hubs[index])
        check_idle(hubs[index])
        await hubs[index].persistence.flush()
    archived = await (await members[alive[0]].get("/games.json", params={"limit": "500"})).json()
    for game in archived:
        for client in (members[index] for index in alive):
            check_archived(await (await client.get(f"/sgf/{game['number']}")).text())
    logged = unexpected_errors(caplog.records)
    assert not logged, "\n".join(logged)
    assert not with_ids(caplog.records, {*tokens.values(), ala.secret})
    # the bots really played (fewer moves than on one member: a seed's games may stall on a STOP, the
    # fuzzer aiming the moves of the bot that pressed it; at the least of 62 seeds 2 moves and 12 actions
    # in games, 7 routes done), and their sessions moved between the members (10 times at the least, a
    # member stopped at the 100th request)
    in_games = sum(count for route, count in fuzzer.done.items() if route.startswith("game/"))
    assert in_games > 5 and len(fuzzer.done) >= 7, fuzzer.done
    assert moved > 5
    assert fuzzer.codes["internal"] == 0, fuzzer.codes
