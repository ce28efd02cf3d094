"""A name taken is a unique index refusing the row, and nothing else: any IntegrityError was told as "nick
taken" or "name taken", so a CHECK or NOT NULL refusal told a player something false and hid a bug. The
refusals are real: on PostgreSQL a CHECK constraint added with SQL; on SQLite, which adds no constraint to
a table that exists, a trigger that aborts the row (SQLITE_CONSTRAINT_TRIGGER)."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

import pytest
from aiohttp.test_utils import TestClient
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import create_async_engine

from server.cli import main
from server.config import Settings
from server.store.hosted import NameTaken
from server.store.hosted import Settings as HostedSettings
from server.store.outage import described, unavailable, unique_violation
from server.store.store import Store
from server.store.tournaments import KeyNameTaken
from server.web.common import STORE_KEY
from tests.store.test_accounts import store  # noqa: F401 (the fixture)
from tests.web.test_auth import register

REFUSED = "Zorro9"  # the one name the database refuses, each test adding its refusal


async def refuse(url: str, table: str, column: str) -> None:
    """The database refuses, from now on, a row of `table` whose `column` is REFUSED, as a constraint
    that is no unique index would."""
    engine = create_async_engine(url)
    name = f"{table}_refused"
    async with engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            check = f"ALTER TABLE {table} ADD CONSTRAINT {name} CHECK ({column} <> '{REFUSED}')"
            await connection.execute(text(check))
        else:
            for event in ("INSERT", f"UPDATE OF {column}"):
                trigger = f"{name}_{event.split()[0].lower()}"
                await connection.execute(
                    text(
                        f"CREATE TRIGGER {trigger} BEFORE {event} ON {table} "
                        f"WHEN NEW.{column} = '{REFUSED}' BEGIN SELECT RAISE(ABORT, 'refused'); END"
                    )
                )
    await engine.dispose()


def a_refusal_not_a_name_taken(refused: pytest.ExceptionInfo[IntegrityError]) -> None:
    """What the store let through: the database's own refusal, told without the row's values."""
    assert not unique_violation(refused.value) and unavailable(refused.value) is None
    assert REFUSED not in described(refused.value)


async def test_registering_a_refused_nick_is_no_nick_taken(
    store: Store,  # noqa: F811
    settings: Settings,
) -> None:
    await refuse(settings.db_url, "users", "nick")
    with pytest.raises(IntegrityError) as refused:
        await store.accounts.register(REFUSED, "Secret12", "", "en")
    a_refusal_not_a_name_taken(refused)
    assert await store.accounts.profile(REFUSED) is None


async def test_renaming_to_a_refused_nick_is_no_nick_taken(
    store: Store,  # noqa: F811
    settings: Settings,
) -> None:
    await store.accounts.register("Alice", "Secret12", "", "en")
    await refuse(settings.db_url, "users", "nick")
    with pytest.raises(IntegrityError) as refused:
        await store.accounts.rename("Alice", REFUSED)
    a_refusal_not_a_name_taken(refused)
    assert await store.accounts.profile("Alice") is not None


async def test_a_bot_of_a_refused_nick_is_no_nick_taken(
    store: Store,  # noqa: F811
    settings: Settings,
) -> None:
    await refuse(settings.db_url, "users", "nick")
    with pytest.raises(IntegrityError) as refused:
        await store.bots.create(REFUSED)
    a_refusal_not_a_name_taken(refused)


async def test_a_key_of_a_refused_name_is_no_name_taken_and_a_name_twice_is(
    store: Store,  # noqa: F811
    settings: Settings,
) -> None:
    await refuse(settings.db_url, "tournament_keys", "name")
    with pytest.raises(IntegrityError) as refused:
        await store.tournaments.add_key(REFUSED, None, False)
    a_refusal_not_a_name_taken(refused)
    await store.tournaments.add_key("cup-bot", None, False)
    with pytest.raises(KeyNameTaken):  # the unique index's refusal
        await store.tournaments.add_key("cup-bot", None, False)


async def test_a_tournament_of_a_refused_name_is_no_name_taken_and_a_name_twice_is(
    store: Store,  # noqa: F811
    settings: Settings,
) -> None:
    await refuse(settings.db_url, "hosted_tournaments", "name")
    now = datetime.now(UTC)

    def tournament(name: str) -> HostedSettings:
        return HostedSettings(name, "swiss", "1010s0..a.F.n....", 3, 0, now, None, None, True, 0, "k")

    with pytest.raises(IntegrityError) as refused:
        await store.hosted.create(tournament(REFUSED), now)
    a_refusal_not_a_name_taken(refused)
    assert await store.hosted.get(REFUSED) is None
    await store.hosted.create(tournament("Winter Cup"), now)
    with pytest.raises(NameTaken):  # the unique index's refusal
        await store.hosted.create(tournament("Winter Cup"), now)


async def test_a_registration_the_database_refuses_answers_as_a_failure_not_nick_taken(
    client: TestClient, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """A player is told their registration failed, not that someone has the nick; the log line tells
    the refusal without the row (server/store/outage.py)."""
    caplog.set_level(logging.INFO)
    await refuse(settings.db_url, "users", "nick")

    assert await register(client, REFUSED) == "nieOk."

    assert await client.app[STORE_KEY].accounts.profile(REFUSED) is None
    [failed] = [record.getMessage() for record in caplog.records if "request failed" in record.getMessage()]
    assert "IntegrityError" in failed and REFUSED not in failed
    assert await register(client, "Alice") == "ok.zarejestrowalem."


def test_an_admins_rename_the_database_refuses_is_told_as_refused_not_taken(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    async def alice_and_the_refusal() -> None:
        opened = await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost)
        await opened.accounts.register("Alice", "Secret12", "", "en")
        await opened.close()
        await refuse(settings.db_url, "users", "nick")

    asyncio.run(alice_and_the_refusal())
    status = main(["user", "--db", settings.db_url, "rename", "Alice", REFUSED])
    _, err = capsys.readouterr()

    assert status == 1
    assert "the database refused the change: IntegrityError" in err, err
    assert "taken" not in err and REFUSED not in err
