"""A table's owner whose storage fails takes back the move it had not stored on the screens of another
member's people too (server/hub/takeback.py, docs/cluster.md "Tables across members"): on a real Redis
and PostgreSQL, the owner reaching PostgreSQL through a proxy the test holds, then cuts; and a take-back
of a long game by a player of another member costs its game actions there, however it leaves and sits
down again (server/hub/visitors.py)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.engine.moves import point_to_sgf
from server.hub.clock import Handle, Timers
from server.hub.model import PLAYER_ACTIONS
from server.web.common import HUB_KEY, STORE_KEY
from tests.cluster.conftest import RedisServer
from tests.cluster.test_lobby import guest, two_members, until
from tests.cluster.test_members import member
from tests.cluster.test_tables import at_table, colours, has, invited_table, set_up
from tests.conftest import served
from tests.store.breakers import PostgresProxy
from tests.web.test_storage_failure import until as until_true
from tests.web.zagram import Zagram


@asynccontextmanager
async def members_one_behind_a_proxy(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer, tmp_path: Path
) -> AsyncIterator[tuple[TestClient, TestClient, PostgresProxy]]:
    """Members a and b; b, the tables' owner, reaches PostgreSQL through a proxy the test holds."""
    proxy = PostgresProxy(tmp_path / "pg", postgres.db_url)
    await proxy.start()
    a = await served(aiohttp_client, member(postgres, redis_server, "kropki-a", 8081))
    owner = dataclasses.replace(member(postgres, redis_server, "kropki-b", 8082), db_url=proxy.url)
    b = await served(aiohttp_client, owner)
    try:
        yield a, b, proxy
    finally:
        for client in (a, b):
            await client.close()
        await proxy.close()


def seated(nick: str) -> Callable[[list[str]], bool]:
    return lambda lines: any(line.startswith("pr") and nick in line for line in lines)


async def whole_again(player: Zagram, uid: int) -> list[str]:
    """Polls until a reply leaves table `uid` out (a take-back, as for a new game), then returns the
    table's whole state from the reply after it."""
    for _ in range(100):
        if uid not in (await player.poll(b=True)).sections:
            return (await player.poll(b=True)).sections[uid]
        await asyncio.sleep(0.1)
    raise AssertionError(f"{player.nick} never had table {uid} taken back")


def server_codes(lines: list[str]) -> list[str]:
    chat = [line[2:].split(".", 3) for line in lines if line.startswith(("ca", "cr"))]
    return [nick_type for _, nick, nick_type, _ in chat if nick == ""]


async def test_a_watcher_on_another_member_sees_the_move_taken_back(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer, tmp_path: Path
) -> None:
    async with members_one_behind_a_proxy(aiohttp_client, postgres, redis_server, tmp_path) as (a, b, proxy):
        ala = await guest(a, "alaAla11", "*Ala")
        dan = await guest(b, "danDan44", "*Dan")
        eve = await guest(b, "eveEve55", "*Eve")
        uid = await invited_table(dan, eve, "0808stanF0.300.0")
        blue, red = colours(await at_table(dan, uid, has("pr")), uid, dan, eve)
        blue.send("s", uid, "aa")
        await at_table(blue, uid, has("aa"))
        await until(ala, lambda lines: f"ga{uid}" in lines)
        ala.send("b", uid)  # Ala, on the other member, watches
        await at_table(ala, uid, lambda lines: any(line.startswith("pr") for line in lines))

        await proxy.hold()  # the owner's writes hang: its players' next move is shown, not stored
        red.send("s", uid, "hh")
        moving = asyncio.create_task(red.poll(b=True))  # its reply waits for its writes
        await at_table(ala, uid, has("hh"))  # the watcher sees it, through Redis
        await proxy.break_storage()
        await until_true(lambda: b.app[STORE_KEY].writer.storage_failure is not None)
        assert uid not in (await moving).sections  # the mover's reply: after the take-back
        states = {red: (await red.poll(b=True)).sections[uid]}

        for player in (ala, blue, red):
            state = states.get(player) or await whole_again(player, uid)
            (record,) = [line for line in state if line.startswith("sr")]
            assert "aa" in record and "hh" not in record, (player.nick, record)
            assert "unsaved" in server_codes(state), (player.nick, state)
            assert f"x{uid}.2.-." in state

        await proxy.mend()  # storage back: the game goes on from the stored position
        await until_true(lambda: b.app[STORE_KEY].writer.storage_failure is None)
        red.send("s", uid, "hh")
        await red.poll(b=True)
        await at_table(ala, uid, has("hh"))


async def test_a_move_from_another_member_taken_back_is_sent_again_and_played(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer, tmp_path: Path
) -> None:
    """issue 44: the owner took back a visitor's move when its storage failed and answered nothing;
    the mover's k went on past it after 30 s (the move lost), and meanwhile the next move's `done` was
    taken for it. Now the owner answers `undone`, the mover's member takes k back, the client sends
    the move again, and it is played once storage is back."""
    async with members_one_behind_a_proxy(aiohttp_client, postgres, redis_server, tmp_path) as (a, b, proxy):
        ala = await guest(b, "alaAla11", "*Ala")
        cyd = await guest(a, "cydCyd33", "*Cyd")
        await until(ala, lambda lines: "pa*Cyd" in lines)
        uid = await set_up(b, "*Cyd", "*Ala")  # on member b; Cyd plays from member a, and begins
        await at_table(cyd, uid, seated("*Cyd"))

        await proxy.hold()  # the owner's writes hang: Cyd's move is played there, not stored
        number = cyd.send("s", uid, "aa")
        assert (await cyd.poll(b=True)).processed < number  # sent; not stored, so not confirmed
        await at_table(ala, uid, has("aa"))
        await proxy.break_storage()
        await until_true(lambda: b.app[STORE_KEY].writer.storage_failure is not None)
        state = await whole_again(ala, uid)
        (record,) = [line for line in state if line.startswith("sr")]
        assert "aa" not in record  # taken back

        await proxy.mend()
        await until_true(lambda: b.app[STORE_KEY].writer.storage_failure is None)
        seen: list[str] = []
        for _ in range(100):  # Cyd's client sends the move again with every poll until k counts it
            processed = (await cyd.poll(b=True)).processed
            seen += (await ala.poll(b=True)).sections.get(uid, [])
            if processed >= number and has("aa")(seen):
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError(f"Cyd's move not played again: k {processed}, Ala saw {seen}")


class StillTimers:
    """A member's monotonic clock standing still from now on (its limits' buckets fill no more), its
    deadlines kept as far off as they were meant to be."""

    def __init__(self, timers: Timers) -> None:
        self.timers, self.at = timers, timers.now()

    def now(self) -> float:
        return self.at

    def call_at(self, when: float, callback: Callable[[], None]) -> Handle:
        return self.timers.call_at(self.timers.now() + when - self.at, callback)


async def test_a_visitor_pays_for_its_take_backs_when_it_sits_down_again(
    aiohttp_client: AiohttpClient, postgres: Settings, redis_server: RedisServer
) -> None:
    """*Ala of member a plays *Bob at a table of member b, which charges her take-backs of the long game
    to her there (Limits.take_back: 3 game actions in a game of 200 moves). Before, what she had spent
    there went with her when she left the table: sitting down again, she took back at once, as often as
    her own member let her act (5 take-backs a second), where one member allows 1 in 0.3 s."""
    held_to_limits = dataclasses.replace(postgres, unlimited=())  # the tests' address is exempt otherwise
    a, b = await two_members(aiohttp_client, held_to_limits, redis_server)
    ala, bob = await guest(a, "alaAla11", "*Ala"), await guest(b, "bobBob22", "*Bob")
    await until(ala, lambda lines: "pa*Bob" in lines)
    uid = await invited_table(ala, bob, "2020stanF0.0.0")  # on member b, the invitee's
    blue, red = colours(await at_table(ala, uid, has("pr")), uid, ala, bob)
    rows = {blue: range(0, 10, 2), red: range(1, 10, 2)}  # 200 dots, no enclosure
    for turn in range(200):
        player = blue if turn % 2 == 0 else red
        where = point_to_sgf((turn // 2 % 20, rows[player][turn // 40]))
        while (answer := await act(player, uid, "graczStawiaKropke", where=where)) == "err.tooFast":
            await asyncio.sleep(0.2)
        assert answer == "", answer
    room = b.app[HUB_KEY].tables[uid].room
    assert room is not None and len(room.game.moves) == 200
    await asyncio.sleep(PLAYER_ACTIONS[1] / PLAYER_ACTIONS[0])  # her game actions there: a whole burst
    hub = b.app[HUB_KEY]
    hub.ctx.timers = StillTimers(hub.ctx.timers)

    taken = 0
    while await act(ala, uid, "propose", proposal="undo") != "err.tooFast":
        taken += 1
    assert taken == PLAYER_ACTIONS[1] // 3
    ala.send("q", uid)
    await ala.poll(b=True)
    await until_true(lambda: "*Ala" not in hub.tables[uid].people)
    ala.send("b", uid)
    await at_table(ala, uid, has("pr"))
    assert "*Ala" in hub.tables[uid].people
    assert await act(ala, uid, "propose", proposal="undo") == "err.tooFast"  # as on one member


async def act(player: Zagram, uid: int, what: str, **params: str) -> str:
    """An old-style action at table `uid`: answered as its member did it."""
    return await player.get(co=what, idGracza=player.secret, table=str(uid), **params)
