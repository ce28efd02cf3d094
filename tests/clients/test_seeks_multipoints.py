"""MultiPoints (tests/clients/multipoints.py, its ServerZagram.java line by line) in a lobby with seeks
open and players waiting in a quick-pairing pool (docs/protocol.md, "Seeks and quick pairing"): it reads
every reply, a whole lobby with seeks in it too, with no parse failure and no notice. The `ka`/`kd` and `w`
lines it skips; a seek it can play it reads as an incoming invitation, one at a time, accepts with the
command it sends for any invitation and plays; a seek it cannot (standard or territory rules) it never
sees, so it neither rejects it nor writes to the seeker ("What old clients see")."""

from __future__ import annotations

import random

import pytest
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from tests.clients.conversation import engine_dots, get, log_in, poll
from tests.clients.multipoints import MultiPoints
from tests.clients.test_multipoints import Lobby
from tests.conftest import served

FREE = "2020s0.4.a.F.a.180.2.."
NO_TERRITORY = "2020n0.4.a.F.a.180.2.."  # the rules MultiPoints plays (`n`: STOP, no territory)
TERRITORY = "2020t0.4.a.F.a.180.2.."
# the built-in client's players: guests who post seeks and join pools with the extension's requests, and
# say at login that they read seeks themselves (`seeks=1`)
DAN, FAY = ("444444", "*Dan"), ("555555", "*Fay")


@pytest.fixture
async def lobby(aiohttp_client: AiohttpClient, settings: Settings) -> Lobby:
    hub = Hub(timers=ManualTimers(), rng=random.Random(3))
    lobby = Lobby(await served(aiohttp_client, settings, hub), hub)
    for mp in (lobby.ala, lobby.bob, lobby.eve):
        await log_in(lobby.client, mp)
    for secret, nick in (DAN, FAY):
        login = f"/a.kropki?co=guestLogin&idGracza={secret}&opis={nick}&lang=en&seeks=1"
        assert await get(lobby.client, login) == ""
    await lobby.round()
    return lobby


async def request(lobby: Lobby, query: str) -> None:
    assert await get(lobby.client, f"/a.kropki?{query}") == ""
    await lobby.round()


def untouched(mp: MultiPoints) -> None:
    """Nothing the seeks' lines could have done: no failure, no notice, no invitation, no tab."""
    assert mp.failures == [] and mp.raw == [], (mp.failures, mp.raw)
    assert mp.invites_incoming == [] and mp.invites_outgoing == [] and mp.tabs == {}
    assert mp.invitation_rows == {} and mp.private == [] and mp.queue == []  # nothing shown, nothing sent
    assert {"*Ala", "*Bob", "*Eve", "*Dan", "*Fay"} <= set(mp.lobby)


async def test_seeks_and_pools_open_show_nothing_multipoints_cannot_read(lobby: Lobby) -> None:
    await request(lobby, f"co=seek&idGracza={DAN[0]}&gameType={FREE}")
    await request(lobby, f"co=seek&idGracza={FAY[0]}&gameType={FREE}&minRating=1400&maxRating=1700")
    await request(lobby, f"co=joinPool&idGracza={FAY[0]}&pool=39x32_5_5")
    late = MultiPoints("*Gus", "666666")  # its first reply: a whole lobby with the seeks in it
    await log_in(lobby.client, late)
    whole = await poll(lobby.client, late)
    assert f"/ka1.*Dan...{FREE}/" in whole and f"/ka2.*Fay.1400.1700.{FREE}/" in whole
    clients = (lobby.ala, lobby.bob, lobby.eve, late)
    for mp in clients:
        untouched(mp)
        assert mp.games == {}

    await request(lobby, f"co=cancelSeek&idGracza={FAY[0]}&seek=2")
    await request(lobby, f"co=acceptSeek&idGracza={FAY[0]}&seek=1")  # *Dan against *Fay: a game
    await poll(lobby.client, late)

    uid = str(max(lobby.hub.tables))
    for mp in clients:
        untouched(mp)
        assert list(mp.games) == [uid] and (mp.games[uid].first, mp.games[uid].second) == ("*Dan", "*Fay")


async def test_a_seek_it_can_play_is_an_incoming_invitation_it_accepts_and_plays(lobby: Lobby) -> None:
    """ServerZagram.java, handleMessage: `} else if (message.startsWith("vg")) { // game invite` ...
    `gui.updateGameInfo(server, sender + "@incoming", ..., GameState.SearchingOpponent, ...)` and
    `personalInvitesIncomingNew.add(sender)`; acceptPersonalGameInvite sends
    `"v" + queue.sizePlusOne() + "." + getMainRoom() + "." + "a"`, naming no inviter."""
    await request(lobby, f"co=seek&idGracza={DAN[0]}&gameType={FREE}")  # not for MultiPoints
    await request(lobby, f"co=seek&idGracza={DAN[0]}&gameType={NO_TERRITORY}")
    await lobby.round()
    for mp in (lobby.ala, lobby.bob, lobby.eve):
        assert mp.invites_incoming == ["*Dan"] and mp.failures == [] and mp.raw == []
        row = mp.invitation_rows["*Dan@incoming"]
        assert (row["size"], row["stop"], row["state"]) == ((20, 20), True, "SearchingOpponent")

    lobby.ala.accept_invite()
    assert lobby.ala.queue[-1] == "v1.0.a"
    await lobby.round()
    uid = str(max(lobby.hub.tables))
    assert uid in lobby.ala.tabs and lobby.ala.invites_incoming == [] and lobby.ala.invitation_rows == {}
    assert lobby.hub.seeks.open == {}  # taken, and Dan's other one ended with his game's start
    for mp in (lobby.bob, lobby.eve):  # the row goes as the seek does; MultiPoints says it is free
        assert mp.invites_incoming == [] and mp.invitation_rows == {} and mp.transient == ["i0nJa"]
        assert (mp.games[uid].first, mp.games[uid].second) == ("*Dan", "*Ala")

    room = lobby.room(uid)
    assert room.game_type.rules.value == "n" and room.lineup.seats == ("*Dan", "*Ala")  # `a`: Dan is blue
    await request(lobby, f"co=graczStawiaKropke&idGracza={DAN[0]}&table={uid}&where=cc")
    await lobby.round()
    assert lobby.ala.tabs[uid].dots[(3, 3)] is False  # blue's dot
    lobby.ala.make_move(uid, 5, 5)
    await lobby.round()
    tab = lobby.ala.tabs[uid]
    assert tab.dots[(5, 5)] is True and tab.dots == engine_dots(room) and tab.refused == []
    assert len(room.game.moves) == 2


async def test_a_seek_of_rules_it_cannot_play_is_not_shown_so_it_sends_nothing(lobby: Lobby) -> None:
    """Offered, a seek of standard or territory rules would meet `else if (gameType.isEmptyScored ==
    true)` (`isEmptyScored = rulesAsString.matches("t|s")`): a `v..r` at once and, to the seeker,
    `sendPrivateMsg(sender, "Sorry, my game client does not support \"territory\" rules.")` at every
    reply that still offered it."""
    await request(lobby, f"co=seek&idGracza={DAN[0]}&gameType={TERRITORY}")
    await request(lobby, f"co=seek&idGracza={FAY[0]}&gameType={FREE}")
    await lobby.round()
    for mp in (lobby.ala, lobby.bob, lobby.eve):
        untouched(mp)
    assert lobby.hub.seeks.open.keys() == {1, 2}


async def test_a_busy_multipoints_is_offered_nothing(lobby: Lobby) -> None:
    """`if (isBusy == true) { ... server.rejectPersonalGameInvite(sender); ...}`: a busy MultiPoints
    would reject every offer; it says it is busy (`i0nJb`), and is offered none."""
    lobby.ala.set_status(True)
    await lobby.round()
    await request(lobby, f"co=seek&idGracza={DAN[0]}&gameType={NO_TERRITORY}")
    await lobby.round()
    untouched(lobby.ala)
    assert lobby.bob.invites_incoming == ["*Dan"]
