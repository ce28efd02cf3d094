"""A tournament's tables read since a count of its changes (server/store/changes.py): what an arena's wave
reads instead of every game. Every write that changes a row shows in the next read: a table set up, its
game archived, an account's deletion renaming its finished games' players; and on PostgreSQL a game
whose transaction commits after a later-numbered one's."""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import event, select, text

from server.config import Settings
from server.engine.board import BLACK
from server.store import tournaments
from server.store.models import TournamentTable
from server.store.store import Store
from server.store.tournaments import TableRecord
from tests.conftest import POSTGRES
from tests.store.test_accounts import registered_id
from tests.store.test_rating_history import finished

NAME = "Night Arena"
GAME_TYPE = "1010s0..a.R.n...."


@pytest.fixture
async def store(settings: Settings) -> AsyncIterator[Store]:
    opened = await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost)
    yield opened
    await opened.close()


async def set_up(store: Store, uid: int, blue: str, red: str, tournament: str = NAME) -> None:
    store.writer.tournament_table(uid, tournament, None, blue, red, GAME_TYPE)
    await store.writer.flush()


def archive(store: Store, uid: int, blue: str, red: str, numbers: list[int]) -> None:
    """Queue the game of table `uid` into the archive; its archive number goes to `numbers`."""
    game = replace(finished(uid, blue, red, BLACK, rated=False), tournament=NAME)
    store.writer.archive(game, lambda number, _accounts: numbers.append(number))


def mark(rows: list[TableRecord]) -> int:
    return max(row.changed for row in rows)


async def test_a_read_since_a_count_gives_the_tables_set_up_and_ended_after_it(store: Store) -> None:
    await set_up(store, 1, "Ala", "Bob")
    await set_up(store, 2, "Cyd", "Dan")
    first = await store.tournaments.tables(NAME)
    assert await store.tournaments.tables(NAME, mark(first)) == []

    archive(store, 1, "Ala", "Bob", [])
    await set_up(store, 3, "Ala", "Cyd")
    await set_up(store, 4, "Eve", "Fay", tournament="Another Arena")
    changed = await store.tournaments.tables(NAME, mark(first))

    assert [(row.uid, row.result) for row in changed] == [(1, "B+R"), (3, None)]
    assert changed[0].finished_at is not None and changed[0].changed > mark(first)
    assert await store.tournaments.tables(NAME, mark(changed)) == []
    whole = {row.uid: row for row in await store.tournaments.tables(NAME)}
    assert whole == {**{row.uid: row for row in first}, **{row.uid: row for row in changed}}


async def test_a_deleted_accounts_finished_games_are_read_again_under_its_deleted_name(store: Store) -> None:
    """The deletion rewrites the nicks of tables whose games were read long ago: a wave that read only
    the tables ended since kept "Bob" in the standings."""
    for nick in ("Ala", "Bob"):
        await store.accounts.register(nick, registered_id(nick, "pw"), "", "en")
    await set_up(store, 1, "Ala", "Bob")
    await set_up(store, 2, "Ala", "Cyd")
    archive(store, 1, "Ala", "Bob", [])
    await store.writer.flush()
    before = await store.tournaments.tables(NAME)

    await store.accounts.delete("Bob")  # account number 2
    changed = await store.tournaments.tables(NAME, mark(before))

    assert [(row.uid, row.blue, row.red, row.result) for row in changed] == [(1, "Ala", "deleted2", "B+R")]
    assert await store.tournaments.tables(NAME, mark(changed)) == []


@pytest.mark.skipif(not POSTGRES, reason="PostgreSQL: set KROPKI_TEST_DB (scripts/with-postgres)")
async def test_a_game_committed_after_a_later_numbered_one_is_read_after_it(settings: Settings) -> None:
    """Two members archive two games of the arena at once, each in its own transaction: the first takes
    the lower archive number, waits (for a row lock held here), and commits after the second. A read
    between the two commits sees the second game; the next read, since what that one read, the first:
    "archive number (or table, or time) above the last read" would have missed it for good."""
    first = await Store.open(settings.db_url, member="a", id_hash_cost=settings.id_hash_cost)
    second = await Store.open(settings.db_url, member="b", id_hash_cost=settings.id_hash_cost)
    try:
        await set_up(first, 1, "Ala", "Bob")
        await set_up(first, 2, "Cyd", "Dan")
        read = mark(await first.tournaments.tables(NAME))
        late_number: list[int] = []
        early_number: list[int] = []
        async with first.engine.connect() as holder:
            await holder.begin()
            await holder.execute(
                select(TournamentTable.uid).where(TournamentTable.uid == 1).with_for_update()
            )
            archive(first, 1, "Ala", "Bob", late_number)
            late = asyncio.ensure_future(first.writer.flush())
            await waiting_for_a_lock(first)  # its game has its archive number; its table's row waits
            archive(second, 2, "Cyd", "Dan", early_number)
            await second.writer.flush()
            between = await first.tournaments.tables(NAME, read)
            assert [row.uid for row in between] == [2] and not late.done()
            await holder.rollback()
        await late

        assert late_number < early_number, "table 1's game took the lower number and was committed last"
        after = await first.tournaments.tables(NAME, mark(between))
        assert [(row.uid, row.result) for row in after] == [(1, "B+R")]
    finally:
        await first.close()
        await second.close()


async def waiting_for_a_lock(store: Store) -> None:
    """Until a connection waits for a lock (the writer's transaction, for the row the test holds); each
    look on a connection of its own: PostgreSQL keeps a transaction's first view of pg_stat_activity."""
    for _ in range(500):
        async with store.engine.connect() as probe:
            if await probe.scalar(
                text("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
            ):
                return
        await asyncio.sleep(0.01)
    raise AssertionError("the writer never waited for the row")


async def test_a_whole_read_lets_the_loop_run_between_pages(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole read (a director's first wave, a page's first build after a start) made its rows in one
    go on the event loop: 0.7 to 0.8 s at 108,000 tables, every player waiting."""
    monkeypatch.setattr(tournaments, "WHOLE_READ_PAGE", 10)
    for uid in range(1, 101):
        store.writer.tournament_table(uid, NAME, None, f"p{uid}", f"q{uid}", GAME_TYPE)
    await store.writer.flush()
    turns = 0
    turns_at_each_page: list[int] = []

    async def others() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    def page_read(_connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if "FROM tournament_tables" in statement:
            turns_at_each_page.append(turns)

    other = asyncio.create_task(others())
    event.listen(store.engine.sync_engine, "after_cursor_execute", page_read)
    try:
        rows = await store.tournaments.tables(NAME)
    finally:
        event.remove(store.engine.sync_engine, "after_cursor_execute", page_read)
        other.cancel()

    assert [row.uid for row in rows] == list(range(1, 101))
    assert len(turns_at_each_page) == 11  # 10 pages and an empty one (before: one read of everything)
    assert all(b > a for a, b in itertools.pairwise(turns_at_each_page))  # the others ran between pages


async def test_a_change_committed_between_two_pages_is_read_next_time(
    store: Store, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every page of a whole read is of one snapshot: the highest count among its rows still says that
    every change up to it was read. A deletion committed after the first page renames a table there and
    one on a later page; read in pages of their own, the later one came with the new count, and the
    read after it missed the first."""
    monkeypatch.setattr(tournaments, "WHOLE_READ_PAGE", 2)
    for nick in ("Ala", "Bob"):
        await store.accounts.register(nick, registered_id(nick, "pw"), "", "en")
    for uid, blue, red in [(1, "Ala", "Bob"), (2, "Cyd", "Dan"), (3, "Eve", "Fay"), (4, "Gus", "Hal")]:
        await set_up(store, uid, blue, red)
    await set_up(store, 5, "Bob", "Ala")
    archive(store, 1, "Ala", "Bob", [])
    archive(store, 5, "Bob", "Ala", [])
    await store.writer.flush()
    deleted = False

    def delete_bob(_connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
        """After the first page's statement: the deletion, by another process's connection."""
        nonlocal deleted
        if deleted or "FROM tournament_tables" not in statement:
            return
        deleted = True

        async def elsewhere() -> None:
            other = await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost)
            try:
                await other.accounts.delete("Bob")
            finally:
                await other.close()

        deletion = threading.Thread(target=asyncio.run, args=(elsewhere(),))
        deletion.start()
        deletion.join()

    sync_engine = store.engine.sync_engine
    event.listen(sync_engine, "after_cursor_execute", delete_bob)
    try:
        whole = await store.tournaments.tables(NAME)
    finally:
        event.remove(sync_engine, "after_cursor_execute", delete_bob)

    assert deleted and [row.uid for row in whole] == [1, 2, 3, 4, 5]
    assert "Bob" in (whole[0].red, whole[4].blue)  # the snapshot before the deletion, whole
    changed = await store.tournaments.tables(NAME, mark(whole))
    assert [(row.uid, row.blue, row.red) for row in changed] == [
        (1, "Ala", "deleted2"),
        (5, "deleted2", "Ala"),
    ]
