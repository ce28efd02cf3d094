"""A player's requests reaching another member than the one serving them (a member was added or
removed behind nginx): the session moves there, on a real Redis and PostgreSQL, and the player goes on
with the same id, nick, k and game, as MultiPoints reads the replies (tests/web/zagram.py)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from server.config import Settings
from server.store.serverlock import MEMBER_LOCK_CLASS
from server.web.common import HUB_KEY, MEMBERSHIP_KEY, STORE_KEY
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import guest, two_members
from tests.cluster.test_members import member
from tests.cluster.test_tables import at_table, colours, has, invited_table
from tests.conftest import served
from tests.store.breakers import PostgresProxy
from tests.web.test_auth import registered_id
from tests.web.zagram import Zagram


def same_player_through(client: TestClient, player: Zagram) -> Zagram:
    """The same client (id, nick, msgNo, command numbers) now reaching `client`'s member."""
    moved = Zagram(client, player.secret, player.nick)
    moved.seen, moved.acknowledged, moved.commands = player.seen, player.acknowledged, player.commands
    return moved


async def test_a_session_moves_to_the_member_its_requests_reach_and_its_game_goes_on(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    ala = await guest(a, "alaAla11", "*Ala")
    bob = await guest(a, "bobBob22", "*Bob")
    uid = await invited_table(ala, bob)
    ala_blue = colours(await at_table(ala, uid, has("pr")), uid, ala, bob)[0] is ala
    first = ala if ala_blue else bob
    first.send("s", uid, "aa")
    await first.poll(b=True)
    await at_table(bob if ala_blue else ala, uid, has("aa"))
    k = (await ala.poll(b=True)).processed

    moved = same_player_through(b, ala)  # nginx now sends Ala to member b
    reply = await moved.poll(b=True)
    assert reply.status == "ok" and reply.processed == k  # the same session: logged in, the same k
    state = reply.sections.get(uid) or await at_table(moved, uid, has("pr"))
    assert any("aa" in line for line in state)  # the game as it stands, now from member a's table
    assert "*ala" not in a.app[HUB_KEY].by_nick and "*ala" in b.app[HUB_KEY].by_nick
    lines = await at_table(bob, uid, has("pa*Ala"))
    assert any(line.startswith("pd") and "*Ala" in line for line in lines)  # left a, back through b

    second = bob if ala_blue else moved
    second.send("s", uid, "hh")
    await second.poll(b=True)
    await at_table(moved if ala_blue else bob, uid, has("hh"))
    if ala_blue:
        moved.send("s", uid, "ab")  # Ala plays on from member b
        await moved.poll(b=True)
        await at_table(bob, uid, has("ab"))

    # an id nobody serves stays unknown: a poll with it is answered as one from a stranger
    stranger = Zagram(b, "nobody99x", "*Nobody")
    assert (await stranger.poll(b=True)).status == "sd"


async def test_a_session_of_a_member_that_stopped_is_taken_by_the_member_its_requests_reach(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    ala = await guest(a, "alaAla11", "*Ala")
    ala.say(0, "before")
    await ala.poll(b=True)
    k = (await ala.poll(b=True)).processed
    # member a stops without ending its sessions (as a restart does), and does not come back
    await a.close()
    moved = same_player_through(b, ala)
    reply = await moved.poll(b=True)
    assert reply.status == "ok" and reply.processed == k
    assert "*ala" in b.app[HUB_KEY].by_nick


async def test_the_tables_of_a_member_that_is_gone_are_taken_over_and_their_games_go_on(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    ala = await guest(a, "alaAla11", "*Ala")
    bob = await guest(a, "bobBob22", "*Bob")
    uid = await invited_table(ala, bob, "0808stanF0.60.5")  # a game with clocks
    blue, red = colours(await at_table(ala, uid, has("pr")), uid, ala, bob)
    for player, where in [(blue, "aa"), (red, "hh"), (blue, "ab")]:
        player.send("s", uid, where)
        await player.poll(b=True)  # acknowledged (k) once stored
        await at_table(red if player is blue else blue, uid, has(where))

    await a.close()  # member a is gone; its players' requests now reach member b
    blue, red = same_player_through(b, blue), same_player_through(b, red)
    for player in (blue, red):
        state = await at_table(player, uid, lambda lines: any(line.startswith("pr") for line in lines))
        assert all(any(where in line for line in state) for where in ("aa", "hh", "ab"))  # no move lost
    assert uid in b.app[HUB_KEY].tables  # member b owns it now
    red.send("s", uid, "hg")
    await red.poll(b=True)
    await at_table(blue, uid, has("hg"))


async def test_a_registered_players_id_from_a_stranger_does_not_move_her_session(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """Issue 43.1 in a cluster: her id sent to another member from a network she never logged in from
    is answered as an unknown id, and her session stays where it is (no look-up moves it there)."""
    proxied = dataclasses.replace(postgres, trusted_proxies=("127.0.0.1",), unlimited=())
    a = await served(aiohttp_client, member(proxied, redis_server, "kropki-a", 8081))
    b = await served(aiohttp_client, member(proxied, redis_server, "kropki-b", 8082))
    secret = registered_id("Alice", "pw")
    home = {"X-Forwarded-For": "198.51.100.7"}
    register = f"/auth.py?co=rejestruj&opisGracza=Alice&idGracza={secret}"
    assert await (await a.get(register, headers=home)).text() == "ok.zarejestrowalem."

    stranger = Zagram(b, secret, "Alice")
    stranger.headers = {"X-Forwarded-For": "203.0.113.9"}
    assert (await stranger.poll(b=True)).status == "sd"
    assert "alice" in a.app[HUB_KEY].by_nick and "alice" not in b.app[HUB_KEY].by_nick

    alice = Zagram(b, secret, "Alice")  # nginx now sends her own requests to member b: her session moves
    alice.headers = home
    assert (await alice.poll(b=True)).status == "ok"
    assert "alice" in b.app[HUB_KEY].by_nick


async def test_a_session_of_a_member_restarting_waits_for_it_and_is_never_served_twice(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """issue 44: a member restarting under its name holds its lock and reads its sessions back before it
    listens on Redis. A request that reached another member meanwhile took the session from the store
    at once, and both served it: two numberings of its commands, its nick held twice. Now the request
    waits, and the session comes over once the restarted member hands it over (here: once it is gone)."""
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    ala = await guest(a, "alaAla11", "*Ala")
    ala.say(0, "before")
    k = (await ala.poll(b=True)).processed
    number = a.app[STORE_KEY].writer.member
    await a.close()
    restarting = create_async_engine(postgres.db_url, isolation_level="AUTOCOMMIT")
    async with restarting.connect() as connection:  # member a starting again: its lock held
        lock = {"kind": MEMBER_LOCK_CLASS, "number": number}
        await connection.execute(text("SELECT pg_advisory_lock(:kind, :number)"), lock)
        moved = same_player_through(b, ala)
        polling = asyncio.create_task(moved.poll(b=True))
        await asyncio.sleep(2)
        assert not polling.done(), "answered while the session's member holds it"
        assert "*ala" not in b.app[HUB_KEY].by_nick
        await connection.execute(text("SELECT pg_advisory_unlock(:kind, :number)"), lock)
        reply = await polling
    await restarting.dispose()
    assert reply.status == "ok" and reply.processed == k
    assert "*ala" in b.app[HUB_KEY].by_nick


async def test_a_session_is_handed_over_while_redis_has_just_come_back(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """For a lifetime after Redis returns no member is taken for dead, but one that answers still hands
    its sessions over: the request does not wait for that lifetime to end."""
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    ala = await guest(a, "alaAla11", "*Ala")
    k = (await ala.poll(b=True)).processed
    redis_server.restart()
    membership = b.app[MEMBERSHIP_KEY]
    deadline = asyncio.get_running_loop().time() + 10
    while not (membership.connected and membership.judged_members is None):
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.1)
    await asyncio.sleep(2)  # both members listen again (they subscribe within a heartbeat)
    reply = await same_player_through(b, ala).poll(b=True)
    assert reply.status == "ok" and reply.processed == k
    assert membership.judged_members is None, "brought before the lifetime was over"
    assert "*ala" in b.app[HUB_KEY].by_nick and "*ala" not in a.app[HUB_KEY].by_nick


async def test_a_session_is_brought_once_the_database_is_back(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer, tmp_path: Path
) -> None:
    """issue 44: a request whose session had to be brought while PostgreSQL restarted was answered
    `err.storage`, which MultiPoints takes as the end of its session. Now it waits for the database."""
    a = await served(aiohttp_client, member(postgres, redis_server, "kropki-a", 8081))
    proxy = PostgresProxy(tmp_path / "pg", postgres.db_url)
    await proxy.start()
    through_proxy = dataclasses.replace(postgres, db_url=proxy.url)
    b = await served(aiohttp_client, member(through_proxy, redis_server, "kropki-b", 8082))
    ala = await guest(a, "alaAla11", "*Ala")
    k = (await ala.poll(b=True)).processed
    await a.close()  # member a is gone: its session is taken from the store
    await proxy.break_storage()  # member b's database restarting
    polling = asyncio.create_task(same_player_through(b, ala).poll(b=True))
    await asyncio.sleep(1.5)
    assert not polling.done(), "answered while the database was away"
    await proxy.start()
    reply = await polling
    assert reply.status == "ok" and reply.processed == k
    # member b stops while its database is there: stopped after the proxy, its last writes retried for
    # 8 s against nothing, and a connection being opened meanwhile was once left unclosed (a
    # ResourceWarning at the teardown, which the suite makes an error)
    await b.close()
    await proxy.close()
