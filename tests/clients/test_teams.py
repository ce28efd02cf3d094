"""A two-against-two game end to end over the protocol (docs/teams.md), every reply read by the port of
MultiPoints (tests/clients/multipoints.py), which knows nothing of teams: the team invitation it sends
as an invitation of one nick holding commas, its `vg` lines, the team table's `d` line (two players
named `*Ala,*Cid` and `*Bob,*Dan`), the moves in turn order on every board, and the result; and a team
table set up by an organiser over HTTP, with its refusals and its results read back. The moves go
through ServerZagram.makeMove as the port has it; MultiPoints' own window would not send them, since
its GameRoom.paperClick lets only a player the `d` line names click (gameOuterInfo.amIPlaying())."""

from __future__ import annotations

import random

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.app import STORE_KEY
from server.config import Settings
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from tests.clients.conversation import engine_dots, log_in, poll
from tests.clients.multipoints import MultiPoints
from tests.clients.test_multipoints import CLEAN
from tests.conftest import served
from tests.web.zagram import parse_reply


class Four:
    def __init__(self, client: TestClient, hub: Hub) -> None:
        self.client, self.hub = client, hub
        self.ala, self.bob = MultiPoints("*Ala", "111111"), MultiPoints("*Bob", "222222")
        self.cid, self.dan = MultiPoints("*Cid", "333333"), MultiPoints("*Dan", "444444")
        self.everyone = (self.ala, self.bob, self.cid, self.dan)
        self.bodies: list[str] = []

    async def round(self) -> None:
        for mp in self.everyone:
            self.bodies.append(await poll(self.client, mp))


@pytest.fixture
async def four(aiohttp_client: AiohttpClient, settings: Settings) -> Four:
    hub = Hub(timers=ManualTimers(), rng=random.Random(3))
    four = Four(await served(aiohttp_client, settings, hub), hub)
    for mp in four.everyone:
        await log_in(four.client, mp)
    await four.round()
    return four


async def test_two_against_two_played_to_the_end_by_clients_that_parse_as_multipoints(four: Four) -> None:
    ala, bob, cid, dan = four.everyone
    ala.invite("*Bob,*Cid,*Dan", CLEAN)  # addPersonalGameInvite: the nick field holds the others
    await four.round()
    for mp in (bob, cid, dan):
        assert mp.invites_incoming == ["*Ala"]  # MultiPoints reads the team `vg` as an invitation of *Ala
    assert ala.invites_outgoing == ["*Bob"]
    for mp in (bob, cid):
        mp.accept_invite()
        await four.round()
        assert ala.invites_outgoing == ["*Bob"]  # the one `vs` line stays: MultiPoints says no "rejected"
    dan.accept_invite()
    await four.round()
    await four.round()

    uid = str(max(four.hub.tables))
    room = four.hub.tables[int(uid)].room
    assert room is not None
    for mp in four.everyone:
        game = mp.games[uid]
        assert (game.first, game.second, game.size) == ("*Ala,*Cid", "*Bob,*Dan", (20, 20))
        assert uid in mp.tabs  # a tab with a board, as for any game

    turns = [(ala, 2, 2), (bob, 18, 18), (cid, 3, 2), (dan, 18, 17), (ala, 4, 2), (bob, 18, 16)]
    sides = []
    for mp, x, y in turns:
        sides.append(room.side_on_move)
        mp.make_move(uid, x, y)
        await four.round()
    assert sides == [1, 2, 3, 4, 1, 2]
    cid.make_move(uid, 9, 9)  # side 3, then side 4; but *Bob's poll comes first in the round
    dan.make_move(uid, 10, 10)
    bob.make_move(uid, 11, 11)
    await four.round()
    await four.round()  # *Ala polled before the two moves of the round
    assert room.side_on_move == 1 and len(room.game.moves) == 8  # *Bob's refused, nothing changed
    assert bob.tabs[uid].chat == [("", "Сейчас не ваша очередь: ходит другой игрок.", "e")]  # in its lang=ru
    for mp in four.everyone:
        assert mp.tabs[uid].dots == engine_dots(room), mp.my_name
        assert mp.tabs[uid].refused == [] and mp.raw == []
        assert mp.times[uid] == (195, 195)  # `f` as MultiPoints reads it: each team's clock, 180 + 15 a move

    bob.propose(uid, "resign")  # surrender(): *Bob is out, *Dan plays on
    dan.propose(uid, "resign")
    await four.round()
    assert str(room.game.result) == "B+R"
    lines = [line for body in four.bodies for line in body.split("/")]
    assert any(line.startswith(f"x{uid}.3.") for line in lines)  # zagram's side numbers
    assert any(line.endswith("B+R.*Ala, *Cid won by resignation.") for line in lines)
    for mp in four.everyone:
        assert mp.failures == [] and mp.raw == []


async def test_an_organisers_team_table_over_http(aiohttp_client: AiohttpClient, settings: Settings) -> None:
    client = await served(aiohttp_client, settings, Hub(timers=ManualTimers(), rng=random.Random(1)))
    key = await client.app[STORE_KEY].tournaments.add_key("pairs-bot", "Pairs", False)

    async def set_up(**players: str) -> str:
        query = {"co": "setUpTable", "key": key, "gameType": "0808stanF0.60.5", "tourn": "Pairs"} | players
        return await (await client.get("/a.kropki", params=query)).text()

    four = {"pl1": "*Ala", "pl2": "*Bob", "pl3": "*Cid", "pl4": "*Dan"}
    assert await set_up(**four, pl6="*Fay") == "err.badTeams"  # a gap
    assert await set_up(**four, pl5="*Eve") == "err.badTeams"  # unequal teams
    # no side 10 (nor 0): before, a player named there was left out without a word
    assert await set_up(**four, pl10="*Jan") == "err.badTeams"
    assert await set_up(**four, pl0="*Oto") == "err.badTeams"
    assert await set_up(**four, sayHiTimes="30.30") == "err.badSayHiTimes"  # one for each player
    assert await set_up(**{**four, "pl4": "*ala"}) == "err.samePlayer"
    assert await set_up(**four, sayHiTimes="30.30.30.30") == "ok.1"

    listed = await (await client.get("/tournament/Pairs")).json()
    assert [(t["blue"], t["red"], t["state"]) for t in listed["tables"]] == [
        ("*Ala, *Cid", "*Bob, *Dan", "playing")
    ]
    lobby = parse_reply(await (await client.get("/a.kropki", params={"co": "getMsg", "msgNo": "0"})).text())
    assert "d1.0808s0..s.F.a.60.5..Pairs.*Ala,*Cid.*Bob,*Dan" in lobby.lines(0, "d1.")
