"""Where the write-behind queue may be cut into batches: only where one turn of the event loop's work ends.

One action of the hub (a move and the game it ends, a table set up with its seats, ...) queues its jobs
in one synchronous step; each batch is one transaction, so a batch that ended among them would let a
crash between two commits keep a part of the action, a state the journal's replay does not expect (a
seat moved to nobody, a tournament's table without its row). So the writer marks, with a callback the
loop runs once the step that queued jobs has ended, how many jobs were queued by then ("sealed"); a
batch takes whole sealed steps only, as many as fit in its size, or the first one alone if it queued
more (docs/architecture.md, "The writer").

The loop seals; whoever takes batches (the writer's thread on SQLite, or the loop) reads the seals and
drops those it has passed. Only the loop appends and one taker at a time pops from the front, each
a single deque operation, atomic under the GIL.
"""

from __future__ import annotations

import asyncio
import threading
from bisect import bisect_right
from collections import deque
from collections.abc import Callable

# Time the writer's thread waits for a seal before it looks again whether the server is stopping
WAIT_SECONDS = 1.0


class Seals:
    def __init__(self, queued: Callable[[], int]) -> None:
        self._queued = queued  # how many jobs were ever queued
        self._ends: deque[int] = deque()  # jobs ever queued when a step that queued some had ended
        self.taken = 0  # jobs ever taken from the front of the queue into a batch
        self._pending = False  # a seal is scheduled on the loop
        self._sealed = threading.Event()  # a seal came since the taker last looked

    def queueing(self) -> None:
        """On the loop, as a step queues a job: what is queued is sealed once the step has ended (the
        callback runs after it, and after whatever steps the loop runs before it, whole as well)."""
        if not self._pending:
            self._pending = True
            asyncio.get_running_loop().call_soon(self._seal)

    def _seal(self) -> None:
        self._pending = False
        queued = self._queued()
        if not self._ends or self._ends[-1] < queued:
            self._ends.append(queued)
        self._sealed.set()

    def batch(self, most: int) -> int:
        """How many jobs from the front of the queue the next batch takes: the whole steps that fit in
        `most`, or the first step alone if it is longer; 0 while none is sealed."""
        self._sealed.clear()  # a seal from now on ends `wait`
        ends = self._ends
        if not ends:
            return 0
        fit = bisect_right(ends, self.taken + most)
        return (ends[fit - 1] if fit else ends[0]) - self.taken

    def took(self, count: int) -> None:
        """`count` jobs left the front of the queue for a batch."""
        self.taken += count
        while self._ends and self._ends[0] <= self.taken:
            self._ends.popleft()

    def wait(self) -> None:
        """In the writer's thread, with jobs queued but none sealed: until the loop seals them (or a
        while, so that the thread sees a stop)."""
        self._sealed.wait(WAIT_SECONDS)
