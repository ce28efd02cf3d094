"""One server per database: a second server is refused before it writes anything, with a message that
names the first; the lock goes with the first server when it closes. On SQLite and PostgreSQL alike
(a killed server's lock: tests/test_restart.py)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestServer
from sqlalchemy import text

from server.app import create_app
from server.config import Settings, sqlite_file
from server.store.database import open_engine
from server.store.serverlock import Holder, ServerLockError
from server.store.store import Store

FIRST = Holder(4242, "first.example", 8080, datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC))
LIVE_TABLES = ("journal", "server_state", "sessions", "tables")


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
    first = await Store.open(url, serving=FIRST)
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
    first = await Store.open(settings.db_url, serving=FIRST)
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
            await Store.open(settings.db_url, serving=FIRST)
    finally:
        await second.close()
    third = await Store.open(settings.db_url, serving=FIRST)
    await third.close()


async def test_admin_commands_open_the_store_beside_a_running_server(settings: Settings) -> None:
    """`user` and `tournament-key` are short and the server keeps working: they take no server lock."""
    server = await Store.open(settings.db_url, serving=FIRST)
    try:
        admin = await Store.open(settings.db_url)
        try:
            await admin.tournaments.add_key("autumn", None, False)
        finally:
            await admin.close()
        assert [key.name for key in await server.tournaments.keys()] == ["autumn"]
    finally:
        await server.close()
