"""An admin's rename and a tournament the server runs, in the store (a real SQLite file): the account's
entries take the new nick and keep the earlier ones; a rename onto a nick another player of such a
tournament played under is refused, as a taken nick; an entry of an account renamed before migration 0019
follows it from the upgrade on, and so does (0020) a seat or an entry made before seats named the account's
number (docs/tournaments.md, "Joining and withdrawing")."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from alembic import command
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from server.config import Settings
from server.store.accounts import NickTaken
from server.store.database import alembic_config, migrate, open_engine
from server.store.hosted import Entry, Hosted
from server.store.hosted import Settings as Tournament
from server.store.store import Store
from tests.store.test_accounts import registered_id, store  # noqa: F401

NOW = datetime(2026, 12, 5, 18, 0, tzinfo=UTC)


async def cup(store: Store, *nicks: str) -> Hosted:  # noqa: F811
    """A swiss "Cup" these registered players (accounts 1, 2, ...) entered."""
    settings = Tournament("Cup", "swiss", "0808stanF60.5.0", 3, 0, NOW, None, None, False, 60, "organiser")
    hosted = await store.hosted.create(settings, NOW)
    for number, nick in enumerate(nicks, start=1):
        await store.accounts.register(nick, registered_id(nick, "pw"), "", "en")
        entry = Entry(nick, nick.lower(), f"@{nick.lower()}#{number}", 1500.0, NOW, False)
        assert await store.hosted.register(hosted.id, entry)
    return hosted


async def test_the_entries_follow_the_account_and_keep_its_earlier_nicks(store: Store) -> None:  # noqa: F811
    hosted = await cup(store, "Alice", "Bob")
    await store.accounts.rename("Alice", "Alicia")
    await store.accounts.rename("Alicia", "Ally")
    entries = await store.hosted.entries(hosted.id)
    assert [(e.nick, e.seat, e.former) for e in entries] == [
        ("Ally", "@ally#1", ("Alice", "Alicia")),
        ("Bob", "@bob#2", ()),
    ]
    await store.accounts.rename("Ally", "Alicia")  # back to a nick it had: no longer a former one
    (first, _) = await store.hosted.entries(hosted.id)
    assert (first.nick, first.former) == ("Alicia", ("Alice", "Ally"))


async def test_a_rename_onto_a_nick_another_entrant_played_under_is_refused(store: Store) -> None:  # noqa: F811
    """Bob was renamed Robert, then Rob ("Robert" is free again; "Bob" stays his, as he logs in with it);
    Carol, of the same tournament, may not become Robert: a table set up for "Robert" would be counted
    for both."""
    hosted = await cup(store, "Alice", "Bob", "Carol")
    await store.accounts.rename("Bob", "Robert")
    await store.accounts.rename("Robert", "Rob")
    with pytest.raises(NickTaken, match="Cup"):
        await store.accounts.rename("Carol", "Robert")
    assert [e.nick for e in await store.hosted.entries(hosted.id)] == ["Alice", "Rob", "Carol"]
    assert (await store.accounts.profile("Carol")) is not None, "nothing changed"


async def migrated_cup(settings: Settings) -> tuple[AsyncEngine, Hosted]:
    """A database at the head revision with Ann's and Bob's cup (`cup`), and an engine on it: what an
    upgrade test takes back to an earlier revision."""
    engine = open_engine(settings.db_url)
    await migrate(engine)
    store = await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost)  # noqa: F811
    try:
        return engine, await cup(store, "Ann", "Bob")
    finally:
        await store.close()


async def test_0019_an_entry_of_an_account_renamed_before_follows_it(settings: Settings) -> None:
    engine, hosted = await migrated_cup(settings)
    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.downgrade(alembic_config(sync), "0018"))
        # `user rename Ann Annie` as it was before: the account alone
        await connection.execute(text("UPDATE users SET nick = 'Annie', nick_key = 'annie' WHERE id = 1"))
    await migrate(engine)
    await engine.dispose()

    store = await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost)  # noqa: F811
    try:
        entries = await store.hosted.entries(hosted.id)
    finally:
        await store.close()
    assert [(e.nick, e.nick_key, e.seat, e.former) for e in entries] == [
        ("Annie", "annie", "@annie#1", ("Ann",)),
        ("Bob", "bob", "@bob#2", ()),
    ]


async def test_0020_a_seat_and_an_entry_from_before_numbers_follow_the_account_with_the_nick(
    settings: Settings,
) -> None:
    """Seats journalled and entries made before seats named the account's number: Ann's (her nick still)
    take her number and follow her renames from the upgrade on; Bob's, renamed Bobby before, are left
    to nobody's number (the nick may have been somebody else's since), as is a guest's seat."""
    engine, hosted = await migrated_cup(settings)
    seats = [
        {"nick": "Ann", "owner": "@ann"},
        {"nick": "Bob", "owner": "@bob"},
        {"nick": "*Cid", "owner": "x"},
    ]
    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.downgrade(alembic_config(sync), "0019"))
        await connection.execute(text("UPDATE hosted_entries SET seat = '@' || nick_key"))
        await connection.execute(text("UPDATE users SET nick = 'Bobby', nick_key = 'bobby' WHERE id = 2"))
        for seq, seat in enumerate(seats, start=1):
            await connection.execute(
                text("INSERT INTO journal (member, uid, seq, kind, data) VALUES (0, 7, :seq, 'seat', :data)"),
                {"seq": seq, "data": json.dumps(seat)},
            )
    await migrate(engine)
    async with engine.connect() as connection:
        journalled = (await connection.execute(text("SELECT data FROM journal ORDER BY seq"))).scalars()
        owners = [json.loads(data)["owner"] for data in journalled]
    await engine.dispose()
    assert owners == ["@ann#1", "@bob", "x"]

    store = await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost)  # noqa: F811
    try:
        await store.accounts.rename("Ann", "Annie")
        entries = await store.hosted.entries(hosted.id)
    finally:
        await store.close()
    assert [(e.nick, e.seat, e.former) for e in entries] == [
        ("Annie", "@annie#1", ("Ann",)),
        ("Bob", "@bob", ()),
    ]
