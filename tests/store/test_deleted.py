"""What a deleted account leaves behind, and what a stranger who registers its nick next inherits of it:
nothing (docs/operations.md, "Accounts (admins)"). Real SQLite files (or PostgreSQL), no mocks."""

from __future__ import annotations

from server.store.reports import NewReport
from server.store.store import Store
from tests.store.test_accounts import registered_id, store  # noqa: F401 (a fixture)


def report_of(reported: str, by: str = "Ann", line: str = "") -> NewReport:
    """A report of a lobby line (`line`), quoting it, or of a player."""
    quoted = {"id": line, "nick": reported, "text": "BUY GOLD", "deleted": False, "reported": True}
    place, context = ("0", [quoted]) if line else ("", [])
    return NewReport(by, by.lower(), "", reported, "", place, line, "spam", context)


async def test_whoever_registers_a_deleted_accounts_nick_is_ignored_by_nobody(store: Store) -> None:  # noqa: F811
    """The players who ignored the deleted account kept its nick in their lists, by its key: the stranger
    who registered it next had their lines left out and their private lines and invitations refused."""
    ann = await store.accounts.register("Ann", registered_id("Ann", "pw"), "", "en")
    await store.accounts.register("Bob", registered_id("Bob", "pw"), "", "en")
    for nick in ("Bob", "*Troll"):
        store.writer.ignored_added(ann.number, nick.casefold(), nick)
    await store.writer.flush()

    await store.accounts.delete("Bob")
    await store.accounts.register("BOB", registered_id("BOB", "mallory"), "", "en")
    ann = await store.accounts.authenticate("Ann", registered_id("Ann", "pw"))
    assert ann is not None and ann.ignored == ("*Troll",)


async def test_an_open_report_of_a_deleted_account_names_it_so_not_the_next_holder(store: Store) -> None:  # noqa: F811
    """An open report kept the reported nick: closing it with a ban after a stranger registered the nick
    banned the stranger's new account. The reports it made name it so too."""
    for nick in ("Ann", "Bob"):
        await store.accounts.register(nick, registered_id(nick, "pw"), "", "en")
    about = await store.reports.make(report_of("Bob", line="1795348784_3"))
    by = await store.reports.make(report_of("Ann", by="Bob"))

    await store.accounts.delete("bob")
    await store.accounts.register("Bob", registered_id("Bob", "mallory"), "", "en")
    found = await store.reports.get_open(about)
    assert (found.reported, [line["nick"] for line in found.context]) == ("deleted2", ["deleted2"])
    target = await store.moderation.target(found.reported)
    assert target.user_id is None and target.shown == "deleted2"
    assert (await store.reports.get_open(by)).reporter == "deleted2"
    assert (await store.reports.make(report_of("Ann", by="Bob"))) != by, "the stranger's own report is new"
