"""Each rated game leaves the players' new ratings in `rating_changes`, written with the game itself."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from server.config import Settings
from server.engine.board import BLACK, WHITE
from server.engine.game import Result
from server.engine.sgf import GameRecord
from server.hub.persistence import FinishedGame
from server.store.store import Store
from tests.store.test_accounts import registered_id


@pytest.fixture
async def store(settings: Settings) -> AsyncIterator[Store]:
    opened = await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost)
    yield opened
    await opened.close()


def finished(uid: int, blue: str, red: str, winner: int, *, rated: bool = True) -> FinishedGame:
    return FinishedGame(
        uid=uid,
        record=GameRecord(width=10, height=10),
        blue=blue,
        red=red,
        game_type="1010s0..a.R.n....",
        result=Result(winner, "R"),
        rated=rated,
        tournament=None,
        game_index=0,
        journal_seq=1,
    )


async def test_rated_games_only_write_the_new_ratings(store: Store) -> None:
    for nick in ("Ala", "Bob"):
        await store.accounts.register(nick, registered_id(nick, "pw"), "", "en")
    archived: list[int] = []
    games = [
        finished(1, "Ala", "Bob", BLACK),  # 1: rated
        finished(2, "Ala", "Bob", WHITE, rated=False),  # 2: a free game
        finished(3, "*Gus", "Ala", BLACK),  # 3: ranked against a guest, so not rated
        finished(4, "Bob", "Ala", BLACK),  # 4: rated
    ]
    for game in games:
        store.writer.archive(game, lambda number, _changed: archived.append(number))
    await store.writer.flush()

    assert archived == [1, 2, 3, 4]
    ala, bob = await store.games.ratings("Ala"), await store.games.ratings("bob")  # nicks case-blind
    assert [point.game_number for point in ala] == [point.game_number for point in bob] == [1, 4]
    assert ala[0].rating > 1500 > bob[0].rating  # Ala won game 1
    assert ala[1].rating < ala[0].rating and bob[1].rating > bob[0].rating  # and lost game 4
    profile = await store.accounts.profile("Ala")
    assert profile is not None
    assert (ala[-1].rating, ala[-1].deviation) == (profile.rating.rating, profile.rating.deviation)
    assert await store.games.ratings("*Gus") == []
    assert await store.games.ratings("Nobody") == []


async def test_the_archive_lists_every_game_or_a_players_page_by_page(store: Store) -> None:
    await store.accounts.register("Ala", registered_id("Ala", "pw"), "", "en")
    for uid in range(1, 8):
        store.writer.archive(finished(uid, "Ala" if uid % 2 else "*Gus", "*Cyd", BLACK), lambda *_: None)
    await store.writer.flush()

    every = await store.games.recent(None, 3)
    older = await store.games.recent(None, 3, before=every[-1].number)
    alas = await store.games.recent("Ala", 10, before=7)
    assert [game.number for game in every] == [7, 6, 5]
    assert [game.number for game in older] == [4, 3, 2]
    assert [game.number for game in alas] == [5, 3, 1]
    assert (await store.games.has_played("*Cyd"), await store.games.has_played("*Nobody")) == (True, False)
    summary, sgf = await store.games.game(6) or (None, "")
    assert summary is not None and (summary.blue, summary.red) == ("*Gus", "*Cyd") and sgf.startswith("(;")
    assert await store.games.game(99) is None
