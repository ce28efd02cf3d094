"""Private chat between players of two members, on a real Redis and PostgreSQL, read as MultiPoints
reads chat lines (tests/web/zagram.py): both see the line, each member keeps the conversation, and a
line that reaches nobody comes back to its writer as a server line instead of vanishing."""

from __future__ import annotations

import asyncio
import dataclasses

from pytest_aiohttp import AiohttpClient
from redis import Redis

from server.config import Settings
from server.web.common import HUB_KEY
from tests.cluster.conftest import ACL_RULES, RedisServer
from tests.cluster.test_lobby import WITHIN, ala_and_cyd, guest, said, until
from tests.cluster.test_members import member
from tests.cluster.test_nicks import admitted_within, members_behind_a_proxy, player
from tests.conftest import served


def told(text: str):  # type: ignore[no-untyped-def]
    """A server line for this player alone (empty nick) holding `text`."""
    return lambda lines: any(line.startswith("ca") and "..e." in line and text in line for line in lines)


async def test_players_of_two_members_write_to_each_other(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)

    ala.say("_*Cyd", "hi cyd")
    lines = await until(ala, said("hi cyd"))
    mine = next(line for line in lines if line.endswith(".hi cyd"))
    assert ".*Ala-*Cyd.1." in mine  # the conversation's name, the writer's side: as one member writes it
    assert mine in await until(cyd, said("hi cyd"))  # the same line, the same id, on the other member

    cyd.say("_*ala", "hi ala")  # the nick as typed, in another case
    await cyd.poll(b=True)
    reply = await until(ala, said("hi ala"))
    assert any(line.endswith(".*Ala-*Cyd.2.hi ala") for line in reply)

    # each member keeps the whole conversation for its own player
    cyd.send("c", "get", "_*Ala")
    history = await until(cyd, lambda lines: sum(".*Ala-*Cyd." in line for line in lines) >= 2)
    assert [line.rsplit(".", 1)[1] for line in history if ".*Ala-*Cyd." in line][-2:] == ["hi cyd", "hi ala"]


async def test_a_line_to_nobody_is_refused_and_one_that_reaches_nobody_comes_back(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)

    ala.say("_*Nobody", "hello?")
    await until(ala, told("*Nobody is not online"))

    # member a's lobby still lists a player member b no longer has (its pd not yet heard): b sends
    # the line back, and its writer is told
    a.app[HUB_KEY].take_lobby_line("kropki-b", "pa*Zed", False)
    ala.say("_*Zed", "are you there?")
    await until(ala, told("Your message to *Zed was not delivered"))

    # a member listed but not listening (it died, its announcement not yet expired): no subscriber
    a.app[HUB_KEY].take_lobby_line("kropki-ghost", "pa*Gus", False)
    ala.say("_*Gus", "boo")
    await until(ala, told("Your message to *Gus was not delivered"))


async def test_a_stranger_who_takes_a_guests_nick_on_the_other_member_reads_none_of_its_conversation(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """Member b keeps a copy of what *Ala of member a and *Bob of member b said. Ala's session ended on
    member a, which closed its own copy on her side; b's copy stayed open, and a stranger from another
    network who took the nick *Ala on member b read it all with `get._*Bob`. The guest herself, back
    from her network, reads it again, as on one member (docs/protocol.md, "A guest who comes back")."""
    a, b = await members_behind_a_proxy(aiohttp_client, postgres, redis_server)
    ala, bob = player(a, "alaAla11", "*Ala"), player(b, "bobBob22", "*Bob")
    for someone in (ala, bob):
        assert await someone.login() == ""
        await someone.poll(b=True, msg_no="0.0")
    await until(ala, lambda lines: "pa*Bob" in lines)
    ala.say("_*Bob", "my secret plan")
    await until(ala, said("my secret plan"))  # sent with her next poll, kept once member b took it
    await until(bob, said("my secret plan"))
    bob.say("_*Ala", "good luck")
    await until(bob, said("good luck"))
    await until(ala, said("good luck"))
    assert await ala.get(co="usunGracza", idGracza="alaAla11") == ""

    await admitted_within(b, "strStr99", "*Ala")  # free once member a let the nick go (2 s)
    stranger = player(b, "strStr99", "*Ala")
    await stranger.poll(b=True, msg_no="0.0")
    stranger.send("c", "get", "_*Bob")
    lines = await until(stranger, lambda lines: any(".*Ala-*Bob.nochat." in line for line in lines))
    assert not [line for line in lines if "secret" in line or "luck" in line]
    assert await stranger.get(co="usunGracza", idGracza="strStr99") == ""

    await admitted_within(b, "alaNew99", "*Ala")
    back = player(b, "alaNew99", "*Ala")
    await back.poll(b=True, msg_no="0.0")
    back.send("c", "get", "_*Bob")
    await until(back, lambda lines: said("my secret plan")(lines) and said("good luck")(lines))


async def test_a_guest_back_on_the_other_member_after_its_session_ended_reads_its_conversation(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """*Ala and *Bob, guests of member a, talk; Ala closes MultiPoints (`usunGracza`) and starts it
    again, and its new id reaches member b. b asks the other members for what a session of *Ala from her
    network left closed at them, and she reads her talk with Bob there, and his next line. Before, it
    stayed on member a, hers only if she happened to reach a again."""
    a, b = await members_behind_a_proxy(aiohttp_client, postgres, redis_server)
    ala, bob = player(a, "alaAla11", "*Ala"), player(a, "bobBob22", "*Bob")
    for someone in (ala, bob):
        assert await someone.login() == ""
        await someone.poll(b=True, msg_no="0.0")
    ala.say("_*Bob", "my secret plan")
    await until(ala, said("my secret plan"))  # sent with her next poll
    await until(bob, said("my secret plan"))
    bob.say("_*Ala", "good luck")
    await until(bob, said("good luck"))
    await until(ala, said("good luck"))
    assert await ala.get(co="usunGracza", idGracza="alaAla11") == ""

    await admitted_within(b, "alaNew99", "*Ala")
    back = player(b, "alaNew99", "*Ala")
    await back.poll(b=True, msg_no="0.0")
    deadline = asyncio.get_running_loop().time() + WITHIN
    while True:  # member a's answer comes a moment after her login: she asks for the history until then
        back.send("c", "get", "_*Bob")
        lines = (await back.poll(b=True)).sections.get(0, [])
        if said("my secret plan")(lines) and said("good luck")(lines):
            break
        assert asyncio.get_running_loop().time() < deadline, lines
        await asyncio.sleep(0.1)
    bob.say("_*Ala", "still there?")
    await until(bob, said("still there?"))
    await until(back, said("still there?"))


async def publishing_refused(aiohttp_client: AiohttpClient, postgres: Settings, redis: RedisServer):  # type: ignore[no-untyped-def]
    """Members a and b on a Redis whose ACL can take b's right to publish away; *Ala on a, *Cyd on b."""
    a, b = [
        await served(
            aiohttp_client,
            dataclasses.replace(
                member(postgres, redis, name, port),
                redis_url=redis.acl_user(name, "member-password", ACL_RULES),
            ),
        )
        for name, port in (("kropki-a", 8081), ("kropki-b", 8082))
    ]
    ala, cyd = await guest(a, "alaAla11", "*Ala"), await guest(b, "cydCyd33", "*Cyd")
    await until(ala, lambda lines: "pa*Cyd" in lines)
    return ala, cyd


def refuse_b_to_a(admin: Redis) -> None:
    """Member b may no longer publish to member a's channel (its own and the lobby's it keeps): its
    refusals then name that channel in Redis's ACL log, apart from the lobby's."""
    admin.execute_command(
        "ACL", "SETUSER", "kropki-b", "resetchannels", "&kropki:lobby", "&kropki:to:kropki-b"
    )


async def refused_again(admin: Redis) -> None:
    """Until Redis has refused member b one more message to member a than it had (an answer lost, or
    lost again), then lets b publish again, so that what follows tests the answer's sending again.
    Lifted at once: an answer is sent again for 10 s only (RESENT_FOR), which a test that waited for two
    refusals in a row outlived on a loaded host."""

    def refused() -> int:
        return sum(
            entry["count"]
            for entry in admin.acl_log()
            if entry["username"] == "kropki-b" and entry["object"] == "kropki:to:kropki-a"
        )

    before = refused()
    deadline = asyncio.get_running_loop().time() + WITHIN
    while refused() == before:
        assert asyncio.get_running_loop().time() < deadline, "member b sent member a nothing"
        await asyncio.sleep(0.05)
    admin.execute_command("ACL", "SETUSER", "kropki-b", "&kropki:*")


async def test_the_answer_to_a_private_line_lost_on_its_way_back_is_sent_again(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_with_password: RedisServer
) -> None:
    """Member b takes *Ala's line to *Cyd (Cyd reads it) and its answer is lost: Redis refuses b's
    publishing, as a failing Redis would. Before, the answer was dropped: Ala never saw her line nor had
    it in her history on member a, while Cyd had it. The answer is sent again until Redis takes it, and
    taken once."""
    ala, cyd = await publishing_refused(aiohttp_client, postgres, redis_with_password)
    with Redis.from_url(redis_with_password.url, decode_responses=True) as admin:
        refuse_b_to_a(admin)
        ala.say("_*Cyd", "are you there?")
        await ala.poll(b=True)
        await until(cyd, said("are you there?"))
        await refused_again(admin)

    await until(ala, said("are you there?"))
    ala.send("c", "get", "_*Cyd")
    history = await until(ala, lambda lines: any(".*Ala-*Cyd." in line for line in lines))
    assert [line for line in history if ".*Ala-*Cyd." in line][0].endswith(".are you there?")
    assert len([line for line in history if ".*Ala-*Cyd." in line]) == 1  # kept once


async def test_a_refusal_of_a_private_line_lost_on_its_way_back_is_sent_again(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_with_password: RedisServer
) -> None:
    """*Cyd ignores *Ala, and member b's refusal of her line is lost as above: before, it never reached
    her; now it is sent again until Redis takes it."""
    ala, cyd = await publishing_refused(aiohttp_client, postgres, redis_with_password)
    cyd.send("c", "ignore", "_*Ala")
    await until(cyd, lambda lines: "n*Ala" in lines)
    with Redis.from_url(redis_with_password.url, decode_responses=True) as admin:
        refuse_b_to_a(admin)
        ala.say("_*Cyd", "hello??")
        await ala.poll(b=True)
        await refused_again(admin)

    await until(ala, told("does not accept"))
