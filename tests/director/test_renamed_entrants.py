"""An account an admin renames (`kropki-server user rename`) while it is entered in a tournament the server
runs keeps its entry, on the real app with a real SQLite file: the player is paired, seated, scored and
listed under the new nick, with the games played under the old one counted for the same entrant; a
session begun before the rename plays on under its nick; nobody who takes a freed nick gets the entry
(docs/tournaments.md, "Joining and withdrawing")."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.director.director import Director
from server.engine.game import Result
from server.store.hosted import Hosted
from server.web.common import HUB_KEY, STORE_KEY
from tests.clients.multipoints import MultiPoints
from tests.director.bots import Bot, Time, director_of, everyone_turns, organiser_creates, served_on, tick
from tests.web.test_auth import auth, register, registered_id

NAME = "Renamed Cup"


async def entered(client: TestClient, nicks: list[str]) -> list[Bot]:
    """Registered players, logged in (registering logs in) and joined to the tournament."""
    bots = []
    for nick in nicks:
        assert await register(client, nick) == "ok.zarejestrowalem."
        bot = Bot(client, MultiPoints(nick, registered_id(nick, "pw")))
        await bot.turn()
        assert await bot.ask("joinTournament", tourn=NAME) == "ok"
        bots.append(bot)
    return bots


async def renamed(client: TestClient, bots: list[Bot], old: str, new: str, login: str) -> Bot:
    """`user rename OLD NEW` once the player's session is over; they log in again with `login` (the nick
    their id is made from) and appear as `new`: their bot in `bots` is replaced."""
    index = next(i for i, bot in enumerate(bots) if bot.nick == old)
    secret = bots[index].mp.secret
    assert client.app[HUB_KEY].logout(secret)
    await client.app[STORE_KEY].writer.flush()
    await client.app[STORE_KEY].accounts.rename(old, new)
    assert await auth(client, co="loguj", opisGracza=login, idGracza=secret) == "ok.zalogowanyNaSerwer."
    bots[index] = Bot(client, MultiPoints(new, secret))
    await bots[index].turn()
    return bots[index]


async def create(client: TestClient, clock: Time, **params: str) -> None:
    key = await client.app[STORE_KEY].tournaments.add_key("cup-bot", None, False)
    start = str(int(clock.clock()) + 10)
    assert await organiser_creates(client, key, tourn=NAME, start=start, **params) == "ok"


async def played_until(
    client: TestClient, clock: Time, bots: list[Bot], done: Callable[[Hosted], Awaitable[bool]]
) -> Hosted:
    """The bots play (a poll each a second of the server's time) until `done` says so."""
    director = director_of(client)
    for _ in range(600):
        await everyone_turns(bots)
        await tick(client, clock.timers, 1.0)
        hosted = await director.hosted.get(NAME)
        assert hosted is not None
        if await done(hosted):
            return hosted
    raise AssertionError("not done in 600 s of the server's time")


async def standings(client: TestClient) -> dict[str, dict]:
    results = await (await client.get(f"/tournament/{NAME}/standings.json")).json()
    return {row["player"]: row for row in results["standings"]}


def no_forfeits(director: Director, boards: list) -> None:
    for board in boards:
        assert board.result is not None and Result.parse(board.result).reason not in ("F", "Void"), board


async def test_a_player_renamed_before_the_start_is_paired_and_seated_under_the_new_nick(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """Before, the entry stayed "Alice": the table was set up for "Alice", Alicia (logged in under her new
    nick) was not seated, lost by forfeit and was withdrawn as a no-show; she could also join a second
    time as "Alicia"."""
    clock = Time()
    client = await served_on(aiohttp_client, settings, clock, 1)
    await create(client, clock, kind="swiss", rounds="1")
    bots = await entered(client, ["Alice", "Bob"])
    alicia = await renamed(client, bots, "Alice", "Alicia", "Alice")
    assert await alicia.ask("joinTournament", tourn=NAME) == "err.alreadyRegistered"
    listing = (await (await client.get("/tournaments.json")).json())["tournaments"]
    assert [(t["players"], t["withdrawn"]) for t in listing] == [(["Alicia", "Bob"], [])]

    director = director_of(client)
    hosted = await played_until(client, clock, bots, lambda hosted: finished(hosted))
    ((blue, red),) = (await director.hosted.rounds(hosted.id))[0].boards
    assert {blue, red} == {"Alicia", "Bob"}
    assert alicia.games, "Alicia sat at her table and played"
    no_forfeits(director, await director.boards(hosted))
    table = await standings(client)
    assert set(table) == {"Alicia", "Bob"} and table["Alicia"]["games"] == 1
    assert not [e for e in await director.hosted.entries(hosted.id) if e.withdrawn]


async def finished(hosted: Hosted) -> bool:
    return hosted.state == "finished"


async def test_a_swiss_goes_on_with_a_player_renamed_between_rounds_and_one_renamed_while_online(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """Bob is renamed Robert during the pause after round 1 and logs in again; Carol is renamed Caroline
    during round 2 and plays on in her session as Carol. Before, round 2 was paired and set up for "Bob",
    whom Robert's session was not seated as: he lost by forfeit and was withdrawn."""
    clock = Time()
    client = await served_on(aiohttp_client, settings, clock, 1)
    await create(client, clock, kind="swiss", rounds="3")
    bots = await entered(client, ["Alice", "Bob", "Carol", "Dave"])
    director = director_of(client)

    async def round_over(number: int) -> Callable[[Hosted], Awaitable[bool]]:
        async def over(hosted: Hosted) -> bool:
            mine = [b for b in await director.boards(hosted) if b.round == number]
            return hosted.round == number and bool(mine) and all(b.result is not None for b in mine)

        return over

    hosted = await played_until(client, clock, bots, await round_over(1))
    first_round = {b.table: (b.blue, b.red) for b in await director.boards(hosted)}
    robert = await renamed(client, bots, "Bob", "Robert", "Bob")
    assert await robert.ask("joinTournament", tourn=NAME) == "err.alreadyRegistered"

    async def round_two_begun(hosted: Hosted) -> bool:
        return hosted.round == 2 and any(b.round == 2 for b in await director.boards(hosted))

    hosted = await played_until(client, clock, bots, round_two_begun)
    await client.app[STORE_KEY].accounts.rename("Carol", "Caroline")  # her session goes on as Carol
    carol = next(bot for bot in bots if bot.nick == "Carol")
    assert await carol.ask("joinTournament", tourn=NAME) == "err.alreadyRegistered"
    hosted = await played_until(client, clock, bots, finished)

    assert hosted.round == 3
    assert robert.games and len(carol.games) == 3, "each sat at their tables and played"
    boards = await director.boards(hosted)
    no_forfeits(director, boards)
    listed = (await (await client.get(f"/tournament/{NAME}")).json())["tables"]
    assert {t["table"]: (t["blue"], t["red"]) for t in listed if t["table"] in first_round} == first_round, (
        "the tables keep the nicks their games were set up for"
    )
    entrant = {"Bob": "Robert", "Carol": "Caroline"}
    met = [frozenset(entrant.get(n, n) for n in (b.blue, b.red)) for b in boards]
    assert len(met) == len(set(met)) == 6, "nobody met anyone twice, under any nick"
    table = await standings(client)
    assert set(table) == {"Alice", "Robert", "Caroline", "Dave"}
    assert all(row["games"] == 3 for row in table.values())
    assert sum(row["points"] for row in table.values()) == 6
    assert not [e for e in await director.hosted.entries(hosted.id) if e.withdrawn]


async def test_an_arena_pairs_a_renamed_player_and_nobody_takes_the_nick_they_left(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """Alice, renamed Alicia and then Ally, is paired again after each login and ranked once with all her
    games; Mallory, who registers the freed "Alicia", cannot join as her. Before, the arena looked for
    "Alice" online and never paired Alicia again."""
    clock = Time()
    client = await served_on(aiohttp_client, settings, clock, 3)
    await create(client, clock, kind="arena", minutes="6")
    bots = await entered(client, ["Alice", "Bob", "Carol", "Dave"])
    director = director_of(client)
    start = clock.clock() + 10

    async def at(moment: float) -> Callable[[Hosted], Awaitable[bool]]:
        async def reached(hosted: Hosted) -> bool:
            return clock.clock() >= moment

        return reached

    hosted = await played_until(client, clock, bots, await at(start + 90))
    alicia = await renamed(client, bots, "Alice", "Alicia", "Alice")
    hosted = await played_until(client, clock, bots, await at(start + 180))
    assert alicia.games, "Alicia was paired again"
    ally = await renamed(client, bots, "Alicia", "Ally", "Alice")
    assert await register(client, "Alicia", password="mallory") == "ok.zarejestrowalem."
    mallory = Bot(client, MultiPoints("Alicia", registered_id("Alicia", "mallory")))
    await mallory.turn()
    assert await mallory.ask("joinTournament", tourn=NAME) == "err.nickUsed"
    assert await mallory.ask("leaveTournament", tourn=NAME) == "err.notRegistered", "nor withdraw her"
    hosted = await played_until(client, clock, [*bots, mallory], finished)

    assert ally.games and not mallory.games
    boards = await director.boards(hosted)
    nicks, ends = {"Alice", "Alicia", "Ally"}, start + 360
    hers = [b for b in boards if {b.blue, b.red} & nicks and b.ended is not None and b.ended <= ends]
    assert {n for b in hers for n in (b.blue, b.red)} >= nicks, "she played under each nick"
    table = await standings(client)
    assert set(table) == {"Ally", "Bob", "Carol", "Dave"}
    assert table["Ally"]["games"] == len(hers)
