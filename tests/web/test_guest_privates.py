"""A registered player's setting "no private lines from guests" over HTTP with the real app, read as
MultiPoints reads a reply (tests/web/zagram.py); kept with the account across a new login and a clean
restart on the same database (SQLite, or PostgreSQL under scripts/with-postgres)."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.app import create_app
from server.config import Settings
from server.web.common import HUB_KEY, STORE_KEY
from tests.store.test_accounts import registered_id
from tests.web.test_auth import auth, register
from tests.web.test_ignoring import guests, private_from
from tests.web.test_stream import chat_texts
from tests.web.zagram import Zagram

BLOCKED = "Bob does not accept your private messages."


def told(lines: list[str]) -> list[str]:
    return [text for _, kind, text in chat_texts(lines) if kind == "e"]


async def registered(client: TestClient, nick: str) -> Zagram:
    assert await register(client, nick) == "ok.zarejestrowalem."
    player = Zagram(client, registered_id(nick, "pw"), nick)
    await player.poll()
    return player


async def logged_in_again(client: TestClient, player: Zagram) -> None:
    """A new session of the account: the old one ends, the next login reads the account again."""
    assert await player.get(co="usunGracza", playerId=player.secret) == ""
    login = await auth(client, co="loguj", opisGracza=player.nick, idGracza=player.secret)
    assert login.startswith("ok.zalogowanyNaSerwer."), login
    player.seen = player.acknowledged = 0
    player.commands = []
    await player.poll()


async def test_twenty_guests_lines_a_minute_stop_and_registered_players_still_write(
    client: TestClient,
) -> None:
    """The attack: guests made at every start, each writing once; with the setting none reaches Bob,
    each writer reads what an ignored one reads, and Carol's line comes through."""
    bob, carol = await registered(client, "Bob"), await registered(client, "Carol")
    assert await bob.get(co="dodajWpis", idGracza=bob.secret, table="guestprivates", newMsgs="off") == ""
    assert (await bob.poll()).lines(0, "a") == ["aguestprivates.off"]

    flood = await guests(client, *[f"*Junk{n}" for n in range(20)])
    for guest in flood:
        guest.say("_Bob", "cheap gold")
        assert told((await guest.poll()).lines(0)) == [BLOCKED]
    carol.say("_Bob", "a game?")
    await carol.poll()
    lines = (await bob.poll()).lines(0)
    assert [text for _, _, text in chat_texts(lines)] == ["a game?"]
    assert all(private_from(lines, guest.nick) == [] for guest in flood)

    junk = flood[0]
    oneself = await junk.get(co="dodajWpis", idGracza=junk.secret, table="guestprivates", newMsgs="off")
    assert oneself == "err.accountsOnly"


async def test_the_setting_outlives_a_new_login_and_a_restart(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await aiohttp_client(create_app(settings))
    bob = await registered(client, "Bob")
    bob.send("c", "guestprivates", "off")
    assert (await bob.poll()).lines(0, "a") == ["aguestprivates.off"]
    await client.app[HUB_KEY].persistence.flush()
    await logged_in_again(client, bob)
    (ala,) = await guests(client, "*Ala")
    ala.say("_Bob", "after a new login")
    assert told((await ala.poll()).lines(0)) == [BLOCKED]
    await client.close()  # a clean stop

    client = await aiohttp_client(create_app(settings))
    for player in (bob, ala):
        player.client = client
    ala.say("_Bob", "after the restart")
    assert told((await ala.poll()).lines(0)) == [BLOCKED]  # the session came back with the setting
    bob.send("c", "guestprivates")
    assert (await bob.poll()).lines(0, "a") == ["aguestprivates.off"]

    bob.send("c", "guestprivates", "on")
    await bob.poll()
    await client.app[HUB_KEY].persistence.flush()
    await logged_in_again(client, bob)
    ala.say("_Bob", "welcome back")
    await ala.poll()
    assert private_from((await bob.poll()).lines(0), "*Ala") == ["welcome back"]
    await client.close()


async def test_a_player_renamed_while_online_keeps_the_setting_they_change(client: TestClient) -> None:
    """Kept by the account's number: a session still under the old nick after an admin's rename."""
    bob = await registered(client, "Bob")
    await client.app[HUB_KEY].persistence.flush()
    await client.app[STORE_KEY].accounts.rename("Bob", "Robert")  # what `kropki-server user rename` does
    bob.send("c", "guestprivates", "off")
    await bob.poll()
    await client.app[HUB_KEY].persistence.flush()
    account = await client.app[STORE_KEY].accounts.authenticate("Bob", bob.secret)
    assert account is not None and account.nick == "Robert" and account.refuses_guest_privates
