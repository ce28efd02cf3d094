"""Bot accounts in the store (server/store/bots.py): who may become one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from server.engine.sgf import GameRecord
from server.hub.persistence import FinishedGame
from server.store.bots import HasPlayed
from server.store.idhash import MIN_COST
from server.store.store import Store
from tests.conftest import NewDatabase
from tests.store.test_accounts import registered_id


async def test_a_player_of_a_team_game_has_played_and_stays_a_person(
    tmp_path: Path, new_database: NewDatabase
) -> None:
    """A team game's players are in `game_players`, not in the game's row: they have played all the
    same (docs/bots.md), and their archived games must not turn into a bot's."""
    store = await Store.open(new_database(tmp_path, True), id_hash_cost=MIN_COST)
    try:
        await store.accounts.register("Alice", registered_id("Alice", "pw"), "", "en")
        players = ("*Bob", "*Cid", "Alice", "*Dan")  # Alice is team one's second: not in the game's row
        team_game = FinishedGame(
            3, GameRecord(8, 8), "*Bob", "*Cid", "0808stanF0.0.0", None, False, None, 0, 1
        )
        store.writer.archive(replace(team_game, players=players), lambda *_: None)
        await store.writer.flush()
        with pytest.raises(HasPlayed):
            await store.bots.upgrade("Alice", registered_id("Alice", "pw"), lambda nick: False)
        assert (await store.accounts.profile("Alice")).bot is False  # type: ignore[union-attr]
    finally:
        await store.close()
