"""A database at every earlier revision, with rows in every table, upgraded to head keeps every row and
every link between rows; a player upgraded keeps their login, games, rating history and ignore list, and
takes guests' private lines as before."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from alembic import command
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    Integer,
    MetaData,
    insert,
    inspect,
    select,
    text,
)
from sqlalchemy.engine import Connection

from server.store.database import (
    alembic_config,
    as_utc,
    current_revision,
    head_revision,
    in_one_transaction,
    migrate,
    open_engine,
)
from server.store.idhash import MIN_COST, IdHashing
from server.store.store import Store
from tests.store.test_accounts import registered_id

EARLIER = [f"{number:04d}" for number in range(1, int(head_revision()))]
JSON_COLUMNS = {"tables", "blocked", "ignored", "boards", "context", "data", "value"}


def value_for(column: Column[Any]) -> object:
    """A value of the column's type: 1 for every key, so that each row refers to the others."""
    kind = column.type
    if isinstance(kind, Boolean):
        return True
    if isinstance(kind, Integer | BigInteger):
        return 1
    if isinstance(kind, Float):
        return 1.5
    if isinstance(kind, DateTime):
        return datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    return "[]" if column.name in JSON_COLUMNS else "a"


def comparable(row: dict[str, object]) -> dict[str, object]:
    return {name: as_utc(v) if isinstance(v, datetime) else v for name, v in row.items()}


@pytest.mark.parametrize("revision", EARLIER)
async def test_an_upgrade_from_every_revision_keeps_every_row(empty_database: str, revision: str) -> None:
    engine = open_engine(empty_database)
    try:
        tables = MetaData()
        async with engine.begin() as connection:
            await connection.run_sync(lambda sync: command.upgrade(alembic_config(sync), revision))
            await connection.run_sync(lambda sync: tables.reflect(sync))
            for table in tables.sorted_tables:
                if table.name != "alembic_version":
                    await connection.execute(
                        insert(table).values({c.name: value_for(c) for c in table.columns})
                    )
            before = {
                table.name: [
                    comparable(dict(row._mapping)) for row in await connection.execute(select(table))
                ]
                for table in tables.sorted_tables
                if table.name != "alembic_version"
            }
        await migrate(engine)
        upgraded = MetaData()
        async with engine.connect() as connection:
            await connection.run_sync(lambda sync: upgraded.reflect(sync))
            if engine.dialect.name == "sqlite":  # the connection the upgrade ran on enforces them again
                assert (await connection.exec_driver_sql("PRAGMA foreign_keys")).scalar() == 1
            after = {
                name: [
                    comparable(dict(row._mapping))
                    for row in await connection.execute(select(upgraded.tables[name]))
                ]
                for name in before
            }
    finally:
        await engine.dispose()
    # a column a later revision dropped (users.moderator, made a role) is left out of the comparison
    kept = {
        name: [{c: row[c] for c in row if c in upgraded.tables[name].c} for row in rows]
        for name, rows in before.items()
    }
    assert {
        name: [{c: row[c] for c in rows[0]} for row in after[name]] for name, rows in kept.items()
    } == kept


async def test_a_player_keeps_games_ratings_and_ignored_players_across_the_upgrade(
    empty_database: str,
) -> None:
    """Upgrading an SQLite database copies `users` (0013 drops a column): the copy must not take the
    other tables' rows that refer to the accounts with it."""
    engine = open_engine(empty_database)
    secret = IdHashing(MIN_COST).hash(registered_id("Ann", "pw"))
    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.upgrade(alembic_config(sync), "0012"))
        await connection.execute(
            text(
                "INSERT INTO users (id, nick, nick_key, login_key, look_key, secret_hash, email, lang,"
                " avatar, about, registered_at, rating, deviation, volatility, wins, draws, losses,"
                " moderator)"
                " VALUES (1, 'Ann', 'ann', 'ann', 'ann', :secret, '', 'en', '', '', :at, 1510, 340, 0.06,"
                " 1, 0, 0, false)"
            ),
            {"secret": secret, "at": datetime(2026, 1, 1, tzinfo=UTC)},
        )
        await connection.execute(
            text(
                "INSERT INTO games (number, finished_at, blue_nick, red_nick, blue_id, red_id, game_type,"
                " result, rated, sgf) VALUES (1, :at, 'Ann', '*Gus', 1, NULL, '1010s0..a.R.n....', 'B+R',"
                " false, '(;GM[40]FF[4]SZ[10])')"
            ),
            {"at": datetime(2026, 1, 2, tzinfo=UTC)},
        )
        await connection.execute(
            text("INSERT INTO rating_changes VALUES (1, 1, :at, 1510, 340)"),
            {"at": datetime(2026, 1, 2, tzinfo=UTC)},
        )
        await connection.execute(
            text("INSERT INTO ignored_players VALUES (1, '*troll', '*Troll', :at)"),
            {"at": datetime(2026, 1, 2, tzinfo=UTC)},
        )
    await migrate(engine)
    await engine.dispose()

    store = await Store.open(empty_database, id_hash_cost=MIN_COST)
    try:
        account = await store.accounts.authenticate("Ann", registered_id("Ann", "pw"))
        games = await store.games.recent("Ann", 10)
        ratings = await store.games.ratings("Ann")
    finally:
        await store.close()
    assert account is not None and account.ignored == ("*Troll",)
    assert account.refuses_guest_privates is False  # an account from before 0018 takes guests' lines
    assert [game.number for game in games] == [1]
    assert [(point.game_number, point.rating) for point in ratings] == [(1, 1510)]


async def test_an_upgrade_that_fails_part_way_changes_nothing_and_can_run_again(empty_database: str) -> None:
    """On SQLite a revision's first change (0013's new column) was committed by itself, outside the
    transaction: an upgrade killed or failing after it (a full disk while a table is copied) left the
    database at 0012 with that column, and every later `migrate` failed on "duplicate column name"."""
    engine = open_engine(empty_database)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(lambda sync: command.upgrade(alembic_config(sync), "0012"))
            tables_before = await connection.run_sync(lambda sync: sorted(inspect(sync).get_table_names()))

        def upgrade_then_fail(sync: Connection) -> None:
            command.upgrade(alembic_config(sync), "0014")
            raise InterruptedError("the upgrade stopped here")

        async with engine.connect() as connection:
            with pytest.raises(InterruptedError):
                await connection.run_sync(
                    lambda sync: in_one_transaction(sync, lambda: upgrade_then_fail(sync))
                )
        async with engine.connect() as connection:
            users = await connection.run_sync(
                lambda sync: {c["name"] for c in inspect(sync).get_columns("users")}
            )
            tables_after = await connection.run_sync(lambda sync: sorted(inspect(sync).get_table_names()))
        assert await current_revision(engine) == "0012"
        assert "role" not in users and "moderator" in users and tables_after == tables_before

        await migrate(engine)
        assert await current_revision(engine) == head_revision()
    finally:
        await engine.dispose()
