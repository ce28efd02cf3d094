"""MultiPoints (vn971/multipoints, ServerZagram.java) against the real app: every reply is read by the
line-by-line port in tests/clients/multipoints.py, and what its window would show is compared with the
server's own game."""

from __future__ import annotations

import random

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.room import Room
from tests.clients.conversation import engine_dots, get, log_in, poll
from tests.clients.multipoints import MultiPoints, encode
from tests.conftest import served
from tests.web.zagram import Zagram, parse_reply

# ServerZagram.getGameTypeString(20, 20, 180, 15, false, CLEAN / ONE_CROSS / FOUR_CROSSES)
CLEAN = "2020n0.0.a.F.a.180.15._SRATP_sratp."
ONE_CROSS = "2020n0.1.a.F.a.180.15._SRATP_sratp."
FOUR_CROSSES = "3030n0.4.a.F.a.180.15._SRATP_sratp."


class Lobby:
    def __init__(self, client: TestClient, hub: Hub) -> None:
        self.client, self.hub = client, hub
        # ServerZagram's constructor: guests are "*" + the name, the id a number below 999999
        self.ala = MultiPoints("*Ala", "111111")
        self.bob = MultiPoints("*Bob", "222222")
        self.eve = MultiPoints("*Eve", "333333")

    async def round(self, *clients: MultiPoints) -> None:
        for mp in clients or (self.ala, self.bob, self.eve):
            await poll(self.client, mp)

    async def start(self, game_type: str) -> tuple[str, MultiPoints, MultiPoints]:
        """Ala invites Bob, Bob accepts: (table, blue, red); the invitation says the inviter starts."""
        self.ala.invite("*Bob", game_type)
        await self.round(self.ala, self.bob)
        self.bob.accept_invite()
        await self.round(self.bob, self.ala)
        uid = max(uid for uid, table in self.hub.tables.items() if table.room is not None)
        return str(uid), self.ala, self.bob

    def room(self, uid: str) -> Room:
        room = self.hub.tables[int(uid)].room
        assert room is not None
        return room

    async def play(self, uid: str, moves: list[tuple[MultiPoints, int, int]]) -> None:
        for mp, x, y in moves:
            mp.make_move(uid, x, y)
            await self.round()


@pytest.fixture
async def lobby(aiohttp_client: AiohttpClient, settings: Settings) -> Lobby:
    hub = Hub(timers=ManualTimers(), rng=random.Random(3))
    lobby = Lobby(await served(aiohttp_client, settings, hub), hub)
    for mp in (lobby.ala, lobby.bob, lobby.eve):
        await log_in(lobby.client, mp)
    await lobby.round()
    return lobby


# blue surrounds red's dot at (3, 3) with (3, 2), (2, 3), (4, 3), (3, 4); red plays elsewhere
CAPTURE = [(2, 3), (3, 3), (3, 2), (3, 17), (4, 3), (5, 17), (3, 4)]


def capture(blue: MultiPoints, red: MultiPoints) -> list[tuple[MultiPoints, int, int]]:
    return [(blue if i % 2 == 0 else red, x, y) for i, (x, y) in enumerate(CAPTURE)]


async def test_login_lobby_and_chat(lobby: Lobby) -> None:
    assert lobby.ala.lobby == ["*Ala", "*Bob", "*Eve"]
    lobby.ala.send_chat("0", "Hi / all @ once")
    lobby.ala.send_private("*Bob", "psst")
    await lobby.round()
    assert ("*Ala", "Hi / all @ once") in lobby.eve.lobby_chat
    assert lobby.bob.private == [("*Ala", "*Ala", "psst")]
    assert lobby.ala.private == [("*Bob", "*Ala", "psst")]


async def test_a_poll_with_ten_long_cyrillic_chat_lines_is_read_whole(lobby: Lobby) -> None:
    """MultiPoints sends what its queue holds, up to ten commands (MessageQueue(10)), in one poll's URL,
    each line URL-encoded: ten lines of 300 Cyrillic letters make an 18 kB request line, which aiohttp's
    default limit (8,190 bytes) refused with a bare 400; MultiPoints had marked them sent."""
    lines = [f"{n} " + "Приветствую" * 27 + "ж" for n in range(10)]
    for line in lines:
        lobby.ala.send_chat("0", line)
    assert sum(len(encode(line)) for line in lines) > 17_000
    await lobby.round()
    assert [text for nick, text in lobby.eve.lobby_chat if nick == "*Ala"] == lines


@pytest.mark.parametrize("game_type", [CLEAN, ONE_CROSS, FOUR_CROSSES])
async def test_players_and_a_late_spectator_see_the_board_the_server_has(
    lobby: Lobby, game_type: str
) -> None:
    uid, blue, red = await lobby.start(game_type)
    room = lobby.room(uid)
    assert not engine_dots(room).keys() & set(CAPTURE), "the crosses are elsewhere"
    await lobby.play(uid, capture(blue, red)[:4])
    lobby.eve.subscribe(uid)  # comes to watch a game in progress: its whole record in one `sr`
    await lobby.round()
    await lobby.play(uid, capture(blue, red)[4:])
    assert room.game.score(1) == 1, "blue captured one dot"
    for mp in (blue, red, lobby.eve):
        tab = mp.tabs[uid]
        assert tab.dots == engine_dots(room), mp.my_name
        assert tab.refused == [] and mp.raw == []


async def test_an_empty_table_is_an_empty_board_and_its_first_move_applies(lobby: Lobby) -> None:
    uid, blue, red = await lobby.start(CLEAN)
    lobby.eve.subscribe(uid)
    await lobby.round()
    assert lobby.eve.tabs[uid].dots == {}
    await lobby.play(uid, [(blue, 5, 5)])
    assert lobby.eve.tabs[uid].dots == {(5, 5): False}


async def test_a_player_back_at_the_table_sees_the_whole_game(lobby: Lobby) -> None:
    uid, blue, red = await lobby.start(ONE_CROSS)
    await lobby.play(uid, [(blue, 2, 2), (red, 18, 18)])
    red.unsubscribe(uid)
    await lobby.round()
    assert uid not in red.tabs
    red.subscribe(uid)
    await lobby.round()
    await lobby.play(uid, [(blue, 2, 3)])
    assert red.tabs[uid].dots == engine_dots(lobby.room(uid))
    assert len(red.tabs[uid].dots) == 4 + 3


async def test_an_agreed_new_game_shows_a_fresh_board_and_keeps_the_old_record(lobby: Lobby) -> None:
    uid, blue, red = await lobby.start(CLEAN)
    lobby.eve.subscribe(uid)
    await lobby.round()
    await lobby.play(uid, [(blue, 2, 2), (red, 3, 3), (blue, 4, 4)])
    red.propose(uid, "resign")  # surrender()
    await lobby.round()
    blue.propose(uid, "new")  # askNewGame()
    await lobby.round()
    red.propose(uid, "new")  # acceptNewGame(): "same as ask"
    for _ in range(3):  # each client: one reply without the table, then its whole state
        await lobby.round()
    room = lobby.room(uid)
    assert (room.blue, room.red) == ("*Bob", "*Ala") and room.game.moves == []
    for mp in (blue, red, lobby.eve):
        assert mp.tabs[uid].dots == {}, f"{mp.my_name} still shows the old game"
    await lobby.play(uid, [(red, 2, 2), (blue, 7, 7)])  # the same points as the old game's first move
    for mp in (blue, red, lobby.eve):
        assert mp.tabs[uid].dots == {(2, 2): False, (7, 7): True} and mp.tabs[uid].refused == []
    await lobby.hub.persistence.flush()
    old = await get(lobby.client, "/sgf/1")
    assert ";B[bb]" in old and "RE[B+R]" in old, "the old game is finished and kept"
    late = MultiPoints("*Fay", "444444")
    await log_in(lobby.client, late)
    await poll(lobby.client, late)
    late.subscribe(uid)
    await poll(lobby.client, late)
    assert late.tabs[uid].dots == {(2, 2): False, (7, 7): True}


async def test_a_lost_reply_during_a_new_game_still_leads_to_the_fresh_board(lobby: Lobby) -> None:
    uid, blue, red = await lobby.start(CLEAN)
    await lobby.play(uid, [(blue, 2, 2)])
    red.propose(uid, "resign")
    await lobby.round(red, blue)
    blue.propose(uid, "new")
    await lobby.round(blue, red)
    red.propose(uid, "new")
    query = red.url()
    assert uid in (await get(lobby.client, query)), "this reply is lost on its way"
    red.handle_text(await get(lobby.client, query))  # the same poll again
    await lobby.round(red)
    assert red.tabs[uid].dots == {}
    await lobby.play(uid, [(red, 2, 2)])
    assert red.tabs[uid].dots == {(2, 2): False}


async def test_the_first_poll_with_msg_no_0_0_has_each_b_line_once(lobby: Lobby) -> None:
    fay = MultiPoints("*Fay", "444444")
    await log_in(lobby.client, fay)
    reply = parse_reply(await get(lobby.client, fay.url()))
    b_lines = [line for line in reply.lines(0) if line.startswith("b")]
    assert sorted(b_lines) == ["b*Ala.0", "b*Bob.0", "b*Eve.0", "b*Fay.0"]


async def test_a_draw_proposition_is_agreed_and_ends_the_game_drawn(lobby: Lobby) -> None:
    uid, blue, red = await lobby.start(CLEAN)
    await lobby.play(uid, [(blue, 2, 2), (red, 5, 5)])
    blue.propose(uid, "draw")  # askDraw()
    await lobby.round()
    assert lobby.room(uid).proposal == (1, "draw")
    red.propose(uid, "accept2draw")  # acceptDraw()
    await lobby.round()
    assert str(lobby.room(uid).game.result) == "0"


def errors(chat: list[str] | list[tuple[str, str, str]]) -> list[str]:
    """The refusals (nickType `e`) among chat lines, from a Reply's lines or a tab's chat."""
    found = []
    for entry in chat:
        if isinstance(entry, tuple):
            nick, text, kind = entry
        else:
            if not entry.startswith(("ca", "cr")):
                continue
            _, nick, kind, text = entry[2:].split(".", 3)
        if kind == "e":
            found.append(text)
    return found


@pytest.mark.parametrize(
    "sequence",
    [
        ["draw", "cancel1draw"],  # askDraw, cancelAskingDraw
        ["draw", "!reject2draw"],  # rejectDraw by the opponent
        ["score", "cancel1score"],
        ["score", "!reject2score"],
        ["score", "!accept2score"],
    ],
)
async def test_every_proposition_multipoints_sends_has_its_effect(lobby: Lobby, sequence: list[str]) -> None:
    uid, blue, red = await lobby.start(CLEAN)
    await lobby.play(uid, [(blue, 2, 2), (red, 5, 5)])
    for what in sequence:
        who = red if what.startswith("!") else blue
        who.propose(uid, what.lstrip("!"))
        await lobby.round()
        assert errors(blue.tabs[uid].chat + red.tabs[uid].chat) == []
    room = lobby.room(uid)
    assert room.proposal is None
    assert str(room.game.result) == ("0" if sequence[-1] == "!accept2score" else "None")


async def test_undo_in_multipoints_own_games_is_refused_clearly(lobby: Lobby) -> None:
    """getGameTypeString always sends the rights `_SRATP_sratp` ("no undo"): askUndo is refused with a
    sentence, and so are the answers to it."""
    uid, blue, red = await lobby.start(CLEAN)
    await lobby.play(uid, [(blue, 2, 2), (red, 5, 5)])
    blue.propose(uid, "undo")
    await lobby.round()
    red.propose(uid, "accept2undo")
    await lobby.round()
    # MultiPoints logs in as `ru`: the refusals are written in Russian (server/hub/sentences.py)
    assert errors(blue.tabs[uid].chat) == ["За этим столом это не разрешено."]
    assert errors(red.tabs[uid].chat) == ["На это предложение вы ответить не можете."]
    assert len(lobby.room(uid).game.moves) == 2


async def test_undo_accepted_in_a_game_that_allows_it(lobby: Lobby) -> None:
    """A game type with the undo right (zagram's default rights): acceptUndo takes the move back;
    MultiPoints itself cannot show an undo (`UNDO is unsupported`), as on zagram."""
    uid, blue, red = await lobby.start("2020n0..a.F.a.180.15..")
    await lobby.play(uid, [(blue, 2, 2), (red, 5, 5)])
    red.propose(uid, "undo")
    await lobby.round()
    blue.propose(uid, "accept1undo")
    await lobby.round()
    assert len(lobby.room(uid).game.moves) == 1
    assert errors(blue.tabs[uid].chat + red.tabs[uid].chat) == []
    assert any("UNDO is unsupported" in line for line in blue.raw)


async def test_new_cannot_be_rejected_and_multipoints_never_sends_it(lobby: Lobby) -> None:
    """rejectNewGame: `// cannot reject, just ignore`; a client that sends reject1new is told why."""
    uid, blue, red = await lobby.start(CLEAN)
    red.propose(uid, "resign")
    await lobby.round()
    blue.propose(uid, "new")
    await lobby.round()
    zagram = Zagram(lobby.client, red.secret, red.my_name)
    zagram.seen = int(red.last_server_message_number)
    zagram.acknowledged = len(red.queue)
    zagram.commands = list(red.queue)
    zagram.send("u", uid, "reject1new")
    reply = await zagram.poll()
    assert errors(reply.lines(int(uid))) == ["Такое предложение или ответ сейчас невозможны."]
    assert lobby.room(uid).proposal == (1, "new")
