"""The zagram wire format: escaping, identities, message numbers, client commands, reply framing.

Pure functions between the wire and typed values. Everything malformed becomes a
`ProtocolError` whose message is the short answer the client gets (docs/protocol.md lists them).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from server.protocol.confusables import PROTOTYPES

ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_."
MAX_GUEST_ID = 9
MIN_REGISTERED_ID = 10
MAX_ID = 64
MAX_NICK = 20
MAX_CHAT = 300  # characters of decoded text in one chat line
MAX_COMMANDS = 50  # simple messages in one msgFromClient
LANGUAGES = ("en", "pl", "ru", "ua", "de", "fr", "cs", "uk")

_ENTITIES = {"<": "&#60;", ">": "&#62;", "'": "&#39;", '"': "&#34;", "-": "&#45;"}
_ENTITY_RE = re.compile("[<>'\"-]")
_ID_RE = re.compile(r"[A-Za-z0-9_.]+")
_MSG_NO_RE = re.compile(r"([0-9]{1,12})(?:\.([0-9]{1,12}))?")
_COMMAND_RE = re.compile(r"([a-z])([0-9]{1,12})\.([^./]*)(?:\.(.*))?", re.DOTALL)
_NUMBERED_RE = re.compile(r"[a-z]([0-9]{1,12})(?![0-9])")
_NUMBER_RE = re.compile(r"[0-9]{1,9}")
# Control characters, and the bidirectional embeddings, overrides and isolates (U+202A-U+202E,
# U+2066-U+2069): a right-to-left override showed a line reversed, so readers saw words that the banned
# words and the moderators' search never saw ("Trojan Source"); LRM, RLM and ALM stay, for RTL text.
_CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKS = "\r\n\t\x85\u2028\u2029"  # and the tab: each becomes a space
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


class ProtocolError(ValueError):
    """Bad input. `code` is the documented short answer of an endpoint (`err.<code>`); the message
    is the sentence a player reads when the refusal arrives in the stream; `values` fill in the
    sentence the player reads in their language (server/hub/sentences.py)."""

    def __init__(self, code: str, message: str = "", **values: str) -> None:
        super().__init__(message or code)
        self.code = code
        self.values = values

    @classmethod
    def relayed(cls, code: str, message: str) -> ProtocolError:
        """A refusal another member of a cluster made and sent here: its code was raised there."""
        return cls(code, message)


# --- escaping ----------------------------------------------------------------------------------


def decode_client_text(text: str) -> str:
    """Free text from a client (already URL-decoded): `@S` is `/`, `@A` is `@` (in that order)."""
    return text.replace("@S", "/").replace("@A", "@")


def encode_client_text(text: str) -> str:
    """What a client does before URL-encoding: `@` to `@A` first, then `/` to `@S`."""
    return text.replace("@", "@A").replace("/", "@S")


def encode_server_text(text: str) -> str:
    """Free text to clients: `@A`/`@S` plus the five HTML entities of the zagram doc."""
    return _ENTITY_RE.sub(lambda m: _ENTITIES[m.group()], encode_client_text(text))


def decode_server_text(text: str) -> str:
    """What clients do with server text: `@S`, `@A`, then the entities (used by tests and tools)."""
    text = decode_client_text(text)
    for char, entity in _ENTITIES.items():
        text = text.replace(entity, char)
    return text


# --- identities --------------------------------------------------------------------------------


def _script(char: str) -> str | None:
    """'latin' or 'cyrillic' when the character's Unicode name has the words LATIN or CYRILLIC and
    LETTER (as the zagram doc defines allowed letters), 'other' for other letters, else None."""
    words = unicodedata.name(char, "").split()
    if "LETTER" not in words:
        return None
    if "LATIN" in words:
        return "latin"
    if "CYRILLIC" in words:
        return "cyrillic"
    return "other"


def _nick_ok(nick: str, guest: bool) -> bool:
    body = nick[1:] if guest and nick.startswith("*") else nick
    if guest != nick.startswith("*") or not body or len(nick) > MAX_NICK:
        return False
    if body != body.strip(" ") or "  " in body:
        return False
    scripts = set()
    for char in body:
        if unicodedata.category(char)[0] in "MC":
            # combining marks stack into look-alikes and unreadable nicks; the TAG LATIN letters
            # (U+E0041...) are format characters nobody sees: `*Ala` and `*Ala` with one were two nicks
            return False
        if char not in " _0123456789":
            scripts.add(_script(char))
    return scripts <= {"latin"} or scripts <= {"cyrillic"}


def check_nick(nick: str, *, guest: bool) -> str:
    """The doc's nick rules: at most 20 characters with the guest's leading `*`; digits, `_`,
    Latin or Cyrillic letters (not both), single inner spaces."""
    if not _nick_ok(nick, guest):
        raise ProtocolError(
            "badNick", "A nick has 1-20 Latin or Cyrillic letters, digits, _ or single spaces."
        )
    return nick


def check_id(player_id: str, *, guest: bool) -> str:
    """Guests' ids have 1..9 characters of the 64-character alphabet, registered ones 10 or more."""
    length_ok = len(player_id) <= MAX_GUEST_ID if guest else MIN_REGISTERED_ID <= len(player_id) <= MAX_ID
    if not _ID_RE.fullmatch(player_id) or not length_ok:
        raise ProtocolError(
            "badId", "An id has the letters A-Z a-z 0-9 _ . (guests 1-9, registered 10 or more)."
        )
    return player_id


def nick_key(nick: str) -> str:
    """Two nicks that differ only in case, full-width or compatibility forms are the same nick."""
    return unicodedata.normalize("NFKC", nick).casefold()


def _skeleton(text: str) -> str:
    """UTS #39's skeleton: NFD, each character replaced by its prototype, NFD again (its step that drops
    default-ignorable characters has nothing to do: no nick holds one)."""
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(PROTOTYPES.get(char, char) for char in decomposed))


def look_key(nick: str) -> str:
    """Nicks that a reader can take for one another share this key, the UTS #39 skeleton of the
    nick_key of the skeleton: `Alɑn` (Latin alpha), Cyrillic `Вор`, `B0b`, `A1an` and `AIan` pass for
    `Alan`, `Bop`, `Bob` and `alan`. The first skeleton reads the nick as it looks (`ſ` is `f`, though
    NFKC makes it `s`; the prototype of `I` is `l`, though it folds to `i`), nick_key then drops case
    and compatibility forms (`AIan` looks like `Alan`, the same nick as `alan`), and the last skeleton
    reads what that made. Nicks with one nick_key may still differ here (`AIan`, `aian`): the hub and
    the store check both keys."""
    return _skeleton(nick_key(_skeleton(nick)))


def parse_number(text: str) -> int | None:
    """A table number or a count: ASCII digits only (`str.isdigit` also takes '²', which int() refuses)."""
    return int(text) if _NUMBER_RE.fullmatch(text) else None


def is_unicode_text(text: str) -> bool:
    """No lone surrogate, which JSON can carry ("\\udc80") and no UTF-8 reply can."""
    return _SURROGATE_RE.search(text) is None


def unicode_text(text: str) -> str:
    """`text` with each lone surrogate as U+FFFD: what a server before 2026-12-01 journalled of a bot's
    chat line, which no UTF-8 reply can hold."""
    return _SURROGATE_RE.sub("\ufffd", text)


def clean_text(text: str) -> str:
    """Replies are one line: line breaks (Unicode's line and paragraph separators and NEL too) and tabs
    in free text become spaces, other control characters go, and so do the bidirectional controls that
    reorder what follows them."""
    return _CONTROL_RE.sub(lambda found: " " if found.group() in _LINE_BREAKS else "", text)


LINE_SEPARATOR = "/"  # between the lines of a reply (frame)
COLOURS = {"blue": 1, "red": 2}  # the seats' numbers, as in `ok1score`


def parse_colour(text: str | None) -> int | None:
    """`colour=blue|red`, this server's choice of colour at an analysis table: the seat, or None."""
    if text is None:
        return None
    if text not in COLOURS:
        raise ProtocolError("badColour", "The colour is blue or red.")
    return COLOURS[text]


def check_lang(lang: str) -> str:
    if lang not in LANGUAGES:
        raise ProtocolError("badLang", "Unknown language.")
    return lang


# --- the stream --------------------------------------------------------------------------------


def parse_msg_no(text: str) -> tuple[int, bool]:
    """`N`, `N.0` or `N.M`: the client has read up to N; `.0` says it has no subscription lines yet
    (its first getBMsg after getMsg). Returns (N, subscriptions already seen)."""
    if text.isdigit() and text.isascii() and len(text) <= 12:  # most polls: no regular expression
        return int(text), True
    found = _MSG_NO_RE.fullmatch(text)
    if not found:
        raise ProtocolError("badMsgNo", "msgNo must be N, N.0 or N.M")
    return int(found.group(1)), found.group(2) != "0"


@dataclass(frozen=True)
class Command:
    """A numbered simple message `<kind><number>.<table>.<text>` (text may hold dots)."""

    kind: str
    number: int
    table: str
    text: str


@dataclass(frozen=True)
class Flags:
    """The unnumbered `i` message (MultiPoints sends `i0nJa` / `i0nJb`)."""

    text: str


@dataclass(frozen=True)
class BadCommand:
    """A simple message that could not be read; `number` when it was readable, so k can move on."""

    number: int | None
    reason: str


ClientMessage = Command | Flags | BadCommand


def parse_commands(text: str | None) -> list[ClientMessage]:
    """msgFromClient: `x` (nothing) or simple messages joined by `/`."""
    if text is None or text in ("", "x"):
        return []
    parts = text.split("/")
    if len(parts) > MAX_COMMANDS:
        return [BadCommand(None, "tooManyCommands")]
    messages: list[ClientMessage] = []
    for part in parts:
        if part.startswith("i"):
            messages.append(Flags(part[1:]))
            continue
        found = _COMMAND_RE.fullmatch(part)
        if not found:
            number = _NUMBERED_RE.match(part)
            messages.append(BadCommand(int(number.group(1)) if number else None, "badCommand"))
            continue
        kind, number, table, rest = found.groups()
        messages.append(Command(kind, int(number), table, rest or ""))
    return messages


def chat_line(time: int, n: int, nick: str, nick_type: str, text: str) -> str:
    """`time_n.nick.nickType.text` with the text escaped for the wire."""
    return f"{time}_{n}.{nick}.{nick_type}.{encode_server_text(text)}"


def read_chat_line(line: str) -> tuple[str, str, str, str] | None:
    """A `cr`/`ca` line back into its time_n, nick, nickType and decoded text (a report quotes the
    lines another member of a cluster sent); None for any other line."""
    if not line.startswith(("ca", "cr")):
        return None
    fields = line[2:].split(".", 3)
    if len(fields) < 3:
        return None
    time_n, nick, nick_type = fields[:3]
    return time_n, nick, nick_type, decode_server_text(fields[3]) if len(fields) == 4 else ""


def joined_lines(lines: Iterable[str]) -> str:
    """Lines as a reply carries them: an empty line is left out, not an empty part."""
    return LINE_SEPARATOR.join(filter(None, lines))


def frame(logged_in: bool, first: int, last: int, processed: int, messages: list[str]) -> str:
    """`ok/m<i>.<j>.<k>/.../end` (`sd` instead of `ok` for a reader that is not logged in)."""
    head = "ok" if logged_in else "sd"
    body = joined_lines(messages)
    return (
        f"{head}/m{first}.{last}.{processed}/{body}/end"
        if body
        else f"{head}/m{first}.{last}.{processed}/end"
    )


REPEATED = ("q", "vg", "vs", "vr")  # what every reply repeats: section heads and invitations


def reply_head(reply: str) -> tuple[int, int, str | None]:
    """The j and k of a reply that `frame` made, and the lines after its head when they carry no event
    (only what every reply repeats), else None: a push connection (server/web/push.py) resumes from j,
    and sends a quiet reply only when it differs from the last one it sent. The lines are looked at one
    by one up to the first event: a reply with news, a whole lobby's state say, is neither split nor
    copied."""
    head_at = reply.index("/") + 1
    start = reply.index("/", head_at) + 1
    _, last, processed = reply[head_at + 1 : start - 1].split(".")
    position, size = start, len(reply)
    while position < size:
        at_end = reply.startswith("end", position) and (position + 3 == size or reply[position + 3] == "/")
        if not at_end and not reply.startswith(REPEATED, position):
            return int(last), int(processed), None
        position = reply.find("/", position)
        if position < 0:
            break
        position += 1
    return int(last), int(processed), reply[start:]
