"""A 10-minute arena of 10 players run by the server through the protocol alone: players are paired
again as soon as they are free, one leaves and comes back, the server restarts in the middle, and
the standings count lichess's points for the games that ended in time; the public standings, counted
from the games the answers keep, are at every build the whole count's."""

from __future__ import annotations

import io
import itertools
import json
import zipfile

from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.director.director import Director
from server.director.history import arena_histories
from server.engine import arena
from server.web.common import STORE_KEY
from server.web.tournament import standings_built
from tests.director.bots import (
    PLAN_MOVES,
    Time,
    director_of,
    everyone_turns,
    guests,
    organiser_creates,
    restarted_on,
    served_on,
    tick,
)

NAME = "Friday Arena"
STEP = 2.0  # seconds of the server's time between the players' polls


async def test_ten_players_for_ten_minutes_with_a_pause_and_a_restart(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    clock = Time()
    client = await served_on(aiohttp_client, settings, clock, 3)
    key = await client.app[STORE_KEY].tournaments.add_key("arena-bot", None, False)
    start = int(clock.clock()) + 10
    query = {"tourn": NAME, "kind": "arena", "minutes": "10", "start": str(start)}
    assert await organiser_creates(client, key, **query) == "ok"
    bots = guests(client, 10)
    for bot in bots:
        await bot.log_in()
        assert await bot.ask("joinTournament", tourn=NAME) == "ok"
    director = director_of(client)
    end = start + 600
    away = (start + 180, start + 300)  # the last player leaves for these two minutes
    left = back = restarted = False
    steps = 0
    while clock.clock() < end + 60:
        now = clock.clock()
        if now >= away[0] and not left:
            assert await bots[-1].ask("leaveTournament", tourn=NAME) == "ok"
            left, tables_when_leaving = True, await tables_of(director, bots[-1].nick)
        if now >= away[1] and not back:
            assert await tables_of(director, bots[-1].nick) == tables_when_leaving, "not paired while away"
            assert await bots[-1].ask("joinTournament", tourn=NAME) == "ok"
            back = True
        if now >= start + 360 and not restarted:
            client = await restarted_on(aiohttp_client, settings, clock, 4, bots, client)
            director, restarted = director_of(client), True
        await everyone_turns(bots)
        await tick(client, clock.timers, STEP)
        steps += 1
        if steps % 15 == 0:  # the standings the public answers count from the games they keep
            built = await standings_built(client.app, NAME)
            assert built is not None and isinstance(built.answer, bytes)
            whole = await director.described(NAME)  # every game read and counted
            assert whole is not None and json.loads(built.answer)["standings"] == whole["standings"]

    hosted = await director.hosted.get(NAME)
    assert hosted is not None and hosted.state == "finished"
    boards = await director.boards(hosted)
    in_time = [b for b in boards if b.ended is not None and b.ended <= end]
    assert len(in_time) >= 5 * len(bots) // 2, "paired again and again"
    assert await tables_of(director, bots[-1].nick) > tables_when_leaving, "paired again once back"
    for bot in bots:
        mine = sorted((b for b in boards if bot.nick in (b.blue, b.red)), key=lambda b: b.table)
        opponents = [b.red if b.blue == bot.nick else b.blue for b in mine]
        assert all(a != b for a, b in itertools.pairwise(opponents)), (
            f"{bot.nick} met the same player twice in a row"
        )
    stored = await client.app[STORE_KEY].tournaments.tables(NAME)
    assert all(row.moves is not None and row.moves >= PLAN_MOVES for row in stored if row.result), (
        "each game's length is kept with its result: a quick draw scores nothing, even once its table closed"
    )
    results = await (await client.get(f"/tournament/{NAME}/standings.json")).json()
    table = {row["player"]: row for row in results["standings"]}
    for bot in bots:
        games = arena_histories(in_time).get(bot.nick, ())
        assert table[bot.nick]["points"] == arena.score(games)
        assert table[bot.nick]["games"] == len(games)
    assert any(4 in row["sheet"] for row in table.values()), "somebody was on fire"
    archive = await client.get(f"/tournament/{NAME}.sgf.zip")
    with zipfile.ZipFile(io.BytesIO(await archive.read())) as records:
        assert len(records.namelist()) == len(boards)


async def tables_of(director: Director, nick: str) -> set[int]:
    hosted = await director.hosted.get(NAME)
    assert hosted is not None
    return {b.table for b in await director.boards(hosted) if nick in (b.blue, b.red)}
