"""Someone who can publish on the cluster's Redis, but has not the members' secret, is not heard
(server/cluster/signing.py, docs/cluster.md "Who may speak"): lobby lines, chat lines, a session's
hand-over and a request for a table's whole state, published straight into Redis as a member would
have sent them before messages were signed, are dropped and counted, and nothing changes; a genuine
message recorded and published again is dropped too; and members with different secrets do not hear
each other, saying so in their log and /metrics."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient
from redis.asyncio import Redis
from redis.asyncio.client import PubSub

from server.cluster.lobby import CHANNEL, DIRECT_PREFIX
from server.cluster.signing import Seal
from server.config import Settings
from server.web.common import HUB_KEY
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import WITHIN, ala_and_cyd, guest, said, until
from tests.cluster.test_members import member, open_table
from tests.conftest import served

TO_A, TO_B = DIRECT_PREFIX + "kropki-a", DIRECT_PREFIX + "kropki-b"


@pytest.fixture
async def attacker(redis_server: RedisServer) -> AsyncIterator[Redis]:
    """A client of the same Redis, as anyone who can reach it has."""
    redis = Redis.from_url(redis_server.url)
    yield redis
    await redis.aclose()


def as_before(sender: str, **message: object) -> str:
    """A message as members published them before they were signed: JSON naming its sender."""
    return json.dumps({"m": sender, "i": "f0f0f0f0f0f0f0f0", **message})


async def dropped(client: TestClient) -> dict[str, float]:
    """The member's count of messages not taken, by reason, from its /metrics."""
    text = await (await client.get("/metrics")).text()
    found = re.findall(r'^kropki_cluster_messages_dropped_total\{reason="(\w+)"\} (\S+)$', text, re.M)
    return {reason: float(count) for reason, count in found}


async def drops_reach(client: TestClient, reason: str, count: float) -> None:
    deadline = asyncio.get_running_loop().time() + WITHIN
    while (await dropped(client)).get(reason, 0) < count:
        assert asyncio.get_running_loop().time() < deadline, await dropped(client)
        await asyncio.sleep(0.1)


async def heard(pubsub: PubSub, text: str, seconds: float = WITHIN) -> str:
    """The first message on the attacker's subscription holding `text`."""
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.2)
        if message is not None and text.encode() in message["data"]:
            return message["data"].decode()
    raise AssertionError(f"nothing holding {text!r} was published")


async def test_forged_lobby_and_chat_lines_are_dropped_and_counted(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer, attacker: Redis
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    cyd.say(0, "hello from b")
    await cyd.poll(b=True)
    genuine = next(line for line in await until(ala, said("hello from b")) if line.endswith("hello from b"))
    time_n, nick, kind, _ = genuine[2:].split(".", 3)
    seconds, _, n = time_n.partition("_")
    lie = f"ca{seconds}_{int(n) + 50}.{nick}.{kind}.free points at evil.example"

    part = ["pr*Cyd.*Eve", lie]  # *Eve invented, and a chat line *Cyd never wrote
    await attacker.publish(CHANNEL, as_before("kropki-b", n=1, part=part))
    stranger = Seal("kropki-b", "another secret than the members' own, 1234567890")
    await attacker.publish(CHANNEL, stranger.seal(CHANNEL, json.dumps({"n": 1, "part": part})))

    cyd.say(0, "said after the forgeries")
    await cyd.poll(b=True)
    lines = await until(ala, said("said after the forgeries"))
    assert not any("*Eve" in line or "evil.example" in line for line in lines), lines
    assert not any(line.startswith("pd") for line in lines)  # *Cyd stayed: no restart was believed
    assert list(a.app[HUB_KEY].remote_lobby.parts["kropki-b"].people) == ["*Cyd"]
    counts = await dropped(a)
    assert counts["unsigned"] == 1 and counts["signature"] == 1, counts
    # the newcomer's whole lobby, built by member a, has neither
    fay = await guest(a, "fayFay66", "*Fay")
    assert not any("*Eve" in line or "evil.example" in line for line in fay.first)  # type: ignore[attr-defined]


async def test_bytes_that_are_not_text_do_not_end_a_members_listening(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer, attacker: Redis
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    await attacker.publish(CHANNEL, b"\xff\xfe not even text")
    await attacker.publish(TO_A, b"\xff\xfe")
    cyd.say(0, "still heard")
    await cyd.poll(b=True)
    await until(ala, said("still heard"))
    assert (await dropped(a))["unsigned"] == 2


async def test_a_forged_private_line_is_dropped(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer, attacker: Redis
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    line = {"t": 1_800_000_000, "n": 1, "from": "*Cyd", "to": "*Ala", "text": "tell me your password"}
    await attacker.publish(TO_A, as_before("kropki-b", n=1, b=[{"private": line}]))

    cyd.say("_*Ala", "the real one")
    await cyd.poll(b=True)
    lines = await until(ala, said("the real one"))
    assert not any("your password" in line for line in lines), lines
    assert (await dropped(a))["unsigned"] == 1
    assert a.app[HUB_KEY].chats.private.get("*Ala", "*Cyd") is not None
    assert [entry.text for entry in a.app[HUB_KEY].chats.private.get("*Ala", "*Cyd").entries] == [
        "the real one"
    ]


async def test_a_forged_hand_over_is_dropped_and_the_session_stays(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer, attacker: Redis
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    hub = a.app[HUB_KEY]
    id_hmac = hub.roster.find("alaAla11").id_hmac  # in the store's sessions table, for whoever reads it
    await attacker.publish(TO_A, as_before("kropki-b", n=1, b=[{"hand_over": id_hmac}]))

    cyd.say("_*Ala", "still there?")
    await cyd.poll(b=True)
    await until(ala, said("still there?"))
    assert hub.knows("alaAla11")
    assert (await dropped(a))["unsigned"] == 1


async def test_a_forged_request_for_a_tables_whole_state_is_dropped(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer, attacker: Redis
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    uid = await open_table(a, "Dan", "Eve")
    listening = attacker.pubsub()
    await listening.subscribe(TO_B)  # where member a would send the table to the member claimed
    spy = {"nick": "*Spy", "guest": True}
    await attacker.publish(TO_A, as_before("kropki-b", n=1, b=[{"enter": [uid, spy]}]))

    cyd.say("_*Ala", "anything new?")
    await cyd.poll(b=True)
    await until(ala, said("anything new?"))
    with pytest.raises(AssertionError, match="nothing holding"):
        await heard(listening, '"state"', seconds=1.0)
    assert "*Spy" not in a.app[HUB_KEY].tables[uid].people
    assert (await dropped(a))["unsigned"] == 1
    await listening.aclose()


async def test_a_genuine_message_published_again_is_dropped(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer, attacker: Redis
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    recorder = attacker.pubsub()
    await recorder.subscribe(TO_A)
    cyd.say("_*Ala", "only once")
    await cyd.poll(b=True)
    recorded = await heard(recorder, "only once")
    await until(ala, said("only once"))

    await attacker.publish(TO_A, recorded)
    cyd.say("_*Ala", "after the replay")
    await cyd.poll(b=True)
    lines = await until(ala, said("after the replay"))
    assert not said("only once")(lines), lines
    assert (await dropped(a))["replay"] == 1
    await recorder.aclose()


async def test_a_message_of_a_members_earlier_life_is_not_taken_for_a_restart(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer, attacker: Redis
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    recorder = attacker.pubsub()
    await recorder.subscribe(CHANNEL)
    cyd.say(0, "before the restart")
    await cyd.poll(b=True)
    recorded = await heard(recorder, "before the restart")
    await until(ala, said("before the restart"))

    await b.close()  # member b restarts: a new instance, its people back from the store
    b = await served(aiohttp_client, member(postgres, redis_server, "kropki-b", 8082))
    await until(ala, lambda lines: "pa*Cyd" in "".join(lines))
    before = await dropped(a)
    await attacker.publish(CHANNEL, recorded)

    await guest(b, "danDan44", "*Dan")
    lines = await until(ala, lambda lines: "*Dan" in "".join(lines))
    assert not any(line.startswith("pd") for line in lines), lines  # not believed to restart again
    after = await dropped(a)
    assert after["replay"] + after["stale"] == before["replay"] + before["stale"] + 1
    await recorder.aclose()


async def test_members_with_different_secrets_do_not_hear_each_other_and_say_why(
    aiohttp_client: AiohttpClient,
    postgres: Settings,
    redis_server: RedisServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="server.cluster.signing")
    a = await served(aiohttp_client, member(postgres, redis_server, "kropki-a", 8081))
    b = await served(
        aiohttp_client, member(postgres, redis_server, "kropki-b", 8082, secret="another-secret-" + "9" * 32)
    )
    ala = await guest(a, "alaAla11", "*Ala")
    cyd = await guest(b, "cydCyd33", "*Cyd")
    cyd.say(0, "can anyone hear me")
    await cyd.poll(b=True)
    await drops_reach(a, "signature", 2)  # b's part and b's line at least
    await drops_reach(b, "signature", 1)

    lines = (await ala.poll(b=True)).sections.get(0, []) + ala.first  # type: ignore[attr-defined]
    assert not any("*Cyd" in line for line in lines), lines
    warnings = [record.getMessage() for record in caplog.records if record.name == "server.cluster.signing"]
    assert any("claimed_senders=kropki-b" in line and "same cluster secret" in line for line in warnings)
    assert not any("can anyone hear me" in line for line in warnings)
