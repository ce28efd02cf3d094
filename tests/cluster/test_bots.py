"""A bot in a cluster, on a real Redis and PostgreSQL: marked in the other member's lobby, invited by a
person of that member, and playing the game across the two members through its feed."""

from __future__ import annotations

from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.web.common import STORE_KEY
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import guest, two_members, until
from tests.cluster.test_tables import at_table
from tests.web.test_bots import RATED_GAME, act, open_feed

FREE_GAME = "2020n0.0.a.F.a.180.15._SRATP_sratp."  # the inviter is blue


async def test_a_bot_on_one_member_plays_a_person_of_another(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    token = await a.app[STORE_KEY].bots.create("Robo")
    feed = await open_feed(a, token)
    cyd = await guest(b, "cydCyd33", "*Cyd")
    seen = [*cyd.first]  # type: ignore[attr-defined]
    if not any(line.startswith("iRobo.") for line in seen):
        seen += await until(cyd, lambda lines: any(line.startswith("iRobo.") for line in lines))
    info = next(line for line in seen if line.startswith("iRobo."))
    assert info.split(".")[2] == "FR"  # the mark crosses the cluster with the lobby's lines

    cyd.send("v", 0, f"s.Robo.{RATED_GAME}")  # refused: Robo's `i` line marks a bot
    await until(cyd, lambda lines: any("unrated" in line for line in lines))
    cyd.send("v", 0, f"s.Robo.{FREE_GAME}")
    await cyd.poll(b=True)
    await feed.next("invitation", **{"from": "*Cyd"})
    assert await act(a, token, "invitation/accept") == (200, {"ok": True})
    full = await feed.next("gameFull")
    uid = full["table"]
    assert (full["blue"], full["red"], full["colour"]) == ("*Cyd", "Robo", "red")
    cyd.send("s", uid, "ee")
    await cyd.poll(b=True)
    await feed.next("move", colour="blue", x=4, y=4)
    assert await act(a, token, f"game/{uid}/move/9/9") == (200, {"ok": True})
    await at_table(cyd, uid, lambda lines: any(line.startswith("sa;W[jj]") for line in lines))


async def test_a_bots_rated_invitation_to_a_person_of_another_member_is_refused_either_way(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """Either member refuses a rated game between a bot and a person with `botUnrated`, as one member
    does: each knows whether the other's player is a bot by the `R` flag of its `i` line."""
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    token = await a.app[STORE_KEY].bots.create("Robo")
    await open_feed(a, token)
    cyd = await guest(b, "cydCyd33", "*Cyd")
    ala = await guest(a, "alaAla11", "*Ala")  # once she sees Cyd, member a has b's `i` line of him
    await until(ala, lambda lines: any(line.startswith("i*Cyd.") for line in [*ala.first, *lines]))  # type: ignore[attr-defined]

    status, body = await act(a, token, "invite/*Cyd", gameType=RATED_GAME)
    assert (status, body["error"]) == (400, "botUnrated")
    cyd.send("v", 0, f"s.Robo.{RATED_GAME}")  # refused at once by his own member: Robo is marked
    refused = await cyd.poll(b=True)
    assert any(".e." in line and "unrated" in line for line in refused.sections.get(0, [])), refused.sections
    assert not any(line[:2] in ("vg", "vs") for line in refused.sections.get(0, []))

    assert await act(a, token, "invite/*Cyd", gameType=FREE_GAME) == (200, {"ok": True})
    await until(cyd, lambda lines: any(line.startswith("vgRobo.") for line in lines))
