"""What server/hub/spam.py reads as the same line, a link and a banned word, and what it does not:
each false positive here would refuse an honest player's line."""

from __future__ import annotations

import pytest

from server.hub.spam import BannedWords, has_link, line_key


@pytest.mark.parametrize(
    "variant",
    [
        "buy cheap gold",
        "BUY CHEAP GOLD",
        "  Buy\tcheap   gold!!!",
        "buy cheap g0ld",  # the digit zero
        "ВUY СНЕАР GOLD",  # Cyrillic В, С, Н, Е, А, Р
        "ｂｕｙ ｃｈｅａｐ ｇｏｌｄ",  # full width
        "büy chéap göld",
        "buy che\u200bap gold",  # a zero-width space inside a word
        "b\u00aduy cheap go\u2060ld",  # a soft hyphen and a word joiner
        "buy\ufe0f cheap\U000e0067 gold",  # a variation selector and a tag letter
    ],
)
def test_a_line_in_other_letters_is_the_same_line(variant: str) -> None:
    assert line_key(variant) == line_key("buy cheap gold")


@pytest.mark.parametrize(("one", "other"), [("gg", "gg wp"), ("12:7", "7:12"), (":)", ":("), ("?", "??")])
def test_different_lines_stay_different(one: str, other: str) -> None:
    assert line_key(one) != line_key(other)


@pytest.mark.parametrize(
    "text",
    [
        "http://example.org",
        "see HTTPS://x.y/z",
        "www.example",
        "go to example.com now",
        "t.me/gold",
        "sub.domain.example.ru/path?q=1",
        "ｅｘａｍｐｌｅ．ｃｏｍ",  # full width
        "example\u3002com",  # the ideographic full stop: browsers read it as a dot (IDNA, UTS #46)
        "t\uff61me/gold",  # its half-width form
        "gold.shop!",
    ],
)
def test_links(text: str) -> None:
    assert has_link(text)


@pytest.mark.parametrize(
    "text", ["www\u200b.example", "example\u2060.com", "ht\u00adtps://x.y", "t\ufeff.me/gold"]
)
def test_a_link_split_by_an_invisible_character_is_a_link(text: str) -> None:
    assert has_link(text)


@pytest.mark.parametrize(
    "text",
    [
        "e.g. this",
        "i.e. that",
        "pi is 3.14",
        "version 1.2.3",
        "I won.Next game?",
        "a.m. or p.m.",
        "mail me at ala@example",
        "score 12.5:7.5",
        "Mr.Smith",
        "...com",
    ],
)
def test_not_links(text: str) -> None:
    assert not has_link(text)


# `gold` as a reader sees it, split by a character nobody sees: zero-width space, zero-width joiner and
# non-joiner, word joiner, soft hyphen, byte-order mark, variation selector, tag letter, Hangul filler.
INVISIBLY_SPLIT = [
    f"g{char}old"
    for char in ("\u200b", "\u200d", "\u200c", "\u2060", "\u00ad", "\ufeff", "\ufe0f", "\U000e0061", "\u3164")
]
BANNED = BannedWords(["gold", "spam*", "cheap pills", "# not a comment here, a phrase", "   "])


@pytest.mark.parametrize(
    "text",
    ["GOLD", "buy g0ld!", "золото or gold", "spam", "Spammers here", "CHEAP   p1lls", "ｇｏｌｄ", "göld"]
    + INVISIBLY_SPLIT,
)
def test_banned_words_whole_words_case_and_look_alikes_aside(text: str) -> None:
    assert BANNED.found_in(text)


@pytest.mark.parametrize(
    "text", ["goldfish", "a golden move", "marigold", "antispam", "cheap", "pills", "cheappills", "sp am"]
)
def test_a_word_holding_a_banned_one_is_not_banned(text: str) -> None:
    assert not BANNED.found_in(text)


def test_no_list_bans_nothing() -> None:
    assert not BannedWords([]).found_in("anything at all")
    assert not BannedWords(["***"]).found_in("***")
