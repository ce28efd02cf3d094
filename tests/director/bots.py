"""Players for the server's own tournaments: MultiPoints clients (tests/clients/multipoints.py parses
every reply as ServerZagram.java does) that join a tournament, sit at the tables the server sets up for
them, and play each game to a planned end, so that a tournament runs through the protocol alone."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.director.director import Director
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.limits import Caps
from server.web.clients import LIMITS_KEY, PER_ADDRESS, PER_ID
from server.web.common import DIRECTOR_KEY
from server.web.limits import NetworkBuckets, TokenBuckets
from tests.clients.conversation import get, log_in, poll
from tests.clients.multipoints import MultiPoints
from tests.clients.robocup import game_settings
from tests.conftest import served

GAME_TYPE = game_settings(10, 10, crosses=0, rated=False, starting_seconds=120, seconds_per_turn=5)
PLAN_MOVES = 4  # dots placed before a game's planned end


def ended(reply: str) -> dict[str, str]:
    """Finished tables in a reply, read as roboCup's FromZagram.handleGameState reads `x` lines
    (`sgfResult = dotSplit(2)`); `-` while the game is played (docs/protocol.md)."""
    finished = {}
    for line in reply.split("/"):
        if line.startswith("x"):
            parts = line[1:].split(".")
            if len(parts) > 2 and parts[2] not in ("", "-"):
                finished[parts[0]] = parts[2]
    return finished


Plan = Callable[[str, str, str], str]  # (table, first, second) -> "first" | "second" | "draw": who wins


def by_table(table: str, first: str, second: str) -> str:
    return ("first", "second", "draw")[int(table) % 3]


@dataclass
class Bot:
    client: TestClient
    mp: MultiPoints
    plan: Plan = by_table
    finished: dict[str, str] = field(default_factory=dict)  # table -> result, from `x` lines
    done: set[str] = field(default_factory=set)  # tables where the planned end was sent
    games: list[str] = field(default_factory=list)  # tables where this bot moved or ended the game

    @property
    def nick(self) -> str:
        return self.mp.my_name

    async def log_in(self) -> None:
        await log_in(self.client, self.mp)

    async def ask(self, co: str, **params: str) -> str:
        query = "&".join(
            f"{key}={quote(value, safe='')}"
            for key, value in {"co": co, "idGracza": self.mp.secret, **params}.items()
        )
        return await get(self.client, f"/a.kropki?{query}")

    async def turn(self) -> None:
        """One poll, then what the bot does at each of its open games."""
        self.finished |= ended(await poll(self.client, self.mp))
        assert not self.mp.disposed, self.mp.raw  # MultiPoints stops for good on an answer it cannot read
        for room, tab in self.mp.tabs.items():
            game = self.mp.games.get(room)
            if game is None or room in self.finished or self.nick not in (game.first, game.second):
                continue
            first = game.first == self.nick
            if len(tab.moves) >= PLAN_MOVES:
                self._end(room, first, self.plan(room, game.first, game.second))
            elif (len(tab.moves) % 2 == 0) == first:  # blue (the first) moves first
                free = next((x, y) for y in range(1, 11) for x in range(1, 11) if (x, y) not in tab.dots)
                self.mp.make_move(room, *free)  # sent with the next poll, whose reply shows it
                self._played(room)

    def _end(self, room: str, first: bool, winner: str) -> None:
        if winner == "draw":
            # askDraw from blue once, acceptDraw from red until the game is over (refused before the ask)
            if first and room not in self.done:
                self.mp.propose(room, "draw")
            elif not first:
                self.mp.propose(room, "accept2draw")
        elif (winner == "first") != first and room not in self.done:
            self.mp.propose(room, "resign")  # surrender()
        self.done.add(room)
        self._played(room)

    def _played(self, room: str) -> None:
        if room not in self.games:
            self.games.append(room)


class Time:
    """The server's clocks, moved by the test: the timers and a wall clock that follows them, kept
    across a restart (a new hub gets new timers at the same time)."""

    def __init__(self) -> None:
        self.timers = ManualTimers()
        self.base = time.time() - self.timers.now()

    def clock(self) -> float:
        return self.base + self.timers.now()

    def restarted(self) -> ManualTimers:
        self.timers = ManualTimers(time=self.timers.now())
        return self.timers


async def served_on(
    aiohttp_client: AiohttpClient, settings: Settings, clock: Time, seed: int, caps: Caps | None = None
) -> TestClient:
    """The app on the test's clocks; a player id's request limit counts the server's time too, so that
    bots polling once a turn poll as often as clients do in the server's time, however fast the test."""
    hub = Hub(caps=caps, timers=clock.timers, clock=clock.clock, rng=random.Random(seed))
    client = await served(aiohttp_client, settings, hub)
    client.app[LIMITS_KEY].per_id = TokenBuckets(*PER_ID, clock=clock.clock)
    # and an address's: on the real clock a fast host sent an hour of a few guests' polls in seconds, and
    # their address was refused tooFast (tests/director/test_arena_flood.py paired no one after minutes)
    client.app[LIMITS_KEY].per_address = NetworkBuckets(
        *PER_ADDRESS, settings.network_factor, clock=clock.clock
    )
    return client


def guests(client: TestClient, count: int, plan: Plan = by_table) -> list[Bot]:
    return [Bot(client, MultiPoints(f"*Bot{n:02}", f"bot{n:02}pw"), plan) for n in range(1, count + 1)]


async def everyone_turns(bots: Sequence[Bot]) -> None:
    await asyncio.gather(*(bot.turn() for bot in bots))


def director_of(client: TestClient) -> Director:
    return client.app[DIRECTOR_KEY]


async def restarted_on(
    aiohttp_client: AiohttpClient,
    settings: Settings,
    clock: Time,
    seed: int,
    bots: list[Bot],
    client: TestClient,
) -> TestClient:
    """The server stopped and started again on the same database, its bots talking to the new one."""
    await client.close()
    clock.restarted()
    client = await served_on(aiohttp_client, settings, clock, seed)
    for bot in bots:
        bot.client = client
    return client


async def tick(client: TestClient, timers: ManualTimers, seconds: float) -> None:
    """Time passes for the server (clocks, the director's waits), and what it started is done."""
    timers.advance(seconds)
    await director_of(client).settled()


async def organiser_asks(client: TestClient, key: str, **params: str) -> str:
    query = {"key": key, **params}
    return await get(client, "/a.kropki?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in query.items()))


async def organiser_creates(client: TestClient, key: str, **params: Any) -> str:
    return await organiser_asks(client, key, co="createTournament", gameType=GAME_TYPE, **params)
