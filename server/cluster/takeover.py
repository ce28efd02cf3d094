"""Taking over the tables of members that died (docs/cluster.md, "Take-over").

A member that dies (SIGKILL, a machine gone) leaves its open tables in the store, owned by it. Each time
the live members change, and once a minute, every member asks the store for the open tables of members
that are not alive; the store hands them over only while nobody holds the dead member's own lock, so
never from a member that is alive or restarting (server/store/restart.py, `take_orphans`). The tables
come back as after a restart, and their players, whose requests nginx now sends to live members, sit
down at them again from wherever their sessions moved.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from server.cluster import calls
from server.logs import Fields
from server.store.outage import unavailable

log = logging.getLogger(__name__)

CHECK_EVERY = 60.0  # seconds between two looks when the members did not change
AGAIN_AFTER = 2.0  # seconds before the next look while a member not alive still holds its lock

Journals = dict[int, list[tuple[int, str, dict[str, Any]]]]


class TakeOver:
    def __init__(
        self,
        take_orphans: Callable[[tuple[str, ...]], Awaitable[tuple[Journals, bool]]],
        restore: Callable[[Journals], None],
        alive: Callable[[], tuple[str, ...] | None],
    ) -> None:
        """`alive()`: the live members' names, None while Redis is unreachable (nothing is taken then:
        a member cut off cannot tell the dead from the unheard, though their locks would say)."""
        self._take_orphans, self._restore, self._alive = take_orphans, restore, alive
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._look_forever(), name="cluster take-over")

    async def stop(self) -> None:
        await calls.cancel(self._task)
        self._task = None

    def members_changed(self, members: tuple[str, ...]) -> None:
        self._wake.set()

    async def _look_forever(self) -> None:
        wait = CHECK_EVERY
        while True:
            try:
                async with asyncio.timeout(wait):
                    await self._wake.wait()
            except TimeoutError:
                pass
            self._wake.clear()
            wait = CHECK_EVERY
            alive = self._alive()
            if alive is None:
                continue
            try:
                journals, held = await self._take_orphans(alive)
            except Exception as failure:
                if unavailable(failure) is None:
                    log.exception("tables of dead members not looked for")
                continue  # the database is away: the next change or the next minute tries again
            if held:  # a member stopping (writing its last entries) or starting: soon again
                wait = AGAIN_AFTER
            if journals:
                log.info("tables of dead members taken over %s", Fields(tables=len(journals)))
                self._restore(journals)
