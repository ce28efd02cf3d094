"""Alembic owns the schema: empty to head, models and migrations agree, and old schemas are refused."""

from __future__ import annotations

import os
from datetime import UTC, datetime

import pytest
from aiohttp.test_utils import TestServer
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import column, insert, inspect, table, text

from server.app import create_app
from server.config import Settings
from server.protocol.codec import nick_key
from server.store.accounts import NickTaken
from server.store.database import (
    SchemaError,
    alembic_config,
    current_revision,
    head_revision,
    migrate,
    open_engine,
)
from server.store.idhash import MIN_COST, IdHashing
from server.store.models import Base, User
from server.store.store import Store
from tests.store.test_accounts import registered_id
from tests.store.test_archiving import finished

# the users table as revision 0003 had it (0013 made the moderator flag a role)
USERS_AT_0003 = table(
    "users",
    # typed as the model types them, so that SQLAlchemy writes the dates (sqlite3's own adapter for them
    # is deprecated from Python 3.12: a warning, an error in the suite)
    *(column(c.name, c.type) for c in User.__table__.columns if c.name != "role"),
    column("moderator"),
)


def user_at_0003(nick: str, **more: object) -> dict[str, object]:
    """An account's row as the code before 0004 wrote it (no look key), with `more`."""
    key = nick_key(nick)
    return {
        "nick": nick,
        "nick_key": key,
        "login_key": key,
        "secret_hash": "x",
        "email": "",
        "lang": "en",
        "avatar": "",
        "about": "",
        "registered_at": datetime.now(UTC),
        "rating": 1500.0,
        "deviation": 350.0,
        "volatility": 0.06,
        "wins": 0,
        "draws": 0,
        "losses": 0,
        "moderator": False,
        **more,
    }


async def test_migrations_run_from_empty_to_head_and_match_the_models(empty_database: str) -> None:
    engine = open_engine(empty_database)
    try:
        assert await current_revision(engine) is None
        await migrate(engine)
        await migrate(engine)  # a second run changes nothing

        assert await current_revision(engine) == head_revision()
        async with engine.connect() as connection:
            tables = await connection.run_sync(lambda sync: set(inspect(sync).get_table_names()))
            differences = await connection.run_sync(
                lambda sync: compare_metadata(MigrationContext.configure(sync), Base.metadata)
            )
        assert {"users", "games", "tables", "journal"} <= tables
        assert differences == []
    finally:
        await engine.dispose()


async def test_downgrade_to_base_and_back(empty_database: str) -> None:
    engine = open_engine(empty_database)
    try:
        await migrate(engine)
        async with engine.begin() as connection:
            await connection.run_sync(lambda sync: command.downgrade(alembic_config(sync), "base"))
        assert await current_revision(engine) is None
        await migrate(engine)
        assert await current_revision(engine) == head_revision()
    finally:
        await engine.dispose()


@pytest.mark.parametrize("upgrade", [False, True])
async def test_the_app_refuses_an_old_schema_unless_asked_to_migrate(
    empty_database: str, upgrade: bool
) -> None:
    url = empty_database
    server = TestServer(create_app(Settings("127.0.0.1", 8080, url, migrate=upgrade, ai_workers=0)))
    try:
        if upgrade:
            await server.start_server()
            engine = open_engine(url)
            assert await current_revision(engine) == head_revision()
            await engine.dispose()
        else:
            with pytest.raises(SchemaError, match="run `kropki-server migrate`"):
                await server.start_server()
    finally:
        await server.close()


def test_the_suite_runs_on_the_database_it_was_asked_for(settings: Settings) -> None:
    """`make test-postgres` must really test PostgreSQL, not quietly fall back to SQLite."""
    expected = "postgresql" if os.environ.get("KROPKI_TEST_DB") else "sqlite"
    assert settings.db_url.split("+")[0] == expected


async def test_0004_gives_each_look_to_the_oldest_account_and_every_account_still_logs_in(
    empty_database: str,
) -> None:
    """Accounts registered as look-alikes before 0004 keep working; the older one holds the look, and
    when it goes the younger one takes it over, so a look shown by an account is never free."""
    engine = open_engine(empty_database)
    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.upgrade(alembic_config(sync), "0003"))
        for nick in ("Alan", "Bob", "Alɑn", "AIan"):  # as the code before 0004 registered them
            row = user_at_0003(nick, secret_hash=IdHashing(MIN_COST).hash(registered_id(nick, "pw")))
            await connection.execute(insert(USERS_AT_0003).values(row))
    await migrate(engine)
    async with engine.connect() as connection:
        looks = dict((await connection.execute(text("SELECT nick, look_key FROM users"))).all())
    await engine.dispose()
    assert looks == {"Alan": "alan", "Bob": "bob", "Alɑn": None, "AIan": None}

    store = await Store.open(empty_database, id_hash_cost=MIN_COST)
    try:
        for nick in looks:
            assert await store.accounts.authenticate(nick, registered_id(nick, "pw")) is not None
        with pytest.raises(NickTaken):
            await store.accounts.register("A1an", registered_id("A1an", "pw"), "", "en")
        await store.accounts.delete("Alan")
        with pytest.raises(NickTaken):  # Alɑn, the oldest account left that shows the look, holds it
            await store.accounts.register("A1an", registered_id("A1an", "pw"), "", "en")
        await store.accounts.rename("Alɑn", "Zed")
        with pytest.raises(NickTaken):  # then AIan
            await store.accounts.register("A1an", registered_id("A1an", "pw"), "", "en")
    finally:
        await store.close()


async def test_0006_gives_what_was_stored_before_to_the_server_alone(empty_database: str) -> None:
    """A database from before clusters: its live tables, journals and sessions are member 0's, which a
    server alone reads back; downgrading keeps them."""
    engine = open_engine(empty_database)
    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.upgrade(alembic_config(sync), "0005"))
        await connection.execute(
            text("INSERT INTO tables (uid, opened_at) VALUES (7, '2026-11-27 09:00:00')")
        )
        for uid, seq in ((7, 1), (7, 2), (0, 1), (-2, 1)):
            await connection.execute(
                text("INSERT INTO journal (uid, seq, kind, data) VALUES (:uid, :seq, 'k', '{}')"),
                {"uid": uid, "seq": seq},
            )
    await migrate(engine)
    async with engine.connect() as connection:
        journal = (
            await connection.execute(text("SELECT member, uid, seq FROM journal ORDER BY uid, seq"))
        ).all()
        owners = (await connection.execute(text("SELECT owner FROM tables"))).scalars().all()
    assert [tuple(row) for row in journal] == [(0, -2, 1), (0, 0, 1), (0, 7, 1), (0, 7, 2)]
    assert owners == [0]

    store = await Store.open(empty_database, id_hash_cost=MIN_COST)
    try:
        journals, next_uid = await store.writer.load_journal()
    finally:
        await store.close()
    assert {uid: [seq for seq, _, _ in entries] for uid, entries in journals.items()} == {
        -2: [1],
        0: [1],
        7: [1, 2],
    }
    assert next_uid == 8

    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.downgrade(alembic_config(sync), "0005"))
        rows = (await connection.execute(text("SELECT uid, seq FROM journal ORDER BY uid, seq"))).all()
    await engine.dispose()
    assert [tuple(row) for row in rows] == [(-2, 1), (0, 1), (7, 1), (7, 2)]


async def test_0012_a_session_stored_before_ignores_nobody(empty_database: str) -> None:
    """Sessions written before 0012 come back with an empty list of the ignored; downgrading keeps them
    and drops the lists."""
    engine = open_engine(empty_database)
    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.upgrade(alembic_config(sync), "0011"))
        await connection.execute(
            text(
                "INSERT INTO sessions (id_hmac, nick, lang, registered, free, client, tables, blocked,"
                " last_command) VALUES ('ab12', '*Ala', 'en', false, true, '', '[]', '[]', 3)"
            )
        )
    await migrate(engine)
    store = await Store.open(empty_database, id_hash_cost=MIN_COST)
    try:
        live = await store.writer.load_sessions()
        store.writer.ignored_added(1, "*bob", "*Bob")  # the new table takes writes (no account 1: nothing)
        await store.writer.flush()
    finally:
        await store.close()
    assert [(s.nick, s.last_command, s.ignored) for s in live.sessions] == [("*Ala", 3, ())]

    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.downgrade(alembic_config(sync), "0011"))
        rows = (await connection.execute(text("SELECT nick FROM sessions"))).scalars().all()
        tables = await connection.run_sync(lambda sync: set(inspect(sync).get_table_names()))
    await engine.dispose()
    assert rows == ["*Ala"] and "ignored_players" not in tables


async def test_0013_a_moderator_before_stays_a_moderator_and_back(empty_database: str) -> None:
    engine = open_engine(empty_database)
    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.upgrade(alembic_config(sync), "0012"))
        for nick, moderator in (("Mod", True), ("Ann", False)):
            await connection.execute(
                insert(USERS_AT_0003).values(user_at_0003(nick, look_key=nick_key(nick), moderator=moderator))
            )
    await migrate(engine)
    store = await Store.open(empty_database, id_hash_cost=MIN_COST)
    try:
        roles = await store.accounts.roles(["Mod", "Ann"])
    finally:
        await store.close()
    assert roles == {"mod": "moderator", "ann": "none"}

    async with engine.begin() as connection:
        await connection.execute(text("UPDATE users SET role = 'admin' WHERE nick = 'Ann'"))
        await connection.run_sync(lambda sync: command.downgrade(alembic_config(sync), "0012"))
        rows = (await connection.execute(text("SELECT nick, moderator FROM users ORDER BY nick"))).all()
        tables = await connection.run_sync(lambda sync: set(inspect(sync).get_table_names()))
    await engine.dispose()
    assert [(nick, bool(flag)) for nick, flag in rows] == [("Ann", True), ("Mod", True)]
    assert "sanctions" not in tables and "moderation_log" not in tables


async def test_0015_nobody_was_a_bot_and_back(empty_database: str) -> None:
    engine = open_engine(empty_database)
    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.upgrade(alembic_config(sync), "0014"))
        row = user_at_0003("Ann", look_key=nick_key("Ann"))
        del row["moderator"]
        typed = User.__table__.columns
        await connection.execute(
            insert(table("users", *(column(name, typed[name].type) for name in row))).values(row)
        )
    await migrate(engine)
    store = await Store.open(empty_database, id_hash_cost=MIN_COST)
    try:
        profile = await store.accounts.profile("Ann")
        token = await store.bots.create("Robo")
        robo = await store.bots.account(token)
    finally:
        await store.close()
    assert profile is not None and not profile.bot
    assert robo is not None and robo.bot

    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.downgrade(alembic_config(sync), "0014"))
        columns = await connection.run_sync(
            lambda sync: {c["name"] for c in inspect(sync).get_columns("users")}
        )
        nicks = (await connection.execute(text("SELECT nick FROM users ORDER BY nick"))).scalars().all()
    await engine.dispose()
    assert "bot" not in columns and "bot_token_hash" not in columns and nicks == ["Ann", "Robo"]


async def test_0016_a_report_made_before_keeps_no_network_and_back(empty_database: str) -> None:
    engine = open_engine(empty_database)
    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.upgrade(alembic_config(sync), "0015"))
        await connection.execute(
            text(
                "INSERT INTO reports (made_at, reporter, reporter_key, reporter_network, reported, place,"
                " line, reason, context) VALUES (:at, '*Ala', '*ala', '', '*Troll', '', '', 'spam', '[]')"
            ),
            {"at": datetime.now(UTC)},
        )
    await migrate(engine)
    store = await Store.open(empty_database, id_hash_cost=MIN_COST)
    try:
        before = await store.reports.get_open(1)
    finally:
        await store.close()
    assert (before.reported, before.reported_network) == ("*Troll", "")

    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.downgrade(alembic_config(sync), "0015"))
        columns = await connection.run_sync(
            lambda sync: {c["name"] for c in inspect(sync).get_columns("reports")}
        )
        reported = (await connection.execute(text("SELECT reported FROM reports"))).scalars().all()
    await engine.dispose()
    assert "reported_network" not in columns and reported == ["*Troll"]


async def test_0017_an_upgraded_database_never_gives_a_deleted_accounts_number_again(
    empty_database: str,
) -> None:
    """Accounts 4 and 5 were deleted before the upgrade (their games and tables name them `deleted4` and
    `deleted5`): SQLite would have given 4 to the next account, whose deletion named it as the other."""
    engine = open_engine(empty_database)
    at = datetime(2026, 1, 2, tzinfo=UTC)
    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.upgrade(alembic_config(sync), "0016"))
        typed = User.__table__.columns
        for nick in ("Ann", "Bob", "Cid", "Dan", "Eve"):  # numbered by the database, 1 to 5
            row = user_at_0003(nick, look_key=nick_key(nick), role="none", bot=False)
            row["secret_hash"] = IdHashing(MIN_COST).hash(registered_id(nick, "pw"))
            del row["moderator"]
            await connection.execute(
                insert(table("users", *(column(name, typed[name].type) for name in row))).values(row)
            )
        await connection.execute(text("DELETE FROM users WHERE nick IN ('Dan', 'Eve')"))
        await connection.execute(
            text(
                "INSERT INTO games (finished_at, blue_nick, red_nick, blue_id, red_id, game_type, result,"
                " rated, sgf) VALUES (:at, 'Ann', 'deleted4', 1, NULL, '0808stanF0.0.0', NULL,"
                " false, '(;GM[40]FF[4]SZ[8]PB[Ann]PW[deleted4])')"
            ),
            {"at": at},
        )
        await connection.execute(
            text(
                "INSERT INTO tournament_tables (uid, tournament, created_at, blue, red, game_type)"
                " VALUES (7, 'Cup', :at, 'deleted5, *Cid', 'Bob', '0808stanF0.0.0')"
            ),
            {"at": at},
        )
    await migrate(engine)
    await engine.dispose()

    store = await Store.open(empty_database, id_hash_cost=MIN_COST)
    try:
        assert await store.accounts.authenticate("Ann", registered_id("Ann", "pw")) is not None
        assert [game.number for game in await store.games.recent("Ann", 10)] == [1]
        await store.accounts.register("Fay", registered_id("Fay", "pw"), "", "en")
        store.writer.archive(finished("Fay", "Ann"), lambda *_: None)
        await store.writer.flush()
        await store.accounts.delete("Fay")
        named = [(game.number, game.blue, game.red) for game in await store.games.recent("Ann", 10)]
    finally:
        await store.close()
    assert named == [(2, "deleted6", "Ann"), (1, "Ann", "deleted4")]


async def test_0021_an_account_renamed_before_has_its_login_nick_as_a_former_one_and_back(
    empty_database: str,
) -> None:
    engine = open_engine(empty_database)
    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.upgrade(alembic_config(sync), "0020"))
        for nick in ("Ann", "Bob"):
            row = user_at_0003(nick, look_key=nick_key(nick), role="none", bot=False)
            del row["moderator"]
            await connection.execute(
                insert(
                    table("users", *(column(name, User.__table__.columns[name].type) for name in row))
                ).values(row)
            )
        # `user rename Bob Robert` before the upgrade
        await connection.execute(
            text("UPDATE users SET nick = 'Robert', nick_key = 'robert' WHERE nick = 'Bob'")
        )
    await migrate(engine)
    async with engine.begin() as connection:
        former = dict((await connection.execute(text("SELECT nick, former FROM users"))).all())
        await connection.run_sync(lambda sync: command.downgrade(alembic_config(sync), "0020"))
        columns = await connection.run_sync(
            lambda sync: {c["name"] for c in inspect(sync).get_columns("users")}
        )
    await engine.dispose()
    assert former == {"Ann": "[]", "Robert": '["bob"]'}
    assert "former" not in columns
