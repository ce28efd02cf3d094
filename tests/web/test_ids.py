"""Guessing a player's id through polls and commands (issue 43.1, docs/protocol.md "Guessed ids").

A registered player's id is the first 10 characters of a hash of the nick, a public salt and the
password. Before this, any request carrying a guessed id told whether it was right while the player
was online (`ok` against `sd`), and wrong ids never counted as failed logins: a 60-word list found the
password in 0.06 s from one address.
"""

from __future__ import annotations

import dataclasses

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient
from yarl import URL

from server.app import create_app
from server.config import Settings
from server.web.common import HUB_KEY
from tests.clients.multipoints import MultiPoints, encode
from tests.clients.robocup import RoboCupReader
from tests.web.test_auth import registered_id

ALICE_HOME = "198.51.100.7"
ATTACKER = "203.0.113.9"
REFUSED = "err.tooManyFailedLogins"
WORDS = [f"word{n}" for n in range(59)] + ["pw"]  # the 60-word list, Alice's password last


async def proxied(aiohttp_client: AiohttpClient, settings: Settings, **changes: object) -> TestClient:
    """The real app behind a trusted proxy, so that X-Forwarded-For names each caller."""
    fields = {"trusted_proxies": ("127.0.0.1",), "unlimited": (), **changes}
    return await aiohttp_client(create_app(dataclasses.replace(settings, **fields)))


async def get_from(client: TestClient, address: str, path_and_query: str) -> str:
    """A request as the Java clients write it (already encoded), from `address`."""
    response = await client.get(URL(path_and_query, encoded=True), headers={"X-Forwarded-For": address})
    assert response.status == 200
    return await response.text()


async def alice_online(client: TestClient) -> str:
    """Alice registers from home and polls from there: her id, a session the attacker wants."""
    secret = registered_id("Alice", "pw")
    answer = await get_from(client, ALICE_HOME, f"/auth.py?co=rejestruj&opisGracza=Alice&idGracza={secret}")
    assert answer == "ok.zarejestrowalem."
    assert (await get_from(client, ALICE_HOME, f"/a.kropki?co=getMsg&idGracza={secret}&msgNo=0")).startswith(
        "ok"
    )
    return secret


def poll(secret: str, msg_no: int = 0) -> str:
    return f"/a.kropki?co=getMsg&idGracza={secret}&msgNo={msg_no}"


async def test_a_right_id_from_another_network_is_answered_as_a_wrong_one(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """The issue's attack: a word list, polls and a command carrying each guess, from one address."""
    client = await proxied(aiohttp_client, settings, failed_logins_per_address=100)
    await alice_online(client)
    last = client.app[HUB_KEY].bus.last  # polls that ask for news, not the whole state, as a thief would
    answers = {}
    for word in WORDS:
        guess = registered_id("Alice", word)
        answers[word] = (
            await get_from(client, ATTACKER, poll(guess, last)),
            await get_from(client, ATTACKER, f"/a.kropki?idGracza={guess}&co=changeLang&na=ru"),
            await get_from(client, ATTACKER, f"/a.kropki?co=resumeSession&idGracza={guess}&opis=Alice"),
        )
    assert answers["pw"] == answers["word0"]  # the right id tells the attacker nothing
    assert answers["pw"][0].startswith("sd/") and answers["pw"][1:] == ("err.notLoggedIn", "err.notLoggedIn")
    hub = client.app[HUB_KEY]
    alice = next(player for player in hub.players.values() if player.nick == "Alice")
    assert alice.lang == "en"  # the attacker's changeLang with her id changed nothing


async def test_distinct_unknown_ids_count_as_failed_logins_per_address(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await proxied(aiohttp_client, settings)  # 10 failed logins an address in 15 minutes
    await alice_online(client)
    answers = [await get_from(client, ATTACKER, poll(registered_id("Alice", word))) for word in WORDS[:12]]
    assert [answer.split("/")[0] for answer in answers] == ["sd"] * 10 + [REFUSED] * 2
    # past the limit, every id not yet counted is refused alike: the right one, a guest's live id
    assert await get_from(client, ATTACKER, poll(registered_id("Alice", "pw"))) == REFUSED
    bob = MultiPoints("*Bob", "424242")
    answer = await get_from(
        client, "192.0.2.1", f"/a.kropki?co=guestLogin&idGracza=424242&opis={encode(bob.my_name)}"
    )
    assert answer == ""
    assert await get_from(client, ATTACKER, poll("424242")) == REFUSED
    assert await get_from(client, ATTACKER, "/a.kropki?idGracza=424242&co=usunGracza") == REFUSED
    assert "*Bob" in [player.nick for player in client.app[HUB_KEY].players.values()]  # still online
    # an id counted before is answered as before (an anonymous reader is counted once)
    assert (await get_from(client, ATTACKER, poll(registered_id("Alice", WORDS[0])))).startswith("sd/")
    # and the failed logins of /auth.py share the count
    secret = registered_id("Alice", "guess")
    assert await get_from(client, ATTACKER, f"/auth.py?co=loguj&opisGracza=Alice&idGracza={secret}") == (
        "nieOk.tooManyFailedLogins"
    )
    assert (await get_from(client, "203.0.114.1", poll("unknown1"))).startswith("sd/")  # another network


@pytest.mark.parametrize(
    ("addresses", "counted"),
    [
        ([f"2001:db8:9:1::{n + 1:x}" for n in range(100)], 10),  # 100 addresses of one /64: one address
        ([f"203.0.113.{n + 1}" for n in range(100)], 40),  # 100 addresses of one /24: one network, 4x
    ],
)
async def test_many_addresses_of_one_host_or_network_share_its_guesses(
    aiohttp_client: AiohttpClient, settings: Settings, addresses: list[str], counted: int
) -> None:
    client = await proxied(aiohttp_client, settings)
    answers = [await get_from(client, address, poll(f"guess{n}x")) for n, address in enumerate(addresses)]
    assert [answer.split("/")[0] for answer in answers] == ["sd"] * counted + [REFUSED] * (100 - counted)


async def test_robocups_reader_multipoints_and_an_ended_session_are_never_held_up(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """Beside an attacker on the same address who used up its guesses: roboCup's anonymous reader
    (one numeric id that never logs in, polling for hours), MultiPoints' login and first poll, and a
    client whose session timed out and goes on polling until it logs in again."""
    client = await proxied(aiohttp_client, settings)
    reader = RoboCupReader("7654321")
    answer = await get_from(
        client, ATTACKER, "/a.kropki?" + "&".join(f"{k}={v}" for k, v in reader.query().items())
    )
    reader.handle_response(answer)
    assert answer.startswith("sd/")
    timed_out = MultiPoints("*Old", "111222")
    await get_from(
        client, ATTACKER, f"/a.kropki?co=guestLogin&idGracza=111222&opis={encode(timed_out.my_name)}"
    )
    client.app[HUB_KEY].logout("111222")  # as a time-out ends it
    for n in range(20):  # the attacker's guesses: the address's 10, then refusals
        await get_from(client, ATTACKER, poll(f"guess{n}x"))
    assert await get_from(client, ATTACKER, poll("guess99x")) == REFUSED

    for _ in range(3):  # ...hours of polling, every 7 seconds
        body = await get_from(
            client, ATTACKER, "/a.kropki?" + "&".join(f"{k}={v}" for k, v in reader.query().items())
        )
        reader.handle_response(body)
        assert body.startswith("sd/") and not reader.warnings
    assert (await get_from(client, ATTACKER, poll("111222"))).startswith("sd/")  # it logs in again:
    assert (
        await get_from(client, ATTACKER, f"/a.kropki?co=guestLogin&idGracza=111222&opis={encode('*Old')}")
        == ""
    )
    mp = MultiPoints("*Ala", "333444")  # a new MultiPoints: a new random id, its login and first poll
    login = f"/a.kropki?co=guestLogin&idGracza=333444&opis={encode(mp.my_name)}&lang=ru"
    assert await get_from(client, ATTACKER, login) == ""
    assert await get_from(client, ATTACKER, "/a.kropki?idGracza=333444&co=changeLang&na=ru") == ""
    mp.handle_text(await get_from(client, ATTACKER, mp.url()))
    assert not mp.disposed and not mp.failures and "*Ala" in mp.lobby


async def test_a_registered_player_uses_a_new_network_after_logging_in_there(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """Another network's polls are a stranger's until /auth.py (limited per account) logs the id in
    there; the built-in client logs in again when its poll is answered `sd`, MultiPoints at its start."""
    client = await proxied(aiohttp_client, settings)
    secret = await alice_online(client)
    phone, last = "192.0.2.77", client.app[HUB_KEY].bus.last
    assert (await get_from(client, phone, poll(secret, last))).startswith("sd/")
    login = f"/auth.py?co=loguj&opisGracza=Alice&idGracza={secret}"
    assert (await get_from(client, phone, login)).startswith("ok.zalogowanyNaSerwer")
    assert (await get_from(client, phone, poll(secret, last))).startswith("ok/")
    assert (await get_from(client, ALICE_HOME, poll(secret, last))).startswith("ok/")  # and from home still


async def test_a_guests_id_from_a_new_network_counts_once_then_works_from_there(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await proxied(aiohttp_client, settings, failed_logins_per_address=1)
    assert await get_from(client, ALICE_HOME, "/a.kropki?co=guestLogin&idGracza=55555&opis=*Gus") == ""
    moved = "192.0.2.8"  # the guest's laptop on another network: its id is its only password
    assert (await get_from(client, moved, poll("55555"))).startswith("ok/")
    assert (await get_from(client, moved, poll("unknown7"))) == REFUSED  # that one guess was the address's
    assert (await get_from(client, moved, poll("55555"))).startswith("ok/")  # the session is used from there


async def test_registered_sessions_keep_their_networks_across_a_restart(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await proxied(aiohttp_client, settings)
    secret = await alice_online(client)
    await client.close()

    client = await proxied(aiohttp_client, settings)  # the same database: Alice's session comes back
    assert (await get_from(client, ATTACKER, poll(secret))).startswith("sd/")
    assert (await get_from(client, ALICE_HOME, poll(secret))).startswith("ok/")
