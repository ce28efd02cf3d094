"""Storage that really stops taking writes, and comes back: for the tests of what the server does then.

- SQLite, locked: another connection holds the write lock (`BEGIN EXCLUSIVE`); every write waits the
  busy time-out and fails with "database is locked", while reads go on (WAL).
- SQLite, disk full: the database lives on a small tmpfs of its own, filled up by a file; deleting the
  file gives the space back. Mounting needs root: the tests that use it are skipped without it.
- PostgreSQL, gone: the server is reached through a proxy on a Unix socket of the test's own, which the
  test closes (every connection cut, new ones refused) and opens again, as a PostgreSQL that is stopped
  and started looks to its clients.
- PostgreSQL, read-only: `default_transaction_read_only` on the database and its sessions ended (what a
  failover to a standby looks like to the server); every write fails with SQLSTATE 25006 until it is
  writable again. A serving process's server lock (its own connection, named `kropki-server ...`) is left
  alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from tests.conftest import POSTGRES


class Breaker:
    reason: str  # what the server gives as the reason once it has tried to write
    # a reason it may give first instead, when breaking storage also ends the sessions the writer holds
    first_reason = ""

    def gives(self, reason: str | None) -> bool:
        """Whether `reason` is what the server says while storage is broken this way."""
        return reason is not None and (reason == self.reason or bool(re.fullmatch(self.first_reason, reason)))

    async def hold(self) -> None:
        """From now on writes wait instead of going in, until `break_storage` makes them fail: a window
        in which the server goes on taking actions whose writes are not stored yet."""

    async def break_storage(self) -> None: ...

    async def mend(self) -> None: ...


class SqliteLock(Breaker):
    reason = "database is locked"

    def __init__(self, url: str) -> None:
        database = make_url(url).database
        assert database is not None
        self.path = database
        self.holder: sqlite3.Connection | None = None

    async def hold(self) -> None:
        """The lock taken: writes wait for it as long as the busy time-out, then fail by themselves."""
        await self.break_storage()

    async def break_storage(self) -> None:
        if self.holder is not None:  # held already: the waiting writes fail at the busy time-out
            return
        self.holder = sqlite3.connect(self.path, isolation_level=None, timeout=10)
        self.holder.execute("BEGIN EXCLUSIVE")

    async def mend(self) -> None:
        assert self.holder is not None
        self.holder.execute("ROLLBACK")
        self.holder.close()
        self.holder = None


def ending_sessions(database: str | None, *, but_server_locks: bool) -> str:
    """SQL that ends the database's sessions but its own, as a restart or a failover of PostgreSQL does;
    `but_server_locks`: not a serving process's server lock (its own connection, named `kropki-server
    ...`), which a restart would end too."""
    spared = " AND application_name NOT LIKE 'kropki-server%'" if but_server_locks else ""
    return (
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        f"WHERE datname = '{database}' AND pid <> pg_backend_pid(){spared}"
    )


class PostgresReadOnly(Breaker):
    reason = "database is read-only (25006)"
    # the writer's pooled session was ended: asyncpg says "connection does not exist" (SQLSTATE 08003) or
    # SQLAlchemy finds the connection closed, whichever comes first; the retry then meets the read-only
    first_reason = r"connection lost|connection failed \(08\w{3}\)"

    def __init__(self, url: str) -> None:
        self.url = url
        self.database = make_url(url).database
        self.holder: AsyncEngine | None = None
        self.holding: AsyncConnection | None = None

    async def hold(self) -> None:
        """Another session locks the journal against writes (reads go on) and keeps it locked until
        `break_storage` ends that session with the others."""
        self.holder = create_async_engine(self.url)
        self.holding = await self.holder.connect()
        await self.holding.begin()
        await self.holding.execute(text("LOCK TABLE journal IN EXCLUSIVE MODE"))

    async def _run(self, *statements: str) -> None:
        engine = create_async_engine(POSTGRES or "", isolation_level="AUTOCOMMIT")
        async with engine.connect() as connection:
            for statement in statements:
                await connection.execute(text(statement))
        await engine.dispose()

    async def break_storage(self) -> None:
        await self._run(
            f"ALTER DATABASE {self.database} SET default_transaction_read_only = on",
            ending_sessions(self.database, but_server_locks=True),
        )
        await self._let_go()

    async def _let_go(self) -> None:
        """The connection `hold` locked with, once its session was ended with the others: closed here too,
        or the collector finds it checked out at the end of the run (an error under pytest)."""
        if self.holder is not None and self.holding is not None:
            with contextlib.suppress(Exception):
                await self.holding.close()
            await self.holder.dispose()
            self.holder = self.holding = None

    async def mend(self) -> None:
        """Sessions that began while the database was read-only keep that default, so they are ended too,
        with no new session let in meanwhile: one that began after the default changed and before the
        sessions were ended would have written (storage back) and been ended after that, a second
        failure after the mend (seen on a slow host, flush() raising StorageFailing)."""
        await self._run(
            f"ALTER DATABASE {self.database} ALLOW_CONNECTIONS false",
            f"ALTER DATABASE {self.database} SET default_transaction_read_only = off",
            ending_sessions(self.database, but_server_locks=True),
            f"ALTER DATABASE {self.database} ALLOW_CONNECTIONS true",
        )
        await self._let_go()  # held, and mended without a break between


class PostgresProxy(Breaker):
    """`url()` reaches PostgreSQL through this proxy; `break_storage` stops it, `mend` starts it again."""

    reason = "cannot reach the database (ENOENT)"
    SOCKET = ".s.PGSQL.5432"

    def __init__(self, folder: Path, url: str) -> None:
        parsed = make_url(url)
        self.target = Path(str(parsed.query["host"])) / self.SOCKET
        self.folder = folder
        self.url = parsed.set(query={"host": str(folder)}).render_as_string(hide_password=False)
        self.server: asyncio.Server | None = None
        self.pipes: set[asyncio.StreamWriter] = set()
        self.handlers: set[asyncio.Task[None]] = set()  # one a client connection, until both ends are shut
        self.flowing = asyncio.Event()  # cleared by `hold`: what the clients send waits here
        self.flowing.set()

    async def hold(self) -> None:
        """What the clients send waits in the proxy, their statements hang, until `break_storage`."""
        self.flowing.clear()

    async def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.server = await asyncio.start_unix_server(self._serve, path=str(self.folder / self.SOCKET))

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handler = asyncio.current_task()
        assert handler is not None
        self.handlers.add(handler)
        self.pipes.add(writer)  # cut by a break from now on, even while PostgreSQL is being reached
        upstream: asyncio.StreamWriter | None = None
        try:
            with contextlib.suppress(OSError):
                upstream_reader, upstream = await asyncio.open_unix_connection(str(self.target))
                if writer not in self.pipes:  # the proxy broke meanwhile: cut with the rest
                    return
                self.pipes.add(upstream)
                await asyncio.gather(
                    self._pipe(reader, upstream, True), self._pipe(upstream_reader, writer, False)
                )
        finally:
            for end in (writer, upstream):  # both shut already, unless this connection failed or was cut
                if end is not None:
                    end.transport.abort()
                    self.pipes.discard(end)
            self.handlers.discard(handler)

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, held: bool) -> None:
        with contextlib.suppress(OSError):
            while data := await source.read(65536):
                if held:
                    await self.flowing.wait()
                sink.write(data)
                await sink.drain()
        sink.close()

    async def break_storage(self) -> None:
        assert self.server is not None
        self.server.close()
        for pipe in list(self.pipes):
            pipe.transport.abort()
        self.pipes.clear()
        self.flowing.set()  # what was held meets the connections cut
        await self.server.wait_closed()
        self.server = None
        (self.folder / self.SOCKET).unlink(missing_ok=True)

    async def mend(self) -> None:
        await self.start()

    async def close(self) -> None:
        """The proxy gone for good, once its clients are (whatever state the test left it in), with
        every connection it took shut: one left to the end of the event loop failed whatever test ran
        when the collector found it (an unclosed socket's ResourceWarning)."""
        if self.server is not None:
            await self.break_storage()
        if self.handlers:
            await asyncio.wait(self.handlers, timeout=5)


async def until(condition: Callable[[], bool], seconds: float = 15.0) -> None:
    """Until `condition` holds (the writer retries, a breaker takes effect), at most `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def breaker_for(url: str) -> Breaker:
    return PostgresReadOnly(url) if url.startswith("postgresql") else SqliteLock(url)


@contextmanager
def small_disk(folder: Path, size: str = "4m") -> Iterator[Path]:
    """A tmpfs of `size` mounted on `folder` (skips the test where mounting is not permitted)."""
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder: Path) -> Path:
    """Take every free byte of the file system under `folder`; delete the returned file to give it back."""
    filler = folder / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    block = b"\0" * 4096
    try:
        while True:
            os.write(descriptor, block)
    except OSError:
        pass
    finally:
        os.close(descriptor)
    return filler
