"""The store as the app sees it: one engine, and the parts that use it."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

from server.store.accounts import Accounts
from server.store.database import check_schema, migrate, open_engine, sessions
from server.store.games import Games
from server.store.tournaments import Tournaments
from server.store.writer import StoreWriter


@dataclass
class Store:
    engine: AsyncEngine
    accounts: Accounts
    games: Games
    tournaments: Tournaments
    writer: StoreWriter

    @classmethod
    async def open(cls, url: str, *, upgrade: bool = False) -> Store:
        """Connect; with `upgrade` bring the schema up to date, otherwise refuse an outdated one."""
        engine = open_engine(url)
        try:
            if upgrade:
                await migrate(engine)
            await check_schema(engine)
        except BaseException:
            await engine.dispose()
            raise
        maker = sessions(engine)
        return cls(engine, Accounts(maker), Games(maker), Tournaments(maker), StoreWriter(engine, maker))

    async def close(self) -> None:
        """Write what is still queued, then disconnect."""
        await self.writer.flush()
        self.writer.close()
        await self.engine.dispose()
