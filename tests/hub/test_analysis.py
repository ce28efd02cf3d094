"""Analysis tables (type `a`) over the wire: opened by inviting oneself, loaded from the archive, one
analyser placing dots of both colours and taking them back at will, spectators watching."""

from __future__ import annotations

import asyncio

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.app import create_app
from server.config import Settings
from server.engine.board import BLACK, WHITE
from server.engine.replay import replay_record
from server.engine.sgf import read_record
from server.hub.hub import Hub
from server.hub.room import Room
from server.web.common import HUB_KEY
from tests.web.zagram import Zagram

PLAYED = ["bc", "cc", "cb", "jj", "dc", "ji", "cd"]  # blue captures red's cc with its fourth dot
ANALYSE_1 = "1010s0.SGFz1.a.a.n...c___SUsuen*Ala."
EMPTY_10 = "1010s0..a.a.n...c___SUsuen*Ala."


def hub_of(client: TestClient) -> Hub:
    return client.app[HUB_KEY]


async def guests(client: TestClient) -> tuple[Zagram, Zagram]:
    ala, bob = Zagram(client, "ala123", "*Ala"), Zagram(client, "bob456", "*Bob")
    await ala.login()
    await bob.login()
    return ala, bob


async def free_game(ala: Zagram, bob: Zagram, rules: str) -> None:
    """Ala invites Bob to a free 10x10 game with `rules` (s, t or n), playing blue; Bob accepts."""
    await ala.get(idGracza=ala.secret, co="zapraszam", whom="*Bob", gameType=f"1010{rules}0..a.F.n....")
    await bob.get(idGracza=bob.secret, co="zaproszenieTak")


async def archived_game(client: TestClient, ala: Zagram, bob: Zagram) -> int:
    """Ala (blue) and Bob play PLAYED on 10x10, Bob resigns; the archive number once it is written."""
    await free_game(ala, bob, "s")
    for n, where in enumerate(PLAYED):
        mover = ala if n % 2 == 0 else bob
        assert await mover.get(idGracza=mover.secret, co="graczStawiaKropke", table="1", where=where) == ""
    await bob.get(idGracza=bob.secret, co="propose", table="1", proposal="resign")
    return await archive_number(hub_of(client).tables[1].room)


async def archive_number(room: Room) -> int:
    """The game's archive number, once the archive has it."""
    for _ in range(100):
        if room.archive_number is not None:
            return room.archive_number
        await asyncio.sleep(0.05)
    raise AssertionError("the game was not archived")


async def test_an_archived_game_is_analysed_with_dots_of_both_colours_while_a_spectator_watches(
    client: TestClient,
) -> None:
    ala, bob = await guests(client)
    assert await archived_game(client, ala, bob) == 1
    await ala.get(idGracza=ala.secret, co="zmienStol", newTable="0")
    await bob.get(idGracza=bob.secret, co="zmienStol", newTable="0")

    assert await ala.get(idGracza=ala.secret, co="zapraszam", whom="*Ala", gameType=ANALYSE_1) == ""
    room = hub_of(client).tables[2].room
    assert room.analysis and room.game.moves[-1].point == (2, 3) and room.game.board.score[1] == 1
    assert await bob.get(idGracza=bob.secret, co="zmienStol", newTable="2") == ""
    await bob.poll()

    for where in ("ee", "ff", "gg"):  # red (on move after the seven), blue, red: all the analyser's
        assert await ala.get(idGracza=ala.secret, co="graczStawiaKropke", table="2", where=where) == ""
    seen = (await bob.poll()).lines(2, "sa")
    assert seen == ["sa;W[ee]", "sa;B[ff]", "sa;W[gg]"]
    assert await ala.get(idGracza=ala.secret, co="propose", table="2", proposal="undo") == ""  # at once
    assert await ala.get(idGracza=ala.secret, co="propose", table="2", proposal="undo") == ""
    assert (await bob.poll()).lines(2, "sa") == ["sa;UW[gg]", "sa;UB[ff]"]
    assert [m.player for m in room.game.moves[-2:]] == [BLACK, WHITE]

    refused = await bob.get(idGracza=bob.secret, co="graczStawiaKropke", table="2", where="hh")
    assert refused == "err.notPlayer"
    record = await client.get("/table/2.sgf")
    assert record.status == 200 and ";W[ee]" in await record.text() and "PB[*Ala]" in await record.text()
    assert [game["number"] for game in await (await client.get("/games?nick=*Ala")).json()] == [1]


async def test_the_analyser_chooses_the_colour_of_a_dot(client: TestClient) -> None:
    ala, bob = await guests(client)
    assert await ala.get(idGracza=ala.secret, co="zapraszam", whom="*Ala", gameType=EMPTY_10) == ""
    room = hub_of(client).tables[1].room
    assert await bob.get(idGracza=bob.secret, co="zmienStol", newTable="1") == ""
    await bob.poll()

    def place(where: str, **colour: str) -> object:
        return ala.get(idGracza=ala.secret, co="graczStawiaKropke", table="1", where=where, **colour)

    assert await place("ee", colour="red") == ""  # red first, though blue starts
    assert await place("ff", colour="red") == ""  # and again
    assert await place("gg") == ""  # no colour: the side on move, blue after red's dot
    assert await place("hh", colour="blue") == ""
    assert (await bob.poll()).lines(1, "sa") == ["sa;W[ee]", "sa;W[ff]", "sa;B[gg]", "sa;B[hh]"]
    assert room.game.to_move == WHITE
    assert await place("ii", colour="green") == "err.badColour"
    assert await place("ii", colour="") == "err.badColour"
    assert len(room.game.moves) == 4
    assert await ala.get(idGracza=ala.secret, co="propose", table="1", proposal="undo") == ""
    assert [m.player for m in room.game.moves] == [WHITE, WHITE, BLACK] and room.game.to_move == WHITE
    record = await (await client.get("/table/1.sgf")).text()  # saved, it reads back the same
    assert "Pass=1" in record and ";W[ee];W[ff];B[gg])" in record
    replayed = replay_record(read_record(record)).game
    assert replayed.board.state() == room.game.board.state() and replayed.to_move == WHITE


async def test_only_the_analyser_chooses_a_colour(client: TestClient) -> None:
    ala, bob = await guests(client)
    await free_game(ala, bob, "s")
    room = hub_of(client).tables[1].room

    def place(who: Zagram, where: str, colour: str) -> object:
        return who.get(idGracza=who.secret, co="graczStawiaKropke", table="1", where=where, colour=colour)

    assert await place(ala, "ee", "red") == "err.badColour"  # Ala is blue
    assert await place(bob, "ee", "blue") == "err.badColour"  # and Bob may not play for her
    assert room.game.moves == []
    assert await place(ala, "ee", "blue") == ""  # one's own colour is no choice, and allowed
    assert [m.player for m in room.game.moves] == [BLACK]


async def test_an_analysis_never_ends_by_itself(client: TestClient) -> None:
    ala = Zagram(client, "ala123", "*Ala")
    await ala.login()
    small = "0505n0..a.a.n...c___SUsuen*Ala."  # no-territory rules: a game that knows STOP
    assert await ala.get(idGracza=ala.secret, co="zapraszam", whom="*Ala", gameType=small) == ""
    room = hub_of(client).tables[1].room
    board = room.game.board
    while playable := [p for p in board.board_indices() if board.playable(p)]:
        where = "".join("abcde"[c] for c in board.point(playable[0]))
        assert await ala.get(idGracza=ala.secret, co="graczStawiaKropke", table="1", where=where) == ""
        board = room.game.board
    assert room.game.result is None, "a full board ends a game, not an analysis"
    assert await ala.get(idGracza=ala.secret, co="stopMove", stol="1") == "err.illegalMove"
    assert room.game.stopped == set()
    placed = len(room.game.moves)
    assert await ala.get(idGracza=ala.secret, co="propose", table="1", proposal="undo") == ""
    assert len(room.game.moves) == placed - 1 and room.game.result is None


async def test_an_archived_game_with_a_stop_is_analysed_with_every_dot(client: TestClient) -> None:
    ala, bob = await guests(client)
    await free_game(ala, bob, "n")
    game = hub_of(client).tables[1].room.game
    for n, where in enumerate(["ee", "ef", "ff", "gg"]):
        mover = ala if n % 2 == 0 else bob
        assert await mover.get(idGracza=mover.secret, co="graczStawiaKropke", table="1", where=where) == ""
    assert await ala.get(idGracza=ala.secret, co="stopMove", stol="1") == ""  # Bob's dots ground hers
    assert await bob.get(idGracza=bob.secret, co="stopMove", stol="1") == ""
    played = [(move.player, move.point) for move in game.moves]
    assert len(played) > 5 and game.result is not None
    number = await archive_number(hub_of(client).tables[1].room)
    await ala.get(idGracza=ala.secret, co="zmienStol", newTable="0")

    analyse = f"1010n0.SGFz{number}.a.a.n...c___SUsuen*Ala."
    assert await ala.get(idGracza=ala.secret, co="zapraszam", whom="*Ala", gameType=analyse) == ""
    analysis = hub_of(client).tables[2].room.game
    assert [(move.player, move.point) for move in analysis.moves] == played
    assert analysis.board.score == game.board.score and analysis.result is None


async def test_an_archived_game_with_two_crosses_is_analysed_from_them(client: TestClient) -> None:
    ala, bob = await guests(client)
    await ala.get(idGracza=ala.secret, co="zapraszam", whom="*Bob", gameType="1010n0.2.a.F.n....")
    await bob.get(idGracza=bob.secret, co="zaproszenieTak")
    game = hub_of(client).tables[1].room.game
    assert len(game.setup.black) == len(game.setup.white) == 4
    assert await ala.get(idGracza=ala.secret, co="graczStawiaKropke", table="1", where="aa") == ""
    await bob.get(idGracza=bob.secret, co="propose", table="1", proposal="resign")
    number = await archive_number(hub_of(client).tables[1].room)
    await ala.get(idGracza=ala.secret, co="zmienStol", newTable="0")

    analyse = f"1010n0.SGFz{number}.a.a.n...c___SUsuen*Ala."
    assert await ala.get(idGracza=ala.secret, co="zapraszam", whom="*Ala", gameType=analyse) == ""
    analysis = hub_of(client).tables[2].room.game
    assert analysis.setup.black == game.setup.black and analysis.setup.white == game.setup.white
    assert [(move.player, move.point) for move in analysis.moves] == [(BLACK, (0, 0))]


async def test_what_an_analysis_table_refuses(client: TestClient) -> None:
    ala, bob = await guests(client)
    await archived_game(client, ala, bob)
    tables = len(hub_of(client).tables)

    def invite(whom: str, game_type: str) -> object:
        return ala.get(idGracza=ala.secret, co="zapraszam", whom=whom, gameType=game_type)

    assert await invite("*Ala", "1010s0.SGFz99.a.a.n...c___SUsuen*Ala.") == "err.noSuchGame"
    assert await invite("*Ala", "2020s0.SGFz1.a.a.n...c___SUsuen*Ala.") == "err.badGameType"  # 10x10 game
    assert await invite("*Ala", "1010s0.SGFz1.a.a.n...c___SUsuen*Bob.") == "err.badGameType"  # not her
    assert await invite("*Ala", "1010s0.SGFz1.a.a.n...c___Sen*Ala.") == "err.badGameType"  # no red dots
    assert await invite("*Bob", "1010s0..a.a.n...c___SUsuen*Ala.") == "err.badGameType"  # not herself
    assert await invite("*Bob", "1010s0.SGFz1.a.F.n....") == "err.badGameType"  # archived starts: analyses
    assert len(hub_of(client).tables) == tables
    ala.send("v", 0, f"s.*Ala.{ANALYSE_1}")  # the stream cannot wait for the archive
    assert any("co=zapraszam" in line for line in (await ala.poll()).lines(0, "ca"))
    assert len(hub_of(client).tables) == tables
    empty = "1010s0..a.a.n...c___SUsuen*Ala."
    answers = [await invite("*Ala", empty) for _ in range(11)]  # the invitation limit: 10 a minute
    assert answers == [""] * 9 + ["err.tooManyInvitations"] * 2  # one invitation went to the game above
    assert len(hub_of(client).tables) == tables + 9


async def test_analysis_tables_come_back_after_a_restart(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    before = await aiohttp_client(create_app(settings))
    ala, bob = await guests(before)
    await archived_game(before, ala, bob)
    assert await ala.get(idGracza=ala.secret, co="zapraszam", whom="*Ala", gameType=ANALYSE_1) == ""
    for where in ("ee", "ef"):  # two blue dots, though red is on move after the seven
        move = {"co": "graczStawiaKropke", "table": "2", "where": where, "colour": "blue"}
        assert await ala.get(idGracza=ala.secret, **move) == ""
    territory = "0909t0..a.a.n...c___SUsuen*Ala."  # an empty board, territory rules: rings by hand
    assert await ala.get(idGracza=ala.secret, co="zapraszam", whom="*Ala", gameType=territory) == ""
    for where in ("bc", "cc", "cb", "hh", "dc", "gg", "cd.bccbdccdbc"):
        assert await ala.get(idGracza=ala.secret, co="graczStawiaKropke", table="3", where=where) == ""
    games = {uid: hub_of(before).tables[uid].room.game for uid in (2, 3)}
    expected = {uid: (game.board.state(), len(game.moves), game.to_move) for uid, game in games.items()}
    await before.close()

    after = await aiohttp_client(create_app(settings))
    for uid in (2, 3):
        room = hub_of(after).tables[uid].room
        game = room.game
        assert room.analysis and (game.board.state(), len(game.moves), game.to_move) == expected[uid]
        assert game.board.score[1] == 1


async def test_an_analysis_table_closes_when_its_analyser_leaves_it(client: TestClient) -> None:
    """issue 47: an analysis stayed on everyone's lobby after its analyser had gone."""
    ala = Zagram(client, "ala123", "*Ala")
    await ala.login()
    assert await ala.get(idGracza=ala.secret, co="zapraszam", whom="*Ala", gameType=EMPTY_10) == ""
    assert await ala.get(idGracza=ala.secret, co="graczStawiaKropke", table="1", where="cc") == ""
    hub = hub_of(client)
    await ala.get(idGracza=ala.secret, co="zmienStol", newTable="0")
    hub.sweep()
    assert 1 not in hub.tables


async def test_the_limits_refuse_an_archived_game_before_it_is_replayed(client: TestClient) -> None:
    """Opening an analysis of an archived game replays its record twice (60 ms for 2,400 moves on 52x52)
    and the limits were checked only after: a player at their most invitations a minute (or analysis
    tables) had the server replay a long record 20 times a second, each refused. A record that does not
    fit the table (a 20x20 analysis of a 10x10 game) shows which comes first."""
    ala, bob = await guests(client)
    await archived_game(client, ala, bob)  # her invitation of Bob is one of the minute's 10
    for _ in range(9):
        assert await ala.get(idGracza=ala.secret, co="zapraszam", whom="*Ala", gameType=EMPTY_10) == ""
    tables = len(hub_of(client).tables)
    not_fitting = "2020s0.SGFz1.a.a.n...c___SUsuen*Ala."
    answer = await ala.get(idGracza=ala.secret, co="zapraszam", whom="*Ala", gameType=not_fitting)
    assert answer == "err.tooManyInvitations"  # before: err.badGameType, from the replay
    assert len(hub_of(client).tables) == tables
