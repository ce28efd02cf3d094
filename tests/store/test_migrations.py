"""Alembic owns the schema: empty to head, models and migrations agree, and old schemas are refused."""

from __future__ import annotations

import os

import pytest
from aiohttp.test_utils import TestServer
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect

from server.app import create_app
from server.config import Settings
from server.store.database import (
    SchemaError,
    alembic_config,
    current_revision,
    head_revision,
    migrate,
    open_engine,
)
from server.store.models import Base


async def test_migrations_run_from_empty_to_head_and_match_the_models(empty_database: str) -> None:
    engine = open_engine(empty_database)
    try:
        assert await current_revision(engine) is None
        await migrate(engine)
        await migrate(engine)  # a second run changes nothing

        assert await current_revision(engine) == head_revision()
        async with engine.connect() as connection:
            tables = await connection.run_sync(lambda sync: set(inspect(sync).get_table_names()))
            differences = await connection.run_sync(
                lambda sync: compare_metadata(MigrationContext.configure(sync), Base.metadata)
            )
        assert {"users", "games", "tables", "journal"} <= tables
        assert differences == []
    finally:
        await engine.dispose()


async def test_downgrade_to_base_and_back(empty_database: str) -> None:
    engine = open_engine(empty_database)
    try:
        await migrate(engine)
        async with engine.begin() as connection:
            await connection.run_sync(lambda sync: command.downgrade(alembic_config(sync), "base"))
        assert await current_revision(engine) is None
        await migrate(engine)
        assert await current_revision(engine) == head_revision()
    finally:
        await engine.dispose()


@pytest.mark.parametrize("upgrade", [False, True])
async def test_the_app_refuses_an_old_schema_unless_asked_to_migrate(
    empty_database: str, upgrade: bool
) -> None:
    url = empty_database
    server = TestServer(create_app(Settings("127.0.0.1", 8080, url, migrate=upgrade, ai_workers=0)))
    try:
        if upgrade:
            await server.start_server()
            engine = open_engine(url)
            assert await current_revision(engine) == head_revision()
            await engine.dispose()
        else:
            with pytest.raises(SchemaError, match="run `kropki-server migrate`"):
                await server.start_server()
    finally:
        await server.close()


def test_the_suite_runs_on_the_database_it_was_asked_for(settings: Settings) -> None:
    """`make test-postgres` must really test PostgreSQL, not quietly fall back to SQLite."""
    expected = "postgresql" if os.environ.get("KROPKI_TEST_DB") else "sqlite"
    assert settings.db_url.split("+")[0] == expected
