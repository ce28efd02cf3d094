"""Table numbers: counted on by a server alone, taken from reserved blocks by a member of a cluster."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

TABLE_BLOCK = 1000  # table numbers a member of a cluster reserves at once; the next block is asked for ...
TABLE_BLOCK_LOW = 250  # ... while this many are left


class TableNumbers:
    """Where a new table's number comes from. A server alone counts on from the highest number it has
    stored. A member of a cluster takes them from blocks reserved in the shared database, so that no
    two members hand out the same one (docs/cluster.md); it asks for the next block while a quarter of
    the current one is left, and reports no number only if 250 tables opened within one round trip."""

    def __init__(self) -> None:
        self.next_uid = 1
        self._reserve: Callable[[int], Awaitable[range]] | None = None
        self._block = range(0)
        self._next_block: range | None = None
        self._asking: asyncio.Task[None] | None = None

    def reserve_from(self, reserve: Callable[[int], Awaitable[range]], first: range) -> None:
        """From now on, numbers from blocks `reserve(count)` hands out; `first` is the first block."""
        self._reserve, self._block = reserve, first

    def available(self) -> bool:
        return self._reserve is None or bool(self._block) or bool(self._next_block)

    def take(self) -> int:
        if self._reserve is None:
            self.next_uid += 1
            return self.next_uid - 1
        if not self._block and self._next_block is not None:
            self._block, self._next_block = self._next_block, None
        uid, self._block = self._block[0], self._block[1:]
        if len(self._block) < TABLE_BLOCK_LOW and self._next_block is None and self._asking is None:
            self._asking = asyncio.get_running_loop().create_task(self._ask())
        return uid

    async def _ask(self) -> None:
        assert self._reserve is not None
        try:
            self._next_block = await self._reserve(TABLE_BLOCK)
        except Exception:  # storage failing: asked again at the next table
            log.exception("table numbers could not be reserved")
        finally:
            self._asking = None

    def close(self) -> None:
        if self._asking is not None:
            self._asking.cancel()
