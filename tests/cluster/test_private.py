"""Private chat between players of two members, on a real Redis and PostgreSQL, read as MultiPoints
reads chat lines (tests/web/zagram.py): both see the line, each member keeps the conversation, and a
line that reaches nobody comes back to its writer as a server line instead of vanishing."""

from __future__ import annotations

from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.web.common import HUB_KEY
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import ala_and_cyd, said, until


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
