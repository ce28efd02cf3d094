"""The server's AI players at the hub: who they are, when they think, and how their moves are made.

The search (server/engine/ai.py) runs in a pool of worker processes, so the event loop never waits for
it. A result is played through the same `Room.move` a person's request reaches, and only if the table
still shows the position it was computed for. docs/ai.md has the levels, names and budgets.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import Any, TypeVar

from server.engine import ai
from server.engine.board import Board
from server.engine.moves import point_to_sgf
from server.hub.context import Context
from server.hub.model import RESERVED
from server.hub.room import Room
from server.hub.tables import Tables
from server.logs import Fields
from server.protocol.codec import ProtocolError, nick_key

UNTIMED_SECONDS = 3.0  # the most a move may take in a game without a clock
MOST_SECONDS = 5.0  # and in any game
SAFETY_SECONDS = 3.0  # never planned into the last seconds of the AI's clock
ANSWERS = {"undo": True, "drop": True, "new": True}  # propositions the AI agrees to; others by score
WORKER_NICE = 10  # searches yield the CPU to the server's own process
ORPHAN_CHECK_SECONDS = 1.0  # how often a worker looks whether its server is still there

log = logging.getLogger(__name__)
Result = TypeVar("Result")


class WorkerPool(Executor):
    """The worker processes, started again when one of them died. A ProcessPoolExecutor whose worker
    was killed (out of memory, by hand) refuses every later search: before, every game against the
    computer then waited for its move until the server restarted."""

    def __init__(self, workers: int, what: str = "AI") -> None:
        self.workers, self.what = workers, what
        self.processes = _processes(workers)

    def submit(self, fn: Callable[..., Result], /, *args: Any, **kwargs: Any) -> Future[Result]:
        try:
            return self.processes.submit(fn, *args, **kwargs)
        except BrokenProcessPool:
            log.warning(
                "%s worker process died; starting the workers again %s",
                self.what,
                Fields(workers=self.workers),
            )
            self.processes.shutdown(wait=False, cancel_futures=True)
            self.processes = _processes(self.workers)
            return self.processes.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.processes.shutdown(wait=wait, cancel_futures=cancel_futures)


def _processes(workers: int) -> ProcessPoolExecutor:
    """Niced worker processes, started with `spawn` (forking a threaded server is unsafe)."""
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=get_context("spawn"),
        initializer=_start_worker,
        initargs=(os.getpid(),),
    )


def _start_worker(server: int) -> None:
    """In each worker: yield the CPU to the server, and end with it. A worker whose server was killed
    (SIGKILL, out of memory) would otherwise wait for work for ever, holding its memory."""
    os.nice(WORKER_NICE)
    threading.Thread(target=_exit_without, args=(server,), name="exit-without-server", daemon=True).start()


def _exit_without(server: int) -> None:
    while os.getppid() == server:
        time.sleep(ORPHAN_CHECK_SECONDS)
    os._exit(0)


def _think(board: Board, player: int, level: int, seconds: float, seed: int) -> tuple[int, int]:
    """What a worker runs (a module-level function, so that it can be sent to another process)."""
    return ai.choose_move(board, player, level, seconds, seed)


def move_budget(seconds_left: float | None, added: float, waiting: int, workers: int) -> float:
    """Seconds one search may take: a slice of the clock (less when searches queue for the workers)."""
    if seconds_left is None:
        budget = UNTIMED_SECONDS
    else:
        budget = max(0.0, seconds_left - SAFETY_SECONDS) / 25 + added / 2
    crowding = 1 + waiting / max(1, workers)
    return max(0.05, min(budget, MOST_SECONDS) / crowding)


Position = tuple[int, int, tuple[int, int] | None]


def _position(room: Room) -> Position:
    """What a search was for: moves played, side on move and the last dot (an undo then another move
    can give the same count)."""
    moves = room.game.moves
    return len(moves), room.game.to_move, moves[-1].point if moves else None


class Computer:
    """The AI players of one hub and their searches, at most one per table.

    It hears of every event at a game table from the bus (`soon`) and plays through the tables' rooms;
    its players log in as sessions (Hub.enable_computer). Searches wait in one queue per network of the
    person playing (`lanes`) and go to the workers in turn from each network, only as many at once as
    there are workers: a network's many games wait behind one another, not in front of everybody else's,
    and a game that closed or moved on while its search waited costs nothing (docs/ai.md)."""

    def __init__(self, ctx: Context, tables: Tables, executor: Executor, workers: int) -> None:
        self.ctx, self.tables, self.executor, self.workers = ctx, tables, executor, workers
        self.thinking: set[int] = set()  # tables whose search waits in a lane or runs
        self.lanes: dict[str, deque[int]] = {}  # network -> its tables waiting, in order
        # network with a search waiting or running -> when its last search started: the network served
        # longest ago goes next
        self.served: dict[str, int] = {}
        self.busy: Counter[str] = Counter()  # network -> its searches running
        self.searches_started = 0
        self.running = 0
        self.closed = False
        self._checks: set[int] = set()
        self.rng = random.Random()

    def close(self) -> None:
        """The server stops: no more searches (its workers are shut down next)."""
        self.closed = True

    def level_of(self, nick: str) -> int | None:
        return RESERVED.get(nick_key(nick))

    def soon(self, uid: int) -> None:
        """Something happened at a table: look once the current request is done, not in the middle."""
        if uid not in self._checks:
            self._checks.add(uid)
            asyncio.get_running_loop().call_soon(self._check, uid)

    def _check(self, uid: int) -> None:
        self._checks.discard(uid)
        table = self.tables.get(uid)
        room = table.room if table is not None else None
        if table is None or room is None:
            return
        if self.ctx.persistence.storage_failure is not None:  # its move or answer could not be stored: it
            return  # waits too, and looks again when storage is back (every running game's `f` line then)
        self._answer_proposal(room)  # also after the end: a new game
        if uid in self.thinking or self._on_move(room) is None:
            return
        person = table.people.get(room.nick_of(3 - room.game.to_move))
        lane = (person.network or person.host) if person is not None else ""
        self.thinking.add(uid)
        self.lanes.setdefault(lane, deque()).append(uid)
        self._start_searches()

    def _on_move(self, room: Room) -> int | None:
        """The level of the AI player on move, if one is and the game goes on."""
        return None if room.game.result is not None else self.level_of(room.nick_of(room.game.to_move))

    def _start_searches(self) -> None:
        """Give the workers the next search of the network served longest ago, while a worker is free."""
        while self.running < self.workers and self.lanes and not self.closed:
            lane = min(self.lanes, key=lambda lane: self.served.get(lane, 0))  # ties: the first to ask
            waiting = self.lanes[lane]
            uid = waiting.popleft()
            if not waiting:
                del self.lanes[lane]
            self._search(uid, lane)
            self._forget_if_idle(lane)

    def _forget_if_idle(self, lane: str) -> None:
        """A network with no search waiting or running is new again: a player's one game goes first."""
        if lane not in self.lanes and not self.busy[lane]:
            self.busy.pop(lane, None)
            self.served.pop(lane, None)

    def _search(self, uid: int, lane: str) -> None:
        table = self.tables.get(uid)
        room = table.room if table is not None else None
        level = self._on_move(room) if room is not None else None
        if room is None or level is None or self.ctx.persistence.storage_failure is not None:
            self.thinking.discard(uid)  # closed, or moved on (an undo), while it waited: nothing to search
            return
        seat = room.game.to_move
        left = room.clock.left(seat) if room.clock is not None else None
        added = room.clock.added if room.clock is not None else 0.0
        seconds = move_budget(left, added, len(self.thinking) - 1, self.workers)
        position = _position(room)
        future = self.executor.submit(
            _think, room.game.board.copy(), seat, level, seconds, self.rng.randrange(2**32)
        )
        self.running += 1
        self.busy[lane] += 1
        self.searches_started += 1
        self.served[lane] = self.searches_started
        asyncio.wrap_future(future).add_done_callback(lambda done: self._searched(uid, lane, position, done))

    def _searched(
        self, uid: int, lane: str, position: Position, done: asyncio.Future[tuple[int, int]]
    ) -> None:
        self.running -= 1
        self.busy[lane] -= 1
        self._forget_if_idle(lane)
        self.thinking.discard(uid)
        try:
            self._play(uid, position, done)
        finally:
            self._start_searches()

    def _play(self, uid: int, position: Position, done: asyncio.Future[tuple[int, int]]) -> None:
        table = self.tables.get(uid)
        room = table.room if table is not None else None
        if room is None or room.game.result is not None:
            return
        if done.cancelled():  # the server is stopping
            return
        if _position(room) != position:
            self.soon(uid)  # the game moved on meanwhile (an undo, a new game): think again
            return
        if self.ctx.persistence.storage_failure is not None:  # storage failed while it thought
            return
        seat = room.game.to_move
        if done.exception() is not None:  # e.g. a worker process died: play on without a search
            log.error(
                "AI search failed; playing a quick move %s", Fields(uid=uid, error=repr(done.exception()))
            )
            index, playouts = ai.quick_move(room.game.board, seat, self.rng.randrange(2**32)), 0
        else:
            index, playouts = done.result()
        nick = room.nick_of(seat)
        try:
            room.move(nick, point_to_sgf(room.game.board.point(index)))
        except ProtocolError as refused:  # a bug in the search: the game must not wait for ever
            log.error("AI move refused; playing a quick move %s", Fields(uid=uid, error=refused))
            index = ai.quick_move(room.game.board, seat, self.rng.randrange(2**32))
            room.move(nick, point_to_sgf(room.game.board.point(index)))
        log.debug("AI move %s", Fields(uid=uid, nick=nick, index=index, playouts=playouts))

    def _answer_proposal(self, room: Room) -> None:
        """Agree to take back, cancel or play again; finish by score only when not behind."""
        if room.proposal is None:
            return
        proposer, what = room.proposal
        other = 3 - proposer
        if self.level_of(room.nick_of(other)) is None or self.level_of(room.nick_of(proposer)) is not None:
            return
        agrees = ANSWERS.get(what, room.game.score(other) >= room.game.score(proposer))
        answer = "new" if what == "new" else f"{'ok' if agrees else 'reject'}{proposer}{what}"
        try:
            room.propose(room.nick_of(other), answer)
        except ProtocolError as refused:
            log.error("AI answer refused %s", Fields(uid=room.uid, answer=answer, error=refused))
