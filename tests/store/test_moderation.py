"""The sanctions and the moderation log in the store (SQLite, or PostgreSQL under scripts/with-postgres)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from server.hub.sanctions import BAN, KICK, MUTE
from server.store.moderation import Target
from server.store.store import Store
from tests.store.test_accounts import registered_id, store  # noqa: F401 (the fixture)


async def test_an_accounts_ban_follows_it_through_a_rename(store: Store) -> None:  # noqa: F811
    await store.accounts.register("Alice", registered_id("Alice", "pw"), "", "en")
    target = await store.moderation.target("alice")
    assert (target.shown, target.look, target.role) == ("Alice", "alice", "none")
    await store.moderation.sanction(BAN, target, by="Mod", reason="cheating", lasting=None)
    await store.accounts.rename("Alice", "Alicja")
    (ban,) = await store.moderation.active()
    assert (ban.kind, ban.target, ban.look, ban.ends, ban.reason, ban.by) == (
        BAN,
        "Alice",
        "alicja",
        None,
        "cheating",
        "Mod",
    )


async def test_what_has_ended_or_was_lifted_is_not_active_and_every_step_is_logged(
    store: Store,  # noqa: F811
) -> None:
    moderation = store.moderation
    troll = await moderation.target("*Troll")
    network = Target("203.0.113.0/24", network="203.0.113.0/24")
    await moderation.sanction(MUTE, troll, by="Mod", reason="a", lasting=timedelta(seconds=1))
    await moderation.sanction(BAN, network, by="Mod", reason="b", lasting=timedelta(days=1))
    kick = await moderation.sanction(KICK, troll, by="Mod", reason="c", lasting=None)
    assert kick.ends is not None  # a kick is kept a minute, for every member to see it
    await asyncio.sleep(1.1)
    assert [s.kind for s in await moderation.active()] == [BAN, KICK]
    assert (
        await moderation.lift(
            (BAN,), Target("203.0.113.0/24", network="203.0.113.0/24"), by="Boss", reason="d"
        )
        == 1
    )
    assert await moderation.lift((BAN,), troll, by="Boss", reason="e") == 0
    assert [s.kind for s in await moderation.active()] == [KICK]
    log = [
        (line.actor, line.action, line.target, line.detail, line.reason) for line in await moderation.log()
    ]
    assert log[2:] == [
        ("Mod", KICK, "*Troll", "now", "c"),
        ("Boss", "unban", "203.0.113.0/24", "1 lifted", "d"),
        ("Boss", "unban", "*Troll", "0 lifted", "e"),
    ]
    assert log[0][3].startswith("until 20") and log[1][3].endswith("network 203.0.113.0/24")
