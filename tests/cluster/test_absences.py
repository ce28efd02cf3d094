"""A player who left a game across members (docs/protocol.md, "An opponent who left"), on a real Redis
and PostgreSQL, read as MultiPoints reads replies: the table's owner decides, and the claim of a player
of the other member travels to it as every proposition does, refused or carried out there."""

from __future__ import annotations

from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.web.common import HUB_KEY
from tests.cluster.conftest import RedisServer
from tests.cluster.test_invitations import FREE_GAME, invitation_lines, starts
from tests.cluster.test_lobby import ala_and_cyd
from tests.cluster.test_tables import at_table, colours, has


async def test_a_player_of_another_member_claims_the_game_its_owner_saw_left(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    ala.send("v", 0, f"s.*Cyd.{FREE_GAME}")
    await invitation_lines(ala, starts("vs*Cyd."))  # the poll that carries it
    await invitation_lines(cyd, starts("vg*Ala."))
    cyd.send("v", 0, "a")
    await cyd.poll(b=True)
    uid = next(table for table in (await cyd.poll(b=True)).sections if table)  # on member b
    owner = b.app[HUB_KEY]
    assert uid in owner.tables
    state = await at_table(ala, uid, lambda lines: any(line.startswith("pr") for line in lines))
    blue, red = colours(state, uid, ala, cyd)
    for player, where in [(blue, "aa"), (red, "hh"), (blue, "ab"), (red, "hg")]:
        player.send("s", uid, where)
        await player.poll(b=True)
        await at_table(red if player is blue else blue, uid, has(where))

    ala.send("u", uid, "claim")  # *Cyd is there: refused by the owner, said to *Ala on her member
    await at_table(ala, uid, has("..e.*Cyd is here: there is nothing to claim."))

    owner.absences.claim_after = 0.0  # the grace is the hub's own test (tests/hub/test_absences.py)
    assert await cyd.get(co="usunGracza", playerId=cyd.secret) == ""  # *Cyd closes MultiPoints
    owner.sweep()
    owner.sweep()
    side = 1 if cyd is blue else 2
    await at_table(ala, uid, has(f".away{side}.*Cyd has left the game."))
    ala.send("u", uid, "claim")

    result = f"{'W' if side == 1 else 'B'}+R"
    lines = await at_table(ala, uid, has(f"..{result}.*Ala won: *Cyd left the game and did not come back."))
    assert not any("..e." in line for line in lines)
    room = owner.tables[uid].room
    assert room is not None and str(room.game.result) == result
