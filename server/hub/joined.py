"""Texts by key, kept joined: the lobby's nicks, `i` lines, `b` lines and game tables, as its whole
state sends them.

Every login changes the lobby, and the next newcomer's first reply needs its whole state. Joined anew
for it, the nicks and `i` lines of 10,000 players took most of the 0.6 ms a login and its first reply
cost in-process, and getBMsg's `b` lines, built anew too, 11.6 ms (against 0.1 and 0.7 ms at 1,000;
issue 19.1, benchmarks/login_cost.py). While players log in, nearly every change is one more at the
end, which extends the joined text (a copy, a few microseconds) instead of joining them all.
"""

from __future__ import annotations

from collections.abc import Hashable, ItemsView, ValuesView
from typing import Generic, TypeVar

Key = TypeVar("Key", bound=Hashable)


class JoinedTexts(Generic[Key]):
    """A dict of texts in the order their keys came, with `joined`: its texts joined by `separator`,
    empty ones left out (as a reply leaves out empty lines)."""

    __slots__ = ("_joined", "_separator", "_texts")

    def __init__(self, separator: str) -> None:
        self._texts: dict[Key, str] = {}
        self._separator = separator
        self._joined: str | None = ""  # None: to be joined again when read

    def __setitem__(self, key: Key, text: str) -> None:
        texts = self._texts
        if key in texts:  # kept in its place, as a dict keeps it
            if texts[key] != text:
                texts[key] = text
                self._joined = None
            return
        texts[key] = text
        joined = self._joined
        if joined is not None and text:
            self._joined = f"{joined}{self._separator}{text}" if joined else text

    def __delitem__(self, key: Key) -> None:
        del self._texts[key]
        self._joined = None

    def values(self) -> ValuesView[str]:
        return self._texts.values()

    def items(self) -> ItemsView[Key, str]:
        return self._texts.items()

    @property
    def joined(self) -> str:
        joined = self._joined
        if joined is None:
            joined = self._joined = self._separator.join(filter(None, self._texts.values()))
        return joined
