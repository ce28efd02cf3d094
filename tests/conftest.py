"""Fixtures shared by every test: real settings on a real SQLite path, and a client for the real app."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer
from pytest_aiohttp import AiohttpClient

from server.app import create_app
from server.config import Settings
from server.store.database import migrate, open_engine
from server.web.accesslog import RedactingAccessLogger


@pytest.fixture(scope="session")
def migrated_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty database at the newest schema, made once; each test gets its own copy."""
    path = tmp_path_factory.mktemp("template") / "kropki.sqlite3"

    async def build() -> None:
        engine = open_engine(f"sqlite+aiosqlite:///{path}")
        await migrate(engine)
        await engine.dispose()

    asyncio.run(build())
    return path


@pytest.fixture
def settings(tmp_path: Path, migrated_database: Path) -> Settings:
    """Settings whose SQLite database (already migrated) lives under the test's own temporary directory."""
    shutil.copyfile(migrated_database, tmp_path / "kropki.sqlite3")
    return Settings(host="127.0.0.1", port=8080, db_url=f"sqlite+aiosqlite:///{tmp_path}/kropki.sqlite3")


@pytest.fixture
async def client(aiohttp_client: AiohttpClient, settings: Settings) -> TestClient:
    """A test client talking HTTP to the app built by the same factory the CLI uses, with the
    access log the CLI uses."""
    server = TestServer(create_app(settings))
    await server.start_server(access_log_class=RedactingAccessLogger)  # TestServer drops constructor kwargs
    return await aiohttp_client(server)
