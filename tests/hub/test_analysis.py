"""Analysis tables (type `a`) over the wire: opened by inviting oneself, loaded from the archive, one
analyser placing dots of both colours and taking them back at will, spectators watching."""

from __future__ import annotations

import asyncio

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.app import create_app
from server.config import Settings
from server.engine.board import BLACK, WHITE
from server.hub.hub import Hub
from server.web.common import HUB_KEY
from tests.web.zagram import Zagram

PLAYED = ["bc", "cc", "cb", "jj", "dc", "ji", "cd"]  # blue captures red's cc with its fourth dot
ANALYSE_1 = "1010s0.SGFz1.a.a.n...c___SUsuen*Ala."


def hub_of(client: TestClient) -> Hub:
    return client.app[HUB_KEY]


async def archived_game(client: TestClient, ala: Zagram, bob: Zagram) -> int:
    """Ala (blue) and Bob play PLAYED on 10x10, Bob resigns; the archive number once it is written."""
    await ala.get(idGracza=ala.secret, co="zapraszam", whom="*Bob", gameType="1010s0..a.F.n....")
    await bob.get(idGracza=bob.secret, co="zaproszenieTak")
    for n, where in enumerate(PLAYED):
        mover = ala if n % 2 == 0 else bob
        assert await mover.get(idGracza=mover.secret, co="graczStawiaKropke", table="1", where=where) == ""
    await bob.get(idGracza=bob.secret, co="propose", table="1", proposal="resign")
    room = hub_of(client).tables[1].room
    for _ in range(100):
        if room.archive_number is not None:
            return room.archive_number
        await asyncio.sleep(0.05)
    raise AssertionError("the game was not archived")


async def test_an_archived_game_is_analysed_with_dots_of_both_colours_while_a_spectator_watches(
    client: TestClient,
) -> None:
    ala, bob = Zagram(client, "ala123", "*Ala"), Zagram(client, "bob456", "*Bob")
    await ala.login()
    await bob.login()
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


async def test_what_an_analysis_table_refuses(client: TestClient) -> None:
    ala, bob = Zagram(client, "ala123", "*Ala"), Zagram(client, "bob456", "*Bob")
    await ala.login()
    await bob.login()
    await archived_game(client, ala, bob)
    tables = len(hub_of(client).tables)

    def invite(whom: str, game_type: str) -> object:
        return ala.get(idGracza=ala.secret, co="zapraszam", whom=whom, gameType=game_type)

    assert await invite("*Ala", "1010s0.SGFz99.a.a.n...c___SUsuen*Ala.") == "err.noSuchGame"
    assert await invite("*Ala", "2020s0.SGFz1.a.a.n...c___SUsuen*Ala.") == "err.badGameType"  # 10x10 game
    assert await invite("*Ala", "1010s0.SGFz1.a.a.n...c___SUsuen*Bob.") == "err.badGameType"  # not her
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
    ala, bob = Zagram(before, "ala123", "*Ala"), Zagram(before, "bob456", "*Bob")
    await ala.login()
    await bob.login()
    await archived_game(before, ala, bob)
    assert await ala.get(idGracza=ala.secret, co="zapraszam", whom="*Ala", gameType=ANALYSE_1) == ""
    assert await ala.get(idGracza=ala.secret, co="graczStawiaKropke", table="2", where="ee") == ""
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
