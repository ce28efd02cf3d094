"""Seeks across members (docs/cluster.md, "Seeks and pools"), on a real Redis and PostgreSQL, read as
MultiPoints reads replies (tests/web/zagram.py): a seek posted on one member is listed on the other under
that member's number, whole lobbies included, offered there as an invitation to a client that reads no
seeks, and accepted there into a game both play on the seeker's member; co=acceptSeek does the same."""

from __future__ import annotations

import asyncio

from pytest_aiohttp import AiohttpClient

from server.config import Settings
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import WITHIN, ala_and_cyd, guest, until
from tests.cluster.test_tables import at_table, colours, has
from tests.web.zagram import Zagram

FREE = "2020s0.4.a.F.a.180.2.."
OFFER = f"vg*Ala.{FREE}"


def seek_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith(("ka", "kd"))]


async def seated(player: Zagram, seconds: float = WITHIN) -> int:
    """Polls until a reply has a table's section (the player sat down at a game): its number. The seek's
    member opens the table a moment after the acceptance, and its `d` line seats the player."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        tables = [uid for uid in (await player.poll(b=True)).sections if uid]
        if tables:
            return tables[0]
        assert asyncio.get_running_loop().time() < deadline, f"{player.nick} sat down at no table"
        await asyncio.sleep(0.05)


async def test_a_seek_is_listed_on_every_member_and_accepted_across_them(
    aiohttp_client: AiohttpClient,
    postgres: Settings,
    redis_server: RedisServer,
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    bob = await guest(a, "bobBob22", "*Bob")
    assert await bob.get(co="seek", idGracza=bob.secret, gameType=FREE) == ""  # 1 on both members
    await until(cyd, lambda lines: f"ka1.*Bob...{FREE}" in lines)
    assert await bob.get(co="cancelSeek", idGracza=bob.secret, seek="1") == ""
    await until(cyd, lambda lines: "kd1" in lines)

    assert await ala.get(co="seek", idGracza=ala.secret, gameType=FREE) == ""  # 2 on both members
    offered = await until(cyd, lambda lines: f"ka2.*Ala...{FREE}" in lines)
    assert OFFER in offered  # Cyd's client reads no seeks: offered as an invitation (docs/protocol.md)
    late_on_b = await guest(b, "latLat44", "*Lat")
    assert seek_lines(late_on_b.first) == [f"ka2.*Ala...{FREE}"]  # type: ignore[attr-defined]

    cyd.send("v", 0, "a")  # the offer accepted, as MultiPoints accepts an invitation
    uid = await seated(cyd)  # Cyd sits down from b...
    state = await at_table(ala, uid, has("pr"))  # ... at Ala's member's table
    assert {"*Ala", "*Cyd"} <= set(next(line for line in state if line.startswith("pr"))[2:].split("."))
    assert "kd2" in await until(bob, lambda lines: "kd2" in lines)
    blue, red = colours(state, uid, ala, cyd)
    assert blue is ala  # the game type's `a`: the seeker is blue
    for player, where in [(blue, "aa"), (red, "ca"), (blue, "ab")]:  # off the crosses (engine/start.py)
        player.send("s", uid, where)
        await player.poll(b=True)
        await at_table(red if player is blue else blue, uid, has(where))

    assert await bob.get(co="seek", idGracza=bob.secret, gameType=FREE) == ""  # 3 on both members
    await until(late_on_b, lambda lines: f"ka3.*Bob...{FREE}" in lines)
    assert await late_on_b.get(co="acceptSeek", idGracza=late_on_b.secret, seek="3") == ""
    uid = await seated(late_on_b)
    state = await at_table(bob, uid, has("pr"))
    assert {"*Bob", "*Lat"} <= set(next(line for line in state if line.startswith("pr"))[2:].split("."))
