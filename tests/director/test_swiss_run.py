"""A swiss tournament of 16 players over 5 rounds, run by the server through the protocol alone: an
organiser creates it with a key, 16 MultiPoints clients join and play every game the server sets up for
them, one withdraws (so the later rounds have a bye), and the server restarts in the middle of round 3."""

from __future__ import annotations

import io
import itertools
import zipfile

from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.director.history import Board, swiss_rounds
from server.engine import swiss
from server.web.common import STORE_KEY
from tests.director.bots import (
    Time,
    director_of,
    everyone_turns,
    guests,
    organiser_creates,
    restarted_on,
    served_on,
    tick,
)

NAME = "Autumn Swiss"


async def test_sixteen_players_five_rounds_with_a_withdrawal_and_a_restart(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    clock = Time()
    client = await served_on(aiohttp_client, settings, clock, 1)
    key = await client.app[STORE_KEY].tournaments.add_key("swiss-bot", NAME, False)
    start = int(clock.clock()) + 30
    assert (
        await organiser_creates(client, key, tourn=NAME, kind="swiss", rounds="5", start=str(start)) == "ok"
    )
    assert await organiser_creates(client, key, tourn=NAME, kind="swiss", rounds="5", start=str(start)) == (
        "err.nameTaken"
    )
    bots = guests(client, 16)
    for bot in bots:
        await bot.log_in()
        assert await bot.ask("joinTournament", tourn=NAME) == "ok"
    assert await bots[0].ask("joinTournament", tourn=NAME) == "err.alreadyRegistered"
    director = director_of(client)
    hosted = await director.hosted.get(NAME)
    assert hosted is not None and hosted.state == "registering"

    withdrawn = restarted = False
    for _ in range(2000):
        await everyone_turns(bots)
        await tick(client, clock.timers, 1.0)
        hosted = await director.hosted.get(NAME)
        assert hosted is not None
        if hosted.state == "finished":
            break
        if hosted.round == 2 and not withdrawn:
            assert await bots[-1].ask("leaveTournament", tourn=NAME) == "ok"
            withdrawn = True
        boards = await director.boards(hosted)
        if hosted.round == 3 and not restarted and any(b.result for b in boards if b.round == 3):
            assert any(b.result is None for b in boards if b.round == 3), "the restart comes mid-round"
            client = await restarted_on(aiohttp_client, settings, clock, 2, bots, client)
            director = director_of(client)
            restarted = True
    assert hosted.state == "finished" and hosted.round == 5 and restarted

    rounds = await director.hosted.rounds(hosted.id)
    boards = await director.boards(hosted)
    assert [len(paired.boards) for paired in rounds] == [8, 8, 7, 7, 7]
    assert [paired.bye is not None for paired in rounds] == [False, False, True, True, True]
    assert len({paired.bye for paired in rounds if paired.bye}) == 3, "nobody gets a second bye"
    assert all(bots[-1].nick not in itertools.chain(*paired.boards) for paired in rounds[2:])
    assert sorted((b.round, b.blue, b.red) for b in boards) == sorted(
        (paired.round, blue, red) for paired in rounds for blue, red in paired.boards
    ), "every board of every round got exactly one table, the restart notwithstanding"
    assert all(b.result is not None and b.result != "Void" for b in boards)
    met = [frozenset((b.blue, b.red)) for b in boards]
    assert len(met) == len(set(met)), "no two players meet twice"
    assert_the_engine_made_every_pairing(rounds, boards, [bot.nick for bot in bots])

    results = await (await client.get(f"/tournament/{NAME}/standings.json")).json()
    table = results["standings"]
    assert {row["player"] for row in table} == {bot.nick for bot in bots}
    assert sum(row["points"] for row in table) == len(boards) + 3  # a point a game, a point a bye
    assert results["hosted"]["state"] == "finished" and results["hosted"]["withdrawn"] == [bots[-1].nick]
    assert [row["rank"] for row in table] == sorted(row["rank"] for row in table)
    archive = await client.get(f"/tournament/{NAME}.sgf.zip")
    with zipfile.ZipFile(io.BytesIO(await archive.read())) as records:
        assert len(records.namelist()) == len(boards) == 37


def assert_the_engine_made_every_pairing(rounds: list, boards: list[Board], registered: list[str]) -> None:
    """Each round is what the swiss engine pairs from the rounds before it (the engine itself is
    checked against bbpPairings in tests/engine/test_swiss.py): the director hands it the right history."""
    byes = {paired.round: paired.bye for paired in rounds}
    for paired in rounds:
        before = [b for b in boards if b.round < paired.round]
        # guests all rate 0: the pairing numbers are the order of joining; the last withdrew after round 2
        field = [
            swiss.Entrant(nick, 0.0, swiss_rounds(nick, paired.round - 1, before, byes), number)
            for number, nick in enumerate(registered, start=1)
        ]
        playing, gone = (field, []) if paired.round <= 2 else (field[:-1], field[-1:])
        expected = swiss.pair_round(playing, 5, others=gone)
        assert (tuple(expected.boards), expected.bye) == (paired.boards, paired.bye), paired.round
