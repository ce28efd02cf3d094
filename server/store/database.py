"""Connecting to the database, and keeping its schema in step with the code through Alembic."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Table, event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Dialect, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from server.logs import Fields

log = logging.getLogger(__name__)

MIGRATIONS = Path(str(resources.files("kropki_migrations")))  # the top-level migrations/, installed
BUSY_TIMEOUT_MS = 5_000  # a writer waits this long for another connection's lock before failing


MAX_INTEGER = 2**31 - 1  # INTEGER columns are 32-bit on PostgreSQL


def as_utc(moment: datetime) -> datetime:
    """A time read back from the database, with its zone: SQLite hands times back without it, and
    every time stored here is UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def utc_text(moment: datetime) -> str:
    """ISO 8601 with its UTC offset, as the JSON answers write times."""
    return as_utc(moment).isoformat(timespec="seconds")


def findable(text: str) -> bool:
    """Whether `text` can be stored at all: PostgreSQL text holds no NUL, so a look-up of one matches
    nothing (and asyncpg would refuse the query instead of finding nothing)."""
    return "\x00" not in text


class SchemaError(RuntimeError):
    """The database's schema is not the one this code needs; the message says what to run, and which
    database, for the operator at a console. `reason` says the same without naming the database (its
    file's path, or PostgreSQL's host and user): /readyz, which anyone may read, gives that."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(reason.replace("the database", f"the database {where}", 1))
        self.reason = reason


def open_engine(url: str) -> AsyncEngine:
    """An engine for `url`. SQLite files run in WAL mode so readers never block the writer. PostgreSQL's
    pooled connections are tested as they are taken (pool_pre_ping: one round trip): a restart or a
    failover ends them all, and the first write on one made storage fail for a second, taking back the
    moves not yet stored, as the first read made a page answer 503. A database error names its
    statement, not its values (hide_parameters): a write the writer drops is logged with it, and its
    values were players' chat lines, nicks and addresses."""
    engine = create_async_engine(
        url, pool_pre_ping=make_url(url).get_backend_name() == "postgresql", hide_parameters=True
    )
    if engine.dialect.name == "sqlite":
        event.listen(engine.sync_engine, "connect", sqlite_pragmas)
    return engine


def insert_with_on_conflict(dialect: Dialect, table: Table) -> Any:
    """The dialect's INSERT into `table`, which has ON CONFLICT on both SQLite and PostgreSQL."""
    return (postgresql if dialect.name == "postgresql" else sqlite).insert(table)


def sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL with synchronous=NORMAL: a commit survives the server being killed; only a power cut
    # can lose the last few commits (the WAL is synced at checkpoints).
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def in_one_transaction(connection: Connection, migrations: Callable[[], None]) -> None:
    """Run Alembic's `migrations` on `connection` in one transaction: all of them or, should one fail or
    the process be stopped, none. On SQLite the transaction is begun here (BEGIN IMMEDIATE, which also
    waits for another writer first): Python's sqlite3 begins one only at the first INSERT, UPDATE or
    DELETE, so a revision's first ALTER or CREATE was committed on its own, and an upgrade that stopped
    after it left a schema no later `migrate` could upgrade ("duplicate column name").

    And on SQLite with the foreign keys not enforced meanwhile: a revision that changes a table there
    copies it and drops the old one (Alembic's batch mode), and dropping `users` with them enforced
    deleted, or set to NULL, every row that referred to an account (its games' links, rating history,
    ignored players). SQLite ignores the pragma inside a transaction, so it is set before, and set back
    on the connection after."""
    sqlite = connection.dialect.name == "sqlite"
    if sqlite:
        connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
        connection.commit()
    try:
        with connection.begin():
            if sqlite:
                connection.exec_driver_sql("BEGIN IMMEDIATE")
            migrations()
    finally:
        if sqlite:
            connection.exec_driver_sql("PRAGMA foreign_keys=ON")
            connection.commit()


async def one_snapshot(session: AsyncSession) -> None:
    """The session's reads from now to its end see one snapshot of the database, whatever commits
    meanwhile: a read in pages must not mix states. PostgreSQL's default (READ COMMITTED) gives each
    statement a snapshot of its own, REPEATABLE READ one for the transaction; Python's sqlite3 begins
    a transaction only at a write, so each read was on its own, and a transaction begun at once holds
    one (WAL: writers go on meanwhile). Before any other statement of the session."""
    if session.get_bind().dialect.name == "postgresql":
        await session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
    else:
        await (await session.connection()).exec_driver_sql("BEGIN")


def sessions(engine: AsyncEngine) -> async_sessionmaker:
    return async_sessionmaker(engine, expire_on_commit=False)


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


@functools.cache
def head_revision() -> str:
    """The newest migration's revision. Found once a process: it loads every migration script, and the
    scripts are the installed package's (the suite builds an app, which checks the schema, some thousand
    times)."""
    heads = ScriptDirectory.from_config(alembic_config()).get_heads()
    return heads[0]


@functools.cache
def known_revisions() -> frozenset[str]:
    """Every revision this code has a migration for; a database at another one was upgraded by a newer
    version, and no migration here can take it anywhere."""
    return frozenset(
        script.revision for script in ScriptDirectory.from_config(alembic_config()).walk_revisions()
    )


async def current_revision(engine: AsyncEngine) -> str | None:
    async with engine.connect() as connection:
        return await connection.run_sync(lambda sync: MigrationContext.configure(sync).get_current_revision())


async def migrate(engine: AsyncEngine) -> None:
    """Upgrade the database to the newest revision; SchemaError for one a newer version upgraded."""
    current = await current_revision(engine)
    if current is not None and current not in known_revisions():
        raise _newer(engine, current)
    async with engine.connect() as connection:
        await connection.run_sync(
            lambda sync: in_one_transaction(sync, lambda: command.upgrade(alembic_config(sync), "head"))
        )
    log.info("database schema %s", Fields(revision=await current_revision(engine)))


async def check_schema(engine: AsyncEngine) -> None:
    """Refuse a database whose schema is older (or newer) than the code's."""
    current, head = await current_revision(engine), head_revision()
    if current is not None and current not in known_revisions():
        raise _newer(engine, current)
    if current != head:
        found = "an empty database" if current is None else f"schema revision {current}"
        where = engine.url.render_as_string(hide_password=True)
        raise SchemaError(
            where,
            f"the database has {found}, this server needs {head}: "
            "run `kropki-server migrate` (or start with `serve --migrate`)",
        )


def _newer(engine: AsyncEngine, current: str) -> SchemaError:
    return SchemaError(
        engine.url.render_as_string(hide_password=True),
        f"the database has schema revision {current}, which a newer version of kropki-server made "
        f"(this one knows up to {head_revision()}): run that version, or restore the backup taken before "
        'its upgrade (docs/operations.md, "Upgrading")',
    )
