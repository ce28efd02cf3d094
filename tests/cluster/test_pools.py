"""Quick-pairing pools across members (docs/cluster.md, "Seeks and pools"), on a real Redis and
PostgreSQL, read as MultiPoints reads replies (tests/web/zagram.py): two players of two members waiting
in one pool are paired into a game both play, at the member of the one who came later, whichever it
is."""

from __future__ import annotations

from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.web.common import HUB_KEY
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import ala_and_cyd, guest, until
from tests.cluster.test_seeks import seated
from tests.cluster.test_tables import at_table, colours, has

POOL = "20x20_3_2"


def waiting(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("w")]


async def test_two_waiters_of_two_members_are_paired_into_a_game_both_play(
    aiohttp_client: AiohttpClient,
    postgres: Settings,
    redis_server: RedisServer,
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    assert await ala.get(co="joinPool", idGracza=ala.secret, pool="25x25_5_5") == ""
    bob = await guest(b, "bobBob22", "*Bob")
    assert await bob.get(co="joinPool", idGracza=bob.secret, pool="25x25_5_5") == ""
    uid = first = await seated(bob)  # paired across the members at once
    state = await at_table(ala, uid, has("pr"))
    assert {"*Ala", "*Bob"} <= set(next(line for line in state if line.startswith("pr"))[2:].split("."))
    blue, red = colours(state, uid, ala, bob)
    for player, where in [(blue, "aa"), (red, "ca"), (blue, "ab")]:  # off the crosses (engine/start.py)
        player.send("s", uid, where)
        await player.poll(b=True)
        await at_table(red if player is blue else blue, uid, has(where))

    # the other way round: the first comer on member b
    assert await cyd.get(co="joinPool", idGracza=cyd.secret, pool=POOL) == ""
    lat = await guest(a, "latLat44", "*Lat")
    await until(cyd, lambda lines: "pa*Lat" in lines)
    assert await lat.get(co="joinPool", idGracza=lat.secret, pool="39x32_5_5") == ""
    assert await lat.get(co="joinPool", idGracza=lat.secret, pool=POOL) == ""  # moves to Cyd's pool
    uid = await seated(lat)
    state = await at_table(cyd, uid, has("pr"))
    assert {"*Cyd", "*Lat"} <= set(next(line for line in state if line.startswith("pr"))[2:].split("."))
    assert waiting((await cyd.poll(b=True)).sections.get(0, [])) == []
    assert uid in a.app[HUB_KEY].tables and first in b.app[HUB_KEY].tables  # the later comer's member
