"""The wire codec: escaping, nicks and ids, msgNo, msgFromClient commands, chat lines and reply frames.

Sources: zagram's protocol page (`shared/seeds/zagram-doc.txt`: logging in, chat format and escaping,
msgFromClient) and `shared/spec/protocol.md` sections 1, 1.1, 3.1, 3.3, 4 and 12 (what MultiPoints reads).
"""

from __future__ import annotations

import itertools
import re
import string
import sys
import unicodedata

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from server.protocol.codec import (
    ID_ALPHABET,
    LANGUAGES,
    MAX_COMMANDS,
    BadCommand,
    Command,
    Flags,
    ProtocolError,
    chat_line,
    check_id,
    check_lang,
    check_nick,
    decode_client_text,
    decode_server_text,
    encode_client_text,
    encode_server_text,
    frame,
    look_key,
    nick_key,
    parse_commands,
    parse_msg_no,
    reply_head,
)
from server.protocol.confusables import PROTOTYPES

# The five user characters the doc HTML-escapes, with their entities, in the doc's order.
ENTITIES = [("<", "&#60;"), (">", "&#62;"), ("'", "&#39;"), ('"', "&#34;"), ("-", "&#45;")]


def multipoints_decode(text: str) -> str:
    """MultiPoints' getServerDecoded (and roboCup's getZagramDecoded): `@S`, `@A`, then the entities."""
    text = text.replace("@S", "/").replace("@A", "@")
    for char, entity in ENTITIES:
        text = text.replace(entity, char)
    return text


def literal_entities_decoded(text: str) -> str:
    """What a client shows for `text` typed by a user: entities the user typed literally come out decoded."""
    for char, entity in ENTITIES:
        text = text.replace(entity, char)
    return text


def has_literal_entity(text: str) -> bool:
    return any(entity in text for _, entity in ENTITIES)


# Free text: anything, plus text built from the pieces where escaping can go wrong.
# fmt: off
FRAGMENTS = [
    "@", "@A", "@S", "@@", "/", "//", "A", "S", "<", ">", "'", '"', "-", "&", "#", ";", "&#", "60", "45",
    "&#60", "&#6", "0;", ".", " ", "Привет", "Вася", "ёЁ", "😀", "🇵🇱", "Łódź", "zażółć", "\u0301", "%20", "+",
]
# fmt: on
texts = st.text() | st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=3), max_size=12).map("".join)


# ----------------------------------------------------------------------------------- escaping


@pytest.mark.parametrize(("char", "entity"), ENTITIES)
def test_server_text_escapes_the_five_doc_characters(char: str, entity: str) -> None:
    assert encode_server_text(char) == entity
    assert encode_server_text(f"a{char}b{char}") == f"a{entity}b{entity}"
    assert decode_server_text(entity) == char


def test_at_and_slash_are_escaped_as_at_a_and_at_s() -> None:
    assert encode_client_text("@") == "@A"
    assert encode_client_text("/") == "@S"
    assert encode_server_text("@") == "@A"
    assert encode_server_text("/") == "@S"
    assert decode_client_text("@S") == "/"
    assert decode_client_text("@A") == "@"


def test_doc_private_chat_example() -> None:
    # 'c120._player.Hello my email is a@Aexample.com' writes 'Hello my email is a@example.com'.
    assert encode_client_text("Hello my email is a@example.com") == "Hello my email is a@Aexample.com"
    assert decode_client_text("Hello my email is a@Aexample.com") == "Hello my email is a@example.com"
    # 'ca1313684807.John-Player.1.my email is john@Aexample.com'
    assert encode_server_text("my email is john@example.com") == "my email is john@Aexample.com"


def test_all_escapes_together() -> None:
    text = "a/b <c> 'd' \"e\" f-g @h"
    wire = "a@Sb &#60;c&#62; &#39;d&#39; &#34;e&#34; f&#45;g @Ah"
    assert encode_server_text(text) == wire
    assert decode_server_text(wire) == text
    assert multipoints_decode(wire) == text


def test_dots_and_other_text_are_not_escaped() -> None:
    # `.` is not escaped: free text is always the last field (protocol.md 1.1).
    text = "Hi. Have a nice game. :) & #1; 100% +ok Привет 😀"
    assert encode_server_text(text) == text
    assert encode_client_text(text) == text


@pytest.mark.parametrize(
    ("typed", "client_wire", "server_wire"),
    [
        # Order matters: `@` first, so a typed `@S` is `@AS` and comes back as `@S`, not `/`.
        ("@S", "@AS", "@AS"),
        ("@A", "@AA", "@AA"),
        ("@/", "@A@S", "@A@S"),
        ("/@", "@S@A", "@S@A"),
        ("@@S", "@A@AS", "@A@AS"),
        ("@-", "@A-", "@A&#45;"),
    ],
)
def test_escaping_order(typed: str, client_wire: str, server_wire: str) -> None:
    assert encode_client_text(typed) == client_wire
    assert decode_client_text(client_wire) == typed
    assert encode_server_text(typed) == server_wire
    assert decode_server_text(server_wire) == typed


def test_decoding_in_the_wrong_order_would_be_wrong() -> None:
    # Guards the test itself: `@A` first would turn the typed `@S` into `/`.
    assert "@AS".replace("@A", "@").replace("@S", "/") == "/"
    assert decode_client_text("@AS") == "@S"
    assert decode_server_text("@AS") == "@S"


@given(texts)
def test_server_text_never_holds_a_separator_or_a_raw_special_character(text: str) -> None:
    wire = encode_server_text(text)
    assert not set(wire) & set("/<>'\"-")
    # Every `@` on the wire starts `@A` or `@S`.
    assert re.fullmatch(r"(?:[^@]|@[AS])*", wire, re.DOTALL)


@given(texts)
def test_client_text_never_holds_a_slash(text: str) -> None:
    wire = encode_client_text(text)
    assert "/" not in wire
    assert re.fullmatch(r"(?:[^@]|@[AS])*", wire, re.DOTALL)


@given(texts)
@example("@S")
@example("@A")
@example("Привет, Вася! 😀🇵🇱")
@example("a@Sb@Ac/d")
def test_client_round_trip(text: str) -> None:
    assert decode_client_text(encode_client_text(text)) == text


@given(texts)
@example("@S")
@example("@AS")
@example("Привет, Вася! 😀🇵🇱 <b>-</b>")
@example("&#6<")
@example("&<")
@example("&#&#60;")
def test_server_round_trip_of_text_without_literal_entities(text: str) -> None:
    if has_literal_entity(text):
        text = text.replace("#", "")
    assert not has_literal_entity(text)
    assert decode_server_text(encode_server_text(text)) == text


@given(texts)
def test_server_decoding_is_what_multipoints_does(text: str) -> None:
    wire = encode_server_text(text)
    assert decode_server_text(wire) == multipoints_decode(wire)
    assert decode_server_text(text) == multipoints_decode(text)


@pytest.mark.parametrize(("char", "entity"), ENTITIES)
def test_an_entity_typed_literally_reaches_clients_as_its_character(char: str, entity: str) -> None:
    # zagram escapes neither `&` nor `#`, so a user who types `&#60;` is shown `<` by every client
    # that decodes as the doc says (MultiPoints, roboCup, this server's own decoder). The text does not
    # survive; it is a limit of the protocol's escaping, not of this encoder.
    typed = f"x {entity} y"
    assert encode_server_text(typed) == typed
    assert decode_server_text(encode_server_text(typed)) == f"x {char} y"
    assert multipoints_decode(encode_server_text(typed)) == f"x {char} y"


@given(texts)
@example("&#60;")
@example("&#45;&#45;-")
@example("@S&#34;/")
def test_server_round_trip_loses_only_literal_entities(text: str) -> None:
    assert decode_server_text(encode_server_text(text)) == literal_entities_decoded(text)


# ----------------------------------------------------------------------------------- nicks

GUEST_NICKS_OK = [
    "*Ala",
    "*Вася",
    "*Ala Ma",
    "*Ala Ma Kota",
    "*Ёжик",
    "*Łukasz",  # LATIN CAPITAL LETTER L WITH STROKE: a Latin letter
    "*Zażółć Gęślą",  # Polish letters are Latin letters; they mix with ASCII freely
    "*Straße",
    "*Guest0042",
    "*a_1",
    "*_",
    "*123",  # digits only: no letters to mix
    "*Вася 2",
    "*Їжак",  # Ukrainian letters are Cyrillic
    "*" + "a" * 19,  # 20 characters with the star
    "*" + "Ж" * 19,  # characters, not bytes
]

GUEST_NICKS_REFUSED = [
    "",
    "*",
    "Ala",  # a guest's nick starts with '*'
    "**Ala",
    "*Ala  Ma",  # a double space
    "* Ala",  # the name the user chose starts with a space
    "*Ala ",
    " *Ala",
    "*AlaВася",  # Latin and Cyrillic mixed
    "*Ala Вася",
    "*Аla",  # Cyrillic А followed by Latin la
    "*Ala.x",
    "*Ala-x",
    "*Ala/x",
    "*Ala@x",
    "*Ala&x",
    "*Ala!",
    "*Ala\tMa",
    "*Ala\u00a0Ma",  # no-break space
    "*Ala\nMa",
    "*Αλφα",  # Greek
    "*アリス",
    "*Ala😀",
    "*١٢٣",  # Arabic-Indic digits are not the doc's 0-9
    "*" + "a" * 20,  # 21 characters
    "*" + "Ж" * 20,
]

REGISTERED_NICKS_OK = ["Ala", "John Player", "Вася", "Łukasz", "Player_1", "a" * 20, "Ж" * 20]
REGISTERED_NICKS_REFUSED = ["", "*Ala", "Ala*", " Ala", "Ala ", "A  B", "AlaВася", "a.b", "a-b", "a" * 21]


@pytest.mark.parametrize("nick", GUEST_NICKS_OK)
def test_guest_nicks_accepted(nick: str) -> None:
    assert check_nick(nick, guest=True) == nick


@pytest.mark.parametrize("nick", GUEST_NICKS_REFUSED)
def test_guest_nicks_refused(nick: str) -> None:
    with pytest.raises(ProtocolError) as error:
        check_nick(nick, guest=True)
    assert error.value.code == "badNick"
    assert str(error.value)


@pytest.mark.parametrize("nick", REGISTERED_NICKS_OK)
def test_registered_nicks_accepted(nick: str) -> None:
    assert check_nick(nick, guest=False) == nick


@pytest.mark.parametrize("nick", REGISTERED_NICKS_REFUSED)
def test_registered_nicks_refused(nick: str) -> None:
    with pytest.raises(ProtocolError) as error:
        check_nick(nick, guest=False)
    assert error.value.code == "badNick"


@pytest.mark.parametrize("nick", ["Ala", "Вася", "Ala Ma"])
def test_guest_and_registered_nicks_differ_only_by_the_star(nick: str) -> None:
    assert check_nick(nick, guest=False) == nick
    assert check_nick("*" + nick, guest=True) == "*" + nick
    for wrong, guest in (("*" + nick, False), (nick, True)):
        with pytest.raises(ProtocolError) as error:
            check_nick(wrong, guest=guest)
        assert error.value.code == "badNick"


def test_polish_letters_are_latin_letters_in_unicode() -> None:
    for char in "ĄąĆćĘęŁłŃńÓóŚśŹźŻż":
        name = unicodedata.name(char).split()
        assert "LATIN" in name and "LETTER" in name
    assert check_nick("*ŁĄĆĘŃÓŚŹŻłąćęńóśźż", guest=True)


def doc_letter_script(char: str) -> str | None:
    """The doc's rule word for word: a character whose Unicode name has the word LATIN or CYRILLIC and
    the word LETTER."""
    words = unicodedata.name(char, "").split()
    if "LETTER" not in words:
        return None
    return "latin" if "LATIN" in words else "cyrillic" if "CYRILLIC" in words else None


@pytest.mark.parametrize(
    "char",
    [
        "\U0001f520",  # INPUT SYMBOL FOR LATIN CAPITAL LETTERS (an emoji, 🔠)
        "\U0001f521",  # INPUT SYMBOL FOR LATIN SMALL LETTERS (🔡)
        "\U0001f524",  # INPUT SYMBOL FOR LATIN LETTERS (🔤)
        "\u2c2e",  # GLAGOLITIC CAPITAL LETTER LATINATE MYSLITE
        "\u2c5e",  # GLAGOLITIC SMALL LETTER LATINATE MYSLITE
    ],
)
def test_only_the_words_latin_and_letter_make_a_latin_letter(char: str) -> None:
    # 'LATINATE' and 'LETTERS' are not the words LATIN and LETTER: these are not Latin letters.
    assert doc_letter_script(char) is None
    for nick, guest in (("*Ala" + char, True), ("*" + char, True), ("Ala" + char, False)):
        with pytest.raises(ProtocolError) as error:
            check_nick(nick, guest=guest)
        assert error.value.code == "badNick"


@pytest.mark.parametrize("char", ["\u1dd3", "\u0363"])  # COMBINING LATIN SMALL LETTER ... (A ABOVE)
def test_a_combining_latin_letter_is_not_a_nick(char: str) -> None:
    assert doc_letter_script(char) == "latin"
    for nick, guest in (("*" + char, True), (char, False), ("Ala" + char, False)):
        with pytest.raises(ProtocolError) as error:
            check_nick(nick, guest=guest)
        assert error.value.code == "badNick"


@pytest.mark.parametrize("char", ["\U000e0041", "\U000e007a", "\U000e0061"])  # TAG LATIN ... LETTER A, Z, A
def test_an_invisible_tag_letter_is_not_a_nick(char: str) -> None:
    # Their names are LATIN ... LETTER, but nobody sees them: `*Ala` and a tag were two nicks shown alike.
    assert doc_letter_script(char) == "latin"
    for nick, guest in (("*" + char, True), (char, False), ("Ala" + char, False), ("*Al" + char + "a", True)):
        with pytest.raises(ProtocolError) as error:
            check_nick(nick, guest=guest)
        assert error.value.code == "badNick"


@given(st.characters())
def test_one_character_nick_follows_the_doc_rule(char: str) -> None:
    # The doc's rule, less the combining marks it would allow (docs/protocol.md: they stack into look-alikes)
    # and the invisible tag letters (format characters).
    unseen = unicodedata.category(char)[0] in "MC"
    allowed = char in "0123456789_" or (doc_letter_script(char) is not None and not unseen)
    for nick, guest in (("*" + char, True), (char, False)):
        try:
            check_nick(nick, guest=guest)
            accepted = True
        except ProtocolError as error:
            assert error.code == "badNick"
            accepted = False
        assert accepted == allowed, (hex(ord(char)), unicodedata.name(char, "?"))


latin_words = st.text(st.sampled_from("abcxyzABCXYZłŁóÓżŻß_0123456789"), min_size=1, max_size=6)
cyrillic_words = st.text(st.sampled_from("абвгдеёжюяАБВЁЖЯїієґ_0123456789"), min_size=1, max_size=6)


@given(st.lists(latin_words, min_size=1, max_size=3) | st.lists(cyrillic_words, min_size=1, max_size=3))
def test_words_of_one_script_with_single_spaces_are_nicks(words: list[str]) -> None:
    body = " ".join(words)
    if len(body) <= 19:
        assert check_nick("*" + body, guest=True) == "*" + body
        assert check_nick(body, guest=False) == body
    else:
        with pytest.raises(ProtocolError):
            check_nick("*" + body, guest=True)


@given(
    st.text(st.sampled_from("abcłżABC"), min_size=1, max_size=8),
    st.text(st.sampled_from("абвжЖЁ"), min_size=1, max_size=8),
)
def test_latin_and_cyrillic_never_mix(latin: str, cyrillic: str) -> None:
    for body in (latin + cyrillic, cyrillic + latin, f"{latin} {cyrillic}"[:19]):
        if not ({doc_letter_script(c) for c in body} >= {"latin", "cyrillic"}):
            continue
        with pytest.raises(ProtocolError):
            check_nick("*" + body, guest=True)


@given(st.text(max_size=25))
def test_accepted_nicks_never_break_the_wire(nick: str) -> None:
    for guest in (True, False):
        try:
            check_nick(nick, guest=guest)
        except ProtocolError as error:
            assert error.code == "badNick"
            continue
        # The protocol splits on `.` and `/`, marks private chats with `-` and escapes with `@`.
        assert not set(nick) & set("./-@<>'\"&%+\n\r\t")
        assert 1 <= len(nick) - guest <= 20 - guest
        assert nick.startswith("*") == guest
        assert nick == nick.strip() and "  " not in nick


# ----------------------------------------------------------------------------------- look-alikes

LOOK_ALIKES = [
    ("Alan", "Alɑn"),  # LATIN SMALL LETTER ALPHA: a Latin letter, so the one-script rule lets it by
    ("Alan", "Aǀan"),  # LATIN LETTER DENTAL CLICK
    ("Bop", "Вор"),  # all Cyrillic: VE, O, ER
    ("Ala", "Аӏа"),  # all Cyrillic: A, PALOCHKA, A
    ("Bob", "B0b"),  # confusables.txt: DIGIT ZERO → LATIN CAPITAL LETTER O
    ("Alan", "A1an"),  # DIGIT ONE → LATIN SMALL LETTER L
    ("Alan", "AIan"),  # LATIN CAPITAL LETTER I → LATIN SMALL LETTER L
    ("alan", "AIAN"),  # case does not count: AIAN looks like ALAN, the same nick as alan
    ("Sam", "Sarn"),  # LATIN SMALL LETTER M → r, n
    ("Alan", "ALAN"),
    ("*Alan", "*\uff21lɑn"),  # full-width A; a guest's star stays
]
DIFFERENT_LOOKS = [
    ("Alan", "Alen"),
    ("Ala", "Ola"),
    ("Ali", "All"),  # i is not l (I, 1 and ǀ are)
    ("bop", "вор"),  # a small Cyrillic VE is not b
    ("Bob5", "BobS"),  # of the digits, only 0 and 1 have prototypes
    ("Bob8", "BobB"),
    ("Alan", "*Alan"),  # a guest's star tells them from a registered player
]


@pytest.mark.parametrize(("nick", "look_alike"), LOOK_ALIKES)
def test_look_alike_nicks_share_a_look(nick: str, look_alike: str) -> None:
    guest = nick.startswith("*")
    assert check_nick(nick, guest=guest) and check_nick(look_alike, guest=guest)  # both are nicks
    assert nick_key(nick) != nick_key(look_alike) or nick.upper() == look_alike.upper()
    assert look_key(nick) == look_key(look_alike)


@pytest.mark.parametrize(("nick", "other"), DIFFERENT_LOOKS)
def test_different_nicks_have_different_looks(nick: str, other: str) -> None:
    assert look_key(nick) != look_key(other)


def test_uts39_gives_prototypes_to_0_and_1_only_of_the_digits() -> None:
    assert look_key("0") == look_key("O") == look_key("o")
    assert look_key("1") == look_key("l") == look_key("I")
    assert [look_key(digit) for digit in "23456789"] == list("23456789")


def test_a_look_fits_the_column_for_every_character_of_a_nick() -> None:
    """users.look_key holds 80 characters: at most 4 for each of a nick's 20."""
    letters = (chr(code) for code in range(sys.maxunicode + 1) if "LETTER" in unicodedata.name(chr(code), ""))
    longest = 0
    for char in itertools.chain(letters, " _0123456789"):
        try:
            check_nick("A" + char + "a", guest=False)
        except ProtocolError:
            continue
        longest = max(longest, len(look_key(char)))
    assert longest == 4  # PARENTHESIZED LATIN SMALL LETTER M: (m) and m is rn


# A letter for each Latin letter it looks like, as long as it is Latin itself (the one-script rule).
LATIN_LOOK_ALIKES = {
    prototype: sorted(
        source
        for source, target in PROTOTYPES.items()
        if target == prototype and "LATIN" in unicodedata.name(source, "").split()
    )
    for prototype in string.ascii_letters
}


@given(st.text(st.sampled_from(string.ascii_letters), min_size=1, max_size=20), st.data())
def test_a_nick_with_latin_look_alike_letters_has_the_nick_s_look(nick: str, data: st.DataObject) -> None:
    disguised = "".join(data.draw(st.sampled_from([char, *LATIN_LOOK_ALIKES.get(char, [])])) for char in nick)
    assert check_nick(disguised, guest=False) == disguised
    assert look_key(disguised) == look_key(nick)


# ----------------------------------------------------------------------------------- ids


@pytest.mark.parametrize("player_id", ["a", "abc123", "A_b.9", "123456789", "._._", "Zz09_."])
def test_guest_ids_accepted(player_id: str) -> None:
    assert check_id(player_id, guest=True) == player_id


@pytest.mark.parametrize(
    "player_id",
    ["", "1234567890", "ab-c", "ab c", "ab/c", "ab+c", "ab=", "ąbc", "abc\n", "ab@c", "ab*", "١٢٣", "ａｂ"],
)
def test_guest_ids_refused(player_id: str) -> None:
    with pytest.raises(ProtocolError) as error:
        check_id(player_id, guest=True)
    assert error.value.code == "badId"


@pytest.mark.parametrize(
    "player_id", ["K4ZUPkUzXY", "abcdefghij", "A" * 64, "_._._._._.", "0123456789abcdef"]
)
def test_registered_ids_accepted(player_id: str) -> None:
    assert check_id(player_id, guest=False) == player_id


@pytest.mark.parametrize(
    "player_id", ["", "abc", "123456789", "A" * 65, "K4ZUPkUzX=", "K4ZUPkUzX/", "K4ZUPkUzXY\n"]
)
def test_registered_ids_refused(player_id: str) -> None:
    with pytest.raises(ProtocolError) as error:
        check_id(player_id, guest=False)
    assert error.value.code == "badId"


@given(st.text(st.sampled_from(ID_ALPHABET), min_size=1, max_size=70))
def test_id_length_separates_guests_from_registered(player_id: str) -> None:
    guest_ok = len(player_id) <= 9
    registered_ok = 10 <= len(player_id) <= 64
    for guest, ok in ((True, guest_ok), (False, registered_ok)):
        if ok:
            assert check_id(player_id, guest=guest) == player_id
        else:
            with pytest.raises(ProtocolError, match="."):
                check_id(player_id, guest=guest)


@given(st.text(max_size=70))
def test_ids_hold_only_the_64_character_alphabet(player_id: str) -> None:
    assert len(ID_ALPHABET) == 64
    for guest in (True, False):
        try:
            check_id(player_id, guest=guest)
        except ProtocolError as error:
            assert error.code == "badId"
        else:
            assert player_id and set(player_id) <= set(ID_ALPHABET)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_languages_accepted(lang: str) -> None:
    assert check_lang(lang) == lang


@pytest.mark.parametrize("lang", ["", "EN", "xx", "en ", "english"])
def test_languages_refused(lang: str) -> None:
    with pytest.raises(ProtocolError) as error:
        check_lang(lang)
    assert error.value.code == "badLang"


def test_doc_languages_are_known() -> None:
    assert {"en", "pl", "ru", "ua"} <= set(LANGUAGES)


# ----------------------------------------------------------------------------------- msgNo


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", (0, True)),
        ("643", (643, True)),
        ("1234.0", (1234, False)),  # first getBMsg after getMsg: no subscription lines seen yet
        ("0.0", (0, False)),
        ("1245.1245", (1245, True)),
        ("7.3", (7, True)),
        ("999999999999", (999999999999, True)),  # 12 digits
        ("5.999999999999", (5, True)),
        ("007", (7, True)),
    ],
)
def test_msg_no_forms(text: str, expected: tuple[int, bool]) -> None:
    assert parse_msg_no(text) == expected


# fmt: off
@pytest.mark.parametrize(
    "text",
    [
        "", "-1", "1.2.3", "a", "x", "1.", ".1", ".", " 1", "1 ", "+1", "1e3", "0x10", "1,5", "1\n", "1_000",
        "1234567890123", "99999999999999999999", "1.1234567890123", "1.-1", "1.a",
    ],
)
# fmt: on
def test_msg_no_refused(text: str) -> None:
    with pytest.raises(ProtocolError) as error:
        parse_msg_no(text)
    assert error.value.code == "badMsgNo"


@pytest.mark.parametrize("text", ["١٢", "１２", "１２.０", "5.٠"])
def test_msg_no_refuses_digits_other_than_ascii(text: str) -> None:
    # `\d` in a str pattern matches every Unicode decimal digit; msgNo is ASCII (and `N.０` must not
    # pass for "subscriptions seen").
    with pytest.raises(ProtocolError) as error:
        parse_msg_no(text)
    assert error.value.code == "badMsgNo"


@given(st.integers(0, 10**12 - 1), st.integers(0, 10**12 - 1))
def test_msg_no_round_trip(n: int, m: int) -> None:
    assert parse_msg_no(str(n)) == (n, True)
    assert parse_msg_no(f"{n}.0") == (n, False)
    if m:
        assert parse_msg_no(f"{n}.{m}") == (n, True)


@given(st.text(max_size=30))
def test_msg_no_never_fails_otherwise(text: str) -> None:
    try:
        n, seen = parse_msg_no(text)
    except ProtocolError as error:
        assert error.code == "badMsgNo"
    else:
        assert 0 <= n < 10**12 and isinstance(seen, bool)


# ----------------------------------------------------------------------------------- msgFromClient


@pytest.mark.parametrize("text", [None, "", "x"])
def test_nothing_from_the_client(text: str | None) -> None:
    assert parse_commands(text) == []


def test_doc_example_two_commands() -> None:
    assert parse_commands("s120.11.ab/c121.12.hello") == [
        Command("s", 120, "11", "ab"),
        Command("c", 121, "12", "hello"),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("c5.0.a.b.c", Command("c", 5, "0", "a.b.c")),  # only the first two dots split
        ("s3.101.sm.rlqmrnsmrl!bb", Command("s", 3, "101", "sm.rlqmrnsmrl!bb")),
        ("b7.12.", Command("b", 7, "12", "")),  # MultiPoints' subscribe: empty text
        ("q8.123.", Command("q", 8, "123", "")),
        ("b7.12", Command("b", 7, "12", "")),  # without the last dot, the same
        ("t9.123.p", Command("t", 9, "123", "p")),
        ("u4.101.accept2undo", Command("u", 4, "101", "accept2undo")),
        (
            "c120._player.Hello my email is a@Aexample.com",
            Command("c", 120, "_player", "Hello my email is a@Aexample.com"),
        ),
        ("c120.get.30", Command("c", 120, "get", "30")),
        ("c120.get._player", Command("c", 120, "get", "_player")),
        ("c120.del._player", Command("c", 120, "del", "_player")),
        ("c120.delmsg.11.1313684800_0", Command("c", 120, "delmsg", "11.1313684800_0")),
        (
            "v5.0.s.*Bob.3030n0.1.a.R.a.60.30._SRATP_sratp.",
            Command("v", 5, "0", "s.*Bob.3030n0.1.a.R.a.60.30._SRATP_sratp."),
        ),
        ("v6.0.a", Command("v", 6, "0", "a")),
        ("c1.0.Привет, Вася 😀", Command("c", 1, "0", "Привет, Вася 😀")),
        ("c1.0.a\nb", Command("c", 1, "0", "a\nb")),
        ("c999999999999.0.x", Command("c", 999999999999, "0", "x")),  # 12 digits
        ("c007.0.x", Command("c", 7, "0", "x")),
        ("m2.0.", Command("m", 2, "0", "")),
        ("c12.", Command("c", 12, "", "")),  # an empty table id is left for the hub to refuse
        ("c12..x", Command("c", 12, "", "x")),
    ],
)
def test_one_command(text: str, expected: Command) -> None:
    assert parse_commands(text) == [expected]


def test_text_stays_escaped() -> None:
    # Decoding `@S`/`@A` is the caller's business, after the split on `/`.
    [command] = parse_commands("c3.0.a@Sb@Ac")
    assert isinstance(command, Command)
    assert command.text == "a@Sb@Ac"
    assert decode_client_text(command.text) == "a/b@c"


@pytest.mark.parametrize(
    ("text", "flags"), [("i0nJa", "0nJa"), ("i0nJb", "0nJb"), ("i", ""), ("i5.0.x", "5.0.x")]
)
def test_the_unnumbered_i_message(text: str, flags: str) -> None:
    assert parse_commands(text) == [Flags(flags)]


def test_multipoints_request_with_flags_and_resent_commands() -> None:
    assert parse_commands("i0nJa/s3.101.ab/c4.0.hi") == [
        Flags("0nJa"),
        Command("s", 3, "101", "ab"),
        Command("c", 4, "0", "hi"),
    ]


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("c12", 12),  # no table: the number is readable
        ("c12x.0.y", 12),
        ("s5", 5),
        ("zz", None),
        ("c.0.x", None),
        ("c", None),
        ("C1.0.x", None),  # commands are lower-case letters
        ("1.0.x", None),
        ("cc1.0.x", None),
        ("c-1.0.x", None),
        (".", None),
        ("é1.0.x", None),
    ],
)
def test_unreadable_commands(text: str, number: int | None) -> None:
    assert parse_commands(text) == [BadCommand(number, "badCommand")]


def test_a_number_over_12_digits_is_not_read_as_its_first_12() -> None:
    # `c1234567890123.0.x` is refused, but the number it reports must not be 123456789012: k would then
    # acknowledge a command the client never sent.
    [bad] = parse_commands("c1234567890123.0.x")
    assert isinstance(bad, BadCommand)
    assert bad.number in (None, 1234567890123)


@pytest.mark.parametrize("text", ["c١٢.0.x", "c１.0.x"])
def test_command_numbers_are_ascii_digits(text: str) -> None:
    [message] = parse_commands(text)
    assert isinstance(message, BadCommand)


def test_a_bad_part_does_not_stop_the_others() -> None:
    assert parse_commands("s120.11.ab/zz/c12/c121.12.hello") == [
        Command("s", 120, "11", "ab"),
        BadCommand(None, "badCommand"),
        BadCommand(12, "badCommand"),
        Command("c", 121, "12", "hello"),
    ]


def test_x_means_nothing_only_as_the_whole_field() -> None:
    assert parse_commands("c1.0.a/x") == [Command("c", 1, "0", "a"), BadCommand(None, "badCommand")]


def test_empty_parts_are_bad_commands() -> None:
    assert parse_commands("s1.0.ab/") == [Command("s", 1, "0", "ab"), BadCommand(None, "badCommand")]
    assert parse_commands("/") == [BadCommand(None, "badCommand")] * 2


def test_at_most_50_commands() -> None:
    fifty = "/".join(f"c{n}.0.hi" for n in range(1, MAX_COMMANDS + 1))
    assert MAX_COMMANDS == 50
    assert parse_commands(fifty) == [Command("c", n, "0", "hi") for n in range(1, 51)]
    assert parse_commands(fifty + "/c51.0.hi") == [BadCommand(None, "tooManyCommands")]
    assert parse_commands("/".join(["x"] * 51)) == [BadCommand(None, "tooManyCommands")]


kinds = st.sampled_from("abcdefghjklmnopqrstuvwxyz")  # every letter but the unnumbered `i`
numbers = st.integers(0, 10**12 - 1)
tables = st.text(st.characters(exclude_characters="./"), max_size=8) | st.sampled_from(
    ["0", "101", "_Ala", "get"]
)


@given(kinds, numbers, tables, texts)
def test_command_round_trip(kind: str, number: int, table: str, text: str) -> None:
    wire_text = encode_client_text(text)
    [command] = parse_commands(f"{kind}{number}.{table}.{wire_text}")
    assert command == Command(kind, number, table, wire_text)
    assert decode_client_text(command.text) == text


@given(st.lists(st.tuples(kinds, numbers, tables, texts), min_size=1, max_size=MAX_COMMANDS))
def test_commands_joined_by_slashes_round_trip(parts: list[tuple[str, int, str, str]]) -> None:
    wire = "/".join(f"{k}{n}.{t}.{encode_client_text(x)}" for k, n, t, x in parts)
    expected = [Command(k, n, t, encode_client_text(x)) for k, n, t, x in parts]
    assert parse_commands(wire) == expected


@given(
    st.none()
    | st.text()
    | st.lists(st.sampled_from(["c1.0.x", "i0nJa", "/", ".", "zz", "c", "1"])).map("".join)
)
def test_any_text_gives_a_list_and_never_raises(text: str | None) -> None:
    messages = parse_commands(text)
    assert isinstance(messages, list)
    parts = 0 if text in (None, "", "x") else len(text.split("/"))
    if parts > MAX_COMMANDS:
        assert messages == [BadCommand(None, "tooManyCommands")]
        return
    assert len(messages) == parts
    for message in messages:
        assert isinstance(message, Command | Flags | BadCommand)
        if isinstance(message, Command):
            assert re.fullmatch("[a-z]", message.kind) and message.kind != "i"
            assert 0 <= message.number < 10**12
            assert not set(message.table) & set("./")
            assert "/" not in message.text
        elif isinstance(message, BadCommand):
            assert message.reason == "badCommand"
            assert message.number is None or 0 <= message.number < 10**12


# ----------------------------------------------------------------------------------- chat lines


@pytest.mark.parametrize(
    ("args", "line"),
    [
        ((1373011049, 0, "John", "3", "Salut Alexey"), "1373011049_0.John.3.Salut Alexey"),
        (
            (1313684800, 0, "John", "B3", "Hi. Have a nice game. :)"),
            "1313684800_0.John.B3.Hi. Have a nice game. :)",
        ),
        ((1313685334, 0, "", "", "Player John resigns."), "1313685334_0...Player John resigns."),
        ((1313685334, 1, "John", "B3", "thx"), "1313685334_1.John.B3.thx"),
        ((1313684800, 0, "", "u1undo", "Player firstnick asks to undo the move."),
         "1313684800_0..u1undo.Player firstnick asks to undo the move."),
        ((1313684807, 0, "John-Player", "1", "my email is john@example.com"),
         "1313684807_0.John-Player.1.my email is john@Aexample.com"),
        ((1313684800, 0, "John", "d", ""), "1313684800_0.John.d."),
        (
            (5, 2, "*Ala", "1", "a/b <i>-</i> 'q' \"d\""),
            "5_2.*Ala.1.a@Sb &#60;i&#62;&#45;&#60;@Si&#62; &#39;q&#39; &#34;d&#34;",
        ),
    ],
)
def test_chat_line_format(args: tuple[int, int, str, str, str], line: str) -> None:
    assert chat_line(*args) == line


def read_chat_like_multipoints(line: str) -> tuple[int, str, str, str]:
    """MultiPoints: split into at most 4 parts, time = the leading digits, text decoded."""
    time_field, nick, nick_type, text = line.split(".", 3)
    return int(re.match("[0-9]*", time_field).group()), nick, nick_type, multipoints_decode(text)


@given(
    st.integers(0, 2**40),
    st.integers(0, 999),
    st.sampled_from(["John", "*Ala", "", "John-Player", "*Вася"]),
    st.sampled_from(["3", "B3", "W1", "", "0", "1", "2", "-", "d"]),
    texts,
)
def test_clients_read_back_every_chat_line(time: int, n: int, nick: str, nick_type: str, text: str) -> None:
    line = chat_line(time, n, nick, nick_type, text)
    assert "/" not in line
    assert line.startswith(f"{time}_{n}.")
    assert read_chat_like_multipoints(line) == (time, nick, nick_type, literal_entities_decoded(text))


# ----------------------------------------------------------------------------------- frames


def test_frame_doc_example() -> None:
    assert frame(True, 643, 649, 120, ["q0", "ca1_0.John.3.hi"]) == "ok/m643.649.120/q0/ca1_0.John.3.hi/end"


def test_frame_for_a_reader_not_logged_in() -> None:
    assert frame(False, 0, 7, 0, ["q0", "pr"]) == "sd/m0.7.0/q0/pr/end"


def test_frame_without_messages() -> None:
    assert frame(True, 1, 2, 3, []) == "ok/m1.2.3/end"
    assert frame(False, 1, 2, 3, []) == "sd/m1.2.3/end"


def test_frame_never_holds_an_empty_message() -> None:
    # MultiPoints and roboCup split on every `/`; an empty string is not a message.
    assert frame(True, 1, 2, 3, [""]) == "ok/m1.2.3/end"
    for messages in (["", ""], ["q0", ""], ["q0", "", "pa*Ala"], ["", "q0"]):
        reply = frame(True, 1, 2, 3, messages)
        assert "//" not in reply, reply


wire_messages = st.text(st.characters(exclude_characters="/"), min_size=1, max_size=20)


@given(st.booleans(), numbers, numbers, numbers, st.lists(wire_messages, max_size=10))
def test_frames_split_back_into_their_messages(
    logged_in: bool, first: int, last: int, processed: int, messages: list[str]
) -> None:
    reply = frame(logged_in, first, last, processed, messages)
    head, numbering, *body, tail = reply.split("/")
    assert head == ("ok" if logged_in else "sd")
    assert tail == "end"
    assert body == messages
    assert "//" not in reply
    # MultiPoints: all three numbers of `m<i>.<j>.<k>` must be integers.
    assert numbering[0] == "m"
    assert [int(x) for x in numbering[1:].split(".")] == [first, last, processed]
    # MultiPoints accepts a reply that starts with `ok` and ends with `end`.
    assert reply.startswith("ok" if logged_in else "sd") and reply.endswith("end")


def test_a_replys_head_and_its_quiet_lines_as_a_push_connection_reads_them() -> None:
    """A push connection sends a quiet reply (nothing but what every reply repeats) only when it differs
    from the last it sent, so it keeps the quiet lines; a reply with news is always sent, and is neither
    split nor kept (a whole lobby's state is 150 KB, for each of thousands of connections)."""
    quiet = frame(True, 7, 9, 3, ["q0", "vg*Ala.2020s0..s.F.n....", "q17"])
    assert reply_head(quiet) == (9, 3, "q0/vg*Ala.2020s0..s.F.n..../q17/end")
    assert reply_head(frame(True, 7, 9, 0, [])) == (9, 0, "end")
    assert reply_head(frame(True, 7, 9, 3, ["q0", "pa*Bob", "vg*Ala.2020s0..s.F.n...."])) == (9, 3, None)
    assert reply_head(frame(True, 7, 9, 3, ["q0", "endless"])) == (9, 3, None)  # a line, not the end
    assert reply_head(frame(False, 0, 12, 0, ["q0", "pr*Ala"])) == (12, 0, None)
