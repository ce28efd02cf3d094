"""A crash stores whole actions: the writer ends a batch (one transaction) only between two turns of the
event loop, never among the jobs one synchronous step of the hub queued, so a kill between two commits
never keeps half of what one action did (docs/architecture.md, "The writer"). On SQLite the writer's
thread takes batches while the loop goes on queueing; the careful path (PostgreSQL, or storage failing)
slices them on the loop."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import Engine, event

from server.config import Settings
from server.store import database
from server.store import writer as writer_module
from server.store.writer import MAX_BATCH, StoreWriter
from tests.store.breakers import breaker_for, until


class Steps:
    """Queues journal entries a loop step at a time, noting where each step's jobs end and where each
    committed batch began."""

    def __init__(self, writer: StoreWriter) -> None:
        self.writer = writer
        self.ends: list[int] = []
        self.batches_from: list[int] = []
        self.seq = 0
        # called on the loop for each commit, in order, before the batch is counted as written
        writer.on_commit = lambda _jobs, _seconds: self.batches_from.append(writer.written)

    def queue(self, jobs: int) -> None:
        for _ in range(jobs):
            self.seq += 1
            self.writer.journal(7, self.seq, "move", {"p": self.seq})

    async def step(self, jobs: int) -> None:
        """One synchronous step queues `jobs`; the loop turns before the next."""
        self.queue(jobs)
        self.ended()
        await asyncio.sleep(0)

    def ended(self) -> None:
        self.ends.append(self.writer.queued)

    def cuts(self) -> list[int]:
        """Where the batches ended (after a flush): each must be the end of a step."""
        return [*self.batches_from[1:], self.writer.written]


@contextmanager
def first_statement_slow(seconds: float) -> Iterator[None]:
    """The first statement the writer runs waits `seconds` (in the writer's thread on SQLite; on the
    loop on PostgreSQL): meanwhile the test queues what the next batches take."""
    slept: list[bool] = []

    def slow(*_args: Any) -> None:
        if not slept:
            slept.append(True)
            time.sleep(seconds)

    event.listen(Engine, "before_cursor_execute", slow)
    try:
        yield
    finally:
        event.remove(Engine, "before_cursor_execute", slow)


async def test_a_step_of_more_than_a_batch_is_written_in_one(writer: StoreWriter) -> None:
    """A batch over MAX_BATCH extends to the end of its step rather than cutting inside it."""
    steps = Steps(writer)
    await steps.step(MAX_BATCH + 200)
    await steps.step(10)
    await writer.flush()
    assert steps.cuts() == steps.ends


async def test_steps_that_do_not_fit_in_one_batch_go_in_one_after_the_other(writer: StoreWriter) -> None:
    """Queued while a batch is written: 300 and 400 jobs make two batches, not 500 and 200."""
    steps = Steps(writer)
    with first_statement_slow(0.3):
        await steps.step(1)
        await asyncio.sleep(0.05)  # the first batch is being written
        await steps.step(300)
        await steps.step(400)
        await steps.step(50)
        await writer.flush()
    cuts = steps.cuts()
    assert set(cuts) <= set(steps.ends), (cuts, steps.ends)
    assert cuts[:2] == [1, 301], cuts


async def test_the_writer_s_thread_never_takes_part_of_a_step(
    writer: StoreWriter, settings: Settings
) -> None:
    """The thread goes on to the next batch while the loop is in the middle of a step (the GIL lets it
    run between two of the step's jobs): it waits for the step to end."""
    if not settings.db_url.startswith("sqlite"):
        pytest.skip("the writer's thread writes SQLite only")
    steps = Steps(writer)
    with first_statement_slow(0.2):
        await steps.step(1)
        await asyncio.sleep(0.05)  # the thread writes the first batch, slowly
        steps.queue(1)
        time.sleep(0.4)  # the first batch is committed meanwhile; the step has not ended
        steps.queue(1)
        steps.ended()
        await writer.flush()
    assert steps.cuts() == [1, 3]


async def test_the_careful_way_after_storage_failed_takes_whole_steps(
    writer: StoreWriter, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While storage fails, the batch tried again (and again) is sliced on the loop: it too ends between
    two steps, and so does everything written once storage is back."""
    monkeypatch.setattr(database, "BUSY_TIMEOUT_MS", 200)
    monkeypatch.setattr(writer_module, "RETRY_FIRST", 0.05)
    monkeypatch.setattr(writer_module, "RETRY_MOST", 0.2)
    breaker = breaker_for(settings.db_url)
    steps = Steps(writer)
    await breaker.break_storage()
    try:
        await steps.step(1)
        await steps.step(300)  # on SQLite, while the thread waits for the lock; on PostgreSQL, after
        await steps.step(400)  # the first try of the first step failed
        await steps.step(50)
        await until(lambda: writer.storage_failure is not None)
        await asyncio.sleep(0.3)  # tried again, still failing
    finally:
        await breaker.mend()
    await until(lambda: writer.storage_failure is None)
    await writer.flush()
    cuts = steps.cuts()
    assert set(cuts) <= set(steps.ends), (cuts, steps.ends)
    assert writer.written == 751
