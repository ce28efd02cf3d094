"""One name space across members, on a real Redis and PostgreSQL: a nick online on one member (or one
that looks like it) is refused on another, as one member refuses it; it is free again once its player
leaves or its member stops, and the claims come back by themselves after Redis restarts empty."""

from __future__ import annotations

import asyncio

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient
from redis import Redis

from server.cluster.membership import MEMBERS_KEY
from server.cluster.nicks import NICKS_PREFIX
from server.config import Settings
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import WITHIN, two_members
from tests.web.zagram import Zagram


async def guest_login(client: TestClient, secret: str, nick: str) -> str:
    """The answer to guestLogin, as MultiPoints reads it: empty, or `err.<code>`."""
    return await Zagram(client, secret, nick).login()


async def admitted_within(client: TestClient, secret: str, nick: str, seconds: float = WITHIN) -> float:
    """Tries the login until it is admitted; how long that took."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    while (answer := await guest_login(client, secret, nick)) != "":
        assert answer == "err.nickInUse", answer
        assert loop.time() - start < seconds, f"{nick} still refused after {seconds} s"
        await asyncio.sleep(0.2)
    return loop.time() - start


async def test_a_nick_online_on_one_member_is_refused_on_the_other_until_its_player_leaves(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    assert await guest_login(a, "alaAla11", "*Ala") == ""
    assert await guest_login(b, "strStr99", "*Ala") == "err.nickInUse"
    assert await guest_login(b, "strStr99", "*ALA") == "err.nickInUse"  # the same nick, other case
    assert await guest_login(b, "strStr99", "*A1a") == "err.nickInUse"  # one that looks like it
    assert await guest_login(a, "alaAla11", "*Ala") == ""  # its own session, logging in again
    assert await guest_login(b, "bobBob22", "*Bob") == ""
    assert await guest_login(a, "strStr99", "*Bob") == "err.nickInUse"  # both ways

    assert await Zagram(a, "alaAla11", "*Ala").get(co="usunGracza", idGracza="alaAla11") == ""
    await admitted_within(b, "strStr99", "*Ala")  # free on the next reconciliation (2 s)
    assert await guest_login(a, "alaAla11", "*Ala") == "err.nickInUse"  # now b's


async def test_a_stopped_members_nicks_are_free_at_once(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    assert await guest_login(a, "alaAla11", "*Ala") == ""
    assert await guest_login(b, "strStr99", "*Ala") == "err.nickInUse"
    await a.close()
    assert await guest_login(b, "strStr99", "*Ala") == ""


async def test_the_claims_come_back_after_redis_restarts_empty(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    assert await guest_login(a, "alaAla11", "*Ala") == ""
    redis_server.restart()  # empty: no member, no claim
    redis = Redis.from_url(redis_server.url, decode_responses=True)
    deadline = asyncio.get_running_loop().time() + WITHIN
    # member a writes its whole set again by itself (until then a stranger could take the nick on b:
    # the window docs/cluster.md names)
    while not redis.sismember(NICKS_PREFIX + "kropki-a", "n:*ala"):
        assert asyncio.get_running_loop().time() < deadline, "member a did not claim its nicks again"
        await asyncio.sleep(0.1)
    assert redis.sismember(MEMBERS_KEY, "kropki-a")
    redis.close()
    assert await guest_login(b, "strStr99", "*Ala") == "err.nickInUse"
