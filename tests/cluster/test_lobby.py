"""One lobby across two members on a real Redis and PostgreSQL: people, tables and lobby chat of each
member reach the players of the other, as MultiPoints reads them (tests/web/zagram.py), a member that
stops leaves the lobby, and a Redis restart heals by itself, with what was said meanwhile."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient
from redis import Redis

from server.config import Settings
from tests.cluster.conftest import ACL_RULES, RedisServer
from tests.cluster.test_members import member, open_table
from tests.conftest import served
from tests.web.zagram import Zagram

WITHIN = 15.0  # seconds: a heartbeat (2 s), a call time-out (1 s) and a resubscription (1 s), with room


async def guest(client: TestClient, secret: str, nick: str) -> Zagram:
    """A guest logged in on `client`'s member, past its first reply (the whole lobby, in `first`)."""
    player = Zagram(client, secret, nick)
    assert await player.login() == ""
    player.first = (await player.poll(b=True, msg_no="0.0")).sections[0]  # type: ignore[attr-defined]
    return player


async def until(player: Zagram, found: Callable[[list[str]], bool], seconds: float = WITHIN) -> list[str]:
    """Polls until the lobby lines had since the call satisfy `found`; returns them."""
    lines: list[str] = []
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        lines += (await player.poll(b=True)).sections.get(0, [])
        if found(lines):
            return lines
        assert asyncio.get_running_loop().time() < deadline, f"{player.nick} got only {lines}"
        await asyncio.sleep(0.1)


def said(text: str) -> Callable[[list[str]], bool]:
    return lambda lines: any(line.startswith("ca") and line.endswith(f".{text}") for line in lines)


async def two_members(
    aiohttp_client: AiohttpClient, settings: Settings, redis: RedisServer
) -> tuple[TestClient, TestClient]:
    first = await served(aiohttp_client, member(settings, redis, "kropki-a", 8081))
    second = await served(aiohttp_client, member(settings, redis, "kropki-b", 8082))
    return first, second


async def ala_and_cyd(
    aiohttp_client: AiohttpClient, settings: Settings, redis: RedisServer
) -> tuple[TestClient, TestClient, Zagram, Zagram]:
    """Two members, the guest *Ala on the first and *Cyd on the second, once Ala's lobby lists Cyd."""
    a, b = await two_members(aiohttp_client, settings, redis)
    ala = await guest(a, "alaAla11", "*Ala")
    cyd = await guest(b, "cydCyd33", "*Cyd")
    await until(ala, lambda lines: "pa*Cyd" in lines)
    return a, b, ala, cyd


async def test_people_tables_and_chat_of_both_members_are_in_one_lobby(
    aiohttp_client: AiohttpClient,
    postgres: Settings,
    redis_server: RedisServer,
) -> None:
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    ala = await guest(a, "alaAla11", "*Ala")
    cyd = await guest(b, "cydCyd33", "*Cyd")
    lines = await until(ala, lambda lines: "pa*Cyd" in lines)
    assert any(line.startswith("i*Cyd.") for line in lines)
    assert "*Ala" in next(line for line in cyd.first if line.startswith("pr"))  # type: ignore[attr-defined]
    bob = await guest(a, "bobBob22", "*Bob")
    await until(cyd, lambda lines: "pa*Bob" in lines and any(line.startswith("i*Bob.") for line in lines))
    assert bob.nick in "".join(await until(ala, lambda lines: "pa*Bob" in lines))

    uid = await open_table(b, "Dan", "Eve")  # a game on member b
    lines = await until(ala, lambda lines: f"ga{uid}" in lines and any(f"x{uid}." in x for x in lines))
    assert any(line.startswith(f"d{uid}.") for line in lines), lines

    cyd.say(0, "hello from b")
    await cyd.poll(b=True)
    await until(ala, said("hello from b"))
    ala.say(0, "hello from a")
    await ala.poll(b=True)
    await until(cyd, said("hello from a"))

    # a newcomer on member a gets the whole lobby: both members' people, tables and chat
    fay = Zagram(a, "fayFay66", "*Fay")
    assert await fay.login() == ""
    whole = (await fay.poll(b=True, msg_no="0.0")).sections[0]
    people = next(line for line in whole if line.startswith("pr"))[2:].split(".")
    assert {"*Ala", "*Cyd", "*Dan", "*Eve", "*Fay"} <= set(people)
    assert len(people) == len(set(people))
    assert f"gr{uid}" in whole or any(line.startswith("gr") and str(uid) in line.split(".") for line in whole)
    chat = [line for line in whole if line.startswith("cr")]
    assert [line.rsplit(".", 1)[1] for line in chat[-2:]] == ["hello from b", "hello from a"]


async def test_a_member_that_stops_leaves_the_lobby(
    aiohttp_client: AiohttpClient,
    postgres: Settings,
    redis_server: RedisServer,
) -> None:
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    ala = await guest(a, "alaAla11", "*Ala")
    await guest(b, "cydCyd33", "*Cyd")
    uid = await open_table(b, "Dan", "Eve")
    await until(ala, lambda lines: "pa*Cyd" in lines and f"ga{uid}" in lines)
    await b.close()
    lines = await until(ala, lambda lines: any(line.startswith("pd") and "*Cyd" in line for line in lines))
    assert f"gd{uid}" in lines


async def test_the_lobby_heals_after_a_redis_restart_with_what_was_said_meanwhile(
    aiohttp_client: AiohttpClient,
    postgres: Settings,
    redis_server: RedisServer,
) -> None:
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    ala = await guest(a, "alaAla11", "*Ala")
    cyd = await guest(b, "cydCyd33", "*Cyd")
    cyd.say(0, "said before")
    await cyd.poll(b=True)
    await until(ala, said("said before"))

    redis_server.stop()
    # cut off, member a serves its own players only: member b's people leave its lobby
    await until(ala, lambda lines: any(line.startswith("pd") and "*Cyd" in line for line in lines))
    cyd.say(0, "said while redis was down")
    await cyd.poll(b=True)
    await guest(b, "danDan44", "*Dan")

    redis_server.start()  # empty: nothing of before is in it
    lines = await until(
        ala, lambda lines: said("said while redis was down")(lines) and "*Dan" in "".join(lines)
    )
    assert any(line.startswith("pa") and "*Cyd" in line for line in lines)
    assert not said("said before")(lines)  # had before the outage: not shown a second time
    ala.say(0, "and back")
    await ala.poll(b=True)
    await until(cyd, said("and back"))


async def test_a_whole_part_asked_for_comes_though_the_ask_and_the_part_were_lost(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_with_password: RedisServer
) -> None:
    """Member a misses a line of b's and asks for b's whole part; the ask is lost (a's publish fails),
    then the part (b's fails). Each is sent again, so b's people reach a's lobby. Before, a publish that
    failed lost its ask or part for good, and a, waiting for b's part, dropped every later line of b's:
    b's people, tables and chat never reached a's lobby again. Each member is an ACL user of its own, its
    publishing turned off as a failing Redis would fail it, the rest of it (membership, nicks, its
    subscription) going on."""
    redis = redis_with_password

    async def acl_member(name: str, port: int) -> TestClient:
        url = redis.acl_user(name, "member-password", ACL_RULES)
        return await served(
            aiohttp_client, dataclasses.replace(member(postgres, redis, name, port), redis_url=url)
        )

    a, b = await acl_member("kropki-a", 8081), await acl_member("kropki-b", 8082)
    ala = await guest(a, "alaAla11", "*Ala")
    await guest(b, "cydCyd33", "*Cyd")
    await until(ala, lambda lines: "pa*Cyd" in lines)
    with Redis.from_url(redis.url, decode_responses=True) as admin:

        def publishing(name: str, allowed: bool) -> None:
            admin.execute_command("ACL", "SETUSER", name, "+publish" if allowed else "-publish")
            admin.acl_log_reset()

        async def refused(name: str) -> None:
            """Until Redis refuses a publish of `name`'s (since `publishing` last turned one on or off)."""
            deadline = asyncio.get_running_loop().time() + WITHIN
            while not any(entry["username"] == name for entry in admin.acl_log()):
                assert asyncio.get_running_loop().time() < deadline, f"{name} published nothing"
                await asyncio.sleep(0.05)

        publishing("kropki-b", False)
        await guest(b, "bobBob22", "*Bob")  # b's line is lost: a finds the gap at b's next one
        await refused("kropki-b")
        publishing("kropki-a", False)
        publishing("kropki-b", True)
        await guest(b, "danDan44", "*Dan")
        await refused("kropki-a")  # a's ask is lost
        publishing("kropki-b", False)
        publishing("kropki-a", True)
        await refused("kropki-b")  # a asked again; b's part is lost
        publishing("kropki-b", True)
    await guest(b, "eveEve55", "*Eve")
    arrived = lambda lines: {nick for line in lines if line.startswith("pa") for nick in line[2:].split(".")}  # noqa: E731
    await until(ala, lambda lines: {"*Bob", "*Dan", "*Eve"} <= arrived(lines))
