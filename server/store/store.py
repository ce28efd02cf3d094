"""The store as the app sees it: one engine, and the parts that use it."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

from server.logs import Fields
from server.store.accounts import Accounts
from server.store.bots import Bots
from server.store.database import check_schema, migrate, open_engine, sessions
from server.store.games import Games
from server.store.hosted import HostedTournaments
from server.store.idhash import DEFAULT_COST, IdHashing
from server.store.members import member_number, reserve_table_numbers
from server.store.moderation import Moderation
from server.store.reports import Reports
from server.store.serverlock import AdvisoryLock, Holder, ServerLock, take_server_lock
from server.store.tournaments import Tournaments
from server.store.writer import StoreWriter

log = logging.getLogger(__name__)

# At a stop, what is queued gets this long to be written (docs/operations.md, "When storage fails"):
# with the requests' own time before it (app.py) and the last attempt (writer.py) a stop stays under 30 s.
FINAL_WRITE_SECONDS = 8.0
DISCONNECT_SECONDS = 3.0  # for closing the connections of a database that may not answer
# How long a member waits for its own lock: a namesake that just died (its connection not yet seen
# closed by PostgreSQL) or a member taking its tables over (a moment) lets it go within this.
MEMBER_LOCK_WAIT = 15.0


@dataclass
class Store:
    engine: AsyncEngine
    accounts: Accounts
    games: Games
    tournaments: Tournaments
    writer: StoreWriter
    hosted: HostedTournaments
    moderation: Moderation
    reports: Reports
    bots: Bots
    hashing: IdHashing  # the accounts' and the bots' id hashes, on threads of their own
    server_lock: ServerLock | None = None

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        upgrade: bool = False,
        serving: Holder | None = None,
        member: str | None = None,
        id_hash_cost: int = DEFAULT_COST,
    ) -> Store:
        """Connect; with `upgrade` bring the schema up to date, otherwise refuse an outdated one.
        `id_hash_cost`: what new hashes of registered players' ids cost (server/store/idhash.py).

        A serving process names itself in `serving`: it takes the server lock (one server per database,
        or any number of members of one cluster, named by `member`) before anything is written, or is
        refused with ServerLockError, and holds it until `close`."""
        engine = open_engine(url)
        lock = None
        try:
            if serving is not None:
                lock = await take_server_lock(engine.url, serving, shared=member is not None)
            if upgrade:
                await migrate(engine)
            await check_schema(engine)
            maker = sessions(engine)
            number = 0 if member is None else await member_number(maker, member)
            if isinstance(lock, AdvisoryLock) and member is not None:
                await lock.hold_member(number, member, MEMBER_LOCK_WAIT)
        except BaseException:
            await engine.dispose()
            if lock is not None:
                await lock.release()
            raise
        if isinstance(lock, AdvisoryLock):
            lock.watch()  # PostgreSQL drops it with its connection: taken back when lost
        hashing = IdHashing(id_hash_cost)
        parts = (
            Accounts(maker, hashing),
            Games(maker),
            Tournaments(maker),
            StoreWriter(engine, maker, number),
            HostedTournaments(maker),
            Moderation(maker),
            Reports(maker),
            Bots(maker, hashing),
        )
        return cls(engine, *parts, hashing, server_lock=lock)

    async def reserve_table_numbers(self, count: int) -> range:
        return await reserve_table_numbers(self.writer.sessions, count)

    async def close(self) -> None:
        """Write what is still queued (what storage does not take in time is logged and left), then
        disconnect; the server lock goes last, after the last write."""
        try:
            await self.writer.finish(FINAL_WRITE_SECONDS)
            self.writer.close()
            try:
                async with asyncio.timeout(DISCONNECT_SECONDS):
                    await self.engine.dispose()
            except TimeoutError:
                log.warning("database connections not closed in time %s", Fields(seconds=DISCONNECT_SECONDS))
        finally:
            self.hashing.close()
            if self.server_lock is not None:
                await self.server_lock.release()
