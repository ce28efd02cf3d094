"""Sanctions over the protocol (docs/moderation.md), with the real app and the real database (SQLite,
or PostgreSQL under scripts/with-postgres): a moderator's `co=moderate`, what the sanctioned player
sees, as MultiPoints sees it, and the CLI working on a running server's database."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.cli import main
from server.config import Settings
from server.hub.sanctions import Sanction
from server.web.common import HUB_KEY, STORE_KEY
from server.web.moderation import SANCTIONS_EVERY, refresh
from tests.clients.conversation import log_in, poll
from tests.clients.multipoints import MultiPoints
from tests.cluster.test_members import open_table
from tests.conftest import POSTGRES, served
from tests.store.breakers import PostgresProxy
from tests.store.test_accounts import registered_id
from tests.web.test_auth import auth, auth_from, register
from tests.web.test_stream import AheadTimers, chat_texts
from tests.web.zagram import Zagram

TROLL_HOME, TROLL_NEIGHBOUR, ELSEWHERE = "203.0.113.7", "203.0.113.99", "198.51.100.1"
ANN = registered_id("Ann", "pw")


async def moderator(client: TestClient, nick: str = "Mod", role: str = "moderator") -> Zagram:
    assert await register(client, nick) == "ok.zarejestrowalem."
    await client.app[STORE_KEY].accounts.set_role(nick, role, "test")
    player = Zagram(client, registered_id(nick, "pw"), nick)
    assert (await auth(client, co="loguj", opisGracza=nick, idGracza=player.secret)).startswith("ok.")
    await player.poll()
    return player


async def moderate(by: Zagram, **params: str) -> str:
    return await by.get(co="moderate", idGracza=by.secret, **params)


def from_address(client: TestClient, secret: str, nick: str, address: str) -> Zagram:
    """A guest whose requests come through the trusted proxy from `address`."""
    player = Zagram(client, secret, nick)
    player.headers = {"X-Forwarded-For": address}
    return player


async def troll_online(
    aiohttp_client: AiohttpClient, settings: Settings
) -> tuple[TestClient, Zagram, Zagram]:
    """The app behind a trusted proxy, a moderator, and *Troll logged in from TROLL_HOME."""
    client = await served(aiohttp_client, dataclasses.replace(settings, trusted_proxies=("127.0.0.1",)))
    mod = await moderator(client)
    troll = from_address(client, "troll1", "*Troll", TROLL_HOME)
    assert await troll.login() == ""
    return client, mod, troll


async def test_a_muted_multipoints_player_is_told_once_in_russian_and_every_line_is_refused(
    client: TestClient,
) -> None:
    """MultiPoints shows a server line: ServerZagram.handleMessage's `ca` branch,
    `else if (currentRoom.equals("0")) gui.chatReceived(this, "0", nick, chatMessage)` for a line whose
    nick has no `-`, so the refusal reaches its lobby chat as a line with an empty nick, never as an
    error that would stop its polling."""
    mod = await moderator(client)
    troll = MultiPoints("*Troll", "777123")
    await log_in(client, troll)  # MultiPoints logs in with lang=ru
    await poll(client, troll)
    bob = Zagram(client, "bob999", "*Bob")
    assert await bob.login() == ""
    await bob.poll()

    assert await moderate(mod, what="mute", whom="*Troll", reason="spam", **{"for": "2h"}) == "ok"
    await poll(client, troll)
    told = [text for nick, text in troll.lobby_chat if nick == ""]
    assert len(told) == 1 and told[0].startswith("Вам запрещено писать до 20") and "(spam)" in told[0]

    troll.send_chat("0", "BUY CHEAP GOLD")
    troll.send_private("*Bob", "BUY CHEAP GOLD")
    await poll(client, troll)
    await poll(client, troll)
    refusals = [text for nick, text in troll.lobby_chat if nick == ""]
    assert len(refusals) == 3 and not troll.failures and not troll.disposed
    assert all(text.startswith("Вам запрещено писать") for text in refusals)
    assert "GOLD" not in str((await bob.poll()).sections)

    assert await moderate(mod, what="unmute", whom="*Troll", reason="behaves") == "ok"
    troll.send_chat("0", "sorry")
    await poll(client, troll)
    assert ("*Troll", "1", "sorry") in chat_texts((await bob.poll()).lines(0))


async def test_only_moderators_sanction_and_never_a_moderator_or_an_admin(client: TestClient) -> None:
    mod = await moderator(client)
    await moderator(client, "Mod2")
    admin = await moderator(client, "Boss", "admin")
    guest = Zagram(client, "gus123", "*Gus")
    assert await guest.login() == ""
    assert await moderate(guest, what="kick", whom="Mod") == "err.notModerator"
    assert await moderate(mod, what="kick", whom="Mod2") == "err.cannotSanction"
    assert await moderate(mod, what="ban", whom="Boss") == "err.cannotSanction"
    assert await moderate(mod, what="mute", whom="Mod") == "err.cannotSanction"
    assert await moderate(mod, what="mute", whom="*Gus", **{"for": "2x"}) == "err.badDuration"
    assert await moderate(mod, what="jail", whom="*Gus") == "err.badCommand"
    roles = [(line.action, line.target) for line in await client.app[STORE_KEY].moderation.log()]
    assert roles == [("set-role", "Mod"), ("set-role", "Mod2"), ("set-role", "Boss")]  # nothing refused
    assert await moderate(admin, what="mute", whom="Mod2", reason="rude", **{"for": "1h"}) == "ok"
    assert await moderate(admin, what="kick", whom="*Gus", reason="go") == "ok"
    assert "gus123" not in client.app[HUB_KEY].players
    log = await client.app[STORE_KEY].moderation.log()
    assert [(line.actor, line.action, line.target, line.reason) for line in log[3:]] == [
        ("Boss", "mute", "Mod2", "rude"),
        ("Boss", "kick", "*Gus", "go"),
    ]


async def test_a_moderator_cannot_sanction_an_admin_by_naming_a_look_alike_of_their_nick(
    client: TestClient,
) -> None:
    """`B0ss` has no account, but a sanction of it names its look, which is the admin's."""
    mod = await moderator(client)
    boss = await moderator(client, "Boss", "admin")
    for what in ("ban", "mute", "kick"):
        assert await moderate(mod, what=what, whom="B0ss", reason="x") == "err.cannotSanction"
    assert await moderate(mod, what="ban", whom="BOSS", reason="x") == "err.cannotSanction"
    assert await client.app[STORE_KEY].moderation.active() == []
    assert boss.secret in client.app[HUB_KEY].players
    assert await moderate(boss, what="mute", whom="M0d", reason="rude", **{"for": "1h"}) == "ok"


async def test_a_banned_guest_does_not_come_back_from_its_network_under_a_fresh_nick(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client, mod, troll = await troll_online(aiohttp_client, settings)
    await troll.poll()

    assert await moderate(mod, what="ban", whom="*Troll", reason="spam", **{"for": "1d"}) == "ok"
    assert "troll1" not in client.app[HUB_KEY].players  # the session ended at once
    fresh = from_address(client, "troll2", "*Guest4711", TROLL_NEIGHBOUR)  # MultiPoints' next start
    refused = await fresh.login()
    assert refused.startswith("err.banned.20") and refused.endswith("Z.spam")
    assert (await from_address(client, "troll3", "*TroIl", ELSEWHERE).login()).startswith("err.banned.")
    assert await from_address(client, "neigh1", "*Neighbour", ELSEWHERE).login() == ""
    # the network was banned with a guest's nick: it keeps guests out, not the accounts there
    answer = await auth_from(client, TROLL_NEIGHBOUR, co="rejestruj", opisGracza="Ann", idGracza=ANN)
    assert answer == "ok.zarejestrowalem."
    assert (await auth_from(client, TROLL_NEIGHBOUR, co="loguj", opisGracza="Ann", idGracza=ANN)).startswith(
        "ok."
    )

    assert await moderate(mod, what="unban", whom="*Troll", reason="appeal") == "ok"
    assert await fresh.login() == ""


@pytest.mark.parametrize("whom", ["*troll", "*TRO1L"])
async def test_a_guest_banned_under_its_nick_in_another_case_or_a_look_alike_does_not_come_back(
    aiohttp_client: AiohttpClient, settings: Settings, whom: str
) -> None:
    client, mod, troll = await troll_online(aiohttp_client, settings)
    await troll.poll()

    await client.app[STORE_KEY].writer.flush()  # the ban reads the guest's network from its session's row
    assert await moderate(mod, what="ban", whom=whom, reason="spam", **{"for": "1d"}) == "ok"
    assert "troll1" not in client.app[HUB_KEY].players
    fresh = from_address(client, "troll2", "*Guest4711", TROLL_NEIGHBOUR)
    assert (await fresh.login()).startswith("err.banned.")
    assert await from_address(client, "neigh1", "*Neighbour", ELSEWHERE).login() == ""


async def test_sanctions_outlive_a_restart(aiohttp_client: AiohttpClient, settings: Settings) -> None:
    client = await served(aiohttp_client, settings)
    mod = await moderator(client)
    assert await moderate(mod, what="ban", whom="*Troll", reason="spam", **{"for": "1d"}) == "ok"
    assert await moderate(mod, what="mute", whom="*Loud", reason="caps", **{"for": "1d"}) == "ok"
    await client.close()

    client = await served(aiohttp_client, settings)
    assert (await Zagram(client, "troll1", "*Troll").login()).startswith("err.banned.")
    loud = Zagram(client, "loud11", "*Loud")
    assert await loud.login() == ""
    loud.say(0, "HELLO")
    told = [text for _, kind, text in chat_texts((await loud.poll()).lines(0)) if kind == "e"]
    assert told[-1].startswith("You are muted until 20") and told[-1].endswith(
        "(caps): your lines are not sent."
    )


async def test_a_banned_account_is_refused_at_login_with_the_reason(client: TestClient) -> None:
    mod = await moderator(client, "Boss", "admin")
    assert await register(client, "Cheater") == "ok.zarejestrowalem."
    assert await moderate(mod, what="ban", whom="Cheater", reason="engine use") == "ok"
    secret = registered_id("Cheater", "pw")
    assert await auth(client, co="loguj", opisGracza="Cheater", idGracza=secret) == (
        "nieOk.banned.forGood.engine use"
    )


async def test_whoever_registers_a_deleted_accounts_nick_inherits_none_of_its_sanctions(
    client: TestClient,
) -> None:
    """A sanction names an account, followed through a rename. Before, deleting the account left its
    ban and mute naming the nick's look, and the stranger who registered the nick next was banned and
    muted for what the deleted player did (found by a helper's audit)."""
    mod = await moderator(client, "Boss", "admin")
    assert await register(client, "Cheater") == "ok.zarejestrowalem."
    assert await moderate(mod, what="mute", whom="Cheater", reason="insults") == "ok"
    assert await moderate(mod, what="ban", whom="Cheater", reason="engine use") == "ok"
    await client.app[HUB_KEY].persistence.flush()  # the ban ended the session: stored, so not online
    await client.app[STORE_KEY].accounts.delete("Cheater")  # what `kropki-server user delete` does
    await refresh(client.app)  # as the running server does every SANCTIONS_EVERY seconds

    assert await register(client, "Cheater", password="newcomer") == "ok.zarejestrowalem."
    newcomer = Zagram(client, registered_id("Cheater", "newcomer"), "Cheater")
    await newcomer.poll()
    newcomer.say(0, "hello, I am new")
    lines = chat_texts((await newcomer.poll()).lines(0))
    assert ("Cheater", "3", "hello, I am new") in lines and not [t for _, kind, t in lines if kind == "e"]
    assert await moderate(mod, what="sanctions") == '{"sanctions": []}'


async def test_the_lobby_for_registered_players_only_and_slow(client: TestClient) -> None:
    mod = await moderator(client)
    guest = Zagram(client, "gus123", "*Gus")
    assert await guest.login(lang="pl") == ""
    await guest.poll()
    assert await moderate(mod, what="lobby", mode="registered", **{"for": "30m"}) == "ok"
    guest.say(0, "hello")
    told = [text for _, kind, text in chat_texts((await guest.poll()).lines(0)) if kind == "e"]
    assert len(told) == 1 and told[0].startswith("Do 20") and "zarejestrowani" in told[0]
    guest.say("_Mod", "a private line still goes")
    assert not [kind for _, kind, _ in chat_texts((await guest.poll()).lines(0)) if kind == "e"]

    assert await moderate(mod, what="lobby", mode="slow", seconds="30", **{"for": "30m"}) == "ok"
    guest.say(0, "one")
    guest.say(0, "two")
    lines = chat_texts((await guest.poll()).lines(0))
    assert ("*Gus", "1", "one") in lines and not any(text == "two" for _, _, text in lines)
    assert [text for _, kind, text in lines if kind == "e"] == [
        "Lobby jest w trybie powolnym: jedna wiadomość co 30 s."
    ]
    assert await moderate(mod, what="lobby", mode="normal") == "ok"
    guest.say(0, "three")
    assert ("*Gus", "1", "three") in chat_texts((await guest.poll()).lines(0))


async def test_a_ban_made_with_the_cli_ends_the_session_on_the_running_server_within_seconds(
    client: TestClient, settings: Settings
) -> None:
    troll = Zagram(client, "troll1", "*Troll")
    assert await troll.login() == ""
    await troll.poll()
    status = await asyncio.to_thread(
        main, ["ban", "--db", settings.db_url, "*Troll", "--for", "2h", "--reason", "flood"]
    )
    assert status == 0
    hub = client.app[HUB_KEY]
    for _ in range(int(SANCTIONS_EVERY * 10) + 10):
        if "troll1" not in hub.players:
            break
        await asyncio.sleep(0.1)
    assert "troll1" not in hub.players
    assert (await troll.login()).startswith("err.banned.")
    shown = await asyncio.to_thread(main, ["moderation", "--db", settings.db_url, "log"])
    assert shown == 0


async def test_a_kicked_players_game_goes_on_as_after_a_time_out(client: TestClient) -> None:
    mod = await moderator(client)
    uid = await open_table(client, "Ala", "Bob")
    assert await moderate(mod, what="kick", whom="*Bob", reason="calm down") == "ok"
    hub = client.app[HUB_KEY]
    assert "bobBob22" not in hub.players
    table = hub.tables.by_uid[uid]
    assert table.room is not None and table.room.game.result is None  # the game is not over
    bob = Zagram(client, "bobAgain1", "*Bob")  # logs in again at once, from the same address
    assert await bob.login() == ""
    assert uid in (await bob.poll(b=True, msg_no="0.0")).sections  # back at the board


async def test_a_moderators_deletion_is_in_the_moderation_log(client: TestClient) -> None:
    mod = await moderator(client)
    troll = Zagram(client, "troll1", "*Troll")
    assert await troll.login() == ""
    troll.say(0, "BUY CHEAP GOLD")
    troll.say(0, "BUY MORE GOLD")
    await troll.poll()
    mod.send("c", "delmsg", "0._*Troll")
    await mod.poll()
    await client.app[STORE_KEY].writer.flush()
    (line,) = [line for line in await client.app[STORE_KEY].moderation.log() if line.action == "delmsg"]
    assert (line.actor, line.target, line.detail) == ("Mod", "*Troll", "table 0, 2 line(s)")


@pytest.mark.skipif(not POSTGRES, reason="PostgreSQL: set KROPKI_TEST_DB (scripts/with-postgres)")
async def test_the_sanctions_are_read_again_once_the_database_is_back_and_no_traceback_is_logged(
    aiohttp_client: AiohttpClient, settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A PostgreSQL restart is an outage, not a bug: issue 44's chaos run counts every traceback in the
    members' logs, and the reader logged one each time PostgreSQL went away."""
    proxy = PostgresProxy(tmp_path / "pg", settings.db_url)
    await proxy.start()
    try:
        client = await served(aiohttp_client, dataclasses.replace(settings, db_url=proxy.url))
        await proxy.break_storage()
        await asyncio.sleep(2 * SANCTIONS_EVERY + 0.5)
        await proxy.mend()
        await asyncio.sleep(2 * SANCTIONS_EVERY + 0.5)
        readings = [r for r in caplog.records if "cannot read the sanctions" in r.getMessage()]
        assert [r.levelno for r in readings] == [logging.WARNING]  # once, and no traceback
        assert readings[0].exc_info is None
        await client.close()
    finally:
        await proxy.close()


async def test_a_moderators_requests_count_for_the_time_out_as_polls_do(client: TestClient) -> None:
    """docs/protocol.md, "Time-out": no request for 60 s. Before, `co=moderate` did not count, and a
    moderator reading reports and sanctions without polling was logged out under them."""
    mod = await moderator(client)
    hub = client.app[HUB_KEY]
    timers = hub.timers = AheadTimers()
    for _ in range(3):
        timers.ahead += hub.poll_timeout / 2 + 1
        assert (await moderate(mod, what="reports")).startswith("{")
        hub.sweep()
    assert [player.nick for player in hub.players.values()] == ["Mod"]
    timers.ahead += hub.poll_timeout + 1
    hub.sweep()
    assert await moderate(mod, what="reports") == "err.notModerator"


async def test_a_reading_of_the_sanctions_begun_before_a_mute_does_not_undo_it(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reading every SANCTIONS_EVERY seconds had read the sanctions before a moderator's mute was
    stored, and came back after the moderator's own reading had applied it. Before, the older reading
    was applied last: the mute was lifted until the next reading (the troll's lines went out), which
    then told the troll a second time."""
    mod = await moderator(client)
    troll = Zagram(client, "troll1", "*Troll")
    assert await troll.login() == ""
    await troll.poll()
    moderation = client.app[STORE_KEY].moderation
    read, held = moderation.active, asyncio.Event()

    async def slow_read() -> list[Sanction]:
        rows = await read()
        monkeypatch.setattr(moderation, "active", read)  # only the first reading is slow
        await held.wait()
        return rows

    monkeypatch.setattr(moderation, "active", slow_read)
    timed = asyncio.create_task(refresh(client.app))  # the timer's reading, before the mute
    await asyncio.sleep(0.05)
    muting = asyncio.create_task(moderate(mod, what="mute", whom="*Troll", reason="spam"))
    await asyncio.sleep(0.3)  # before the fix the mute was applied and answered by now
    held.set()
    await timed
    assert await muting == "ok"

    troll.send("c", 0, "BUY CHEAP GOLD")
    told = str((await troll.poll()).sections)
    await refresh(client.app)  # the timer's next reading
    told += str((await troll.poll()).sections)

    assert "GOLD" not in str((await mod.poll()).sections)
    assert told.count("You are muted") == 2  # the notice, then the line's refusal; before: a second notice
