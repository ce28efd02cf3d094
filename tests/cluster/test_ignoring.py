"""Ignoring and the limits on private lines to one player across two members, on a real Redis and
PostgreSQL: the member that serves the recipient checks what reaches them, whichever member serves the
writer, and the writer's member keeps nothing of a line the other refused."""

from __future__ import annotations

import asyncio

from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.hub.limits import (
    CHAT_LINES_PER_MINUTE,
    PRIVATE_FROM_GUESTS_PER_MINUTE,
    PRIVATE_FROM_ONE_PER_MINUTE,
)
from server.web.common import HUB_KEY, STORE_KEY
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import ala_and_cyd, guest, said, two_members, until
from tests.cluster.test_private import told
from tests.cluster.test_routing import same_player_through
from tests.store.test_accounts import registered_id
from tests.web.test_auth import auth, register
from tests.web.test_ignoring import private_from
from tests.web.test_stream import chat_texts
from tests.web.zagram import Zagram


async def test_a_player_of_another_member_that_is_ignored_is_hidden_and_refused(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b, ala, cyd = await ala_and_cyd(aiohttp_client, postgres, redis_server)
    dan = await guest(b, "danDan44", "*Dan")
    ala.send("c", "ignore", "_*cyd")  # a nick of the other member, typed in another case
    assert "n*Cyd" in await until(ala, lambda lines: "n*Cyd" in lines)

    cyd.say(0, "cyd in the lobby")
    cyd.say("_*Ala", "cyd in private")
    cyd.send("v", 0, "s.*Ala.0808stanF0.0.0")
    refused = told("does not accept your private messages")
    lines = await until(cyd, lambda lines: refused(lines) and told("does not accept your invitations")(lines))
    assert not said("cyd in private")(lines)  # never shown as sent: member a refused it
    dan.say(0, "dan after cyd")  # on the same member's channel as Cyd's line, after it
    await dan.poll(b=True)

    seen = await until(ala, said("dan after cyd"))
    assert [text for nick, _, text in chat_texts(seen) if nick.startswith("*Cyd")] == []
    assert not [line for line in seen if line.startswith("vg")]
    cyd.send("c", "get", "_*Ala")  # member b kept nothing of the refused line either
    assert any(".nochat." in line for line in await until(cyd, lambda lines: "nochat" in "".join(lines)))

    ala.send("c", "unignore", "_*Cyd")
    await until(ala, lambda lines: "n" in lines)
    cyd.say("_*Ala", "heard again")
    sent = (await cyd.poll(b=True)).lines(0)
    await until(ala, said("heard again"))
    # kept on member b once member a took it, and shown to its writer then
    assert said("heard again")(sent) or await until(cyd, said("heard again"))


async def test_the_limits_on_lines_to_one_player_count_the_writers_of_both_members(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    far = [await guest(b, f"farFar{n}0", f"*Far{n}") for n in range(2)]
    tia = await guest(a, "tiaTia11", "*Tia")
    near = [await guest(a, "nearNr00", "*Near0")]  # the guests' share of the 30: 20, two writers' worth
    for player in far:
        await until(player, lambda lines: "pa*Tia" in lines)

    replies = {}
    for writer in [*near, *far]:  # 60 lines to *Tia: 20 from each of three, on both members
        for n in range(CHAT_LINES_PER_MINUTE):
            writer.say("_*Tia", f"{writer.nick} {n}")
        replies[writer.nick] = (await writer.poll(b=True)).lines(0)
    for writer, refusal, count in (
        (far[0], "At most 10 private lines", CHAT_LINES_PER_MINUTE - PRIVATE_FROM_ONE_PER_MINUTE),
        (far[1], "is getting too many private messages", CHAT_LINES_PER_MINUTE),
    ):
        first = replies[writer.nick]
        lines = first + await until(
            writer,
            lambda lines, first=first, refusal=refusal, count=count: (
                sum(refusal in line for line in first + lines) >= count
            ),
        )
        assert len(private_from(lines, writer.nick)) == CHAT_LINES_PER_MINUTE - count  # echoed once kept

    lines = await until(tia, lambda lines: len(private_from(lines, "*Far0")) >= PRIVATE_FROM_ONE_PER_MINUTE)
    lines += (await tia.poll(b=True)).lines(0)
    received = {writer.nick: len(private_from(lines, writer.nick)) for writer in [*near, *far]}
    assert received == {"*Near0": 10, "*Far0": 10, "*Far1": 0}
    assert sum(received.values()) == PRIVATE_FROM_GUESTS_PER_MINUTE


async def test_a_renamed_players_session_moving_to_another_member_keeps_the_changes_of_their_list(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """A player renamed by an admin plays on under the old nick until their next login, on whichever
    member serves them: the member their requests moved to looked the account up by that nick, found
    none, and served them as a guest, whose list goes with the session: their changes were lost."""
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    assert await register(a, "Bob") == "ok.zarejestrowalem."
    bob = Zagram(a, registered_id("Bob", "pw"), "Bob")
    await bob.poll(b=True)
    await a.app[STORE_KEY].accounts.rename("Bob", "Robert")  # what `kropki-server user rename` does

    moved = same_player_through(b, bob)  # nginx now sends Bob to member b
    moved.send("c", "ignore", "_*Cyd")
    assert "n*Cyd" in await until(moved, lambda lines: "n*Cyd" in lines)
    await b.app[HUB_KEY].persistence.flush()
    assert await moved.get(co="usunGracza", playerId=moved.secret) == ""
    for _ in range(50):  # a session that moved leaves its nick held a moment after it ends
        login = await auth(b, co="loguj", opisGracza="Bob", idGracza=moved.secret)
        if login != "nieOk.nickInUse":
            break
        await asyncio.sleep(0.1)
    assert login.startswith("ok.zalogowanyNaSerwer."), login
    moved.seen = moved.acknowledged = 0
    moved.commands = []
    await moved.poll(b=True)
    moved.send("c", "ignore")
    assert "n*Cyd" in await until(moved, lambda lines: any(line.startswith("n") for line in lines))
