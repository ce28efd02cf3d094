"""Accounts in a real SQLite file: registration, login, admin changes, and no id kept in clear."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import select

from server.config import Settings
from server.engine.rating import INITIAL
from server.store import idhash
from server.store.accounts import NickTaken, UnknownNick
from server.store.models import Base
from server.store.store import Store


def registered_id(nick: str, password: str) -> str:
    """The id zagram's clients derive for a registered player (the doc's recipe)."""
    digest = hashlib.sha1((nick + "9WB2qGYzzWry1vbVjoSK" + password).encode()).digest()
    return base64.b64encode(digest).decode().replace("+", "_").replace("/", ".")[:10]


def test_the_doc_recipe_gives_the_spec_test_vector() -> None:
    assert registered_id("name", "mypass") == "K4ZUPkUzXY"


@pytest.fixture
async def store(settings: Settings) -> AsyncIterator[Store]:
    opened = await Store.open(settings.db_url)
    yield opened
    await opened.close()


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
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.accounts.register("Alice", registered_id("Alice", "pw"), "", "en")
    checks: list[str] = []
    real = idhash.id_matches

    def counting(secret: str, stored: str) -> bool:
        checks.append(stored.split("$")[0])
        return real(secret, stored)

    monkeypatch.setattr(idhash, "id_matches", counting)
    await store.accounts.authenticate("Alice", "WrongWrong")
    await store.accounts.authenticate("Nobody", "WrongWrong")

    assert checks == ["scrypt", "scrypt"]


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
    with pytest.raises(NickTaken):  # nobody else may take the nick the account logs in with
        await store.accounts.register("alice", registered_id("alice", "x"), "", "en")
    await store.accounts.rename("Alicja", "ALICE")  # back to (a form of) its own login nick

    await store.accounts.delete("ALICE")
    assert await store.accounts.profile("ALICE") is None
    with pytest.raises(UnknownNick):
        await store.accounts.delete("Alicja")
    with pytest.raises(UnknownNick):
        await store.accounts.set_role("Nobody", "moderator", "test")


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
