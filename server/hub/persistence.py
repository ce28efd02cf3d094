"""What the hub hands to storage, and what it gets back: the one seam between live state and the store.

The hub never waits for storage while it changes state; it queues writes here and the web layer
awaits `flush()` before it answers a request, so a player is only told "done" once it is on disk.
The store's writer implements this for a database; `MemoryPersistence` keeps everything in memory
for tests of the hub alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from server.engine.game import Result
from server.engine.sgf import GameRecord, write_record


@dataclass(frozen=True)
class Account:
    """A registered player as the lobby shows them: the `i` line's rating and results."""

    nick: str
    rating: int
    wins: int
    draws: int
    losses: int
    moderator: bool = False
    avatar: str = ""
    lang: str = "en"


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


ArchiveDone = Callable[[int, list[Account]], None]  # (archive number, accounts whose rating changed)


class Persistence(Protocol):
    queued: int  # writes handed over so far: a request that changed it waits for flush()

    def table_opened(self, uid: int) -> None: ...

    def journal(self, uid: int, seq: int, kind: str, data: dict[str, Any]) -> None: ...

    def tournament_table(
        self, uid: int, tournament: str, round: str | None, blue: str, red: str, game_type: str
    ) -> None: ...

    def archive(self, game: FinishedGame, done: ArchiveDone) -> None: ...

    def table_closed(self, uid: int) -> None: ...

    async def flush(self) -> None: ...


class MemoryPersistence:
    """Games numbered from 1 and kept as SGF text; journals dropped (nothing survives a restart)."""

    def __init__(self) -> None:
        self.records: dict[int, str] = {}
        self.queued = 0  # never moves: everything is done at once, there is nothing to wait for

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

    async def flush(self) -> None:
        pass
