"""The store's writer when storage stops taking writes, with real failing storage: a full disk (a small
tmpfs), a locked SQLite file, a PostgreSQL database turned read-only or gone altogether. It says so once,
keeps what it could not write and writes it when storage is back; a write that is itself bad is still set
aside; at a stop it gives up in bounded time and names what it could not write."""

from __future__ import annotations

import asyncio
import logging
import shutil
import ssl
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from server.engine.game import Game
from server.engine.moves import parse_move
from server.engine.record import game_to_record
from server.hub.persistence import FinishedGame, SavedSession, StorageFailing
from server.store import database, writer
from server.store.idhash import MIN_COST
from server.store.models import ArchivedGame, JournalEntry
from server.store.outage import unavailable
from server.store.store import Store
from tests.conftest import POSTGRES, NewDatabase
from tests.store.breakers import Breaker, PostgresProxy, breaker_for, ending_sessions, fill, small_disk, until

FAILING = "storage failing"
BACK = "storage back"
postgres_only = pytest.mark.skipif(
    not POSTGRES, reason="PostgreSQL: set KROPKI_TEST_DB (scripts/with-postgres)"
)
sqlite_only = pytest.mark.skipif(bool(POSTGRES), reason="a SQLite file")


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """A locked SQLite write gives up after 0.2 s instead of 5; failed writes are tried again every
    0.05 to 0.2 s instead of 1 to 10 s."""
    monkeypatch.setattr(database, "BUSY_TIMEOUT_MS", 200)
    monkeypatch.setattr(writer, "RETRY_FIRST", 0.05)
    monkeypatch.setattr(writer, "RETRY_MOST", 0.2)
    monkeypatch.setattr(writer, "LAST_ATTEMPT_SECONDS", 1.2)


def lines(caplog: pytest.LogCaptureFixture, words: str) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.getMessage().startswith(words)]


async def journal_count(store: Store, uid: int) -> int:
    async with store.engine.connect() as connection:
        count = await connection.scalar(select(func.count()).where(JournalEntry.uid == uid))
    return int(count or 0)


def moves(store: Store, uid: int, numbers: range) -> None:
    for seq in numbers:
        store.writer.journal(uid, seq, "move", {"p": 1 + seq % 2, "w": "aa", "filler": "x" * 2000})


async def goes_out_and_comes_back(store: Store, breaker: Breaker, caplog: pytest.LogCaptureFixture) -> None:
    """The writer's whole story through one outage, with real storage: see the module's docstring."""
    caplog.set_level(logging.DEBUG, logger="server.store.writer")
    moves(store, 5, range(1, 3))
    await store.writer.flush()
    await breaker.break_storage()
    moves(store, 5, range(3, 60))
    with pytest.raises(StorageFailing):
        await store.writer.flush()
    assert store.writer.storage_failure is not None
    with pytest.raises(StorageFailing):  # at once, while it fails: no waiting for a time-out
        await store.writer.flush()
    retries = len([r for r in caplog.records if r.getMessage().startswith("write failed again")])
    await until(
        lambda: len([r for r in caplog.records if r.getMessage().startswith("write failed")]) >= retries + 4
    )
    assert breaker.gives(store.writer.storage_failure), store.writer.storage_failure
    assert store.writer.written == 2 and store.writer.queued == 59
    assert len(lines(caplog, FAILING)) == 1 and not lines(caplog, BACK)
    assert lines(caplog, FAILING)[0].levelno == logging.WARNING

    await breaker.mend()
    await until(lambda: store.writer.storage_failure is None)
    await store.writer.flush()
    assert await journal_count(store, 5) == 59  # nothing lost, nothing written twice
    assert len(lines(caplog, FAILING)) == 1 and len(lines(caplog, BACK)) == 1
    assert "waited=57" in lines(caplog, BACK)[0].getMessage()


@sqlite_only
async def test_a_full_disk(
    tmp_path: Path, new_database: NewDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    source = database_path(new_database(tmp_path, True))
    with small_disk(tmp_path / "disk", "4m") as disk:
        shutil.copyfile(source, disk / "kropki.sqlite3")
        store = await Store.open(f"sqlite+aiosqlite:///{disk / 'kropki.sqlite3'}", id_hash_cost=MIN_COST)

        class FullDisk(Breaker):
            reason = "disk full"

            async def break_storage(self) -> None:
                self.filler = fill(disk)

            async def mend(self) -> None:
                self.filler.unlink()

        try:
            await goes_out_and_comes_back(store, FullDisk(), caplog)
        finally:
            await store.close()
    assert lines(caplog, FAILING)[0].getMessage().count('reason="disk full"') == 1


async def test_a_locked_or_read_only_database(
    tmp_path: Path, new_database: NewDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    url = new_database(tmp_path, True)
    store = await Store.open(url, id_hash_cost=MIN_COST)
    try:
        await goes_out_and_comes_back(store, breaker_for(url), caplog)
    finally:
        await store.close()


@postgres_only
async def test_postgresql_gone_and_back(
    tmp_path: Path, new_database: NewDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    proxy = PostgresProxy(tmp_path / "pg", new_database(tmp_path, True))
    await proxy.start()
    store = await Store.open(proxy.url, id_hash_cost=MIN_COST)
    try:
        await goes_out_and_comes_back(store, proxy, caplog)
    finally:
        await store.close()
        await proxy.break_storage()


async def test_a_write_that_is_itself_bad_is_set_aside_and_the_others_go_in(
    tmp_path: Path, new_database: NewDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    store = await Store.open(new_database(tmp_path, True), id_hash_cost=MIN_COST)
    try:
        await store.writer.load_sessions()
        moves(store, 3, range(1, 3))
        bad = SavedSession("f" * 64, None, "en", False, True, "", (), (), 0)  # type: ignore[arg-type]
        store.writer.session_saved(bad)  # NOT NULL nick: the database refuses this write, not storage
        moves(store, 3, range(3, 5))
        await store.writer.flush()
        assert store.writer.storage_failure is None
        assert await journal_count(store, 3) == 4
        assert len(lines(caplog, "a write was refused by the database and is dropped")) == 1
        assert not lines(caplog, FAILING)
    finally:
        await store.close()


async def test_a_bad_write_of_any_kind_is_named_and_dropped(
    tmp_path: Path, new_database: NewDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    """The log line names the bad write by its kind and numbers, whatever its kind: a list of ignored
    players, which has no table number, stopped the writer instead (issue 45.3). What the write held
    stays out of the log."""
    store = await Store.open(new_database(tmp_path, True), id_hash_cost=MIN_COST)
    try:
        await store.writer.load_sessions()
        ala = await store.accounts.register("Ala", "LongSecretId2", "", "pl")
        moves(store, 3, range(1, 3))
        store.writer.ignored_added(ala.number, "*bob", None)  # type: ignore[arg-type]  # no nick: refused
        moves(store, 3, range(3, 5))
        async with asyncio.timeout(10):
            await store.writer.flush()
        assert store.writer.storage_failure is None
        assert await journal_count(store, 3) == 4
        [dropped] = lines(caplog, "a write was refused by the database and is dropped")
        named = dropped.getMessage().partition("write=")[2]
        assert named.strip('"').startswith("ignored") and "Bob" not in named
        # nor in the database's error: SQLAlchemy quoted the statement's values (chat, addresses, nicks)
        assert "Bob" not in caplog.text
    finally:
        await store.close()


async def test_at_a_stop_what_storage_does_not_take_is_named_once_and_left(
    tmp_path: Path, new_database: NewDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    url = new_database(tmp_path, True)
    store = await Store.open(url, id_hash_cost=MIN_COST)
    breaker = breaker_for(url)
    await store.writer.load_sessions()
    id_hmac = store.writer.id_hmac("SecretPlayerId1")
    await breaker.break_storage()
    moves(store, 7, range(1, 4))
    moves(store, 9, range(1, 2))
    store.writer.journal(0, 1, "chat", {"t": 1, "n": 0, "nick": "*Ala", "type": "1", "text": "hi", "e": 5})
    store.writer.journal(-1, 1, "private", {"t": 1, "n": 0, "from": "*Ala", "to": "*Bob", "text": "psst"})
    store.writer.journal(-2, 1, "k", {"s": id_hmac, "k": 4})
    store.writer.session_saved(SavedSession(id_hmac, "*Ala", "en", False, True, "", (7,), (), 4))
    game = Game(8, 8)
    game.play(1, parse_move("aa", game.width, game.height))
    game.resign(2)
    record = game_to_record(game, black_name="*Ala", white_name="*Bob", date="2026-11-25")
    store.writer.archive(
        FinishedGame(7, record, "*Ala", "*Bob", "0808stanF0.0.0", game.result, False, None, 0, 4),
        lambda number, accounts: None,
    )
    started = time.monotonic()
    await store.writer.finish(0.5)
    took = time.monotonic() - started
    store.writer.close()
    await store.engine.dispose()
    await breaker.mend()

    assert 0.5 <= took < 0.5 + writer.LAST_ATTEMPT_SECONDS + 0.5
    [stopped] = lines(caplog, "stopped with writes storage did not take")
    assert stopped.levelno == logging.ERROR
    text = stopped.getMessage()
    for field in ("writes=9", "journal=7:3,9:1", "chat_lines=2", 'games="*Ala vs *Bob"', "sessions=2"):
        assert field in text, text
    assert all(id_hmac not in record.getMessage() for record in caplog.records)
    store = await Store.open(url, id_hash_cost=MIN_COST)  # none of it was written
    try:
        assert await journal_count(store, 7) == 0
        async with store.engine.connect() as connection:
            assert await connection.scalar(select(func.count()).select_from(ArchivedGame)) == 0
    finally:
        await store.close()


@postgres_only
async def test_connections_postgresql_ended_are_replaced_and_storage_never_fails(
    tmp_path: Path, new_database: NewDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    """A restart or a failover of PostgreSQL ends every pooled connection: the next write and the next
    read find new ones. Before pool_pre_ping the first write failed on a dead one (storage failing, the
    moves not yet stored taken back) and so did the first read (a 503)."""
    caplog.set_level(logging.DEBUG, logger="server.store.writer")
    url = new_database(tmp_path, True)
    store = await Store.open(url, id_hash_cost=MIN_COST)
    try:
        moves(store, 5, range(1, 3))
        await store.writer.flush()
        assert await journal_count(store, 5) == 2  # the pool now holds a connection
        await end_sessions(url)
        moves(store, 5, range(3, 5))
        await store.writer.flush()
        assert await journal_count(store, 5) == 4
        await end_sessions(url)
        assert await journal_count(store, 5) == 4
        assert (
            store.writer.storage_failure is None
            and not lines(caplog, "storage")
            and not lines(caplog, "write")
        )
    finally:
        await store.close()


async def end_sessions(url: str) -> None:
    """What a restart does to a database's sessions."""
    engine = create_async_engine(POSTGRES or "", isolation_level="AUTOCOMMIT")
    async with engine.connect() as connection:
        ended = (
            await connection.execute(text(ending_sessions(make_url(url).database, but_server_locks=False)))
        ).all()
    await engine.dispose()
    assert ended


async def test_what_counts_as_storage_failing(tmp_path: Path, new_database: NewDatabase) -> None:
    """Real errors from the real database: a constraint is the write's fault, a lost connection or a
    missing database file is storage's."""
    store = await Store.open(new_database(tmp_path, True), id_hash_cost=MIN_COST)
    try:
        with pytest.raises(Exception) as integrity:
            async with store.engine.begin() as connection:
                await connection.execute(text("INSERT INTO server_state (name, value) VALUES (NULL, 'x')"))
        assert unavailable(integrity.value) is None
    finally:
        await store.close()
    assert (
        unavailable(ConnectionRefusedError(111, "Connection refused"))
        == "cannot reach the database (ECONNREFUSED)"
    )
    assert unavailable(OSError(28, "No space left on device")) == "disk full"
    assert unavailable(ValueError("a bug")) is None
    untrusted = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")
    assert unavailable(untrusted) == "its TLS certificate is not trusted: see PGSSLROOTCERT"


def database_path(url: str) -> Path:
    return Path(url.removeprefix("sqlite+aiosqlite:///"))


async def test_how_long_storage_failed_is_measured_on_the_monotonic_clock(
    tmp_path: Path,
    new_database: NewDatabase,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The wall clock stepping back an hour during an outage (NTP, an operator) must not make the
    outage last a negative time in the log."""
    caplog.set_level(logging.INFO, logger="server.store.writer")
    url = new_database(tmp_path, True)
    store = await Store.open(url, id_hash_cost=MIN_COST)
    breaker = breaker_for(url)
    try:
        await breaker.break_storage()
        moves(store, 4, range(1, 3))
        with pytest.raises(StorageFailing):
            await store.writer.flush()
        wall = time.time
        monkeypatch.setattr(time, "time", lambda: wall() - 3600)
        await breaker.mend()
        await until(lambda: store.writer.storage_failure is None)
    finally:
        await store.close()
    [back] = lines(caplog, BACK)
    seconds = float(back.getMessage().split("failing_seconds=")[1].split()[0])
    assert 0 <= seconds < 60


def finished(uid: int) -> FinishedGame:
    """A game of table `uid` that ended, for the archive."""
    game = Game(8, 8)
    game.play(1, parse_move("aa", game.width, game.height))
    game.resign(2)
    record = game_to_record(game, black_name="*Ala", white_name="*Bob", date="2026-11-25")
    return FinishedGame(uid, record, "*Ala", "*Bob", "0808stanF0.0.0", game.result, False, None, 0, 9)


async def test_writes_taken_back_are_never_written_and_keep_their_place_in_the_queue(
    tmp_path: Path, new_database: NewDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    """The hub takes back what storage has not taken of a table (server/hub/takeback.py): the writer says
    what that is, by table, and never writes what is withdrawn, nor the table's game not yet archived;
    the rest is written when storage is back, and a reply waiting for writes queued before still waits
    for as many. A retry of withdrawn writes alone is not storage coming back."""
    caplog.set_level(logging.DEBUG, logger="server.store.writer")
    url = new_database(tmp_path, True)
    store = await Store.open(url, id_hash_cost=MIN_COST)
    breaker = breaker_for(url)
    try:
        moves(store, 5, range(1, 3))
        await store.writer.flush()
        await breaker.break_storage()
        moves(store, 5, range(3, 6))
        store.writer.archive(finished(5), lambda number, accounts: None)
        moves(store, 6, range(1, 3))
        lobby_line = {"t": 1, "n": 0, "nick": "*Ala", "type": "1", "text": "hi", "e": 5}
        store.writer.journal(0, 1, "chat", lobby_line)
        with pytest.raises(StorageFailing):
            await store.writer.flush()
        unstored = store.writer.unstored_journal()
        assert {uid: [seq for seq, _, _ in entries] for uid, entries in unstored.items()} == {
            5: [3, 4, 5],
            6: [1, 2],
        }  # game tables only: not the lobby's chat
        assert unstored[5][0][1:] == ("move", {"p": 2, "w": "aa", "filler": "x" * 2000})
        queued = store.writer.queued
        store.writer.withdraw(5, {4, 5})
        store.writer.withdraw(6, {1, 2})
        left = store.writer.unstored_journal()
        assert {uid: [seq for seq, _, _ in entries] for uid, entries in left.items()} == {5: [3]}
        assert store.writer.queued == queued

        await breaker.mend()
        await until(lambda: store.writer.storage_failure is None)
        await store.writer.flush()
        assert store.writer.written == store.writer.queued == queued
        async with store.engine.connect() as connection:
            rows = await connection.execute(select(JournalEntry.uid, JournalEntry.seq).order_by("uid", "seq"))
            assert rows.all() == [(0, 1), (5, 1), (5, 2), (5, 3)]
            assert await connection.scalar(select(func.count()).select_from(ArchivedGame)) == 0
        assert len(lines(caplog, FAILING)) == len(lines(caplog, BACK)) == 1

        await breaker.break_storage()  # again: this time everything queued is taken back
        moves(store, 7, range(1, 3))
        with pytest.raises(StorageFailing):
            await store.writer.flush()
        store.writer.withdraw(7, {1, 2})
        tries = len(lines(caplog, "write failed again"))
        await asyncio.sleep(0.5)  # retries of nothing but withdrawn writes
        assert store.writer.storage_failure is not None and len(lines(caplog, BACK)) == 1
        assert len(lines(caplog, "write failed again")) == tries  # nothing was tried
        await store.writer.finish(0.2)  # a stop: nothing is left that storage did not take
        assert not lines(caplog, "stopped with writes storage did not take")
    finally:
        await store.close()
        await breaker.mend()
