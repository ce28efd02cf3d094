"""The store's tests' writer: a StoreWriter on the suite's database (SQLite, or scripts/with-postgres's),
finished and closed after the test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from server.config import Settings
from server.store.database import open_engine, sessions
from server.store.writer import StoreWriter


@pytest.fixture
async def writer(settings: Settings) -> AsyncIterator[StoreWriter]:
    engine = open_engine(settings.db_url)
    writer = StoreWriter(engine, sessions(engine))
    yield writer
    await writer.finish(10)
    writer.close()
    await engine.dispose()
