"""The client's texts (server/static/i18n.js, server-words.js, tournament-words.js and
moderation-words.js), read as text: every language has every key with the same `{names}` (and a key in
one file only), the refusals the server writes itself read the same in the client, and every refusal
code the server can answer has a sentence."""

from __future__ import annotations

import re
from pathlib import Path

import server
from server.engine.game import Result
from server.hub.sentences import CATALOGUE, PROPOSAL_WORDS, result_sentence
from server.protocol.codec import LANGUAGES as SERVER_LANGUAGES
from tests.static.server_codes import server_codes

STATIC = Path(server.__file__).parent / "static"
LANGUAGES = ("en", "pl", "ru", "ua")
FILES = ("i18n.js", "server-words.js", "tournament-words.js", "moderation-words.js")
_BLOCK = re.compile(r"^(?:export )?const (\w+) = \{$")
_LANGUAGE = re.compile(r"^  (\w+): \{$")
_ENTRY = re.compile(r'^ {4}"?([\w.]+)"?: "((?:[^"\\]|\\.)*)",$')


def client_texts() -> dict[str, dict[str, str]]:
    """lang -> key -> text, over all the blocks (TEXTS of i18n.js, SERVER_LINES and REFUSALS)."""
    texts: dict[str, dict[str, str]] = {}
    block = lang = None
    for line in "\n".join((STATIC / name).read_text() for name in FILES).splitlines():
        if found := _BLOCK.match(line):
            block, lang = found[1], None
        elif block and (found := _LANGUAGE.match(line)):
            lang = found[1]
        elif block and lang and (found := _ENTRY.match(line)):
            entries = texts.setdefault(lang, {})
            assert found[1] not in entries, f"{lang}.{found[1]} twice"
            entries[found[1]] = found[2].replace('\\"', '"')
        elif line == "};":
            block = lang = None
    return texts


def names(text: str) -> set[str]:
    return set(re.findall(r"\{(\w+)\}", text))


def test_the_parser_reads_every_entry() -> None:
    source = "\n".join((STATIC / name).read_text() for name in FILES)
    entries = sum(1 for line in source.splitlines() if re.match(r'^ {4}"?[\w.]+"?: "', line))
    assert sum(len(keys) for keys in client_texts().values()) == entries


def test_every_key_is_in_the_four_languages_with_the_same_names() -> None:
    texts = client_texts()
    assert tuple(texts) == LANGUAGES
    assert set(LANGUAGES) <= set(SERVER_LANGUAGES)  # a language the client picks is one changeLang takes
    english = texts["en"]
    for lang in LANGUAGES[1:]:
        assert sorted(set(english) - set(texts[lang])) == [], f"missing in {lang}"
        assert sorted(set(texts[lang]) - set(english)) == [], f"only in {lang}"
        for key, text in english.items():
            assert names(texts[lang][key]) == names(text), f"{lang}.{key}"


def test_the_refusals_the_server_writes_read_the_same_in_the_client() -> None:
    texts = client_texts()
    for code, sentences in CATALOGUE.items():
        if "en" in sentences:  # a notice of the server's own, not an answer to a request
            continue
        for lang in LANGUAGES[1:]:
            assert texts[lang][f"err.{code}"] == sentences[lang], f"{lang} {code}"


def sentence_key(code: str) -> str:
    """The key of a refusal's sentence, as lines.js's refusalText reads it: auth.py's bare `nieOk.` is
    zagram's answer to an internal error."""
    return f"err.{code or 'internal'}"


def test_every_refusal_the_server_can_answer_has_a_sentence() -> None:
    """Read from the server's code (tests/static/server_codes.py): a code added tomorrow is found."""
    english = client_texts()["en"]
    codes = server_codes()
    assert codes.unreadable == []
    found = codes.refusals
    assert {"chatFlood", "tooManyInvitations", "badRound", "missing", "tooManyRegistrations", ""} <= found
    assert sorted(code for code in found if sentence_key(code) not in english) == []


def test_every_refusal_a_poll_can_get_as_a_line_has_the_servers_sentence_in_each_language() -> None:
    """A command inside a poll is refused with an `e` line that the server writes in the player's
    language: every code the hub, the codec and the cluster raise, and every code told, has one."""
    codes = server_codes()
    assert {"chatFlood", "busy", "notReached", "notDelivered"} <= codes.in_the_stream
    for code in sorted(codes.in_the_stream - {""}):  # "": a sentence relayed as it came
        needed = set(LANGUAGES[1:]) | (set() if code in codes.raised else {"en"})  # raised: its English
        assert needed <= set(CATALOGUE.get(code, {})), f"server/hub/sentences.py: {code}"


def test_the_client_has_no_sentence_for_a_code_the_server_never_sends() -> None:
    codes = server_codes()
    sent = {sentence_key(code) for code in codes.refusals}
    assert sorted(key for key in client_texts()["en"] if key.startswith("err.") and key not in sent) == []


def test_the_clients_english_server_lines_are_the_servers_sentences() -> None:
    english = client_texts()["en"]
    for what, words in PROPOSAL_WORDS.items():
        assert english[f"what{what.capitalize()}"] == words
    names2, scores = ("*Ala", "*Bob"), (12, 7)
    cases = {
        "lineResigned": (Result(1, "R"), "", {"winner": "*Ala"}),
        "lineOnTime": (Result(2, "T"), "", {"winner": "*Bob"}),
        "lineForfeit": (Result(1, "F"), "", {"winner": "*Ala", "loser": "*Bob"}),
        "lineWon": (Result(1, "score", 5), "", {"winner": "*Ala", "won": "12", "lost": "7"}),
        "lineDraw": (Result(0, "score"), "", {"blue": "12", "red": "7"}),
        "lineDrawAgreed": (Result(0, "score"), "agreed", {}),
        "lineCancelled": (Result(0, "Void"), "", {}),
        "lineNobodyCame": (Result(0, "Void"), "no-show", {}),
        "lineOrganiserCancelled": (Result(0, "Void"), "organiser", {}),
        "lineTeamLeft": (Result(1, "R"), "left", {"winner": "*Ala", "loser": "*Bob"}),
        "lineAbandonedWon": (Result(1, "R"), "abandoned", {"winner": "*Ala", "loser": "*Bob"}),
        "lineCalledOff": (Result(0, "Void"), "abandoned", {}),
    }
    for key, (result, how, values) in cases.items():
        sentence = result_sentence(result, names2, scores, how)  # type: ignore[arg-type]
        assert english[key].format(**values) == sentence, key
