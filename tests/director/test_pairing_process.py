"""The server pairs swiss rounds in a worker process of its own: pure Python for seconds at 200 players,
on a thread it would hold the GIL against every poll (benchmarks/swiss_load.py)."""

from __future__ import annotations

import dataclasses

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.engine import swiss
from server.hub.computer import WorkerPool
from server.web.common import DIRECTOR_KEY
from tests.conftest import served


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
