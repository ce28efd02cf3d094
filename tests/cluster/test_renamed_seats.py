"""A renamed account's seat at a game another member of a cluster holds (docs/operations.md, "Accounts"),
on a real Redis and PostgreSQL: the player logs in under the new nick on member b, and member a, the
table's owner, moves the seat the account (by its number) has there under the old nick to the new one,
as it does for a player who logs in to it. tests/web/test_renamed_seats.py is the same on one server."""

from __future__ import annotations

import asyncio

from pytest_aiohttp import AiohttpClient
from redis.asyncio import Redis
from redis.asyncio.client import PubSub

from server.cluster.lobby import DIRECT_PREFIX
from server.config import Settings
from server.hub.model import Table
from server.web.common import HUB_KEY, STORE_KEY
from tests.cluster.conftest import RedisServer
from tests.cluster.test_direct import until_subscribed
from tests.cluster.test_lobby import WITHIN, guest, two_members, until
from tests.cluster.test_members import member
from tests.cluster.test_routing import same_player_through
from tests.conftest import served
from tests.store.test_accounts import registered_id
from tests.web.test_auth import register
from tests.web.test_renamed_seats import logged_in, renamed_at_their_game
from tests.web.zagram import Zagram

TIMED = "1616s0.4.a.R.a.300.5.."  # 16x16 ranked, four crosses, 300 s each and 5 s a move
RED_DOT = "np"  # on the bottom edge, past the red dots `played` placed


async def seated(player: Zagram, table: Table) -> None:
    """Polls `player` until it sits in its nick's seat at `table` (of another member, or its own)."""
    deadline = asyncio.get_running_loop().time() + WITHIN
    while True:
        await player.poll(b=True)
        present = table.people.get(player.nick)
        if present is not None and table.seat_of(present):
            return
        assert asyncio.get_running_loop().time() < deadline, f"{player.nick} never sat at {table.uid}"
        await asyncio.sleep(0.05)


async def moved(player: Zagram, table: Table, dot: str) -> None:
    """`player` places `dot` at `table` and polls until its member did it."""
    assert table.room is not None
    moves = len(table.room.game.moves)
    player.send("s", table.uid, dot)
    deadline = asyncio.get_running_loop().time() + WITHIN
    while len(table.room.game.moves) == moves:
        assert asyncio.get_running_loop().time() < deadline, f"{player.nick}'s {dot} never made"
        await player.poll(b=True)
        await asyncio.sleep(0.05)
    assert len(table.room.game.moves) == moves + 1


async def test_a_renamed_player_on_another_member_sits_at_their_game_and_plays_on(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """Before, member b looked the player's games up by the new nick: it found none, and the seat
    waited at member a under the old one until the renamed player lost the game on time."""
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    reader = await guest(b, "cydCyd33", "*Cyd")  # the lobby, as member b shows it
    alice, bob, uid = await renamed_at_their_game(a, TIMED)
    table = a.app[HUB_KEY].tables[uid]
    room = table.room
    assert room is not None and room.game.to_move == 2
    left = room.clock.left(2)

    robert = await logged_in(b, "Bob", bob.secret, "Robert")
    await seated(robert, table)
    assert room.seat_of("Robert") == 2 and room.seat_of("Bob") == 0 and room.game.to_move == 2
    assert 0 < room.clock.left(2) <= left  # his clock, as it ran while he was away
    renamed_line = f"d{uid}.{TIMED}.Alice.Robert"
    await until(reader, lambda lines: renamed_line in lines)
    await until(alice, lambda lines: renamed_line in lines)
    await moved(robert, table, RED_DOT)

    await a.close()  # member a restarts: the moved seat comes back from its journal
    again = await served(aiohttp_client, member(postgres, redis_server, "kropki-a", 8081))
    table = again.app[HUB_KEY].tables[uid]
    room = table.room
    assert room is not None and room.seat_of("Robert") == 2 and room.seat_of("Bob") == 0
    await seated(robert, table)
    await moved(same_player_through(again, alice), table, "oa")
    await moved(robert, table, "pp")
    assert len(room.game.moves) == 28 and room.game.result is None


async def test_guests_under_the_nicks_get_no_seat(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    _, bob, uid = await renamed_at_their_game(a, TIMED)
    table = a.app[HUB_KEY].tables[uid]
    room = table.room
    assert room is not None
    guests = [await guest(b, "bobGst11", "*Bob"), await guest(b, "robGst22", "*Robert")]
    for player in guests:
        player.send("s", uid, RED_DOT)
        await player.poll(b=True)

    robert = await logged_in(b, "Bob", bob.secret, "Robert")
    await seated(robert, table)
    for player in guests:
        await player.poll(b=True)
        assert not room.seat_of(player.nick) and player.nick not in table.owners
    assert len(room.game.moves) == 25
    await moved(robert, table, RED_DOT)


async def test_a_stranger_who_registers_a_nick_the_seat_had_never_gets_it(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """Bob's account, renamed Robert (his seat moves to "Robert" at his login on member b) and then Rob:
    "Robert" is free again, and Mallory registers it on member b. She is not seated at the game of
    member a, cannot move or resign for him; Rob, logging in on member b, is seated and plays."""
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    _, bob, uid = await renamed_at_their_game(a, TIMED)
    table = a.app[HUB_KEY].tables[uid]
    room = table.room
    assert room is not None
    robert = await logged_in(b, "Bob", bob.secret, "Robert")
    await seated(robert, table)
    assert b.app[HUB_KEY].logout(bob.secret)
    deadline = asyncio.get_running_loop().time() + WITHIN
    while "Robert" in table.people:  # he left the table at member a too
        assert asyncio.get_running_loop().time() < deadline, "Robert never left the table"
        await asyncio.sleep(0.05)
    await b.app[STORE_KEY].writer.flush()
    await b.app[STORE_KEY].accounts.rename("Robert", "Rob")

    assert await register(b, "Robert", password="mallory") == "ok.zarejestrowalem."
    mallory = Zagram(b, registered_id("Robert", "mallory"), "Robert")
    deadline = asyncio.get_running_loop().time() + WITHIN
    while "Robert" not in table.people:  # she comes to the table from member b, watching
        assert asyncio.get_running_loop().time() < deadline, "the stranger never came to the table"
        await mallory.poll(b=True)
        await asyncio.sleep(0.05)
    assert not table.seat_of(table.people["Robert"])
    await mallory.get(co="propose", idGracza=mallory.secret, table=str(uid), proposal="resign")
    mallory.send("s", uid, RED_DOT)
    await mallory.poll(b=True)
    await asyncio.sleep(0.5)
    await mallory.poll(b=True)
    assert room.game.result is None and len(room.game.moves) == 25

    rob = await logged_in(b, "Bob", bob.secret, "Rob")
    await seated(rob, table)
    assert room.seat_of("Rob") == 2 and room.seat_of("Robert") == 0
    assert not table.seat_of(table.people["Robert"])
    await moved(rob, table, RED_DOT)


async def test_only_a_login_with_a_seat_to_move_sends_renamed(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """Every registered player's login sent each other member a `renamed`, renamed or not, and again
    once the seat had moved: a flood of logins made as many messages to every member. Now member b
    sends one only while member a's tables seat a nick the account had before: once here, where Robert's
    first login moves his seat. Member a's messages are counted as Redis carries them."""
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    reader = await guest(b, "cydCyd33", "*Cyd")
    async with Redis.from_url(redis_server.url) as redis:
        listening = redis.pubsub()
        await listening.subscribe(DIRECT_PREFIX + "kropki-a")
        try:
            await until_subscribed(redis, DIRECT_PREFIX + "kropki-a")
            alice, bob, uid = await renamed_at_their_game(a, TIMED)
            await until(reader, lambda lines: any(line.startswith(f"d{uid}.") for line in lines))
            table = a.app[HUB_KEY].tables[uid]
            room = table.room
            assert room is not None
            assert await register(b, "Dan") == "ok.zarejestrowalem."  # a plain login, twice
            assert b.app[HUB_KEY].logout(registered_id("Dan", "pw"))
            await (await logged_in(b, "Dan", registered_id("Dan", "pw"), "Dan")).poll(b=True)

            robert = await logged_in(b, "Bob", bob.secret, "Robert")
            await seated(robert, table)
            await moved(robert, table, RED_DOT)
            await moved(alice, table, "oa")
            assert b.app[HUB_KEY].logout(bob.secret)  # and again, with nothing left to move
            robert = await logged_in(b, "Bob", bob.secret, "Robert")
            await seated(robert, table)
            await moved(robert, table, "pp")  # its message comes after all the logins'
            assert len(room.game.moves) == 28
            renamed = (await published(listening)).count(b'"renamed"')
        finally:
            await listening.aclose()
    assert renamed == 1


async def published(listening: PubSub, quiet: float = 0.3) -> bytes:
    """All that was published on the subscription, once nothing more came for `quiet` seconds."""
    heard = b""
    loop = asyncio.get_running_loop()
    while True:
        asked = loop.time()
        message = await listening.get_message(ignore_subscribe_messages=True, timeout=quiet)
        if message is not None:
            heard += message["data"] + b"\n"
        elif loop.time() - asked >= quiet:  # None also for the subscription's own answer, at once
            return heard
