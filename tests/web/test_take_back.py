"""What players see is what is stored: a move whose journal write storage did not take (nor anything
played after it) is taken back on every screen, with a server line saying why, and a restart shows the
same board (docs/operations.md, "When storage fails"; docs/protocol.md, "Taken back").

Real failing storage (tests/store/breakers.py), the real app, and MultiPoints' ServerZagram.java as
tests/clients/multipoints.py ports it: the take-back is shown to it as a reply without the table, then
the table's whole state, because that is the one way to give MultiPoints a board without a dot. Its
parser cannot take a move back (ServerZagram.java, handleMessage, the `sa`/`sr` branch):

    if (propertyName.matches("U(B|W)")) {
        throw new FatalGameRoomError("UNDO is unsupported");

and a table missing from a reply closes its tab, its board with it (handleText, then `q` builds a new one):

    if (modifiedSubscribedRooms.contains(room) == false) {
        // unsubscribed room
        gui.unsubscribedRoom(server, room);
    ...
    } else if (message.startsWith("q")) { // current room
        ...
        gui.subscribedGame(server, currentRoom);
"""

from __future__ import annotations

import asyncio
import json
import random
from concurrent.futures import Executor, Future

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient
from sqlalchemy import select

from server.config import Settings
from server.engine.board import Board
from server.engine.gametype import parse_game_type
from server.engine.moves import parse_points
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.room import Room
from server.store import database, writer
from server.store.models import JournalEntry
from server.web.common import STORE_KEY
from tests.clients.conversation import engine_dots, get, log_in
from tests.clients.multipoints import MultiPoints
from tests.conftest import served
from tests.hub.test_restore import state
from tests.store.breakers import Breaker, breaker_for, until
from tests.web.test_stream import chat_texts
from tests.web.zagram import Zagram

CLEAN = "2020n0.0.a.F.a.180.15._SRATP_sratp."  # MultiPoints' own invitation: 180 s + 15 s a move
UNSAVED = "unsaved"  # the nickType of the server line that says why


@pytest.fixture(autouse=True)
def slow_to_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """A locked SQLite write fails after 2 s, long enough for the others to act on a move that is not
    stored yet; failed writes are tried again every 0.05 to 0.2 s."""
    monkeypatch.setattr(database, "BUSY_TIMEOUT_MS", 2_000)
    monkeypatch.setattr(writer, "RETRY_FIRST", 0.05)
    monkeypatch.setattr(writer, "RETRY_MOST", 0.2)


@pytest.fixture
def breaker(settings: Settings) -> Breaker:
    return breaker_for(settings.db_url)


class Table:
    """Three MultiPoints clients on one server (which may be started again): Ala invites Bob, Eve
    watches."""

    def __init__(self, client: TestClient, hub: Hub) -> None:
        self.client, self.hub = client, hub
        self.ala = MultiPoints("*Ala", "111111")
        self.bob = MultiPoints("*Bob", "222222")
        self.eve = MultiPoints("*Eve", "333333")
        self.everyone = (self.ala, self.bob, self.eve)
        self.uid = ""

    async def poll(self, mp: MultiPoints) -> None:
        mp.handle_text(await get(self.client, mp.url()))
        assert not mp.failures and not mp.disposed, (mp.failures, mp.raw)

    async def round(self, *clients: MultiPoints) -> None:
        for mp in clients or self.everyone:
            await self.poll(mp)

    async def start(self) -> None:
        for mp in self.everyone:
            await log_in(self.client, mp)
        await self.round()
        self.ala.invite("*Bob", CLEAN)  # the inviter plays blue
        await self.round(self.ala, self.bob)
        self.bob.accept_invite()
        await self.round(self.bob, self.ala)
        self.uid = str(max(self.hub.tables))
        self.eve.subscribe(self.uid)
        await self.round()

    def room(self) -> Room:
        room = self.hub.tables[int(self.uid)].room
        assert room is not None
        return room

    async def stored_moves(self) -> list[str]:
        async with self.client.app[STORE_KEY].engine.connect() as connection:
            rows = await connection.execute(
                select(JournalEntry.data)
                .where(JournalEntry.uid == int(self.uid), JournalEntry.kind == "move")
                .order_by(JournalEntry.seq)
            )
            return [json.loads(data)["w"] for (data,) in rows]


def boards(table: Table) -> list[dict[tuple[int, int], bool]]:
    return [mp.tabs[table.uid].dots for mp in table.everyone]


def said(mp: MultiPoints, uid: str, code: str) -> list[str]:
    return [text for nick, text, nick_type in mp.tabs[uid].chat if nick == "" and nick_type == code]


async def test_a_move_storage_did_not_take_and_the_answer_to_it_are_taken_back_on_every_screen(
    aiohttp_client: AiohttpClient, settings: Settings, breaker: Breaker
) -> None:
    timers = ManualTimers()
    hub = Hub(timers=timers, rng=random.Random(3))
    table = Table(await served(aiohttp_client, settings, hub), hub)
    await table.start()
    ala, bob, eve, uid = table.ala, table.bob, table.eve, table.uid
    store_writer = table.client.app[STORE_KEY].writer
    ala.make_move(uid, 2, 2)
    await table.round()
    timers.advance(5)
    bob.make_move(uid, 5, 5)
    await table.round()
    await table.round()
    await hub.persistence.flush()
    stored = engine_dots(table.room())
    assert boards(table) == [stored] * 3 and ala.times[uid] == (195, 190)

    await breaker.hold()  # from here on nothing is stored; the server does not know it yet
    timers.advance(20)
    ala.make_move(uid, 3, 3)
    ala_waits = asyncio.create_task(get(table.client, ala.url()))  # her reply waits for her write
    await until(lambda: len(table.room().game.moves) == 3)
    await table.round(bob, eve)
    assert bob.tabs[uid].dots == eve.tabs[uid].dots == stored | {(3, 3): False}
    timers.advance(7)
    bob.make_move(uid, 6, 6)  # Bob answers before anyone knows that Ala's move is not stored
    bob.send_chat(uid, "nice one")
    bob_waits = asyncio.create_task(get(table.client, bob.url()))
    await until(lambda: len(table.room().game.moves) == 4)
    await breaker.break_storage()
    await until(lambda: store_writer.storage_failure is not None)
    ala.handle_text(await ala_waits)
    bob.handle_text(await bob_waits)
    for _ in range(2):  # a reply without the table, then its whole state
        await table.round()

    # Every screen shows what is stored: both moves are gone, it is Ala's turn, and each of them was
    # told why. What Bob wrote stays. The clocks are as the last stored move left them (Ala's 20 s and
    # Bob's 7 s are given back), standing still while nothing can be stored.
    room = table.room()
    assert engine_dots(room) == stored and room.game.to_move == 1
    assert boards(table) == [stored] * 3
    for mp in table.everyone:
        assert len(mp.closed_tabs) == 1, f"{mp.my_name}: the board was not built again"
        assert mp.tabs[uid].refused == [] and mp.raw == [], (mp.my_name, mp.raw)
        assert said(mp, uid, UNSAVED), mp.tabs[uid].chat
        assert ("*Bob", "nice one", "W1") in mp.tabs[uid].chat, mp.tabs[uid].chat
        assert mp.times[uid] == (195, 190)
    assert room.flags() == "f1_p195.p190"

    await breaker.mend()
    await until(lambda: store_writer.storage_failure is None)
    await hub.persistence.flush()
    assert await table.stored_moves() == ["bb", "ee"]  # what was taken back is never written
    async with table.client.app[STORE_KEY].engine.connect() as connection:
        chat = await connection.execute(
            select(JournalEntry.data).where(JournalEntry.uid == int(uid), JournalEntry.kind == "chat")
        )
        texts = [(line["nick"], line["type"]) for line in map(json.loads, (data for (data,) in chat))]
    assert ("*Bob", "W1") in texts and ("", UNSAVED) in texts  # what Bob wrote, and why, are kept

    # A restart: the same clients poll on and see the same board; then the game goes on.
    await table.client.close()
    table.hub = Hub(timers=ManualTimers(), rng=random.Random(3))
    table.client = await served(aiohttp_client, settings, table.hub)
    for _ in range(2):
        await table.round()
    assert engine_dots(table.room()) == stored and boards(table) == [stored] * 3
    ala.make_move(uid, 3, 3)
    await table.round()
    await table.round()
    assert boards(table) == [stored | {(3, 3): False}] * 3
    assert await table.stored_moves() == ["bb", "ee", "cc"]


INSTANT_WIN = "0808stanF1.300.0"  # 8x8, the first capture wins the game, 300 s each
DIAMOND = ["cb", "cc", "bc", "hh", "dc", "hg", "cd"]  # blue's cd closes the ring round red's cc


async def two_guests(
    aiohttp_client: AiohttpClient, settings: Settings
) -> tuple[Hub, TestClient, Zagram, Zagram]:
    """A server whose clocks the test drives, with *Ala and *Bob logged in."""
    hub = Hub(timers=ManualTimers(), rng=random.Random(7))
    client = await served(aiohttp_client, settings, hub)
    ala, bob = Zagram(client, "ala123", "*Ala"), Zagram(client, "bob456", "*Bob")
    for player in (ala, bob):
        assert await player.login() == ""
        await player.poll()
    return hub, client, ala, bob


async def invited(hub: Hub, inviter: Zagram, invitee: Zagram, game_type: str) -> tuple[int, Zagram, Zagram]:
    """The invitee accepts the inviter's invitation: the new table's number, its blue and red players."""
    inviter.send("v", 0, f"s.{invitee.nick}.{game_type}")
    await inviter.poll()
    invitee.send("v", 0, "a")
    uid = max(uid for uid in (await invitee.poll()).sections)
    await inviter.poll()
    room = hub.tables[uid].room
    assert room is not None
    return (uid, inviter, invitee) if room.blue == inviter.nick else (uid, invitee, inviter)


async def old_style_move(player: Zagram, uid: int, where: str) -> str:
    return await player.get(co="graczStawiaKropke", idGracza=player.secret, table=str(uid), where=where)


def game_of(hub: Hub, uid: int) -> Room:
    room = hub.tables[uid].room
    assert room is not None
    return room


async def test_tables_go_back_to_what_is_stored_a_game_its_move_ended_too_and_the_others_stay(
    aiohttp_client: AiohttpClient, settings: Settings, breaker: Breaker
) -> None:
    """Two tables have a move in the writes storage refuses: the first game was won by it (its record
    queued for the archive), the second only moved on. Both come back as stored; the lobby's `x` line
    says the first game is still on; its record never reaches the archive; what a player wrote stays; a
    third table, all of it stored, is left as it was."""
    hub = Hub(timers=ManualTimers(), rng=random.Random(7))
    client = await served(aiohttp_client, settings, hub)
    store_writer = client.app[STORE_KEY].writer
    names = ("Ala", "Bob", "Cid", "Dan", "Eve", "Fay")
    ala, bob, cid, dan, eve, fay = (Zagram(client, f"{name.lower()}123", f"*{name}") for name in names)
    for player in (ala, bob, cid, dan, eve, fay):
        assert await player.login() == ""
        await player.poll()
    won, blue, red = await invited(hub, ala, bob, INSTANT_WIN)
    moved, cid_or_dan, dan_or_cid = await invited(hub, cid, dan, INSTANT_WIN)
    quiet, eve_or_fay, _ = await invited(hub, eve, fay, INSTANT_WIN)
    for turn, where in enumerate(DIAMOND[:-1]):
        assert await old_style_move((blue, red)[turn % 2], won, where) == ""
    assert await old_style_move(cid_or_dan, moved, "aa") == ""
    assert await old_style_move(eve_or_fay, quiet, "aa") == ""
    for player in (ala, bob, cid, dan, eve, fay):
        await player.poll()
    await hub.persistence.flush()

    await breaker.hold()
    winning = asyncio.create_task(old_style_move(blue, won, DIAMOND[-1]))
    await until(lambda: game_of(hub, won).game.result is not None)
    result = game_of(hub, won).game.result
    assert result is not None and str(result) == "B+1"
    red.say(won, "well played")
    saying = asyncio.create_task(red.poll())
    answering = asyncio.create_task(old_style_move(dan_or_cid, moved, "hh"))
    await until(lambda: len(game_of(hub, moved).game.moves) == 2)
    await breaker.break_storage()
    assert await winning == "err.storage" and await answering == "err.storage"
    await saying

    assert game_of(hub, won).game.result is None and len(game_of(hub, won).game.moves) == 6
    assert game_of(hub, won).game.to_move == 1
    assert len(game_of(hub, moved).game.moves) == 1 and game_of(hub, moved).game.to_move == 2
    # everyone at a table taken back: one reply without it, then its whole state
    without, whole = await blue.poll(), await blue.poll()
    assert won not in without.sections and won in whole.sections
    state = whole.lines(won)
    assert [line for line in state if line.startswith("sr")] == [game_of(hub, won).record_line()]
    assert f"x{won}.1.-." in state
    codes = [nick_type for _, nick_type, _ in chat_texts(state)]
    assert "unsaved" in codes and "B+1" not in codes  # the line of the result went with it
    assert (red.nick, "well played") in [(nick, text) for nick, _, text in chat_texts(state)]
    lobby = []
    for _ in range(2):
        reply = await fay.poll()
        assert quiet in reply.sections  # the third table is not taken back
        lobby += reply.lines(0)
    assert f"x{won}.1.-." in lobby  # the lobby hears the game is on again, and never of its result
    assert not [line for line in lobby if line.startswith(f"x{won}.") and line.split(".")[2] != "-"]
    quiet_state = (await fay.poll(msg_no="0")).lines(quiet)
    assert "unsaved" not in [nick_type for _, nick_type, _ in chat_texts(quiet_state)]

    await breaker.mend()
    await until(lambda: store_writer.storage_failure is None)
    await hub.persistence.flush()
    assert (await client.get("/sgf/1")).status == 404  # the game the move ended was never archived
    assert await old_style_move(blue, won, DIAMOND[-1]) == ""  # won again, for good this time
    await hub.persistence.flush()
    assert game_of(hub, won).archive_number == 1
    record = await (await client.get("/sgf/1")).text()
    assert "RE[B+1]" in record and record.count(";B[") == 4


async def test_a_new_game_agreed_as_storage_failed_is_taken_back_and_a_restart_agrees(
    aiohttp_client: AiohttpClient, settings: Settings, breaker: Breaker
) -> None:
    """The new game, its colours swapped, and its first move go; the finished game comes back with its
    archive number. A table whose writes are not all stored is not compacted meanwhile (a compaction
    would write what may yet be taken back). After a restart the table is exactly as it was shown."""
    hub, client, ala, bob = await two_guests(aiohttp_client, settings)
    store_writer = client.app[STORE_KEY].writer
    uid, blue, red = await invited(hub, ala, bob, "0808stanF0.0.0")
    assert await old_style_move(blue, uid, "aa") == "" and await old_style_move(red, uid, "hh") == ""
    assert await propose(red, uid, "resign") == ""
    await hub.persistence.flush()
    finished = game_of(hub, uid)
    assert finished.archive_number == 1 and str(finished.game.result) == "B+R"
    hub.restorer.compact(hub.tables[uid])
    await hub.persistence.flush()

    await breaker.hold()
    asking = asyncio.create_task(propose(red, uid, "new"))
    await until(lambda: game_of(hub, uid).proposal is not None)
    agreeing = asyncio.create_task(propose(blue, uid, "new"))
    await until(lambda: game_of(hub, uid).games_played == 1)
    assert game_of(hub, uid).blue == red.nick  # colours swapped
    moving = asyncio.create_task(old_style_move(red, uid, "dd"))
    await until(lambda: len(game_of(hub, uid).game.moves) == 1)
    numbered = hub.tables[uid].journal_seq
    hub.restorer.compact(hub.tables[uid])
    assert hub.tables[uid].journal_seq == numbered  # not compacted
    await breaker.break_storage()
    assert [await asking, await agreeing, await moving] == ["err.storage"] * 3

    room = game_of(hub, uid)
    assert room.games_played == 0 and room.blue == blue.nick and room.proposal is None
    assert str(room.game.result) == "B+R" and room.archive_number == 1 and len(room.game.moves) == 2
    shown = state(hub, uid)
    for player in (ala, bob):
        await player.poll()  # the table left out,
        whole = (await player.poll()).lines(uid)  # then whole
        assert room.state() in whole and room.record_line() in whole and room.state().endswith(".B+R.1")

    await breaker.mend()
    await until(lambda: store_writer.storage_failure is None)
    await hub.persistence.flush()
    await client.close()
    after = Hub(timers=ManualTimers(), rng=random.Random(7))
    await served(aiohttp_client, settings, after)
    restored = state(after, uid)
    assert restored[:5] == shown[:5]  # the game, its record, its proposition and its clocks
    assert [line for line in restored[5] if "..restart." not in line] == shown[5]  # and its chat


async def propose(player: Zagram, uid: int, proposal: str) -> str:
    return await player.get(co="propose", idGracza=player.secret, table=str(uid), proposal=proposal)


class HeldPool(Executor):
    """The AI's searches, each answered when the test says, with the point it says."""

    def __init__(self) -> None:
        self.searches: list[tuple[Future, Board]] = []

    def submit(self, fn, /, board, *args, **kwargs) -> Future:  # type: ignore[override]
        future: Future = Future()
        self.searches.append((future, board))
        return future

    def answer(self, where: str) -> None:
        future, board = self.searches.pop(0)
        future.set_result((board.index(parse_points(where, board.width, board.height)[0]), 0))


async def test_the_computer_plays_again_a_move_taken_back_and_drops_a_search_for_a_position_gone(
    aiohttp_client: AiohttpClient, settings: Settings, breaker: Breaker
) -> None:
    """An untimed game against the AI. Its move that storage did not take is taken back, and it plays
    again once storage is back (no clock line comes then to wake it). Later it thinks about a move of
    the player's that storage did not take: once that is taken back, the answer found for it is not
    played; the AI answers the move the player makes once storage is back."""
    hub = Hub(timers=ManualTimers(), rng=random.Random(7))
    client = await served(aiohttp_client, settings, hub)
    store_writer = client.app[STORE_KEY].writer
    pool = HeldPool()
    hub.enable_computer(pool, 1)
    ala = Zagram(client, "ala123", "*Ala")
    assert await ala.login() == ""
    untimed = "0909s0..a.A.n...."
    assert await ala.get(co="zapraszam", idGracza=ala.secret, whom="AI easy", gameType=untimed) == ""
    uid = max(hub.tables)
    assert await old_style_move(ala, uid, "ee") == ""
    await until(lambda: len(pool.searches) == 1)

    await breaker.hold()
    pool.answer("aa")  # the AI's move, not stored
    await until(lambda: len(game_of(hub, uid).game.moves) == 2)
    await breaker.break_storage()
    await until(lambda: store_writer.storage_failure is not None)
    assert len(game_of(hub, uid).game.moves) == 1 and game_of(hub, uid).game.to_move == 2
    await asyncio.sleep(0.2)
    assert pool.searches == []  # it does not think while nothing can be stored
    await breaker.mend()
    await until(lambda: len(pool.searches) == 1)  # storage back: it thinks again
    pool.answer("gg")
    await until(lambda: len(game_of(hub, uid).game.moves) == 2)
    await hub.persistence.flush()

    await breaker.hold()
    moving = asyncio.create_task(old_style_move(ala, uid, "cc"))
    await until(lambda: len(pool.searches) == 1)  # the AI thinks about *Ala's cc
    await breaker.break_storage()
    assert await moving == "err.storage"
    assert len(game_of(hub, uid).game.moves) == 2
    pool.answer("hh")  # its answer to a move that is gone
    await asyncio.sleep(0.2)
    room = game_of(hub, uid)
    assert [move.point for move in room.game.moves] == [(4, 4), (6, 6)] and room.game.to_move == 1
    assert pool.searches == []

    await breaker.mend()
    await until(lambda: store_writer.storage_failure is None)
    assert await old_style_move(ala, uid, "cc") == ""
    await until(lambda: len(pool.searches) == 1)
    pool.answer("hh")
    await until(lambda: len(room.game.moves) == 4)
    await hub.persistence.flush()
    async with client.app[STORE_KEY].engine.connect() as connection:
        rows = await connection.execute(
            select(JournalEntry.data).where(JournalEntry.uid == uid, JournalEntry.kind == "move")
        )
        assert [json.loads(data)["w"] for (data,) in rows] == ["ee", "gg", "cc", "hh"]


async def test_a_team_player_leaving_while_storage_fails_stays_in_the_game_until_it_is_back(
    aiohttp_client: AiohttpClient, settings: Settings, breaker: Breaker
) -> None:
    """Leaving a team game takes the player out of it (docs/teams.md): a game action, which storage
    could not keep now. The player leaves the table; the game waits for them until storage is back, and
    then they are out of it (before, they stayed in it for good: the team waited for a player who had
    gone, and lost on time)."""
    hub = Hub(timers=ManualTimers(), rng=random.Random(7))
    client = await served(aiohttp_client, settings, hub)
    store_writer = client.app[STORE_KEY].writer
    team = [Zagram(client, f"{name.lower()}123", f"*{name}") for name in ("Ala", "Bob", "Cid", "Dan")]
    for player in team:
        assert await player.login() == ""
        await player.poll()
    game_type = parse_game_type("0808stanF0.300.0")
    uid = hub.set_up_table(game_type, "*Ala", "*Bob", (0,) * 4, None, None, {}, more=["*Cid", "*Dan"])
    for player in team:
        await player.poll()
    await hub.persistence.flush()

    await breaker.break_storage()
    cid = team[2]
    cid.say(uid, "back soon")
    await cid.poll()  # its write fails: storage is failing
    await until(lambda: store_writer.storage_failure is not None)
    cid.send("q", uid)
    assert uid not in (await cid.poll()).sections  # off the table ...
    room = game_of(hub, uid)
    assert room.lineup.gone == set() and room.seat_of("*Cid") == 3  # ... but still in the game
    unstored = store_writer.unstored_journal().get(uid, [])
    assert "left" not in [kind for _, kind, _ in unstored]
    await breaker.mend()
    await until(lambda: store_writer.storage_failure is None)
    assert room.seat_of("*Cid") == 0 and room.lineup.gone == {"*Cid"}
    await hub.persistence.flush()
    async with client.app[STORE_KEY].engine.connect() as connection:
        left = await connection.execute(
            select(JournalEntry.data).where(JournalEntry.uid == uid, JournalEntry.kind == "left")
        )
        assert [json.loads(data)["p"] for (data,) in left] == [3]  # stored: a restart keeps it


async def test_an_organisers_cancel_storage_did_not_take_never_reaches_the_tournaments_results(
    aiohttp_client: AiohttpClient, settings: Settings, breaker: Breaker
) -> None:
    """The cancel is taken back with the game's end it made. Before, its mark on the tournament's table
    was written once storage was back anyway: the game went on, and its real result was listed as a
    cancelled game's, left out of the standings."""
    hub, client, ala, bob = await two_guests(aiohttp_client, settings)
    store_writer = client.app[STORE_KEY].writer
    uid = hub.set_up_table(parse_game_type("0808stanR0.300.0"), "*Ala", "*Bob", [0, 0], "Cup", "1", {})
    await hub.persistence.flush()

    await breaker.hold()
    hub.cancel_table(uid, None)
    assert game_of(hub, uid).cancelled and str(game_of(hub, uid).game.result) == "Void"
    await breaker.break_storage()
    await until(lambda: store_writer.storage_failure is not None)
    assert not game_of(hub, uid).cancelled and game_of(hub, uid).game.result is None
    await breaker.mend()
    await until(lambda: store_writer.storage_failure is None)
    room = game_of(hub, uid)
    blue, red = (ala, bob) if room.blue == ala.nick else (bob, ala)
    assert await old_style_move(blue, uid, "aa") == ""
    assert await red.get(co="propose", idGracza=red.secret, table=str(uid), proposal="resign") == ""
    await hub.persistence.flush()
    listed = await (await client.get("/tournament/Cup")).json()
    [table] = listed["tables"]
    assert (table["state"], table["result"]) == ("finished", "B+R")
