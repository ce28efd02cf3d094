"""Fixtures shared by every test: real settings on a real database of its own, and a client for the
real app. The database is a SQLite file in the test's temporary folder, or, when KROPKI_TEST_DB names a
PostgreSQL server (`make test` runs the suite both ways, see scripts/with-postgres), a database of its
own on that server."""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import threading
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from aiohttp.web_runner import BaseRunner
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from pytest_aiohttp import AiohttpClient
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from server.app import create_app
from server.config import Settings
from server.hub.hub import Hub
from server.store.database import migrate, open_engine
from server.store.idhash import MIN_COST
from server.web.accesslog import RedactingAccessLogger
from server.web.connections import KEEPALIVE_TIMEOUT, ConnectionGuard, GuardedAppRunner
from server.web.metrics import METRICS_KEY

# CI (`.ci/run`) replays the same examples on every run, so a run fails only on a change; a developer's
# `make test` draws new examples each time and keeps finding what CI would not. Neither times a test:
# speed is for benchmarks/ to measure, and on a loaded host (make test's four parts on two cores)
# Hypothesis's 200 ms deadline and its health check on slow generation failed tests that were right.
UNTIMED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
hypothesis_settings.register_profile("default", **UNTIMED)
hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True, **UNTIMED)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

POSTGRES = os.environ.get("KROPKI_TEST_DB")
TEMPLATE = "kropki_template"
DATABASE_TESTS_ONLY = "--database-tests-only"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        DATABASE_TESTS_ONLY,
        action="store_true",
        help="only the tests that get a database from the suite (new_database, behind settings, client and "
        "empty_database): make test's PostgreSQL half, whose other tests run as they do in its SQLite half",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under --database-tests-only, a test that gets no database from the suite is left out: it runs the
    same on any KROPKI_TEST_DB (556 of the PostgreSQL half's 1,056 tests on 2026-11-30, 89 s of its time).
    So a test that needs PostgreSQL takes its database from the suite (`settings`, tests/cluster's
    `postgres`), never from KROPKI_TEST_DB alone (tests/test_benchmarks.py's do, in the cluster part)."""
    if not config.getoption(DATABASE_TESTS_ONLY):
        return
    kept: list[pytest.Item] = []
    left_out: list[pytest.Item] = []
    for item in items:
        (kept if "new_database" in getattr(item, "fixturenames", ()) else left_out).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


NewDatabase = Callable[[Path, bool], str]  # (test folder, migrated?) -> database URL


def _run(coroutine: Coroutine[Any, Any, None]) -> None:
    """Run set-up work on a loop of its own, whatever loop the tests have."""
    with ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, coroutine).result()


async def _migrate(url: str) -> None:
    engine = open_engine(url)
    await migrate(engine)
    await engine.dispose()


class PostgresAdmin:
    """The suite's own connection to the test server's `postgres` database, for CREATE and DROP DATABASE:
    one engine for the session, on an event loop in a thread of its own, whatever loop the tests have (an
    engine made and disposed of for each statement cost 8-13 ms of CPU, twice a test). A pooled connection
    is tested as it is taken: tests/test_benchmarks.py's chaos run restarts the server."""

    def __init__(self, url: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="postgres-admin", daemon=True)
        self.thread.start()
        self.engine = create_async_engine(url, isolation_level="AUTOCOMMIT", pool_pre_ping=True)

    def execute(self, *statements: str) -> None:
        asyncio.run_coroutine_threadsafe(self._execute(statements), self.loop).result()

    async def _execute(self, statements: tuple[str, ...]) -> None:
        async with self.engine.connect() as connection:
            for statement in statements:
                await connection.execute(text(statement))

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.engine.dispose(), self.loop).result()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


@pytest.fixture(scope="session")
def postgres_admin() -> Iterator[PostgresAdmin | None]:
    """The admin's connection when the suite runs on PostgreSQL (KROPKI_TEST_DB), else None."""
    if not POSTGRES:
        yield None
        return
    admin = PostgresAdmin(POSTGRES)
    try:
        yield admin
    finally:
        admin.close()


@pytest.fixture(scope="session")
def database_maker(
    tmp_path_factory: pytest.TempPathFactory, postgres_admin: PostgresAdmin | None
) -> NewDatabase:
    """Makes a database, empty or at the newest schema (migrated once, then copied). On PostgreSQL the
    copy is FILE_COPY's, which writes no WAL: scripts/with-postgres keeps the server's files in memory."""
    if postgres_admin is not None:
        admin = postgres_admin
        template = make_url(POSTGRES).set(database=TEMPLATE).render_as_string(hide_password=False)
        admin.execute(f"DROP DATABASE IF EXISTS {TEMPLATE}", f"CREATE DATABASE {TEMPLATE}")
        _run(_migrate(template))
        numbers = itertools.count(1)

        def on_postgres(_folder: Path, migrated: bool) -> str:
            name = f"test_{os.getpid()}_{next(numbers)}"
            source = TEMPLATE if migrated else "template0"
            admin.execute(
                f"DROP DATABASE IF EXISTS {name}",
                f"CREATE DATABASE {name} TEMPLATE {source} STRATEGY FILE_COPY",
            )
            return make_url(POSTGRES).set(database=name).render_as_string(hide_password=False)

        return on_postgres

    template = tmp_path_factory.mktemp("template") / "kropki.sqlite3"
    _run(_migrate(f"sqlite+aiosqlite:///{template}"))

    def on_sqlite(folder: Path, migrated: bool) -> str:
        path = folder / ("kropki.sqlite3" if migrated else "empty.sqlite3")
        if migrated:
            shutil.copyfile(template, path)
        return f"sqlite+aiosqlite:///{path}"

    return on_sqlite


@pytest.fixture(scope="session")
def earlier_databases() -> list[str]:
    """The PostgreSQL databases of the tests before this one, which new_database drops."""
    return []


@pytest.fixture
def new_database(
    database_maker: NewDatabase, earlier_databases: list[str], postgres_admin: PostgresAdmin | None
) -> NewDatabase:
    """Makes the test's databases (database_maker). On PostgreSQL the earlier tests' are dropped first,
    whoever is still connected: the server's files are in memory, where the suite's 500 would hold 5 GB.
    Not at the test's own end: aiohttp_client's teardown, which comes after this fixture's, closes the
    app, and its last writes would meet a database gone (8 s of retries a test)."""
    if earlier_databases and postgres_admin is not None:
        postgres_admin.execute(
            *(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)" for name in earlier_databases)
        )
        earlier_databases.clear()

    def make(folder: Path, migrated: bool) -> str:
        url = database_maker(folder, migrated)
        if POSTGRES:
            earlier_databases.append(str(make_url(url).database))
        return url

    return make


@pytest.fixture
def settings(tmp_path: Path, new_database: NewDatabase) -> Settings:
    """Settings with a database of the test's own, already migrated."""
    # Every test client shares the loopback address: the per-address limits are tested on their own
    # (tests/web/test_limits.py), with settings that do not exempt it.
    return Settings(
        host="127.0.0.1",
        port=8080,
        db_url=new_database(tmp_path, True),
        unlimited=("127.0.0.1",),
        ai_workers=0,  # the AI players have tests of their own (tests/hub/test_computer.py)
        pairing_process=False,  # tournaments paired on a thread; tests/director/test_pairing_process.py
        # the cheapest hash of a registered player's id: 2 ms instead of 40, on the hundreds of
        # registrations and logins of the suite (the default is tested in tests/store/test_accounts.py)
        id_hash_cost=MIN_COST,
    )


@pytest.fixture
def empty_database(tmp_path: Path, new_database: NewDatabase) -> str:
    """The URL of a database of the test's own with no schema at all."""
    return new_database(tmp_path, False)


@pytest.fixture
async def client(aiohttp_client: AiohttpClient, settings: Settings) -> TestClient:
    return await served(aiohttp_client, settings)


async def served(aiohttp_client: AiohttpClient, settings: Settings, hub: Hub | None = None) -> TestClient:
    """A test client talking HTTP to the app built by the same factory the CLI uses (with the test's
    hub, when it drives the clocks), served as the CLI serves it, with the access log the CLI uses."""
    server = ServedAsInProduction(create_app(settings, hub), settings.max_connections)
    await server.start_server(access_log_class=RedactingAccessLogger)  # TestServer drops constructor kwargs
    return await aiohttp_client(server)


class ServedAsInProduction(TestServer):
    """The app served as `serve` serves it: behind the connection guard."""

    def __init__(self, app: web.Application, max_connections: int) -> None:
        super().__init__(app)
        self.max_connections = max_connections

    async def _make_runner(self, **kwargs: Any) -> BaseRunner:
        guard = ConnectionGuard(self.max_connections, self.app.get(METRICS_KEY))
        return GuardedAppRunner(self.app, guard, keepalive_timeout=KEEPALIVE_TIMEOUT, **kwargs)
