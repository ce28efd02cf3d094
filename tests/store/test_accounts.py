"""Accounts in a real SQLite file: registration, login, admin changes, and no id kept in clear."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import re
import threading
from collections.abc import AsyncIterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from server.config import Settings
from server.engine.rating import INITIAL
from server.engine.sgf import read_record
from server.protocol.codec import nick_key
from server.store import database, idhash
from server.store.accounts import NickTaken, StillOnline, UnknownNick
from server.store.hosted import Entry as HostedEntry
from server.store.hosted import PairedRound
from server.store.hosted import Settings as HostedSettings
from server.store.models import Base, User
from server.store.store import Store
from tests.store.breakers import breaker_for, until
from tests.store.test_archiving import finished
from tests.store.test_sessions import session


def registered_id(nick: str, password: str) -> str:
    """The id zagram's clients derive for a registered player (the doc's recipe)."""
    digest = hashlib.sha1((nick + "9WB2qGYzzWry1vbVjoSK" + password).encode()).digest()
    return base64.b64encode(digest).decode().replace("+", "_").replace("/", ".")[:10]


def test_the_doc_recipe_gives_the_spec_test_vector() -> None:
    assert registered_id("name", "mypass") == "K4ZUPkUzXY"


@pytest.fixture
async def store(settings: Settings) -> AsyncIterator[Store]:
    opened = await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost)
    yield opened
    await opened.close()


async def stored_hash(store: Store, nick: str) -> str:
    async with store.engine.connect() as connection:
        found = await connection.scalar(select(User.secret_hash).where(User.nick == nick))
    assert found is not None
    return found


def database_bytes(settings: Settings) -> bytes:
    path = Path(settings.db_url.removeprefix("sqlite+aiosqlite:///"))
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


async def test_register_then_log_in_with_the_right_id_only(store: Store) -> None:
    secret = registered_id("Alice", "pw")
    account = await store.accounts.register("Alice", secret, "alice@example.org", "pl")

    assert (account.nick, account.rating, account.wins, account.lang) == (
        "Alice",
        round(INITIAL.rating),
        0,
        "pl",
    )
    assert await store.accounts.authenticate("Alice", secret) == account
    assert await store.accounts.authenticate("alice", secret) == account  # the nick's look-alike finds it
    assert await store.accounts.authenticate("Alice", registered_id("Alice", "wrong")) is None
    assert await store.accounts.authenticate("Nobody", secret) is None


async def test_an_unknown_nick_costs_one_hash_check_like_a_known_one(
    store: Store, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.accounts.register("Alice", registered_id("Alice", "pw"), "", "en")
    checks: list[str] = []
    real = idhash.id_matches

    def counting(secret: str, stored: str) -> bool:
        checks.append("$".join(stored.split("$")[:4]))
        return real(secret, stored)

    monkeypatch.setattr(idhash, "id_matches", counting)
    await store.accounts.authenticate("Alice", "WrongWrong")
    await store.accounts.authenticate("Nobody", "WrongWrong")

    cost = f"scrypt${2**settings.id_hash_cost}$8$1"  # the nobody's check costs what the current cost does
    assert checks == [cost, cost]


def test_the_default_cost_is_scrypt_at_2_to_the_14() -> None:
    made = idhash.IdHashing().hash("K4ZUPkUzXY")

    assert made.startswith("scrypt$16384$8$1$")
    assert idhash.id_matches("K4ZUPkUzXY", made) and not idhash.id_matches("K4ZUPkUzXZ", made)
    with pytest.raises(ValueError):
        idhash.IdHashing(idhash.MIN_COST - 1)


def test_the_dearest_cost_hashes_and_checks() -> None:
    """OpenSSL's scrypt refuses more than 32 MB unless told: N = 2^15 and above need a limit of their own."""
    made = idhash.IdHashing(idhash.MAX_COST).hash("K4ZUPkUzXY")

    assert made.startswith(f"scrypt${2**idhash.MAX_COST}$8$1$") and idhash.id_matches("K4ZUPkUzXY", made)
    dearer = made.replace(f"${2**idhash.MAX_COST}$", f"${2 ** (idhash.MAX_COST + 1)}$", 1)
    with pytest.raises(ValueError, match="beyond any cost"):  # a row may not make a check take gigabytes
        idhash.id_matches("K4ZUPkUzXY", dearer)


async def test_an_id_hashed_at_another_cost_is_hashed_again_at_its_next_login(
    store: Store, settings: Settings
) -> None:
    """The operator raised the cost (serve --id-hash-cost): the hashes made before still log in, and are
    made again at the new cost, from the id the player just gave, at their next login."""
    secret, bob = registered_id("Alice", "pw"), registered_id("Bob", "pw")
    await store.accounts.register("Alice", secret, "", "en")
    await store.accounts.register("Bob", bob, "", "en")
    before, bob_before = await stored_hash(store, "Alice"), await stored_hash(store, "Bob")
    await store.close()
    store = await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost + 1)
    try:
        assert await store.accounts.authenticate("Alice", secret) is not None
        renewed = await stored_hash(store, "Alice")
        assert renewed.startswith(f"scrypt${2 ** (settings.id_hash_cost + 1)}$8$1$") and renewed != before
        assert await store.accounts.authenticate("Alice", secret) is not None
        assert await stored_hash(store, "Alice") == renewed  # made once
        assert await store.accounts.authenticate("Alice", registered_id("Alice", "wrong")) is None

        assert await store.accounts.authenticate("Bob", registered_id("Bob", "wrong")) is None
        assert await stored_hash(store, "Bob") == bob_before  # a wrong id changes nothing
    finally:
        await store.close()


async def alice_hashed_at_a_lower_cost(settings: Settings) -> tuple[Store, str, str]:
    """Alice registered at the settings' cost, and a store at one more: her id, and its hash as stored."""
    secret = registered_id("Alice", "pw")
    store = await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost)
    await store.accounts.register("Alice", secret, "", "en")
    before = await stored_hash(store, "Alice")
    await store.close()
    return await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost + 1), secret, before


async def test_a_login_goes_on_when_storage_cannot_take_the_new_hash(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The hash made again is a write: storage that takes none now (a locked or read-only database, a
    full disk) leaves the old one, logs why (never the id), and the login goes on."""
    monkeypatch.setattr(database, "BUSY_TIMEOUT_MS", 200)
    store, secret, before = await alice_hashed_at_a_lower_cost(settings)
    breaker = breaker_for(settings.db_url)
    try:
        await breaker.break_storage()
        try:
            account = await store.accounts.authenticate("Alice", secret)
        finally:
            await breaker.mend()
        assert account is not None and account.nick == "Alice"
        assert await stored_hash(store, "Alice") == before
        [warning] = [record for record in caplog.records if record.getMessage().startswith("id hash not")]
        assert "nick=Alice " in warning.getMessage() and secret not in caplog.text
        assert breaker.gives(re.search(r'reason="([^"]+)"', warning.getMessage())[1])  # type: ignore[index]

        assert await store.accounts.authenticate("Alice", secret) is not None  # the next login does it
        assert (await stored_hash(store, "Alice")).startswith(f"scrypt${2 ** (settings.id_hash_cost + 1)}$")
    finally:
        await store.close()


async def test_a_login_goes_on_when_the_hashes_are_too_busy_to_make_its_hash_again(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A flood of logins takes every thread: the hash made again at the new cost is refused
    (HashesBusy), the login goes on with the old hash, and a later one makes it."""
    store, secret, before = await alice_hashed_at_a_lower_cost(settings)
    try:

        async def flooded(secret: str) -> str:
            raise idhash.HashesBusy("as IdHashing._in_turn refuses it")

        with monkeypatch.context() as patched:
            patched.setattr(store.hashing, "hash_async", flooded)
            account = await store.accounts.authenticate("Alice", secret)
        assert account is not None and await stored_hash(store, "Alice") == before
        [warning] = [record for record in caplog.records if record.getMessage().startswith("id hash not")]
        assert "nick=Alice " in warning.getMessage() and secret not in caplog.text

        assert await store.accounts.authenticate("Alice", secret) is not None
        assert (await stored_hash(store, "Alice")).startswith(f"scrypt${2 ** (settings.id_hash_cost + 1)}$")
    finally:
        await store.close()


class CountingExecutor(ThreadPoolExecutor):
    submitted = 0

    def submit(self, *args: Any, **kwargs: Any) -> Future[Any]:
        self.submitted += 1
        return super().submit(*args, **kwargs)


async def test_a_flood_of_logins_waits_on_the_hashes_threads_alone(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """asyncio's default threads (a database host's name looked up, a tournament's pairing) are never
    taken by id hashes, and no more than HASH_THREADS checks (each scrypt's memory) run at once."""
    default = CountingExecutor(2)
    asyncio.get_running_loop().set_default_executor(default)
    lock, running, most = threading.Lock(), [0], [0]
    real = idhash.id_matches

    def counting(secret: str, stored: str) -> bool:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            return real(secret, stored)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(idhash, "id_matches", counting)
    await store.accounts.register("Alice", registered_id("Alice", "pw"), "", "en")
    guesses = [store.accounts.authenticate(f"Nick{number}", "WrongWrong") for number in range(20)]
    guesses += [
        store.accounts.authenticate("Alice", registered_id("Alice", str(number))) for number in range(20)
    ]

    assert await asyncio.gather(*guesses) == [None] * 40
    assert default.submitted == 0 and 1 <= most[0] <= idhash.HASH_THREADS


def held_checks(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, list[str]]:
    """Id checks held in their threads until the event is set, then listed (their ids) in the order
    they ran: which call got a thread when."""
    gate, order = threading.Event(), []
    real = idhash.id_matches

    def recording(secret: str, stored: str) -> bool:
        gate.wait(10)
        order.append(secret)
        return real(secret, stored)

    monkeypatch.setattr(idhash, "id_matches", recording)
    return gate, order


async def test_the_owners_check_goes_ahead_of_the_guesses_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    """A flood of strangers' guesses waits for the hashes' threads; the owner's login, from an address
    it logged in from, is checked as soon as a thread is free, before them."""
    monkeypatch.setattr(idhash, "HASH_THREADS", 1)
    hashing = idhash.IdHashing(idhash.MIN_COST)
    gate, order = held_checks(monkeypatch)
    guesses = [asyncio.create_task(hashing.check_async(f"guess{number}", None)) for number in range(4)]
    waiting = asyncio.create_task(hashing.check_async("given up", None))
    owner = asyncio.create_task(hashing.check_async("owner", None, first=True))
    await until(lambda: (len(hashing.turns[False]), len(hashing.turns[True])) == (4, 1))  # one on the thread
    waiting.cancel()  # a client gone: its turn is skipped
    gate.set()

    assert await asyncio.gather(owner, *guesses) == [False] * 5
    assert order == ["guess0", "owner", "guess1", "guess2", "guess3"]
    hashing.close()


async def test_a_check_given_up_holds_its_thread_until_it_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """A login whose client went away while its id was being checked: the check goes on in its thread,
    which the next turn gets only once it ends, so the owner coming meanwhile is still first."""
    monkeypatch.setattr(idhash, "HASH_THREADS", 1)
    hashing = idhash.IdHashing(idhash.MIN_COST)
    gate, order = held_checks(monkeypatch)
    given_up = asyncio.create_task(hashing.check_async("given up", None))
    guess = asyncio.create_task(hashing.check_async("guess", None))
    await until(lambda: len(hashing.turns[False]) == 1)
    given_up.cancel()
    await asyncio.sleep(0.05)
    owner = asyncio.create_task(hashing.check_async("owner", None, first=True))
    await until(lambda: len(hashing.turns[True]) == 1)
    gate.set()

    assert await asyncio.gather(owner, guess) == [False, False]
    assert order == ["given up", "owner", "guess"]
    hashing.close()


async def test_a_strangers_check_that_would_wait_too_long_is_refused_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A flood of guesses from many addresses: past MOST_WAIT of checks queued, the next is refused
    without waiting (HashesBusy), the owner's never; a client gone makes room for another."""
    monkeypatch.setattr(idhash, "HASH_THREADS", 1)
    monkeypatch.setattr(idhash, "MOST_WAIT", 2.5)
    hashing = idhash.IdHashing(idhash.MIN_COST)
    hashing.seconds = 1.0  # as if each check took a second: two may wait
    gate, order = held_checks(monkeypatch)
    guesses = [asyncio.create_task(hashing.check_async(f"guess{number}", None)) for number in range(3)]
    await until(lambda: hashing.waiting == 2)  # guess0 on the thread
    with pytest.raises(idhash.HashesBusy):
        await hashing.check_async("one too many", None)
    with pytest.raises(idhash.HashesBusy):
        await hashing.hash_async("a registration")
    guesses[2].cancel()  # its client went away
    await until(lambda: hashing.waiting == 1)
    late = asyncio.create_task(hashing.check_async("late", None))
    await until(lambda: hashing.waiting == 2)
    owner = asyncio.create_task(hashing.check_async("owner", None, first=True))  # past the bound
    await until(lambda: hashing.waiting == 3)
    gate.set()

    assert await asyncio.gather(owner, late, *guesses[:2]) == [False] * 4
    assert order == ["guess0", "owner", "guess1", "late"]
    assert hashing.waiting == 0 and hashing.free == 1 and 0 < hashing.seconds < 1.0
    hashing.close()


async def test_a_server_just_started_bounds_the_wait_from_its_first_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a check takes is known before any ran (one hash timed as the hashing starts): a flood that
    meets a server just started is refused past MOST_WAIT as any other."""
    monkeypatch.setattr(idhash, "HASH_THREADS", 1)
    hashing = idhash.IdHashing(idhash.MIN_COST)
    assert hashing.seconds > 0
    monkeypatch.setattr(idhash, "MOST_WAIT", hashing.seconds / 2)  # nothing may wait
    gate, _ = held_checks(monkeypatch)
    first = asyncio.create_task(hashing.check_async("first", None))
    await until(lambda: hashing.free == 0)

    with pytest.raises(idhash.HashesBusy):
        await asyncio.wait_for(hashing.check_async("second", None), 5)
    gate.set()
    assert await first is False
    hashing.close()


async def test_look_alike_nicks_are_taken(store: Store) -> None:
    await store.accounts.register("Alice", registered_id("Alice", "pw"), "", "en")

    for nick in ("Alice", "ALICE", "Ａｌｉｃｅ"):
        with pytest.raises(NickTaken):
            await store.accounts.register(nick, registered_id(nick, "x"), "", "en")


async def test_the_database_never_holds_an_id_in_clear(store: Store, settings: Settings) -> None:
    secret = registered_id("Alice", "pw")
    await store.accounts.register("Alice", secret, "a@example.org", "en")
    await store.accounts.authenticate("Alice", secret)

    async with store.engine.connect() as connection:
        rows = []
        for table in Base.metadata.sorted_tables:
            rows += [repr(row) for row in await connection.execute(select(table))]
    assert "a@example.org" in "".join(rows)  # the reading works: what is stored is found
    assert secret not in "".join(rows)
    if settings.db_url.startswith("sqlite"):  # and nowhere in the file, free pages and WAL included
        await store.engine.dispose()
        content = database_bytes(settings)
        assert b"a@example.org" in content
        assert secret.encode() not in content
        assert secret.encode("utf-16-le") not in content


async def test_admin_changes(store: Store) -> None:
    await store.accounts.register("Alice", registered_id("Alice", "pw"), "", "en")
    await store.accounts.register("Bob", registered_id("Bob", "pw"), "", "en")

    await store.accounts.set_role("alice", "moderator", "test")
    assert (await store.accounts.profile("Alice")).role == "moderator"  # type: ignore[union-attr]

    with pytest.raises(NickTaken):
        await store.accounts.rename("Alice", "BOB")
    await store.accounts.rename("Alice", "Alicja")
    assert await store.accounts.profile("Alice") is None
    # the client derives the id from the nick typed at login: the old nick (and password) still log in
    renamed = await store.accounts.authenticate("Alice", registered_id("Alice", "pw"))
    assert renamed is not None and renamed.nick == "Alicja" and renamed.role == "moderator"
    assert renamed.former == ("alice",)  # her seats under it move at her login (Mirrors.follow_rename)
    with pytest.raises(NickTaken):  # nobody else may take the nick the account logs in with
        await store.accounts.register("alice", registered_id("alice", "x"), "", "en")
    await store.accounts.rename("Alicja", "ALICE")  # back to (a form of) its own login nick
    back = await store.accounts.authenticate("Alice", registered_id("Alice", "pw"))
    assert back is not None and back.former == ("alicja",)
    bob = await store.accounts.authenticate("Bob", registered_id("Bob", "pw"))
    assert bob is not None and bob.former == ()  # never renamed: no member is told of his logins

    await store.accounts.delete("ALICE")
    assert await store.accounts.profile("ALICE") is None
    with pytest.raises(UnknownNick):
        await store.accounts.delete("Alicja")
    with pytest.raises(UnknownNick):
        await store.accounts.set_role("Nobody", "moderator", "test")


async def test_an_account_logged_in_is_not_deleted_until_its_session_ends(store: Store) -> None:
    """A running server (or one restarted) keeps the session and saves it again, and a session is tied to
    its account by nick alone: whoever registered the nick next would get it at a restart."""
    await store.accounts.register("Alice", registered_id("Alice", "pw"), "", "en")
    await store.accounts.rename("Alice", "Alicja")  # she logs in as Alice and plays as Alicja
    await store.writer.load_sessions()  # as the server does at its start: the key of the id HMACs
    id_hmac = store.writer.id_hmac(registered_id("Alice", "pw"))
    store.writer.session_saved(session(id_hmac, "Alicja", registered=True))
    await store.writer.flush()

    with pytest.raises(StillOnline, match="Alicja"):
        await store.accounts.delete("Alicja")
    assert await store.accounts.profile("Alicja") is not None
    store.writer.session_ended(id_hmac)  # she logged out, or a moderator's kick ended it
    await store.writer.flush()
    assert await store.accounts.delete("Alicja") == 0


async def test_a_deleted_accounts_team_games_and_bot_lines_no_longer_name_it(store: Store) -> None:
    """A team game names its players in `game_players` and among its teams' nicks in PB and PW, and a
    bot on a line of the root comment too: the deletion renamed only a two-player game's PB and PW."""
    await store.accounts.register("Alice", registered_id("Alice", "pw"), "", "en")
    await store.bots.create("Robo")
    for game in (
        finished("Alice", "*Bob", "*Cid", "*Dan"),
        finished("*Ala", "Robo"),
        finished("*Eve", "*Fay", "*Gil", "Robo"),
    ):
        store.writer.archive(game, lambda *_: None)
    await store.writer.flush()

    assert (await store.accounts.delete("Alice"), await store.accounts.delete("Robo")) == (1, 2)
    records = [read_record(await store.games.sgf(number) or "") for number in (1, 2, 3)]
    assert [(r.black_name, r.white_name, r.comment) for r in records] == [
        ("deleted1, *Cid", "*Bob, *Dan", None),
        ("*Ala", "deleted2", "W is a bot: deleted2"),
        ("*Eve, *Gil", "*Fay, deleted2", "W is a bot: deleted2"),
    ]
    summaries = await store.games.recent(None, 10)
    assert [(s.blue, s.red, s.players) for s in summaries] == [
        ("*Eve, *Gil", "*Fay, deleted2", ("*Eve", "*Fay", "*Gil", "deleted2")),
        ("*Ala", "deleted2", ()),
        ("deleted1, *Cid", "*Bob, *Dan", ("deleted1", "*Bob", "*Cid", "*Dan")),
    ]
    for nick in ("Alice", "Robo"):
        assert await store.games.recent(nick, 10) == [] and not await store.games.has_played(nick)
    assert [s.number for s in await store.games.recent("deleted2", 10)] == [3, 2]


async def test_a_deleted_accounts_tournament_entries_pairings_and_tables_name_it_so(
    store: Store,
) -> None:
    """Standings and pairings read players by nick: left as they were, the next owner of the nick had the
    deleted account's entry, points and games, in a finished tournament as in one being played."""
    await store.accounts.register("Alice", registered_id("Alice", "pw"), "", "en")
    now = datetime.now(UTC)
    ids = []
    for name, state in (("Done", "finished"), ("Cup", "running")):
        settings = HostedSettings(name, "swiss", "1010s0..a.F.n....", 3, 0, now, None, None, True, 0, "k")
        hosted = await store.hosted.create(settings, now)
        for nick in ("Alice", "Bob"):
            entry = HostedEntry(nick, nick_key(nick), "@" + nick_key(nick), 1500.0, now, False)
            assert await store.hosted.register(hosted.id, entry)
        await store.hosted.save_round(hosted.id, PairedRound(1, (("Alice", "Bob"),), None), now)
        await store.hosted.save_round(hosted.id, PairedRound(2, (), "Alice"), now)
        await store.hosted.set_state(hosted.id, state)
        store.writer.tournament_table(len(ids) + 1, name, "1", "Alice", "Bob", "1010s0..a.F.n....")
        ids.append(hosted.id)
    store.writer.tournament_table(3, "Organised", None, "ALICE, *Cid", "*Dan, *Eve", "1010s0..a.F.n....")
    await store.writer.flush()
    await store.accounts.rename("Alice", "Alicja")  # and joined again under the new nick
    assert await store.hosted.register(ids[1], HostedEntry("Alicja", "alicja", "@alicja", 1500.0, now, False))

    await store.accounts.delete("Alicja")
    for hosted_id, withdrawn in zip(ids, (False, True), strict=True):  # a finished one keeps its entries
        entries = await store.hosted.entries(hosted_id)
        assert [(e.nick, e.nick_key, e.seat, e.withdrawn) for e in entries][:2] == [
            ("deleted1", "deleted1", "", withdrawn),
            ("Bob", "bob", "@bob", False),
        ]
        assert [(r.boards, r.bye) for r in await store.hosted.rounds(hosted_id)] == [
            ((("deleted1", "Bob"),), None),
            ((), "deleted1"),
        ]
    assert [(e.nick, e.withdrawn) for e in await store.hosted.entries(ids[1])][2:] == [("deleted1.2", True)]
    tables = [t for name in ("Done", "Cup", "Organised") for t in await store.tournaments.tables(name)]
    assert [(t.blue, t.red) for t in tables] == [
        ("deleted1", "Bob"),
        ("deleted1", "Bob"),
        ("deleted1, *Cid", "*Dan, *Eve"),
    ]


@pytest.mark.parametrize(
    ("nick", "look_alike"),
    [
        ("Alan", "Alɑn"),  # LATIN SMALL LETTER ALPHA
        ("Alan", "AIan"),  # a capital I
        ("alan", "AIan"),  # ... whatever the case
        ("Alan", "A1an"),  # UTS #39: the digit 1 looks like l
        ("Bob", "B0b"),  # and 0 like O
        ("Bop", "Вор"),  # all Cyrillic: VE, O, ER
        ("Аӏа", "Ala"),  # all Cyrillic: A, PALOCHKA, A
    ],
)
async def test_a_nick_that_looks_like_an_account_s_is_taken(store: Store, nick: str, look_alike: str) -> None:
    await store.accounts.register(nick, registered_id(nick, "pw"), "", "en")

    with pytest.raises(NickTaken):
        await store.accounts.register(look_alike, registered_id(look_alike, "x"), "", "en")
    assert await store.accounts.authenticate(look_alike, registered_id(look_alike, "x")) is None


async def test_nicks_that_only_resemble_each_other_both_register(store: Store) -> None:
    for nick in ("Alan", "Alen", "Ala", "Ali", "All", "Bob2", "BobZ"):
        await store.accounts.register(nick, registered_id(nick, "pw"), "", "en")
        assert await store.accounts.authenticate(nick, registered_id(nick, "pw")) is not None


async def test_the_names_of_deleted_accounts_are_nobodys_to_register_or_rename_to(store: Store) -> None:
    """A deleted account's games and tournament entries name it `deleted<number>`: an account of that name
    would pass for it on every page that lists them."""
    await store.accounts.register("Bob", registered_id("Bob", "pw"), "", "en")
    for anonymous in ("deleted7", "Deleted12", "DELETED1"):
        with pytest.raises(NickTaken):
            await store.accounts.register(anonymous, registered_id(anonymous, "pw"), "", "en")
        with pytest.raises(NickTaken):
            await store.accounts.rename("Bob", anonymous)
    for ordinary in ("deleted", "deletedX", "undeleted1"):
        await store.accounts.register(ordinary, registered_id(ordinary, "pw"), "", "en")


async def test_a_rename_onto_a_look_alike_is_refused_and_its_own_look_is_kept(store: Store) -> None:
    await store.accounts.register("Alan", registered_id("Alan", "pw"), "", "en")
    await store.accounts.register("Bob", registered_id("Bob", "pw"), "", "en")

    for taken in ("Alɑn", "A1an", "AIAN"):
        with pytest.raises(NickTaken):
            await store.accounts.rename("Bob", taken)
    await store.accounts.rename("Alan", "AIan")  # a look of its own is nobody else's
    await store.accounts.rename("AIan", "Alicja")
    await store.accounts.rename("Bob", "Alɑn")  # the look Alan left is free again
    assert (await store.accounts.profile("Alɑn")).nick == "Alɑn"  # type: ignore[union-attr]


async def test_two_deleted_accounts_never_share_a_name(store: Store) -> None:
    """SQLite gave a new account the number of the newest one deleted (`users` had no AUTOINCREMENT):
    deleting that one too named both players `deleted<n>` and listed both their games under it."""
    await store.accounts.register("Alice", registered_id("Alice", "pw"), "", "en")
    await store.accounts.register("Bob", registered_id("Bob", "pw"), "", "en")
    store.writer.archive(finished("Bob", "Alice"), lambda *_: None)
    await store.writer.flush()
    assert await store.accounts.delete("Bob") == 1
    await store.accounts.register("Carol", registered_id("Carol", "pw"), "", "en")
    store.writer.archive(finished("Carol", "Alice"), lambda *_: None)
    await store.writer.flush()
    assert await store.accounts.delete("Carol") == 1

    summaries = await store.games.recent(None, 10)
    assert [(s.number, s.blue) for s in summaries] == [(2, "deleted3"), (1, "deleted2")]
    assert [s.number for s in await store.games.recent("deleted2", 10)] == [1]
