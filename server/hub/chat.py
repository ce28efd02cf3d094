"""Chat kept in memory: each table's recent lines, and private conversations between two people."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, Protocol

from server.protocol.codec import chat_line

LOBBY_CHAT_KEPT = 100  # lines replayed to whoever enters the lobby
TABLE_CHAT_KEPT = 500  # lines replayed to whoever enters a game table
PRIVATE_KEPT_LINES = 200  # lines kept per private conversation
PRIVATE_KEPT_SECONDS = 24 * 3600  # a conversation idle this long is forgotten
# private lines and conversations kept in all (at most about 120 MB): beyond either the quietest
# conversations are forgotten first, so that guests writing to ever new partners cannot fill the memory
# before the day is out
PRIVATE_MOST_LINES = 200_000
PRIVATE_MOST_TALKS = 50_000
COUNTED_SECONDS = 8  # the seconds whose lines a ChatCounter counts


class Numbered(Protocol):
    """A kept line's second and its number in it: what a ChatCounter numbers a stepped-back second after."""

    @property
    def time(self) -> int: ...

    @property
    def n(self) -> int: ...


@dataclass(slots=True)
class ChatEntry:
    time: int
    n: int
    nick: str
    nick_type: str
    text: str
    deleted: bool = False
    event: int = 0  # the number of the event that announced it (0: not known)

    @property
    def chat_id(self) -> str:
        return f"{self.time}_{self.n}"

    def line(self) -> str:
        if self.deleted:
            return f"{self.chat_id}.{self.nick}.d."
        return chat_line(self.time, self.n, self.nick, self.nick_type, self.text)

    def journal_data(self) -> dict[str, Any]:
        return {
            "t": self.time,
            "n": self.n,
            "nick": self.nick,
            "type": self.nick_type,
            "text": self.text,
            "e": self.event,
        }


class ChatCounter:
    """`n` in `time_n`: lines within the same second of one table are numbered 0, 1, 2... The last few
    seconds are counted, not only the latest: the lines of other members of a cluster are counted too
    (`seen`), and their clocks may be a little ahead of this one's."""

    def __init__(self) -> None:
        self._last: dict[int, int] = {}  # second -> its last n, the second counted last at the end
        self._latest = -1  # the latest second ever counted

    def seen(self, time: int, n: int) -> None:
        self._count(time, max(n, self._last.get(time, -1)))

    def next(self, time: int, kept: Iterable[Numbered] = ()) -> int:
        """The next `n` of second `time`. A second no longer counted but not after the latest (the wall
        clock stepped back) is numbered after its lines still `kept`: from 0, a new line took the id of
        an earlier one, and deleting one (`delmsg`) hid both."""
        if time in self._last or time > self._latest:
            n = self._last.get(time, -1) + 1
        else:
            n = 1 + max((entry.n for entry in kept if entry.time == time), default=-1)
        self._count(time, n)
        return n

    def _count(self, time: int, n: int) -> None:
        self._latest = max(self._latest, time)
        self._last.pop(time, None)
        self._last[time] = n
        if len(self._last) > COUNTED_SECONDS:
            del self._last[next(iter(self._last))]


class ChatRoom:
    """The recent lines of one table; deleted lines stay as placeholders for newcomers."""

    def __init__(self, keep: int) -> None:
        self.entries: deque[ChatEntry] = deque(maxlen=keep)
        self.counter = ChatCounter()
        # the lobby's lines other members of a cluster said, kept in their parts (SharedLobby): a second
        # the wall clock stepped back to is numbered after them too
        self.kept_elsewhere: Callable[[], Iterable[Numbered]] = tuple

    def add(self, time: int, nick: str, nick_type: str, text: str) -> ChatEntry:
        entry = ChatEntry(time, self.number(time), nick, nick_type, text)
        self.entries.append(entry)
        return entry

    def number(self, time: int) -> int:
        """The `n` of a new line of second `time` (see ChatCounter.next)."""
        return self.counter.next(time, chain(self.entries, self.kept_elsewhere()))

    def restore(self, entry: ChatEntry) -> None:
        """Put back a line read from the journal after a restart, keeping its `time_n`."""
        self.entries.append(entry)
        self.counter.seen(entry.time, entry.n)

    def take_back(self, chat_ids: set[str]) -> None:
        """Lines gone with what they told of (server/hub/takeback.py): not even a placeholder stays."""
        kept = [entry for entry in self.entries if entry.chat_id not in chat_ids]
        self.entries.clear()
        self.entries.extend(kept)

    def delete(self, chat_id: str) -> list[ChatEntry]:
        return self._delete(lambda entry: entry.chat_id == chat_id)

    def delete_by(self, nick: str) -> list[ChatEntry]:
        return self._delete(lambda entry: entry.nick == nick)

    def _delete(self, matches) -> list[ChatEntry]:
        gone = [entry for entry in self.entries if not entry.deleted and matches(entry)]
        for entry in gone:
            entry.deleted = True
        return gone

    def lines(self, after: int = 0) -> list[str]:
        """The kept lines, but those announced by events up to `after` (which the reader has had)."""
        return [entry.line() for entry in self.entries if not entry.event or entry.event > after]


@dataclass(slots=True)
class Conversation:
    """Two people's private lines; each may hide what was said so far (`del._nick`)."""

    first: str
    second: str
    entries: deque[ChatEntry] = field(default_factory=lambda: deque(maxlen=PRIVATE_KEPT_LINES))
    hidden_until: dict[str, int] = field(default_factory=dict)  # nick -> entries seen when hidden
    # nick -> (the network of the guest session whose end hid the conversation from that nick, what
    # the nick had hidden itself before): a guest coming back under the nick from there reads again
    # what it read then (Chats.show_guest_chats)
    hidden_for: dict[str, tuple[str, int]] = field(default_factory=dict)
    # nick -> the network of the guest session of another member of a cluster that wrote or read this
    # copy on that nick's side: a guest logging in here under the nick from another network is somebody
    # else, and reads none of it (PrivateChats.close_for_strangers)
    elsewhere: dict[str, str] = field(default_factory=dict)
    total: int = 0

    @property
    def name(self) -> str:
        return f"{self.first}-{self.second}"

    def readable_by(self, nick: str) -> bool:
        """Whether `visible_to(nick)` has anything, without copying it."""
        return bool(self.entries) and self.hidden_until.get(nick, 0) < self.total

    def visible_to(self, nick: str) -> list[ChatEntry]:
        return self._after(self.hidden_until.get(nick, 0))

    def hidden_by_guest_from(self, nick: str, network: str) -> bool:
        """Whether the end of a guest session of `nick` from `network` hid this conversation from it."""
        hid = self.hidden_for.get(nick)
        return bool(network) and hid is not None and hid[0] == network

    def visible_again_to(self, nick: str) -> list[ChatEntry]:
        """What `nick` would read once a guest of the nick from the network that hid it comes back
        (PrivateChats.show_again): what it read when its guest session ended."""
        hid = self.hidden_for.get(nick)
        return self._after(hid[1]) if hid is not None else []

    def written_before(self, moment: float) -> int:
        """How many of its lines ever written were written before the second of `moment` (they are in
        time order, in whole seconds)."""
        dropped = self.total - len(self.entries)
        return dropped + sum(1 for entry in self.entries if entry.time < int(moment))

    def _after(self, hidden: int) -> list[ChatEntry]:
        """The kept lines after the first `hidden` ever written."""
        skip = max(0, hidden - (self.total - len(self.entries)))
        return list(self.entries)[skip:]


class PrivateChats:
    """Every conversation, the quietest first (a line moves its conversation to the end)."""

    def __init__(self, most_lines: int = PRIVATE_MOST_LINES, most_talks: int = PRIVATE_MOST_TALKS) -> None:
        self._talks: dict[tuple[str, str], Conversation] = {}
        self._of: dict[str, set[tuple[str, str]]] = {}  # nick -> their conversations' keys
        self.lines = 0
        self.most_lines, self.most_talks = most_lines, most_talks
        self.counter = ChatCounter()

    @staticmethod
    def _key(a: str, b: str) -> tuple[str, str]:
        return (a, b) if a <= b else (b, a)

    def add(self, time: int, sender: str, recipient: str, text: str, n: int | None = None) -> ChatEntry:
        """A new line; `n` is given when a line comes back from the journal after a restart."""
        key = self._key(sender, recipient)
        talk = self._talks.pop(key, None)
        if talk is None:
            talk = Conversation(*key)
            for nick in key:
                self._of.setdefault(nick, set()).add(key)
        self._talks[key] = talk  # the most recent now
        writer = "1" if sender == talk.first else "2"
        if n is None:
            n = self.counter.next(time, talk.entries)
        else:
            self.counter.seen(time, n)
        entry = ChatEntry(time, n, talk.name, writer, text)
        if len(talk.entries) < PRIVATE_KEPT_LINES:
            self.lines += 1
        talk.entries.append(entry)
        talk.total += 1
        while (self.lines > self.most_lines or len(self._talks) > self.most_talks) and len(self._talks) > 1:
            self._forget(next(iter(self._talks)))
        return entry

    def get(self, a: str, b: str) -> Conversation | None:
        return self._talks.get(self._key(a, b))

    def partners(self, nick: str, since: int) -> list[tuple[Conversation, ChatEntry]]:
        """Conversations of `nick` with a line visible to them at or after `since`, the quietest first."""
        found = []
        for key in self._of.get(nick, ()):
            talk = self._talks[key]
            visible = talk.visible_to(nick)
            if visible and visible[-1].time >= since:
                found.append((talk, visible[-1]))
        return sorted(found, key=lambda pair: (pair[1].time, pair[1].n))

    def others_of(self, nick: str) -> list[str]:
        """Everyone `nick` has a conversation with."""
        return sorted({other for key in self._of.get(nick, ()) for other in key if other != nick} or set())

    def hide(self, nick: str, other: str, network: str = "", upto: int | None = None) -> bool:
        """`network`: a guest's session from there ended (see Conversation.hidden_for); `upto`: only the
        first so many lines ever written (hide_before)."""
        talk = self.get(nick, other)
        if talk is None or not talk.visible_to(nick):
            return False
        if network:
            talk.hidden_for[nick] = (network, talk.hidden_until.get(nick, 0))
        talk.hidden_until[nick] = talk.total if upto is None else max(upto, talk.hidden_until.get(nick, 0))
        return True

    def hide_before(self, nick: str, moment: float) -> list[tuple[str, int]]:
        """Hide from `nick` what its conversations hold from before `moment`, an account's registration:
        an account of the nick deleted before it wrote them. (other, how many lines) for each it hid."""
        hidden = []
        for other in self.others_of(nick):
            talk = self.get(nick, other)
            assert talk is not None
            upto = talk.written_before(moment)
            if upto > talk.hidden_until.get(nick, 0) and self.hide(nick, other, upto=upto):
                hidden.append((other, upto))
        return hidden

    def show_again(self, nick: str, network: str) -> list[str]:
        """The conversations hidden from `nick` when its guest session from `network` ended, shown to
        it again; the others in them."""
        shown = []
        for other in self.others_of(nick):
            talk = self.get(nick, other)
            if talk is not None and talk.hidden_by_guest_from(nick, network):
                self.show(nick, other)
                shown.append(other)
        return shown

    def latest_of(self, nick: str, count: int, network: str | None = None) -> list[Conversation]:
        """`nick`'s `count` conversations with the latest lines, the latest first; with `network`, only
        those hidden from it when its guest session from there ended (show_again would show them)."""
        talks = [self._talks[key] for key in self._of.get(nick, ())]  # none is empty: add() makes them
        if network is not None:
            talks = [talk for talk in talks if talk.hidden_by_guest_from(nick, network)]
        talks.sort(key=lambda talk: (talk.entries[-1].time, talk.entries[-1].n), reverse=True)
        return talks[:count]

    def open_guest_sides(self) -> list[tuple[str, str]]:
        """(guest nick, other) for each conversation with something visible on a guest's side that no
        guest of another member of a cluster holds (`elsewhere`)."""
        return [
            (nick, other)
            for (first, second), talk in self._talks.items()
            for nick, other in ((first, second), (second, first))
            if nick.startswith("*") and nick not in talk.elsewhere and talk.readable_by(nick)
        ]

    def held_elsewhere(self, nick: str, other: str, network: str) -> None:
        """`nick`'s side of the conversation with `other` is a guest session's on another member, used
        from `network`."""
        talk = self.get(nick, other)
        if talk is not None:
            talk.elsewhere[nick] = network

    def close_for_strangers(self, nick: str, network: str) -> list[tuple[str, str]]:
        """A guest session of `nick` from `network` begins here: the conversations whose side of that
        nick a guest session of another member held from another network are closed on that side (as
        the end of a session here closes them: hide), and can be shown again to a guest from there
        (show_again). The others in them, with that network."""
        closed = []
        for other in self.others_of(nick):
            talk = self.get(nick, other)
            held = talk.elsewhere.pop(nick, None) if talk is not None else None
            if held is not None and held != network and self.hide(nick, other, held):
                closed.append((other, held))
        return closed

    def show(self, nick: str, other: str) -> None:
        talk = self.get(nick, other)
        hid = talk.hidden_for.pop(nick, None) if talk is not None else None
        if talk is not None and hid is not None:
            talk.hidden_until[nick] = hid[1]

    def forget_older_than(self, time: int) -> None:
        while self._talks:
            key, talk = next(iter(self._talks.items()))
            if talk.entries[-1].time >= time:
                return
            self._forget(key)

    def _forget(self, key: tuple[str, str]) -> None:
        self.lines -= len(self._talks.pop(key).entries)
        for nick in set(key):  # one nick when somebody wrote to themselves
            keys = self._of[nick]
            keys.discard(key)
            if not keys:
                del self._of[nick]
