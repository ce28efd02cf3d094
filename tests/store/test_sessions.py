"""Sessions in the store: written by the write-behind queue, read back at the next start by the HMAC
of the id under a key the database keeps, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import asyncio
import gc

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from server.config import Settings
from server.hub.persistence import MOST_IGNORED, SavedSession
from server.store.store import Store
from tests.conftest import POSTGRES


def session(id_hmac: str, nick: str, **changes: object) -> SavedSession:
    values: dict[str, object] = {
        "id_hmac": id_hmac,
        "nick": nick,
        "lang": "en",
        "registered": False,
        "free": True,
        "client": "",
        "tables": (),
        "blocked": (),
        "last_command": 0,
    }
    return SavedSession(**{**values, **changes})  # type: ignore[arg-type]


async def test_sessions_written_are_read_back_at_the_next_start(settings: Settings) -> None:
    store = await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost)
    first = await store.writer.load_sessions()
    assert (first.sessions, first.event_mark, first.alive_at) == ([], 0, None)
    ala, bob, cyd = (store.writer.id_hmac(secret) for secret in ("Qx7alA_1", "Zq9boB.2", "cyd"))
    assert ala == store.writer.id_hmac("Qx7alA_1") != bob and len(ala) == 64
    await store.accounts.register("Carol", "LongSecretId2", "", "pl")
    writer = store.writer
    writer.session_saved(session(ala, "*Ala", tables=(3, 7), last_command=5))
    writer.session_saved(session(bob, "*Bob"))
    writer.sessions_seen(1_700_000_000.5, {ala: 1_699_999_990.25, bob: None})
    writer.session_saved(
        session(ala, "*Ala", lang="pl", free=False, client="J", blocked=("*eve",), tables=(7,))
    )
    writer.session_saved(session(cyd, "Carol", registered=True, last_command=10**12))
    writer.session_ended(bob)
    writer.events_reserved(23_456)
    writer.events_reserved(123_456)  # the mark goes up (an UPDATE of the row)
    await store.close()

    store = await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost)
    live = await store.writer.load_sessions()
    await store.close()

    assert store.writer.id_hmac("Qx7alA_1") == ala, "the same key: the same id finds the same row"
    assert sorted(live.sessions, key=lambda s: s.nick) == [
        session(
            ala,
            "*Ala",
            lang="pl",
            free=False,
            client="J",
            blocked=("*eve",),
            tables=(7,),
            quiet_since=1_699_999_990.25,  # a later save leaves the heartbeat's value alone
        ),
        session(
            cyd,
            "Carol",
            registered=True,
            last_command=10**12,
        ),
    ]
    assert (live.event_mark, live.alive_at) == (123_456, 1_700_000_000.5)
    assert list(live.accounts) == ["carol"] and live.accounts["carol"].lang == "pl"


async def test_heartbeats_leave_nothing_for_the_garbage_collector(settings: Settings) -> None:
    """A serving process collects its oldest generation rarely: what a heartbeat left in reference
    cycles (each new upsert's alias of its table) piled up until then."""
    store = await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost)
    writer = store.writer
    writer.sessions_seen(1_700_000_000.0, {})  # the first builds and compiles the statement
    await writer.flush()
    gc.collect()
    gc.disable()
    try:
        for second in range(1, 11):
            writer.sessions_seen(1_700_000_000.0 + second, {})
            await writer.flush()
        found = gc.collect()
    finally:
        gc.enable()
    live = await writer.load_sessions()
    await store.close()
    assert live.alive_at == 1_700_000_010.0
    assert found < 31, found  # 310 before: 31 a heartbeat (none now)


async def test_the_heartbeat_puts_k_alone_into_the_rows_of_many_sessions(settings: Settings) -> None:
    """The heartbeat writes the k of every session whose k moved (thousands under load, every 5 s) as
    pages of one statement each, and nothing else of their rows: the rest was saved when it changed."""
    store = await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost)
    writer = store.writer
    await writer.load_sessions()  # reads the key of the ids' HMACs
    keys = [writer.id_hmac(f"guest{number}") for number in range(700)]  # more than a page
    for number, key in enumerate(keys):
        writer.session_saved(session(key, f"*g{number}", lang="pl", tables=(number + 1,), last_command=3))
    writer.sessions_seen(
        1_700_000_000.0, {keys[0]: 1_699_999_999.0}, {key: 4 + n for n, key in enumerate(keys)}
    )
    writer.session_saved(session(keys[1], "*g1", lang="de", tables=(2,), last_command=9))  # saved after it
    writer.sessions_seen(1_700_000_005.0, {}, {keys[2]: 2**40})
    await store.close()

    store = await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost)
    live = {saved.id_hmac: saved for saved in (await store.writer.load_sessions()).sessions}
    await store.close()

    assert len(live) == 700
    assert live[keys[0]] == session(
        keys[0], "*g0", lang="pl", tables=(1,), last_command=4, quiet_since=1_699_999_999.0
    )
    assert live[keys[1]] == session(keys[1], "*g1", lang="de", tables=(2,), last_command=9)
    assert live[keys[2]].last_command == 2**40
    assert all(live[key].last_command == 4 + n for n, key in enumerate(keys) if n > 2)
    assert all(
        live[key].lang == "pl" and live[key].tables == (n + 1,) for n, key in enumerate(keys) if n != 1
    )


async def test_the_players_ignored_are_kept_with_the_account_or_with_a_guests_session(
    settings: Settings,
) -> None:
    """A registered player's list is the account's: read with it at a login, at a start and for a session
    moving between members, changed a row at a time by the account's number, and gone with the account; a
    guest's is a field of its session's row (docs/protocol.md, "Ignoring")."""
    # a member: session_of reads its rows
    store = await Store.open(settings.db_url, member="kropki-a", id_hash_cost=settings.id_hash_cost)
    await store.writer.load_sessions()
    accounts = store.accounts
    number = (await accounts.register("Carol", "LongSecretId2", "", "pl")).number
    writer = store.writer
    carol, guest = writer.id_hmac("LongSecretId2"), writer.id_hmac("guest1")
    writer.session_saved(session(carol, "Carol", registered=True))
    writer.session_saved(session(guest, "*Gus", ignored=("*Bob", "Eve")))
    for nick in ("*Zed", "*Bob", "Eve", "*BOB"):  # the same nick key twice: kept once
        writer.ignored_added(number, nick.casefold(), nick)
    writer.ignored_removed(number, "eve")  # one change at a time
    writer.ignored_added(number + 1, "*bob", "*Bob")  # an account deleted meanwhile: nothing to keep
    await writer.flush()

    assert (await accounts.authenticate("Carol", "LongSecretId2")).ignored == ("*Bob", "*Zed")
    assert (await writer.session_of(carol))[2].ignored == ("*Bob", "*Zed")  # a session moving
    await store.close()
    store = await Store.open(settings.db_url, member="kropki-a", id_hash_cost=settings.id_hash_cost)
    live = await store.writer.load_sessions()
    assert live.accounts["carol"].ignored == ("*Bob", "*Zed")
    assert {s.nick: s.ignored for s in live.sessions} == {"Carol": (), "*Gus": ("*Bob", "Eve")}

    accounts = store.accounts
    store.writer.session_ended(carol)  # she logs out: an account logged in is not deleted
    await store.writer.flush()
    await accounts.delete("Carol")
    await accounts.register("Carol", "LongSecretId2", "", "pl")  # a new account of the same nick
    assert (await accounts.authenticate("Carol", "LongSecretId2")).ignored == ()
    await store.close()


async def test_an_accounts_stored_list_holds_at_most_a_hundred(settings: Settings) -> None:
    """Each change is stored alone, so the store counts the list itself: a change past the bound is not
    kept, and one taken off makes room again."""
    store = await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost)
    number = (await store.accounts.register("Carol", "LongSecretId2", "", "pl")).number
    for n in range(MOST_IGNORED + 1):
        store.writer.ignored_added(number, f"*g{n:03}", f"*G{n:03}")
    store.writer.ignored_removed(number, "*g000")
    store.writer.ignored_added(number, "*late", "*Late")
    await store.writer.flush()
    ignored = (await store.accounts.authenticate("Carol", "LongSecretId2")).ignored
    assert len(ignored) == MOST_IGNORED
    assert "*G000" not in ignored and "*G100" not in ignored and "*Late" in ignored
    await store.close()


async def writers_waiting(engine: AsyncEngine, count: int) -> None:
    """Until `count` connections wait for a lock on server_state."""
    query = text("SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'server_state'::regclass")
    for _ in range(500):
        async with engine.connect() as connection:
            if await connection.scalar(query) >= count:
                return
        await asyncio.sleep(0.01)
    raise AssertionError(f"fewer than {count} writers waited for server_state")


@pytest.mark.skipif(not POSTGRES, reason="a cluster's members share PostgreSQL: scripts/with-postgres")
async def test_members_starting_together_on_a_new_database_share_one_key(settings: Settings) -> None:
    """A cluster's members started at once on a new database (deploy/docker-compose-cluster.yml waits
    for the first, but units started together do not): each found no key and made its own; the
    second's INSERT hit the first's row, and that member did not start (tests/cluster/test_sigkill.py,
    members started side by side). Their writes are held here until both have looked, so that the two
    always meet."""
    stores = [
        await Store.open(settings.db_url, member=name, id_hash_cost=settings.id_hash_cost)
        for name in ("kropki-a", "kropki-b")
    ]
    engine = create_async_engine(settings.db_url)
    try:
        async with engine.connect() as holder:
            await holder.execute(text("LOCK TABLE server_state IN SHARE MODE"))  # reads go on, writes wait
            loading = [asyncio.create_task(store.writer.load_sessions()) for store in stores]
            await writers_waiting(engine, len(stores))
            await holder.rollback()
        await asyncio.gather(*loading)
        assert stores[0].writer.id_hmac("Qx7alA_1") == stores[1].writer.id_hmac("Qx7alA_1")
    finally:
        for store in stores:
            await store.close()
        await engine.dispose()


@pytest.mark.skipif(not POSTGRES, reason="a cluster's members share PostgreSQL: scripts/with-postgres")
async def test_a_member_restarting_numbers_its_events_above_its_own_though_a_quieter_member_wrote_last(
    settings: Settings,
) -> None:
    """Members share the database's mark of event numbers. Each wrote its own over the others', so a
    busy member restarting could read a quieter member's lower mark and number its events again from
    below what its clients had seen: a client whose msgNo fell in the numbers given again would be
    taken to have seen events it never got."""
    busy, quiet = [
        await Store.open(settings.db_url, member=name, id_hash_cost=settings.id_hash_cost)
        for name in ("kropki-a", "kropki-b")
    ]
    busy.writer.events_reserved(900_000)
    quiet.writer.events_reserved(200_000)  # written last
    for store in (busy, quiet):
        await store.close()
    again = await Store.open(settings.db_url, member="kropki-a", id_hash_cost=settings.id_hash_cost)
    try:
        assert (await again.writer.load_sessions()).event_mark >= 900_000
    finally:
        await again.close()


@pytest.mark.skipif(not POSTGRES, reason="a cluster's members share PostgreSQL: scripts/with-postgres")
async def test_a_member_restarting_reads_its_own_last_heartbeat_not_another_members(
    settings: Settings,
) -> None:
    """A restart counts a quiet session's time-out to the member's last heartbeat, so the downtime does
    not count (docs/protocol.md, "After a restart"). Members shared one heartbeat's time, which the
    live members kept writing while this one was down: the downtime counted after all."""
    died, lives = [
        await Store.open(settings.db_url, member=name, id_hash_cost=settings.id_hash_cost)
        for name in ("kropki-a", "kropki-b")
    ]
    died.writer.sessions_seen(1_700_000_000.5, {})
    await died.close()
    lives.writer.sessions_seen(1_700_000_300.5, {})  # five minutes on
    await lives.close()
    again = await Store.open(settings.db_url, member="kropki-a", id_hash_cost=settings.id_hash_cost)
    try:
        assert (await again.writer.load_sessions()).alive_at == 1_700_000_000.5
    finally:
        await again.close()
