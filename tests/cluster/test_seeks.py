"""Seeks are each member's own (docs/cluster.md, "Seeks and pools: each member its own"), on a real Redis
and PostgreSQL: a seek posted on one member is listed to that member's players, whole lobbies included,
and offered there as an invitation, and accepted there; the other member relays none of its lines, though
it relays the chat said after it, and knows no such seek."""

from __future__ import annotations

from pytest_aiohttp import AiohttpClient

from server.config import Settings
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import ala_and_cyd, guest, said, until

FREE = "2020s0.4.a.F.a.180.2.."
SEEK = f"ka1.*Ala...{FREE}"
OFFER = f"vg*Ala.{FREE}"


def seek_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith(("ka", "kd"))]


async def test_a_seek_is_listed_and_accepted_on_its_member_only(
    aiohttp_client: AiohttpClient,
    postgres: Settings,
    redis_server: RedisServer,
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    bob = await guest(a, "bobBob22", "*Bob")
    assert await ala.get(co="seek", idGracza=ala.secret, gameType=FREE) == ""
    offered = await until(bob, lambda lines: SEEK in lines)
    assert OFFER in offered  # to a client that reads no seeks, as an invitation (docs/protocol.md)
    ala.say(0, "after the seek")
    await ala.poll()

    lines = await until(cyd, said("after the seek"))  # the chat said after it comes; the seek does not

    assert seek_lines(lines) == [] and OFFER not in lines  # nor offered across members
    late_on_b = await guest(b, "latLat44", "*Lat")
    assert seek_lines(late_on_b.first) == []  # type: ignore[attr-defined]
    late_on_a = await guest(a, "dunDun55", "*Dun")
    assert seek_lines(late_on_a.first) == [SEEK]  # type: ignore[attr-defined]
    assert await cyd.get(co="acceptSeek", idGracza=cyd.secret, seek="1") == "err.noSuchSeek"

    assert await bob.get(co="acceptSeek", idGracza=bob.secret, seek="1") == ""
    reply = await bob.poll()
    assert reply.lines(0, "kd") == ["kd1"] and len(reply.sections) == 2
