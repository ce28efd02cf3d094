"""What the server writes in chat (server/hub/sentences.py): a refusal in the reader's language, with
English as the fallback, and a table's server lines as English sentences under their codes."""

from __future__ import annotations

import random

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.limits import CHAT_LINES_PER_MINUTE
from server.hub.sentences import CATALOGUE, for_player
from server.protocol.codec import parse_commands
from tests.web.zagram import parse_reply

READERS = {lang: f"{lang}0001xx" for lang in ("pl", "ua", "uk", "ru", "en", "de")}


def hub_of_readers() -> Hub:
    hub = Hub(timers=ManualTimers(), rng=random.Random(1), clock=lambda: 1_700_000_000.0)
    for lang, secret in READERS.items():
        hub.guest_login(secret, f"*{lang.upper()}reader", lang)
    return hub


def told(hub: Hub, secret: str, commands: str) -> list[str]:
    """The texts of the lines for this player only (nickType `e`) that the commands bring."""
    hub.receive(secret, parse_commands(commands))
    reply = parse_reply(hub.reply(secret, 0, with_subscriptions=False))
    lines = [line for section in reply.sections.values() for line in section if line.startswith("c")]
    return [line.split(".", 3)[3] for line in lines if line.split(".")[2] == "e"]


def test_a_refusal_is_written_in_each_players_language_and_english_says_more() -> None:
    hub = hub_of_readers()
    said = {lang: told(hub, secret, "c1.99.hello") for lang, secret in READERS.items()}  # no table 99

    assert said["pl"] == ["Nie jesteś przy tym stole."]
    assert said["ru"] == ["Вы не за этим столом."]
    assert said["ua"] == said["uk"] == ["Ви не за цим столом."]  # `uk` is the standard code for `ua`
    assert said["en"] == ["You are not at table 99."]  # the English sentence names the table
    assert said["de"] == said["en"]  # a language without a catalogue reads English


def test_a_command_the_server_cannot_read_is_refused_in_the_players_language() -> None:
    hub = hub_of_readers()
    assert told(hub, READERS["pl"], "c1") == ["Serwer nie zrozumiał tego polecenia."]
    assert told(hub, READERS["en"], "c1") == ["Command refused: badCommand."]
    assert told(hub, READERS["ru"], "z1.0.nothing") == ["Эта команда не работает на этом сервере."]


def test_a_chat_flood_in_a_poll_is_refused_in_the_players_language() -> None:
    """Issue 43: `chatFlood` had no sentence, so a Polish player read the English one."""
    hub = hub_of_readers()
    lines = "/".join(f"c{n}.0.line{n}" for n in range(1, CHAT_LINES_PER_MINUTE + 2))
    assert told(hub, READERS["pl"], lines) == ["Za dużo wiadomości w ciągu minuty; poczekaj chwilę."]
    assert told(hub, READERS["en"], lines) == [
        f"At most {CHAT_LINES_PER_MINUTE} chat lines a minute; please wait a little."
    ]


def test_a_change_of_language_changes_the_next_refusal() -> None:
    hub = hub_of_readers()
    secret = READERS["en"]
    hub.change_lang(secret, "ua")
    assert told(hub, secret, "c1.99.hello") == ["Ви не за цим столом."]


def test_a_code_without_a_sentence_falls_back_to_english_and_values_are_filled_in() -> None:
    assert for_player("pl", "noSuchCode", "The English sentence.") == "The English sentence."
    assert for_player("ru", "", "Sent by another member.") == "Sent by another member."
    assert for_player("pl", "notDelivered", nick="*Zed") == (
        "Twoja wiadomość do *Zed nie dotarła: ten gracz jest teraz nieosiągalny."
    )
    assert for_player("fr", "notDelivered", nick="*Zed") == (
        "Your message to *Zed was not delivered: they are not reachable now."
    )


def test_every_sentence_of_the_catalogue_has_the_four_languages() -> None:
    for code, sentences in CATALOGUE.items():
        assert {"pl", "ru", "ua"} <= set(sentences), code
        assert all(text.endswith(".") for text in sentences.values()), code


def table_lines(hub: Hub, uid: int) -> list[tuple[str, str]]:
    return [(entry.nick_type, entry.text) for entry in hub.tables[uid].chat.entries if not entry.nick]


def two_players(game_type: str = "0808stanF0.0.0") -> tuple[Hub, int]:
    hub = Hub(timers=ManualTimers(), rng=random.Random(1), clock=lambda: 1_700_000_000.0)
    hub.guest_login("ala123", "*Ala", "pl")
    hub.guest_login("bob456", "*Bob", "en")
    return hub, hub.open_table(parse_game_type(game_type), "*Ala", "*Bob").uid


def test_a_game_that_ends_by_both_stops_says_who_won_and_the_score() -> None:
    """A game that ended on the board (both STOPs here) used to end without its result line."""
    hub, uid = two_players("1010noT1F0.0.0")
    hub.move("ala123", str(uid), "ai")
    hub.move("bob456", str(uid), "jj")
    hub.stop("ala123", str(uid))
    hub.stop("bob456", str(uid))

    assert table_lines(hub, uid)[:3] == [
        ("stop1", "*Ala pressed STOP."),
        ("stop2", "*Bob pressed STOP."),
        ("W+2", "*Bob won 2:0."),  # the code stays the result: the sentence is for people
    ]


def test_resignation_propositions_and_a_draw_are_sentences_under_their_codes() -> None:
    hub, uid = two_players()
    hub.move("ala123", str(uid), "aa")
    hub.propose("bob456", str(uid), "undo")
    hub.propose("bob456", str(uid), "cancel2undo")
    hub.propose("ala123", str(uid), "draw")
    hub.propose("bob456", str(uid), "reject1draw")
    hub.propose("bob456", str(uid), "resign")
    hub.propose("ala123", str(uid), "new")
    hub.propose("bob456", str(uid), "new")  # the second game: *Bob is blue now
    hub.propose("ala123", str(uid), "draw")
    hub.propose("bob456", str(uid), "ok2draw")

    assert [line for line in table_lines(hub, uid) if not line[0].startswith(("l", "rated", "unrated"))] == [
        ("u2undo", "*Bob proposes to take back the last move."),
        ("cancel2undo", "*Bob withdrew the proposal to take back the last move."),
        ("u1draw", "*Ala proposes to end the game in a draw."),
        ("reject1draw", "*Bob declined to end the game in a draw."),
        ("B+R", "*Ala won by resignation."),
        ("u1new", "*Ala proposes to play a new game."),
        ("ok1new", "*Bob agreed to play a new game."),
        ("u2draw", "*Ala proposes to end the game in a draw."),
        ("ok2draw", "*Bob agreed to end the game in a draw."),
        ("0", "Draw by agreement."),
    ]


def test_a_sentence_whose_values_did_not_come_is_the_english_one() -> None:
    english = "You are muted until 2027-01-15 09:00 UTC (spam): your lines are not sent."
    assert for_player("pl", "muted", english) == english
    assert for_player("pl", "muted", english, until="2027-01-15 09:00 UTC", reason="spam") == (
        "Masz zakaz pisania do 2027-01-15 09:00 UTC (spam): twoje wiadomości nie są wysyłane."
    )
