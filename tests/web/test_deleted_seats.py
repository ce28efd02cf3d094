"""A game a deleted account left unfinished, end to end on the real app: whoever registers its nick next
is not seated at it and cannot play, resign or lose it for the deleted player, and the opponent claims
it (docs/operations.md, "Accounts (admins)")."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.app import STORE_KEY
from server.config import Settings
from server.hub.absences import AWAY_AFTER, CLAIM_AFTER
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.saved import SWEEP_EVERY
from server.web.common import HUB_KEY
from tests.conftest import served
from tests.store.test_accounts import registered_id
from tests.web.test_archive import pair, ratings
from tests.web.test_auth import auth, register
from tests.web.test_rating_rules import CROSSES, played, said
from tests.web.zagram import Zagram


async def deleted_and_registered_again(client: TestClient, bob: Zagram) -> Zagram:
    """Bob leaves his game unfinished, an admin deletes his account, and a stranger registers "Bob"."""
    assert client.app[HUB_KEY].logout(bob.secret)  # the game waits: a registered player comes back to it
    await client.app[STORE_KEY].writer.flush()
    await client.app[STORE_KEY].accounts.delete("Bob")
    assert await register(client, "Bob", password="mallory") == "ok.zarejestrowalem."
    return Zagram(client, registered_id("Bob", "mallory"), "Bob")


async def test_whoever_registers_a_deleted_accounts_nick_takes_none_of_its_seats(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """Seats are kept for an account by its nick's key: the stranger was seated at the deleted player's
    game, could play or resign it, and the opponent's claim was rated against the stranger's account."""
    timers = ManualTimers()
    hub = Hub(timers=timers)
    client = await served(aiohttp_client, settings, hub)
    alice, bob = await pair(client, "Alice", "Bob")
    uid = await played(client, alice, bob, CROSSES, 24)
    mallory = await deleted_and_registered_again(client, bob)

    assert uid not in (await mallory.poll()).sections
    answer = await mallory.get(co="propose", idGracza=mallory.secret, table=str(uid), proposal="resign")
    assert answer.startswith("err.") and hub.tables[uid].room.game.result is None
    waited = 0.0
    while waited <= AWAY_AFTER + CLAIM_AFTER:  # the seat is nobody's: Alice may claim the game
        timers.advance(SWEEP_EVERY)
        waited += SWEEP_EVERY
        await alice.poll()
        await mallory.poll()
        hub.sweep()
    alice.send("u", uid, "claim")
    await alice.poll()
    await client.app[STORE_KEY].writer.flush()

    assert str(hub.tables[uid].room.game.result) == "B+R"
    assert said(client, uid)[-1] == "unratedAccount.Not rated: both players need an account."
    assert await ratings(client, "Alice", "Bob") == [(1500, 0, 0, 0)] * 2


async def test_the_seat_stays_nobodys_after_a_restart(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await served(aiohttp_client, settings)
    alice, bob = await pair(client, "Alice", "Bob")
    uid = await played(client, alice, bob, CROSSES, 24)
    await deleted_and_registered_again(client, bob)
    await client.close()

    client = await served(aiohttp_client, settings)
    mallory = Zagram(client, registered_id("Bob", "mallory"), "Bob")
    assert (await auth(client, co="loguj", opisGracza="Bob", idGracza=mallory.secret)).startswith("ok.")
    assert uid not in (await mallory.poll()).sections
    assert client.app[HUB_KEY].tables[uid].room.game.result is None


async def claimed_by(client: TestClient, hub: Hub, timers: ManualTimers, uid: int, *present: Zagram) -> None:
    """The players `present` poll until the absent side's game may be claimed; the first claims it."""
    waited = 0.0
    while waited <= AWAY_AFTER + CLAIM_AFTER:
        timers.advance(SWEEP_EVERY)
        waited += SWEEP_EVERY
        for player in present:
            await player.poll()
        hub.sweep()
    present[0].send("u", uid, "claim")
    await present[0].poll()
    await client.app[STORE_KEY].writer.flush()


async def test_an_account_renamed_to_a_deleted_accounts_nick_takes_none_of_its_seats(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """`user rename Carol Bob` once Bob's account was deleted: the change never reached the running hub,
    and at her next login Carol, now Bob, was seated at Bob's unfinished game and could resign it."""
    hub = Hub(timers=ManualTimers())
    client = await served(aiohttp_client, settings, hub)
    alice, bob = await pair(client, "Alice", "Bob")
    uid = await played(client, alice, bob, CROSSES, 24)
    assert hub.logout(bob.secret)
    assert await register(client, "Carol") == "ok.zarejestrowalem."
    assert hub.logout(registered_id("Carol", "pw"))
    await client.app[STORE_KEY].writer.flush()
    await client.app[STORE_KEY].accounts.delete("Bob")
    await client.app[STORE_KEY].accounts.rename("Carol", "Bob")

    carol = Zagram(client, registered_id("Carol", "pw"), "Bob")
    assert (await auth(client, co="loguj", opisGracza="Carol", idGracza=carol.secret)).startswith("ok.")
    assert hub.players[carol.secret].nick == "Bob"
    assert uid not in (await carol.poll()).sections
    answer = await carol.get(co="propose", idGracza=carol.secret, table=str(uid), proposal="resign")
    assert answer.startswith("err.") and hub.tables[uid].room.game.result is None


async def test_a_game_a_deleted_account_left_unfinished_is_archived_under_its_deleted_name(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """Its other games name it deleted<account number> and link no account: this one was archived under
    "Bob", listed under the nick's next holder, with no account linked."""
    timers = ManualTimers()
    hub = Hub(timers=timers)
    client = await served(aiohttp_client, settings, hub)
    alice, bob = await pair(client, "Alice", "Bob")
    uid = await played(client, alice, bob, CROSSES, 24)
    assert hub.logout(bob.secret)
    await client.app[STORE_KEY].writer.flush()
    await client.app[STORE_KEY].accounts.delete("Bob")  # account number 2

    await claimed_by(client, hub, timers, uid, alice)

    games = client.app[STORE_KEY].games
    (game,) = await games.recent(None, 10)
    assert (game.blue, game.red) == ("Alice", "deleted2") and not game.registered
    found = await games.game(game.number)
    assert found is not None and "PW[deleted2]" in found[1] and "Bob" not in found[1]
    assert await games.recent("Bob", 10) == []
