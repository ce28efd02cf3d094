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
import time
from collections.abc import Callable

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient
from sqlalchemy import select

from server.config import Settings
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.room import Room
from server.store import database, writer
from server.store.models import JournalEntry
from server.web.common import STORE_KEY
from tests.clients.conversation import engine_dots, get, log_in
from tests.clients.multipoints import MultiPoints
from tests.conftest import served
from tests.store.breakers import Breaker, breaker_for

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


async def until(condition: Callable[[], bool], seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


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
