"""The writes the hub queues, one class a kind, each with its own SQL (`write`), and one batch of them
written in one transaction (`write_batch`).

Journal entries (`Entry`) and sessions' rows (`SavedSession`, the hub's own) are the many: a batch
gathers them and inserts each run of them in a few multi-row statements. Every other job writes itself,
after the entries queued before it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any, ClassVar

from sqlalchemy import Connection, delete, func, select, update
from sqlalchemy.orm import Session

from server.hub.persistence import MOST_IGNORED, ArchiveDone, FinishedGame, SavedSession
from server.store.accounts import log_entry
from server.store.archiving import archive
from server.store.changes import note_change, stamp_changes
from server.store.journalrows import Entry, insert_entries, journal_of, set_aside
from server.store.models import IgnoredPlayer, JournalEntry, LiveSession, LiveTable, TournamentTable, User
from server.store.paging import insert_into
from server.store.sessionrows import heartbeat, raise_event_mark, save_sessions

Done = Callable[[], None]  # called on the loop once the job's transaction is committed


class Job(ABC):
    """A write other than a journal entry or a session's row."""

    # the sessions' rows queued before this job are written first (it deletes them, changes them or counts
    # on what they hold)
    after_sessions: ClassVar[bool] = False

    @abstractmethod
    def write(self, session: Session, member: int) -> Done | None:
        """This job's SQL, as `member`'s, in the batch's transaction; what to call once it is committed."""

    def describe(self) -> str:
        """What the job is, for a log line: its kind and its whole numbers (never an id or a text)."""
        numbers = (f"{name}={value}" for name, value in vars(self).items() if type(value) is int)
        return " ".join((type(self).__name__.lower(), *numbers))


@dataclass
class Opened(Job):
    uid: int

    def write(self, session: Session, member: int) -> None:
        session.merge(LiveTable(uid=self.uid, opened_at=datetime.now(UTC), closed_at=None, owner=member))


@dataclass
class Closed(Job):
    uid: int

    def write(self, session: Session, member: int) -> None:
        session.execute(
            update(LiveTable).where(LiveTable.uid == self.uid).values(closed_at=datetime.now(UTC))
        )
        session.execute(delete(JournalEntry).where(*journal_of(self.uid, member)))


@dataclass
class TournamentTableSetUp(Job):
    uid: int
    tournament: str
    round: str | None
    blue: str
    red: str
    game_type: str

    def write(self, session: Session, member: int) -> None:
        session.merge(
            TournamentTable(
                uid=self.uid,
                tournament=self.tournament,
                round=self.round,
                created_at=datetime.now(UTC),
                blue=self.blue,
                red=self.red,
                game_type=self.game_type,
                result=None,
                game_number=None,
                cancelled_at=None,
            )
        )
        note_change(session.info, self.tournament, self.uid)


@dataclass
class Archive(Job):
    game: FinishedGame
    done: ArchiveDone

    def write(self, session: Session, member: int) -> Done:
        number, accounts = archive(session, self.game, member)
        return partial(self.done, number, accounts)

    def describe(self) -> str:
        return f"archive uid={self.game.uid} {self.game.blue} vs {self.game.red}"


@dataclass
class SessionEnded(Job):
    id_hmac: str
    after_sessions = True

    def write(self, session: Session, member: int) -> None:
        session.execute(delete(LiveSession).where(LiveSession.id_hmac == self.id_hmac))


@dataclass
class JournalDropped(Job):
    uid: int
    after_sessions = True  # the sessions' k: their rows hold it now

    def write(self, session: Session, member: int) -> None:
        session.execute(delete(JournalEntry).where(*journal_of(self.uid, member)))


@dataclass
class Compacted(Job):
    uid: int
    upto: int
    rows: list[tuple[int, str, dict[str, Any]]]

    def write(self, session: Session, member: int) -> None:
        session.execute(
            delete(JournalEntry).where(*journal_of(self.uid, member), JournalEntry.seq <= self.upto)
        )
        insert_entries(session, [Entry(self.uid, seq, kind, data) for seq, kind, data in self.rows], member)


@dataclass
class SetAside(Job):
    uid: int
    seq: int
    reason: str

    def write(self, session: Session, member: int) -> None:
        set_aside(session, member, self.uid, self.seq, self.reason)


@dataclass
class SessionsSeen(Job):
    alive_at: float
    quiet: dict[str, float | None]
    k: dict[str, int]
    after_sessions = True

    def write(self, session: Session, member: int) -> None:
        heartbeat(session, member, self.alive_at, self.quiet, self.k)

    def describe(self) -> str:
        return f"heartbeat sessions={len(self.quiet)} k={len(self.k)}"


@dataclass
class EventsReserved(Job):
    mark: int

    def write(self, session: Session, member: int) -> None:
        raise_event_mark(session, self.mark)


@dataclass
class IgnoredAdded(Job):
    """One nick on a registered player's list (Persistence.ignored_added): by the account's number, which
    a rename keeps, one row at a time, so that a list held in memory never writes back a nick taken off it
    meanwhile (a deleted account's). Nothing if the account is gone or its list is full."""

    account: int  # the account's number (users.id)
    key: str
    nick: str

    def write(self, session: Session, member: int) -> None:
        if session.scalar(select(User.id).where(User.id == self.account)) is None:
            return
        held = select(func.count()).select_from(IgnoredPlayer).where(IgnoredPlayer.user_id == self.account)
        if session.scalar(held) >= MOST_IGNORED:
            return
        row = {
            "user_id": self.account,
            "nick_key": self.key,
            "nick": self.nick,
            "ignored_at": datetime.now(UTC),
        }
        session.execute(insert_into(session, IgnoredPlayer).values(row).on_conflict_do_nothing())


@dataclass
class IgnoredRemoved(Job):
    account: int  # the account's number (users.id)
    key: str

    def write(self, session: Session, member: int) -> None:
        session.execute(
            delete(IgnoredPlayer).where(
                IgnoredPlayer.user_id == self.account, IgnoredPlayer.nick_key == self.key
            )
        )


@dataclass
class GuestPrivatesSet(Job):
    """Whether an account refuses private lines from guests (Persistence.guest_privates_set): by its
    number, which a rename keeps; nothing if the account is gone."""

    account: int  # the account's number (users.id)
    refused: bool

    def write(self, session: Session, member: int) -> None:
        session.execute(
            update(User).where(User.id == self.account).values(refuses_guest_privates=self.refused)
        )


@dataclass
class Moderated(Job):
    actor: str
    action: str
    target: str
    detail: str

    def write(self, session: Session, member: int) -> None:
        session.add(log_entry(self.actor, self.action, self.target, self.detail, ""))


class Withdrawn(Job):
    """In the place of a write the hub took back before storage took it (server/hub/takeback.py, a
    set-up storage did not take), or of one written on its own after its batch failed: never written
    (again), and counted as done, so that the counts of writes queued and written stay in step."""

    def write(self, session: Session, member: int) -> None:
        """Nothing: what it stands for is not to be written (write_batch passes it over)."""


WITHDRAWN = Withdrawn()

Queued = Entry | SavedSession | Job
TABLE_JOBS = (Entry, Opened, Closed, TournamentTableSetUp)  # writes about one table
CHAT_KINDS = frozenset({"chat", "private"})  # journal entries that are chat lines


def write_batch(connection: Connection, batch: list[Queued], member: int) -> list[Done]:
    """One batch of `member`'s, in the caller's transaction; returns what to call on the loop once it is
    committed."""
    done: list[Done] = []
    entries: list[Entry] = []
    saved: dict[str, SavedSession] = {}  # the newest row of each session, since the last job after them
    with Session(bind=connection) as session:
        for job in batch:
            if isinstance(job, Entry):
                entries.append(job)
                continue
            if isinstance(job, SavedSession):
                saved[job.id_hmac] = job
                continue
            if job is WITHDRAWN:
                continue
            insert_entries(session, entries, member)
            entries = []
            if job.after_sessions:
                save_sessions(session, saved, member)
                saved = {}
            if (callback := job.write(session, member)) is not None:
                done.append(callback)
        insert_entries(session, entries, member)
        save_sessions(session, saved, member)
        session.flush()
        stamp_changes(session)  # last: its locks are held until the commit
    return done


def describe(job: Queued) -> str:
    if isinstance(job, Entry):
        return f"journal uid={job.uid} seq={job.seq} kind={job.kind}"
    if isinstance(job, SavedSession):
        return f"session nick={job.nick}"
    return job.describe()


def unwritten(jobs: list[Queued]) -> dict[str, object]:
    """What a list of writes holds, for the operator (no id, no text): journal entries by game table,
    chat lines, finished games by their players' nicks, session updates, and the rest."""
    tables: Counter[int] = Counter()
    chat = sessions = other = 0
    games: list[str] = []
    for job in jobs:
        if isinstance(job, Entry) and job.kind in CHAT_KINDS:
            chat += 1
        elif isinstance(job, Entry) and job.kind == "k":  # a session's k (the sessions' journal)
            sessions += 1
        elif isinstance(job, TABLE_JOBS) and job.uid > 0:
            tables[job.uid] += 1
        elif isinstance(job, Archive):
            games.append(f"{job.game.blue} vs {job.game.red}")
        elif isinstance(job, SavedSession | SessionEnded | SessionsSeen):
            sessions += 1
        else:
            other += 1
    return {
        "writes": len(jobs),
        "journal": ",".join(f"{uid}:{count}" for uid, count in sorted(tables.items())) or "-",
        "chat_lines": chat,
        "games": "; ".join(games) or "-",
        "sessions": sessions,
        "other": other,
    }
