"""The director under a step of the wall clock (an NTP correction, an operator fixing the date): the
tournament's start and an arena's end are times of day, but the rest between an arena player's games is
a few seconds of the server's own time, which a step does not stretch."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.director.arenawave import ARENA_REST
from server.director.director import ARENA_WAVE, Director
from server.store.hosted import Hosted
from server.web.clients import LIMITS_KEY, PER_ID
from server.web.common import HUB_KEY, STORE_KEY
from server.web.limits import TokenBuckets
from tests.director.bots import (
    Bot,
    Time,
    director_of,
    everyone_turns,
    guests,
    organiser_creates,
    served_on,
    tick,
)


async def started(
    aiohttp_client: AiohttpClient, settings: Settings, clock: Time, **query: str
) -> tuple[TestClient, Director, Hosted, list[Bot]]:
    """Tournament "Cup" of four guests, created by an organiser, begun at its start 10 s from now; the
    per-id request limit on the timers, as a server's is (the step moves the test's wall clock only)."""
    client = await served_on(aiohttp_client, settings, clock, 1)
    client.app[LIMITS_KEY].per_id = TokenBuckets(*PER_ID, clock=clock.timers.now)
    key = await client.app[STORE_KEY].tournaments.add_key("cup-bot", None, False)
    start = str(int(clock.clock()) + 10)
    assert await organiser_creates(client, key, tourn="Cup", sayHi="0", start=start, **query) == "ok"
    bots = guests(client, 4)
    for bot in bots:
        await bot.log_in()
        assert await bot.ask("joinTournament", tourn="Cup") == "ok"
    await tick(client, clock.timers, 11)
    director = director_of(client)
    hosted = await director.hosted.get("Cup")
    assert hosted is not None
    return client, director, hosted, bots


async def test_an_arena_pairs_again_after_the_rest_when_the_wall_clock_stepped_back(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """The rest counted from the stored end of the game on the wall clock: stepped back an hour just
    after a game ended, it left the two players unpaired for an hour."""
    clock = Time()
    client, director, hosted, bots = await started(
        aiohttp_client, settings, clock, kind="arena", minutes="30"
    )
    while not all(board.result for board in await director.boards(hosted)):
        await everyone_turns(bots)
        await tick(client, clock.timers, 1)
    await client.app[HUB_KEY].persistence.flush()  # the result and its time are stored

    clock.base -= 3600  # the wall clock steps back an hour
    for _ in range(3):
        await everyone_turns(bots)
        await tick(client, clock.timers, (ARENA_REST + ARENA_WAVE) / 2)

    assert len(await director.boards(hosted)) == 4, "paired again after the rest"


async def test_a_swiss_pairs_its_next_round_when_the_wall_clock_stepped_back_before_its_start(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """A running tournament whose start the wall clock put back in the future waited for that start
    again: stepped back an hour, no round was paired for an hour."""
    clock = Time()
    client, director, hosted, bots = await started(aiohttp_client, settings, clock, kind="swiss", rounds="3")
    assert hosted.round == 1
    clock.base -= 3600  # the wall clock steps back an hour, an hour before the start
    for _ in range(30):
        await everyone_turns(bots)
        await tick(client, clock.timers, 1)

    assert len(await director.hosted.rounds(hosted.id)) == 2, "round 2 paired after the pause"
