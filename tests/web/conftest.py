"""Fixtures shared by the tests over the wire: three guests on the real app with the hub's clocks
driven by the test, and storage that gives up and retries quickly."""

from __future__ import annotations

import random

import pytest
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.store import database, writer
from tests.conftest import served
from tests.web.test_games import Players


@pytest.fixture
async def game(aiohttp_client: AiohttpClient, settings: Settings) -> Players:
    """Ala, Bob and Eve, logged in and polled once (after `quick_retries` where a test asks for it)."""
    timers = ManualTimers()
    hub = Hub(timers=timers, rng=random.Random(7))
    players = Players(await served(aiohttp_client, settings, hub), hub, timers)
    for guest in (players.ala, players.bob, players.eve):
        assert await guest.login() == ""
        await guest.poll()
    return players


@pytest.fixture
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """A locked SQLite write gives up after 0.2 s instead of 5, and failed writes are tried again every
    0.05 to 0.2 s: the same code paths, many retries within a short test (before the app is made: list
    it before `game`)."""
    monkeypatch.setattr(database, "BUSY_TIMEOUT_MS", 200)
    monkeypatch.setattr(writer, "RETRY_FIRST", 0.05)
    monkeypatch.setattr(writer, "RETRY_MOST", 0.2)
