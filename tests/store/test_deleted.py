"""What a deleted account leaves behind, and what a stranger who registers its nick next inherits of it:
nothing (docs/operations.md, "Accounts (admins)"). Real SQLite files (or PostgreSQL), no mocks."""

from __future__ import annotations

from server.store.store import Store
from tests.store.test_accounts import registered_id, store  # noqa: F401 (a fixture)


async def test_whoever_registers_a_deleted_accounts_nick_is_ignored_by_nobody(store: Store) -> None:  # noqa: F811
    """The players who ignored the deleted account kept its nick in their lists, by its key: the stranger
    who registered it next had their lines left out and their private lines and invitations refused."""
    for nick in ("Ann", "Bob"):
        await store.accounts.register(nick, registered_id(nick, "pw"), "", "en")
    store.writer.ignored_saved("ann", ("Bob", "*Troll"))
    await store.writer.flush()

    await store.accounts.delete("Bob")
    await store.accounts.register("BOB", registered_id("BOB", "mallory"), "", "en")
    ann = await store.accounts.authenticate("Ann", registered_id("Ann", "pw"))
    assert ann is not None and ann.ignored == ("*Troll",)
