"""The write-behind queue's batches: many rows of one kind go in as a few multi-row statements, and
every row lands as it was handed over (SQLite or PostgreSQL)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from collections import Counter
from typing import Any

import pytest
from sqlalchemy import Engine, event, select

from server.config import Settings
from server.hub.persistence import SavedSession
from server.store.models import JournalEntry, LiveSession
from server.store.writer import MAX_BATCH, StoreWriter

ROWS = 200  # more than a page of every kind, not a multiple of any page, one batch (MAX_BATCH) in all


def saved(number: int, last_command: int = 7) -> SavedSession:
    return SavedSession(
        id_hmac=f"{number:064x}",
        nick=f"*Guest{number}",
        lang="pl",
        registered=False,
        free=number % 2 == 0,
        client="a",
        tables=(number, number + 1),
        blocked=("bob",) if number % 3 == 0 else (),
        last_command=last_command,
    )


async def test_a_batch_of_many_rows_lands_whole(writer: StoreWriter) -> None:
    for number in range(ROWS):
        writer.journal(5, number + 1, "move", {"p": number})
        writer.session_saved(saved(number))
    writer.journal(5, 1, "move", {"p": "again"})  # the same table and number: the first one stays
    quiet = {f"{number:064x}": (1000.5 + number if number % 2 else None) for number in range(ROWS)}
    writer.sessions_seen(2000.0, quiet)
    await writer.flush()
    for number in range(0, ROWS, 2):  # saved again in a later batch: the rows are updated, not added
        writer.session_saved(saved(number, last_command=99))
    await writer.flush()

    async with writer.sessions() as session:
        journal = (
            await session.execute(select(JournalEntry.seq, JournalEntry.data).where(JournalEntry.uid == 5))
        ).all()
        rows = {row.id_hmac: row for row in (await session.scalars(select(LiveSession))).all()}
    assert sorted((seq, json.loads(data)) for seq, data in journal) == [
        (number + 1, {"p": number}) for number in range(ROWS)
    ]
    assert len(rows) == ROWS
    for number in range(ROWS):
        row, expected = rows[f"{number:064x}"], saved(number)
        assert (row.nick, row.free, json.loads(row.tables), json.loads(row.blocked)) == (
            expected.nick,
            expected.free,
            list(expected.tables),
            list(expected.blocked),
        )
        assert row.last_command == (99 if number % 2 == 0 else 7)
        assert row.quiet_since == quiet[row.id_hmac]


async def test_sqlite_steps_a_page_of_rows_at_once(writer: StoreWriter, settings: Settings) -> None:
    """The sqlite3 driver lets go of the GIL at every statement it steps, and getting it back from a busy
    event loop costs up to 5 ms: 500 rows written with executemany, one step a row, held every move
    behind them for up to 1.5 s under 1,500 games (issue 19.2)."""
    if not settings.db_url.startswith("sqlite"):
        pytest.skip("SQLite's steps")
    steps: Counter[str] = Counter()

    def trace(connection: Any, _record: Any) -> None:
        if isinstance(connection, sqlite3.Connection):
            connection.set_trace_callback(lambda sql: steps.update([" ".join(sql.split()[:3]).upper()]))

    event.listen(Engine, "connect", trace)
    try:
        for number in range(ROWS):
            writer.journal(5, number + 1, "move", {"p": number})
            writer.session_saved(saved(number))
        writer.sessions_seen(2000.0, {f"{number:064x}": 1000.0 for number in range(ROWS)})
        await writer.flush()
    finally:
        event.remove(Engine, "connect", trace)
    assert steps["COMMIT"] == 1, steps
    assert steps["INSERT INTO JOURNAL"] <= 4, steps
    assert steps["INSERT INTO SESSIONS"] <= 5, steps
    assert steps["UPDATE SESSIONS SET"] <= 4, steps


async def test_sqlite_writes_batch_after_batch_while_the_loop_is_busy(
    writer: StoreWriter, settings: Settings
) -> None:
    """The writer's thread goes on to the next batch by itself: waiting for a busy event loop between
    batches held every move's reply for a turn of the loop or two (p50 0.5 s under 2,000 games)."""
    if not settings.db_url.startswith("sqlite"):
        pytest.skip("the writer's thread writes SQLite only")
    batches = 3 * MAX_BATCH
    for number in range(batches):
        writer.journal(7, number + 1, "move", {"p": number})
    await asyncio.sleep(0)  # the writer's task hands the queue to its thread
    database = settings.db_url.split("///", 1)[1]
    deadline = time.monotonic() + 10
    stored = 0
    while stored < batches and time.monotonic() < deadline:
        time.sleep(0.05)  # the event loop stays busy all this while
        with contextlib.closing(sqlite3.connect(database)) as reader:  # its own `with` leaves it open
            stored = reader.execute("SELECT count(*) FROM journal WHERE uid = 7").fetchone()[0]
    assert stored == batches  # every batch, not only the first, committed without the loop
    assert writer.written == 0  # booked on the loop only, in order, when it comes back to them
    await writer.flush()
    assert writer.written == batches


async def test_a_flush_gives_up_after_its_time_out_and_the_writes_still_land(
    writer: StoreWriter, settings: Settings
) -> None:
    """A reply waits for its writes at most so long (Hub.settled), then must not call them done; the
    write itself goes on, and whoever waits without a time-out still sees it land."""
    if not settings.db_url.startswith("sqlite"):
        pytest.skip("a slow statement in the writer's thread, which writes SQLite only")

    def slow(*_args: Any) -> None:
        time.sleep(1.0)  # in the writer's thread: the event loop goes on

    event.listen(Engine, "before_cursor_execute", slow)
    try:
        writer.journal(7, 1, "move", {"p": 1})
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            await writer.flush(0.05)
        assert time.monotonic() - started < 0.8 and writer.written == 0
        await writer.flush()
    finally:
        event.remove(Engine, "before_cursor_execute", slow)
    assert writer.written == 1
    await writer.flush(0.05)  # nothing left to wait for
