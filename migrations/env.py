"""Alembic's entry point. The server runs migrations on its own connection (`kropki-server migrate`);
the `alembic` command line (for writing new revisions) connects to KROPKI_DB or alembic.ini's URL."""

from __future__ import annotations

import asyncio
import os

from alembic import context
from sqlalchemy.engine import Connection

from server.store.database import in_one_transaction, open_engine
from server.store.models import Base

config = context.config
target_metadata = Base.metadata


def run_on(connection: Connection) -> None:
    # render_as_batch: SQLite can only change a table by copying it, which batch mode does
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


async def run_standalone() -> None:
    url = os.environ.get("KROPKI_DB") or config.get_main_option("sqlalchemy.url")
    engine = open_engine(url)
    async with engine.connect() as connection:
        await connection.run_sync(lambda sync: in_one_transaction(sync, lambda: run_on(sync)))
    await engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported; run against a database")
connection = config.attributes.get("connection")
if connection is not None:
    run_on(connection)
else:
    asyncio.run(run_standalone())
