"""How long each garbage collection stopped the process, for `/metrics` (kropki_gc_pause_seconds).

A collection stops the event loop: every reply waits for it. `gc.callbacks` is process-wide, so one
recorder is installed once per process however many apps a test run builds; each app's registry reads it.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field

# Upper bounds in seconds; 0.02 is the pause the capacity targets allow (docs/operations.md).
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0)
GENERATIONS = (0, 1, 2)


@dataclass
class Pauses:
    """Counts per generation and bucket (not cumulative), sums and the longest pause seen."""

    counts: dict[int, list[int]] = field(
        default_factory=lambda: {generation: [0] * (len(BUCKETS) + 1) for generation in GENERATIONS}
    )
    sums: dict[int, float] = field(default_factory=lambda: dict.fromkeys(GENERATIONS, 0.0))
    longest: float = 0.0
    _started: float = 0.0

    def callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        if not self._started:  # installed in the middle of a collection
            return
        pause = time.perf_counter() - self._started
        self._started = 0.0
        generation = info.get("generation", 2)
        slot = next((i for i, bound in enumerate(BUCKETS) if pause <= bound), len(BUCKETS))
        self.counts[generation][slot] += 1
        self.sums[generation] += pause
        self.longest = max(self.longest, pause)


_recorder: Pauses | None = None


def recorder() -> Pauses:
    """The process's recorder, installed in gc.callbacks on first use."""
    global _recorder
    if _recorder is None:
        _recorder = Pauses()
        gc.callbacks.append(_recorder.callback)
    return _recorder
