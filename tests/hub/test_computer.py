"""Games against the server's AI players over the wire, with the real app and its worker process."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import random
import re
import signal
import time
from concurrent.futures import Executor, Future
from concurrent.futures.process import BrokenProcessPool

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.app import create_app
from server.config import Settings
from server.engine.board import BLACK, WHITE
from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.computer import MOST_SECONDS, UNTIMED_SECONDS, move_budget
from server.hub.games import ABSENT_PLAYERS_KEPT, IDLE_TABLE_KEPT
from server.hub.hub import Hub
from server.web.common import HUB_KEY
from tests.web.zagram import Zagram

TINY = "0505s0..a.A.a.60.2.."  # 5x5, standard rules, the inviter is blue, type A, 60 s + 2 s a move
SLACK = 3.0  # seconds beyond the budget for the worker process and the polls


@pytest.fixture
async def client(aiohttp_client: AiohttpClient, settings: Settings) -> TestClient:
    return await aiohttp_client(create_app(dataclasses.replace(settings, ai_workers=1)))


def hub_of(client: TestClient) -> Hub:
    return client.app[HUB_KEY]


async def wait_for(ala: Zagram, condition, seconds: float) -> float:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < seconds, "the computer did not answer in time"
        await ala.poll(wait="1")
    return time.monotonic() - started


async def test_a_guest_plays_a_whole_game_against_the_computer(client: TestClient) -> None:
    ala = Zagram(client, "ala123", "*Ala")
    assert await ala.login() == ""
    lobby = await ala.poll()
    assert {"iAI easy..F.en", "iAI medium..F.en", "iAI hard..F.en"} <= set(lobby.lines(0, "i"))
    assert await ala.get(idGracza=ala.secret, co="zapraszam", whom="AI easy", gameType=TINY) == ""
    (uid,) = [uid for uid in hub_of(client).tables if uid]
    room = hub_of(client).tables[uid].room
    assert (room.blue, room.red) == ("*Ala", "AI easy")
    rng = random.Random(7)
    answers = []
    while room.game.result is None:
        free = [p for p in room.game.board.board_indices() if room.game.board.playable(p)]
        where = "".join("abcde"[c] for c in room.game.board.point(rng.choice(free)))
        assert await ala.get(idGracza=ala.secret, co="graczStawiaKropke", table=str(uid), where=where) == ""
        if room.game.result is None:
            answers.append(await wait_for(ala, lambda: room.game.to_move == BLACK or room.game.result, 60))
            assert room.game.moves[-1].player == WHITE
    assert max(answers) < move_budget(60, 2, 0, 1) + SLACK
    assert room.game.board.free_points == 0
    await wait_for(ala, lambda: room.archive_number is not None, 10)
    table = await ala.poll(msg_no="0")
    (state,) = table.lines(uid, "x")
    assert state.split(".", 2)[2] == f"{room.game.result}.{room.archive_number}"  # finished, archived
    record = await (await client.get(f"/sgf/{room.archive_number}")).text()
    times = re.findall(r"[BW]L\[([^\]]*)\]", record)
    assert len(times) == len(room.game.moves) and all(t.isdigit() for t in times)  # whole seconds: BL[57]


async def test_the_computer_agrees_to_take_back_and_plays_again(client: TestClient) -> None:
    ala = Zagram(client, "ala123", "*Ala")
    await ala.login()
    await ala.get(idGracza=ala.secret, co="zapraszam", whom="AI medium", gameType="0909s0..a.A.n....")
    room = hub_of(client).tables[1].room
    await ala.get(idGracza=ala.secret, co="graczStawiaKropke", table="1", where="ee")
    await wait_for(ala, lambda: len(room.game.moves) == 2, 30)

    assert await ala.get(idGracza=ala.secret, co="propose", table="1", proposal="undo") == ""
    await wait_for(ala, lambda: room.proposal is None and len(room.game.moves) == 2, 30)
    assert room.game.to_move == BLACK and room.game.moves[-1].player == WHITE


async def test_what_the_computer_refuses(client: TestClient) -> None:
    ala, bob = Zagram(client, "ala123", "*Ala"), Zagram(client, "bob456", "*Bob")
    await ala.login()
    await bob.login()

    def invite(whom: str, game_type: str) -> object:
        return ala.get(idGracza=ala.secret, co="zapraszam", whom=whom, gameType=game_type)

    assert await invite("AI easy", "0909s0..a.F.n....") == "err.badGameType"  # not type A
    assert await invite("AI easy", "0909t0..a.A.n....") == "err.badGameType"  # territory rules
    assert await invite("*Bob", "0909s0..a.A.n....") == "err.badGameType"  # A is against the computer
    assert len(hub_of(client).tables) == 1 and not hub_of(client).invitations
    assert await invite("AI hard", "0909s0..a.A.n....") == ""
    assert await invite("AI easy", "0909s0..a.A.n....") == "err.busy"  # one game with the computer at a time
    assert len(hub_of(client).tables) == 2
    registered = await client.get("/auth.py?co=rejestruj&opisGracza=ai%20EASY&idGracza=abcdefghijkl&email=v")
    assert await registered.text() == "ok.tenOpisJestJuzZajety"
    look_alike = await client.get("/auth.py?co=rejestruj&opisGracza=Al%20easy&idGracza=abcdefghijkl&email=v")
    assert await look_alike.text() == "ok.tenOpisJestJuzZajety"  # a small L for the I


async def test_after_a_restart_the_computer_on_move_moves(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    before = await aiohttp_client(create_app(dataclasses.replace(settings, ai_workers=0)))
    # the computer plays blue and is on move when the server stops
    hub_of(before).open_table(parse_game_type("0909s0..p.A.a.120.0.."), "AI easy", "*Ala")
    await before.close()

    after = await aiohttp_client(create_app(dataclasses.replace(settings, ai_workers=1)))
    room = hub_of(after).tables[1].room
    assert "AI easy" in hub_of(after).tables[1].people  # the AI player is seated back
    started = time.monotonic()
    while not room.game.moves:
        assert time.monotonic() - started < 30
        await after.get("/healthz")
    assert room.game.moves[0].player == BLACK


class DeadPool(Executor):
    """A pool whose worker processes died: every search fails."""

    def submit(self, fn, /, *args, **kwargs) -> Future:  # type: ignore[override]
        future: Future = Future()
        future.set_exception(BrokenProcessPool("a worker process died"))
        return future


async def test_when_the_search_fails_the_computer_still_moves(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    hub_of(client).computer.executor = DeadPool()
    ala = Zagram(client, "ala123", "*Ala")
    await ala.login()
    await ala.get(idGracza=ala.secret, co="zapraszam", whom="AI easy", gameType="0909s0..p.A.n....")
    room = hub_of(client).tables[1].room
    await wait_for(ala, lambda: len(room.game.moves) == 1, 10)  # the computer is blue and moves first
    assert "AI search failed; playing a quick move uid=1 " in caplog.text


async def test_a_killed_worker_process_is_started_again(client: TestClient) -> None:
    """A worker killed (out of memory, by hand) broke the pool for good: the search in flight got a
    quick move, and every later search was refused, so the computer never moved again anywhere."""
    # children of earlier tests may still be ending (a full run failed on two): this app's worker is new
    earlier = {child.pid for child in multiprocessing.active_children()}
    ala = Zagram(client, "ala123", "*Ala")
    await ala.login()
    await ala.get(idGracza=ala.secret, co="zapraszam", whom="AI easy", gameType="0909s0..p.A.n....")
    room = hub_of(client).tables[1].room
    await wait_for(ala, lambda: len(room.game.moves) == 1, 60)  # the computer is blue and moves first
    (worker,) = [child for child in multiprocessing.active_children() if child.pid not in earlier]
    os.kill(worker.pid, signal.SIGKILL)
    assert await ala.get(idGracza=ala.secret, co="graczStawiaKropke", table="1", where="aa") == ""
    await wait_for(ala, lambda: len(room.game.moves) == 3, 60)  # a quick move, or a search by a new worker
    assert await ala.get(idGracza=ala.secret, co="graczStawiaKropke", table="1", where="ai") == ""
    await wait_for(ala, lambda: len(room.game.moves) == 5, 60)  # before: never, the pool was broken
    assert worker.pid not in [child.pid for child in multiprocessing.active_children()]


class WrongPool(Executor):
    """A search that answers a point already taken (as a bug in it would)."""

    def __init__(self, point: tuple[int, int]) -> None:
        self.point = point

    def submit(self, fn, /, board, *args, **kwargs) -> Future:  # type: ignore[override]
        future: Future = Future()
        future.set_result((board.index(self.point), 0))
        return future


async def test_a_move_the_engine_refuses_is_replaced_by_a_quick_one(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    hub_of(client).computer.executor = WrongPool((4, 4))
    ala = Zagram(client, "ala123", "*Ala")
    await ala.login()
    await ala.get(idGracza=ala.secret, co="zapraszam", whom="AI easy", gameType="0909s0..a.A.n....")
    assert await ala.get(idGracza=ala.secret, co="graczStawiaKropke", table="1", where="ee") == ""
    room = hub_of(client).tables[1].room
    await wait_for(ala, lambda: len(room.game.moves) == 2, 10)
    assert room.game.moves[1].player == WHITE and room.game.moves[1].point != (4, 4)
    assert "AI move refused; playing a quick move uid=1 " in caplog.text


@pytest.mark.parametrize(
    ("left", "added", "waiting", "most"),
    [
        (None, 0, 0, UNTIMED_SECONDS),
        (600, 30, 0, MOST_SECONDS),
        (60, 2, 0, 3.28),
        (60, 2, 3, 0.82),  # three searches queued for the one worker
        (3, 0, 0, 0.05),
    ],
)
def test_the_budget_is_a_slice_of_the_clock(
    left: float | None, added: float, waiting: int, most: float
) -> None:
    assert move_budget(left, added, waiting, 1) == pytest.approx(most, abs=0.01)


class IdlePool(Executor):
    """A search that never ends: the computer thinks for ever (presence alone is tested)."""

    def submit(self, fn, /, *args, **kwargs) -> Future:  # type: ignore[override]
        return Future()


def computer_game(timers: ManualTimers) -> tuple[Hub, int]:
    """*Ala against the AI, untimed (nothing ends the game by itself), the AI never finding a move."""
    hub = Hub(timers=timers, rng=random.Random(1))
    hub.enable_computer(IdlePool(), 1)
    hub.guest_login("ala123", "*Ala", "en")
    hub.invite("ala123", "AI easy", "0505s0..p.A.n....", None)
    (uid,) = [uid for uid in hub.tables if uid]
    return hub, uid


@pytest.mark.parametrize("leaves", ["logout", "table"])
async def test_a_game_against_the_computer_closes_when_its_player_leaves_it(leaves: str) -> None:
    """issue 47: the AI counts as someone at the table, so a game its player had left stayed on
    everyone's lobby for up to an hour. Leaving it (`q`, `zmienStol`, a logout) closes it."""
    timers = ManualTimers()
    hub, uid = computer_game(timers)
    hub.guest_login("bob456", "*Bob", "en")
    hub.change_table("bob456", uid)  # a spectator, who leaves first: not the player's choice
    hub.change_table("bob456", 0)
    hub.sweep()
    assert uid in hub.tables
    if leaves == "logout":
        hub.logout("ala123")
    else:
        hub.change_table("ala123", 0)
    hub.sweep()
    assert uid not in hub.tables
    assert f"x{uid}." not in "/".join(hub.lobby_state.snapshot(0)), "its lobby lines are gone"


async def test_a_player_who_stops_polling_finds_the_game_against_the_computer_on_return() -> None:
    timers = ManualTimers()
    hub, uid = computer_game(timers)
    timers.advance(hub.ctx.poll_timeout + 1)
    hub.sweep()  # the session timed out: not the player's choice
    assert "ala123" not in hub.players
    timers.advance(IDLE_TABLE_KEPT - hub.ctx.poll_timeout - 60)  # the game idle for 14 minutes
    hub.sweep()
    assert uid in hub.tables, "a player who went away for a while finds the game on their return"
    timers.advance(120)
    hub.sweep()
    assert uid not in hub.tables


async def test_a_finished_game_against_the_computer_closes_a_minute_after_its_player_went_away() -> None:
    timers = ManualTimers()
    hub, uid = computer_game(timers)
    hub.propose("ala123", str(uid), "resign")
    assert hub.tables[uid].room.game.result is not None
    timers.advance(hub.ctx.poll_timeout + 1)
    hub.sweep()  # timed out, the game over
    timers.advance(ABSENT_PLAYERS_KEPT - 1)
    hub.sweep()
    assert uid in hub.tables
    timers.advance(2)
    hub.sweep()
    assert uid not in hub.tables, "not kept for an hour for a player who is gone"
