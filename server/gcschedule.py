"""When the garbage collector runs in a serving process (issue 19.2).

A collection stops the event loop, and its pause grows with the objects it walks. Under load most
young objects belong to requests in flight: with 2,000 games every player holds a long poll, each
with dozens of tracked objects (the request, its task, futures, headers), alive for up to a second.
Python's default schedule walks all of them at once:

- the youngest generation is collected when allocations minus deallocations pass its threshold; the
  requests that die in the older generations keep that count low, so the youngest generation held
  up to 120,000 objects when it was finally collected (30-100 ms with the threshold at 10,000);
- whatever survives is promoted, so the long polls alive at a collection soon make up a quarter of
  the oldest generation, which then sets off a full collection that also walks every table's state
  (hundreds of milliseconds with 2,000 games).

So here the young collections run often and stay small (every 700 net allocations: a millisecond or so
each), each one of the youngest and the middle generation together, and the oldest generation is never
collected automatically. A collection's cost is the references of the objects it walks, and walking them
is mostly cache misses (0.3-0.5 us an object under load against 5 ns in a small process): most of what a
collection walks is the long polls in flight, alive for about a second, so every walk of them counts.
With the middle generation collected at every other collection, a survivor was walked 1.5 times on
average before it was old; collected at every one, once. Under `benchmarks/games.py --games 2000` that
took the collector from 3.2-3.4 s of CPU in a 30-second window to 2.4-2.5 s, and halved its median pause
(0.5-0.7 ms instead of 1.0-1.2).

What dies in the oldest generation by its reference count (nearly everything: finished requests, closed
tables) is freed at once as always; only reference cycles wait for a full collection. A full collection walks
every live object (about 0.3 s with 2,000 games; their moves are not among them: the engine keeps them as flat
tuples the collector stops tracking), so it runs only when it can be worth its pause: when the oldest
generation (counted as below) holds twice the objects it held at its smallest since the last one, as Go's
collector waits for its heap to double (its default GOGC=100). Only objects the collector tracks can make up a
garbage cycle, so cycles can never grow past what is alive, and a server in a steady state, however large,
never makes the long pause. The whole heap (`sys.getallocatedblocks()`) was the first measure tried: it grows
with every move kept (memory the collector never walks), and set off full collections of 0.5 s inside the
games benchmark's window; the oldest generation stays level there (345,000-359,000 objects over two minutes of
2,000 games). Counting it is no collection, but it stops the loop as one does: about 1 ms in a new server,
40-60 ms under 2,000 games (it touches every object it lists, mostly cache misses). So it comes every 10 s
only while the server grows, when a full collection can soon be worth it, and ever less often while the oldest
generation stays level (each count that finds it within a tenth of the last doubles the wait, up to 160 s): a
count every 10 s put three of these stops into each 30-second window of the games benchmark. Under the games
benchmark a full collection found 242 objects after one minute of 2,000 games and none after the next, and
none after 15 s of the connection flood, once the heartbeat's statement was built only once and a finished
timed table no longer a cycle with its clock (the two sources found). A server growing from nothing to 2,000
games makes one or two on the way; /metrics shows every pause (kropki_gc_pause_seconds).

Python counts allocations minus deallocations, and an old object's death counts against a young one's
birth: with 10,000 keep-alive connections, each poll replaced about seven objects that live until the
connection's next poll, so the count stood still while the youngest generation grew by 37,000 objects
a second; it was collected every 5 s or so, with 188,000 objects in 145 ms, and the middle one right
after (issue 19.1: p99 545 ms). So the young generations are also collected every YOUNG_EVERY seconds
on a timer, whatever the count says: a few thousand objects, a millisecond or two at most. (Most of
those objects are a connection's last request, which aiohttp's connection loop keeps until the next:
docs/architecture.md, "An idle connection's last request".)

What is loaded at start-up (modules, the app) is frozen out of every collection. Freezing again
later (after the restore, or after each full collection) is not done: a frozen object that later
becomes part of a garbage cycle is never freed, and it would only shorten a full collection, not
bring it near 20 ms: with 2,000 games a third of what it walks is the requests in flight (a
collection of only what came since the last one took 138 ms).
"""

from __future__ import annotations

import asyncio
import gc
import sys
from collections.abc import Callable

YOUNG_THRESHOLD = 700  # net allocations between collections of the youngest generation
# Collections of the youngest generation before one of the middle, less one: Python collects the middle
# generation when that count, zero after its own collection, is above this, so -1 makes every collection
# a middle one (above). Python 3.14's incremental collector gives the second threshold another meaning,
# so there it keeps 0: every other collection a middle one.
MIDDLE_THRESHOLD = -1 if sys.version_info < (3, 14) else 0
NEVER = 1 << 30  # the oldest generation's threshold: never reached, see timed_collections
YOUNG_EVERY = 0.05  # seconds between timed collections of the young and middle generations
# Seconds between counts of the oldest generation (40-60 ms under 2,000 games) while it grows; each count
# that finds it steady doubles the wait for the next, up to the most.
FULL_CHECK_EVERY = 10.0
FULL_CHECK_MOST = 160.0
FULL_STEADY = 1.1  # steady: at most this many times the last count
FULL_GROWTH = 2.0  # a full collection when it holds this many times its smallest since the last one


def tune_for_serving() -> None:
    """Freeze what start-up loaded, and switch to the schedule above (serve only: tests keep the
    default, which collects everything)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, NEVER)


def serving_schedule() -> bool:
    """Whether this process collects its oldest generation on the timer (tune_for_serving ran)."""
    return gc.get_threshold()[2] == NEVER


class OldGenerationCounts:
    """How long to wait before the next count of the oldest generation, and whether a count calls for a
    full collection: the count's whole policy, apart from the clock."""

    def __init__(self, first: int, check_every: float, check_most: float) -> None:
        self.check_every = check_every
        self.check_most = check_most
        self.smallest = self.last = first
        self.wait = check_every

    def doubled(self, size: int) -> bool:
        """Whether the oldest generation, counted at `size`, has grown FULL_GROWTH times over its smallest
        since the last full collection; if not, the wait for the next count is set from it."""
        if size >= self.smallest * FULL_GROWTH:
            return True
        self.smallest = min(self.smallest, size)
        level = size <= self.last * FULL_STEADY
        self.wait = min(self.wait * 2, self.check_most) if level else self.check_every
        self.last = size
        return False

    def collected(self, size: int) -> None:
        """A full collection left the oldest generation at `size`: counted from there, as at the start."""
        self.smallest = self.last = size
        self.wait = self.check_every


async def timed_collections(
    young_every: float = YOUNG_EVERY,
    check_every: float = FULL_CHECK_EVERY,
    old_objects: Callable[[], int] = lambda: len(gc.get_objects(2)),
    check_most: float = FULL_CHECK_MOST,
) -> None:
    """Collect the young generations every `young_every` seconds, and everything when the oldest
    generation has grown FULL_GROWTH times over its smallest since the last full collection, for the
    reference cycles that reached it; runs until cancelled. The oldest generation is counted every
    `check_every` seconds while it grows; each count that finds it steady (at most FULL_STEADY times
    the last count) doubles the wait for the next, up to `check_most`."""
    loop = asyncio.get_running_loop()
    counts = OldGenerationCounts(old_objects(), check_every, check_most)
    next_check = loop.time() + counts.wait
    while True:
        await asyncio.sleep(young_every)
        if loop.time() < next_check:
            gc.collect(1)
            continue
        if counts.doubled(old_objects()):
            gc.collect()
            counts.collected(old_objects())
        else:
            gc.collect(1)
        next_check = loop.time() + counts.wait
