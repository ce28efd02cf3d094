"""The breakers themselves: a test that breaks storage must leave nothing open behind it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from server.config import Settings
from tests.conftest import POSTGRES
from tests.store.breakers import PostgresProxy


@pytest.mark.skipif(not POSTGRES, reason="PostgreSQL: set KROPKI_TEST_DB (scripts/with-postgres)")
async def test_a_connection_the_proxy_takes_as_it_breaks_is_cut_with_the_rest(
    settings: Settings, tmp_path: Path
) -> None:
    """A client that connected just before the break, while the proxy was still reaching PostgreSQL
    for it, was joined to PostgreSQL after the break had cut the others, and stayed open: to the end of
    the event loop, where its unclosed sockets failed whatever cluster test was running then."""
    proxy = PostgresProxy(tmp_path / "pg", settings.db_url)
    await proxy.start()
    reader, writer = await asyncio.open_unix_connection(str(tmp_path / "pg" / PostgresProxy.SOCKET))
    try:
        for _ in range(10_000):  # turn by turn, to break while the proxy is reaching PostgreSQL for it
            if proxy.handlers:
                break
            await asyncio.sleep(0)
        await proxy.break_storage()
        async with asyncio.timeout(10):
            assert await reader.read() == b""  # cut
        await proxy.close()
        assert not proxy.handlers and not proxy.pipes
    finally:
        writer.transport.abort()
        await proxy.close()
