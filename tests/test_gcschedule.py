"""The collector's schedule for serving (server/gcschedule.py, issue 19.2): young collections small and
often (by count and on a timer), the oldest generation only when it doubled, tests left on Python's
default."""

from __future__ import annotations

import asyncio
import gc
import sys

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


@pytest.mark.skipif(sys.version_info >= (3, 14), reason="3.14's incremental collector keeps 0")
def test_every_automatic_collection_takes_the_middle_generation_too(
    thresholds: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A survivor is walked once before it is old, not 1.5 times on average (every other collection)."""
    monkeypatch.setattr(gc, "freeze", lambda: None)  # the test process is not frozen
    gcschedule.tune_for_serving()
    generations: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            generations.append(info["generation"])

    gc.callbacks.append(record)
    try:
        kept = [[i] for i in range(10 * gcschedule.YOUNG_THRESHOLD)]  # alive: each one counts
    finally:
        gc.callbacks.remove(record)
    del kept
    assert len(generations) >= 5
    assert set(generations) == {1}


def _collections(sizes: list[int], monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """The collections timed_collections makes (young every 10 ms, the oldest generation counted every
    45 ms, its wait never growing) while it has these sizes, one per count, the first at its start, until
    one more count; () is a full collection."""
    collected: list[tuple[int, ...]] = []
    monkeypatch.setattr(gc, "collect", lambda *generation: collected.append(generation) or 0)
    counts = iter(sizes)
    size = [0]
    all_seen = asyncio.Event()

    def old_objects() -> int:
        """The oldest generation's size at a count; the count after a full collection sees the same."""
        if collected and collected[-1] == ():
            return size[0]
        following = next(counts, None)
        if following is None:
            all_seen.set()
        else:
            size[0] = following
        return size[0]

    async def run() -> None:
        task = asyncio.create_task(
            gcschedule.timed_collections(
                young_every=0.01, check_every=0.045, old_objects=old_objects, check_most=0.045
            )
        )
        await asyncio.wait_for(all_seen.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        count = len(collected)
        await asyncio.sleep(0.03)
        assert len(collected) == count  # cancelled means stopped

    asyncio.run(run())
    return collected


def test_young_collections_run_on_their_timer_and_a_steady_oldest_generation_is_never_collected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    collected = _collections([1000, 1100, 1900, 1500, 1990, 1999], monkeypatch)

    assert len(collected) >= 6 and set(collected) == {(1,)}  # at least one at each count, however slow


def test_a_full_collection_runs_when_the_oldest_generation_doubles_over_its_smallest_since_the_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # smallest 1000, then 800: doubled at 1600; after that collection (at 1600) at 3200, not before
    collected = _collections([1000, 800, 1500, 1600, 3100, 3000, 3200], monkeypatch)

    full = [n for n, generation in enumerate(collected) if generation == ()]
    assert len(full) == 2
    assert full[1] - full[0] >= 3  # young ones between: at least at the two counts that found 3100, 3000
    assert set(collected) == {(), (1,)}


def test_the_oldest_generation_is_counted_ever_less_often_while_it_stays_level() -> None:
    """Counting the oldest generation stops the loop for 40-60 ms under 2,000 games: a steady server counts
    ever less often, a growing one (which may soon need a full collection) as often as at its start."""
    counts = gcschedule.OldGenerationCounts(1000, check_every=10, check_most=40)
    waits = [counts.wait]
    for size in [1000, 1000, 1000, 1000, 1300, 1300]:  # level four times, grown by 30% (not doubled), level
        assert not counts.doubled(size)
        waits.append(counts.wait)

    assert waits == [10, 20, 40, 40, 40, 10, 20]  # doubling up to check_most; from check_every when it grew
    assert counts.doubled(2000)  # twice its smallest (1000), not its last count
    counts.collected(2000)
    assert counts.wait == 10 and not counts.doubled(3999) and counts.doubled(4000)


def test_the_loop_waits_between_counts_as_long_as_the_policy_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """Never shorter; a loaded machine may make a wait longer, so no upper bound is asserted."""
    monkeypatch.setattr(gc, "collect", lambda *generation: 0)
    counted: list[float] = []

    def old_objects() -> int:
        counted.append(asyncio.get_running_loop().time())
        return 1000

    async def run() -> None:
        task = asyncio.create_task(
            gcschedule.timed_collections(
                young_every=0.005, check_every=0.02, old_objects=old_objects, check_most=0.08
            )
        )
        while len(counted) < 6:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())
    waits = [later - earlier for earlier, later in zip(counted, counted[1:], strict=False)]
    least = [0.02, 0.04, 0.08, 0.08, 0.08]  # check_every, doubled while level, up to check_most
    assert len(waits) >= 5 and all(wait >= at_least for wait, at_least in zip(waits, least, strict=False))
