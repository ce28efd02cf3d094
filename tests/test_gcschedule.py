"""The collector's schedule for serving (server/gcschedule.py, issue 19.2): young collections small and
often (by count and on a timer), the oldest generation only on its timer, tests left on Python's default."""

from __future__ import annotations

import asyncio
import gc

import pytest

from server import gcschedule


@pytest.fixture
def thresholds():
    """Whatever a test sets, the process gets its collector back as it was."""
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_serving_freezes_start_up_and_never_collects_the_oldest_generation_by_itself(
    thresholds: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(gc, "collect", lambda *generation: calls.append("collect") or 0)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))  # the test process is not frozen
    assert not gcschedule.serving_schedule()  # tests run on the default schedule

    gcschedule.tune_for_serving()

    assert calls == ["collect", "freeze"]
    young, middle, oldest = gc.get_threshold()
    assert (young, middle) == (gcschedule.YOUNG_THRESHOLD, gcschedule.MIDDLE_THRESHOLD)
    assert oldest >= 1 << 30 and gcschedule.serving_schedule()


def test_young_and_full_collections_run_on_their_timers_until_cancelled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    collected: list[tuple[int, ...]] = []
    monkeypatch.setattr(gc, "collect", lambda *generation: collected.append(generation) or 0)

    async def run() -> None:
        task = asyncio.create_task(gcschedule.timed_collections(young_every=0.01, full_every=0.045))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        count = len(collected)
        await asyncio.sleep(0.03)
        assert len(collected) == count  # cancelled means stopped

    asyncio.run(run())
    full = [n for n, generation in enumerate(collected) if generation == ()]
    young = [generation for generation in collected if generation != ()]
    assert len(full) >= 2 and len(young) >= 8 and set(young) == {(1,)}
    assert all(
        later - earlier >= 3 for earlier, later in zip(full, full[1:], strict=False)
    )  # young ones between
