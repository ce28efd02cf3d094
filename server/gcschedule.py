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

So here the young collections run often and stay small (700, then the middle generation at every
other one: a few milliseconds each), and the oldest generation is never collected automatically.
What dies there by its reference count (nearly everything: finished requests, closed tables) is
freed at once as always; only reference cycles wait for a full collection. A full collection walks
every live object (about 0.3 s with 2,000 games; their moves are not among them: the engine keeps them
as flat tuples the collector stops tracking), so it runs only when it can be worth its pause: when the
heap (`sys.getallocatedblocks()`, looked at every FULL_CHECK_EVERY seconds) has doubled since it was
smallest after the last one, as Go's collector does with its default GOGC=100. Garbage cycles can
then never take more memory than what is alive, and a server in a steady state, however large, never
makes the long pause: under the games benchmark a full collection found 242 objects after one minute
of 2,000 games and none after the next, and none after 15 s of the connection flood, once the
heartbeat's statement was built only once and a finished timed table no longer a cycle with its
clock (the two sources found). A server growing from nothing to 2,000 games makes one or two on the
way, each shorter than the last would be; /metrics shows every pause (kropki_gc_pause_seconds).

Python counts allocations minus deallocations, and an old object's death counts against a young one's
birth: with 10,000 keep-alive connections, each poll replaced about seven objects that live until the
connection's next poll, so the count stood still while the youngest generation grew by 37,000 objects
a second; it was collected every 5 s or so, with 188,000 objects in 145 ms, and the middle one right
after (issue 19.1: p99 545 ms). So the young generations are also collected every YOUNG_EVERY seconds
on a timer, whatever the count says: a few thousand objects, a millisecond or two at most. (Most of
those objects were a connection's last request, which server/web/requestloop.py now lets go at once.)

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
# collections of the youngest generation, beyond the first, before one of the middle: 0 makes every
# other collection a middle one, so a survivor is walked 1.5 times on average before it is old, not 1.67
MIDDLE_THRESHOLD = 0
NEVER = 1 << 30  # the oldest generation's threshold: never reached, see timed_collections
YOUNG_EVERY = 0.05  # seconds between timed collections of the young and middle generations
FULL_CHECK_EVERY = 10.0  # seconds between looks at the heap's size (one look: well under a millisecond)
FULL_GROWTH = 2.0  # a full collection when the heap holds this many times its smallest since the last


def tune_for_serving() -> None:
    """Freeze what start-up loaded, and switch to the schedule above (serve only: tests keep the
    default, which collects everything)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, NEVER)


def serving_schedule() -> bool:
    """Whether this process collects its oldest generation on the timer (tune_for_serving ran)."""
    return gc.get_threshold()[2] == NEVER


async def timed_collections(
    young_every: float = YOUNG_EVERY,
    check_every: float = FULL_CHECK_EVERY,
    heap_size: Callable[[], int] = sys.getallocatedblocks,
) -> None:
    """Collect the young generations every `young_every` seconds, and everything when the heap has
    grown FULL_GROWTH times over its smallest size since the last full collection (looked at every
    `check_every` seconds), for the reference cycles that reached the oldest generation; runs until
    cancelled."""
    loop = asyncio.get_running_loop()
    smallest = heap_size()
    next_check = loop.time() + check_every
    while True:
        await asyncio.sleep(young_every)
        if loop.time() >= next_check:
            next_check = loop.time() + check_every
            size = heap_size()
            if size >= smallest * FULL_GROWTH:
                gc.collect()
                smallest = heap_size()
                continue
            smallest = min(smallest, size)
        gc.collect(1)
