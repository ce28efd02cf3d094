"""MultiPoints (tests/clients/multipoints.py, its ServerZagram.java line by line) in a lobby with seeks
open and players waiting in a quick-pairing pool (docs/protocol.md, "Seeks and quick pairing"): it reads
every reply, a whole lobby with seeks in it too, with no parse failure and no notice, and shows nothing of
them, while a game a seek started shows in its game list as any other game."""

from __future__ import annotations

import random

import pytest
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from tests.clients.conversation import get, log_in, poll
from tests.clients.multipoints import MultiPoints
from tests.clients.test_multipoints import Lobby
from tests.conftest import served

FREE = "2020s0.4.a.F.a.180.2.."
# the built-in client's players: guests who post seeks and join pools with the extension's requests
DAN, FAY = ("444444", "*Dan"), ("555555", "*Fay")


@pytest.fixture
async def lobby(aiohttp_client: AiohttpClient, settings: Settings) -> Lobby:
    hub = Hub(timers=ManualTimers(), rng=random.Random(3))
    lobby = Lobby(await served(aiohttp_client, settings, hub), hub)
    for mp in (lobby.ala, lobby.bob, lobby.eve):
        await log_in(lobby.client, mp)
    for secret, nick in (DAN, FAY):
        assert await get(lobby.client, f"/a.kropki?co=guestLogin&idGracza={secret}&opis={nick}&lang=en") == ""
    await lobby.round()
    return lobby


async def request(lobby: Lobby, query: str) -> None:
    assert await get(lobby.client, f"/a.kropki?{query}") == ""
    await lobby.round()


def untouched(mp: MultiPoints) -> None:
    """Nothing the seeks' lines could have done: no failure, no notice, no invitation, no tab."""
    assert mp.failures == [] and mp.raw == [], (mp.failures, mp.raw)
    assert mp.invites_incoming == [] and mp.invites_outgoing == [] and mp.tabs == {}
    assert {"*Ala", "*Bob", "*Eve", "*Dan", "*Fay"} <= set(mp.lobby)


async def test_seeks_and_pools_open_show_nothing_multipoints_cannot_read(lobby: Lobby) -> None:
    await request(lobby, f"co=seek&idGracza={DAN[0]}&gameType={FREE}")
    await request(lobby, f"co=seek&idGracza={FAY[0]}&gameType={FREE}&minRating=1400&maxRating=1700")
    await request(lobby, f"co=joinPool&idGracza={FAY[0]}&pool=39x32_5_5")
    late = MultiPoints("*Gus", "666666")  # its first reply: a whole lobby with the seeks in it
    await log_in(lobby.client, late)
    whole = await poll(lobby.client, late)
    assert f"/ka1.*Dan...{FREE}/" in whole and f"/ka2.*Fay.1400.1700.{FREE}/" in whole
    clients = (lobby.ala, lobby.bob, lobby.eve, late)
    for mp in clients:
        untouched(mp)
        assert mp.games == {}

    await request(lobby, f"co=cancelSeek&idGracza={FAY[0]}&seek=2")
    await request(lobby, f"co=acceptSeek&idGracza={FAY[0]}&seek=1")  # *Dan against *Fay: a game
    await poll(lobby.client, late)

    uid = str(max(lobby.hub.tables))
    for mp in clients:
        untouched(mp)
        assert list(mp.games) == [uid] and (mp.games[uid].first, mp.games[uid].second) == ("*Dan", "*Fay")
