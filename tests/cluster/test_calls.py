"""How a member reaches Redis (server/cluster/calls.py), on real redis-servers started the ways
docs/cluster.md says to run one: with a password (`--requirepass`), and over TLS with a certificate of
an authority of the test's own named in the URL (`rediss://...?ssl_ca_certs=PATH`). Two members share
the lobby through each; a member with a wrong password, or that does not trust the certificate, is
isolated (it serves its own players), says why in its log and in /readyz, and does not crash."""

from __future__ import annotations

import dataclasses
import logging

import pytest
from pytest_aiohttp import AiohttpClient
from redis import Redis

from server.cluster import calls
from server.config import Settings
from tests.cluster.conftest import ACL_RULES, RedisServer
from tests.cluster.test_lobby import ala_and_cyd, guest, said, until
from tests.cluster.test_members import member, readiness
from tests.conftest import served


async def lobby_shared(aiohttp_client: AiohttpClient, settings: Settings, redis: RedisServer) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, settings, redis)
    cyd.say(0, "hello over this redis")
    await cyd.poll(b=True)
    await until(ala, said("hello over this redis"))
    ala.say("_*Cyd", "and privately")
    await ala.poll(b=True)
    await until(cyd, said("and privately"))


async def test_members_share_the_lobby_through_a_redis_with_a_password(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_with_password: RedisServer
) -> None:
    assert redis_with_password.url.startswith("redis://:kropki-test-password@127.0.0.1:")
    await lobby_shared(aiohttp_client, postgres, redis_with_password)


async def test_members_share_the_lobby_as_an_acl_user_with_the_documented_rights(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_with_password: RedisServer
) -> None:
    url = redis_with_password.acl_user("kropki", "member-password", ACL_RULES)
    assert url.startswith("redis://kropki:member-password@127.0.0.1:")
    with Redis.from_url(redis_with_password.url, decode_responses=True) as admin:
        dry_run = lambda *command: admin.execute_command("ACL", "DRYRUN", "kropki", *command)  # noqa: E731
        assert dry_run("EVAL", "return 1", "0") == dry_run("PUBLISH", "kropki:lobby", "x") == "OK"
        assert "no permissions" in dry_run("FLUSHALL")  # what the rights keep from such a user
        assert "no permissions" in dry_run("GET", "other:key")
    redis_with_password.url = url  # the members connect as that user
    await lobby_shared(aiohttp_client, postgres, redis_with_password)


async def test_members_share_the_lobby_through_a_redis_over_tls(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_over_tls: RedisServer
) -> None:
    assert redis_over_tls.url.startswith("rediss://:kropki-test-password@127.0.0.1:")
    assert "?ssl_ca_certs=" in redis_over_tls.url
    await lobby_shared(aiohttp_client, postgres, redis_over_tls)


@pytest.mark.parametrize(
    ("redis", "wrong", "cause", "hint"),
    [
        ("redis_with_password", {"password": "not-it"}, "credentials refused", "check the password"),
        ("redis_with_password", {"password": None}, "credentials refused", "check the password"),
        ("redis_over_tls", {"ca": "other"}, "certificate not trusted", "?ssl_ca_certs=PATH"),
    ],
)
async def test_a_member_redis_refuses_is_isolated_and_says_why(
    aiohttp_client: AiohttpClient,
    postgres: Settings,
    redis: str,
    wrong: dict[str, str | None],
    cause: str,
    hint: str,
    request: pytest.FixtureRequest,
    caplog: pytest.LogCaptureFixture,
) -> None:
    server: RedisServer = request.getfixturevalue(redis)
    password = wrong.get("password", server.password)
    ca = server.certificates.other_ca if wrong.get("ca") and server.certificates else None
    settings = dataclasses.replace(
        member(postgres, server, "kropki-a", 8081), redis_url=server.url_with(password, ca)
    )
    with caplog.at_level(logging.WARNING, logger="server.cluster.membership"):
        client = await served(aiohttp_client, settings)

    answer = await readiness(client, lambda answer: answer["status"] == "degraded")
    assert answer["status"] == "degraded" and answer["cluster"]["redis"] == "unreachable"
    assert answer["cluster"]["cause"] == cause
    lines = [record.getMessage() for record in caplog.records if record.name == "server.cluster.membership"]
    assert len(lines) == 1 and "serving this member's players only" in lines[0] and hint in lines[0], lines
    assert "kropki-test-password" not in lines[0]
    ala = await guest(client, "alaAla11", "*Ala")  # its own players are served
    ala.say(0, "alone here")
    await until(ala, said("alone here"))  # the poll carrying the line has it


async def test_a_subscription_on_a_connection_whose_redis_died_is_not_taken_for_one(
    redis_server: RedisServer,
) -> None:
    """redis-py's subscribe() only writes its command, and its pool hands out an idle connection
    unchecked: on one whose Redis had died, it returned as if subscribed, and a member so took itself
    for subscribed again while Redis was down. calls.subscribed waits for Redis's answer."""
    client = calls.client(redis_server.url, socket_timeout=None)
    listening, again = client.pubsub(), client.pubsub()
    try:
        await calls.subscribed(listening, "kropki:test")  # while Redis answers, it answers this
        await client.publish("kropki:test", "hello")  # on a second connection, idle in the pool after
        redis_server.stop()
        with pytest.raises(calls.UNREACHABLE):
            await calls.subscribed(again, "kropki:test")  # given that idle connection
    finally:
        await again.aclose()
        await listening.aclose()
        await client.aclose()
