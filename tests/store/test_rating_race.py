"""Games of one player archived at the same moment by two members of a cluster (docs/cluster.md): each
member writes in its own PostgreSQL transaction, and every game's rating change is kept."""

from __future__ import annotations

import asyncio

import pytest

from server.config import Settings
from server.engine.board import BLACK
from server.store.store import Store
from tests.conftest import POSTGRES
from tests.store.test_accounts import registered_id
from tests.store.test_rating_history import finished

ROUNDS = 10  # a lost update needs both transactions to read the row before either writes it


@pytest.mark.skipif(not POSTGRES, reason="PostgreSQL: set KROPKI_TEST_DB (scripts/with-postgres)")
async def test_two_members_archiving_one_players_games_at_once_lose_no_rating_change(
    settings: Settings,
) -> None:
    first = await Store.open(settings.db_url, member="a", id_hash_cost=settings.id_hash_cost)
    second = await Store.open(settings.db_url, member="b", id_hash_cost=settings.id_hash_cost)
    try:
        for nick in ("Ala", "Bob", "Cyd"):
            await first.accounts.register(nick, registered_id(nick, "pw"), "", "en")
        for round_ in range(ROUNDS):  # Ala wins at member a against Bob and at member b against Cyd
            first.writer.archive(finished(2 * round_ + 1, "Ala", "Bob", BLACK), lambda *_: None)
            second.writer.archive(finished(2 * round_ + 2, "Ala", "Cyd", BLACK), lambda *_: None)
            await asyncio.gather(first.writer.flush(), second.writer.flush())

        profile = await first.accounts.profile("Ala")
        history = [point.rating for point in await first.games.ratings("Ala")]
        assert profile is not None
        assert (profile.wins, len(history)) == (2 * ROUNDS, 2 * ROUNDS)
        assert history == sorted(set(history))  # each win rated from the rating the one before left
        assert profile.rating.rating == max(history)
    finally:
        await first.close()
        await second.close()
