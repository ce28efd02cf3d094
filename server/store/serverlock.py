"""One server per database: the lock a serving process holds from before its first write to its exit.

The members of a cluster (docs/cluster.md) share one PostgreSQL database: each holds the same lock
shared, which keeps out a server running alone, and a server alone holds it exclusively, which keeps
out members.

Two servers on one database would hand out the same table numbers and replay each other's journal, so
`serve` takes this lock before it writes anything, and a second one is refused with a message naming
the holder. The lock dies with the process, even a SIGKILLed one, so a crash never blocks the next
start: beside a SQLite file it is an OS lock on `<file>.lock` (the kernel drops it when the process's
descriptor closes); on PostgreSQL a session advisory lock on a connection of its own (dropped when the
connection ends). The admin commands (`migrate`, `user`, `tournament-key`) do not take it.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import re
import socket
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from server.config import sqlite_file
from server.store.outage import unavailable

log = logging.getLogger(__name__)

ADVISORY_KEY = int.from_bytes(b"kropkisv", "big")  # the same in every kropki-server; a positive bigint
MEMBER_LOCK_CLASS = int.from_bytes(b"kmbr", "big")  # with a member's number: that member's own lock
APPLICATION_NAME = re.compile(r"kropki-server pid (\d+) port (\d+) host (.*)")
APPLICATION_NAME_BYTES = 63  # PostgreSQL keeps no more of an application_name
WATCH_EVERY = 2.0  # seconds between two looks at the connection that holds the locks
ANSWER_WITHIN = 5.0  # seconds a look, or an attempt to take the locks back, may take
RETAKE_EVERY = 1.0  # seconds between two attempts to take the locks back


class ServerLockError(RuntimeError):
    """Another server holds the database, or its lock cannot be taken; the message says which."""


@dataclass(frozen=True)
class Holder:
    """Who serves a database: what an operator needs to find the other process."""

    pid: int
    host: str
    port: int
    since: datetime

    @classmethod
    def this_process(cls, port: int) -> Holder:
        return cls(os.getpid(), socket.gethostname(), port, datetime.now(UTC).replace(microsecond=0))

    def __str__(self) -> str:
        return (
            f"pid {self.pid} on host {self.host}, port {self.port}, since {self.since:%Y-%m-%d %H:%M:%S} UTC"
        )


def _refusal(holder: str, lock: str) -> ServerLockError:
    return ServerLockError(f"another kropki-server is serving this database: {holder} (lock: {lock})")


class FileLock:
    """An exclusive `flock` on a file beside the SQLite database, whose text names the holder."""

    def __init__(self, path: Path, descriptor: int) -> None:
        self.path = path
        self.descriptor = descriptor

    @classmethod
    def take(cls, path: Path, holder: Holder) -> FileLock:
        try:
            descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise ServerLockError(f"cannot open the server lock {path}: {exc.strerror}") from None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            named = os.pread(descriptor, 4096, 0).decode(errors="replace").strip()
            os.close(descriptor)
            raise _refusal(named or "holder unknown (it is starting or stopping)", str(path)) from None
        except OSError as exc:
            os.close(descriptor)
            raise ServerLockError(f"cannot lock the server lock {path}: {exc.strerror}") from None
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{holder}\n".encode(), 0)
        return cls(path, descriptor)

    async def release(self) -> None:
        """Empty the file (the holder is gone) and close it, which drops the lock. The file stays: a
        server waiting to open it must find the same file the next holder locks."""
        os.ftruncate(self.descriptor, 0)
        os.close(self.descriptor)


class AdvisoryLock:
    """PostgreSQL session advisory locks on a connection kept open for the server's life: the
    database's lock, and a member's own lock; the connection's application_name names the holder.

    They live only as long as that connection: a PostgreSQL restart, a backend ended by an
    administrator or a network cut drops them without a word to the process. So `watch` looks at the
    connection every WATCH_EVERY seconds and, when it is lost, takes the same locks again on a new
    one until PostgreSQL answers (docs/cluster.md, "Take-over"; docs/operations.md, "One server per
    database")."""

    def __init__(self, engine: AsyncEngine, holder: Holder, shared: bool) -> None:
        self.engine = engine
        self.holder = holder
        self.shared = shared
        self.connection: AsyncConnection | None = None
        self.backend: Backend | None = None  # the connection's own backend in PostgreSQL
        self.member: tuple[int, str] | None = None  # number and name, once hold_member holds its lock
        self.lost_since: float | None = None  # wall-clock time the locks were found lost; None while held
        self.lost_because = ""  # while lost: why they are not held again yet
        self.taken_by: str | None = None  # while lost: who holds a lock this process cannot take back
        self.losses = 0
        self._lost_at = 0.0  # the event loop's time of the loss, for how long it lasted
        self._abandoned: Backend | None = None  # the backend of the connection found lost
        self._told: str | None = None  # the last holder logged, so that each is logged once
        self._watcher: asyncio.Task[None] | None = None

    @classmethod
    async def take(cls, url: URL, holder: Holder, shared: bool = False) -> AdvisoryLock:
        # Autocommit: a transaction left open for days would hold back vacuum.
        engine = create_async_engine(url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
        lock = cls(engine, holder, shared)
        try:
            connection = await lock._connect()
            if not await lock._take_database_lock():
                raise _postgres_refusal(await _holders(connection, DATABASE_LOCK), url)
        except BaseException:
            await lock.release()
            raise
        return lock

    async def hold_member(self, number: int, name: str, wait: float) -> None:
        """A member of a cluster also holds its own lock, (MEMBER_LOCK_CLASS, number), for its life:
        another member takes its tables over only while nobody holds it (restart.take_orphans), so
        never from a member that is alive, or restarting and reading its tables back. A namesake that
        died leaves it as its connection closes; one that still holds it after `wait` seconds is a
        live process with the same name, and this start is refused."""
        deadline = asyncio.get_running_loop().time() + wait
        while not await self._take_member_lock(number):
            if asyncio.get_running_loop().time() > deadline:
                raise ServerLockError(
                    f"member name {name!r} is in use: another live kropki-server holds its lock "
                    "on this database; stop it or give this member another name"
                )
            await asyncio.sleep(0.5)
        self.member = (number, name)

    def risk(self) -> str:
        """What may happen while the locks are lost."""
        if self.member is None:
            return "a second server could start on this database"
        return (
            "other members may take this member's tables and sessions over if it also seems dead in Redis, "
            "and a server alone could start on the database"
        )

    def watch(self) -> None:
        """From now until `release`, notice the connection's loss and take the locks back."""
        self._watcher = asyncio.create_task(self._keep(), name="server lock")

    async def release(self) -> None:
        """Closing the connection ends the session, which drops the locks."""
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
            self._watcher = None
        if self.connection is not None:
            try:
                async with asyncio.timeout(ANSWER_WITHIN):
                    await self.connection.close()
            except Exception:  # broken or hung: its session ends as the connection is dropped
                await _let_go(self.connection)
            self.connection = None
        await self.engine.dispose()

    async def _connect(self) -> AsyncConnection:
        connection = await self.engine.connect()
        try:
            name = f"kropki-server pid {self.holder.pid} port {self.holder.port} host {self.holder.host}"
            name = name.encode("ascii", "replace")[:APPLICATION_NAME_BYTES].decode()
            named = text("SELECT set_config('application_name', :name, false)")
            await connection.execute(named, {"name": name})
            found = await connection.execute(
                text("SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()")
            )
            self.backend = Backend(*found.one())
        except BaseException:
            await _let_go(connection)
            raise
        self.connection = connection
        return connection

    async def _take_database_lock(self) -> bool:
        assert self.connection is not None
        take = "pg_try_advisory_lock_shared" if self.shared else "pg_try_advisory_lock"
        return bool(await self.connection.scalar(text(f"SELECT {take}(:key)"), {"key": ADVISORY_KEY}))

    async def _take_member_lock(self, number: int) -> bool:
        assert self.connection is not None
        take = text("SELECT pg_try_advisory_lock(:kind, :number)")
        return bool(await self.connection.scalar(take, {"kind": MEMBER_LOCK_CLASS, "number": number}))

    async def _keep(self) -> None:
        while True:
            await asyncio.sleep(WATCH_EVERY)
            try:
                if self.lost_since is None:
                    lost = await self._look()
                    if lost is None:
                        continue
                    await self._lose(lost)
                while not await self._take_back():
                    await asyncio.sleep(RETAKE_EVERY)
                self._held_again()
            except Exception:  # a bug here must not end the watch: the next round goes on from here
                log.exception("server lock not watched")

    async def _look(self) -> str | None:
        """None while the connection that holds the locks answers; else why it does not."""
        assert self.connection is not None
        try:
            async with asyncio.timeout(ANSWER_WITHIN):
                await self.connection.scalar(text("SELECT 1"))
        except Exception as error:
            return _why(error)
        return None

    async def _lose(self, why: str) -> None:
        self.lost_since, self._lost_at = time.time(), asyncio.get_running_loop().time()
        self.lost_because, self.losses = why, self.losses + 1
        self._abandoned, self.backend = self.backend, None
        connection, self.connection = self.connection, None
        if connection is not None:
            await _let_go(connection)
        log.warning("database lock lost (%s): until it is held again %s; taking it back", why, self.risk())

    async def _take_back(self) -> bool:
        """One attempt to hold every lock again on a new connection; whether it did."""
        try:
            async with asyncio.timeout(ANSWER_WITHIN):
                taken_by = await self._take_again()
        except Exception as error:
            self.lost_because = error.args[0] if isinstance(error, NotYet) else _why(error)
            self.taken_by = None
            if self.connection is not None:
                await _let_go(self.connection)
                self.connection = None
            return False
        if taken_by is None:
            return True
        if taken_by != self._told:
            self._told = taken_by
            log.error(
                "database lock not taken back: %s; this server keeps serving its players, /readyz "
                "answers 503, and it takes the lock back as soon as it is free",
                taken_by,
            )
        self.taken_by = self.lost_because = taken_by
        return False

    async def _take_again(self) -> str | None:
        """None once every lock is held; else who holds one. NotYet when only this process's lost
        connection still holds it. A connection holding the database's lock is kept while a member's
        own lock is refused: a server alone stays out meanwhile."""
        if self.connection is None:
            connection = await self._connect()
            if not await self._take_database_lock():
                holder = await self._other_holder(DATABASE_LOCK)
                await connection.close()
                self.connection = self.backend = None
                if self.shared:
                    return (
                        f"a kropki-server running alone holds this cluster's database: {holder}; it "
                        "started while this member had lost its lock, and now writes to the database "
                        "the members share: stop it"
                    )
                return (
                    f"another kropki-server is serving this database: {holder}; it started while this "
                    "server had lost its lock, and both now write to one database: stop the one started "
                    "later"
                )
        if self.member is not None and not await self._take_member_lock(self.member[0]):
            number, name = self.member
            holder = await self._other_holder((MEMBER_LOCK_CLASS, number, 2))
            return (
                f"member {name!r}: its own lock is held by {holder}: another live process serves under "
                "this member's name (stop one of the two), or another member is taking this member's "
                "tables or sessions over because it also seemed dead in Redis (restart this member to "
                "read back what it still owns)"
            )
        return None

    async def _other_holder(self, lock: LockKey) -> str:
        """Who holds `lock`: another process, named for the operator. A holder that is this process's
        lost connection, which PostgreSQL has not seen closed (a network cut), is asked to end."""
        assert self.connection is not None
        holders = await _holders(self.connection, lock)
        others = [row for row in holders if Backend(row.pid, row.backend_start) != self._abandoned]
        if others:
            other = others[0]
            return f"{_named(other.application_name, other.backend_start)} (backend pid {other.pid})"
        if holders:
            await self.connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": holders[0].pid})
            raise NotYet(
                f"still held by this process's lost connection (backend pid {holders[0].pid}), which "
                "PostgreSQL had not seen closed: asked it to end"
            )
        raise NotYet("its holder has just let it go")

    def _held_again(self) -> None:
        lasted = asyncio.get_running_loop().time() - self._lost_at
        self.lost_since, self.taken_by, self.lost_because = None, None, ""
        self._abandoned = self._told = None
        if self.member is None:
            meaning = "a second server on this database is refused again"
        else:
            meaning = "other members cannot take this member's tables and sessions over while it lives"
        log.warning("database lock held again %.1f s after it was found lost: %s", lasted, meaning)


@dataclass(frozen=True)
class Backend:
    """A PostgreSQL session: its pid is reused after it ends, the pair is not."""

    pid: int
    started: datetime


class NotYet(Exception):
    """The locks are not held again yet, for a reason that is no other process's doing."""


LockKey = tuple[int, int, int]  # an advisory lock as pg_locks shows it: classid, objid, objsubid
# A bigint key is split in two halves (objsubid 1); a member's lock is two integers (objsubid 2).
DATABASE_LOCK: LockKey = (ADVISORY_KEY >> 32, ADVISORY_KEY & 0xFFFF_FFFF, 1)


async def _holders(connection: AsyncConnection, lock: LockKey) -> list[Any]:
    """The other backends holding `lock`, with their application_name and when they connected."""
    found = await connection.execute(
        text(
            "SELECT l.pid, a.application_name, a.backend_start, l.mode FROM pg_locks AS l "
            "LEFT JOIN pg_stat_activity AS a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.granted AND l.pid <> pg_backend_pid() "
            "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND l.classid::bigint = :high AND l.objid::bigint = :low AND l.objsubid = :form "
            "ORDER BY a.backend_start"
        ),
        dict(zip(("high", "low", "form"), lock, strict=True)),
    )
    return list(found.all())


def _named(application_name: str | None, connected: datetime | None) -> str:
    """The holder as an operator finds it: the process named in its application_name, when it is a
    kropki-server's."""
    fields = APPLICATION_NAME.fullmatch(application_name or "")
    if fields is None or connected is None:
        return f"application_name {application_name!r}"
    pid, port, host = fields.groups()
    return str(Holder(int(pid), host, int(port), connected.astimezone(UTC)))


def _postgres_refusal(holders: list[Any], url: URL) -> ServerLockError:
    """The refusal of a start, naming the holder from the lock's backend."""
    lock = f"PostgreSQL advisory lock {ADVISORY_KEY} on database {url.database}"
    if not holders:
        return _refusal("holder unknown (it is stopping)", lock)
    backend, application_name, connected, mode = holders[0]
    lock += f", held by backend pid {backend}"
    if mode == "ShareLock":
        lock += ", shared by the members of a cluster"
    return _refusal(_named(application_name, connected), lock)


async def _let_go(connection: AsyncConnection) -> None:
    """Drop a connection that may be broken or hung, without waiting on the network."""
    await connection.invalidate()
    await connection.close()


def _why(error: Exception) -> str:
    return unavailable(error) or type(error).__name__


ServerLock = FileLock | AdvisoryLock


async def take_server_lock(url: URL, holder: Holder, *, shared: bool = False) -> ServerLock | None:
    """Take the database's server lock for `holder`, or raise ServerLockError naming the one who has it.

    `shared`: for a member of a cluster, which shares the database with the other members and with no
    server running alone (PostgreSQL only). An in-memory SQLite database belongs to its process and
    needs none; a `file:` URI is left unlocked too, since SQLite, not this code, resolves its path."""
    if url.get_backend_name() == "postgresql":
        return await AdvisoryLock.take(url, holder, shared)
    if shared:
        raise ServerLockError(
            "the members of a cluster share a PostgreSQL database; SQLite serves one server alone "
            "(use --db postgresql+asyncpg://... or leave out --redis-url)"
        )
    if url.get_backend_name() != "sqlite":
        raise ServerLockError(
            f"kropki-server serves SQLite and PostgreSQL databases, not {url.get_backend_name()}"
        )
    database = sqlite_file(url.render_as_string(hide_password=False))
    return None if database is None else FileLock.take(database.with_name(database.name + ".lock"), holder)
