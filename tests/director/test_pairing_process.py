"""The server pairs swiss rounds and arena waves in a worker process of its own: pure Python for seconds at
200 players, on a thread it would hold the GIL against every poll (benchmarks/swiss_load.py)."""

from __future__ import annotations

import dataclasses
import multiprocessing

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.engine import arena, swiss
from server.hub.computer import WorkerPool
from server.web.common import DIRECTOR_KEY, STORE_KEY
from tests.conftest import served
from tests.director.bots import Time, director_of, guests, organiser_creates, served_on, tick


def _entrants(players: int) -> list[swiss.Entrant]:
    return [swiss.Entrant(f"p{number}", 2000 - number, ()) for number in range(1, players + 1)]


async def test_a_round_is_paired_in_the_worker_process_as_on_a_thread(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await served(aiohttp_client, dataclasses.replace(settings, pairing_process=True))
    director = client.app[DIRECTOR_KEY]
    assert isinstance(director.pairing, WorkerPool)
    entrants = _entrants(9)
    assert await director.pair_swiss_round(entrants, 5, []) == swiss.pair_round(entrants, 5)
    met = [
        swiss.Entrant(key, 2000.0, (swiss.Round(other, colour, 1.0, True),))
        for key, other, colour in (("a", "b", "white"), ("b", "a", "black"))
    ]
    with pytest.raises(swiss.NoPairing):
        await director.pair_swiss_round(met, 5, [])
    pool = director.pairing
    await client.close()
    with pytest.raises(RuntimeError):  # shut down with the app
        pool.submit(swiss.pair_round, entrants, 5)


async def test_without_the_worker_process_a_round_is_paired_on_a_thread(client: TestClient) -> None:
    director = client.app[DIRECTOR_KEY]
    assert director.pairing is None
    entrants = _entrants(4)
    assert await director.pair_swiss_round(entrants, 3, []) == swiss.pair_round(entrants, 3)


async def test_an_arena_wave_is_paired_in_the_worker_process(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """Before, the arena's matching ran on a thread (asyncio.to_thread), whatever the setting."""
    clock = Time()
    client = await served_on(aiohttp_client, dataclasses.replace(settings, pairing_process=True), clock, 1)
    key = await client.app[STORE_KEY].tournaments.add_key("arena-bot", None, False)
    query = {"tourn": "Blitz", "kind": "arena", "minutes": "10", "start": str(int(clock.clock()) + 10)}
    assert await organiser_creates(client, key, **query) == "ok"
    bots = guests(client, 4)
    for bot in bots:
        await bot.log_in()
        assert await bot.ask("joinTournament", tourn="Blitz") == "ok"
    before = set(multiprocessing.active_children())
    await tick(client, clock.timers, 11)  # the arena starts: its first wave
    director = director_of(client)
    hosted = await director.hosted.get("Blitz")
    assert hosted is not None
    paired = {nick for board in await director.boards(hosted) for nick in (board.blue, board.red)}
    assert paired == {bot.nick for bot in bots}
    assert len(set(multiprocessing.active_children()) - before) == 1, "the pairing's worker started"


async def test_an_arena_wave_pairs_in_the_worker_process_as_on_a_thread(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await served(aiohttp_client, dataclasses.replace(settings, pairing_process=True))
    director = client.app[DIRECTOR_KEY]
    game = arena.ArenaGame("p2", "win", True, 40)
    waiting = [
        arena.WaitingPlayer.of(arena.ArenaPlayer(f"p{number}", 2000 - number, (game,) if number == 1 else ()))
        for number in range(1, 8)
    ]
    ranks = {player.key: place for place, player in enumerate(waiting, start=1)}
    expected = arena.pair(waiting, ranks=ranks, active_players=9)
    assert await director.pair_arena_wave(waiting, ranks, 9) == expected
    with pytest.raises(ValueError, match="listed twice"):
        await director.pair_arena_wave(waiting + waiting[:1], ranks, 9)
