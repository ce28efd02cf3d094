"""A player an admin renamed keeps their unfinished games, end to end on the real app: once their session
ended, they log in again (with the nick their id is made from) and sit at their game under the new nick,
on move with their clock, after a restart too; whoever holds a nick the seat had is never seated at it
(docs/operations.md, "Accounts (admins)")."""

from __future__ import annotations

import json

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient
from sqlalchemy import text

from server.app import STORE_KEY
from server.config import Settings
from server.store.database import open_engine
from server.store.store import Store
from server.web.common import HUB_KEY
from tests.conftest import served
from tests.store.test_accounts import registered_id
from tests.web.test_archive import pair
from tests.web.test_auth import auth, register
from tests.web.test_rating_rules import CROSSES, played
from tests.web.zagram import Zagram

RED_DOT = "np"  # on the bottom edge, past the red dots `played` placed


async def renamed_at_their_game(client: TestClient, game_type: str = CROSSES) -> tuple[Zagram, Zagram, int]:
    """Alice and Bob play; Bob, on move, leaves; an admin renames his account Robert."""
    alice, bob = await pair(client, "Alice", "Bob")
    uid = await played(client, alice, bob, game_type, 25)  # red (Bob) on move
    assert client.app[HUB_KEY].logout(bob.secret)
    await client.app[STORE_KEY].writer.flush()
    await client.app[STORE_KEY].accounts.rename("Bob", "Robert")
    return alice, bob, uid


async def logged_in(client: TestClient, login_nick: str, secret: str, nick: str) -> Zagram:
    assert await auth(client, co="loguj", opisGracza=login_nick, idGracza=secret) == "ok.zalogowanyNaSerwer."
    return Zagram(client, secret, nick)


async def test_a_renamed_player_sits_at_their_game_again_and_plays_their_turn(client: TestClient) -> None:
    """Before, Robert's new session was not seated at the game Bob left, and his move was refused."""
    alice, bob, uid = await renamed_at_their_game(client)
    room = client.app[HUB_KEY].tables[uid].room

    robert = await logged_in(client, "Bob", bob.secret, "Robert")
    assert uid in (await robert.poll()).sections
    robert.send("s", uid, RED_DOT)
    await robert.poll()
    assert len(room.game.moves) == 26
    described = [line for line in (await alice.poll()).lines(0, f"d{uid}.")]
    assert described and described[-1].endswith(".Alice.Robert")


async def plays_on_as_robert(client: TestClient, bob: Zagram, uid: int) -> None:
    """Bob, logging in again (his account now Robert), is seated at table `uid` and plays the 26th move."""
    robert = await logged_in(client, "Bob", bob.secret, "Robert")
    assert uid in (await robert.poll()).sections
    robert.send("s", uid, RED_DOT)
    await robert.poll()
    assert len(client.app[HUB_KEY].tables[uid].room.game.moves) == 26


async def test_the_seat_is_theirs_after_a_restart(aiohttp_client: AiohttpClient, settings: Settings) -> None:
    client = await served(aiohttp_client, settings)
    _, bob, uid = await renamed_at_their_game(client)
    robert = await logged_in(client, "Bob", bob.secret, "Robert")
    await robert.poll()
    await client.close()

    await plays_on_as_robert(await served(aiohttp_client, settings), bob, uid)


async def test_a_rename_made_while_the_server_was_stopped_is_followed(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await served(aiohttp_client, settings)
    alice, bob = await pair(client, "Alice", "Bob")
    uid = await played(client, alice, bob, CROSSES, 25)
    await client.close()
    # `user rename Bob Robert` while the server is stopped
    store = await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost)
    await store.accounts.rename("Bob", "Robert")
    await store.close()

    await plays_on_as_robert(await served(aiohttp_client, settings), bob, uid)


async def test_a_seat_an_older_version_journalled_follows_a_rename_after_a_restart(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """A journal written before seats named the account's number (`@bob`): the start reads the seat as the
    account's with that nick now, number and all, so that a rename later is followed; before, Robert was
    not seated at his game."""
    client = await served(aiohttp_client, settings)
    alice, bob = await pair(client, "Alice", "Bob")
    uid = await played(client, alice, bob, CROSSES, 25)
    await client.close()
    await journalled_without_numbers(settings)

    client = await served(aiohttp_client, settings)
    await client.app[STORE_KEY].accounts.rename("Bob", "Robert")
    await client.close()  # and restarted once more: the number is the journal's now, not only in memory

    await plays_on_as_robert(await served(aiohttp_client, settings), bob, uid)


async def journalled_without_numbers(settings: Settings) -> None:
    """The journal's seats as a version before 2026-12-02 wrote them: a registered player's by nick key."""
    engine = open_engine(settings.db_url)
    async with engine.begin() as connection:
        rows = await connection.execute(text("SELECT uid, seq, data FROM journal WHERE kind = 'seat'"))
        seats = [(uid, seq, json.loads(data)) for uid, seq, data in rows.all()]
        for uid, seq, data in seats:
            data["owner"] = data["owner"].partition("#")[0]
            await connection.execute(
                text("UPDATE journal SET data = :data WHERE uid = :uid AND seq = :seq"),
                {"data": json.dumps(data), "uid": uid, "seq": seq},
            )
    await engine.dispose()
    assert {data["owner"] for _, _, data in seats} == {"@alice", "@bob"}


async def test_nobody_who_takes_a_nick_the_seat_had_is_seated_at_it(client: TestClient) -> None:
    """Bob's account, renamed Robert (his seat moves to "Robert" at his login) and then Rob: "Robert" is
    free again, and Mallory registers it. She is not seated, cannot move or resign for him; Rob is."""
    hub = client.app[HUB_KEY]
    _, bob, uid = await renamed_at_their_game(client)
    robert = await logged_in(client, "Bob", bob.secret, "Robert")
    assert uid in (await robert.poll()).sections
    assert hub.logout(bob.secret)
    await client.app[STORE_KEY].writer.flush()
    await client.app[STORE_KEY].accounts.rename("Robert", "Rob")

    assert await register(client, "Robert", password="mallory") == "ok.zarejestrowalem."
    mallory = Zagram(client, registered_id("Robert", "mallory"), "Robert")
    assert uid not in (await mallory.poll()).sections
    room = hub.tables[uid].room
    answer = await mallory.get(co="propose", idGracza=mallory.secret, table=str(uid), proposal="resign")
    assert answer.startswith("err.") and room.game.result is None
    mallory.send("s", uid, RED_DOT)
    await mallory.poll()
    assert len(room.game.moves) == 25

    rob = await logged_in(client, "Bob", bob.secret, "Rob")
    assert uid in (await rob.poll()).sections
    rob.send("s", uid, RED_DOT)
    await rob.poll()
    assert len(room.game.moves) == 26 and room.seat_of("Rob") == 2
