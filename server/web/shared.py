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
import json
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from server.web.assets import Asset
from server.web.budget import SendingBudget
from server.web.compressing import Compressed, compressed

CHECK_SECONDS = 1.0
BUILD_RATIO = 10.0
MOST_ANSWERS = 64
MOST_BYTES = 256 * 1024 * 1024
JSON = "application/json; charset=utf-8"
COMPRESSED_IN_A_THREAD = 64 * 1024  # bytes: a bigger answer is gzipped off the loop (zlib frees the GIL)


@dataclass(frozen=True)
class Built:
    """What a build made: the JSON answer (or its bytes, encoded by the build), and how to tell whether the
    hub's part of it changed."""

    answer: dict[str, Any] | bytes
    live: Callable[[], Hashable] = lambda: None  # the hub's part as it is now
    live_as_built: Hashable = None  # ... as the answer shows it
    content_type: str = JSON  # another (a zip's) is sent as built, not gzipped


@dataclass
class _Kept:
    asset: Asset
    compressed: Compressed  # its bytes, and where the next version's gzip and hash may start from
    version: Hashable
    built: Built
    built_at: float
    seconds: float  # the build's length
    checked: float
    changes: int  # the changes made here (`changed`) that it shows

    @property
    def size(self) -> int:
        return self.compressed.size


class SharedAnswers:
    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        most_answers: int = MOST_ANSWERS,
        most_bytes: int = MOST_BYTES,
        budget: SendingBudget | None = None,
    ) -> None:
        self.clock, self.most_answers, self.most_bytes = clock, most_answers, most_bytes
        self.budget = budget or SendingBudget()  # what sending the answers may take (server/web/budget.py)
        self._kept: OrderedDict[Hashable, _Kept] = OrderedDict()
        # the build running for a key, with the count of changes made here it began after
        self._flights: dict[Hashable, tuple[int, asyncio.Future[Asset | None]]] = {}
        self._changes: dict[Hashable, int] = {}  # changes made here, of the keys kept or being built
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
        changes = self._changes.get(key, 0)
        kept = self._kept.get(key)
        if kept is not None and kept.changes == changes and self._still_good(kept, self.clock()):
            self._kept.move_to_end(key)
            return kept.asset
        running = self._flights.get(key)
        if running is None or running[0] != changes:  # not one begun before a change made here
            flight = asyncio.ensure_future(self._refresh(key, version, build, changes))
            self._flights[key] = (changes, flight)
            flight.add_done_callback(lambda done: self._landed(key, done))
        else:
            flight = running[1]
        # a client that goes away stops waiting; the build goes on for the others
        return await asyncio.shield(flight)

    @staticmethod
    def _still_good(kept: _Kept, now: float) -> bool:
        """Checked with the store within the second, and the hub's part as built (or not yet due)."""
        return now < kept.checked + CHECK_SECONDS and (
            kept.built.live() == kept.built.live_as_built or now < kept.built_at + BUILD_RATIO * kept.seconds
        )

    def holds(self, key: Hashable) -> bool:
        """The answer is kept or being built."""
        return key in self._kept or key in self._flights

    def changed(self, *keys: Hashable) -> None:
        """A request here changed what these answers show (a player joined, an organiser set up a
        table): the next request gets them built after the change, whatever BUILD_RATIO says, and not
        by a build begun before it. Until 2026-12-02 a second change within the ratio's window was
        held back, and the client, which reads tournaments.json at once after a join and then every
        30 s, showed no Withdraw button to the second of two players joining. The changes made here are
        few (the entry limits bound a player joining and leaving in a loop)."""
        for key in keys:
            if key in self._kept or key in self._flights:
                self._changes[key] = self._changes.get(key, 0) + 1

    def _landed(self, key: Hashable, flight: asyncio.Future[Asset | None]) -> None:
        if (running := self._flights.get(key)) is not None and running[1] is flight:
            del self._flights[key]
            if key not in self._kept:
                self._changes.pop(key, None)
        if not flight.cancelled():
            flight.exception()  # retrieved: every waiter may have gone

    async def _refresh(
        self,
        key: Hashable,
        version: Callable[[], Awaitable[Hashable]],
        build: Callable[[], Awaitable[Built | None]],
        changes: int,
    ) -> Asset | None:
        seen = await version()  # before the build: whatever it reads is at least this new
        kept = self._kept.get(key)
        now = self.clock()
        if (
            kept is not None
            and kept.changes == changes
            and (
                (seen == kept.version and kept.built.live() == kept.built.live_as_built)
                or now < kept.built_at + BUILD_RATIO * kept.seconds
            )
        ):
            kept.checked = now
            self._kept.move_to_end(key)
            return kept.asset
        started = self.clock()
        built = await build()
        if built is None:
            self._kept.pop(key, None)
            return None
        last = kept.compressed if kept is not None else None
        encoded = await _encoded(built, last)
        asset = Asset(encoded.body, encoded.gzipped, built.content_type, encoded.etag)
        self.builds += 1
        now = self.clock()
        kept = self._kept.get(key)
        if kept is None or kept.changes <= changes:  # not over one built after a later change
            self._kept[key] = _Kept(asset, encoded, seen, built, now, now - started, now, changes)
            self._kept.move_to_end(key)
            self._forget_beyond_bounds()
        return asset

    def _forget_beyond_bounds(self) -> None:
        """The least recently asked for go first; the newest stays, however big."""
        size = self.size
        while len(self._kept) > 1 and (len(self._kept) > self.most_answers or size > self.most_bytes):
            key, gone = self._kept.popitem(last=False)
            size -= gone.size
            if key not in self._flights:
                self._changes.pop(key, None)


async def _encoded(built: Built, last: Compressed | None) -> Compressed:
    """The answer's bytes as json_response writes them, gzipped once (JSON), and their ETag; a big one
    off the loop, from where its bytes stop being `last`'s (server/web/compressing.py)."""
    answer = built.answer
    body = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
    compress = built.content_type == JSON
    if len(body) > COMPRESSED_IN_A_THREAD:  # the hash too: 24 MB of it took 48 ms of the loop
        return await asyncio.to_thread(compressed, body, compress, last)
    return compressed(body, compress)


SHARED_ANSWERS_KEY = web.AppKey("shared_answers", SharedAnswers)
