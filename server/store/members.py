"""What the store knows of a cluster's members: their numbers, and the table numbers they reserve.

Members of a cluster share one database (docs/cluster.md). Each has a number, kept under its name in
`members` and written into what it owns (tables, sessions, journal entries), so that a member that
restarts reads back its own and no one else's. Table numbers must not collide across members: each
member reserves them in blocks from one counter in `server_state`, moved by a single UPDATE, which
PostgreSQL serialises between members.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import BigInteger, cast, func, literal, select, update
from sqlalchemy.ext.asyncio import async_sessionmaker

from server.store.database import insert_with_on_conflict
from server.store.models import LiveTable, Member, ServerState

TABLE_MARK = "table_mark"  # server_state: every table number below it is used or reserved


async def member_number(sessions: async_sessionmaker, name: str) -> int:
    """The number of the member called `name`, given at its first start and the same ever after."""
    async with sessions.begin() as session:
        insert = insert_with_on_conflict(session.bind.dialect, Member.__table__)
        await session.execute(
            insert.values(name=name, joined_at=datetime.now(UTC)).on_conflict_do_nothing(
                index_elements=["name"]
            )
        )
        return (await session.scalars(select(Member.id).where(Member.name == name))).one()


async def reserve_table_numbers(sessions: async_sessionmaker, count: int) -> range:
    """`count` table numbers no one else has or will have: the counter starts above every table ever
    opened, so numbers of a server that ran alone before are not handed out again."""
    async with sessions.begin() as session:
        insert = insert_with_on_conflict(session.bind.dialect, ServerState.__table__)
        first = select(
            literal(TABLE_MARK), cast(func.coalesce(func.max(LiveTable.uid), 0) + 1, ServerState.value.type)
        )
        await session.execute(
            insert.from_select(["name", "value"], first).on_conflict_do_nothing(index_elements=["name"])
        )
        mark = cast(cast(ServerState.value, BigInteger) + count, ServerState.value.type)
        new = await session.scalar(
            update(ServerState)
            .where(ServerState.name == TABLE_MARK)
            .values(value=mark)
            .returning(ServerState.value)
        )
    end = int(new)
    return range(end - count, end)
