"""Spam refused on the writer's own member of a cluster (docs/moderation.md, "Spam"), on a real Redis
and PostgreSQL: a line at a table of the other member, and a private line to a player of the other
member, never reach Redis when refused, and the writer is told as on a server alone."""

from __future__ import annotations

import dataclasses
from typing import Any

from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.hub.spam import LINKS_FROM_NEW
from server.web.common import HUB_KEY
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import guest, two_members, until
from tests.cluster.test_tables import at_table, has, invited_table

BANNED_SENTENCE = "A word in this line is not allowed here; it was not sent."


async def test_spam_is_refused_before_it_leaves_the_writers_member(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    settings = dataclasses.replace(postgres, banned_words=("gold",))
    a, b = await two_members(aiohttp_client, settings, redis_server)
    ala = await guest(a, "alaAla11", "*Ala")
    dan = await guest(b, "danDan44", "*Dan")
    eve = await guest(b, "eveEve55", "*Eve")
    uid = await invited_table(dan, eve)
    await at_table(dan, uid, has("pr"))
    await until(ala, lambda lines: f"ga{uid}" in lines and "pa*Dan" in lines)
    ala.send("b", uid)
    await at_table(ala, uid, lambda lines: any(line.startswith("pr") for line in lines))

    received: list[dict[str, Any]] = []  # what member b is sent (a spy around the real method)
    peers = b.app[HUB_KEY].peers
    take = peers.take
    peers.take = lambda member, message: (received.append(message), take(member, message))  # type: ignore[method-assign]
    ala.say(uid, "cheap G0LD")
    ala.say(uid, "nice move")
    told = await at_table(ala, uid, lambda lines: any("nice move" in line for line in lines))
    assert [line for line in told if "..e." in line][0].endswith(BANNED_SENTENCE)
    heard = await at_table(dan, uid, has("nice move"))
    assert not any("G0LD" in line for line in heard)

    for n in range(LINKS_FROM_NEW + 1):
        ala.say("_*Dan", f"see example.com/{n}")
    lines = await until(ala, lambda lines: any("younger than a day" in line for line in lines))
    private = await until(dan, lambda lines: sum("example.com" in line for line in lines) >= LINKS_FROM_NEW)
    assert sum("example.com" in line for line in private) == LINKS_FROM_NEW
    assert sum("younger than a day" in line for line in lines) == 1
    refused = ("G0LD", f"example.com/{LINKS_FROM_NEW}")
    assert not any(text in str(message) for message in received for text in refused)
    assert any("nice move" in str(message) for message in received), "the spy saw what b was sent"
