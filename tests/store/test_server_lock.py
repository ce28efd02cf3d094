"""One server per database: a second server is refused before it writes anything, with a message that
names the first; the lock goes with the first server when it closes. On SQLite and PostgreSQL alike
(a killed server's lock: tests/test_restart.py).

On PostgreSQL the lock lives as long as its connection: when that connection is lost (ended with
`pg_terminate_backend`, as a PostgreSQL restart ends it; or hung), the server takes the lock back by
itself, and says so; if another process took it meanwhile, it says who, and /readyz answers 503."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import signal
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from pytest_aiohttp import AiohttpClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from server.app import create_app
from server.config import Settings, sqlite_file
from server.store.database import open_engine
from server.store.idhash import MIN_COST
from server.store.serverlock import (
    ADVISORY_KEY,
    ANSWER_WITHIN,
    MEMBER_LOCK_CLASS,
    WATCH_EVERY,
    AdvisoryLock,
    Holder,
    ServerLockError,
)
from server.store.store import Store
from tests.conftest import POSTGRES, served
from tests.store.breakers import PostgresProxy, until

FIRST = Holder(4242, "first.example", 8080, datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC))
LIVE_TABLES = ("journal", "server_state", "sessions", "tables")
# Noticed within a look, taken back at the first attempt: with room for a slow machine.
TAKEN_BACK_WITHIN = WATCH_EVERY + 3.0
postgres_only = pytest.mark.skipif(
    not POSTGRES, reason="PostgreSQL: set KROPKI_TEST_DB (scripts/with-postgres)"
)


async def live_rows(url: str) -> dict[str, list[Any]]:
    """Every row of the tables a starting server writes to, in a stable order."""
    engine = open_engine(url)
    try:
        async with engine.connect() as connection:
            return {
                table: sorted((await connection.execute(text(f"SELECT * FROM {table}"))).all(), key=repr)
                for table in LIVE_TABLES
            }
    finally:
        await engine.dispose()


def lock_file(url: str) -> Path | None:
    database = sqlite_file(url)
    return None if database is None else database.with_name(database.name + ".lock")


async def test_a_second_server_is_refused_naming_the_first_and_writes_nothing(settings: Settings) -> None:
    url = settings.db_url
    first = await Store.open(url, serving=FIRST, id_hash_cost=MIN_COST)
    try:
        before = await live_rows(url)
        # Started, this server would make the sessions' key, trim the lobby's chat, and at its stop
        # write "restarting" lines into the journal the first server replays.
        second = TestServer(create_app(dataclasses.replace(settings, port=8081, migrate=True)))
        with pytest.raises(ServerLockError) as refused:
            await second.start_server()
        await second.close()
        assert await live_rows(url) == before
        lock = lock_file(url)
        if lock is not None:
            assert lock.read_text() == f"{FIRST}\n", "the refused server leaves the holder's name alone"
    finally:
        await first.close()

    message = str(refused.value)
    assert message.startswith(
        "another kropki-server is serving this database: pid 4242 on host first.example, port 8080, since "
    )
    if lock is not None:
        assert message.endswith(f"since 2030-01-02 03:04:05 UTC (lock: {lock})")
    else:  # PostgreSQL: the lock's connection was made when the lock was taken
        assert "(lock: PostgreSQL advisory lock " in message and ", held by backend pid " in message
        assert f" since {datetime.now(UTC):%Y-%m-%d} " in message


async def test_the_lock_goes_with_the_server_that_closes(settings: Settings) -> None:
    first = await Store.open(settings.db_url, serving=FIRST, id_hash_cost=settings.id_hash_cost)
    await first.close()
    lock = lock_file(settings.db_url)
    if lock is not None:
        assert lock.read_text() == "", "no holder named once it has gone"

    second = TestServer(create_app(settings))
    await second.start_server()
    try:
        if lock is not None:
            assert lock.read_text().startswith("pid ")
        with pytest.raises(ServerLockError, match=f"port {settings.port}, since "):
            await Store.open(settings.db_url, serving=FIRST, id_hash_cost=settings.id_hash_cost)
    finally:
        await second.close()
    third = await Store.open(settings.db_url, serving=FIRST, id_hash_cost=settings.id_hash_cost)
    await third.close()


async def test_admin_commands_open_the_store_beside_a_running_server(settings: Settings) -> None:
    """`user` and `tournament-key` are short and the server keeps working: they take no server lock."""
    server = await Store.open(settings.db_url, serving=FIRST, id_hash_cost=settings.id_hash_cost)
    try:
        admin = await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost)
        try:
            await admin.tournaments.add_key("autumn", None, False)
        finally:
            await admin.close()
        assert [key.name for key in await server.tournaments.keys()] == ["autumn"]
    finally:
        await server.close()


def application_name(holder: Holder) -> str:
    """The name a serving process gives its lock's connection (server/store/serverlock.py)."""
    return f"kropki-server pid {holder.pid} port {holder.port} host {holder.host}"[:63]


async def sql(url: str, statement: str, **values: object) -> list[Any]:
    """One statement on a connection of the test's own: its rows."""
    engine = create_async_engine(url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as connection:
            result = await connection.execute(text(statement), values)
            return list(result.all()) if result.returns_rows else []
    finally:
        await engine.dispose()


@asynccontextmanager
async def lock_taken_by(
    url: str, backend: int, holder: Holder, lock: str, **params: int
) -> AsyncIterator[None]:
    """Another process, named as `holder`, ends the lock connection `backend` and takes `lock` (an SQL
    call) in the same moment, and holds it until the block ends."""
    intruder = create_async_engine(url, isolation_level="AUTOCOMMIT")
    try:
        async with intruder.connect() as other:
            await other.execute(text("SELECT set_config('application_name', :name, false)"),
                                {"name": application_name(holder)})  # fmt: skip
            ended_and_taken = await other.execute(
                text(f"SELECT pg_terminate_backend(:pid, 5000), {lock}"), {"pid": backend, **params}
            )
            assert ended_and_taken.one() == (True, True)
            yield
    finally:
        await intruder.dispose()


async def unready(client: TestClient | TestServer) -> dict[str, Any]:
    """/readyz's answer once it says 503 (within TAKEN_BACK_WITHIN)."""
    deadline = time.monotonic() + TAKEN_BACK_WITHIN
    while (response := await client.get("/readyz")).status == 200:
        assert time.monotonic() < deadline, await response.json()
        await asyncio.sleep(0.1)
    answer = await response.json()
    assert response.status == 503 and answer["status"] == "unready"
    return answer


async def lock_connection(url: str, holder: Holder) -> tuple[int, set[str]]:
    """The backend of `holder`'s lock connection, and the advisory locks it holds: `database` (the
    database's lock) and `member N` (a member's own), each with its mode."""
    rows = await sql(
        url,
        "SELECT a.pid, l.classid::bigint, l.objid::bigint, l.objsubid, l.mode FROM pg_stat_activity AS a "
        "LEFT JOIN pg_locks AS l ON l.pid = a.pid AND l.locktype = 'advisory' AND l.granted "
        "WHERE a.application_name = :name AND a.datname = current_database()",
        name=application_name(holder),
    )
    assert len({row[0] for row in rows}) <= 1, rows
    if not rows:
        return 0, set()
    locks = set()
    for _, high, low, form, mode in rows:
        if form == 1 and (high << 32) + low == ADVISORY_KEY:
            locks.add(f"database {mode}")
        elif form == 2 and high == MEMBER_LOCK_CLASS:
            locks.add(f"member {low} {mode}")
    return rows[0][0], locks


async def end_backend(url: str, backend: int) -> None:
    """As a PostgreSQL restart or an administrator ends it; returns once it is gone."""
    assert await sql(url, "SELECT pg_terminate_backend(:pid, 5000)", pid=backend) == [(True,)]


async def held_again(url: str, holder: Holder, before: int, locks: set[str]) -> float:
    """Seconds until a new connection of `holder` holds `locks` again (the test fails past
    TAKEN_BACK_WITHIN: the lock never came back)."""
    started = time.monotonic()
    while True:
        backend, held = await lock_connection(url, holder)
        if backend not in (0, before) and held == locks:
            return time.monotonic() - started
        assert time.monotonic() - started < TAKEN_BACK_WITHIN, f"the lock never came back: {held}"
        await asyncio.sleep(0.05)


def logged(caplog: pytest.LogCaptureFixture, words: str) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.getMessage().startswith(words)]


@postgres_only
async def test_a_lock_whose_connection_is_ended_is_taken_back_and_keeps_a_second_server_out(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    url = settings.db_url
    store = await Store.open(url, serving=FIRST, id_hash_cost=MIN_COST)
    try:
        backend, locks = await lock_connection(url, FIRST)
        assert locks == {"database ExclusiveLock"}
        await end_backend(url, backend)
        await held_again(url, FIRST, backend, locks)
        with pytest.raises(ServerLockError, match="pid 4242 on host first.example"):
            await Store.open(url, serving=Holder.this_process(8081), id_hash_cost=MIN_COST)
    finally:
        await store.close()
    [lost] = logged(caplog, "database lock lost (connection lost)")
    assert (
        lost.levelno == logging.WARNING
        and "a second server could start on this database" in lost.getMessage()
    )
    [back] = logged(caplog, "database lock held again ")
    assert back.getMessage().endswith(
        "s after it was found lost: a second server on this database is refused again"
    )
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert await lock_connection(url, FIRST) == (0, set()), "closed with the store"


@postgres_only
async def test_a_lock_another_server_took_meanwhile_is_an_error_and_readyz_says_so_until_it_is_back(
    aiohttp_client: AiohttpClient, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    url = settings.db_url
    client = await served(aiohttp_client, settings)
    this = Holder.this_process(settings.port)
    backend, locks = await lock_connection(url, this)
    # A second server alone, started in the moment the first had lost its lock.
    async with lock_taken_by(url, backend, FIRST, "pg_try_advisory_lock(:key)", key=ADVISORY_KEY):
        answer = await unready(client)
        assert answer["reason"].startswith(
            "database lock held by another process: another kropki-server is serving this database: "
            "pid 4242 on host first.example, port 8080, since "
        )
        assert "both now write to one database: stop the one started later" in answer["reason"]
        page = await (await client.get("/metrics")).text()
        assert "kropki_database_lock_held 0.0" in page and "kropki_database_lock_taken 1.0" in page
        await asyncio.sleep(2.5)  # attempts every second: still one line
        [error] = logged(caplog, "database lock not taken back: another kropki-server is serving")
        assert error.levelno == logging.ERROR and "/readyz answers 503" in error.getMessage()
    await held_again(url, this, backend, locks)
    answer = await (await client.get("/readyz")).json()
    assert answer["status"] == "ready" and "reason" not in answer
    page = await (await client.get("/metrics")).text()
    assert "kropki_database_lock_held 1.0" in page and "kropki_database_lock_taken 0.0" in page
    assert "kropki_database_lock_losses_total 1.0" in page
    assert len(logged(caplog, "database lock held again ")) == 1


@postgres_only
async def test_a_lock_connection_that_hangs_is_let_go_and_its_backend_ended(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """A backend that stops answering (a network cut looks the same to the server) still holds the
    lock in PostgreSQL: it is this server's own, so it is not reported as another process's."""
    url = settings.db_url
    store = await Store.open(url, serving=FIRST, id_hash_cost=MIN_COST)
    lock = store.server_lock
    assert isinstance(lock, AdvisoryLock)
    try:
        backend, locks = await lock_connection(url, FIRST)
        try:
            os.kill(backend, signal.SIGSTOP)
        except OSError as error:  # PostgreSQL on another machine, or another user's
            pytest.skip(f"cannot stop PostgreSQL's backend here: {error}")
        try:
            deadline = time.monotonic() + WATCH_EVERY + ANSWER_WITHIN + 3.0
            while "lost connection" not in lock.lost_because:
                assert time.monotonic() < deadline, lock.lost_because
                await asyncio.sleep(0.1)
            assert lock.lost_because == (
                f"still held by this process's lost connection (backend pid {backend}), which PostgreSQL "
                "had not seen closed: asked it to end"
            )
            assert lock.lost_since is not None and lock.taken_by is None
            assert logged(caplog, "database lock lost (timed out)")
        finally:
            os.kill(backend, signal.SIGCONT)
        await held_again(url, FIRST, backend, locks)
        assert not await sql(url, "SELECT 1 FROM pg_stat_activity WHERE pid = :pid", pid=backend)
        assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
    finally:
        await store.close()


@postgres_only
async def test_a_lock_comes_back_when_postgresql_is_stopped_and_started(
    tmp_path: Path, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """PostgreSQL reached through a proxy that is stopped and started, as a PostgreSQL restart looks to
    its clients (the tests' own PostgreSQL server is shared: it is not restarted)."""
    proxy = PostgresProxy(tmp_path / "pg", settings.db_url)
    await proxy.start()
    store = await Store.open(proxy.url, serving=FIRST, id_hash_cost=MIN_COST)
    lock = store.server_lock
    assert isinstance(lock, AdvisoryLock)
    try:
        backend, locks = await lock_connection(settings.db_url, FIRST)
        await proxy.break_storage()
        await until(lambda: lock.lost_since is not None, TAKEN_BACK_WITHIN)
        await asyncio.sleep(1.5)  # an attempt or two while PostgreSQL is away
        assert lock.lost_because == "cannot reach the database (ENOENT)" and lock.taken_by is None
        await proxy.mend()
        await held_again(settings.db_url, FIRST, backend, locks)
        assert len(logged(caplog, "database lock lost (connection lost)")) == 1
        assert len(logged(caplog, "database lock held again ")) == 1

        await proxy.break_storage()  # and the server stops while it is away
        await until(lambda: lock.lost_since is not None, TAKEN_BACK_WITHIN)
        started = time.monotonic()
    finally:
        await store.close()
        await proxy.close()
    assert time.monotonic() - started < 1.0
