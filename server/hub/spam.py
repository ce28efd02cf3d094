"""Spam that no moderator should have to chase (docs/moderation.md, "Spam"): how a chat line reads once
case, spacing and look-alike letters are set aside, whether it holds a link, and the operator's banned
words. Pure functions of the text; the counts per player are Limits.chat's.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from server.protocol.codec import look_key, nick_key

# Lines with a link from a guest or an account younger than NEW_ACCOUNT_SECONDS: at most LINKS_FROM_NEW
# in LINKS_WINDOW seconds (Limits.chat).
LINKS_FROM_NEW = 2
LINKS_WINDOW = 600.0
NEW_ACCOUNT_SECONDS = 24 * 3600.0
# Bare domains are read as links only with one of these endings: "e.g.", "3.14" and "end.Next" are
# not links, `example.com`, `t.me/x` and `gold.shop` are. Addresses with a scheme or `www.` always are.
TOP_LEVEL_DOMAINS = (
    "com net org info biz name pro mobi io co me tv cc ws su gg ly to tk ml ga cf gq xyz top site online "
    "shop store club app dev link click live fun win vip bet casino money cash ru pl ua by kz de uk eu us "
    "fr it es nl cz sk lt lv ee cn jp br in"
).split()
_LINK = re.compile(
    r"https?://|www\.|(?<![\w.@-])(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+"
    rf"(?:{'|'.join(TOP_LEVEL_DOMAINS)})(?![\w-])"
)
_WORD = re.compile(r"\w+")
# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): zero-width spaces and joiners, the
# soft hyphen, the word joiner, variation selectors, tags, Hangul fillers. Nobody sees them, so they are
# not in a line as it reads (UTS #39's skeleton drops them too): `g` ZWSP `old` is `gold` to a reader,
# and was two words to the banned words, another line to the same-line count and no link.
_UNSEEN = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]"
)


def readable(text: str) -> str:
    """The text without the characters nobody sees."""
    return _UNSEEN.sub("", text)


def folded(text: str) -> str:
    """The text as a reader takes it in: case and compatibility forms dropped (`ＢＵＹ` is `buy`),
    look-alikes read as UTS #39 reads them (Cyrillic `о` and the digit `0` are `o`; `1`, `I`, `l` and
    so `i` are one letter), accents dropped (`ü` is `u`)."""
    skeleton = look_key(readable(text))
    return "".join(char for char in skeleton if not unicodedata.combining(char)).replace("i", "l")


def words(text: str) -> list[str]:
    return _WORD.findall(folded(text))


def line_key(text: str) -> str:
    """Two lines with one key are the same line said again: their words, folded; a line without a
    word (`?!`, `:)`) is itself, without case and spacing."""
    found = words(text)
    return " ".join(found) if found else " ".join(nick_key(readable(text)).split())


def has_link(text: str) -> bool:
    """Full-width dots are dots (NFKC), and so is the ideographic full stop `。` (and its half-width form,
    which NFKC makes it): browsers read it as one in an address (IDNA), so `example。com` is a link."""
    return _LINK.search(nick_key(readable(text)).replace("\u3002", ".")) is not None


class BannedWords:
    """The operator's list (--banned-words): a word or a phrase a line, whole words only, folded as
    `folded` folds the line; a trailing `*` takes any word that begins so (`spam*` is `spammer`)."""

    def __init__(self, entries: Iterable[str]) -> None:
        patterns = []
        for entry in entries:
            prefix = entry.endswith("*")
            found = words(entry.rstrip("*"))
            if found:
                patterns.append(r"\ ".join(map(re.escape, found)) + (r"\w*" if prefix else ""))
        self._pattern = re.compile(rf"(?<!\w)(?:{'|'.join(patterns)})(?!\w)") if patterns else None

    def found_in(self, text: str) -> bool:
        return self._pattern is not None and self._pattern.search(" ".join(words(text))) is not None
