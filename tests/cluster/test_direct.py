"""Messages for one member alone (server/cluster/lobby.py) on a real Redis: a receiver that finds one
missing asks its sender for its view again and has its hub send again what that member has not
answered (Hub.missed_from_member), after taking what the message that showed the gap carries."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import Redis

from server.cluster import lobby
from server.cluster.lobby import DIRECT_PREFIX, LobbyLink
from server.cluster.signing import Seal
from server.hub.hub import Hub
from tests.cluster.conftest import CLUSTER_SECRET, RedisServer
from tests.cluster.test_forgery import heard
from tests.cluster.test_lobby import WITHIN
from tests.cluster.test_membership import eventually
from tests.hub.test_restore import RecordingPersistence

TO_A, TO_B = DIRECT_PREFIX + "kropki-a", DIRECT_PREFIX + "kropki-b"


class HeardHub(Hub):
    """A hub that also notes what its link handed it from other members, in order."""

    def __init__(self) -> None:
        super().__init__(persistence=RecordingPersistence())
        self.heard: list[tuple[str, Any]] = []

    def take_from_member(self, member: str, message: dict[str, Any]) -> None:
        self.heard.append(("message", message))
        super().take_from_member(member, message)

    def missed_from_member(self, member: str) -> None:
        self.heard.append(("missed", member))
        super().missed_from_member(member)


@pytest.fixture
async def redis(redis_server: RedisServer) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_server.url)
    yield client
    await client.aclose()


async def until_subscribed(redis: Redis, channel: str) -> None:
    deadline = asyncio.get_running_loop().time() + WITHIN
    while dict(await redis.pubsub_numsub(channel)).get(channel.encode(), 0) < 1:
        assert asyncio.get_running_loop().time() < deadline, f"nobody listens on {channel}"
        await asyncio.sleep(0.05)


async def test_a_message_found_missing_is_asked_for_and_what_is_unanswered_sent_again(
    redis_server: RedisServer, redis: Redis
) -> None:
    hub = HeardHub()
    link = LobbyLink(redis_server.url, "kropki-b", hub, [CLUSTER_SECRET])
    await link.start()
    member_a = Seal("kropki-a", CLUSTER_SECRET)  # member a's side, as its link seals
    listening = redis.pubsub()
    await listening.subscribe(TO_A)
    try:
        await until_subscribed(redis, TO_B)

        async def from_a(number: int, *bodies: dict[str, Any]) -> None:
            payload = json.dumps({"n": number, "b": list(bodies)})
            await redis.publish(TO_B, member_a.seal(TO_B, payload))

        await from_a(1, {"done": "*Bob", "t": 1})
        await from_a(3, {"done": "*Bob", "t": 3})  # number 2 lost
        deadline = asyncio.get_running_loop().time() + WITHIN
        while len(hub.heard) < 3:
            assert asyncio.get_running_loop().time() < deadline, hub.heard
            await asyncio.sleep(0.05)
        assert hub.heard == [
            ("message", {"done": "*Bob", "t": 1}),
            ("message", {"done": "*Bob", "t": 3}),
            ("missed", "kropki-a"),  # after the answer it brought: only what is still unanswered
        ]
        await heard(listening, '"resync"')  # and member a is asked for its view again
    finally:
        await listening.aclose()
        await link.stop()


class UndeliveredHub(HeardHub):
    """Notes the messages its link gives up on as not delivered."""

    def __init__(self) -> None:
        super().__init__()
        self.undelivered: list[dict[str, Any]] = []

    def not_delivered(self, member: str, message: dict[str, Any]) -> None:
        self.undelivered.append(message)
        super().not_delivered(member, message)


async def test_an_action_sent_while_redis_fails_is_sent_again_when_it_is_back_not_taken_as_not_done(
    redis_server: RedisServer,
) -> None:
    """The chaos run with bots: moves sent while Redis was killed were told "Not done: the table's
    server cannot be reached now." and were played: Redis had taken the message before it died, or the
    answer to the publish was what was lost. Whether it was heard is not known, so the action is sent
    again once Redis is back (for RESENT_FOR, as to a member not listening yet): the table's member does
    an action it hears twice only once (Visitors.act, by its ticket)."""
    hub = UndeliveredHub()
    link = LobbyLink(redis_server.url, "kropki-b", hub, [CLUSTER_SECRET])
    await link.start()
    try:
        link.members_changed(("kropki-a", "kropki-b"))
        redis_server.stop()  # as chaos.py kills it
        action = {"do": ["*Bob", "move", "17", "hh"], "t": 1}
        link.send_to("kropki-a", action)
        await asyncio.sleep(1.0)  # its publish failed, and the tries after it
        assert hub.undelivered == [], "taken as not done while it may have been heard"
        redis_server.start()
        member_a = Redis.from_url(redis_server.url)
        listening = member_a.pubsub()
        try:
            await listening.subscribe(TO_A)
            await heard(listening, '"do"')  # sent again once Redis answers
        finally:
            await listening.aclose()
            await member_a.aclose()
        assert hub.undelivered == []
    finally:
        await link.stop()


async def test_an_action_given_up_is_not_sent_again_by_a_copy_queued_while_it_was_being_sent_again(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full test run: a move was told "Not done: the table's server cannot be reached now." at the
    end of RESENT_FOR, and played once Redis was back. The hub had queued the same message again during
    the outage (Mirrors.send_again), and that copy's failure began a sending again of its own, which
    went on after the first had given the message up."""
    monkeypatch.setattr(lobby, "RESENT_FOR", 1.5)
    hub = UndeliveredHub()
    link = LobbyLink(redis_server.url, "kropki-b", hub, [CLUSTER_SECRET])
    await link.start()
    try:
        link.members_changed(("kropki-a", "kropki-b"))
        redis_server.stop()
        action = {"do": ["*Bob", "move", "17", "hh"], "t": 1}
        link.send_to("kropki-a", action)
        await asyncio.sleep(0.7)  # its publish failed: it is being sent again
        link.send_to("kropki-a", action)  # as Mirrors.send_again queues what is not answered
        await eventually(lambda: bool(hub.undelivered), within=WITHIN)  # given up after RESENT_FOR
        assert hub.undelivered == [action]  # its player is told "Not done" (Mirrors.not_done)
        redis_server.start()
        member_a = Redis.from_url(redis_server.url)
        listening = member_a.pubsub()
        try:
            await listening.subscribe(TO_A)
            await asyncio.sleep(4 * lobby.RESEND_EVERY)  # a copy still being sent again would come now
            link.send_to("kropki-a", {"do": ["*Bob", "move", "17", "ii"], "t": 2})  # messages keep order
            first = await heard(listening, '"do"')
        finally:
            await listening.aclose()
            await member_a.aclose()
        assert '"ii"' in first and '"hh"' not in first, first
        assert hub.undelivered == [action]
    finally:
        await link.stop()
