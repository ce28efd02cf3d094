"""`/auth.py` over HTTP: registration, login, profile look-ups, the failed-login limit, moderators."""

from __future__ import annotations

import logging

import pytest
from aiohttp.test_utils import TestClient

from server.app import STORE_KEY
from tests.store.test_accounts import registered_id
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


async def test_failed_logins_are_limited_per_address(client: TestClient) -> None:
    await register(client, "Alice")
    for _ in range(10):
        answer = await auth(client, co="loguj", opisGracza="Alice", idGracza="WrongWrong")
        assert answer == "nieOk.wrongNickOrId"

    blocked = await auth(client, co="loguj", opisGracza="Alice", idGracza=registered_id("Alice", "pw"))

    assert blocked == "nieOk.tooManyFailedLogins"


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
    await client.app[STORE_KEY].accounts.set_moderator("Mod", True)
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


async def test_logging_in_again_does_not_bring_old_private_lines_back_as_new(client: TestClient) -> None:
    """A registered player whose client logs in again (a reloaded page) without logging out, and
    starts again from msgNo 0, gets the lobby's state, not its old private lines as new `ca` lines."""
    assert await register(client, "Alice") == "ok.zarejestrowalem."
    alice = Zagram(client, registered_id("Alice", "pw"), "Alice")
    bob = Zagram(client, "bob456", "*Bob")
    assert await bob.login() == ""
    await alice.poll()
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
