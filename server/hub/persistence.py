"""What the hub hands to storage, and what it gets back: the one seam between live state and the store.

The hub never waits for storage while it changes state; it queues writes here and the web layer
awaits `flush()` before it answers a request, so a player is only told "done" once it is on disk.
While storage takes no writes (`storage_failure`), `flush()` raises StorageFailing and the hub refuses
what would need a write (docs/operations.md, "When storage fails").
The store's writer implements this for a database; `MemoryPersistence` keeps everything in memory
for tests of the hub alone.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Protocol

from server.engine.game import Result
from server.engine.sgf import GameRecord, write_record

NO_ROLE, MODERATOR, ADMIN = "none", "moderator", "admin"
# players on one list of the ignored (docs/protocol.md, "Ignoring"): the hub refuses more, the store keeps
# no more (every reply of the list's owner looks at each chat line's writer)
MOST_IGNORED = 100
ROLES = (NO_ROLE, MODERATOR, ADMIN)  # a registered account's role, weakest first (docs/moderation.md)


@dataclass(frozen=True)
class Account:
    """A registered player as the lobby shows them: the `i` line's rating and results."""

    nick: str
    rating: int
    wins: int
    draws: int
    losses: int
    role: str = NO_ROLE  # ROLES: what the player may do as a moderator (docs/moderation.md)
    avatar: str = ""
    lang: str = "en"
    # the nicks this player ignores (docs/protocol.md, "Ignoring"), as read with the account for a session
    # (a login, a restart, a session moving in a cluster); None where it is read for its rating alone
    ignored: tuple[str, ...] | None = None
    # whether private lines from guests are refused (docs/protocol.md, "Private lines from guests"), read
    # for a session as `ignored` is; None where it is not
    refuses_guest_privates: bool | None = None
    registered_at: float = 0.0  # Unix time (0: long ago); a younger account is new to links (Limits.chat)
    bot: bool = False  # a program playing through the bot API (docs/bots.md), marked as one everywhere
    # the nick_key of the nick the account logs in with (a person's id is made from it): its first nick's,
    # which an admin's rename keeps; "" where not read
    login_key: str = ""
    # the account's number (users.id), never given again: its seats at games are its own, not its nick's
    # next holder's (Player.seat_key); 0 where not read
    number: int = 0
    # the nick keys the account had before an admin's renames, in the order left: the seats other members of
    # a cluster may have to move to its nick now (Mirrors.follow_rename)
    former: tuple[str, ...] = ()


@dataclass
class FinishedGame:
    uid: int
    record: GameRecord  # players' ratings are filled in by the store, as they were before the game
    blue: str
    red: str
    game_type: str
    result: Result | None
    rated: bool  # a ranked game with enough dots: ratings change if both players are registered
    tournament: str | None  # the event of a tournament game (the first game of a table set up for one)
    game_index: int  # which game of the table (a table plays on after `new`)
    journal_seq: int  # the table's journal position of the "archived" entry written with the game
    ended_at: float | None = None  # the wall time (Context.clock) the game ended; None: when it is stored
    moves: int = 0  # moves played (an arena's points read it: docs/tournaments.md, "Arena")
    # a team game's players in turn order (docs/teams.md), each listed under their nick in the archive;
    # empty for a two-player game, whose `blue` and `red` are the players
    players: tuple[str, ...] = ()
    # the organiser cancelled it: its tournament table says so, written with the game so that a cancel
    # storage never took (taken back, or lost in a crash) is never shown as one
    cancelled: bool = False
    # the players whose seat no account owns any more (a deleted account's: Sessions.account_registered),
    # archived as nobody's, whoever holds their nick now
    unowned: tuple[str, ...] = ()
    # nick -> the number of the account that owns the player's seat (Player.seat_key), known for seats
    # taken since seat keys name it: the game is that account's, whatever nick it has now, and a number
    # no account has any more is a deleted account's, archived as `deleted<number>` (docs/operations.md)
    accounts: dict[str, int] = field(default_factory=dict)


# (archive number, the accounts whose rating changed: blue's then red's, none for a game not rated)
ArchiveDone = Callable[[int, list[Account]], None]


class StorageFailing(Exception):
    """Storage stopped taking writes before what `flush()` waited for was written: the request that
    made those writes must not be answered as done."""


@dataclass(frozen=True)
class SessionOrigin:
    """Where a session was logged in from (server/web/networks.py's host and network) and the networks
    its id may be used from; all empty for a session saved before the server kept them."""

    host: str = ""
    network: str = ""
    networks: tuple[str, ...] = ()
    unlimited: bool = False


@dataclass(frozen=True)
class SavedSession:
    """A live session as the store keeps it, so that it outlives a restart (docs/protocol.md, "After a
    restart"). It is found again by `id_hmac`, an HMAC of the id under the server's key: never the id."""

    id_hmac: str
    nick: str
    lang: str
    registered: bool
    free: bool
    client: str
    tables: tuple[int, ...]  # the game tables the player sits at or follows, in order
    blocked: tuple[str, ...]  # nick keys of people whose invitations the player refuses
    last_command: int  # k: client commands up to this number are processed
    # The player's last poll, when they had stopped polling at the last heartbeat (`alive_at`);
    # None: polling then. Written only together with the heartbeat, so the two always agree.
    quiet_since: float | None = None
    origin: SessionOrigin = SessionOrigin()
    # the nicks a guest ignores (a registered player's are kept with the account: Persistence.ignored_added)
    ignored: tuple[str, ...] = ()


@dataclass
class LiveSessions:
    """What the store hands back at start-up for the sessions and the event numbering."""

    sessions: list[SavedSession] = field(default_factory=list)
    accounts: dict[str, Account] = field(default_factory=dict)  # registered players' accounts, by nick key
    event_mark: int = 0  # every event number the earlier runs handed out is at most this
    alive_at: float | None = None  # the last heartbeat of the earlier run (wall time)


class Persistence(Protocol):
    queued: int  # writes handed over so far: a request that changed it waits for flush()
    written: int  # of those, how many are done, in order (writes queued up to `written` are stored)
    storage_failure: str | None  # why storage takes no writes now (short, never an id); None: it does

    def table_opened(self, uid: int) -> None: ...

    def journal(self, uid: int, seq: int, kind: str, data: dict[str, Any]) -> None: ...

    def tournament_table(
        self, uid: int, tournament: str, round: str | None, blue: str, red: str, game_type: str
    ) -> None: ...

    def archive(self, game: FinishedGame, done: ArchiveDone) -> None: ...

    def table_closed(self, uid: int) -> None: ...

    def id_hmac(self, secret: str) -> str: ...

    def session_saved(self, session: SavedSession) -> None:
        """Insert or update the session's row; its `quiet_since` is left as it is (see sessions_seen)."""

    def session_ended(self, id_hmac: str) -> None: ...

    def ignored_added(self, account: int, key: str, nick: str) -> None:
        """`nick` (whose nick_key is `key`) on the list of the registered player whose account number is
        `account`, whatever nick the account has now; nothing if it is there already, if the list holds
        MOST_IGNORED, or if the account is gone. One change at a time, never the whole list: a list held
        in memory since a login does not write back what was taken off it meanwhile (a deleted account)."""

    def ignored_removed(self, account: int, key: str) -> None:
        """The nick whose nick_key is `key` off the list of the account numbered `account`."""

    def guest_privates_set(self, account: int, refused: bool) -> None:
        """Whether the account numbered `account` refuses private lines from guests, by its number (a
        rename keeps it); nothing if the account is gone."""

    def moderated(self, actor: str, action: str, target: str, detail: str) -> None:
        """A line of the moderation log for what a moderator did in the hub (a chat line deleted)."""

    def journal_dropped(self, uid: int) -> None:
        """Delete journal `uid`'s entries queued so far (the sessions' k once their rows hold it)."""

    def journal_compacted(self, uid: int, upto: int, rows: list[tuple[int, str, dict[str, Any]]]) -> None:
        """Replace journal `uid`'s entries up to `upto` with `rows` (numbered after it), in one write."""

    def journal_set_aside(self, uid: int, seq: int, reason: str) -> None:
        """Move an entry that could not be replayed out of the journal, kept for inspection."""

    def sessions_seen(
        self, alive_at: float, quiet: dict[str, float | None], k: dict[str, int] | None = None
    ) -> None:
        """The heartbeat, with the `quiet_since` of the sessions whose value changed and the k of those
        whose k moved (by id HMAC; nothing else of their rows changes), in one write."""

    def events_reserved(self, mark: int) -> None: ...

    def unstored_journal(self) -> dict[int, list[tuple[int, str, dict[str, Any]]]]:
        """The game tables' journal entries not yet stored, by table, in order: (number, kind, data)."""

    def withdraw(self, uid: int, seqs: Collection[int]) -> None:
        """Never write these entries of table `uid`'s journal (not yet stored), nor its finished games not
        yet archived: the table was taken back to what is stored (server/hub/takeback.py)."""

    def withdraw_table(self, uid: int) -> bool:
        """Never write anything of table `uid` (an organiser's set-up storage did not take: the table is
        closed as if never set up); False, and nothing withdrawn, if some of it is stored already or may
        be being written now."""

    async def flush(self, timeout: float | None = None) -> None:
        """Return once everything queued before the call is written; raise StorageFailing if storage
        fails first, TimeoutError if it has not taken it within `timeout` seconds."""

    def retry_soon(self) -> None:
        """Storage takes no writes, and a player was refused for it: storage should be tried again soon,
        as the player will try again."""


_PROCESS_KEY = os.urandom(32)  # one key per process: hubs of one process that hand over find the same HMACs


class MemoryPersistence:
    """Games numbered from 1 and kept as SGF text; journals and sessions dropped (nothing survives a
    restart)."""

    def __init__(self) -> None:
        self.records: dict[int, str] = {}
        self.queued = self.written = 0  # never move: everything is done at once, there is nothing to wait for
        self.storage_failure: str | None = None
        self._hmac_key = _PROCESS_KEY

    def table_opened(self, uid: int) -> None:
        pass

    def journal(self, uid: int, seq: int, kind: str, data: dict[str, Any]) -> None:
        pass

    def tournament_table(
        self, uid: int, tournament: str, round: str | None, blue: str, red: str, game_type: str
    ) -> None:
        pass

    def archive(self, game: FinishedGame, done: ArchiveDone) -> None:
        number = len(self.records) + 1
        self.records[number] = write_record(game.record)
        done(number, [])

    def table_closed(self, uid: int) -> None:
        pass

    def id_hmac(self, secret: str) -> str:
        return id_hmac(self._hmac_key, secret)

    def session_saved(self, session: SavedSession) -> None:
        pass

    def session_ended(self, id_hmac: str) -> None:
        pass

    def ignored_added(self, account: int, key: str, nick: str) -> None:
        pass

    def ignored_removed(self, account: int, key: str) -> None:
        pass

    def guest_privates_set(self, account: int, refused: bool) -> None:
        pass

    def moderated(self, actor: str, action: str, target: str, detail: str) -> None:
        pass

    def journal_dropped(self, uid: int) -> None:
        pass

    def journal_compacted(self, uid: int, upto: int, rows: list[tuple[int, str, dict[str, Any]]]) -> None:
        pass

    def journal_set_aside(self, uid: int, seq: int, reason: str) -> None:
        pass

    def sessions_seen(
        self, alive_at: float, quiet: dict[str, float | None], k: dict[str, int] | None = None
    ) -> None:
        pass

    def events_reserved(self, mark: int) -> None:
        pass

    def unstored_journal(self) -> dict[int, list[tuple[int, str, dict[str, Any]]]]:
        return {}

    def withdraw(self, uid: int, seqs: Collection[int]) -> None:
        pass

    def withdraw_table(self, uid: int) -> bool:
        return False  # everything is done at once: it is all "stored"

    async def flush(self, timeout: float | None = None) -> None:
        pass

    def retry_soon(self) -> None:
        pass


def id_hmac(key: bytes, secret: str) -> str:
    """HMAC-SHA256 of a player's id under the server's key, in hex: the same id always gives the same
    value, so a session is found by one look-up, and without the key the value tells nothing."""
    return hmac.new(key, secret.encode(), hashlib.sha256).hexdigest()
