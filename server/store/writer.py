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
a batch at a time, as SQLite does while storage fails. Either way a batch ends only where a turn of the
event loop's work ended (server/store/seals.py), never among the jobs one action queued: a crash
between two commits stores whole actions.

This module is the queue and its timing; what each kind of write does in SQL is server/store/jobs.py,
and what a start reads back is server/store/restart.py.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker

from server.hub.persistence import (
    Account,
    ArchiveDone,
    FinishedGame,
    LiveSessions,
    SavedSession,
    StorageFailing,
    id_hmac,
)
from server.logs import Fields
from server.store import restart
from server.store.database import BUSY_TIMEOUT_MS, sqlite_pragmas
from server.store.jobs import (
    TABLE_JOBS,
    WITHDRAWN,
    Archive,
    Closed,
    Compacted,
    Done,
    Entry,
    EventsReserved,
    GuestPrivatesSet,
    IgnoredAdded,
    IgnoredRemoved,
    JournalDropped,
    Moderated,
    Opened,
    Queued,
    SessionEnded,
    SessionsSeen,
    SetAside,
    TournamentTableSetUp,
    describe,
    unwritten,
    write_batch,
)
from server.store.outage import described, unavailable
from server.store.seals import Seals

log = logging.getLogger(__name__)

RETRY_FIRST = 1.0  # seconds before a failed write is tried again, doubled after each failure ...
RETRY_MOST = 10.0  # ... up to this
# At a stop, the attempt in progress when the time is up may finish: SQLite's waits for a lock this long
LAST_ATTEMPT_SECONDS = BUSY_TIMEOUT_MS / 1000 + 1
MAX_BATCH = 500  # jobs per transaction: a long backlog is written in slices, each reply waits for its own


class _Stopped(Exception):
    """The server is stopping and its time for writing is up: the batch stays unwritten."""


class StoreWriter:
    """The hub's Persistence (server/hub/persistence.py) on a database: each call queues a job
    (server/store/jobs.py), written behind in order."""

    def __init__(self, engine: AsyncEngine, sessions: async_sessionmaker, member: int = 0) -> None:
        self.engine = engine
        self.sessions = sessions
        # The cluster member whose sessions, tables and journals these are (0: a server alone): it
        # writes them as its own and reads back only its own (docs/cluster.md).
        self.member = member
        self._sync_engine: Engine | None = None
        self._thread: ThreadPoolExecutor | None = None
        if engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:"):
            # its errors name no values, as open_engine's do
            self._sync_engine = create_engine(engine.url.set(drivername="sqlite"), hide_parameters=True)
            event.listen(self._sync_engine, "connect", sqlite_pragmas)
            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store-writer")
        self._queue: list[Queued] = []
        self._seals = Seals(lambda: self.queued)  # where a batch may end: between two loop steps' jobs
        self._writing: list[Queued] = []  # the batch being written (or tried again)
        # the jobs a transaction may be writing at this moment: the batch tried, or the whole queue while
        # the writer's thread takes batch after batch from it (see withdraw_table)
        self._in_flight: list[Queued] = []
        self.queued = 0  # jobs ever queued
        self.written = 0  # jobs ever written (or set aside as bad), in order
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._task: asyncio.Task[None] | None = None
        self._hmac_key: bytes | None = None  # read (or made) by load_sessions
        self.on_commit: Callable[[int, float], None] | None = None  # a batch's jobs and seconds (/metrics)
        self.storage_failure: str | None = None  # why storage takes no writes; None while it does
        self.failing_since: float | None = None  # wall time of the first write that failed (/readyz)
        self._failing_from = 0.0  # the same moment on the monotonic clock, for how long it lasted
        self.on_storage_change: Callable[[str | None], None] | None = None  # the hub: failing, or back
        self._stopping = asyncio.Event()  # set by finish() when the time is up: no attempt after this
        self._try_now = asyncio.Event()  # ends a wait between tries: the stop, or a player trying again
        self._tried_at = 0.0  # when the last try that failed ended (monotonic)

    # --- the hub's side (Persistence) ------------------------------------------------------------

    def table_opened(self, uid: int) -> None:
        self._put(Opened(uid))

    def journal(self, uid: int, seq: int, kind: str, data: dict[str, Any]) -> None:
        self._put(Entry(uid, seq, kind, data))

    def tournament_table(
        self, uid: int, tournament: str, round: str | None, blue: str, red: str, game_type: str
    ) -> None:
        self._put(TournamentTableSetUp(uid, tournament, round, blue, red, game_type))

    def archive(self, game: FinishedGame, done: ArchiveDone) -> None:
        self._put(Archive(game, done))

    def table_closed(self, uid: int) -> None:
        self._put(Closed(uid))

    def id_hmac(self, secret: str) -> str:
        if self._hmac_key is None:
            raise RuntimeError("load_sessions() reads the server's HMAC key first")
        return id_hmac(self._hmac_key, secret)

    def session_saved(self, session: SavedSession) -> None:
        self._put(session)

    def session_ended(self, id_hmac: str) -> None:
        self._put(SessionEnded(id_hmac))

    def ignored_added(self, account: int, key: str, nick: str) -> None:
        self._put(IgnoredAdded(account, key, nick))

    def ignored_removed(self, account: int, key: str) -> None:
        self._put(IgnoredRemoved(account, key))

    def guest_privates_set(self, account: int, refused: bool) -> None:
        self._put(GuestPrivatesSet(account, refused))

    def moderated(self, actor: str, action: str, target: str, detail: str) -> None:
        self._put(Moderated(actor, action, target, detail))

    def journal_dropped(self, uid: int) -> None:
        self._put(JournalDropped(uid))

    def journal_set_aside(self, uid: int, seq: int, reason: str) -> None:
        self._put(SetAside(uid, seq, reason))

    def journal_compacted(self, uid: int, upto: int, rows: list[tuple[int, str, dict[str, Any]]]) -> None:
        self._put(Compacted(uid, upto, rows))

    def sessions_seen(
        self, alive_at: float, quiet: dict[str, float | None], k: dict[str, int] | None = None
    ) -> None:
        self._put(SessionsSeen(alive_at, quiet, k or {}))

    def events_reserved(self, mark: int) -> None:
        self._put(EventsReserved(mark))

    def unstored_journal(self) -> restart.Journals:
        """The game tables' journal entries not yet stored, by table, in order."""
        found: restart.Journals = {}
        for job in (*self._writing, *self._queue):
            if isinstance(job, Entry) and job.uid > 0:
                found.setdefault(job.uid, []).append((job.seq, job.kind, job.data))
        return found

    def withdraw(self, uid: int, seqs: Collection[int]) -> None:
        """Never write these entries of table `uid`'s journal, nor the table's finished games not yet
        archived (the table was taken back to what is stored). Each keeps its place in the queue, so a
        reply that waits for the writes queued before it still waits for the same ones."""
        for jobs in (self._writing, self._queue):  # the batch tried again, and what waits behind it
            for index, job in enumerate(jobs):
                if (isinstance(job, Entry) and job.uid == uid and job.seq in seqs) or (
                    isinstance(job, Archive) and job.game.uid == uid
                ):
                    jobs[index] = WITHDRAWN

    def withdraw_table(self, uid: int) -> bool:
        """Never write anything of table `uid`: its opening and set-up, its journal, its games (a table
        closed as if never set up). True if it is done; False, and nothing withdrawn, if some of it is
        stored already or may be in a transaction now."""
        if any(_of_table(job, uid) for job in self._in_flight):
            return False
        jobs = (self._writing, self._queue)
        if not any(isinstance(job, Opened) and job.uid == uid for queued in jobs for job in queued):
            return False  # its opening is stored: the first of its writes
        for queued in jobs:
            for index, job in enumerate(queued):
                if _of_table(job, uid):
                    queued[index] = WITHDRAWN
        return True

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
                self._try_now.set()
                if not (await asyncio.wait({task}, timeout=LAST_ATTEMPT_SECONDS))[0]:
                    task.cancel()
                    await asyncio.wait({task})
        left = [job for job in self._writing + self._queue if job is not WITHDRAWN]
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

    def _put(self, job: Queued) -> None:
        self._queue.append(job)
        self.queued += 1
        self._seals.queueing()
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while self._queue:
            failed: Exception | None = None
            if self._thread is not None and self.storage_failure is None:
                self._in_flight = self._queue  # the thread takes batch after batch from the queue itself
                try:
                    failed = await loop.run_in_executor(self._thread, self._write_queued, loop)
                finally:
                    self._in_flight = []
                if self._stopping.is_set():
                    return
                if failed is None:
                    continue
            # the careful way, one batch at a time from the loop: storage failing, or not SQLite
            count = self._seals.batch(MAX_BATCH)
            if not count:
                await asyncio.sleep(0)  # the step that queued them ends first, and seals them
                continue
            batch, self._queue = self._queue[:count], self._queue[count:]
            self._seals.took(count)
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
            count = self._seals.batch(MAX_BATCH)
            if not count:  # the loop is in the middle of a step that queues them
                self._seals.wait()
                continue
            batch = self._queue[:count]
            started = time.perf_counter()
            try:
                done = self._in_thread(batch)
            except Exception as failure:
                return failure
            # Only this thread takes from the queue while it runs (the loop waits for it in _drain) and
            # the loop only appends: each of these list operations is atomic under the GIL.
            del self._queue[:count]
            self._seals.took(count)
            loop.call_soon_threadsafe(self._committed, len(batch), done, time.perf_counter() - started)
        return None

    def _in_thread(self, batch: list[Queued]) -> list[Done]:
        """One batch in one transaction, in the writer's thread (SQLite)."""
        assert self._sync_engine is not None
        with self._sync_engine.begin() as connection:
            return write_batch(connection, batch, self.member)

    def _committed(self, count: int, done: list[Done], seconds: float) -> None:
        """On the loop, in the order of the commits: the next `count` jobs are written."""
        if self.on_commit is not None:
            self.on_commit(count, seconds)
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

    async def _write_batch(self, batch: list[Queued], failed: Exception | None = None) -> list[Done]:
        """Write a batch in one transaction, trying again while storage is unavailable; if a job itself
        is bad, the others still go in, one by one. `failed`: how a first try (by the thread) failed."""
        delay = RETRY_FIRST
        while True:
            if failed is None and all(job is WITHDRAWN for job in batch):
                return []  # all taken back: nothing to write, and nothing learnt of storage
            if failed is None:
                self._in_flight = batch
                try:
                    done = await self._transaction(batch)
                except Exception as failure:
                    failed = failure
                else:
                    self._back()
                    return done
                finally:
                    self._in_flight = []
            reason = unavailable(failed)
            if reason is None:
                return await self._without_the_bad(batch, failed)
            self._failing(reason, failed)
            failed = None
            if self._stopping.is_set():
                raise _Stopped from None
            self._tried_at = time.monotonic()
            self._try_now.clear()  # a player who tried during the try that failed is no reason to try again
            try:
                async with asyncio.timeout(delay):
                    await self._try_now.wait()
            except TimeoutError:
                pass
            if self._stopping.is_set():
                raise _Stopped from None
            delay = min(2 * delay, RETRY_MOST)

    def retry_soon(self) -> None:
        """A player's action was refused for want of storage: try storage again now, unless a try ended
        less than RETRY_FIRST ago. While nobody asks, the tries come ever further apart (up to RETRY_MOST);
        while players try, storage is found back within about RETRY_FIRST of its return, and their next
        try goes in."""
        if self.storage_failure is not None and time.monotonic() - self._tried_at >= RETRY_FIRST:
            self._try_now.set()

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

    async def _without_the_bad(self, batch: list[Queued], failure: Exception) -> list[Done]:
        """A write the database refused for what it is: a batch is tried one by one, a single job is
        dropped (logged) so that it cannot hold up the queue for ever. The error is logged `described`,
        not with its trace: the database's message quotes the row it refused."""
        if len(batch) == 1:
            log.error(
                "a write was refused by the database and is dropped %s",
                Fields(write=describe(batch[0]), error=described(failure)),
            )
            return []
        log.error(
            "a batch of writes failed; writing them one by one %s",
            Fields(writes=len(batch), error=described(failure)),
        )
        done = []
        for index, job in enumerate(batch):
            done += await self._write_batch([job])
            batch[index] = WITHDRAWN  # written (or dropped): nothing of it is left to write or withdraw
        return done

    async def _transaction(self, batch: list[Queued]) -> list[Done]:
        if self._sync_engine is not None:
            return await asyncio.get_running_loop().run_in_executor(self._thread, self._in_thread, batch)
        async with self.engine.begin() as connection:
            return await connection.run_sync(write_batch, batch, self.member)

    # --- reading at start-up (server/store/restart.py) ------------------------------------------------

    async def load_journal(self) -> tuple[restart.Journals, int]:
        """The journals of the tables still open, and the first table number never used."""
        return await restart.load_journal(self.sessions, self.member)

    async def load_sessions(self) -> LiveSessions:
        """The sessions of the earlier run, registered players' accounts, the event numbers reserved and
        the last heartbeat; reads the server's HMAC key, or makes it at the first start."""
        live, self._hmac_key = await restart.load_sessions(self.sessions, self.member)
        return live

    async def take_orphans(self, alive: tuple[str, ...]) -> tuple[restart.Journals, bool]:
        """The open tables of members not `alive` become this member's, with their journals; and whether
        a member not alive still held its lock (restart.take_orphans)."""
        return await restart.take_orphans(self.sessions, self.member, alive)

    async def session_of(self, id_hmac: str) -> tuple[str, SavedSession, Account | None] | None:
        """A live session of any member of a cluster (restart.session_of)."""
        return await restart.session_of(self.sessions, id_hmac)


def _of_table(job: Queued, uid: int) -> bool:
    return (isinstance(job, TABLE_JOBS) and job.uid == uid) or (
        isinstance(job, Archive) and job.game.uid == uid
    )


def _time_out(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():  # the writer skips it then: it wakes only those still waiting
        waiter.set_exception(TimeoutError())
