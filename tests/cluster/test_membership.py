"""Membership against a real redis-server: members see each other, drop out when they stop or die,
refuse a live namesake, and ride out Redis going away and coming back empty."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime

import pytest
from redis.asyncio import Redis

from server.cluster.calls import CALL_TIMEOUT
from server.cluster.membership import KEY_PREFIX, MEMBERS_KEY, Membership, MembershipError
from tests.cluster.conftest import RedisServer

HEARTBEAT = 0.1
TTL = 1.0
LOGGER = "server.cluster.membership"
STOP_WITHIN = CALL_TIMEOUT + 1  # seconds a stop may take: one bounded withdrawal

NewMember = Callable[..., Awaitable[Membership]]


@pytest.fixture
async def new_member(redis_server: RedisServer) -> AsyncIterator[NewMember]:
    """Starts members with short timings on the test's Redis; every one is stopped at the end."""
    started: list[Membership] = []

    async def start(
        name: str, on_change: Callable[[bool], None] | None = None, **options: object
    ) -> Membership:
        member = Membership(
            redis_server.url,
            name,
            {"host": "test", "port": 8000, "pid": os.getpid()},
            **{"heartbeat": HEARTBEAT, "ttl": TTL, **options},  # type: ignore[arg-type]
        )
        member.on_change = on_change
        started.append(member)
        await member.start()
        return member

    yield start
    for member in started:
        async with asyncio.timeout(STOP_WITHIN):  # after a failed test, pytest-timeout no longer watches
            await member.stop()


@pytest.fixture
async def inspect(redis_server: RedisServer) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_server.url, decode_responses=True)
    yield client
    await client.aclose()


async def eventually(check: Callable[[], bool], within: float = 5.0) -> float:
    """Waits until `check()` holds; returns how long that took."""
    loop = asyncio.get_running_loop()
    began = loop.time()
    while not check():
        assert loop.time() - began < within, f"not within {within} s"
        await asyncio.sleep(0.02)
    return loop.time() - began


async def kill(member: Membership) -> None:
    """What SIGKILL leaves: the heartbeat stops, the connection drops, the key stays until it expires."""
    assert member._task is not None and member._client is not None
    member._task.cancel()
    await asyncio.wait([member._task])
    await member._client.aclose()
    member._task = member._client = None  # so that stop() at the end of the test withdraws nothing


def messages(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.name == LOGGER and text in record.getMessage()
    ]


async def test_two_members_see_each_other(new_member: NewMember, inspect: Redis) -> None:
    a = await new_member("a")
    b = await new_member("b")
    assert b.members == ("a", "b")
    await eventually(lambda: a.members == ("a", "b"))
    assert a.connected and b.connected
    assert a.isolated_since is None
    assert a.status() == {"member": "a", "redis": "connected", "members": ["a", "b"]}
    assert b.status() == {"member": "b", "redis": "connected", "members": ["a", "b"]}
    announcement = json.loads(await inspect.get(KEY_PREFIX + "a"))
    assert (
        announcement["host"] == "test" and announcement["port"] == 8000 and announcement["pid"] == os.getpid()
    )
    assert len(announcement["instance"]) == 16
    assert await inspect.smembers(MEMBERS_KEY) == {"a", "b"}
    assert 0 < await inspect.pttl(KEY_PREFIX + "a") <= TTL * 1000


async def test_stopped_member_leaves_at_the_next_heartbeat(new_member: NewMember, inspect: Redis) -> None:
    a = await new_member("a")
    b = await new_member("b")
    await eventually(lambda: a.members == ("a", "b"))
    await b.stop()
    assert not await inspect.exists(KEY_PREFIX + "b")
    assert await inspect.smembers(MEMBERS_KEY) == {"a"}
    assert await eventually(lambda: a.members == ("a",)) < TTL / 2  # withdrawn, not expired


async def test_killed_member_drops_out_once_its_ttl_passed(new_member: NewMember, inspect: Redis) -> None:
    a = await new_member("a")
    b = await new_member("b")
    await eventually(lambda: a.members == ("a", "b"))
    await kill(b)
    await asyncio.sleep(TTL / 2)
    assert a.members == ("a", "b")  # its key is still alive
    await eventually(lambda: a.members == ("a",), within=TTL)
    assert not await inspect.exists(KEY_PREFIX + "b")
    assert await inspect.smembers(MEMBERS_KEY) == {"a"}  # swept


async def test_live_namesake_is_refused(new_member: NewMember, inspect: Redis) -> None:
    a = await new_member("a")
    held = await inspect.get(KEY_PREFIX + "a")
    loop = asyncio.get_running_loop()
    began = loop.time()
    with pytest.raises(MembershipError, match=r"member name 'a' is in use by a live member \(host test, pid"):
        await new_member("a")
    assert TTL + 1 - 0.2 <= loop.time() - began < TTL + 2
    assert a.connected
    assert await inspect.get(KEY_PREFIX + "a") == held  # untouched


async def test_namesake_of_a_stopped_member_starts_at_once(new_member: NewMember, inspect: Redis) -> None:
    first = await new_member("a")
    await first.stop()
    loop = asyncio.get_running_loop()
    began = loop.time()
    second = await new_member("a")
    assert loop.time() - began < 0.5
    assert second.connected and second.members == ("a",)


async def test_namesake_of_a_killed_member_waits_for_its_key_to_expire(new_member: NewMember) -> None:
    first = await new_member("a")
    await kill(first)
    loop = asyncio.get_running_loop()
    began = loop.time()
    second = await new_member("a")
    assert TTL / 2 < loop.time() - began < TTL + 0.5
    assert second.connected and second.members == ("a",)


async def test_redis_restart_isolates_then_rejoins(
    new_member: NewMember, redis_server: RedisServer, inspect: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    now = datetime(2026, 11, 27, 9, tzinfo=UTC).timestamp()
    changes: list[bool] = []

    def fails(connected: bool) -> None:
        raise RuntimeError("the caller's bug")

    a = await new_member("a", on_change=changes.append, clock=lambda: now, monotonic=lambda: now)
    b = await new_member("b", on_change=fails)
    assert changes == []  # a start that reaches Redis is no change
    await eventually(lambda: a.members == ("a", "b"))

    redis_server.stop()
    await eventually(lambda: not a.connected and not b.connected)
    await asyncio.sleep(5 * HEARTBEAT)  # several failed heartbeats
    assert changes == [False]
    assert a.isolated_since == now
    assert a.members == ("a",)
    assert a.status() == {
        "member": "a",
        "redis": "unreachable",
        "isolated_since": "2026-11-27T09:00:00Z",
        "cause": "no answer",
    }
    assert len(messages(caplog, "redis unreachable: serving this member's players only")) == 2  # a and b

    now += 42
    redis_server.start()  # empty: the restart kept no key
    await eventually(lambda: a.connected and b.connected)
    assert changes == [False, True]
    assert a.isolated_since is None
    assert await inspect.exists(KEY_PREFIX + "a", KEY_PREFIX + "b") == 2
    await eventually(lambda: a.members == b.members == ("a", "b"))  # b's heartbeat survived its on_change
    assert a.status() == {"member": "a", "redis": "connected", "members": ["a", "b"]}
    assert messages(caplog, "redis back after 42.0 s: member 'a'")
    assert len(messages(caplog, "on_change(")) == 2  # b's, logged, not fatal


async def test_hung_redis_isolates_within_the_call_timeout(
    new_member: NewMember, redis_server: RedisServer
) -> None:
    changes: list[bool] = []
    a = await new_member("a", on_change=changes.append)
    redis_server.pause()
    try:
        assert await eventually(lambda: not a.connected, within=CALL_TIMEOUT + 1) > 0
    finally:
        redis_server.resume()
    await eventually(lambda: a.connected)
    assert changes == [False, True]
    assert a.members == ("a",)


async def test_member_started_while_redis_is_down_joins_when_it_comes_up(
    new_member: NewMember, redis_server: RedisServer, inspect: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    redis_server.stop()
    changes: list[bool] = []
    a = await new_member("a", on_change=changes.append)  # no exception
    assert not a.connected
    assert a.isolated_since is not None
    assert a.members == ("a",)
    assert a.status()["redis"] == "unreachable"
    await asyncio.sleep(3 * HEARTBEAT)
    assert len(messages(caplog, "redis unreachable")) == 1
    assert changes == []

    redis_server.start()
    await eventually(lambda: a.connected)
    assert changes == [True]
    assert await inspect.exists(KEY_PREFIX + "a")
    assert a.members == ("a",)
    assert a.status() == {"member": "a", "redis": "connected", "members": ["a"]}


async def test_stop_ends_the_heartbeat_even_when_a_call_swallows_the_cancel(
    new_member: NewMember, inspect: Redis
) -> None:
    """redis-py sends with asyncio.wait_for, which on Python 3.11 returns normally when the call completes
    as its task is cancelled (CPython gh-86296); that race hung a CI run in stop() for 90 minutes."""
    a = await new_member("a")
    sent = asyncio.get_running_loop().create_future()
    sending = asyncio.Event()

    real_beat = a._beat

    async def send_once_as_redis_py_does(client: Redis) -> None:
        a._beat = real_beat  # type: ignore[method-assign]
        sending.set()
        await asyncio.wait_for(sent, CALL_TIMEOUT)

    a._beat = send_once_as_redis_py_does  # type: ignore[method-assign]
    await sending.wait()
    sent.set_result(None)  # the send completes in the same turn of the loop as stop() cancels it
    async with asyncio.timeout(STOP_WITHIN):
        await a.stop()
    assert not await inspect.exists(KEY_PREFIX + "a")


async def test_after_redis_comes_back_no_member_is_told_dead_for_a_ttl(
    new_member: NewMember, redis_server: RedisServer
) -> None:
    """issue 44: Redis restarted empty, the first member to beat saw itself alone and took the others'
    tables and sessions while they were alive (only not announced again yet). For one ttl after Redis
    answers again nobody is judged, then the take-over is asked to look again."""
    seen: list[tuple[str, ...]] = []
    a = await new_member("a")
    a.on_members = seen.append
    await new_member("b")
    await eventually(lambda: a.judged_members == ("a", "b"))

    redis_server.restart()
    await eventually(lambda: a.connected and a.judged_members is None, within=TTL)
    back = asyncio.get_running_loop().time()
    await eventually(lambda: a.judged_members is not None, within=3 * TTL)
    assert asyncio.get_running_loop().time() - back >= TTL - 2 * HEARTBEAT
    assert a.judged_members == ("a", "b")
    assert seen[-1] == ("a", "b")  # told once judging is possible again, even if nothing changed


async def test_redis_flushed_between_two_heartbeats_is_noticed(
    new_member: NewMember, inspect: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    """Keys lost without the connection breaking (a flush, a failover to an empty replica): a renewal
    that finds its own announcement gone says so, and nobody is judged for a ttl."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    a = await new_member("a")
    await new_member("b")
    await eventually(lambda: a.judged_members == ("a", "b"))
    await inspect.flushall()
    await eventually(lambda: a.judged_members is None, within=3 * HEARTBEAT)
    assert a.connected
    assert messages(caplog, "redis lost the announcements (restarted empty, or flushed): member 'a'")
    await eventually(lambda: a.judged_members == ("a", "b"), within=2 * TTL)


@pytest.mark.parametrize("step", [-3600.0, 3600.0])
async def test_a_step_of_the_wall_clock_as_redis_comes_back_judges_after_one_ttl_still(
    new_member: NewMember, redis_server: RedisServer, step: float
) -> None:
    """The ttl of not judging after Redis answers again was measured on the wall clock: stepped back an
    hour just then, dead members' tables waited an hour for their take-over; stepped ahead, live
    members not announced again yet were judged dead at the next heartbeat."""
    offset = 0.0
    a = await new_member("a", clock=lambda: time.time() + offset)
    await new_member("b")
    await eventually(lambda: a.judged_members == ("a", "b"))

    redis_server.restart()
    await eventually(lambda: a.connected and a.judged_members is None, within=TTL)
    back = asyncio.get_running_loop().time()
    offset = step
    await eventually(lambda: a.judged_members is not None, within=3 * TTL)
    assert asyncio.get_running_loop().time() - back >= TTL - 2 * HEARTBEAT
