"""Ignoring a player and the limits on private lines to one player, over HTTP with the real app, read as
MultiPoints reads a reply (tests/web/zagram.py); and the lists kept across sessions and a clean restart
on the same database (SQLite, or PostgreSQL under scripts/with-postgres)."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.app import create_app
from server.config import Settings
from server.hub.limits import CHAT_LINES_PER_MINUTE, PRIVATE_FROM_GUESTS_PER_MINUTE
from server.web.common import HUB_KEY, STORE_KEY
from tests.store.test_accounts import registered_id
from tests.web.test_auth import auth, register
from tests.web.test_stream import chat_texts
from tests.web.zagram import Zagram


async def guests(client: TestClient, *nicks: str) -> list[Zagram]:
    players = [Zagram(client, f"id{n:05d}", nick) for n, nick in enumerate(nicks)]
    for player in players:
        assert await player.login() == ""
        await player.poll()
    return players


def private_from(lines: list[str], nick: str) -> list[str]:
    """The texts of the private lines `nick` wrote, as the reader of `lines` sees them."""
    found = []
    for line in lines:
        if line.startswith("ca") and "-" in line.split(".")[1]:
            _, pair, side, text = line[2:].split(".", 3)
            if side in ("1", "2") and pair.split("-")[int(side) - 1] == nick:
                found.append(text)
    return found


async def test_thirty_players_sending_six_hundred_private_lines_to_one_within_a_minute(
    client: TestClient,
) -> None:
    """Issue 43.7's figure: the recipient gets the limits' worth, every sender is told the rest was
    not sent, and nothing else changes (the refused lines are in nobody's conversation)."""
    target, *senders = await guests(client, "*Target", *[f"*Flood{n}" for n in range(30)])
    refused = 0
    told: dict[str, list[str]] = {}
    for sender in senders:
        for n in range(CHAT_LINES_PER_MINUTE):  # 20 each, as many as a player may say in a minute
            sender.say("_*Target", f"{sender.nick} says {n}")
        reply = await sender.poll()
        assert reply.processed == CHAT_LINES_PER_MINUTE
        told[sender.nick] = [text for _, kind, text in chat_texts(reply.lines(0)) if kind == "e"]

    lines = (await target.poll()).lines(0)
    received = [text for sender in senders for text in private_from(lines, sender.nick)]
    assert len(received) == PRIVATE_FROM_GUESTS_PER_MINUTE  # all guests: their share of the 30
    assert told["*Flood0"][0] == (
        "At most 10 private lines a minute to *Target until they write to you; it was not sent."
    )
    assert told["*Flood29"][0] == (
        "*Target is getting too many private messages just now; it was not sent. "
        "Please try again in a minute."
    )
    for sender in senders:
        assert told[sender.nick], sender.nick
        refused += len(told[sender.nick])
        sender.send("c", "get", "_*Target")
        history = private_from((await sender.poll()).lines(0), sender.nick)
        assert len(history) == CHAT_LINES_PER_MINUTE - len(told[sender.nick])  # only what the target got
    assert refused == 600 - PRIVATE_FROM_GUESTS_PER_MINUTE


async def test_ignore_and_unignore_in_the_stream_and_with_the_old_endpoint(client: TestClient) -> None:
    ala, bob, cyd = await guests(client, "*Ala", "*Bob", "*Cyd")
    ala.send("c", "ignore", "_*Bob")
    assert (await ala.poll()).lines(0, "n") == ["n*Bob"]

    bob.say(0, "lobby line from bob")
    bob.say("_*Ala", "private line from bob")
    bob.send("v", 0, "s.*Ala.0808stanF0.0.0")
    told = [text for _, kind, text in chat_texts((await bob.poll()).lines(0)) if kind == "e"]
    assert told == ["*Ala does not accept your private messages.", "*Ala does not accept your invitations."]
    cyd.say(0, "lobby line from cyd")
    await cyd.poll()
    reply = await ala.poll()
    assert [text for nick, _, text in chat_texts(reply.lines(0))] == ["lobby line from cyd"]
    assert reply.lines(0, "vg") == []

    # the built-in client's way: dodajWpis with table=unignore; the list comes in the stream
    assert await ala.get(co="dodajWpis", idGracza=ala.secret, table="unignore", newMsgs="_*Bob") == ""
    oneself = await ala.get(co="dodajWpis", idGracza=ala.secret, table="ignore", newMsgs="_*Ala")
    assert oneself == "err.badNick"
    assert (await ala.poll()).lines(0, "n") == ["n"]
    bob.say(0, "bob again")
    await bob.poll()
    assert [text for _, _, text in chat_texts((await ala.poll()).lines(0))] == ["bob again"]


async def test_the_lists_outlive_a_restart_a_registered_players_the_session_too(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await aiohttp_client(create_app(settings))
    assert await register(client, "Alice") == "ok.zarejestrowalem."
    alice = Zagram(client, registered_id("Alice", "pw"), "Alice")
    cyd, bob = await guests(client, "*Cyd", "*Bob")
    await alice.poll()
    for player in (alice, cyd):
        player.send("c", "ignore", "_*Bob")
        assert (await player.poll()).lines(0, "n") == ["n*Bob"]
    await client.close()  # a clean stop

    client = await aiohttp_client(create_app(settings))
    for player in (alice, cyd, bob):
        player.client = client
    bob.say(0, "after the restart")
    await bob.poll()
    for player in (alice, cyd):  # their sessions came back with their lists
        texts = [text for _, _, text in chat_texts((await player.poll()).lines(0))]
        assert "after the restart" not in texts
        player.send("c", "ignore")
        assert (await player.poll()).lines(0, "n") == ["n*Bob"]

    for player in (alice, cyd):  # a new session: the account keeps its list, a guest's ends
        assert await player.get(co="usunGracza", playerId=player.secret) == ""
    login = await auth(client, co="loguj", opisGracza="Alice", idGracza=alice.secret)
    assert login.startswith("ok.zalogowanyNaSerwer.")
    assert await cyd.login() == ""
    for player in (alice, cyd):
        player.seen = 0
        await player.poll()
        player.send("c", "ignore")
    assert (await alice.poll()).lines(0, "n") == ["n*Bob"]
    assert (await cyd.poll()).lines(0, "n") == ["n"]
    await client.close()


async def stored_list(client: TestClient, player: Zagram, login_nick: str) -> list[str]:
    """The player's list as the account keeps it: their `n` line in a session logged in after this one."""
    await client.app[HUB_KEY].persistence.flush()
    assert await player.get(co="usunGracza", playerId=player.secret) == ""
    login = await auth(client, co="loguj", opisGracza=login_nick, idGracza=player.secret)
    assert login.startswith("ok.zalogowanyNaSerwer."), login
    player.seen = player.acknowledged = 0
    player.commands = []
    await player.poll()
    player.send("c", "ignore")
    return (await player.poll()).lines(0, "n")


async def test_a_deleted_account_stays_off_the_list_of_a_player_online_who_changes_it(
    client: TestClient,
) -> None:
    """An admin's `user delete` takes the account's nick off every list; Carol, online then, still held
    it, and each change of her list wrote the whole list back, so whoever registered the nick next was
    ignored by her from her next login on."""
    assert await register(client, "Alice") == "ok.zarejestrowalem."
    alice = Zagram(client, registered_id("Alice", "pw"), "Alice")
    assert await alice.get(co="usunGracza", playerId=alice.secret) == ""
    assert await register(client, "Carol") == "ok.zarejestrowalem."
    carol = Zagram(client, registered_id("Carol", "pw"), "Carol")
    await carol.poll()
    for nick in ("Alice", "Bob"):
        carol.send("c", "ignore", f"_{nick}")
    assert (await carol.poll()).lines(0, "n")[-1] == "nAlice.Bob"
    await client.app[HUB_KEY].persistence.flush()
    await client.app[STORE_KEY].accounts.delete("Alice")  # what `kropki-server user delete` does

    carol.send("c", "ignore", "_Cyd")
    assert (await carol.poll()).lines(0, "n") == ["nAlice.Bob.Cyd"]  # this session goes on as it was
    assert await stored_list(client, carol, "Carol") == ["nBob.Cyd"]


async def test_a_player_renamed_while_online_keeps_the_changes_of_their_list(client: TestClient) -> None:
    """A player renamed by an admin plays on under the old nick until their next login; the changes of
    their list in that session were looked up by the old nick, found no account, and were lost."""
    assert await register(client, "Bob") == "ok.zarejestrowalem."
    bob = Zagram(client, registered_id("Bob", "pw"), "Bob")
    await bob.poll()
    bob.send("c", "ignore", "_Dan")
    await bob.poll()
    await client.app[HUB_KEY].persistence.flush()
    await client.app[STORE_KEY].accounts.rename("Bob", "Robert")  # what `kropki-server user rename` does

    bob.send("c", "ignore", "_*Cyd")
    bob.send("c", "unignore", "_Dan")
    assert (await bob.poll()).lines(0, "n") == ["n*Cyd.Dan", "n*Cyd"]
    assert await stored_list(client, bob, "Bob") == ["n*Cyd"]
