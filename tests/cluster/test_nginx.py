"""Members behind a real nginx with the shipped cluster site (deploy/nginx-kropki-cluster.conf), on a
real Redis and PostgreSQL, the players parsing replies as MultiPoints does (tests/web/zagram.py): each
player's requests stay on one member, players of different members play each other, and when a member
joins or stops, the players whose requests now reach another member carry on there with the same id.
A bot's requests, which carry no id, stay on one member whatever addresses they come from."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

from aiohttp import ClientSession, TCPConnector
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from examples.random_bot import Api, play
from server.config import Settings
from server.web.common import HUB_KEY, STORE_KEY
from tests.cluster.conftest import Nginx, RedisServer
from tests.cluster.test_invitations import invitation_lines
from tests.cluster.test_lobby import two_members, until
from tests.cluster.test_members import member
from tests.cluster.test_tables import at_table, colours, has
from tests.conftest import served
from tests.web.test_bots import FREE_GAME, Feed, bearer
from tests.web.zagram import Zagram

PLAYERS = 24  # enough that the hash puts some on every member (all on one of 3: (1/3)^23)


def where(members: dict[str, TestClient], player: Zagram) -> list[str]:
    """The members whose roster has the player (exactly one, unless something went wrong)."""
    key = player.nick.casefold()
    return [name for name, client in members.items() if key in client.app[HUB_KEY].by_nick]


async def test_players_stay_on_their_member_play_across_members_and_move_when_members_change(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer, nginx: Nginx
) -> None:
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    members = {"a": a, "b": b}
    nginx.members([a.server.port, b.server.port])
    async with ClientSession(base_url=nginx.url) as web:
        players = [Zagram(web, f"plr{n:02d}xyz", f"*P{n:02d}") for n in range(PLAYERS)]  # type: ignore[arg-type]
        for player in players:
            assert await player.login() == ""
            await player.poll(b=True, msg_no="0.0")
        first = {player.nick: where(members, player) for player in players}
        assert all(len(found) == 1 for found in first.values()), first
        assert {found[0] for found in first.values()} == {"a", "b"}  # the hash spread them
        for player in players:  # the next requests reach the same member: nothing moves
            assert (await player.poll(b=True)).status == "ok"
        assert {player.nick: where(members, player) for player in players} == first

        # two players of different members play each other, through nginx
        ala = next(player for player in players if first[player.nick] == ["a"])
        bob = next(player for player in players if first[player.nick] == ["b"])
        ala.send("v", 0, f"s.{bob.nick}.0808stanF0.0.0")
        await ala.poll(b=True)
        await invitation_lines(bob, lambda lines: any(line.startswith("vg") for line in lines))
        bob.send("v", 0, "a")
        uid = 0
        while not uid:  # the new table's section, in one of Bob's next replies
            uid = next((table for table in (await bob.poll(b=True)).sections if table), 0)
        state = await at_table(ala, uid, has("pr"))
        blue, red = colours(state, uid, ala, bob)
        blue.send("s", uid, "aa")
        await blue.poll(b=True)
        await at_table(red, uid, has("aa"))

        # a third member joins: the players whose hash now falls to it move there, and go on
        c = await served(aiohttp_client, member(postgres, redis_server, "kropki-c", 8083))
        members["c"] = c
        nginx.members([a.server.port, b.server.port, c.server.port])
        ks = {player.nick: (await player.poll(b=True)).processed for player in players}
        for player in players:
            reply = await player.poll(b=True)
            assert reply.status == "ok" and reply.processed == ks[player.nick], player.nick
        second = {player.nick: where(members, player) for player in players}
        assert all(len(found) == 1 for found in second.values()), second
        assert any(found == ["c"] for found in second.values())
        red.send("s", uid, "hh")  # the game goes on whichever members its players are on now
        await red.poll(b=True)
        await at_table(blue, uid, has("hh"))

        # member c stops (nginx still lists it): its players' requests go to the next member on the
        # ring, which takes their sessions over
        await c.close()
        del members["c"]
        for player in players:
            reply = await player.poll(b=True)
            assert reply.status == "ok", (player.nick, nginx.errors())
        third = {player.nick: where(members, player) for player in players}
        assert all(len(found) == 1 for found in third.values()), third


# addresses of a bot's actions besides its feed's (all on the feed's member by chance: 1 in 2^12)
BOT_ADDRESSES = 12


def from_address(n: int, base_url: str) -> ClientSession:
    """A client whose connections come from 127.0.0.<n> (Linux answers the whole of 127/8)."""
    return ClientSession(base_url=base_url, connector=TCPConnector(local_addr=(f"127.0.0.{n}", 0)))


def lists_robo(lobby: list[str]) -> bool:
    return any(line.startswith("iRobo.") for line in lobby)


async def test_a_bot_whose_requests_come_from_many_addresses_stays_on_one_member(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer, nginx: Nginx
) -> None:
    """The bot API's requests carry no id, and the site sent them by the client's address: a bot on a
    machine with several addresses (IPv4 and IPv6, a pool of NAT addresses) had its requests reach both
    members, each taking its session from the other and dropping the invitation it was answering."""
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    members = {"a": a, "b": b}
    nginx.members([a.server.port, b.server.port])
    token = await a.app[STORE_KEY].bots.create("Robo")

    def serving() -> list[str]:
        return [name for name, client in members.items() if "robo" in client.app[HUB_KEY].by_nick]

    async with from_address(2, nginx.url) as web:
        response = await web.get("/api/bot/stream", headers=bearer(token))
        assert response.status == 200, nginx.errors()
        feed = Feed(response)  # type: ignore[arg-type]
        home = serving()
        assert len(home) == 1
        ala = Zagram(web, "alaAla11", "*Ala")  # type: ignore[arg-type]
        assert await ala.login() == ""
        if not lists_robo((await ala.poll(b=True, msg_no="0.0")).sections[0]):  # she invites whom it lists
            await until(ala, lists_robo)
        ala.send("v", 0, f"s.Robo.{FREE_GAME}")
        await ala.poll(b=True)
        await feed.next("invitation", **{"from": "*Ala"})
        for n in range(3, 3 + BOT_ADDRESSES):
            async with from_address(n, nginx.url) as elsewhere:
                answer = await elsewhere.post("/api/bot/pool/leave", headers=bearer(token))
                assert answer.status == 200, await answer.text()
            assert serving() == home, n
        async with from_address(3 + BOT_ADDRESSES, nginx.url) as elsewhere:
            answer = await elsewhere.post("/api/bot/invitation/accept", headers=bearer(token))
            assert (answer.status, await answer.json()) == (200, {"ok": True})  # still pending
        full = await feed.next("gameFull")
        assert (full["blue"], full["red"]) == ("*Ala", "Robo")
        assert serving() == home


def moves_made(members: dict[str, TestClient]) -> int:
    """The most moves of any game the members run."""
    rooms = [table.room for client in members.values() for table in client.app[HUB_KEY].tables.values()]
    return max((len(room.game.moves) for room in rooms if room is not None), default=0)


async def test_two_bots_finish_their_game_when_nginx_sends_them_to_another_member(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer, nginx: Nginx
) -> None:
    """Two copies of the example bot (examples/random_bot.py, its own HTTP client) play each other
    through nginx; in the middle of the game the operator takes the member of the inviting bot out of
    nginx's list (it keeps running). That bot's next action reaches the other member, which takes its
    session; its feed, still open to the first member, ends with `moved`, the bot opens it again and
    reaches the other member too, and the game is played to its end across the members. A bot's feed
    there began with the owner's last whole state and then the lines since: the bot, told a board
    without its last move and a clock saying it was on move, moved twice, its second move refused, and
    the example bot took the points so refused for points inside realms until it had none to play."""
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    members = {"a": a, "b": b}
    nginx.members([a.server.port, b.server.port])
    store = a.app[STORE_KEY].bots
    inviter, invitee = await store.create("RoboA"), await store.create("RoboB")

    def serving(nick: str) -> list[str]:
        return [name for name, client in members.items() if nick in client.app[HUB_KEY].by_nick]

    async def until(found: Callable[[], object], seconds: float = 30.0) -> None:
        async with asyncio.timeout(seconds):
            while not found():
                await asyncio.sleep(0.05)

    waiting = asyncio.create_task(asyncio.to_thread(play, Api(nginx.url, invitee), 1, None, random.Random(2)))
    try:
        await until(lambda: serving("robob"))
        inviting = asyncio.create_task(
            asyncio.to_thread(play, Api(nginx.url, inviter), 1, "RoboB", random.Random(3))
        )
        await until(lambda: serving("roboa"))
        first = serving("roboa")[0]
        await until(lambda: moves_made(members) >= 6)
        other = "b" if first == "a" else "a"
        nginx.members([members[other].server.port])  # the operator drains the inviter's member
        async with asyncio.timeout(120):
            assert await inviting == 1 and await waiting == 1, nginx.errors()
    finally:  # a bot that has not ended opens its feed again for ever: its token replaced ends it
        await store.issue_token("RoboA")
        await store.issue_token("RoboB")
    assert serving("roboa") == [other] and serving("robob") == [other]
    games = await a.app[STORE_KEY].games.recent("RoboA", 5)
    assert len(games) == 1 and games[0].result, games
