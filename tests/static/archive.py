"""An archive to look at: real zagram records as rated games of three registered players, and guests'
free games, written straight into a database (as the server archives them) before `serve` starts.
Used by tests/static/test_pages.py and scripts/page_screenshots.py."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from server.engine.replay import replay_record
from server.engine.sgf import GameRecord, read_record
from server.hub.persistence import FinishedGame
from server.store.idhash import MIN_COST
from server.store.store import Store
from tests.store.test_accounts import registered_id

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sgf"
CAPTURING = "kropla_zagram302058.sgf"  # game 1: 20x20 territory, the first dot captured at move 70
PAIRS = (("Ala", "Bob"), ("Bob", "Cyd"), ("Cyd", "Ala"))
GUEST_GAMES = 20


@dataclass(frozen=True)
class Archive:
    rated: dict[str, int]  # rated games per registered nick
    games: int  # games in all
    first_capture: int  # the move of game 1 that captures first


def fill(db_url: str) -> Archive:
    """Fills the database on a loop of its own, in a thread: the browser's (Playwright's) loop may run."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, _fill(db_url)).result()


async def _fill(db_url: str) -> Archive:
    store = await Store.open(db_url, id_hash_cost=MIN_COST)
    try:
        for nick in ("Ala", "Bob", "Cyd"):
            await store.accounts.register(nick, registered_id(nick, "pw"), "", "en")
        names = sorted(path.name for path in FIXTURES.glob("*.sgf"))
        names.remove(CAPTURING)
        rated = dict.fromkeys(("Ala", "Bob", "Cyd"), 0)
        for index, name in enumerate([CAPTURING, *names]):
            record = read_record((FIXTURES / name).read_text())
            blue, red = PAIRS[index % len(PAIRS)]
            rated[blue] += 1
            rated[red] += 1
            _archive(store, _game(blue, red, record, rated=True))
        for number in range(GUEST_GAMES):
            _archive(store, _game("*Gus", "*Bob" if number % 2 else "*Ala", GameRecord(10, 10), rated=False))
        await store.writer.flush()
        return Archive(rated, 1 + len(names) + GUEST_GAMES, 70)
    finally:
        await store.close()


def _game(blue: str, red: str, record: GameRecord, *, rated: bool) -> FinishedGame:
    game = replay_record(record).game
    rules = "t" if not game.rules.automatic else "n" if game.rules.stop_allowed else "s"
    size = f"{record.width:02}{record.height:02}{rules}0"
    return FinishedGame(
        uid=1,
        record=record,
        blue=blue,
        red=red,
        game_type=f"{size}..a.{'R' if rated else 'F'}.n....",
        result=game.score_result(),
        rated=rated,
        tournament=None,
        game_index=0,
        journal_seq=1,
    )


def _archive(store: Store, game: FinishedGame) -> None:
    store.writer.archive(game, lambda *_: None)
