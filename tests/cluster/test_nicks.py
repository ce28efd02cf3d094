"""One name space across members, on a real Redis and PostgreSQL: a nick online on one member (or one
that looks like it) is refused on another, as one member refuses it; it is free again once its player
leaves or its member stops, and the claims come back by themselves after Redis restarts empty. A guest
back under its nick from its network with a new id takes its session over from the other member, as on
one member (docs/protocol.md, "A guest who comes back").

The members stand behind a trusted proxy, as behind nginx, so that X-Forwarded-For names each player's
address: the stranger who types a nick comes from another network than its player."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Iterator
from pathlib import Path

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient
from redis import Redis
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from server.cluster.membership import MEMBERS_KEY
from server.cluster.nicks import NICKS_PREFIX, NickClaims
from server.config import Settings
from server.protocol.codec import look_key, nick_key
from server.web.common import HUB_KEY, STORE_KEY
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import WITHIN, guest
from tests.cluster.test_members import member
from tests.cluster.test_take_back import members_one_behind_a_proxy
from tests.conftest import served
from tests.store.breakers import until
from tests.web.test_auth import registered_id
from tests.web.zagram import Zagram

ADDRESSES = {  # each player's address, as the proxy names it
    "alaAla11": "198.51.100.7",
    "alaNew99": "198.51.100.9",  # Ala again, her provider's next address: the same network
    "alaTooLong1": "198.51.100.9",  # from her network, with an id no guest may have
    "bobBob22": "192.0.2.5",
    "strStr99": "203.0.113.9",  # a stranger
}


async def members_behind_a_proxy(
    aiohttp_client: AiohttpClient, settings: Settings, redis: RedisServer, unlimited: tuple[str, ...] = ()
) -> tuple[TestClient, TestClient]:
    """Members a and b, trusting X-Forwarded-For from loopback, with no address exempt from limits but
    `unlimited` (--unlimited)."""
    proxied = {"trusted_proxies": ("127.0.0.1",), "unlimited": unlimited}
    first = dataclasses.replace(member(settings, redis, "kropki-a", 8081), **proxied)
    second = dataclasses.replace(member(settings, redis, "kropki-b", 8082), **proxied)
    return await served(aiohttp_client, first), await served(aiohttp_client, second)


def player(client: TestClient, secret: str, nick: str) -> Zagram:
    someone = Zagram(client, secret, nick)
    someone.headers = {"X-Forwarded-For": ADDRESSES[secret]}
    return someone


async def guest_login(client: TestClient, secret: str, nick: str) -> str:
    """The answer to guestLogin, as MultiPoints reads it: empty, or `err.<code>`."""
    return await player(client, secret, nick).login()


async def admitted_within(client: TestClient, secret: str, nick: str, seconds: float = WITHIN) -> float:
    """Tries the login until it is admitted; how long that took."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    while (answer := await guest_login(client, secret, nick)) != "":
        assert answer == "err.nickInUse", answer
        assert loop.time() - start < seconds, f"{nick} still refused after {seconds} s"
        await asyncio.sleep(0.2)
    return loop.time() - start


async def registered_alice(client: TestClient) -> str:
    """Alice's account, registered on `client`'s member and logged out there: her id."""
    secret = registered_id("Alice", "pw")
    home = {"X-Forwarded-For": ADDRESSES["alaAla11"]}
    register = f"/auth.py?co=rejestruj&opisGracza=Alice&idGracza={secret}"
    assert await (await client.get(register, headers=home)).text() == "ok.zarejestrowalem."
    alice = Zagram(client, secret, "Alice")
    alice.headers = home
    assert await alice.get(co="usunGracza", idGracza=secret) == ""
    return secret


async def alice_login(client: TestClient, secret: str) -> str:
    login = f"/auth.py?co=loguj&opisGracza=Alice&idGracza={secret}"
    return await (await client.get(login, headers={"X-Forwarded-For": ADDRESSES["alaAla11"]})).text()


async def test_a_nick_online_on_one_member_is_refused_on_the_other_until_its_player_leaves(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b = await members_behind_a_proxy(aiohttp_client, postgres, redis_server)
    assert await guest_login(a, "alaAla11", "*Ala") == ""
    assert await guest_login(b, "strStr99", "*Ala") == "err.nickInUse"
    assert await guest_login(b, "strStr99", "*ALA") == "err.nickInUse"  # the same nick, other case
    assert await guest_login(b, "strStr99", "*A1a") == "err.nickInUse"  # one that looks like it
    assert await guest_login(a, "alaAla11", "*Ala") == ""  # its own session, logging in again
    assert await guest_login(b, "bobBob22", "*Bob") == ""
    assert await guest_login(a, "strStr99", "*Bob") == "err.nickInUse"  # both ways

    assert await player(a, "alaAla11", "*Ala").get(co="usunGracza", idGracza="alaAla11") == ""
    await admitted_within(b, "strStr99", "*Ala")  # at once: a frees a nick it holds no session of
    assert await guest_login(a, "alaAla11", "*Ala") == "err.nickInUse"  # now b's


async def test_a_nick_logged_out_on_one_member_is_free_at_once_on_the_other(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """Ala quits MultiPoints (`usunGracza`) and starts it again: a new random id, which nginx may send
    to another member. Before, that member refused her `err.nickInUse` until her old member's next
    reconciliation of its claims (up to 2 s), and MultiPoints stops at that answer. The old member,
    asked to give the session up, holds none any more: it frees the nick first."""
    a, b = await members_behind_a_proxy(aiohttp_client, postgres, redis_server)
    assert await guest_login(a, "alaAla11", "*Ala") == ""
    assert await player(a, "alaAla11", "*Ala").get(co="usunGracza", idGracza="alaAla11") == ""
    assert await guest_login(b, "alaNew99", "*Ala") == ""
    assert await guest_login(a, "strStr99", "*Ala") == "err.nickInUse"  # b's now, as it should be
    assert await guest_login(a, "strStr99", "*A1a") == "err.nickInUse"  # and what looks like it


async def test_a_registered_nick_logged_out_on_one_member_logs_in_at_once_on_the_other(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """A login through /auth.py asks no member to give anything up: before, it found the nick claimed by
    the member she had just left until that member's next reconciliation (up to 2 s). Now a session's
    end frees its nick in Redis at once."""
    a, b = await members_behind_a_proxy(aiohttp_client, postgres, redis_server)
    secret = await registered_alice(a)
    assert (await alice_login(b, secret)).startswith("ok.zalogowanyNaSerwer.")
    redis = Redis.from_url(redis_server.url, decode_responses=True)
    assert redis.sismember(NICKS_PREFIX + "kropki-b", "n:alice")  # b's now
    redis.close()


async def test_a_refused_guest_login_claims_nothing(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """A stranger's guest login under a registered nick (no '*': no guest may have it) is refused.
    Before, it claimed the nick in Redis first and the claim stayed until the member's next heartbeat
    (up to 2 s): Alice's login with her password on the other member was refused `nickInUse`, and a
    stranger asking again every second kept her out."""
    a, b = await members_behind_a_proxy(aiohttp_client, postgres, redis_server)
    secret = await registered_alice(a)
    assert await guest_login(a, "strStr99", "Alice") == "err.badNick"
    assert await guest_login(a, "alaTooLong1", "*Ala") == "err.badId"
    redis = Redis.from_url(redis_server.url, decode_responses=True)
    assert not redis.smembers(NICKS_PREFIX + "kropki-a") & {"n:alice", "n:*ala"}
    redis.close()
    assert (await alice_login(b, secret)).startswith("ok.zalogowanyNaSerwer.")


async def test_a_login_refused_after_its_claim_lets_the_nick_go_at_once(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """Member a is full when Alice logs in there: refused once her nick was claimed, the claim is let go
    before the answer, and her login on member b goes on at once (before, not until a's next heartbeat)."""
    full = dataclasses.replace(member(postgres, redis_server, "kropki-a", 8081), max_players=1)
    a = await served(aiohttp_client, full)
    b = await served(aiohttp_client, member(postgres, redis_server, "kropki-b", 8082))
    secret = await registered_alice(a)
    assert await guest_login(a, "bobBob22", "*Bob") == ""
    assert await alice_login(a, secret) == "nieOk.serverFull"
    assert (await alice_login(b, secret)).startswith("ok.zalogowanyNaSerwer.")


async def test_a_guest_back_on_the_same_member_keeps_its_nick_claimed(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """Her old session's end frees no nick that her new session holds."""
    a, b = await members_behind_a_proxy(aiohttp_client, postgres, redis_server)
    assert await guest_login(a, "alaAla11", "*Ala") == ""
    assert await guest_login(a, "alaNew99", "*Ala") == ""  # MultiPoints started again: a new id
    assert "alaAla11" not in a.app[HUB_KEY].players
    assert await guest_login(b, "strStr99", "*Ala") == "err.nickInUse"


async def test_a_session_moved_to_another_member_keeps_its_nick_from_a_stranger(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """nginx's members change and Ala's next request reaches member b: her session moves there. Before,
    b claimed her nick at its next heartbeat and a let it go at its own; a stranger logging in on a in
    between was admitted, and the nick was online on both members. Now b claims it as it takes her
    session over."""
    a, b = await members_behind_a_proxy(aiohttp_client, postgres, redis_server)
    assert await guest_login(a, "alaAla11", "*Ala") == ""
    assert (await player(b, "alaAla11", "*Ala").poll(b=True)).status == "ok"  # nginx now sends her to b
    assert "*ala" not in a.app[HUB_KEY].by_nick and "*ala" in b.app[HUB_KEY].by_nick
    assert await guest_login(a, "strStr99", "*Ala") == "err.nickInUse"
    assert await guest_login(a, "strStr99", "*A1a") == "err.nickInUse"


async def test_a_session_moving_to_another_member_keeps_its_nick_while_the_first_one_stores_it(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """Member a lets Ala's session go as b asks for it, and stores it before b takes it: in between
    neither lists her. Before, a stranger's login on a was admitted then (b claimed her nick only once it
    had taken the session), and the nick was online on both members. Now b holds the nick before it
    asks. The sessions table is locked against writes, holding a's store of the session."""
    a, b = await members_behind_a_proxy(aiohttp_client, postgres, redis_server)
    assert await guest_login(a, "alaAla11", "*Ala") == ""
    await until(lambda: a.app[HUB_KEY].players["alaAla11"].stored)
    engine = create_async_engine(postgres.db_url)
    try:
        async with engine.connect() as holding:
            await holding.begin()
            await holding.execute(text("LOCK TABLE sessions IN EXCLUSIVE MODE"))  # reads go on
            moving = asyncio.create_task(player(b, "alaAla11", "*Ala").poll(b=True))
            await until(lambda: "*ala" not in a.app[HUB_KEY].by_nick)
            assert await guest_login(a, "strStr99", "*Ala") == "err.nickInUse"
            await holding.rollback()
        assert (await moving).status == "ok"
    finally:
        await engine.dispose()
    assert "*ala" in b.app[HUB_KEY].by_nick and "*ala" not in a.app[HUB_KEY].by_nick


async def test_a_stopped_members_nicks_are_free_at_once(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b = await members_behind_a_proxy(aiohttp_client, postgres, redis_server)
    assert await guest_login(a, "alaAla11", "*Ala") == ""
    assert await guest_login(b, "strStr99", "*Ala") == "err.nickInUse"
    await a.close()
    assert await guest_login(b, "strStr99", "*Ala") == ""


async def test_the_claims_come_back_after_redis_restarts_empty(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b = await members_behind_a_proxy(aiohttp_client, postgres, redis_server)
    assert await guest_login(a, "alaAla11", "*Ala") == ""
    redis_server.restart()  # empty: no member, no claim
    redis = Redis.from_url(redis_server.url, decode_responses=True)
    deadline = asyncio.get_running_loop().time() + WITHIN
    # member a writes its whole set again by itself (until then a stranger could take the nick on b:
    # the window docs/cluster.md names)
    while not redis.sismember(NICKS_PREFIX + "kropki-a", "n:*ala"):
        assert asyncio.get_running_loop().time() < deadline, "member a did not claim its nicks again"
        await asyncio.sleep(0.1)
    assert redis.sismember(MEMBERS_KEY, "kropki-a")
    redis.close()
    assert await guest_login(b, "strStr99", "*Ala") == "err.nickInUse"


async def test_a_guest_back_with_a_new_id_takes_its_session_and_seat_over_from_the_other_member(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """MultiPoints draws a new id at every start; nginx's hash of the new id sends Ala to member b while
    her old session, on member a, lives on for up to 60 s. Before, member b refused her `err.nickInUse`,
    and MultiPoints exits on any answer but `ok`: she could not come back to her game in time."""
    a, b = await members_behind_a_proxy(aiohttp_client, postgres, redis_server)
    ala, bob = player(a, "alaAla11", "*Ala"), player(a, "bobBob22", "*Bob")
    for someone in (ala, bob):
        assert await someone.login() == ""
        await someone.poll(b=True, msg_no="0.0")
    ala.send("v", 0, "s.*Bob.0808stanF0.0.0")
    await ala.poll(b=True)
    bob.send("v", 0, "a")
    uid = next(table for table in (await bob.poll(b=True)).sections if table)
    ala.send("s", uid, "aa")
    ala.send("c", "ignore", "_*Troll")
    assert (await ala.poll(b=True)).lines(0, "n") == ["n*Troll"]

    assert await guest_login(b, "strStr99", "*Ala") == "err.nickInUse"  # from another network
    assert await guest_login(b, "alaTooLong1", "*Ala") == "err.badId"  # refused: her session goes on
    assert (await ala.poll(b=True)).status == "ok"
    again = player(b, "alaNew99", "*Ala")
    assert await again.login() == ""
    assert (await ala.poll(b=True)).status == "sd"  # the old client, if it still runs, stops
    deadline = asyncio.get_running_loop().time() + WITHIN  # once ran out under a heavily loaded make test
    while uid not in (await again.poll(b=True)).sections:  # sat at her game again, at member a, through b
        assert asyncio.get_running_loop().time() < deadline, "Ala was not seated at her game again"
        await asyncio.sleep(0.05)
    bob.send("s", uid, "hh")
    await bob.poll(b=True)
    again.send("s", uid, "bb")
    await again.poll(b=True)
    deadline = asyncio.get_running_loop().time() + WITHIN
    while not any(  # her move, whichever colour the invitation gave her
        "[bb]" in line for line in (await bob.poll(b=True)).lines(uid) if line.startswith("s")
    ):
        assert asyncio.get_running_loop().time() < deadline, "Ala's move from member b did not reach the game"
        await asyncio.sleep(0.05)
    again.send("c", "ignore", "")
    assert (await again.poll(b=True)).lines(0, "n") == ["n*Troll"]  # whom she ignored came along


async def test_while_the_holders_storage_fails_the_guest_come_back_is_told_so_and_nothing_ends(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer, tmp_path: Path
) -> None:
    """Member b holds Ala's session and cannot store its end: her login with a new id on member a is
    answered `err.storage`, as any command storage must keep, and her session on b goes on. Before, b
    ended the session all the same and a refused the login `err.nickInUse`: she lost both."""
    async with members_one_behind_a_proxy(aiohttp_client, postgres, redis_server, tmp_path) as (a, b, proxy):
        ala = await guest(b, "alaAla11", "*Ala")
        await proxy.break_storage()
        ala.send("c", "ignore", "_*Troll")  # a write b cannot store: b finds its storage failing
        await ala.poll(b=True)
        await until(lambda: b.app[STORE_KEY].writer.storage_failure is not None)

        assert await Zagram(a, "alaNew99", "*Ala").login() == "err.storage"
        assert (await ala.poll(b=True)).status == "ok"

        await proxy.mend()
        await until(lambda: b.app[STORE_KEY].writer.storage_failure is None)
        assert await Zagram(a, "alaNew99", "*Ala").login() == ""
        assert (await ala.poll(b=True)).status == "sd"


async def test_a_session_given_up_as_storage_fails_is_ended_and_the_login_told_so(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer, tmp_path: Path
) -> None:
    """Storage fails after member b ended the session, before it stored the end: the login is answered
    `err.storage`, and the nick is free at once (nobody holds it any more), so her next login goes on."""
    async with members_one_behind_a_proxy(aiohttp_client, postgres, redis_server, tmp_path) as (a, b, proxy):
        ala = await guest(b, "alaAla11", "*Ala")
        await proxy.hold()  # b's writes hang: the end waits to be stored
        login = asyncio.create_task(Zagram(a, "alaNew99", "*Ala").login())
        await until(lambda: "alaAla11" not in b.app[HUB_KEY].players)
        await proxy.break_storage()

        assert await login == "err.storage"
        assert (await ala.poll(b=True)).status == "sd"
        await proxy.mend()
        await until(lambda: b.app[STORE_KEY].writer.storage_failure is None)
        assert await Zagram(a, "alaNew99", "*Ala").login() == ""


@contextlib.contextmanager
def writes_paused(redis_server: RedisServer) -> Iterator[None]:
    """Redis holds every write (CLIENT PAUSE ... WRITE) for PAUSE seconds: a member's call to it is in
    flight meanwhile, for as long as a test needs to make something happen then."""
    with Redis.from_url(redis_server.url) as admin:
        admin.execute_command("CLIENT", "PAUSE", round(PAUSE * 1000), "WRITE")
        yield


PAUSE = 0.4  # under the member's bound on one call to Redis (server/cluster/calls.py, CALL_TIMEOUT)


def lone_claims(redis_server: RedisServer, online: set[str]) -> NickClaims:
    """Member a's claims, its people online the nicks in `online`."""

    def keys() -> tuple[list[str], list[str]]:
        return [nick_key(nick) for nick in online], [look_key(nick) for nick in online]

    def holder(nick: str) -> str | None:
        return next((someone for someone in online if nick_key(someone) == nick_key(nick)), None)

    return NickClaims(redis_server.url, "kropki-a", keys, holder, every=3600)


async def test_a_nick_let_go_while_redis_comes_back_is_settled_without_an_error(
    redis_server: RedisServer,
) -> None:
    """Redis came back (the membership's `reconnected`) while a nick's claim was being freed. Before,
    the change's end took the set for known when the notice had just made it unknown, and failed with a
    TypeError: a refused login so answered `err.internal` instead of `err.nickInUse`."""
    claims = lone_claims(redis_server, set())
    await claims.start()
    try:
        await claims.hold("*Ala")
        with writes_paused(redis_server):
            letting_go = asyncio.create_task(claims.let_go("*Ala"))
            await asyncio.sleep(PAUSE / 4)
            assert not letting_go.done()
            claims.reconnected(True)
            await letting_go
    finally:
        await claims.stop()


async def test_a_set_written_while_redis_comes_back_is_written_whole_at_the_next_heartbeat(
    redis_server: RedisServer,
) -> None:
    """A heartbeat's change of the set was in flight when Redis came back: it may have reached the Redis
    that then restarted empty, so the set is written whole at the next heartbeat. Before, the heartbeat
    took the set for known, and a nick lost with Redis stayed unclaimed, free for a stranger's login on
    another member, for as long as its player stayed."""
    claims = lone_claims(redis_server, {"*Ala"})
    await claims.start()
    try:
        with Redis.from_url(redis_server.url, decode_responses=True) as redis:
            assert redis.sismember(NICKS_PREFIX + "kropki-a", "n:*ala")
            redis.delete(NICKS_PREFIX + "kropki-a")  # lost as with a restart
            with writes_paused(redis_server):
                beat = asyncio.create_task(claims.reconcile())
                await asyncio.sleep(PAUSE / 4)
                assert not beat.done()
                claims.reconnected(True)
                await beat
            await claims.reconcile()
            assert redis.sismember(NICKS_PREFIX + "kropki-a", "n:*ala")
    finally:
        await claims.stop()


async def test_calls_waiting_for_their_turn_when_the_member_stops_end_quietly(
    redis_server: RedisServer,
) -> None:
    """A call queued behind another (a session moving here, a given-up nick's reconciliation) when the
    member stops. Before, it found the client gone only after its turn came, and failed with an
    AttributeError ("Task exception was never retrieved" in the log)."""
    claims = lone_claims(redis_server, set())
    await claims.start()
    with writes_paused(redis_server):
        in_flight = asyncio.create_task(claims.hold("*Ala"))
        await asyncio.sleep(PAUSE / 4)
        queued = [asyncio.create_task(claims.hold("*Bob")), asyncio.create_task(claims.reconcile())]
        await asyncio.sleep(0)
        await claims.stop()
        await asyncio.gather(in_flight, *queued)
