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
freed at once as always; only reference cycles wait for the full collection, which runs every
FULL_EVERY seconds on a timer. Its pause is the one long pause left, and /metrics shows it.

What is loaded at start-up (modules, the app) is frozen out of every collection. Freezing again
later (after the restore, or periodically) is not done: a frozen object that later becomes part of
a garbage cycle is never freed (every room is such a cycle with its clock), and with the oldest
generation collected on a timer anyway, freezing would only shorten that one collection.
"""

from __future__ import annotations

import asyncio
import gc

YOUNG_THRESHOLD = 700  # net allocations between collections of the youngest generation
MIDDLE_THRESHOLD = 1  # youngest-generation collections between collections of the middle one
NEVER = 1 << 30  # the oldest generation's threshold: never reached, it is collected on the timer
FULL_EVERY = 300.0  # seconds between full collections


def tune_for_serving() -> None:
    """Freeze what start-up loaded, and switch to the schedule above (serve only: tests keep the
    default, which collects everything)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, NEVER)


def serving_schedule() -> bool:
    """Whether this process collects its oldest generation on the timer (tune_for_serving ran)."""
    return gc.get_threshold()[2] == NEVER


async def full_collections(every: float = FULL_EVERY) -> None:
    """Collect everything every `every` seconds, for the reference cycles that reached the oldest
    generation; runs until cancelled."""
    while True:
        await asyncio.sleep(every)
        gc.collect()
