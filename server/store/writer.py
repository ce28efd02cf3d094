"""The write-behind queue: everything the hub hands over is written in order, in batches.

The hub queues writes without waiting; one task writes whatever has queued up in one transaction,
so a burst of moves from many tables costs one commit. A request that changed something awaits
`flush()` before it is answered: a player is never told a move was taken before it is on disk.

When storage stops taking writes (a full or read-only disk, a locked database, PostgreSQL gone) the
writer says so once (`storage_failure`, one warning in the log), keeps the batch and tries it again
with back-off, and `flush()` fails at once instead of waiting: the hub then refuses what would need a
write, and a request whose writes are not stored is not answered as done. The first write that goes
through again clears the state and says so once. A write that is itself bad is set aside, logged, so
that it cannot hold up the others for ever (docs/operations.md, "When storage fails").

Each transaction is plain synchronous SQLAlchemy. On SQLite it runs in one thread of its own with
the standard sqlite3 driver: one hop to that thread per transaction, instead of one per statement
through aiosqlite, cuts a commit from about 1.2 ms to under 0.3 ms (benchmarks/store.py); and that
thread writes batch after batch while there are any, without waiting for the event loop between them
(`_write_queued`). Other databases run the same function on the async engine's connection (`run_sync`),
a batch at a time, as SQLite does while storage fails.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    and_,
    bindparam,
    case,
    create_engine,
    delete,
    event,
    func,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from server.engine.board import BLACK, WHITE
from server.engine.rating import Rating, rate_game, shown
from server.engine.sgf import write_record
from server.hub.persistence import (
    Account,
    ArchiveDone,
    FinishedGame,
    LiveSessions,
    SavedSession,
    SessionOrigin,
    StorageFailing,
    id_hmac,
)
from server.logs import Fields
from server.protocol.codec import nick_key
from server.store.accounts import account_of, ignored_by
from server.store.database import BUSY_TIMEOUT_MS, insert_with_on_conflict, sqlite_pragmas
from server.store.models import (
    ArchivedGame,
    GamePlayer,
    IgnoredPlayer,
    JournalEntry,
    JournalSetAside,
    LiveSession,
    LiveTable,
    Member,
    RatingChange,
    ServerState,
    TournamentTable,
    User,
)
from server.store.outage import unavailable
from server.store.serverlock import MEMBER_LOCK_CLASS

log = logging.getLogger(__name__)

RETRY_FIRST = 1.0  # seconds before a failed write is tried again, doubled after each failure ...
RETRY_MOST = 10.0  # ... up to this
# At a stop, the attempt in progress when the time is up may finish: SQLite's waits for a lock this long
LAST_ATTEMPT_SECONDS = BUSY_TIMEOUT_MS / 1000 + 1
MAX_BATCH = 500  # jobs per transaction: a long backlog is written in slices, each reply waits for its own
# A multi-row INSERT carries at most PAGE_ROWS rows and PAGE_PARAMETERS values: SQLite before 3.32 takes
# no more than 999 (PostgreSQL 32,767)
PAGE_ROWS = 128
PAGE_PARAMETERS = 999
CHAT_JOURNAL_KEPT = 10_000  # newest entries kept of the lobby's and private chat's journals (uid <= 0)
SCORES = {BLACK: 1.0, WHITE: 0.0, 0: 0.5}
# server_state rows
HMAC_KEY = "session_hmac_key"  # hex of 32 random bytes, made at the first start
EVENT_MARK = "event_mark"  # every event number handed out so far is at most this
ALIVE_AT = "alive_at"  # the last heartbeat (wall time), written with the sessions' quiet_since


class _Stopped(Exception):
    """The server is stopping and its time for writing is up: the batch stays unwritten."""


@dataclass
class _Entry:
    uid: int
    seq: int
    kind: str
    data: dict[str, Any]


@dataclass
class _Opened:
    uid: int


@dataclass
class _Closed:
    uid: int


@dataclass
class _TournamentTable:
    uid: int
    tournament: str
    round: str | None
    blue: str
    red: str
    game_type: str


@dataclass
class _TournamentCancelled:
    uid: int


@dataclass
class _Archive:
    game: FinishedGame
    done: ArchiveDone


@dataclass
class _SessionEnded:
    id_hmac: str


@dataclass
class _JournalDropped:
    uid: int


@dataclass
class _Compacted:
    uid: int
    upto: int
    rows: list[tuple[int, str, dict[str, Any]]]


@dataclass
class _SetAside:
    uid: int
    seq: int
    reason: str


@dataclass
class _SessionsSeen:
    alive_at: float
    quiet: dict[str, float | None]
    k: dict[str, int]


@dataclass
class _EventsReserved:
    mark: int


@dataclass
class _IgnoredSaved:
    account: str  # the registered player's nick_key
    nicks: tuple[str, ...]


class _Withdrawn:
    """In the place of a write the hub took back before storage took it (server/hub/takeback.py): never
    written, and counted as done, so that the counts of writes queued and written stay in step."""


_WITHDRAWN = _Withdrawn()


_TableJob = _Entry | _Opened | _Closed | _TournamentTable | _TournamentCancelled  # writes about one table
_Job = (
    _Entry
    | _Opened
    | _Closed
    | _TournamentTable
    | _TournamentCancelled
    | _Archive
    | SavedSession
    | _SessionEnded
    | _JournalDropped
    | _SetAside
    | _Compacted
    | _SessionsSeen
    | _EventsReserved
    | _IgnoredSaved
    | _Withdrawn
)


class StoreWriter:
    def __init__(self, engine: AsyncEngine, sessions: async_sessionmaker, member: int = 0) -> None:
        self.engine = engine
        self.sessions = sessions
        # The cluster member whose sessions, tables and journals these are (0: a server alone): it
        # writes them as its own and reads back only its own (docs/cluster.md).
        self.member = member
        self._sync_engine: Engine | None = None
        self._thread: ThreadPoolExecutor | None = None
        if engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:"):
            self._sync_engine = create_engine(engine.url.set(drivername="sqlite"))
            event.listen(self._sync_engine, "connect", sqlite_pragmas)
            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store-writer")
        self._queue: list[_Job] = []
        self._writing: list[_Job] = []  # the batch being written (or tried again)
        self.queued = 0  # jobs ever queued
        self.written = 0  # jobs ever written (or set aside as bad), in order
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._task: asyncio.Task[None] | None = None
        self._hmac_key: bytes | None = None  # read (or made) by load_sessions
        self.on_commit: Callable[[float], None] | None = None  # seconds one batch took (for /metrics)
        self.storage_failure: str | None = None  # why storage takes no writes; None while it does
        self.failing_since: float | None = None  # wall time of the first write that failed (/readyz)
        self._failing_from = 0.0  # the same moment on the monotonic clock, for how long it lasted
        self.on_storage_change: Callable[[str | None], None] | None = None  # the hub: failing, or back
        self._stopping = asyncio.Event()  # set by finish() when the time is up: no attempt after this

    # --- the hub's side (Persistence) ------------------------------------------------------------

    def table_opened(self, uid: int) -> None:
        self._put(_Opened(uid))

    def journal(self, uid: int, seq: int, kind: str, data: dict[str, Any]) -> None:
        self._put(_Entry(uid, seq, kind, data))

    def tournament_table(
        self, uid: int, tournament: str, round: str | None, blue: str, red: str, game_type: str
    ) -> None:
        self._put(_TournamentTable(uid, tournament, round, blue, red, game_type))

    def tournament_cancelled(self, uid: int) -> None:
        self._put(_TournamentCancelled(uid))

    def archive(self, game: FinishedGame, done: ArchiveDone) -> None:
        self._put(_Archive(game, done))

    def table_closed(self, uid: int) -> None:
        self._put(_Closed(uid))

    def id_hmac(self, secret: str) -> str:
        if self._hmac_key is None:
            raise RuntimeError("load_sessions() reads the server's HMAC key first")
        return id_hmac(self._hmac_key, secret)

    def session_saved(self, session: SavedSession) -> None:
        self._put(session)

    def session_ended(self, id_hmac: str) -> None:
        self._put(_SessionEnded(id_hmac))

    def ignored_saved(self, account: str, nicks: tuple[str, ...]) -> None:
        self._put(_IgnoredSaved(account, nicks))

    def journal_dropped(self, uid: int) -> None:
        self._put(_JournalDropped(uid))

    def journal_set_aside(self, uid: int, seq: int, reason: str) -> None:
        self._put(_SetAside(uid, seq, reason))

    def journal_compacted(self, uid: int, upto: int, rows: list[tuple[int, str, dict[str, Any]]]) -> None:
        self._put(_Compacted(uid, upto, rows))

    def sessions_seen(
        self, alive_at: float, quiet: dict[str, float | None], k: dict[str, int] | None = None
    ) -> None:
        self._put(_SessionsSeen(alive_at, quiet, k or {}))

    def events_reserved(self, mark: int) -> None:
        self._put(_EventsReserved(mark))

    def unstored_journal(self) -> dict[int, list[tuple[int, str, dict[str, Any]]]]:
        """The game tables' journal entries not yet stored, by table, in order."""
        found: dict[int, list[tuple[int, str, dict[str, Any]]]] = {}
        for job in (*self._writing, *self._queue):
            if isinstance(job, _Entry) and job.uid > 0:
                found.setdefault(job.uid, []).append((job.seq, job.kind, job.data))
        return found

    def withdraw(self, uid: int, seqs: Collection[int]) -> None:
        """Never write these entries of table `uid`'s journal, nor the table's finished games not yet
        archived (the table was taken back to what is stored). Each keeps its place in the queue, so a
        reply that waits for the writes queued before it still waits for the same ones."""
        for jobs in (self._writing, self._queue):  # the batch tried again, and what waits behind it
            for index, job in enumerate(jobs):
                if (isinstance(job, _Entry) and job.uid == uid and job.seq in seqs) or (
                    isinstance(job, _Archive) and job.game.uid == uid
                ):
                    jobs[index] = _WITHDRAWN

    async def flush(self, timeout: float | None = None) -> None:
        """Return once everything queued before this call is written; raise StorageFailing if storage
        fails first, or is failing (then nothing queued since can be written before it is back), and
        TimeoutError if it has not taken it within `timeout` seconds.

        The time-out is a timer on the waiter, not an asyncio.timeout: that one looks up the task,
        cancels it and keeps its count of cancellations, for every move (issue 19.2)."""
        target = self.queued
        if self.written >= target:
            return
        if self.storage_failure is not None:
            raise StorageFailing(self.storage_failure)
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        self._waiters.append((target, waiter))
        if timeout is None:
            await waiter
            return
        expiry = loop.call_later(timeout, _time_out, waiter)
        try:
            await waiter
        finally:
            expiry.cancel()

    async def finish(self, seconds: float) -> None:
        """At a stop: write what is queued, giving storage `seconds` (and the attempt then in progress
        LAST_ATTEMPT_SECONDS more); what it did not take by then is named in one log line and left."""
        task = self._task
        if task is not None and not task.done():
            if not (await asyncio.wait({task}, timeout=seconds))[0]:
                self._stopping.set()
                if not (await asyncio.wait({task}, timeout=LAST_ATTEMPT_SECONDS))[0]:
                    task.cancel()
                    await asyncio.wait({task})
        left = [job for job in self._writing + self._queue if job is not _WITHDRAWN]
        if left:
            log.error(
                "stopped with writes storage did not take %s",
                Fields(reason=self.storage_failure or "timed out", **unwritten(left)),
            )

    def close(self) -> None:
        """After `finish`: release the writer's own connection and thread (an attempt given up on may
        still be waiting for SQLite's lock: it is not waited for)."""
        if self._sync_engine is not None:
            self._sync_engine.dispose()
        if self._thread is not None:
            self._thread.shutdown(wait=False, cancel_futures=True)

    # --- writing ---------------------------------------------------------------------------------

    def _put(self, job: _Job) -> None:
        self._queue.append(job)
        self.queued += 1
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while self._queue:
            failed: Exception | None = None
            if self._thread is not None and self.storage_failure is None:
                failed = await loop.run_in_executor(self._thread, self._write_queued, loop)
                if self._stopping.is_set():
                    return
                if failed is None:
                    continue
            # the careful way, one batch at a time from the loop: storage failing, or not SQLite
            batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
            self._writing = batch
            started = time.perf_counter()
            try:
                done = await self._write_batch(batch, failed)
            except _Stopped:
                return
            self._writing = []
            self._committed(len(batch), done, time.perf_counter() - started)

    def _write_queued(self, loop: asyncio.AbstractEventLoop) -> Exception | None:
        """In the writer's thread (SQLite): write what is queued, batch after batch, each committed batch
        booked on the loop as it is (`_committed`), without waiting for the loop in between.

        Waiting for it cost most of the writer's time with 2,000 games: a busy loop takes tens of
        milliseconds to come back to a finished batch, while writing 500 rows takes 10 ms of CPU, so
        the writer wrote one batch per turn of the loop, each move's reply waited for a turn or two more,
        and moves answered in p50 0.5 s (issue 19.2). Returns the failure of a batch that did not go
        in, which is then still first in the queue for `_write_batch`; None once the queue is empty.
        """
        while self._queue and not self._stopping.is_set():
            batch = self._queue[:MAX_BATCH]
            started = time.perf_counter()
            try:
                done = self._in_thread(batch)
            except Exception as failure:
                return failure
            # Only this thread takes from the queue while it runs (the loop waits for it in _drain) and
            # the loop only appends: each of these list operations is atomic under the GIL.
            del self._queue[: len(batch)]
            loop.call_soon_threadsafe(self._committed, len(batch), done, time.perf_counter() - started)
        return None

    def _in_thread(self, batch: list[_Job]) -> list[Callable[[], None]]:
        """One batch in one transaction, in the writer's thread (SQLite)."""
        assert self._sync_engine is not None
        with self._sync_engine.begin() as connection:
            return _write(connection, batch, self.member)

    def _committed(self, count: int, done: list[Callable[[], None]], seconds: float) -> None:
        """On the loop, in the order of the commits: the next `count` jobs are written."""
        if self.on_commit is not None:
            self.on_commit(seconds)
        self.written += count
        for callback in done:
            try:
                callback()
            except Exception:
                log.exception("after-write callback failed")
        self._wake()

    def _wake(self) -> None:
        still = []
        for target, waiter in self._waiters:
            if target <= self.written:
                if not waiter.done():
                    waiter.set_result(None)
            else:
                still.append((target, waiter))
        self._waiters = still

    async def _write_batch(
        self, batch: list[_Job], failed: Exception | None = None
    ) -> list[Callable[[], None]]:
        """Write a batch in one transaction, trying again while storage is unavailable; if a job itself
        is bad, the others still go in, one by one. `failed`: how a first try (by the thread) failed."""
        delay = RETRY_FIRST
        while True:
            if failed is None and all(job is _WITHDRAWN for job in batch):
                return []  # all taken back: nothing to write, and nothing learnt of storage
            if failed is None:
                try:
                    done = await self._transaction(batch)
                except Exception as failure:
                    failed = failure
                else:
                    self._back()
                    return done
            reason = unavailable(failed)
            if reason is None:
                return await self._without_the_bad(batch, failed)
            self._failing(reason, failed)
            failed = None
            if self._stopping.is_set():
                raise _Stopped from None
            try:
                async with asyncio.timeout(delay):
                    await self._stopping.wait()
            except TimeoutError:
                pass
            if self._stopping.is_set():
                raise _Stopped from None
            delay = min(2 * delay, RETRY_MOST)

    def _failing(self, reason: str, failure: Exception) -> None:
        """A write failed for want of storage: said once, and every request waiting for a write learns
        it now rather than after its time-out."""
        if self.storage_failure is not None:  # the reason /readyz gives is the newest one
            self.storage_failure = reason
            log.debug("write failed again %s", Fields(reason=reason, error=type(failure).__name__))
            return
        self.storage_failure, self.failing_since, self._failing_from = reason, time.time(), time.monotonic()
        log.warning(
            "storage failing: writes wait and are tried again, moves and chat are refused %s",
            Fields(reason=reason, error=type(failure).__name__, waiting=self.queued - self.written),
        )
        for _, waiter in self._waiters:
            if not waiter.done():
                waiter.set_exception(StorageFailing(reason))
        self._waiters = []
        if self.on_storage_change is not None:
            self.on_storage_change(reason)

    def _back(self) -> None:
        if self.storage_failure is None:
            return
        log.warning(
            "storage back: writes resumed %s",
            Fields(
                failing_seconds=round(time.monotonic() - self._failing_from, 1),
                waited=self.queued - self.written,
                reason=self.storage_failure,
            ),
        )
        self.storage_failure = self.failing_since = None
        if self.on_storage_change is not None:
            self.on_storage_change(None)

    async def _without_the_bad(self, batch: list[_Job], failure: Exception) -> list[Callable[[], None]]:
        """A write the database refused for what it is: a batch is tried one by one, a single job is
        dropped (logged) so that it cannot hold up the queue for ever."""
        if len(batch) == 1:
            log.error(
                "a write was refused by the database and is dropped %s",
                Fields(write=_describe(batch[0])),
                exc_info=failure,
            )
            return []
        log.error(
            "a batch of writes failed; writing them one by one %s",
            Fields(writes=len(batch)),
            exc_info=failure,
        )
        done = []
        for job in batch:
            done += await self._write_batch([job])
        return done

    async def _transaction(self, batch: list[_Job]) -> list[Callable[[], None]]:
        if self._sync_engine is not None:
            return await asyncio.get_running_loop().run_in_executor(self._thread, self._in_thread, batch)
        async with self.engine.begin() as connection:
            return await connection.run_sync(_write, batch, self.member)

    # --- reading at start-up ---------------------------------------------------------------------

    async def load_journal(self) -> tuple[dict[int, list[tuple[int, str, dict[str, Any]]]], int]:
        """The journals of the tables still open, and the first table number never used."""
        member = self.member
        async with self.sessions.begin() as session:
            chats = select(JournalEntry.uid, func.max(JournalEntry.seq)).where(
                JournalEntry.uid <= 0, JournalEntry.member == member
            )
            for uid, newest in (await session.execute(chats.group_by(JournalEntry.uid))).all():
                await session.execute(
                    delete(JournalEntry).where(
                        *_journal(uid, member), JournalEntry.seq <= newest - CHAT_JOURNAL_KEPT
                    )
                )
            owned = select(LiveTable.uid).where(LiveTable.owner == member)
            rows = await session.execute(
                select(JournalEntry.uid, JournalEntry.seq, JournalEntry.kind, JournalEntry.data)
                .where(
                    or_(
                        and_(JournalEntry.uid <= 0, JournalEntry.member == member),
                        and_(JournalEntry.uid > 0, JournalEntry.uid.in_(owned)),
                    )
                )
                .order_by(JournalEntry.uid, JournalEntry.seq)
            )
            journals = await _read_journals(session, rows, member)
            last_uid = await session.scalar(select(func.max(LiveTable.uid)))
        return journals, (last_uid or 0) + 1

    async def load_sessions(self) -> LiveSessions:
        """The sessions of the earlier run, registered players' accounts, the event numbers reserved and
        the last heartbeat; reads the server's HMAC key, or makes it at the first start."""
        async with self.sessions.begin() as session:
            state = dict((await session.execute(select(ServerState.name, ServerState.value))).all())
            if HMAC_KEY not in state:
                state[HMAC_KEY] = os.urandom(32).hex()
                session.add(ServerState(name=HMAC_KEY, value=state[HMAC_KEY]))
            rows = (await session.scalars(select(LiveSession).where(LiveSession.owner == self.member))).all()
            keys = {nick_key(row.nick) for row in rows if row.registered}
            users = (await session.scalars(select(User).where(User.nick_key.in_(keys)))).all() if keys else []
            ignored = await ignored_by(session, [user.id for user in users])
        self._hmac_key = bytes.fromhex(state[HMAC_KEY])
        return LiveSessions(
            sessions=[saved_session(row) for row in rows],
            accounts={user.nick_key: account_of(user, ignored[user.id]) for user in users},
            event_mark=int(state.get(EVENT_MARK, 0)),
            alive_at=float(state[ALIVE_AT]) if ALIVE_AT in state else None,
        )

    async def take_orphans(
        self, alive: tuple[str, ...]
    ) -> tuple[dict[int, list[tuple[int, str, dict[str, Any]]]], bool]:
        """The open tables of members that are not alive become this member's, with their journals
        (docs/cluster.md, "Take-over"). A member is taken from only while nobody holds its own lock
        (serverlock.hold_member): a live member, or one restarting and reading its tables back, holds
        it; and of several members taking over at once, the lock and the UPDATE give each table to one.
        Also whether a member not alive still held its lock (it is stopping or starting: look again)."""
        me = self.member
        held = False
        async with self.sessions.begin() as session:
            named = dict((await session.execute(select(Member.id, Member.name))).all())
            owners = await session.scalars(
                select(LiveTable.owner).where(LiveTable.closed_at.is_(None), LiveTable.owner != me).distinct()
            )
            uids: list[int] = []
            for owner in owners.all():
                if named.get(owner) in alive:
                    continue
                locked = await session.scalar(
                    text("SELECT pg_try_advisory_xact_lock(:kind, :number)"),
                    {"kind": MEMBER_LOCK_CLASS, "number": owner},
                )
                if not locked:
                    held = True
                    continue
                taken = await session.scalars(
                    update(LiveTable)
                    .where(LiveTable.owner == owner, LiveTable.closed_at.is_(None))
                    .values(owner=me)
                    .returning(LiveTable.uid)
                )
                uids += taken.all()
            if not uids:
                return {}, held
            rows = await session.execute(
                select(JournalEntry.uid, JournalEntry.seq, JournalEntry.kind, JournalEntry.data)
                .where(JournalEntry.uid.in_(uids))
                .order_by(JournalEntry.uid, JournalEntry.seq)
            )
            journals = await _read_journals(session, rows, me)
        return {uid: journals.get(uid, []) for uid in uids}, held

    async def session_of(self, id_hmac: str) -> tuple[str, SavedSession, Account | None] | None:
        """A live session of any member of a cluster: the name of the member serving it, the session as
        that member last wrote it, and a registered player's account (docs/cluster.md, "Routing")."""
        async with self.sessions.begin() as session:
            found = (
                await session.execute(
                    select(LiveSession, Member.name)
                    .join(Member, Member.id == LiveSession.owner)
                    .where(LiveSession.id_hmac == id_hmac)
                )
            ).first()
            if found is None:
                return None
            row, owner = found
            account = None
            if row.registered:
                user = await session.scalar(select(User).where(User.nick_key == nick_key(row.nick)))
                if user is not None:
                    account = account_of(user, (await ignored_by(session, [user.id]))[user.id])
        return owner, saved_session(row), account


async def _read_journals(
    session: AsyncSession, rows: Any, member: int
) -> dict[int, list[tuple[int, str, dict[str, Any]]]]:
    """Journal rows by table, in order; rows that do not parse are set aside, not replayed."""
    journals: dict[int, list[tuple[int, str, dict[str, Any]]]] = {}
    unreadable: list[tuple[int, int, str, str, str]] = []
    for uid, seq, kind, data in rows:
        try:
            parsed = json.loads(data)
        except ValueError as error:
            unreadable.append((uid, seq, kind, data, f"not JSON: {error}"))
            continue
        if not isinstance(parsed, dict):
            unreadable.append((uid, seq, kind, data, f"not a JSON object: {type(parsed).__name__}"))
            continue
        journals.setdefault(uid, []).append((seq, kind, parsed))
    if unreadable:
        await session.run_sync(_set_aside_unreadable, unreadable, member)
    return journals


def _time_out(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():  # the writer skips it then: it wakes only those still waiting
        waiter.set_exception(TimeoutError())


def saved_session(row: LiveSession) -> SavedSession:
    return SavedSession(
        id_hmac=row.id_hmac,
        nick=row.nick,
        lang=row.lang,
        registered=row.registered,
        free=row.free,
        client=row.client,
        tables=tuple(json.loads(row.tables)),
        blocked=tuple(json.loads(row.blocked)),
        last_command=row.last_command,
        quiet_since=row.quiet_since,
        origin=_session_origin(row.origin),
        ignored=tuple(json.loads(row.ignored)),
    )


def _session_origin(text: str | None) -> SessionOrigin:
    if not text:
        return SessionOrigin()
    data = json.loads(text)
    return SessionOrigin(data["host"], data["network"], tuple(data["networks"]), data["unlimited"])


def _origin_text(origin: SessionOrigin) -> str | None:
    if origin == SessionOrigin():
        return None
    return json.dumps(
        {
            "host": origin.host,
            "network": origin.network,
            "networks": list(origin.networks),
            "unlimited": origin.unlimited,
        }
    )


def _write(connection: Connection, batch: list[_Job], member: int) -> list[Callable[[], None]]:
    """One batch of `member`'s, in the caller's transaction; returns what to call on the loop once it is
    committed."""
    done: list[Callable[[], None]] = []
    entries: list[_Entry] = []
    saved: dict[str, SavedSession] = {}  # the newest row of each session, since the last other session job
    with Session(bind=connection) as session:
        for job in batch:
            if isinstance(job, _Entry):
                entries.append(job)
                continue
            if isinstance(job, SavedSession):
                saved[job.id_hmac] = job
                continue
            if job is _WITHDRAWN:
                continue
            _insert_entries(session, entries, member)
            entries = []
            if isinstance(job, _SessionEnded | _SessionsSeen | _JournalDropped):
                _save_sessions(session, saved, member)
                saved = {}
            if isinstance(job, _SessionEnded):
                session.execute(delete(LiveSession).where(LiveSession.id_hmac == job.id_hmac))
            elif isinstance(job, _JournalDropped):
                session.execute(delete(JournalEntry).where(*_journal(job.uid, member)))
            elif isinstance(job, _SetAside):
                _set_aside(session, member, job.uid, job.seq, job.reason)
            elif isinstance(job, _Compacted):
                session.execute(
                    delete(JournalEntry).where(*_journal(job.uid, member), JournalEntry.seq <= job.upto)
                )
                rows = [_Entry(job.uid, seq, kind, data) for seq, kind, data in job.rows]
                _insert_entries(session, rows, member)
            elif isinstance(job, _SessionsSeen):
                _seen(session, job)
            elif isinstance(job, _EventsReserved):
                _set_state(session, {EVENT_MARK: str(job.mark)})
            elif isinstance(job, _IgnoredSaved):
                _save_ignored(session, job)
            elif isinstance(job, _Opened):
                session.merge(
                    LiveTable(uid=job.uid, opened_at=datetime.now(UTC), closed_at=None, owner=member)
                )
            elif isinstance(job, _Closed):
                session.execute(
                    update(LiveTable).where(LiveTable.uid == job.uid).values(closed_at=datetime.now(UTC))
                )
                session.execute(delete(JournalEntry).where(*_journal(job.uid, member)))
            elif isinstance(job, _TournamentTable):
                session.merge(
                    TournamentTable(
                        uid=job.uid,
                        tournament=job.tournament,
                        round=job.round,
                        created_at=datetime.now(UTC),
                        blue=job.blue,
                        red=job.red,
                        game_type=job.game_type,
                        result=None,
                        game_number=None,
                        cancelled_at=None,
                    )
                )
            elif isinstance(job, _TournamentCancelled):
                session.execute(
                    update(TournamentTable)
                    .where(TournamentTable.uid == job.uid)
                    .values(cancelled_at=datetime.now(UTC))
                )
            else:
                number, accounts = _archive(session, job.game, member)
                done.append(lambda job=job, number=number, accounts=accounts: job.done(number, accounts))
        _insert_entries(session, entries, member)
        _save_sessions(session, saved, member)
        session.flush()
    return done


def _insert(session: Session, model: type[Any]) -> Any:
    """The dialect's INSERT, which has ON CONFLICT on both SQLite and PostgreSQL.

    Of the model's table, not the model: the ORM's bulk insert would sort and check every row (a quarter
    of the CPU a journal row cost; issue 19.2)."""
    return insert_with_on_conflict(session.get_bind().dialect, model.__table__)


def _journal(uid: int, member: int) -> list[Any]:
    """Which rows are journal `uid`: a table's are all its own, whoever wrote them (its owner may have
    changed); the lobby's chat, private chat and the sessions' k (uid <= 0) are each member's own."""
    if uid > 0:
        return [JournalEntry.uid == uid]
    return [JournalEntry.uid == uid, JournalEntry.member == member]


def _save_sessions(session: Session, saved: dict[str, SavedSession], member: int) -> None:
    """Insert or update session rows, as `member`'s (a session saved by another member has moved to it);
    `quiet_since` changes only with the heartbeat (`_seen`)."""
    if not saved:
        return
    rows = [
        {
            "id_hmac": s.id_hmac,
            "nick": s.nick,
            "lang": s.lang,
            "registered": s.registered,
            "free": s.free,
            "client": s.client,
            "tables": json.dumps(list(s.tables)),
            "blocked": json.dumps(list(s.blocked)),
            "ignored": json.dumps(list(s.ignored)),
            "last_command": s.last_command,
            "quiet_since": None,
            "owner": member,
            "origin": _origin_text(s.origin),
        }
        for s in saved.values()
    ]
    kept = [name for name in rows[0] if name not in ("id_hmac", "quiet_since")]
    _insert_pages(
        session,
        LiveSession,
        rows,
        "upsert",
        lambda insert: insert.on_conflict_do_update(
            index_elements=["id_hmac"], set_={name: insert.excluded[name] for name in kept}
        ),
    )


def _save_ignored(session: Session, job: _IgnoredSaved) -> None:
    """The account's whole list, in place of what it was (nothing if the account is gone meanwhile)."""
    user_id = session.scalar(select(User.id).where(User.nick_key == job.account))
    if user_id is None:
        return
    session.execute(delete(IgnoredPlayer).where(IgnoredPlayer.user_id == user_id))
    if job.nicks:
        now = datetime.now(UTC)
        session.execute(
            _insert(session, IgnoredPlayer),
            [{"user_id": user_id, "nick_key": nick_key(n), "nick": n, "ignored_at": now} for n in job.nicks],
        )


def _seen(session: Session, job: _SessionsSeen) -> None:
    _set_state(session, {ALIVE_AT: repr(job.alive_at)})
    _set_column(session, "quiet_since", job.quiet)
    # k alone: the whole rows of thousands of sessions, every 5 s, held every move behind them (19.2)
    _set_column(session, "last_command", job.k)


def _set_column(session: Session, column: str, values: dict[str, Any]) -> None:
    """One column of many sessions' rows (id HMAC -> value), by pages of one UPDATE each."""
    if not values:
        return
    table = LiveSession.__table__
    value_type = table.c[column].type  # last_command's is a big integer: an int32 overflows on PostgreSQL

    def page(size: int) -> Any:
        keys = [bindparam(f"key_{i}") for i in range(size)]
        value = case(
            *((table.c.id_hmac == keys[i], bindparam(f"value_{i}", type_=value_type)) for i in range(size))
        )
        return update(table).where(table.c.id_hmac.in_(keys)).values({column: value})

    rows = [{"key": key, "value": value} for key, value in values.items()]
    _in_pages(session, (column, table.name), rows, 3, page)


def _set_state(session: Session, values: dict[str, str]) -> None:
    """Through `_insert_pages`, whose statements are built once: an upsert built at every heartbeat made
    its `excluded` alias of the table anew, SQLAlchemy objects in reference cycles that only the full
    collection frees (issue 19.2)."""
    _insert_pages(
        session,
        ServerState,
        [{"name": name, "value": value} for name, value in values.items()],
        "upsert",
        lambda insert: insert.on_conflict_do_update(
            index_elements=["name"], set_={"value": insert.excluded.value}
        ),
    )


def _insert_entries(session: Session, entries: list[_Entry], member: int) -> None:
    """Insert `member`'s journal entries; one already written (same table and number) is left as it is."""
    if not entries:
        return
    rows = [
        {"member": member, "uid": e.uid, "seq": e.seq, "kind": e.kind, "data": json.dumps(e.data)}
        for e in entries
    ]
    _insert_pages(session, JournalEntry, rows, "or skip", lambda insert: insert.on_conflict_do_nothing())


def _insert_pages(
    session: Session,
    model: type[Any],
    rows: list[dict[str, Any]],
    conflict: str,
    on_conflict: Callable[[Any], Any],
) -> None:
    """INSERT rows (all with the same keys) with a multi-row VALUES, a page at a time; `conflict` names
    what `on_conflict` adds, for the statements' cache."""
    columns = tuple(rows[0])

    def page(size: int) -> Any:
        insert = _insert(session, model)
        return on_conflict(insert.values([{c: bindparam(f"{c}_{i}") for c in columns} for i in range(size)]))

    _in_pages(session, ("insert", model.__tablename__, columns, conflict), rows, len(columns), page)


def _in_pages(
    session: Session,
    kind: tuple[Any, ...],
    rows: list[dict[str, Any]],
    per_row: int,
    page: Callable[[int], Any],
) -> None:
    """Run one statement per page of rows: `page(size)` is the statement for `size` rows, whose i-th row's
    value of `column` is bound as `{column}_{i}` (`per_row` parameters a row); `kind` names it.

    Not executemany: the sqlite3 driver lets go of the GIL around every row it steps, and the store's
    thread then waits up to a switch interval (5 ms) to get it back from a busy event loop, so 500 rows
    took 0.1-1.5 s of a loaded server and every move waited for them (issue 19.2); a page is one step.
    Pages have 2**n rows, so that few sizes exist: SQLAlchemy does not cache statements with many rows
    of VALUES, so each size is compiled once, here, and run as the driver's SQL."""
    connection = session.connection()
    most = min(PAGE_ROWS, 1 << ((PAGE_PARAMETERS // per_row).bit_length() - 1))
    start = 0
    while start < len(rows):
        size = min(most, 1 << ((len(rows) - start).bit_length() - 1))
        key = (connection.dialect.name, connection.dialect.driver, kind, size)  # drivers' paramstyles differ
        if key not in _pages:
            compiled = page(size).compile(dialect=connection.dialect)
            _pages[key] = (compiled.string, tuple(compiled.positiontup) if compiled.positional else None)
        sql, order = _pages[key]
        values = {
            f"{name}_{i}": value
            for i, row in enumerate(rows[start : start + size])
            for name, value in row.items()
        }
        connection.exec_driver_sql(
            sql, tuple(values[name] for name in order) if order is not None else values
        )
        start += size


# (dialect, driver, kind, page size) -> the driver's SQL and, if positional, its parameters' order
_pages: dict[tuple[Any, ...], tuple[str, tuple[str, ...] | None]] = {}


def _set_aside(
    session: Session, member: int, uid: int, seq: int, reason: str, row: tuple[str, str] | None = None
) -> None:
    """Move one journal entry to journal_set_aside (`row`: its kind and data, when already read)."""
    where = [*_journal(uid, member), JournalEntry.seq == seq]
    if row is None:
        entry = session.scalars(select(JournalEntry).where(*where)).first()
        if entry is None:
            return
        row = (entry.kind, entry.data)
    kind, data = row
    session.add(
        JournalSetAside(
            member=member,
            uid=uid,
            seq=seq,
            kind=kind,
            data=data,
            reason=reason[:300],
            set_aside_at=datetime.now(UTC),
        )
    )
    session.execute(delete(JournalEntry).where(*where))
    log.warning("journal entry set aside %s", Fields(uid=uid, seq=seq, kind=kind, reason=reason[:300]))


def _set_aside_unreadable(session: Session, rows: list[tuple[int, int, str, str, str]], member: int) -> None:
    for uid, seq, kind, data, reason in rows:
        _set_aside(session, member, uid, seq, reason, (kind, data))


def _registered(session: Session, nick: str) -> User | None:
    if nick.startswith("*"):
        return None
    return session.scalar(select(User).where(User.nick_key == nick_key(nick)))


def _rating(user: User) -> Rating:
    return Rating(user.rating, user.deviation, user.volatility)


def _archive(session: Session, game: FinishedGame, member: int) -> tuple[int, list[Account]]:
    """Store a finished game, with the players' ratings as they were before it; rate it if it counts.
    A team game (unrated) names its teams' first players in the game's row, and all its players in
    `game_players` (docs/teams.md)."""
    if game.players:
        return _archive_team_game(session, game, member)
    blue, red = _registered(session, game.blue), _registered(session, game.red)
    record = game.record
    if blue is not None:
        record.black_rating = str(shown(_rating(blue)))
    if red is not None:
        record.white_rating = str(shown(_rating(red)))
    rated = game.rated and blue is not None and red is not None and game.result is not None
    changed: list[Account] = []
    if rated:
        assert blue is not None and red is not None and game.result is not None
        score = SCORES[game.result.winner]
        new_blue, new_red = rate_game(_rating(blue), _rating(red), score)
        for user, rating, points in ((blue, new_blue, score), (red, new_red, 1.0 - score)):
            user.rating, user.deviation, user.volatility = rating.rating, rating.deviation, rating.volatility
            if points == 1.0:
                user.wins += 1
            elif points == 0.0:
                user.losses += 1
            else:
                user.draws += 1
            changed.append(account_of(user))
    row = ArchivedGame(
        finished_at=datetime.fromtimestamp(game.ended_at, UTC)
        if game.ended_at is not None
        else datetime.now(UTC),
        blue_nick=game.blue,
        red_nick=game.red,
        blue_id=blue.id if blue is not None else None,
        red_id=red.id if red is not None else None,
        game_type=game.game_type,
        result=str(game.result) if game.result is not None else None,
        rated=rated,
        tournament=game.tournament,
        sgf=write_record(record),
    )
    session.add(row)
    session.flush()
    if rated:
        assert blue is not None and red is not None
        session.add_all(
            RatingChange(
                user_id=user.id,
                game_number=row.number,
                rated_at=row.finished_at,
                rating=user.rating,
                deviation=user.deviation,
            )
            for user in (blue, red)
        )
    _archived(session, game, row, member)
    return row.number, changed


def _archive_team_game(session: Session, game: FinishedGame, member: int) -> tuple[int, list[Account]]:
    row = ArchivedGame(
        finished_at=datetime.now(UTC),
        blue_nick=game.players[0],
        red_nick=game.players[1],
        blue_id=None,
        red_id=None,
        game_type=game.game_type,
        result=str(game.result) if game.result is not None else None,
        rated=False,
        tournament=game.tournament,
        sgf=write_record(game.record),
    )
    session.add(row)
    session.flush()
    for side, nick in enumerate(game.players, 1):
        user = _registered(session, nick)
        session.add(
            GamePlayer(game_number=row.number, side=side, nick=nick, user_id=user.id if user else None)
        )
    _archived(session, game, row, member)
    return row.number, []


def _archived(session: Session, game: FinishedGame, row: ArchivedGame, member: int) -> None:
    """What every archived game writes with its row: its tournament table's result, and the journal's
    entry that says the game is in the archive."""
    if game.tournament is not None and game.game_index == 0:
        session.execute(
            update(TournamentTable)
            .where(TournamentTable.uid == game.uid)
            .values(result=row.result, game_number=row.number, moves=game.moves)
        )
    archived = _Entry(game.uid, game.journal_seq, "archived", {"number": row.number, "game": game.game_index})
    _insert_entries(session, [archived], member)


def _describe(job: _Job) -> str:
    if isinstance(job, _Withdrawn):
        return "withdrawn"
    if isinstance(job, _Entry):
        return f"journal uid={job.uid} seq={job.seq} kind={job.kind}"
    if isinstance(job, _Archive):
        return f"archive uid={job.game.uid} {job.game.blue} vs {job.game.red}"
    if isinstance(job, SavedSession):
        return f"session nick={job.nick}"
    if isinstance(job, _SessionsSeen):
        return f"heartbeat sessions={len(job.quiet)} k={len(job.k)}"
    if isinstance(job, _EventsReserved):
        return f"event numbers up to {job.mark}"
    if isinstance(job, _SessionEnded):
        return "session ended"
    if isinstance(job, _SetAside):
        return f"set aside uid={job.uid} seq={job.seq}"
    if isinstance(job, _Compacted):
        return f"compacted journal uid={job.uid} upto={job.upto} rows={len(job.rows)}"
    if isinstance(job, _IgnoredSaved):
        return "ignored players"  # of an account: no table, no nick
    return f"{type(job).__name__.strip('_').lower()} uid={job.uid}"


CHAT_KINDS = frozenset({"chat", "private"})  # journal entries that are chat lines


def unwritten(jobs: list[_Job]) -> dict[str, object]:
    """What a list of writes holds, for the operator (no id, no text): journal entries by game table,
    chat lines, finished games by their players' nicks, session updates, and the rest."""
    tables: Counter[int] = Counter()
    chat = sessions = other = 0
    games: list[str] = []
    for job in jobs:
        if isinstance(job, _Entry) and job.kind in CHAT_KINDS:
            chat += 1
        elif isinstance(job, _Entry) and job.kind == "k":  # a session's k (the sessions' journal)
            sessions += 1
        elif isinstance(job, _TableJob) and job.uid > 0:
            tables[job.uid] += 1
        elif isinstance(job, _Archive):
            games.append(f"{job.game.blue} vs {job.game.red}")
        elif isinstance(job, SavedSession | _SessionEnded | _SessionsSeen):
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
