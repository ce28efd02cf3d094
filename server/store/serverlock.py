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
import fcntl
import os
import re
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from server.config import sqlite_file

ADVISORY_KEY = int.from_bytes(b"kropkisv", "big")  # the same in every kropki-server; a positive bigint
MEMBER_LOCK_CLASS = int.from_bytes(b"kmbr", "big")  # with a member's number: that member's own lock
APPLICATION_NAME = re.compile(r"kropki-server pid (\d+) port (\d+) host (.*)")
APPLICATION_NAME_BYTES = 63  # PostgreSQL keeps no more of an application_name


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
    """A PostgreSQL session advisory lock on a connection kept open for the server's life; the
    connection's application_name names the holder."""

    def __init__(self, engine: AsyncEngine, connection: AsyncConnection) -> None:
        self.engine = engine
        self.connection = connection

    @classmethod
    async def take(cls, url: URL, holder: Holder, shared: bool = False) -> AdvisoryLock:
        # Autocommit: a transaction left open for days would hold back vacuum.
        engine = create_async_engine(url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
        try:
            connection = await engine.connect()
            try:
                name = f"kropki-server pid {holder.pid} port {holder.port} host {holder.host}"
                name = name.encode("ascii", "replace")[:APPLICATION_NAME_BYTES].decode()
                await connection.execute(
                    text("SELECT set_config('application_name', :name, false)"), {"name": name}
                )
                take = "pg_try_advisory_lock_shared" if shared else "pg_try_advisory_lock"
                locked = await connection.scalar(text(f"SELECT {take}(:key)"), {"key": ADVISORY_KEY})
                if not locked:
                    raise await _postgres_refusal(connection, url)
            except BaseException:
                await connection.close()
                raise
        except BaseException:
            await engine.dispose()
            raise
        return cls(engine, connection)

    async def hold_member(self, number: int, name: str, wait: float) -> None:
        """A member of a cluster also holds its own lock, (MEMBER_LOCK_CLASS, number), for its life:
        another member takes its tables over only while nobody holds it (writer.take_orphans), so
        never from a member that is alive, or restarting and reading its tables back. A namesake that
        died leaves it as its connection closes; one that still holds it after `wait` seconds is a
        live process with the same name, and this start is refused."""
        deadline = asyncio.get_running_loop().time() + wait
        take = text("SELECT pg_try_advisory_lock(:kind, :number)")
        while not await self.connection.scalar(take, {"kind": MEMBER_LOCK_CLASS, "number": number}):
            if asyncio.get_running_loop().time() > deadline:
                raise ServerLockError(
                    f"member name {name!r} is in use: another live kropki-server holds its lock "
                    "on this database; stop it or give this member another name"
                )
            await asyncio.sleep(0.5)

    async def release(self) -> None:
        """Closing the connection ends the session, which drops the lock."""
        await self.connection.close()
        await self.engine.dispose()


async def _postgres_refusal(connection: AsyncConnection, url: URL) -> ServerLockError:
    """Name the holder from the lock's backend: its application_name and when it connected."""
    found = await connection.execute(
        text(
            "SELECT l.pid, a.application_name, a.backend_start, l.mode FROM pg_locks AS l "
            "LEFT JOIN pg_stat_activity AS a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
            "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND l.classid::bigint = :high AND l.objid::bigint = :low"
        ),
        {"high": ADVISORY_KEY >> 32, "low": ADVISORY_KEY & 0xFFFF_FFFF},
    )
    row = found.first()
    lock = f"PostgreSQL advisory lock {ADVISORY_KEY} on database {url.database}"
    if row is None:
        return _refusal("holder unknown (it is stopping)", lock)
    backend, application_name, connected, mode = row
    lock += f", held by backend pid {backend}"
    if mode == "ShareLock":
        lock += ", shared by the members of a cluster"
    fields = APPLICATION_NAME.fullmatch(application_name or "")
    if fields is None or connected is None:
        return _refusal(f"application_name {application_name!r}", lock)
    pid, port, host = fields.groups()
    return _refusal(str(Holder(int(pid), host, int(port), connected.astimezone(UTC))), lock)


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
