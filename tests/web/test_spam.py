"""Spam that no moderator should have to chase (issue 46.7, docs/moderation.md "Spam"): the same line
in other letters, a run of links from a newcomer, the operator's banned words. Each refusal is a
server line for the writer alone, in their language, and changes nothing: the line is not said."""

from __future__ import annotations

from dataclasses import replace

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.hub.hub import Hub
from server.hub.limits import SAME_LINE_PER_MINUTE
from server.hub.sentences import CATALOGUE
from server.hub.spam import LINKS_FROM_NEW, NEW_ACCOUNT_SECONDS
from tests.conftest import served
from tests.store.test_accounts import registered_id
from tests.web.test_auth import register
from tests.web.test_stream import chat_texts, hub_of, open_table
from tests.web.zagram import Reply, Zagram

BANNED = ("gold", "spam*", "cheap pills")
BANNED_SENTENCE = "A word in this line is not allowed here; it was not sent."
LINKS_SENTENCE = (
    f"Guests and accounts younger than a day may post at most {LINKS_FROM_NEW} lines with a link in 10 "
    "minutes; it was not sent. Please wait, or log in with an older account."
)


def said(reply: Reply, table: int = 0) -> list[tuple[str, str]]:
    """(nick, text) of the lines people said in a section of a reply."""
    return [(nick, text) for nick, kind, text in chat_texts(reply.lines(table)) if kind != "e"]


def refusals(reply: Reply, table: int = 0) -> list[str]:
    return [text for _, kind, text in chat_texts(reply.lines(table)) if kind == "e"]


async def guests(client: TestClient, *nicks: str, lang: str = "en") -> list[Zagram]:
    players = [Zagram(client, f"{nick[1:].lower()}123", nick) for nick in nicks]
    for player in players:
        await player.login(lang)
        await player.poll()
    return players


async def test_the_same_line_in_other_letters_is_the_same_line_anywhere(client: TestClient) -> None:
    """Before, only the very same text counted: `BUY CHEAP GOLD` in capitals, in spaced-out lower
    case, with a zero for the o and with Cyrillic letters went through, a fourth time and more."""
    ala, bob = await guests(client, "*Ala", "*Bob")
    ala.say(0, "BUY CHEAP GOLD")
    ala.say("_*Bob", "buy   cheap  gold!")
    ala.say(0, "Buy cheap g0ld")
    ala.say("_*Bob", "ВUY СНЕАР GOLD")  # Cyrillic В, С, Н, Е, А, Р
    ala.say(0, "buy cheap gold, please")  # another line
    reply = await ala.poll()

    assert refusals(reply) == ["The same line again: it was not sent."]
    assert [text for _, text in said(reply)] == [
        "BUY CHEAP GOLD",
        "buy   cheap  gold!",
        "Buy cheap g0ld",
        "buy cheap gold, please",
    ]
    assert SAME_LINE_PER_MINUTE == 3
    seen_by_bob = [text for _, text in said(await bob.poll())]
    assert "ВUY СНЕАР GOLD" not in seen_by_bob and "Buy cheap g0ld" in seen_by_bob


async def test_a_guest_posts_a_few_links_and_no_run_of_them(client: TestClient) -> None:
    """Before, a guest could post a link in every one of 20 lines a minute. Lines that only look a
    little like links (`e.g.`, `3.14`, a missing space after a full stop) are not links."""
    ala, bob = await guests(client, "*Ala", "*Bob")
    ala.say(0, "my games: https://example.org/ala")
    ala.say("_*Bob", "see example.com")
    ala.say(0, "and www.example.net too")  # the third: refused
    ala.say("_*Bob", "buy at t.me/gold")  # refused in private chat as well
    for text in ("e.g. this one", "pi is 3.14", "I won.Next game?", "mail me at home"):
        ala.say(0, text)
    reply = await ala.poll()

    assert refusals(reply) == [LINKS_SENTENCE, LINKS_SENTENCE]
    assert [text for _, text in said(reply)] == [
        "my games: https://example.org/ala",
        "see example.com",
        "e.g. this one",
        "pi is 3.14",
        "I won.Next game?",
        "mail me at home",
    ]
    assert "and www.example.net too" not in [text for _, text in said(await bob.poll())]


async def test_links_wait_for_an_account_a_day_old(aiohttp_client: AiohttpClient, settings: Settings) -> None:
    """A new account is held as a guest is; the same account a day later is not. Before, an account
    registered a minute ago posted links without end."""
    now = [0.0]
    hub = Hub(clock=lambda: now[0])
    client = await served(aiohttp_client, settings, hub)
    assert await register(client, "Alice") == "ok.zarejestrowalem."
    registered = hub.players[registered_id("Alice", "pw")].registered_at
    now[0] = registered + 60
    alice = Zagram(client, registered_id("Alice", "pw"), "Alice")
    await alice.poll()
    for n in range(LINKS_FROM_NEW + 1):
        alice.say(0, f"game {n}: https://example.org/{n}")
    assert refusals(await alice.poll()) == [LINKS_SENTENCE]

    now[0] = registered + NEW_ACCOUNT_SECONDS
    for n in range(LINKS_FROM_NEW + 1, 2 * LINKS_FROM_NEW + 3):
        alice.say(0, f"game {n}: https://example.org/{n}")
    reply = await alice.poll()
    assert refusals(reply) == []
    assert len(said(reply)) == LINKS_FROM_NEW + 2


async def test_banned_words_are_refused_at_the_lobby_a_table_and_in_private(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """Whole words, case and look-alikes aside, without the word said back; a word that only holds a
    banned one (`goldfish`) passes. Before, there was no list at all."""
    client = await served(aiohttp_client, replace(settings, banned_words=BANNED))
    ala, bob = await guests(client, "*Ala", "*Bob")
    table = open_table(client, "*Ala", "*Bob")
    ala.send("b", table.uid)
    await ala.poll()
    ala.say(0, "cheap GOLD here")
    ala.say(table.uid, "you are a Spammer")
    ala.say("_*Bob", "cheap   p1lls")
    ala.say(0, "my goldfish is called Sp am")
    ala.say(table.uid, "a golden move")
    reply = await ala.poll()

    assert refusals(reply) == [BANNED_SENTENCE, BANNED_SENTENCE]
    assert refusals(reply, table.uid) == [BANNED_SENTENCE]
    assert all("gold" not in text.lower() and "spam" not in text.lower() for text in refusals(reply))
    assert said(reply) == [("*Ala", "my goldfish is called Sp am")]
    assert said(reply, table.uid) == [("*Ala", "a golden move")]
    kept = [entry.text for entry in hub_of(client).tables[table.uid].chat.entries]
    assert kept == ["a golden move"]
    assert [text for _, text in said(await bob.poll())] == ["my goldfish is called Sp am"]
    old_style = {"co": "dodajWpis", "idGracza": "ala123", "table": str(table.uid), "msgNo": "1"}
    assert await ala.get(**old_style, newMsgs="GOLD") == "err.bannedWord"
    assert [entry.text for entry in hub_of(client).tables[table.uid].chat.entries] == kept


async def test_a_refusal_reads_in_the_players_language_and_counts_for_nothing(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """A refused line is not one of the minute's chat lines, nor one of the times a line was said."""
    client = await served(aiohttp_client, replace(settings, banned_words=BANNED))
    (ola,) = await guests(client, "*Ola", lang="pl")
    for _ in range(5):
        ola.say(0, "gold gold")
    for _ in range(SAME_LINE_PER_MINUTE):
        ola.say(0, "dzień dobry")
    reply = await ola.poll()

    assert refusals(reply) == [CATALOGUE["bannedWord"]["pl"]] * 5
    assert [text for _, text in said(reply)] == ["dzień dobry"] * SAME_LINE_PER_MINUTE
    counted = [key for _, key in hub_of(client).players["ola123"].said]
    assert counted == ["dzlen dobry"] * SAME_LINE_PER_MINUTE  # the line as line_key reads it


async def test_a_banned_word_split_by_characters_nobody_sees_is_refused(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """`g`, a zero-width space, `old` reads `gold`; before, it was two words and went through, and so did
    the same line a fourth time with a soft hyphen in it."""
    client = await served(aiohttp_client, replace(settings, banned_words=BANNED))
    ala, bob = await guests(client, "*Ala", "*Bob")
    ala.say(0, "cheap g\u200bold here")
    ala.say("_*Bob", "sp\u2060am")
    for n in range(SAME_LINE_PER_MINUTE + 1):
        ala.say(0, "hello" if n == 0 else "hel\u00adlo" + "\ufe0f" * n)
    reply = await ala.poll()

    assert refusals(reply) == [BANNED_SENTENCE, BANNED_SENTENCE, "The same line again: it was not sent."]
    assert [text for _, text in said(await bob.poll())] == [
        "hello",
        "hel\u00adlo\ufe0f",
        "hel\u00adlo\ufe0f\ufe0f",
    ]
