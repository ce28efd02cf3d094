"""A finished game into the archive (server/store/archiving.py): the bot lines of its record, written
once even when storage failed and the write was tried again, for a team game's every bot."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from server.engine.game import Game
from server.engine.moves import parse_move
from server.engine.record import NAMES_SEPARATOR, game_to_record
from server.engine.sgf import read_record
from server.hub.persistence import FinishedGame
from server.store import database, writer
from server.store.idhash import MIN_COST
from server.store.store import Store
from tests.conftest import NewDatabase
from tests.store.breakers import breaker_for, until


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """A locked SQLite write gives up after 0.2 s instead of 5, and is tried again within 0.2 s."""
    monkeypatch.setattr(database, "BUSY_TIMEOUT_MS", 200)
    monkeypatch.setattr(writer, "RETRY_FIRST", 0.05)
    monkeypatch.setattr(writer, "RETRY_MOST", 0.2)


def finished(blue: str, red: str, *more: str) -> FinishedGame:
    """A game of two, or of teams whose sides 3, 4, ... are `more`, named as the hub names them."""
    players = (blue, red, *more)
    teams = NAMES_SEPARATOR.join(players[0::2]), NAMES_SEPARATOR.join(players[1::2])
    game = Game(8, 8)
    game.play(1, parse_move("cc", game.width, game.height))
    record = game_to_record(game, black_name=teams[0], white_name=teams[1])
    return FinishedGame(
        uid=3,
        record=record,
        blue=teams[0],
        red=teams[1],
        game_type="0808stanF0.0.0",
        result=None,
        rated=False,
        tournament=None,
        game_index=0,
        journal_seq=1,
        players=players if more else (),
    )


async def archived_comment(store: Store, game: FinishedGame) -> str | None:
    numbers: list[int] = []
    store.writer.archive(game, lambda number, _accounts: numbers.append(number))
    await store.writer.flush()
    record = await store.games.sgf(numbers[0])
    assert record is not None
    return read_record(record).comment


async def test_a_game_archived_after_storage_failed_names_its_bot_once(
    tmp_path: Path, new_database: NewDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="server.store.writer")
    url = new_database(tmp_path, True)
    store = await Store.open(url, id_hash_cost=MIN_COST)
    breaker = breaker_for(url)
    try:
        await store.bots.create("Robo")
        game = finished("*Ala", "Robo")
        await breaker.break_storage()
        store.writer.archive(game, lambda *_: None)
        await until(
            lambda: any(line.getMessage().startswith("write failed again") for line in caplog.records)
        )
        await breaker.mend()
        await until(lambda: store.writer.storage_failure is None)
        await store.writer.flush()
        record = await store.games.sgf(1)
        assert record is not None and read_record(record).comment == "W is a bot: Robo"
        assert game.record.comment is None  # the hub's record is left as it was
    finally:
        await store.close()


async def test_every_bot_of_both_teams_is_named_in_turn_order(
    tmp_path: Path, new_database: NewDatabase
) -> None:
    store = await Store.open(new_database(tmp_path, True), id_hash_cost=MIN_COST)
    try:
        for nick in ("Robo", "Droid", "Unit"):
            await store.bots.create(nick)
        team_game = finished("*Ala", "Robo", "Droid", "*Cid", "*Eve", "Unit")  # sides 2 and 6 red, 3 blue
        assert (
            await archived_comment(store, team_game)
            == "W is a bot: Robo\nB is a bot: Droid\nW is a bot: Unit"
        )
        (summary,) = await store.games.recent(None, 1)
        assert summary.bots == ("Robo", "Droid", "Unit")
        assert await archived_comment(store, finished("*Ala", "*Bob", "*Cid", "*Dan")) is None
    finally:
        await store.close()


async def test_a_team_game_is_archived_as_finished_when_it_ended_as_a_game_of_two_is(
    tmp_path: Path, new_database: NewDatabase
) -> None:
    """The archive lists a game with the time it ended (FinishedGame.ended_at): a game written later, once
    a storage failure is over or after a queue of writes, keeps it. A team game's row took the time of
    its write instead, and so did the tournament table's cancellation it carries."""
    store = await Store.open(new_database(tmp_path, True), id_hash_cost=MIN_COST)
    ended = datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
    try:
        for game in (finished("*Ala", "*Bob"), finished("*Ala", "*Bob", "*Cid", "*Dan")):
            await archived_comment(store, replace(game, ended_at=ended.timestamp()))
        summaries = await store.games.recent(None, 2)
        assert [(summary.players, summary.finished_at.replace(tzinfo=UTC)) for summary in summaries] == [
            (("*Ala", "*Bob", "*Cid", "*Dan"), ended),
            ((), ended),
        ]
    finally:
        await store.close()
