"""An arena's waves read only the games changed since the last wave (server/store/changes.py), on the
real app: what they read is what a whole read of the tournament gives, after games end, after an
account's deletion renames a finished game's player, and after a restart, whose first wave reads
everything again."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.director.director import Director
from server.director.entrants import Entrants
from server.director.history import Board
from server.store.hosted import Hosted
from server.web.common import HUB_KEY, STORE_KEY
from tests.director.bots import Time, director_of, restarted_on, served_on, tick
from tests.director.test_renamed_entrants import create, entered, played_until


def at(clock: Time, moment: float) -> Callable[[Hosted], Awaitable[bool]]:
    async def reached(_hosted: Hosted) -> bool:
        return clock.clock() >= moment

    return reached


async def as_waves_read(director: Director, hosted: Hosted) -> list[Board]:
    """The games as the next wave reads them, checked against a whole read of the tournament."""
    entrants = Entrants(await director.hosted.entries(hosted.id))
    memory = await director.arena_read(hosted, entrants)
    assert memory.ledger is not None
    wave = sorted(
        [*map(memory.ledger.named, memory.settled.values()), *memory.live.values()], key=lambda b: b.table
    )
    assert wave == entrants.boards(await director.boards(hosted))
    return wave


def ended(boards: list[Board]) -> list[Board]:
    return [board for board in boards if board.result is not None]


async def test_the_waves_see_the_games_ended_and_a_deleted_players_new_name(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    clock = Time()
    client = await served_on(aiohttp_client, settings, clock, 5)
    await create(client, clock, kind="arena", minutes="10")
    bots = await entered(client, ["Alice", "Bob", "Carol", "Dave"])
    director, start = director_of(client), clock.clock() + 10

    hosted = await played_until(client, clock, bots, at(clock, start + 30))
    early = ended(await as_waves_read(director, hosted))
    hosted = await played_until(client, clock, bots, at(clock, start + 90))
    later = ended(await as_waves_read(director, hosted))
    assert len(later) > len(early) > 0, "games ended between waves were read"

    bob = next(bot for bot in bots if bot.nick == "Bob")
    assert client.app[HUB_KEY].logout(bob.mp.secret)  # an account is deleted once its player is gone
    await client.app[STORE_KEY].writer.flush()
    await client.app[STORE_KEY].accounts.delete("Bob")  # account number 2
    others = [bot for bot in bots if bot is not bob]
    hosted = await played_until(client, clock, others, at(clock, start + 120))

    boards = await as_waves_read(director, hosted)
    assert not [board for board in boards if "Bob" in (board.blue, board.red)]
    assert [board for board in ended(boards) if "deleted2" in (board.blue, board.red)], "his games renamed"


async def test_a_restarted_directors_first_wave_reads_every_game_again(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    clock = Time()
    client = await served_on(aiohttp_client, settings, clock, 6)
    await create(client, clock, kind="arena", minutes="10")
    bots = await entered(client, ["Alice", "Bob", "Carol", "Dave"])
    start = clock.clock() + 10
    hosted = await played_until(client, clock, bots, at(clock, start + 60))
    before = ended(await as_waves_read(director_of(client), hosted))

    client = await restarted_on(aiohttp_client, settings, clock, 7, bots, client)
    await tick(client, clock.timers, 1.0)  # the restarted director's first look at the arena

    after = ended(await as_waves_read(director_of(client), hosted))
    assert before and {(b.table, b.result) for b in before} <= {(b.table, b.result) for b in after}
