"""MultiPoints (tests/clients/multipoints.py, its ServerZagram.java line by line) started again on a
cluster, on a real Redis and PostgreSQL: its new random id sends it to another member than its old
session's (nginx hashes the id), and it plays on at its game (docs/cluster.md, "One name space").
tests/clients/test_comeback.py is the same on one server."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.web.common import HUB_KEY
from tests.clients.multipoints import MultiPoints
from tests.clients.test_comeback import BOB, HOME, HOME_AGAIN, STRANGER, Room, a_game_and_a_private_word
from tests.clients.test_multipoints import CLEAN
from tests.cluster.conftest import RedisServer
from tests.cluster.test_nicks import members_behind_a_proxy

TRIES = 100  # polls, 0.05 s apart, for what crosses between members through Redis


async def polled_until(room: Room, mp: MultiPoints, seen: Callable[[], bool]) -> None:
    """Polls `mp` until `seen()` holds: what another member sends comes on a later poll."""
    for _ in range(TRIES):
        await room.poll(mp)
        if seen():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{mp.my_name} never saw it")


async def test_multipoints_started_again_on_another_member_plays_on_at_its_game(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """Her old MultiPoints crashed while its session lived on member a; the new one reaches member b.
    Before, b refused it `err.nickInUse`, and MultiPoints exits on that answer."""
    a, b = await members_behind_a_proxy(aiohttp_client, postgres, redis_server)
    room = Room(a, a.app[HUB_KEY])
    uid, old, bob = await a_game_and_a_private_word(room)
    table = a.app[HUB_KEY].tables[int(uid)].room
    assert table is not None

    stranger = MultiPoints("*Ala", "555555")
    assert await room.start(stranger, STRANGER, member=b) == "err.nickInUse"
    ala = MultiPoints("*Ala", "333333")  # a new start: a new random id
    assert await room.start(ala, HOME_AGAIN, member=b) == ""
    await polled_until(room, ala, lambda: uid in ala.tabs)
    assert ala.tabs[uid].dots == bob.tabs[uid].dots and not ala.disposed

    for x in (7, 9):  # the next two moves, one of them hers from member b
        mover = ala if (table.game.to_move == 1) == (table.blue == "*Ala") else bob
        mover.make_move(uid, x, x)
        await room.poll(mover)
        await polled_until(room, bob, lambda: len(bob.tabs[uid].dots) == len(table.game.moves))
    assert len(table.game.moves) == 3
    await polled_until(room, ala, lambda: ala.tabs[uid].dots == bob.tabs[uid].dots)
    assert not ala.tabs[uid].refused and not ala.raw

    ala.send_chat("get", "_*Bob")  # her conversation, as the zagram client asks for it: b has it now
    await polled_until(room, ala, lambda: ("*Bob", "*Bob", "good luck") in ala.private)
    bob.send_private("*Ala", "still there?")  # to her new session, on the other member
    await room.poll(bob)
    await polled_until(room, ala, lambda: ("*Bob", "*Bob", "still there?") in ala.private)
    assert ala.private == [("*Bob", "*Bob", "good luck"), ("*Bob", "*Bob", "still there?")]
    await room.poll(old)  # the old client, if it still ran, is told its session is over
    assert old.disposed


@pytest.mark.parametrize("unlimited", [(), (HOME, HOME_AGAIN)], ids=["limited", "school-proxy"])
async def test_multipoints_quit_and_started_again_at_its_tables_member_sits_again(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer, unlimited: tuple[str, ...]
) -> None:
    """Found with MultiPoints' compiled ServerZagram through nginx on two members: Ala on member a plays
    Bob at a table of member b (his: he accepted there); she quits MultiPoints (`usunGracza`) and starts
    it again, and nginx sends the new id to b. Before, b refused her `err.nickInUse` until a reconciled
    its nick claims (up to 2 s), and MultiPoints stops at that answer; from an --unlimited address (a
    school's proxy) b then seated her as a spectator, her seat having kept no network."""
    a, b = await members_behind_a_proxy(aiohttp_client, postgres, redis_server, unlimited)
    room = Room(a, b.app[HUB_KEY])
    old, bob = MultiPoints("*Ala", "111111"), MultiPoints("*Bob", "222222")
    assert await room.start(old, HOME) == "" and await room.start(bob, BOB, member=b) == ""
    await polled_until(room, old, lambda: "*Bob" in old.lobby)
    old.invite("*Bob", CLEAN)
    await room.poll(old)
    await polled_until(room, bob, lambda: bool(bob.invites_incoming))
    bob.accept_invite()
    await polled_until(room, bob, lambda: bool(bob.tabs))
    [uid] = bob.tabs
    await polled_until(room, old, lambda: uid in old.tabs)
    table = b.app[HUB_KEY].tables[int(uid)].room
    assert table is not None
    first = old if table.blue == "*Ala" else bob
    first.make_move(uid, 5, 5)
    await room.poll(first)
    await polled_until(room, old, lambda: len(old.tabs[uid].dots) == 1)

    assert await room.get(old, f"/a.kropki?playerId={old.secret}&co=usunGracza") == ""  # at exit
    ala = MultiPoints("*Ala", "333333")  # a new start: a new random id
    assert await room.start(ala, HOME_AGAIN, member=b) == ""
    await polled_until(room, ala, lambda: uid in ala.tabs and len(ala.tabs[uid].dots) == 1)
    for x in (7, 9):  # the next two moves, one of them hers
        mover = ala if (table.game.to_move == 1) == (table.blue == "*Ala") else bob
        mover.make_move(uid, x, x)
        await room.poll(mover)
        await polled_until(room, ala, lambda: len(ala.tabs[uid].dots) == len(table.game.moves))
    assert len(table.game.moves) == 3 and not ala.tabs[uid].refused and not ala.raw
