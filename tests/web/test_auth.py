"""`/auth.py` over HTTP: registration, login, profile look-ups, the failed-login limits, moderators."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.app import STORE_KEY, create_app
from server.config import Settings
from server.hub.model import Origin
from server.store import idhash
from server.store.accounts import Accounts
from server.web.auth import (
    FAILED_LOGINS_WINDOW,
    REGISTER_DAY_LIMITER_KEY,
    REGISTER_LIMITER_KEY,
    REGISTRATIONS,
    REGISTRATIONS_A_DAY,
)
from server.web.common import HUB_KEY, LOGIN_GUARD_KEY
from server.web.limits import LoginGuard, NetworkLimiter
from tests.store.breakers import until
from tests.store.test_accounts import held_checks, registered_id, stored_hash
from tests.web.test_stream import chat_texts
from tests.web.zagram import Zagram


async def auth(client: TestClient, **params: str) -> str:
    response = await client.get("/auth.py", params=params)
    assert response.status == 200
    return await response.text()


async def register(client: TestClient, nick: str, password: str = "pw", email: str = "v") -> str:
    return await auth(
        client, co="rejestruj", opisGracza=nick, idGracza=registered_id(nick, password), email=email
    )


async def test_registration_answers_the_docs_strings_and_logs_the_player_in(client: TestClient) -> None:
    assert await register(client, "Alice") == "ok.zarejestrowalem."
    alice = Zagram(client, registered_id("Alice", "pw"), "Alice")

    reply = await alice.poll()

    assert reply.status == "ok"
    assert "iAlice..F.en.1500.0.0.0." in reply.lines(0, "i")  # rating and results for registered players
    assert "pr" in reply.lines(0, "pr")[0] and "Alice" in reply.lines(0, "pr")[0]


@pytest.mark.parametrize(
    ("nick", "secret"),
    [
        ("*Alice", registered_id("*Alice", "pw")),  # a guest's nick
        ("Al  ice", registered_id("Al  ice", "pw")),
        ("Alice\U000e0061", registered_id("Alice\U000e0061", "pw")),  # an invisible TAG LATIN SMALL LETTER A
        ("Alice", "short"),  # registered ids have 10 characters or more
        ("Alice", "bad id with spaces"),
        ("", registered_id("", "pw")),
    ],
)
async def test_a_bad_nick_or_id_is_refused_and_nothing_is_created(
    client: TestClient, nick: str, secret: str
) -> None:
    answer = await auth(client, co="rejestruj", opisGracza=nick, idGracza=secret, email="v")

    assert answer == "ok.niedozwolonyOpis"
    assert await client.app[STORE_KEY].accounts.profile("Alice") is None


async def test_a_taken_nick_in_any_look_alike_form(client: TestClient) -> None:
    assert await register(client, "Alice") == "ok.zarejestrowalem."

    assert await register(client, "Alice", "other") == "ok.tenOpisJestJuzZajety"
    assert await register(client, "ALICE") == "ok.tenOpisJestJuzZajety"


@pytest.mark.parametrize(
    ("nick", "look_alike"),
    [
        ("Alan", "Alɑn"),  # LATIN SMALL LETTER ALPHA
        ("Alan", "AIan"),  # a capital I
        ("Alan", "A1an"),
        ("Bob", "B0b"),
        ("Bop", "Вор"),  # all Cyrillic
    ],
)
async def test_a_look_alike_of_a_registered_nick_is_taken_while_its_player_is_away(
    client: TestClient, nick: str, look_alike: str
) -> None:
    assert await register(client, nick) == "ok.zarejestrowalem."
    secret = registered_id(nick, "pw")
    assert await Zagram(client, secret, nick).get(co="usunGracza", playerId=secret) == ""

    assert await register(client, look_alike) == "ok.tenOpisJestJuzZajety"
    assert await register(client, "Аlan") == "ok.niedozwolonyOpis"  # Cyrillic А, Latin lan
    assert await register(client, nick + "a") == "ok.zarejestrowalem."  # another nick


async def test_login_with_the_right_id_only(client: TestClient) -> None:
    await register(client, "Alice")
    alice = registered_id("Alice", "pw")
    assert (await Zagram(client, alice, "Alice").get(co="usunGracza", playerId=alice)) == ""

    wrong = await auth(client, co="loguj", opisGracza="Alice", idGracza=registered_id("Alice", "guess"))
    unknown = await auth(client, co="loguj", opisGracza="Nobody", idGracza=registered_id("Nobody", "pw"))
    right = await auth(client, co="loguj", opisGracza="Alice", idGracza=alice, lang="ru")

    assert wrong == unknown == "nieOk.wrongNickOrId"
    assert right == "ok.zalogowanyNaSerwer."
    reply = await Zagram(client, alice, "Alice").poll()
    assert "iAlice..F.ru.1500.0.0.0." in reply.lines(0, "i")


async def test_ids_are_hashed_at_the_servers_cost(aiohttp_client: AiohttpClient, settings: Settings) -> None:
    dearer = dataclasses.replace(settings, id_hash_cost=settings.id_hash_cost + 1)
    client = await aiohttp_client(create_app(dearer))
    await register(client, "Alice")

    stored = await stored_hash(client.app[STORE_KEY], "Alice")
    assert stored.startswith(f"scrypt${2**dearer.id_hash_cost}$8$1$")


WRONG = "nieOk.wrongNickOrId"
TOO_MANY = "nieOk.tooManyFailedLogins"
CROSS_SITE = "nieOk.crossSite"
LOGGED_IN = "ok.zalogowanyNaSerwer."
# What Chromium 150 sent for `<img src=".../auth.py?co=loguj...">` on another site's page (probed with
# the system Chromium over loopback; over plain HTTP to another host it sends no Sec-Fetch-* at all).
IMAGE_ON_A_FOREIGN_PAGE = {
    "Sec-Fetch-Site": "cross-site",
    "Sec-Fetch-Mode": "no-cors",
    "Sec-Fetch-Dest": "image",
}
OWN_PAGE = {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}
OWNER = "198.51.100.7"  # where Alice registered and logs in from
STRANGERS = [f"203.0.113.{n}" for n in range(1, 39)]  # the 38 addresses


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


async def proxied_client(aiohttp_client: AiohttpClient, settings: Settings, clock: Clock) -> TestClient:
    """The real app behind a trusted proxy (X-Forwarded-For names each caller), with the default login
    limits on a clock the test drives."""
    app = create_app(dataclasses.replace(settings, trusted_proxies=("127.0.0.1",)))
    app[LOGIN_GUARD_KEY] = LoginGuard(
        settings.failed_logins_per_address,
        FAILED_LOGINS_WINDOW,
        settings.failed_logins_per_account,
        settings.failed_login_max_wait,
        settings.network_factor,
        clock,
    )
    app[REGISTER_LIMITER_KEY] = NetworkLimiter(*REGISTRATIONS, settings.network_factor, clock)
    app[REGISTER_DAY_LIMITER_KEY] = NetworkLimiter(*REGISTRATIONS_A_DAY, settings.network_factor, clock)
    return await aiohttp_client(app)


async def auth_from(
    client: TestClient, address: str, headers: dict[str, str] | None = None, **params: str
) -> str:
    response = await client.get(
        "/auth.py", params=params, headers={"X-Forwarded-For": address, **(headers or {})}
    )
    assert response.status == 200
    return await response.text()


async def login_from(
    client: TestClient, address: str, nick: str, password: str, headers: dict[str, str] | None = None
) -> str:
    secret = registered_id(nick, password)
    return await auth_from(client, address, headers, co="loguj", opisGracza=nick, idGracza=secret)


async def register_alice_from_her_address(client: TestClient) -> None:
    secret = registered_id("Alice", "pw")
    answer = await auth_from(client, OWNER, co="rejestruj", opisGracza="Alice", idGracza=secret)
    assert answer == "ok.zarejestrowalem."


def count_id_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The nicks whose id the server looked at, in order."""
    checked: list[str] = []
    authenticate = Accounts.authenticate

    async def counted(self: Accounts, nick: str, secret: str, *, first: bool = False):
        checked.append(nick)
        return await authenticate(self, nick, secret, first=first)

    monkeypatch.setattr(Accounts, "authenticate", counted)
    return checked


async def test_failed_logins_are_limited_per_address(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await proxied_client(aiohttp_client, settings, Clock())
    await register_alice_from_her_address(client)
    answers = [await login_from(client, STRANGERS[0], f"Nick{n}", "guess") for n in range(11)]
    right = await login_from(client, STRANGERS[0], "Alice", "pw")

    assert answers == [WRONG] * 10 + [TOO_MANY]  # ten failures, whichever nicks, then the address waits
    assert right == TOO_MANY  # refused before the id is looked at: a right id tells nothing
    assert await login_from(client, OWNER, "Alice", "pw") == LOGGED_IN  # another address is not held


async def test_guesses_at_one_account_from_many_addresses_wait_longer_and_longer(
    aiohttp_client: AiohttpClient, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue: 300 guesses from 38 addresses all went through. Now five do, then one per growing
    wait (1, 2, 4, ... seconds after the last failure, at most 15 minutes)."""
    clock = Clock()
    client = await proxied_client(aiohttp_client, settings, clock)
    await register_alice_from_her_address(client)
    checked = count_id_checks(monkeypatch)

    answers = []
    for n in range(300):  # one guess a second for five minutes, the addresses in turn
        answers.append(await login_from(client, STRANGERS[n % 38], "Alice", f"guess{n}"))
        clock.now += 1.0
    stranger_with_the_right_id = await login_from(client, "192.0.2.50", "Alice", "pw")

    # after the 5th failure, each try waits 1, 2, 4, ..., 128, 256 seconds after the last failure
    admitted = [0, 1, 2, 3, 4, 5, 7, 11, 19, 35, 67, 131, 259]
    assert [n for n, answer in enumerate(answers) if answer == WRONG] == admitted
    assert set(answers) == {WRONG, TOO_MANY}
    assert stranger_with_the_right_id == TOO_MANY
    assert checked == ["Alice"] * len(admitted)  # every refusal came before the id was looked at
    clock.now += 256.0
    assert await login_from(client, "192.0.2.50", "Alice", "guess") == WRONG
    assert client.app[LOGIN_GUARD_KEY].wait("alice", Origin("192.0.2.51", False, "192.0.2.0/24")) == 512.0


async def test_a_burst_of_parallel_guesses_is_counted_before_any_id_is_checked(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await proxied_client(aiohttp_client, settings, Clock())
    await register_alice_from_her_address(client)

    answers = await asyncio.gather(
        *(login_from(client, STRANGERS[n % 38], "Alice", f"guess{n}") for n in range(60))
    )

    assert (answers.count(WRONG), answers.count(TOO_MANY)) == (5, 55)


async def test_the_owner_logs_in_from_their_own_address_during_an_attack(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    clock = Clock()
    client = await proxied_client(aiohttp_client, settings, clock)
    await register_alice_from_her_address(client)
    assert await login_from(client, "198.51.100.8", "Alice", "pw") == LOGGED_IN  # the phone, say
    for n in range(100):
        await login_from(client, STRANGERS[n % 38], "Alice", f"guess{n}")
    for address in STRANGERS:  # and every attacking address has used up its own tries too
        for n in range(10):
            await login_from(client, address, f"Other{n}", "guess")

    assert await login_from(client, OWNER, "Alice", "pw") == LOGGED_IN
    assert await login_from(client, "198.51.100.8", "Alice", "pw") == LOGGED_IN
    # The trade-off: an address the account does not know waits like the attackers...
    assert await login_from(client, "192.0.2.60", "Alice", "pw") == TOO_MANY
    clock.now += client.app[LOGIN_GUARD_KEY].wait("alice", Origin("192.0.2.60", False, "192.0.2.0/24"))
    assert await login_from(client, "192.0.2.60", "Alice", "pw") == LOGGED_IN  # ...and is known from now on
    assert await login_from(client, "192.0.2.60", "Alice", "pw") == LOGGED_IN


async def test_the_owners_login_is_checked_before_the_guesses_waiting(
    aiohttp_client: AiohttpClient, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guesses from many networks, each its address's first (no limit stops them), queue for the id
    hashes' threads: the owner's login from her own address is checked as soon as one is free, ahead of
    them (server/store/idhash.py), so that a flood of checks cannot keep her out by their number."""
    monkeypatch.setattr(idhash, "HASH_THREADS", 1)
    client = await proxied_client(aiohttp_client, settings, Clock())
    await register_alice_from_her_address(client)
    gate, order = held_checks(monkeypatch)
    turns = client.app[STORE_KEY].hashing.turns
    guesses = [asyncio.create_task(login_from(client, f"10.{n}.0.1", f"Nick{n}", "guess")) for n in range(4)]
    await until(lambda: len(turns[False]) == 3)  # the first on the thread, the others waiting
    owner = asyncio.create_task(login_from(client, OWNER, "Alice", "pw"))
    await until(lambda: len(turns[True]) == 1)
    gate.set()

    assert await owner == LOGGED_IN
    assert await asyncio.gather(*guesses) == [WRONG] * 4
    assert order.index(registered_id("Alice", "pw")) == 1


async def test_logins_and_registrations_that_would_wait_too_long_are_answered_too_fast_at_once(
    aiohttp_client: AiohttpClient, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past MOST_WAIT of queued checks, a stranger's login and a registration get `nieOk.tooFast`
    without waiting, and it counts as no failed login; the owner's login still waits its turn."""
    monkeypatch.setattr(idhash, "HASH_THREADS", 1)
    monkeypatch.setattr(idhash, "MOST_WAIT", 1.5)
    client = await proxied_client(aiohttp_client, settings, Clock())
    await register_alice_from_her_address(client)
    hashing = client.app[STORE_KEY].hashing
    hashing.seconds = 1.0  # one may wait
    gate, _ = held_checks(monkeypatch)
    guesses = [asyncio.create_task(login_from(client, f"10.{n}.0.1", f"Nick{n}", "guess")) for n in range(2)]
    await until(lambda: hashing.waiting == 1)

    busy = [await login_from(client, "10.9.0.1", "Alice", f"guess{n}") for n in range(6)]
    registered = await auth_from(
        client, "10.9.0.1", co="rejestruj", opisGracza="Bob", idGracza=registered_id("Bob", "pw"), email="v"
    )
    owner = asyncio.create_task(login_from(client, OWNER, "Alice", "pw"))
    await until(lambda: hashing.waiting == 2)
    gate.set()

    assert busy == ["nieOk.tooFast"] * 6  # six: none counted as a failed login (five are allowed)
    assert registered == "nieOk.tooFast"
    assert await owner == LOGGED_IN
    assert await asyncio.gather(*guesses) == [WRONG] * 2
    assert await login_from(client, "10.9.0.1", "Alice", "guess") == WRONG  # the address's first failure
    assert await client.app[STORE_KEY].accounts.profile("Bob") is None


async def test_guessing_from_the_owners_address_waits_too(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """Someone behind the owner's address (a shared NAT) gets five tries, then growing waits of that
    address's own; the owner's right id clears them."""
    clock = Clock()
    client = await proxied_client(aiohttp_client, settings, clock)
    await register_alice_from_her_address(client)

    guesses = [await login_from(client, OWNER, "Alice", f"guess{n}") for n in range(6)]
    right_too_soon = await login_from(client, OWNER, "Alice", "pw")
    clock.now += 1.0
    right = await login_from(client, OWNER, "Alice", "pw")
    again = [await login_from(client, OWNER, "Alice", f"again{n}") for n in range(6)]

    assert guesses == [WRONG] * 5 + [TOO_MANY]
    assert right_too_soon == TOO_MANY
    assert right == LOGGED_IN
    assert again == [WRONG] * 5 + [TOO_MANY]


async def test_unknown_nicks_are_counted_and_refused_like_registered_ones(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    clock = Clock()
    client = await proxied_client(aiohttp_client, settings, clock)
    await register_alice_from_her_address(client)

    async def attack(nick: str, addresses: list[str]) -> list[str]:
        answers = []
        for n in range(20):
            answers.append(await login_from(client, addresses[n % len(addresses)], nick, f"guess{n}"))
            clock.now += 0.5
        return answers

    registered = await attack("Alice", STRANGERS[:19])
    nobody = await attack("Nobody", STRANGERS[19:])

    assert registered == nobody
    assert registered[:6] == [WRONG] * 5 + [TOO_MANY]


async def test_a_foreign_pages_images_count_for_nothing(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """The issue: a foreign page with 12 `<img>` tags pointing at loguj locked its visitor's address out."""
    client = await proxied_client(aiohttp_client, settings, Clock())
    await register_alice_from_her_address(client)
    visitor = "192.0.2.70"  # never logged in to Alice before

    images = [
        await login_from(client, visitor, "Alice", f"guess{n}", IMAGE_ON_A_FOREIGN_PAGE) for n in range(12)
    ]
    registration = await auth_from(
        client, visitor, IMAGE_ON_A_FOREIGN_PAGE, co="rejestruj", opisGracza="Mallory", idGracza="MalloryId1"
    )

    assert images == [CROSS_SITE] * 12
    assert registration == CROSS_SITE
    assert await client.app[STORE_KEY].accounts.profile("Mallory") is None
    assert await login_from(client, visitor, "Alice", "pw", OWN_PAGE) == LOGGED_IN  # the browser's own client
    assert await login_from(client, "192.0.2.71", "Alice", "pw") == LOGGED_IN  # the account was not charged
    # the visitor's address has its ten tries as before
    answers = [await login_from(client, visitor, f"Nick{n}", "guess", OWN_PAGE) for n in range(11)]
    assert answers == [WRONG] * 10 + [TOO_MANY]
    # dajPref and dajOpis count for nothing and answer any page
    assert (
        await auth_from(client, visitor, IMAGE_ON_A_FOREIGN_PAGE, co="dajPref", opisGracza="Alice") == "ok.."
    )


async def test_without_fetch_metadata_a_foreign_page_still_cannot_shut_out_an_owner(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """Over plain HTTP browsers send no Sec-Fetch-Site, and a page can drop the Referer: its images look
    like any client's. They use up the address's tries, but not those of an owner who logged in there."""
    clock = Clock()
    client = await proxied_client(aiohttp_client, settings, clock)
    await register_alice_from_her_address(client)

    images = [await login_from(client, OWNER, f"Nick{n % 3}", f"guess{n}") for n in range(12)]
    aimed_at_alice = [await login_from(client, OWNER, "Alice", f"guess{n}") for n in range(12)]
    clock.now += 1.0

    assert TOO_MANY in images
    assert aimed_at_alice == [WRONG] * 5 + [TOO_MANY] * 7  # the page knows her nick: a second's wait
    assert await login_from(client, OWNER, "Alice", "pw") == LOGGED_IN
    assert await login_from(client, OWNER, "Bob", "pw") == TOO_MANY  # a first login there waits


async def test_the_limits_are_the_servers_settings(aiohttp_client: AiohttpClient, settings: Settings) -> None:
    strict = dataclasses.replace(
        settings, trusted_proxies=("127.0.0.1",), failed_logins_per_account=2, failed_logins_per_address=3
    )
    client = await aiohttp_client(create_app(strict))

    per_account = [await login_from(client, STRANGERS[n], "Alice", "guess") for n in range(3)]
    per_address = [await login_from(client, OWNER, f"Nick{n}", "guess") for n in range(4)]

    assert per_account == [WRONG, WRONG, TOO_MANY]
    assert per_address == [WRONG] * 3 + [TOO_MANY]


def test_the_refusals_are_documented() -> None:
    protocol = (Path(__file__).parents[2] / "docs" / "protocol.md").read_text()
    operations = (Path(__file__).parents[2] / "docs" / "operations.md").read_text()

    for answer in (WRONG, TOO_MANY, CROSS_SITE):
        assert f"`{answer}`" in protocol
    for flag in ("--failed-logins-per-address", "--failed-logins-per-account", "--failed-login-max-wait"):
        assert f"`{flag}`" in operations


async def test_preferences_and_description(client: TestClient) -> None:
    await register(client, "Alice")

    assert await auth(client, co="dajPref", opisGracza="alice") == "ok.."
    assert await auth(client, co="dajOpis", opisGracza="Alice") == ""
    # a nick nobody registered gets the same answers: nobody learns who has an account
    assert await auth(client, co="dajPref", opisGracza="Nobody") == "ok.."
    assert await auth(client, co="dajOpis", opisGracza="Nobody") == ""
    assert await auth(client, co="whatever") == "nieOk.unknownCo"


async def test_the_id_is_never_logged(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    secret = registered_id("Alice", "pw")

    await register(client, "Alice")
    await auth(client, co="loguj", opisGracza="Alice", idGracza=secret)
    await auth(client, co="loguj", opisGracza="Alice", idGracza=secret + "x")

    assert "Alice" in caplog.text
    assert secret not in caplog.text


async def test_a_moderator_account_may_delete_chat_lines(client: TestClient) -> None:
    await register(client, "Mod")
    await register(client, "Alice")
    await client.app[STORE_KEY].accounts.set_role("Mod", "moderator", "test")
    moderator = Zagram(client, registered_id("Mod", "pw"), "Mod")
    alice = Zagram(client, registered_id("Alice", "pw"), "Alice")
    assert (
        await auth(client, co="loguj", opisGracza="Mod", idGracza=moderator.secret)
        == "ok.zalogowanyNaSerwer."
    )
    await moderator.poll()

    alice.say(0, "spam")
    said = await alice.poll()
    line = next(line for line in said.lines(0, "c") if line.endswith("spam"))
    chat_id = line[2:].split(".")[0]
    alice.send("c", "delmsg", f"0.{chat_id}")  # not a moderator: refused
    refused = await alice.poll()
    moderator.send("c", "delmsg", f"0.{chat_id}")
    moderator.say(0, "please behave")
    seen = await moderator.poll()

    assert any("Only moderators" in text for _, _, text in chat_texts(refused.lines(0)))
    assert f"cd{chat_id}" in seen.lines(0, "cd")
    assert ("Mod", "5", "please behave") in chat_texts(seen.lines(0))  # nickType 5: a moderator


async def alice_and_a_guest(client: TestClient, secret: str, nick: str) -> tuple[Zagram, Zagram]:
    """Alice registered (and so logged in) and polling, and a guest logged in."""
    assert await register(client, "Alice") == "ok.zarejestrowalem."
    alice = Zagram(client, registered_id("Alice", "pw"), "Alice")
    guest = Zagram(client, secret, nick)
    assert await guest.login() == ""
    await alice.poll()
    return alice, guest


async def test_logging_in_again_does_not_bring_old_private_lines_back_as_new(client: TestClient) -> None:
    """A registered player whose client logs in again (a reloaded page) without logging out, and
    starts again from msgNo 0, gets the lobby's state, not its old private lines as new `ca` lines."""
    alice, bob = await alice_and_a_guest(client, "bob456", "*Bob")
    bob.say("_Alice", "hello Alice")
    await bob.poll()
    alice.say("_*Bob", "hi Bob")
    assert [text for _, _, text in chat_texts((await alice.poll()).lines(0))] == ["hello Alice", "hi Bob"]

    login = await auth(client, co="loguj", opisGracza="Alice", idGracza=alice.secret)
    assert login.startswith("ok.zalogowanyNaSerwer.")
    alice.seen = alice.acknowledged = 0
    alice.commands = []
    again = await alice.poll()
    assert "Alice" in again.lines(0, "pr")[0], "the whole state"
    assert [nick for nick, _, _ in chat_texts(again.lines(0)) if "-" in nick] == []
    bob.say("_Alice", "still there?")
    await bob.poll()
    assert [text for _, _, text in chat_texts((await alice.poll()).lines(0))] == ["still there?"]


async def test_whoever_registers_a_deleted_accounts_nick_reads_none_of_its_private_chat(
    client: TestClient,
) -> None:
    """Private conversations are kept by nick. Before, an admin's `user delete` left the account's side
    of them as it was, and whoever registered the nick next read them all (found by a helper's audit)."""
    alice, cid = await alice_and_a_guest(client, "cid789", "*Cid")
    alice.say("_*Cid", "the secret plan")
    await alice.poll()
    cid.say("_Alice", "my pin is 1234")
    await cid.poll()
    await alice.get(co="usunGracza", playerId=alice.secret)
    await client.app[HUB_KEY].persistence.flush()  # her session's end stored: she is not online
    await client.app[STORE_KEY].accounts.delete("Alice")  # what `kropki-server user delete` does
    await asyncio.sleep(1)  # chat lines are timed in whole seconds

    assert await register(client, "Alice", password="mallory") == "ok.zarejestrowalem."
    mallory = Zagram(client, registered_id("Alice", "mallory"), "Alice")
    await mallory.poll()
    mallory.send("c", "get", "0")
    assert (await mallory.poll()).lines(0) == []
    mallory.send("c", "get", "_*Cid")
    assert [line.split(".")[1:3] for line in (await mallory.poll()).lines(0)] == [["*Cid-Alice", "nochat"]]
    cid.send("c", "get", "_Alice")
    assert len(chat_texts((await cid.poll()).lines(0))) == 2, "the other side keeps what was said"
    mallory.say("_*Cid", "hello, I am new")
    await mallory.poll()
    await mallory.get(co="usunGracza", playerId=mallory.secret)
    assert await auth(client, co="loguj", opisGracza="Alice", idGracza=mallory.secret) != ""
    mallory.seen = mallory.acknowledged = 0
    mallory.commands = []
    await mallory.poll()
    mallory.send("c", "get", "_*Cid")
    assert [text for _, _, text in chat_texts((await mallory.poll()).lines(0))] == ["hello, I am new"]
