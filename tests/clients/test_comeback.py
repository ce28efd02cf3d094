"""A guest whose MultiPoints started again (issue 43.5, docs/protocol.md "A guest who comes back").

MultiPoints draws a new random guest id at every start (ServerZagram's constructor: `secretId =
(int) (Math.random() * 999999)`), so a guest whose client crashed or was started again comes back under
the same nick with another id. Seats belonged to the session: the game waited for a player who could
never move again, and every later step of it failed in MultiPoints. Now a guest from the network of the
session that held the seat is seated again, with its private conversations; a stranger is not.
"""

from __future__ import annotations

import dataclasses
import random

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient
from yarl import URL

from server.config import Settings
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.sessions import POLL_TIMEOUT
from tests.clients.multipoints import MultiPoints, encode
from tests.clients.test_multipoints import CLEAN
from tests.conftest import served

HOME = "203.0.113.7"  # Ala's network (203.0.113.0/24)
HOME_AGAIN = "203.0.113.8"  # the same network, another address (her router's pool, a second machine)
BOB = "198.51.100.20"
STRANGER = "192.0.2.66"


class Room:
    """Clients of one app, each behind the trusted proxy with its own address; on a cluster, each may
    reach another member (`start`'s `member`: where nginx's hash of its id sends it)."""

    def __init__(self, client: TestClient, hub: Hub) -> None:
        self.client, self.hub = client, hub
        self.addresses: dict[int, str] = {}
        self.members: dict[int, TestClient] = {}

    async def get(self, mp: MultiPoints, path: str) -> str:
        member = self.members.get(id(mp), self.client)
        response = await member.get(
            URL(path, encoded=True), headers={"X-Forwarded-For": self.addresses[id(mp)]}
        )
        assert response.status == 200
        return await response.text()

    async def start(self, mp: MultiPoints, address: str, member: TestClient | None = None) -> str:
        """ServerZagram.connect for a guest: guestLogin, then changeLang; its answer ("" or a refusal)."""
        self.addresses[id(mp)] = address
        if member is not None:
            self.members[id(mp)] = member
        answer = await self.get(
            mp, f"/a.kropki?co=guestLogin&idGracza={mp.secret}&opis={encode(mp.my_name)}&lang=ru"
        )
        if answer == "":
            await self.get(mp, f"/a.kropki?idGracza={mp.secret}&co=changeLang&na=ru")
        return answer

    async def poll(self, *clients: MultiPoints) -> None:
        for mp in clients:
            mp.handle_text(await self.get(mp, mp.url()))
            assert not mp.failures, mp.failures

    async def game(self, ala: MultiPoints, bob: MultiPoints) -> str:
        """Ala invites Bob, Bob accepts, both sit at the table: its number."""
        ala.invite("*Bob", CLEAN)
        await self.poll(ala, bob)
        bob.accept_invite()
        await self.poll(bob, ala, bob)
        return str(max(uid for uid, table in self.hub.tables.items() if table.room is not None))


async def room_of(aiohttp_client: AiohttpClient, settings: Settings) -> Room:
    proxied = dataclasses.replace(settings, trusted_proxies=("127.0.0.1",), unlimited=())
    hub = Hub(timers=ManualTimers(), rng=random.Random(5))
    return Room(await served(aiohttp_client, proxied, hub), hub)


async def a_game_and_a_private_word(room: Room) -> tuple[str, MultiPoints, MultiPoints]:
    ala, bob = MultiPoints("*Ala", "111111"), MultiPoints("*Bob", "222222")
    assert await room.start(ala, HOME) == "" and await room.start(bob, BOB) == ""
    await room.poll(ala, bob)
    uid = await room.game(ala, bob)
    bob.send_private("*Ala", "good luck")
    await room.poll(bob, ala)
    first = ala if room.hub.tables[int(uid)].room.blue == "*Ala" else bob  # type: ignore[union-attr]
    first.make_move(uid, 5, 5)
    await room.poll(first, ala, bob)
    return uid, ala, bob


async def talk_of(room: Room, mp: MultiPoints, bob: MultiPoints) -> list[tuple[str, str, str]]:
    """The conversation with Bob as `mp` reads it: its history asked for (`c<n>.get._*Bob`, as the zagram
    client asks), then a new line from Bob."""
    mp.send_chat("get", "_*Bob")
    await room.poll(mp)
    bob.send_private("*Ala", "still there?")
    await room.poll(bob, mp)
    return mp.private


async def plays_on(room: Room, uid: str, ala: MultiPoints, bob: MultiPoints) -> None:
    """The next two moves of the game, each shown on both boards as the server has it."""
    game = room.hub.tables[int(uid)].room.game  # type: ignore[union-attr]
    for x in (7, 9):
        mover = ala if (game.to_move == 1) == (room.hub.tables[int(uid)].room.blue == "*Ala") else bob  # type: ignore[union-attr]
        mover.make_move(uid, x, x)
        await room.poll(mover, ala, bob)
    assert len(game.moves) == 3
    assert ala.tabs[uid].dots == bob.tabs[uid].dots and len(ala.tabs[uid].dots) == 3
    assert not ala.tabs[uid].refused and not ala.raw


async def test_a_crashed_multipoints_started_again_takes_its_seat_and_its_talk(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """No logout (a crash): the old session is still live when the new client logs in; it ends for
    the new one, which was refused `err.nickInUse` before, and could never have sat again."""
    room = await room_of(aiohttp_client, settings)
    uid, old, bob = await a_game_and_a_private_word(room)
    ala = MultiPoints("*Ala", "333333")  # a new start: a new random id
    assert await room.start(ala, HOME_AGAIN) == ""
    await room.poll(ala)
    assert uid in ala.tabs and not ala.disposed  # at her table again, board and all
    assert ala.tabs[uid].dots == bob.tabs[uid].dots
    assert await talk_of(room, ala, bob) == [("*Bob", "*Bob", "good luck"), ("*Bob", "*Bob", "still there?")]
    await plays_on(room, uid, ala, bob)
    await room.poll(old)  # the old client, if it still ran, is told its session is over
    assert old.disposed


async def test_multipoints_started_again_after_its_logout_or_a_time_out_sits_again(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    room = await room_of(aiohttp_client, settings)
    uid, old, bob = await a_game_and_a_private_word(room)
    await room.get(old, f"/a.kropki?playerId={old.secret}&co=usunGracza")  # disconnectServer at exit
    ala = MultiPoints("*Ala", "444444")
    assert await room.start(ala, HOME) == ""
    await room.poll(ala)
    assert uid in ala.tabs
    assert await talk_of(room, ala, bob) == [("*Bob", "*Bob", "good luck"), ("*Bob", "*Bob", "still there?")]
    await plays_on(room, uid, ala, bob)

    room.hub.timers.advance(POLL_TIMEOUT + 1)  # and once more: this time her session timed out
    room.hub.sweep()
    assert "*Ala" not in [player.nick for player in room.hub.players.values()]
    again = MultiPoints("*Ala", "555555")
    assert await room.start(again, HOME_AGAIN) == ""
    await room.poll(again)
    assert uid in again.tabs
    assert (await talk_of(room, again, bob))[:2] == [
        ("*Bob", "*Bob", "good luck"),
        ("*Bob", "*Bob", "still there?"),
    ]


async def test_a_stranger_with_the_nick_gets_neither_the_seat_nor_the_talk(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    room = await room_of(aiohttp_client, settings)
    uid, old, bob = await a_game_and_a_private_word(room)
    stranger = MultiPoints("*Ala", "666666")
    assert await room.start(stranger, STRANGER) == "err.nickInUse"  # while Ala's session lives
    await room.get(old, f"/a.kropki?playerId={old.secret}&co=usunGracza")
    assert await room.start(stranger, STRANGER) == ""  # the nick is free: anyone may take it
    await room.poll(stranger)
    assert uid not in stranger.tabs
    assert await talk_of(room, stranger, bob) == [("*Bob", "*Bob", "still there?")]  # none of the earlier
    stranger.subscribe(uid)
    await room.poll(stranger)
    stranger.make_move(uid, 11, 11)
    await room.poll(stranger)
    assert len(room.hub.tables[int(uid)].room.game.moves) == 1  # type: ignore[union-attr]
    ala = MultiPoints("*Ala", "777777")  # Ala herself, meanwhile, is held out by the stranger
    assert await room.start(ala, HOME) == "err.nickInUse"


async def test_the_seat_and_the_talk_wait_for_her_across_a_restart(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """The seat's network and the hidden conversations are in the journal (seat and hide entries)."""
    room = await room_of(aiohttp_client, settings)
    uid, old, bob = await a_game_and_a_private_word(room)
    await room.get(old, f"/a.kropki?playerId={old.secret}&co=usunGracza")
    await room.client.close()

    room = await room_of(aiohttp_client, settings)  # the same database: the table comes back
    ala = MultiPoints("*Ala", "888888")
    assert await room.start(ala, HOME_AGAIN) == ""
    await room.poll(ala)
    assert uid in ala.tabs
    ala.send_chat("get", "_*Bob")
    await room.poll(ala)
    assert ala.private == [("*Bob", "*Bob", "good luck")]
