"""Public answers that anyone may ask for in a loop and that cost a whole read to build (a tournament's
tables and standings, `/tournaments.json`): built once and shared by every request until they change
(docs/tournaments.md, "How fresh the answers are").

An answer's live part (what the hub says now, compared with what the build saw) is checked at every
request, its version (what the store says, read before the build) at most once every CHECK_SECONDS.
A changed one is built again, but no sooner than BUILD_RATIO times its last build's length after that build: a
tournament whose answer takes 1 s to build (an arena of 108,000 games) is rebuilt at most every 10 s
however often it changes, so that no answer takes more than about a tenth of the event loop. Requests
that come during a check or a build wait for it: one build, however many ask at once. At most
MOST_ANSWERS answers and MOST_BYTES of them are kept, the least recently asked for forgotten first; a
build that finds nothing (a name without a tournament) keeps nothing.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import math
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from server.web.assets import Asset

CHECK_SECONDS = 1.0
BUILD_RATIO = 10.0
MOST_ANSWERS = 64
MOST_BYTES = 256 * 1024 * 1024
JSON = "application/json; charset=utf-8"
COMPRESSED_IN_A_THREAD = 64 * 1024  # bytes: a bigger answer is gzipped off the loop (zlib frees the GIL)


@dataclass(frozen=True)
class Built:
    """What a build made: the JSON answer, and how to tell whether the hub's part of it changed."""

    answer: dict[str, Any]
    live: Callable[[], Hashable] = lambda: None  # the hub's part as it is now
    live_as_built: Hashable = None  # ... as the answer shows it


@dataclass
class _Kept:
    asset: Asset
    version: Hashable
    built: Built
    built_at: float
    seconds: float  # the build's length
    checked: float
    may_hurry_after: float  # when `changed` may next have it built before BUILD_RATIO allows

    @property
    def size(self) -> int:
        return len(self.asset.body) + len(self.asset.gzipped or b"")


class SharedAnswers:
    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        most_answers: int = MOST_ANSWERS,
        most_bytes: int = MOST_BYTES,
    ) -> None:
        self.clock, self.most_answers, self.most_bytes = clock, most_answers, most_bytes
        self._kept: OrderedDict[Hashable, _Kept] = OrderedDict()
        self._flights: dict[Hashable, asyncio.Future[Asset | None]] = {}
        self.builds = 0  # answers built since the start (/metrics would show it; the tests count it)

    def __len__(self) -> int:
        return len(self._kept)

    @property
    def size(self) -> int:
        return sum(kept.size for kept in self._kept.values())

    async def get(
        self,
        key: Hashable,
        version: Callable[[], Awaitable[Hashable]],
        build: Callable[[], Awaitable[Built | None]],
    ) -> Asset | None:
        """The answer for `key`, as shared; None when the build found nothing to answer."""
        kept = self._kept.get(key)
        if kept is not None and self._still_good(kept, self.clock()):
            self._kept.move_to_end(key)
            return kept.asset
        flight = self._flights.get(key)
        if flight is None:
            flight = self._flights[key] = asyncio.ensure_future(self._refresh(key, version, build))
            flight.add_done_callback(lambda done: self._landed(key, done))
        # a client that goes away stops waiting; the build goes on for the others
        return await asyncio.shield(flight)

    @staticmethod
    def _still_good(kept: _Kept, now: float) -> bool:
        """Checked with the store within the second, and the hub's part as built (or not yet due)."""
        return now < kept.checked + CHECK_SECONDS and (
            kept.built.live() == kept.built.live_as_built or now < kept.built_at + BUILD_RATIO * kept.seconds
        )

    def changed(self, *keys: Hashable) -> None:
        """A request here changed what these answers show (a player joined, an organiser set up a
        table): the next request builds them again at once, but no more than once a BUILD_RATIO window,
        so that a player joining and leaving in a loop cannot make a big answer build all the time."""
        now = self.clock()
        for key in keys:
            kept = self._kept.get(key)
            if kept is not None:
                kept.version, kept.checked = object(), -math.inf
                if now >= kept.may_hurry_after:
                    kept.built_at, kept.may_hurry_after = -math.inf, math.inf

    def _landed(self, key: Hashable, flight: asyncio.Future[Asset | None]) -> None:
        if self._flights.get(key) is flight:
            del self._flights[key]
        if not flight.cancelled():
            flight.exception()  # retrieved: every waiter may have gone

    async def _refresh(
        self,
        key: Hashable,
        version: Callable[[], Awaitable[Hashable]],
        build: Callable[[], Awaitable[Built | None]],
    ) -> Asset | None:
        seen = await version()  # before the build: whatever it reads is at least this new
        kept = self._kept.get(key)
        now = self.clock()
        if kept is not None and (
            (seen == kept.version and kept.built.live() == kept.built.live_as_built)
            or now < kept.built_at + BUILD_RATIO * kept.seconds
        ):
            kept.checked = now
            self._kept.move_to_end(key)
            return kept.asset
        started = self.clock()
        built = await build()
        if built is None:
            self._kept.pop(key, None)
            return None
        asset = await _encoded(built.answer)
        self.builds += 1
        now, hurried = self.clock(), kept is not None and kept.may_hurry_after == math.inf
        seconds = now - started
        hurry_after = now + BUILD_RATIO * seconds if hurried else now
        self._kept[key] = _Kept(asset, seen, built, now, seconds, now, hurry_after)
        self._kept.move_to_end(key)
        self._forget_beyond_bounds()
        return asset

    def _forget_beyond_bounds(self) -> None:
        """The least recently asked for go first; the newest stays, however big."""
        size = self.size
        while len(self._kept) > 1 and (len(self._kept) > self.most_answers or size > self.most_bytes):
            _, gone = self._kept.popitem(last=False)
            size -= gone.size


async def _encoded(answer: dict[str, Any]) -> Asset:
    """The answer's bytes as json_response writes them, gzipped once, and their ETag."""
    body = json.dumps(answer).encode()
    if len(body) > COMPRESSED_IN_A_THREAD:
        gzipped = await asyncio.to_thread(gzip.compress, body, 6, mtime=0)
    else:
        gzipped = gzip.compress(body, 6, mtime=0)
    return Asset(body, gzipped, JSON, '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"')


SHARED_ANSWERS_KEY = web.AppKey("shared_answers", SharedAnswers)
