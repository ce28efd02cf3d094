"""Invitations between players of two members, on a real Redis and PostgreSQL, read as MultiPoints
reads replies (tests/web/zagram.py; `vg`/`vs`/`vr` are the lines every reply repeats): sent, seen,
accepted into a game both play, rejected, cancelled, and refused by the invitee's member; and a game at
one member counted towards a player's cap of games at the other."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable

from pytest_aiohttp import AiohttpClient

from server.config import Settings
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import WITHIN, ala_and_cyd, guest, until
from tests.cluster.test_tables import at_table, colours, has
from tests.web.test_stream import chat_texts
from tests.web.zagram import Zagram

FREE_GAME = "0808stanF0.0.0"


async def invitation_lines(
    player: Zagram, found: Callable[[list[str]], bool], seconds: float = WITHIN
) -> list[str]:
    """Polls until the invitation lines of one reply (in whichever section they come last) satisfy
    `found`; returns them."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        reply = await player.poll(b=True)
        lines = [
            line for section in reply.sections.values() for line in section if line[:2] in ("vg", "vs", "vr")
        ]
        if found(lines):
            return lines
        assert asyncio.get_running_loop().time() < deadline, f"{player.nick} has {lines}"
        await asyncio.sleep(0.05)


def starts(prefix: str) -> Callable[[list[str]], bool]:
    return lambda lines: any(line.startswith(prefix) for line in lines)


async def test_an_invitation_to_a_player_of_another_member_becomes_a_game_both_play(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)

    ala.send("v", 0, f"s.*Cyd.{FREE_GAME}")
    assert starts("vs*Cyd.")(await invitation_lines(ala, starts("vs*Cyd.")))
    await invitation_lines(cyd, starts("vg*Ala."))
    cyd.send("v", 0, "a")
    await cyd.poll(b=True)
    uid = next(table for table in (await cyd.poll(b=True)).sections if table)  # on member b
    state = await at_table(ala, uid, lambda lines: any(line.startswith("pr") for line in lines))
    await invitation_lines(ala, lambda lines: lines == [])  # accepted: nothing pending any more
    assert {"*Ala", "*Cyd"} <= set(next(line for line in state if line.startswith("pr"))[2:].split("."))

    blue, red = colours(state, uid, ala, cyd)
    for player, where in [(blue, "aa"), (red, "hh"), (blue, "ab")]:
        player.send("s", uid, where)
        await player.poll(b=True)
        await at_table(red if player is blue else blue, uid, has(where))


async def test_rejected_cancelled_and_refused_invitations_across_members(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)

    ala.send("v", 0, f"s.*Cyd.{FREE_GAME}")  # sent, then cancelled by Ala
    await ala.poll(b=True)
    await invitation_lines(cyd, starts("vg*Ala."))
    ala.send("v", 0, "c")
    await ala.poll(b=True)
    await invitation_lines(cyd, lambda lines: lines == [])

    cyd.send("v", 0, f"s.*Ala.{FREE_GAME}")  # the other way, rejected and blocked by Ala
    await cyd.poll(b=True)
    await invitation_lines(ala, starts("vg*Cyd."))
    ala.send("v", 0, "b")
    await ala.poll(b=True)
    assert await invitation_lines(cyd, starts("vr*Ala")) == ["vr*Ala"]

    cyd.send("v", 0, "o")  # seen
    cyd.send("v", 0, f"s.*Ala.{FREE_GAME}")  # blocked: Ala's member refuses, and Cyd is told why
    await until(cyd, lambda lines: any("does not accept your invitations" in line for line in lines))
    await invitation_lines(cyd, lambda lines: not starts("vs")(lines))
    assert not starts("vg")(await invitation_lines(ala, lambda lines: True))


async def test_a_players_games_at_another_member_count_towards_its_cap_of_games(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """One unfinished game a player (`--games-per-player 1`): *Ala on member a plays *Cyd at member b's
    table, so a refuses her a second game with *Dan of a, whoever invites. Each member counted only its
    own tables before."""
    capped = dataclasses.replace(postgres, games_per_player=1, unlimited=())
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, capped, redis_server)
    dan = await guest(a, "danDan44", "*Dan")
    ala.send("v", 0, f"s.*Cyd.{FREE_GAME}")
    await ala.poll(b=True)
    await invitation_lines(cyd, starts("vg*Ala."))
    cyd.send("v", 0, "a")
    uid = next(table for table in (await cyd.poll(b=True)).sections if table)
    await at_table(ala, uid, lambda lines: any(line.startswith("pr") for line in lines))

    refusal = "*Ala has 1 unfinished games already (at most 1)."
    ala.send("v", 0, f"s.*Dan.{FREE_GAME}")
    await until(ala, lambda lines: refusal in [text for _, _, text in chat_texts(lines)])
    dan.send("v", 0, f"s.*Ala.{FREE_GAME}")
    await dan.poll(b=True)
    await invitation_lines(ala, starts("vg*Dan."))
    ala.send("v", 0, "a")
    await until(ala, lambda lines: refusal in [text for _, _, text in chat_texts(lines)])
    assert [table for table in (await dan.poll(b=True)).sections if table] == []
