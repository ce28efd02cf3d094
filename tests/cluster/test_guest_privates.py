"""A registered player's "no private lines from guests" across two members, on a real Redis and
PostgreSQL: the member serving the player refuses a guest's line from the other member, takes an
account's, and the setting goes with the session when its requests move to the other member."""

from __future__ import annotations

from pytest_aiohttp import AiohttpClient

from server.config import Settings
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import guest, said, two_members, until
from tests.cluster.test_private import told
from tests.cluster.test_routing import same_player_through
from tests.store.test_accounts import registered_id
from tests.web.test_auth import register
from tests.web.zagram import Zagram

REFUSED = told("Bob does not accept your private messages")


def lists_ala(lines: list[str]) -> bool:
    """The lobby's people (the whole list, or one arrived) hold the guest of the other member."""
    return any(line.startswith(("pr", "pa")) and "*Ala" in line[2:].split(".") for line in lines)


async def test_a_guest_of_the_other_member_is_refused_before_and_after_the_session_moves(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    a, b = await two_members(aiohttp_client, postgres, redis_server)
    assert await register(a, "Bob") == "ok.zarejestrowalem."
    assert await register(b, "Carol") == "ok.zarejestrowalem."
    bob, carol = (
        Zagram(a, registered_id("Bob", "pw"), "Bob"),
        Zagram(b, registered_id("Carol", "pw"), "Carol"),
    )
    await carol.poll(b=True)
    ala = await guest(b, "alaAla11", "*Ala")
    bob.send("c", "guestprivates", "off")
    await until(bob, lambda lines: "aguestprivates.off" in lines and lists_ala(lines))

    ala.say("_Bob", "cheap gold")
    lines = await until(ala, REFUSED)
    assert not said("cheap gold")(lines)  # never shown as sent: member a refused it
    carol.say("_Bob", "a game please")
    await carol.poll(b=True)
    assert not said("cheap gold")(await until(bob, said("a game please")))

    moved = same_player_through(b, bob)  # nginx now sends Bob to member b, which reads his account
    moved.send("c", "guestprivates")
    await until(moved, lambda lines: "aguestprivates.off" in lines)
    ala.say("_Bob", "now on your member")
    await until(ala, lambda lines: REFUSED(lines) and not said("now on your member")(lines))
    carol.say("_Bob", "still here")
    await carol.poll(b=True)
    assert not said("now on your member")(await until(moved, said("still here")))
