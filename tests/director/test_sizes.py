"""How big the server's own tournaments may grow: a swiss's and an arena's players (their pairings grow
fast with them: benchmarks/swiss.py, benchmarks/arena.py) and the tournaments one organiser has not over
yet. Before these bounds a swiss and an arena took any number of players and an organiser's key any
number of tournaments."""

from __future__ import annotations

import pytest
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.director.creating import ARENA_PLAYERS, SWISS_PLAYERS, TOURNAMENTS_PER_ORGANISER
from server.web.common import STORE_KEY
from tests.clients.conversation import log_in
from tests.clients.multipoints import MultiPoints
from tests.director.bots import Bot, Time, organiser_asks, organiser_creates, served_on


@pytest.mark.parametrize(
    ("kind", "length", "bound"),
    [("swiss", {"rounds": "5"}, SWISS_PLAYERS), ("arena", {"minutes": "60"}, ARENA_PLAYERS)],
)
async def test_a_tournament_takes_its_bound_of_players_and_a_withdrawal_makes_room(
    aiohttp_client: AiohttpClient, settings: Settings, kind: str, length: dict[str, str], bound: int
) -> None:
    clock = Time()
    client = await served_on(aiohttp_client, settings, clock, 1)
    key = await client.app[STORE_KEY].tournaments.add_key("cup", None, False)
    start = str(int(clock.clock()) + 3600)
    assert await organiser_creates(client, key, tourn="Big", kind=kind, start=start, **length) == "ok"
    bots = [Bot(client, MultiPoints(f"*P{n:03}", f"p{n:03}pw")) for n in range(bound + 1)]
    answers = []
    for bot in bots:
        await log_in(bot.client, bot.mp)
        answers.append(await bot.ask("joinTournament", tourn="Big"))
    assert answers == ["ok"] * bound + ["err.tournamentFull"]
    assert await bots[0].ask("joinTournament", tourn="Big") == "err.alreadyRegistered"
    assert await bots[0].ask("leaveTournament", tourn="Big") == "ok"
    assert await bots[-1].ask("joinTournament", tourn="Big") == "ok"
    assert await bots[0].ask("joinTournament", tourn="Big") == "err.tournamentFull"


async def test_an_organiser_has_its_bound_of_tournaments_not_over(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    clock = Time()
    client = await served_on(aiohttp_client, settings, clock, 1)
    store = client.app[STORE_KEY].tournaments
    key, other = await store.add_key("busy", None, False), await store.add_key("other", None, False)
    start = str(int(clock.clock()) + 3600)

    async def create(with_key: str, name: str) -> str:
        return await organiser_creates(client, with_key, tourn=name, kind="arena", minutes="60", start=start)

    answers = [await create(key, f"Arena {n}") for n in range(TOURNAMENTS_PER_ORGANISER + 1)]
    assert answers == ["ok"] * TOURNAMENTS_PER_ORGANISER + ["err.tooManyTournaments"]
    assert await create(other, "Another's") == "ok"  # each organiser has their own
    assert await organiser_asks(client, key, co="cancelTournament", tourn="Arena 0") == "ok"
    assert await create(key, "Arena again") == "ok"  # one that is over makes room
