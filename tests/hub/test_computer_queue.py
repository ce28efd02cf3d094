"""Whose search the AI's workers run next: one network's many games against the computer, or games it
left, must not keep everybody else's moves waiting (docs/ai.md, "Many games at once")."""

from __future__ import annotations

import asyncio
import random
from collections import deque
from concurrent.futures import Executor, Future

from server.engine import ai
from server.engine.board import Board
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.model import Origin

FLOOD = 5  # guests of one network, each playing the computer
COMPUTER_FIRST = "0909s0..p.A.n...."  # 9x9, the computer blue: it thinks as soon as the table opens


class OneWorker(Executor):
    """One worker process, played by the test: searches run one at a time in the order they were
    given, as in a ProcessPoolExecutor of one worker, each when the test says it is done."""

    def __init__(self) -> None:
        self.given: deque[tuple[Future, Board, int]] = deque()
        self.searched = 0

    def submit(self, fn, /, board, player, *args, **kwargs) -> Future:  # type: ignore[override]
        future: Future = Future()
        self.given.append((future, board, player))
        return future

    async def finish_one(self) -> None:
        future, board, player = self.given.popleft()
        future.set_result((ai.quick_move(board, player, 1), 0))
        self.searched += 1
        for _ in range(5):  # the result reaches the loop, the move is played, the next search given
            await asyncio.sleep(0)


async def crowded_hub() -> tuple[Hub, OneWorker, list[int]]:
    """FLOOD guests of 203.0.113.0/24 open games in which the computer moves first."""
    worker = OneWorker()
    hub = Hub(timers=ManualTimers(), rng=random.Random(1))
    hub.enable_computer(worker, 1)
    flood = []
    for n in range(FLOOD):
        origin = Origin(host=f"203.0.113.{n + 1}", network="203.0.113.0/24")
        hub.guest_login(f"flood{n}", f"*Flood{n}", "en", origin)
        hub.invite(f"flood{n}", "AI hard", COMPUTER_FIRST, None)
        flood.append(max(hub.tables))
    await asyncio.sleep(0)
    return hub, worker, flood


async def ala_opens(hub: Hub) -> int:
    hub.guest_login("ala123", "*Ala", "en", Origin(host="198.51.100.7", network="198.51.100.0/24"))
    hub.invite("ala123", "AI easy", COMPUTER_FIRST, None)
    await asyncio.sleep(0)
    return max(hub.tables)


async def test_one_networks_games_do_not_queue_in_front_of_another_players() -> None:
    """Before, searches ran in the order they were asked for: 40 guests of one network, each playing the
    computer on 52x52 and answering at once, made another player wait 3.6 s for each of the computer's
    moves (benchmarks/abuse.py --only ai), and the searches of more networks could outlast a clock."""
    hub, worker, flood = await crowded_hub()
    uid = await ala_opens(hub)
    room = hub.tables[uid].room
    while not room.game.moves:
        await worker.finish_one()
    assert worker.searched == 2, "the network's search already running, then hers"
    assert sum(bool(hub.tables[table].room.game.moves) for table in flood) == 1


async def test_the_search_of_a_game_that_closed_while_it_waited_is_never_run() -> None:
    hub, worker, flood = await crowded_hub()
    for n in range(FLOOD):  # each leaves at once (and could open another)
        hub.change_table(f"flood{n}", 0)
    hub.sweep()
    assert not set(flood) & set(hub.tables)
    uid = await ala_opens(hub)
    room = hub.tables[uid].room
    while worker.given:
        await worker.finish_one()
    assert room.game.moves
    assert worker.searched == 2, "the search that was running when its game closed, and hers"
