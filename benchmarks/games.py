"""Game load: many two-guest games on the real server, random legal moves, move-to-opponent latency.

The server runs as a subprocess (`python -m server serve` on a free 127.0.0.1 port, a throwaway SQLite
file, `--log-level WARNING` unless told otherwise) and is always stopped at the end. The server start-stop
code and the minimal keep-alive HTTP/1.1 client come from benchmarks/stream.py.

Set-up: 2 x --games guests log in pair by pair; in each pair one invites the other (`v<n>.0.s.NICK.TYPE`)
and the other accepts (`v<n>.0.a`) once its stream shows the invitation (`vg`: in a cluster it comes
from another member), which opens a table. Every player then polls once more to catch up
with the lobby (whose event history the logins overflowed), so that no window reply is a full state.

Play, then the window (--warm-up, then --seconds; only the window is measured): every player keeps one
poll outstanding at all times with the opt-in long poll `wait=1` (--wait), starting at a random moment
of the first wait period (started together, all held polls would expire together, every period). Moves
begin after that first period: the player on move sends a random legal move --move-every seconds after
its previous one, inside its next poll's msgFromClient (numbered, resent above k); blue's first moves are
spread over --move-every seconds and red's first comes half a period after blue's, so a table makes about
one move a second. Each client tracks its board exactly with server.engine.board.Board from the `sa`
lines it reads, so a refused move is an error.

Measured: moves per second; for each move the time from sending the request that carries it to the
moment the opponent's client has read a reply with that move's `sa` line (matched by table and point);
poll latencies; errors (non-200, a body that is not `ok/.../end`, connection errors and time-outs, refused
moves, board disagreements, moves the opponent never saw); games finished; the server's RSS once a second.
Targets: p99 move-to-opponent latency below 100 ms, no errors, server RSS below 300 MB.

    .venv/bin/python benchmarks/games.py --games 500 --seconds 60
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import pstats
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
for _path in (str(HERE.parent), str(HERE)):  # the repository (server.*) and this folder (stream)
    if _path not in sys.path:
        sys.path.insert(0, _path)

from stream import (  # noqa: E402
    Countdown,
    HostSpeed,
    HttpConnection,
    Phase,
    Server,
    add_server_arguments,
    argument_parser,
    connect,
    cpu_in_window,
    generator_loop,
    interpreters,
    ms,
    parse_head,
    percentile,
    run_generator,
    step_workers,
    stop_as_on_ctrl_c,
    watchdog,
    worker_processes,
)

from server.engine.board import BLACK, WHITE, Board, IllegalMove  # noqa: E402
from server.engine.gametype import GameTypeError, StartKind, parse_game_type  # noqa: E402
from server.engine.moves import ALPHABET  # noqa: E402

TARGET_P99_MS = 100.0
TARGET_RSS_MB = 300.0
# seconds of play before the window: a server just grown to --games is still making the full garbage
# collections of its growth (server/gcschedule.py), which a server that grew over hours made long before
WARM_UP = 10.0
SET_UP_POLLS = 250  # polls (20 ms apart) a set-up waits at most for what another cluster member says
EXAMPLES_KEPT = 8  # error examples kept per worker
BIN = 0.01  # seconds: requests are counted per bin to show how bursty the load on the server is
KEEPALIVE_EVERY = 20.0  # seconds between polls of a set-up player waiting for the others (server drops at 60)
COLOUR = {"B": BLACK, "W": WHITE}
SIDE_NAME = {BLACK: "blue", WHITE: "red"}
ERROR_LINE = re.compile(r"ca\d+_\d+\.\.e\.")  # a server line for one player: a refused command
_VALUE = {letter: value for value, letter in enumerate(ALPHABET)}


# --- what a client knows about its game ----------------------------------------------------------------


class Position:
    """The board as one client sees it from `sa`/`sr` lines, and its random order of candidate points."""

    def __init__(self, width: int, height: int, rng: random.Random) -> None:
        self.width, self.height = width, height
        self.board = Board(width, height)
        self.moves = 0
        self.candidates = self.board.board_indices()
        rng.shuffle(self.candidates)

    def to_move(self) -> int:
        return BLACK if self.moves % 2 == 0 else WHITE  # standard rules, empty start: strict alternation

    def apply(self, colour: int, point: str) -> None:
        """Play a move the server announced; raises IllegalMove or ValueError when we disagree."""
        if colour != self.to_move():
            raise ValueError(
                f"{SIDE_NAME[colour]} moved at {point} but {SIDE_NAME[self.to_move()]} was on move"
            )
        index = self.board.index((_VALUE[point[0]], _VALUE[point[1]]))
        self.board.play(index, colour)
        self.moves += 1

    def reset(self) -> None:
        self.board = Board(self.width, self.height)
        self.moves = 0

    def pick(self) -> str | None:
        """A random legal point (amortised O(1): candidates that became unplayable are dropped)."""
        board, candidates = self.board, self.candidates
        while candidates:
            index = candidates[-1]
            if board.playable(index):
                x, y = board.point(index)
                return ALPHABET[x] + ALPHABET[y]
            candidates.pop()
        return None


@dataclass
class Table:
    """One game, shared by its two players (always in the same worker, so that one clock times a move)."""

    index: int
    offset: float  # seconds after the first wait period when blue's first move is due
    uid: int = 0
    # point -> perf_counter() of its first send, and whether that was in the window (measured)
    pending: dict[str, tuple[float, bool]] = field(default_factory=dict)
    finished: bool = False
    players: list[Player] = field(default_factory=list)


@dataclass
class Stats:
    """What one worker measured; plain lists and numbers so that it pickles back to the main process."""

    logins: int = 0
    tables: int = 0
    setup_seconds: float = 0.0
    catchup_latencies: list[float] = field(default_factory=list)
    move_latencies: list[float] = field(default_factory=list)  # seconds, sent in the window
    send_delays: list[float] = field(default_factory=list)  # move due -> request carrying it sent
    move_polls: list[float] = field(default_factory=list)  # polls carrying a move: answered at once
    event_polls: list[float] = field(default_factory=list)  # plain polls ended by a new event
    held_overshoots: list[float] = field(default_factory=list)  # plain polls held to the limit: beyond it
    polls: int = 0  # sent in the window
    sent_bins: list[int] = field(default_factory=list)  # requests sent per BIN seconds of the window
    reply_bytes: int = 0
    moves_sent: int = 0
    moves_echoed: int = 0  # the mover read its own move back
    moves_delivered: int = 0  # the opponent read it
    refused: int = 0
    lost: int = 0  # sent, never read by the opponent by the end of the drain
    full_states: int = 0  # `sr` records read in the window (a reply with a table's full state)
    games_finished: int = 0
    errors: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)
    cpu_window: float = 0.0
    cpu_total: float = 0.0
    wall_total: float = 0.0

    def error(self, kind: str, what: str) -> None:
        self.errors += 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if len(self.examples) < EXAMPLES_KEPT:
            self.examples.append(f"{kind}: {what}")


@dataclass
class Plan:
    """What one worker process drives; times are time.monotonic(), the same clock in every process."""

    port: int
    tables: list[int]  # global table numbers of this worker, from 1
    game_type: str
    seconds: float
    warm_up: float
    move_every: float
    wait: float
    drain: float
    timeout: float
    concurrency: int  # pair set-ups (and catch-up polls) in flight at once in this worker
    deadline: float  # nothing runs past this, whatever happens
    seed: int


class Window:
    """The measured interval, known once the main process gives the go: play begins at the go, and the
    window --warm-up seconds later."""

    def __init__(self) -> None:
        self.start = math.inf
        self.end = math.inf


class Player:
    """One simulated guest: its connection, the stream counters j and k, its numbered commands, its board."""

    def __init__(
        self, number: int, table: Table, plan: Plan, stats: Stats, window: Window, rng: random.Random
    ):
        self.table, self.plan, self.stats, self.window = table, plan, stats, window
        self.secret = f"p{number}"
        self.nick = f"*p{number}"
        self.conn: HttpConnection | None = None  # read by stream.watchdog
        self.seen = 0
        self.acknowledged = 0
        self.commands: list[str] = []
        self.uid = 0
        self.colour = 0
        # nicks the lobby has listed: as a person, the inviter invites someone it has seen arrive (in a
        # cluster, a login on another member reaches this member's lobby a moment later)
        self.people: set[str] = set()
        self.invited_by: set[str] = set()  # nicks of the `vg` lines: invitations waiting for an answer
        game_type = parse_game_type(plan.game_type)
        self.position = Position(game_type.width, game_type.height, rng)
        self.in_flight: str | None = None  # my move sent (or about to be) and not yet read back
        self.in_flight_sent = 0.0  # monotonic time of its first send, 0 before
        self.in_flight_due = 0.0
        self.last_move = -math.inf  # monotonic time my previous move was sent
        self.refused_for = ""  # the kind of the last reply that was not `ok/.../end`

    # --- the wire ------------------------------------------------------------------------------------

    def _drop(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    async def _get(self, target: str) -> tuple[int, bytes]:
        if self.conn is None or self.conn.closed:
            self.conn = await connect(self.plan.port, self.plan.timeout)
        return await self.conn.get(target)

    async def login(self) -> bool:
        target = f"/a.kropki?co=guestLogin&idGracza={self.secret}&opis={quote(self.nick, safe='')}&lang=en"
        try:
            status, body = await self._get(target)
        except (OSError, TimeoutError, ValueError) as failure:
            self._drop()
            self.stats.error("connection", f"login {self.nick}: {failure!r}")
            return False
        if status != 200 or body:
            self.stats.error("refused login", f"{self.nick}: HTTP {status} {body[:120]!r}")
            return False
        self.stats.logins += 1
        return True

    def send(self, kind: str, table: int, text: str) -> int:
        number = len(self.commands) + 1
        self.commands.append(f"{kind}{number}.{table}.{text}")
        return number

    async def poll(self, wait: float = 0.0) -> float | None:
        """One getMsg with every command above k; the latency when a well-formed reply came back."""
        pending = self.commands[self.acknowledged :]
        commands = quote("/".join(pending), safe="") if pending else "x"
        target = f"/a.kropki?co=getMsg&playerId={self.secret}&msgNo={self.seen}&msgFromClient={commands}"
        if wait:
            target += f"&wait={wait:g}"
        moving = self.in_flight is not None and bool(pending)
        self.refused_for = ""
        sent_mono, sent = time.monotonic(), time.perf_counter()
        in_window = self.window.start <= sent_mono < self.window.end
        if moving and not self.in_flight_sent:  # the first request that carries this move
            assert self.in_flight is not None
            self.in_flight_sent = sent_mono
            self.table.pending[self.in_flight] = (sent, in_window)
            if in_window:
                self.stats.moves_sent += 1
                self.stats.send_delays.append(sent_mono - self.in_flight_due)
        if in_window:
            bins = self.stats.sent_bins
            slot = int((sent_mono - self.window.start) / BIN)
            if slot >= len(bins):
                bins.extend([0] * (slot + 1 - len(bins)))
            bins[slot] += 1
        try:
            status, body = await self._get(target)
        except (OSError, TimeoutError, ValueError) as failure:
            self._drop()
            self.stats.error("connection", f"poll {self.nick}: {failure!r}")
            return None
        received = time.perf_counter()
        latency = received - sent
        head = parse_head(body) if status == 200 else None
        if head is None:
            self.refused_for = _reply_kind(status, body)
            self.stats.error(
                f"bad reply {self.refused_for}", f"poll {self.nick}: HTTP {status} {body[:120]!r}"
            )
            return None
        self.seen, processed = head
        self.acknowledged = max(self.acknowledged, processed)
        news = self._read(body.decode(), received, in_window)
        if in_window:
            self.stats.polls += 1
            self.stats.reply_bytes += len(body)
            if pending:
                self.stats.move_polls.append(latency)
            elif news:
                self.stats.event_polls.append(latency)
            else:
                self.stats.held_overshoots.append(latency - wait)
        return latency

    # --- reading replies -----------------------------------------------------------------------------

    def _read(self, text: str, received: float, in_window: bool) -> bool:
        """Apply a reply; True when it held any line besides the `q` section heads. (`j` cannot tell:
        the server may number events from one counter for everyone, so `j` moves without news for us.)"""
        section = -1
        news = False
        for line in text.split("/")[2:-1]:
            first = line[0]
            news = news or first != "q"
            if first == "q":
                section = int(line[1:])
                if section and not self.uid:
                    self.uid = section  # the table our invitation opened: we sit at no other
                continue
            if first == "c" and ERROR_LINE.match(line):
                self._refused(line)
                continue
            if not section and first == "p" and line[1:2] in ("r", "a"):
                self.people.update(line[2:].split("."))
                continue
            if line.startswith("vg"):  # repeated in every reply while it waits, after the last section
                self.invited_by.add(line[2:].split(".", 1)[0])
                continue
            if section != self.uid or not section:
                continue
            if line.startswith("sa;"):
                for node in line[3:].split(";"):
                    self._node(node, received)
            elif first == "x" and line.startswith(f"x{self.uid}."):
                if line.split(".")[2] != "-" and not self.table.finished:
                    self.table.finished = True
                    self.stats.games_finished += 1
            elif first == "d" and line.startswith(f"d{self.uid}."):
                blue, red = line.rsplit(".", 2)[1:]
                self.colour = BLACK if blue == self.nick else WHITE if red == self.nick else 0
            elif line.startswith("sr("):
                self._record(line, received, in_window)
        return news

    def _node(self, node: str, received: float) -> None:
        """One SGF node of an `sa` line: `B[xy]`, `W[xy.ring...]BL[65]`."""
        colour = COLOUR.get(node[:1])
        point = node[2:4]
        if colour is None or node[1:2] != "[" or len(point) != 2:
            self.stats.error("tracking", f"{self.nick}: unexpected node {node[:40]!r}")
            return
        try:
            self.position.apply(colour, point)
        except (IllegalMove, ValueError) as disagree:
            self.stats.error("tracking", f"{self.nick} at table {self.uid}: {disagree}")
            return
        if colour == self.colour:
            if point == self.in_flight:
                self.stats.moves_echoed += self.window.start <= self.in_flight_sent < self.window.end
                self.last_move = self.in_flight_sent
                self.in_flight = None
        else:
            sent = self.table.pending.pop(point, None)
            if sent is not None and sent[1]:
                self.stats.move_latencies.append(received - sent[0])
                self.stats.moves_delivered += 1

    def _record(self, line: str, received: float, in_window: bool) -> None:
        """`sr(;<root>;<node>...)`: the table's whole game, as on entering it; the board is rebuilt."""
        if in_window:
            self.stats.full_states += 1
        nodes = line[3:-1].split(";")[2:]  # '' before the first ';', then the (empty) root
        self.position.reset()
        for node in nodes:
            self._node(node, received)

    def _refused(self, line: str) -> None:
        why = line.split(".", 3)[-1]
        if self.in_flight is not None:
            self.stats.refused += 1
            self.table.pending.pop(self.in_flight, None)
            self.last_move = self.in_flight_sent
            self.in_flight = None
        self.stats.error("refused", f"{self.nick} at table {self.uid}: {why[:120]}")

    # --- playing -------------------------------------------------------------------------------------

    def _maybe_move(self, now: float) -> None:
        if self.in_flight is not None or self.table.finished or self.position.to_move() != self.colour:
            return
        due = self.last_move + self.plan.move_every
        if now < due or now >= self.window.end:
            return
        point = self.position.pick()
        if point is None:
            return  # the board is full: the server ends the game
        self.send("s", self.uid, point)
        self.in_flight, self.in_flight_sent, self.in_flight_due = point, 0.0, due

    async def play(self, begin: float) -> None:
        """Long-poll back to back from `begin` until the window ends and the table's moves have all been
        read. Players begin at random moments of the first wait period: begun together, their held polls
        would all expire together, a burst every second that real clients do not make."""
        await _sleep_until(begin)
        stop_by = min(self.window.end + self.plan.drain, self.plan.deadline)
        while True:
            now = time.monotonic()
            if now >= stop_by:
                return
            if now >= self.window.end and not self.table.pending and self.in_flight is None:
                return
            self._maybe_move(now)
            if await self.poll(self.plan.wait) is not None:
                continue
            if self.refused_for == "sd":  # the server ended this session (it went unpolled too long)
                self.stats.error("session ended", f"{self.nick}: the server says logged out; stops polling")
                return
            # Refused (err.tooFast) or failed: wait as a client would. Polling again every 0.1 s made one
            # refused player ask 10 times a second, each refusal counted and each costing the server.
            await asyncio.sleep(1.0 if self.refused_for.startswith("err.") else 0.1)


def _reply_kind(status: int, body: bytes) -> str:
    """What a reply that is not `ok/.../end` was, for the error counts: `err.tooFast`, `HTTP 500`, ..."""
    if status != 200:
        return f"HTTP {status}"
    return body.split(b"/", 1)[0][:40].decode(errors="replace") or "(empty)"


# --- one worker process ----------------------------------------------------------------------------------


async def _wait_until(future: asyncio.Future[Any], deadline: float) -> bool:
    try:
        await asyncio.wait_for(asyncio.shield(future), max(0.0, deadline - time.monotonic()))
        return True
    except TimeoutError:
        return False


async def _sleep_until(when: float) -> None:
    delay = when - time.monotonic()
    if delay > 0:
        await asyncio.sleep(delay)


async def _acknowledged(player: Player, number: int, tries: int = 50) -> bool:
    """Poll until k reaches command `number`. A reply holds k back until the command's writes are stored
    (issue 18.1), so the poll that carries it may still show the k before it."""
    for _ in range(tries):
        if await player.poll() is None:
            return False
        if player.acknowledged >= number:
            return True
        await asyncio.sleep(0.02)
    return False


async def _poll_until(player: Player, seen: Callable[[], bool]) -> None:
    """Poll (20 ms apart, SET_UP_POLLS at most) until `seen()`: in a cluster what another member says
    comes a moment later."""
    for _ in range(SET_UP_POLLS):
        if seen() or await player.poll() is None:
            return
        await asyncio.sleep(0.02)


async def set_up(table: Table, plan: Plan, stats: Stats) -> bool:
    """Log both in, invite, accept; True when both players sit at the new table and know their colour."""
    inviter, invitee = table.players
    if not (await inviter.login() and await invitee.login()):
        return False
    await _poll_until(inviter, lambda: invitee.nick in inviter.people)  # its lobby lists the invitee
    number = inviter.send("v", 0, f"s.{invitee.nick}.{plan.game_type}")
    if not await _acknowledged(inviter, number):
        stats.error("set-up", f"{inviter.nick}: invitation not processed")
        return False
    await _poll_until(invitee, lambda: inviter.nick in invitee.invited_by)  # the invitation has reached it
    number = invitee.send("v", 0, "a")
    if not await _acknowledged(invitee, number):
        stats.error("set-up", f"{invitee.nick}: acceptance not processed")
        return False
    await _poll_until(inviter, lambda: bool(inviter.uid))  # the table opens on the invitee's member
    if not (
        invitee.uid and invitee.uid == inviter.uid and {inviter.colour, invitee.colour} == {BLACK, WHITE}
    ):
        stats.error("set-up", f"{inviter.nick}/{invitee.nick}: no table (uids {inviter.uid}/{invitee.uid})")
        return False
    table.uid = inviter.uid
    stats.tables += 1
    return True


async def drive(plan: Plan, pipe: Connection) -> Stats:
    """Run this worker's tables through set-up, catch-up and the window, in step with the main process."""
    loop = asyncio.get_running_loop()
    started_wall, started_cpu = time.monotonic(), time.process_time()
    orders: dict[str, asyncio.Future[float]] = {"catchup": loop.create_future(), "go": loop.create_future()}

    def on_message() -> None:
        try:
            kind, value = pipe.recv()
        except EOFError:  # the main process is gone: nobody will read the results
            os._exit(2)
        if kind in orders and not orders[kind].done():
            orders[kind].set_result(value)

    stats, window = Stats(), Window()
    rng = random.Random(plan.seed)
    tables = [Table(index, rng.uniform(0, plan.move_every)) for index in plan.tables]
    phases = {index: (rng.uniform(0, plan.wait), rng.uniform(0, plan.wait)) for index in plan.tables}
    players: list[Player] = []
    for table in tables:
        table.players = [
            Player(2 * table.index - 1, table, plan, stats, window, rng),
            Player(2 * table.index, table, plan, stats, window, rng),
        ]
        players += table.players
    gate = asyncio.Semaphore(plan.concurrency)
    set_up_done, caught_up = Countdown(len(tables)), Countdown(len(tables))

    async def life(table: Table) -> None:
        try:
            async with gate:
                ok = await set_up(table, plan, stats)
            set_up_done.arrive(table.index)
            if not ok:
                return
            while not orders["catchup"].done() and time.monotonic() < plan.deadline:
                soon = min(plan.deadline, time.monotonic() + KEEPALIVE_EVERY)
                if not await _wait_until(orders["catchup"], soon):
                    for player in table.players:
                        await player.poll()
            if not orders["catchup"].done():
                return
            async with gate:
                for player in table.players:
                    latency = await player.poll()
                    if latency is not None:
                        stats.catchup_latencies.append(latency)
            caught_up.arrive(table.index)
            if not await _wait_until(orders["go"], plan.deadline):
                return
            blue, red = sorted(table.players, key=lambda p: p.colour)
            go = orders["go"].result()
            first = go + plan.wait + table.offset  # once both players surely have a poll waiting
            blue.last_move = first - plan.move_every
            red.last_move = first - plan.move_every / 2
            blue_phase, red_phase = phases[table.index]
            await asyncio.gather(blue.play(go + blue_phase), red.play(go + red_phase))
        finally:
            set_up_done.arrive(table.index)
            caught_up.arrive(table.index)
            for player in table.players:
                player._drop()
            if table.pending:
                stats.lost += len(table.pending)
                stats.error(
                    "lost", f"table {table.uid}: {len(table.pending)} move(s) never read by the opponent"
                )

    loop.add_reader(pipe.fileno(), on_message)
    tasks = [asyncio.create_task(life(table)) for table in tables]
    guard = asyncio.create_task(watchdog(players, plan.timeout))  # type: ignore[arg-type]
    try:
        if await _wait_until(set_up_done.done, plan.deadline):
            stats.setup_seconds = time.monotonic() - started_wall
            pipe.send(("ready", stats.tables))
        if await _wait_until(orders["catchup"], plan.deadline) and await _wait_until(
            caught_up.done, plan.deadline
        ):
            pipe.send(("caught_up", None))
        if await _wait_until(orders["go"], plan.deadline):
            window.start = orders["go"].result() + plan.warm_up
            window.end = window.start + plan.seconds
            await _sleep_until(window.start)
            cpu_start = time.process_time()
            await _sleep_until(window.end)
            stats.cpu_window = time.process_time() - cpu_start
        else:  # the main process gave up: stop everyone
            for future in orders.values():
                if not future.done():
                    future.cancel()
        await asyncio.wait(tasks, timeout=max(0.0, plan.deadline - time.monotonic()))
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        guard.cancel()
        loop.remove_reader(pipe.fileno())
        os.set_blocking(pipe.fileno(), True)  # uvloop's add_reader made it non-blocking; the result is large
    stats.cpu_total = time.process_time() - started_cpu
    stats.wall_total = time.monotonic() - started_wall
    return stats


def worker_main(plan: Plan, pipe: Connection) -> None:
    """Entry point of a generator process; Ctrl-C is the main process's business."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        pipe.send(("result", run_generator(drive(plan, pipe))))
    except BaseException:
        pipe.send(("failed", traceback.format_exc()))


# --- the main process: workers, sampling, report -------------------------------------------------------


@dataclass
class Run:
    """What the main process saw of one run."""

    stats: list[Stats]
    times: dict[str, float]  # monotonic: ready, caught_up, start, end, finished
    rss: dict[str, float]  # MB at start, setup, end, and the peak of the once-a-second samples
    server_cpu_window: float
    machine_cpu_window: float  # busy CPU seconds of the whole machine, all cores
    speed: HostSpeed


class Spy:
    """py-spy on the server during the window only, so that set-up work does not hide the steady state."""

    def __init__(self, exe: str, out: Path, seconds: float) -> None:
        self.exe, self.out, self.seconds = exe, out, seconds
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, pid: int) -> None:
        command = [self.exe, "record", "--pid", str(pid), "--duration", str(max(1, round(self.seconds)))]
        command += ["--rate", "100", "--nonblocking", "--function", "--format", "raw", "-o", str(self.out)]
        self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)

    def stop(self, timeout: float) -> None:
        """Let it finish writing (it stops by itself after its duration); kill it if it hangs."""
        if self.proc is None:
            return
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def summary(self, top: int) -> None:
        """Own and inclusive samples per function from py-spy's raw (collapsed stack) output."""
        own: dict[str, int] = {}
        inclusive: dict[str, int] = {}
        samples = 0
        try:
            text = self.out.read_text()
        except OSError as missing:
            print(f"no py-spy output: {missing}")
            return
        for line in text.splitlines():
            stack, _, count_text = line.rpartition(" ")
            if not stack or not count_text.isdigit():
                continue
            count = int(count_text)
            frames = [_short(frame) for frame in stack.split(";")]
            samples += count
            own[frames[-1]] = own.get(frames[-1], 0) + count
            for frame in set(frames):
                inclusive[frame] = inclusive.get(frame, 0) + count
        print(f"\npy-spy: {samples} samples of the server's busy time in the window (100/s, idle excluded)")
        for title, table in (("own", own), ("inclusive", inclusive)):
            print(f"top {top} functions by {title} samples:")
            for frame, count in sorted(table.items(), key=lambda item: -item[1])[:top]:
                print(f"  {count:7d} {count / max(1, samples):6.1%}  {frame}")


def _short(frame: str) -> str:
    for prefix in (f"{HERE.parent}/", "site-packages/"):
        at = frame.find(prefix)
        if at >= 0:
            frame = frame[:at] + frame[at + len(prefix) :]
    return frame


def run_workers(
    plans: list[Plan],
    server: Server,
    args: argparse.Namespace,
    spy: Spy | None,
    at_start: Callable[[], None] | None = None,
) -> Run:
    """Start one process per plan, step them through the phases, sample the server once a second;
    at_start runs at the window's start, after the warm-up (benchmarks/scale.py reads /metrics there)."""
    rss = {"start": server.rss_mb()}
    samples = [rss["start"]]
    speed = HostSpeed()

    def on_phase(kind: str, times: dict[str, float]) -> Phase:
        if kind == "ready":
            deadline = times[kind] + 60.0 + 0.05 * args.games
            return Phase(("catchup", 0.0), deadline, "get every player's catch-up reply")
        rss["setup"] = server.rss_mb()
        samples.append(rss["setup"])
        go = time.monotonic() + 0.5
        times["start"] = go + args.warm_up
        times["end"] = times["start"] + args.seconds
        deadline, goal = times["end"] + args.drain + 30.0, "finish within 30 s of the drain's end"
        return Phase(("go", go), deadline, goal, sample_from=go)

    def window_begins() -> None:
        if spy is not None:
            spy.start(server.pid)
        if at_start is not None:
            at_start()

    try:
        with worker_processes(worker_main, plans) as pipes:
            deadline, goal = time.monotonic() + 60.0 + 0.2 * args.games, "set every table up"
            phases = ("ready", "caught_up")
            results, times, cpu_at = step_workers(
                pipes, server, samples, phases, deadline, goal, on_phase, speed, window_begins
            )
            times["finished"] = time.monotonic()
            rss["end"] = server.rss_mb()
            samples.append(rss["end"])
            rss["peak"] = max(samples)
            return Run(results, times, rss, *cpu_in_window(cpu_at, server), speed)
    finally:
        if spy is not None:
            spy.stop(args.seconds + 30.0)


def make_plans(args: argparse.Namespace, port: int) -> list[Plan]:
    """Tables dealt round-robin to the workers; both players of a table stay in one worker."""
    workers = max(1, min(args.workers, args.games))
    deadline = time.monotonic() + 180.0 + 0.3 * args.games + args.warm_up + args.seconds + args.drain
    return [
        Plan(
            port,
            list(range(1 + number, args.games + 1, workers)),
            args.game_type,
            args.seconds,
            args.warm_up,
            args.move_every,
            args.wait,
            args.drain,
            args.timeout,
            max(1, args.setup_concurrency // workers),
            deadline,
            args.seed + number,
        )
        for number in range(workers)
    ]


def total(run: Run, name: str) -> Any:
    return sum(getattr(s, name) for s in run.stats)


def merged(run: Run, name: str) -> list[float]:
    return sorted(x for s in run.stats for x in getattr(s, name))


def report(run: Run, server: Server, args: argparse.Namespace, target_rss_mb: float = TARGET_RSS_MB) -> bool:
    seconds = args.seconds
    ready = run.times.get("ready", math.nan)
    print(
        f"set-up: {total(run, 'logins')} of {2 * args.games} guests logged in, {total(run, 'tables')} of "
        f"{args.games} tables opened in {max(s.setup_seconds for s in run.stats):.1f} s; catch-up polls "
        f"{run.times.get('caught_up', math.nan) - ready:.1f} s, "
        f"ms {ms(merged(run, 'catchup_latencies'), 50, 99)}"
    )
    sent, delivered = total(run, "moves_sent"), total(run, "moves_delivered")
    print(f"window: {seconds:g} s of play, then up to {args.drain:g} s for the last moves to arrive")
    playing = seconds - max(0.0, args.wait - args.warm_up)  # moves begin one wait period after the go
    print(
        f"moves: {sent} sent in the last {playing:g} s = {sent / playing:.1f} moves/s "
        f"(about {args.games * 2 / args.move_every:.0f}/s planned); {total(run, 'moves_echoed')} read back "
        f"by the mover, {delivered} read by the opponent, "
        f"{total(run, 'refused')} refused, {total(run, 'lost')} lost"
    )
    latencies = merged(run, "move_latencies")
    print(f"move -> opponent latency ms: {ms(latencies, 50, 90, 99)}")
    print(
        f"move send delay (due -> request sent; the move waits for the outstanding long poll) ms: "
        f"{ms(merged(run, 'send_delays'), 50, 90, 99)}"
    )
    polls = total(run, "polls")
    print(
        f"polls in the window: {polls} = {polls / seconds:.0f}/s, mean reply "
        f"{total(run, 'reply_bytes') / max(1, polls):.0f} bytes, "
        f"{total(run, 'full_states')} full table states"
    )
    bins = [0] * math.ceil(seconds / BIN)
    for s in run.stats:
        for slot, count in enumerate(s.sent_bins[: len(bins)]):
            bins[slot] += count
    bins.sort()
    print(
        f"  requests sent per {BIN * 1000:g} ms (burstiness): mean {sum(bins) / max(1, len(bins)):.1f}, "
        f"p50 {percentile(bins, 50):.0f}, p99 {percentile(bins, 99):.0f}, max {bins[-1] if bins else 0}"
    )
    move_polls, event_polls, held = (merged(run, n) for n in ("move_polls", "event_polls", "held_overshoots"))
    print(f"  polls carrying a move (answered at once): {len(move_polls)}, ms {ms(move_polls, 50, 90, 99)}")
    print(
        f"  plain polls ended by an event (incl. the wait for it): {len(event_polls)}, "
        f"ms {ms(event_polls, 50, 90, 99)}"
    )
    print(
        f"  plain polls held to wait={args.wait:g} s with nothing new: {len(held)}, ms beyond the wait "
        f"{ms(held, 50, 90, 99)}"
    )
    print(f"games finished: {total(run, 'games_finished')} of {total(run, 'tables')}")
    errors = total(run, "errors")
    kinds: dict[str, int] = {}
    for s in run.stats:
        for kind, count in s.kinds.items():
            kinds[kind] = kinds.get(kind, 0) + count
    print(
        f"errors: {errors}"
        + (f" ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))})" if kinds else "")
    )
    for example in [e for s in run.stats for e in s.examples][:EXAMPLES_KEPT]:
        print(f"    {example}")
    rss = run.rss
    print(
        f"server RSS MB: start {rss['start']:.1f}, after set-up {rss.get('setup', math.nan):.1f}, "
        f"peak {rss['peak']:.1f}, end {rss['end']:.1f}"
    )
    server_cpu = run.server_cpu_window
    print(f"server CPU in the window: {server_cpu:.1f} s = {server_cpu / seconds:.0%} of one core")
    cpu_window, cpu_all = total(run, "cpu_window"), total(run, "cpu_total")
    wall = max(s.wall_total for s in run.stats)
    print(
        f"load generator CPU ({len(run.stats)} process{'es' if len(run.stats) > 1 else ''}): "
        f"{cpu_window:.1f} s in the window = {cpu_window / seconds:.0%} of one core; "
        f"{cpu_all:.1f} s over {wall:.1f} s wall in all"
    )
    others = run.machine_cpu_window - server_cpu - cpu_window
    print(
        f"rest of the machine in the window: {others:.1f} CPU s = {others / seconds:.0%} of one core "
        "(kernel work not charged to a process, this script's main process, other programs)"
    )
    if others / seconds > 0.25:
        print("NOTE: other work kept the CPUs busy during the window; these figures may be pessimistic")
    print(run.speed.summary(run.times["start"], run.times["end"]))
    print(f"server log: {server.log_summary()}")
    p99 = percentile(latencies, 99) * 1000
    ok = bool(latencies) and p99 < TARGET_P99_MS and errors == 0 and rss["peak"] < target_rss_mb
    print(
        f"{'PASS' if ok else 'FAIL'}: p99 move -> opponent {p99:.1f} ms (target < {TARGET_P99_MS:g} ms), "
        f"{errors} errors (target 0), peak server RSS {rss['peak']:.1f} MB (target < {target_rss_mb:g} MB)"
    )
    return ok


def server_version() -> str:
    """The commit the server code comes from, and whether server/ differs from it (read-only git calls)."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}  # never write the index, even opportunistically
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=HERE.parent, env=env, capture_output=True, timeout=10
        )
        dirty = subprocess.run(
            ["git", "diff", "--quiet", "HEAD", "--", "server"], cwd=HERE.parent, env=env, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown (no git)"
    if head.returncode != 0:
        return "unknown (not a git checkout)"
    return head.stdout.decode().strip() + (" with local changes in server/" if dirty.returncode else "")


def main() -> int:
    parser = argument_parser(__doc__)
    add = parser.add_argument
    add("--games", type=int, default=500, help="tables, two guests each")
    add("--seconds", type=float, default=60.0, help="length of the measured window of play")
    add(
        "--warm-up",
        type=float,
        default=WARM_UP,
        help="seconds of play before the measured window, for the collections of the server's growth",
    )
    add(
        "--game-type",
        default="2020stanF0.0.0",
        help="invitation game type: standard rules, empty start (2020stanF0.0.0 is 20x20 free, no clock)",
    )
    add("--move-every", type=float, default=2.0, help="seconds between a player's moves")
    add("--wait", type=float, default=1.0, help="long poll limit sent as wait=")
    add("--drain", type=float, default=5.0, help="seconds after the window for the last moves to arrive")
    add("--setup-concurrency", type=int, default=8, help="pair set-ups in flight at once")
    add("--workers", type=int, default=1, help="load generator processes")
    add("--profile", metavar="FILE", help="run the server under cProfile and write its stats to FILE")
    add("--profile-top", type=int, default=30, help="profile rows printed")
    add("--py-spy", metavar="FILE", help="py-spy the server during the window; raw stacks to FILE")
    add("--py-spy-exe", default=shutil.which("py-spy") or "py-spy", help="the py-spy program")
    add_server_arguments(parser)
    args = parser.parse_args()
    if min(args.games, args.seconds, args.move_every, args.setup_concurrency, args.workers) <= 0:
        parser.error("--games, --seconds, --move-every, --setup-concurrency and --workers must be positive")
    if not 0 < args.wait <= 30 or args.wait >= args.seconds or args.timeout <= args.wait:
        parser.error("--wait must be in (0, 30] and below --seconds, and --timeout > --wait")
    if min(args.drain, args.warm_up) < 0:
        parser.error("--drain and --warm-up must be >= 0")
    try:
        game_type = parse_game_type(args.game_type)
    except GameTypeError as bad:
        parser.error(f"--game-type: {bad}")
    if not game_type.automatic_enclosures or game_type.start.kind is not StartKind.EMPTY:
        parser.error("--game-type: the clients track standard rules from an empty board only")
    if args.py_spy and shutil.which(args.py_spy_exe) is None:
        parser.error(f"--py-spy-exe: {args.py_spy_exe} is not an executable program")

    stop_as_on_ctrl_c()
    print(
        f"games benchmark: {os.cpu_count()} CPUs; {args.games} games of {args.game_type} "
        f"({game_type.width}x{game_type.height}, standard rules, "
        f"{'timed' if game_type.timed else 'no clock'}); "
        f"server interpreter {args.python}; load generator {sys.executable} on {generator_loop()} "
        f"in {args.workers} process(es)"
    )
    print(f"server code: commit {server_version()}")
    print(interpreters(args.python))
    profile = Path(args.profile).resolve() if args.profile else None
    spy = Spy(args.py_spy_exe, Path(args.py_spy).resolve(), args.seconds) if args.py_spy else None
    try:
        with tempfile.TemporaryDirectory(prefix="kropki-games-") as workdir:
            server = Server(args.python, args.log_level, Path(workdir), profile)
            try:
                server.start()
                print(
                    f"server: pid {server.pid}, port {server.port}, log level {args.log_level}"
                    + (f", under cProfile -> {profile}" if profile else "")
                )
                run = run_workers(make_plans(args, server.port), server, args, spy)
            finally:
                server.stop()
            ok = report(run, server, args)
    except KeyboardInterrupt:
        print("\ninterrupted; the server was stopped")
        return 130
    except (RuntimeError, OSError) as failure:
        print(f"benchmark failed, the server was stopped: {failure}")
        return 2
    if profile is not None and profile.exists():
        print(f"\nserver profile written to {profile}; top {args.profile_top} by own time:")
        stats = pstats.Stats(str(profile), stream=sys.stdout)
        stats.sort_stats("tottime").print_stats(args.profile_top)
        print(f"top {args.profile_top} by cumulative time:")
        stats.sort_stats("cumulative").print_stats(args.profile_top)
    if spy is not None:
        spy.summary(args.profile_top)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
