"""The hourly counts across the members of a cluster (docs/cluster.md, "Hourly counts"), on a real Redis
and PostgreSQL: the games begun by the guests of one address at either member count together, a member
restarted learns the last hour from Redis, and so does one started after Redis itself restarted."""

from __future__ import annotations

import asyncio
import dataclasses

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.hub.hub import Hub
from server.hub.limits import Caps
from server.protocol.codec import decode_client_text
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import WITHIN, guest
from tests.cluster.test_members import member, open_table
from tests.conftest import served
from tests.hub.test_seeks_across import told

BOUND = 2  # games begun in an hour by the guests of one address: the loopback's, not exempt here
REFUSED = f"have begun {BOUND} games in the last hour; log in with an account, or wait"


async def started(
    aiohttp_client: AiohttpClient, settings: Settings, redis: RedisServer, name: str
) -> TestClient:
    port = 8081 if name == "kropki-a" else 8082
    hub = Hub(caps=Caps(games_begun_per_address=BOUND))
    return await served(
        aiohttp_client, dataclasses.replace(member(settings, redis, name, port), unlimited=()), hub
    )


async def refused(client: TestClient, secret: str, nick: str, invited: str) -> str:
    """What a new guest `nick` is told inviting `invited` (online at the same member), asked again until
    it is the bound of games begun (the other members' games come a moment after they begin)."""
    player = await guest(client, secret, nick)
    deadline = asyncio.get_running_loop().time() + WITHIN
    while True:
        player.send("v", 0, f"s.{invited}.0808stanF0.0.0")
        reply = await player.poll(b=True)
        said = [decode_client_text(text) for text in told(reply.sections.get(0, []))]
        if any(REFUSED in text for text in said):
            return next(text for text in said if REFUSED in text)
        assert asyncio.get_running_loop().time() < deadline, f"{nick} was told only {said}"
        await asyncio.sleep(0.2)


async def test_the_guests_of_an_address_count_their_games_at_every_member_together(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """Before, each member counted the games begun at its own tables: the guests of one address began
    the bound's games at each member, twice the bound in a cluster of two (test failed before the fix)."""
    a = await started(aiohttp_client, postgres, redis_server, "kropki-a")
    b = await started(aiohttp_client, postgres, redis_server, "kropki-b")
    await open_table(a, "Ala", "Bob")  # one game begun at each member
    await open_table(b, "Cyd", "Dan")

    await guest(a, "fayFay66", "*Fay")
    told_at_a = await refused(a, "eveEve55", "*Eve", "*Fay")
    assert told_at_a.startswith(f"Guests from the address of *Eve {REFUSED}")
    await guest(b, "halHal88", "*Hal")
    assert (await refused(b, "gusGus77", "*Gus", "*Hal")).startswith(
        f"Guests from the address of *Gus {REFUSED}"
    )

    await b.close()  # member b restarts: it learns the last hour from Redis before it serves
    b = await started(aiohttp_client, postgres, redis_server, "kropki-b")
    await guest(b, "jonJon00", "*Jon")
    assert (await refused(b, "ivyIvy99", "*Ivy", "*Jon")).startswith(
        f"Guests from the address of *Ivy {REFUSED}"
    )


async def test_what_a_member_counted_while_redis_was_down_counts_everywhere_once_it_is_back(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """Cut off, a member counts the games begun at its own tables; once Redis is back (restarted empty)
    the others hear of them, and Redis holds the whole hour again, which a member restarted then reads
    (the restarted member's part failed while nothing was written back)."""
    a = await started(aiohttp_client, postgres, redis_server, "kropki-a")
    b = await started(aiohttp_client, postgres, redis_server, "kropki-b")
    await open_table(a, "Ala", "Bob")
    redis_server.stop()
    await open_table(b, "Cyd", "Dan")  # counted at b alone for now
    redis_server.start()  # empty: nothing of before is in it

    await guest(a, "fayFay66", "*Fay")
    assert (await refused(a, "eveEve55", "*Eve", "*Fay")).startswith(
        f"Guests from the address of *Eve {REFUSED}"
    )
    await b.close()
    b = await started(aiohttp_client, postgres, redis_server, "kropki-b")
    await guest(b, "halHal88", "*Hal")
    assert (await refused(b, "gusGus77", "*Gus", "*Hal")).startswith(
        f"Guests from the address of *Gus {REFUSED}"
    )
