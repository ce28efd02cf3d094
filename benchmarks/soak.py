"""Soak: the real server for a long run under a mixed crowd of well-behaved clients and one flood client.

The server runs as a subprocess (`python -m server serve --migrate` on a free 127.0.0.1 port, a throwaway
SQLite file, `--unlimited 127.0.0.1`, `--log-level WARNING` unless told otherwise; all from
benchmarks/stream.py) and is always stopped at the end.

Well-behaved clients (--clients, from 127.0.0.1, which the server exempts from its request-rate limits
because they all share it) log in a few at a time and poll once a second (plain getMsg, commands in
msgFromClient, numbered and resent above k as MultiPoints does), each with its own keep-alive connection.
When every one of them is in, the measured run of --seconds begins and each plays a role:

- players (--players of them, in pairs): one invites the other, the other accepts, they play random legal
  moves after a think time (--think), tracking the board exactly with the engine (benchmarks/games.py's
  Position); after a number of moves drawn from --game-moves the player on move resigns, both leave the
  table (`q`) and the inviter invites again; now and then a line of table chat;
- watchers (--watchers): join a random table whose game is being played (from the lobby's `gr`/`ga`/`gd`
  and `x` lines) as spectators (`b`), stay --watch seconds, leave (`q`), chat in the lobby now and then;
- churners (--churners): stay online --online seconds, log out (`usunGracza`), come back after
  --offline seconds with a fresh session (`msgNo=0`), chat now and then;
- chatters (the rest): a line every --chat-every seconds, in the lobby or (one in five) a private line to
  another chatter; they ignore invitations (the flood client's).

A well-behaved client's error is: a failed connection, a time-out (--timeout), an HTTP status other than
200, `err.internal` or any other `err.` answer, `sd` (session lost), a malformed reply, a refused command
(a stream error line `..e.`; a watcher's `b`/`q` racing a table that closed is counted apart, not as an
error), a board the client cannot follow, or a game or invitation that makes no progress for 30 seconds.

The flood client (one id, from --flood-address, 127.0.0.2 by default so that the server's per-address
limits apply to it) polls with no pause on --flood-connections connections, queues --flood-chat-rate lobby
lines a second (every other one the same text) and --flood-invite-rate invitations a minute to chatters.
Its requests are counted as answered (`ok/...`) or refused (any `err.` body or HTTP 429); its commands as
processed (k) and accepted (its own chat lines read back; invitations the server did not answer with an
error line).

Printed every --report-every seconds: well-behaved requests, errors, p50/p99/max latency, moves, games,
chat, churn, the server's RSS and CPU, the load generators' CPU and the rest of the machine, and the
flood's requests and the fraction answered. At the end, totals and the targets:
- no errors for well-behaved clients (the login phase included);
- the flood limited: at most --flood-max-rate answered requests a second, --flood-max-chat accepted chat
  lines and --flood-max-invites accepted invitations a minute on average over the run, after a burst of
  2 s' (requests) or a minute's worth (the limits in docs/operations.md are 20, 20 and 10);
- memory flat: server RSS over the last 10 s at most --rss-growth % above its level at the end of the
  warm-up (the first 10 % of the run or 60 s, whichever is longer).
Exit status 0 when every target is met, 1 when one is not, 2 when the benchmark itself failed.

    .venv/bin/python benchmarks/soak.py                  # 10 minutes, 1,000 clients and the flood
    .venv/bin/python benchmarks/soak.py --seconds 120
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import multiprocessing
import os
import random
import re
import signal
import socket
import statistics
import sys
import tempfile
import time
import traceback
import urllib.request
from dataclasses import dataclass, field, fields
from multiprocessing.connection import Connection
from pathlib import Path
from queue import Empty
from typing import Any
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
for _path in (str(HERE.parent), str(HERE)):  # the repository (server.*) and this folder (stream, games)
    if _path not in sys.path:
        sys.path.insert(0, _path)

from games import COLOUR, ERROR_LINE, Position  # noqa: E402
from stream import (  # noqa: E402
    HOST,
    Countdown,
    HttpConnection,
    Phase,
    Server,
    _sleep_until,
    _wait_until,
    add_server_arguments,
    argument_parser,
    connect,
    cpu_in_window,
    encode_chat,
    machine_cpu_seconds,
    ms,
    parse_head,
    percentile,
    server_revision,
    step_workers,
    stop_as_on_ctrl_c,
    watchdog,
    worker_processes,
)

from server.engine.board import BLACK, WHITE, IllegalMove  # noqa: E402
from server.engine.gametype import parse_game_type  # noqa: E402

GAME_TYPE = "2020stanF0.0.0"  # 20x20, standard rules, colours at random, no clock (as benchmarks/games.py)
STALL = 30.0  # seconds without progress in a game or an invitation: an error
EXAMPLES_KEPT = 5  # error examples kept per worker and window
FLOOD_ID, FLOOD_NICK = "flood", "*flood"
FLOOD_BACKLOG = 40  # unprocessed commands the flood client keeps at most (a poll carries at most 50)
FLOOD_SAME_LINE = "FLOOD FLOOD FLOOD buy gold"
FLOOD_LATENCY_EVERY = 20  # one flood latency in this many is kept
PRIVATE_SHARE = 0.2  # chatters' lines that are private
RACES = re.compile(
    r"(There is no table|You are not at table) \d+\."
)  # a watcher's b/q meeting a closed table
ROLES = ("player", "watcher", "churner", "chatter")


# --- what a worker measures, window by window ------------------------------------------------------------


@dataclass
class Tally:
    """One window of one worker; numbers add up, lists concatenate and dicts add up across workers."""

    requests: int = 0  # well-behaved requests answered or failed in the window
    latencies: list[float] = field(default_factory=list)  # seconds, every well-behaved answer
    errors: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)
    races: int = 0  # a watcher's b/q refused because the table had closed: expected, not an error
    logins: int = 0
    logouts: int = 0
    moves: int = 0  # moves read back by their mover
    games_started: int = 0
    games_finished: int = 0
    chat_lines: int = 0  # lobby and table lines queued
    private_lines: int = 0
    joins: int = 0  # spectators' `b`
    missed_slots: int = 0  # once-a-second polls skipped because the previous reply was still out
    reply_bytes: int = 0
    cpu: float = 0.0  # the worker's process_time() in the window
    flood_requests: int = 0  # answered with a status (ok, refusal or anything else)
    flood_answered: int = 0  # `ok/.../end`
    flood_refused: dict[str, int] = field(default_factory=dict)  # `err.<code>` or `HTTP 429`
    flood_other: dict[str, int] = field(default_factory=dict)  # other answers, connection errors
    flood_latencies: list[float] = field(default_factory=list)  # a sample
    chat_queued: int = 0
    chat_processed: int = 0  # covered by k
    chat_accepted: int = 0  # read back in the lobby
    chat_skipped: int = 0  # not queued: the backlog was full
    invites_queued: int = 0
    invites_processed: int = 0
    e_lines: int = 0  # the flood's error lines (refused chat lines and invitations)
    sentences: dict[str, int] = field(default_factory=dict)

    def error(self, kind: str, what: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1
        if len(self.examples) < EXAMPLES_KEPT:
            self.examples.append(f"{kind}: {what}")

    def add(self, other: Tally) -> None:
        for each in fields(self):
            mine, theirs = getattr(self, each.name), getattr(other, each.name)
            if isinstance(mine, list):
                mine.extend(theirs)
            elif isinstance(mine, dict):
                for key, count in theirs.items():
                    mine[key] = mine.get(key, 0) + count
            else:
                setattr(self, each.name, mine + theirs)


def bump(counts: dict[str, int], key: str) -> None:
    counts[key] = counts.get(key, 0) + 1


class Recorder:
    """The tally being filled; rotated at each window boundary (one event loop: no locking)."""

    def __init__(self) -> None:
        self.now = Tally()
        self._cpu = time.process_time()

    def rotate(self) -> Tally:
        done, self.now = self.now, Tally()
        cpu = time.process_time()
        done.cpu, self._cpu = cpu - self._cpu, cpu
        return done


@dataclass
class Plan:
    """What one worker process drives; times are time.monotonic(), the same clock in every process."""

    kind: str  # "clients" or "flood"
    number: int
    port: int
    members: list[tuple[int, str, int]]  # (client number from 1, role, partner's number or 0)
    chatters: list[str]  # nicks of the chatters: private lines go to them, the flood invites them
    args: argparse.Namespace
    deadline: float  # nothing runs past this, whatever happens
    seed: int
    reports: Any  # a multiprocessing queue: (worker number, window number, Tally)


@dataclass
class Summary:
    cpu_total: float
    wall_total: float


@dataclass
class Shared:
    plan: Plan
    recorder: Recorder
    rng: random.Random
    gate: asyncio.Semaphore
    ready: Countdown  # every client logged in and answered once (or gave up)
    go: asyncio.Future[float]
    end: float = math.inf  # known at go


def uniform(rng: random.Random, bounds: list[float]) -> float:
    return rng.uniform(bounds[0], bounds[1])


# --- a well-behaved client -----------------------------------------------------------------------------


class Agent:
    """One simulated person with a role; one connection, one request at a time, a poll a second."""

    def __init__(self, index: int, role: str, partner: int, shared: Shared, size: tuple[int, int]) -> None:
        self.index, self.role, self.shared = index, role, shared
        self.plan, self.args, self.rng = shared.plan, shared.plan.args, shared.rng
        self.secret, self.nick = f"s{index}", f"*s{index}"
        self.partner = f"*s{partner}" if partner else ""
        self.inviter = role == "player" and index < partner
        self.size = size
        self.conn: HttpConnection | None = None  # read by stream.watchdog
        self.seen = self.acknowledged = 0
        self.commands: list[str] = []
        self.said = 0
        self.chat_at = self.watch_at = self.leave_at = self.offline_at = math.inf
        self.watching = 0
        self.tables: set[int] = set()  # game tables the lobby announced
        self.live: set[int] = set()  # those of them whose game is being played (the lobby's `x` lines)
        self.uid = 0  # a player's current table
        self.old: set[int] = set()  # tables a player left
        self.position: Position | None = None
        self.colour = 0
        self.target = 0  # moves after which the player on move resigns
        self.in_flight: str | None = None
        self.move_at: float | None = None
        self.resigned = self.stalled = self.invited = False
        self.progress = 0.0
        self.invite_at = self.accept_at = 0.0  # when an invitation / acceptance went out (0: none)
        self.next_invite = math.inf

    @property
    def tally(self) -> Tally:
        return self.shared.recorder.now

    def send(self, kind: str, table: int | str, text: str) -> None:
        self.commands.append(f"{kind}{len(self.commands) + 1}.{table}.{text}")

    # --- the wire --------------------------------------------------------------------------------------

    def _drop(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    async def _request(self, what: str, target: str) -> tuple[int, bytes] | None:
        sent = time.perf_counter()
        try:
            if self.conn is None or self.conn.closed:
                self.conn = await connect(self.plan.port, self.args.timeout)
            status, body = await self.conn.get(target)
        except TimeoutError as failure:
            self._drop()
            self.tally.requests += 1
            self.tally.error("timeout", f"{what} {self.nick}: {failure}")
            return None
        except (OSError, ValueError) as failure:
            self._drop()
            self.tally.requests += 1
            self.tally.error("connection", f"{what} {self.nick}: {failure!r}")
            return None
        tally = self.tally
        tally.requests += 1
        tally.latencies.append(time.perf_counter() - sent)
        tally.reply_bytes += len(body)
        return status, body

    def _refusal(self, what: str, status: int, body: bytes) -> None:
        if status != 200:
            kind = f"HTTP {status}"
        elif body.startswith(b"err."):
            kind = body[:40].decode(errors="replace")
        elif body.startswith(b"sd/"):
            kind = "sd (session lost)"
        else:
            kind = "bad reply"
        self.tally.error(kind, f"{what} {self.nick}: HTTP {status} {body[:120]!r}")

    async def login(self) -> bool:
        self.seen = self.acknowledged = 0
        self.commands = []
        target = f"/a.kropki?co=guestLogin&idGracza={self.secret}&opis={quote(self.nick, safe='')}&lang=en"
        answer = await self._request("login", target)
        if answer is None:
            return False
        if answer != (200, b""):
            self._refusal("login", *answer)
            return False
        self.tally.logins += 1
        return True

    async def logout(self) -> None:
        answer = await self._request("logout", f"/a.kropki?co=usunGracza&playerId={self.secret}")
        if answer is not None and answer != (200, b""):
            self._refusal("logout", *answer)
        elif answer is not None:
            self.tally.logouts += 1
        self._drop()

    async def poll(self) -> bool:
        pending = self.commands[self.acknowledged :]
        commands = quote("/".join(pending), safe="") if pending else "x"
        target = f"/a.kropki?co=getMsg&playerId={self.secret}&msgNo={self.seen}&msgFromClient={commands}"
        answer = await self._request("poll", target)
        if answer is None:
            return False
        status, body = answer
        head = parse_head(body) if status == 200 else None
        if head is None:
            self._refusal("poll", status, body)
            return False
        self.seen, processed = head
        self.acknowledged = max(self.acknowledged, processed)
        self._read(body.decode(), time.monotonic())
        return True

    # --- reading replies -------------------------------------------------------------------------------

    def _read(self, text: str, now: float) -> None:
        section = -1
        for line in text.split("/")[2:-1]:
            first = line[0]
            if first == "q":
                section = int(line[1:])
                if section and self.role == "player" and not self.uid and section not in self.old:
                    if self.invite_at or self.accept_at:
                        self._new_game(section, now)
                continue
            if first == "c" and ERROR_LINE.match(line):
                self._refused(line.split(".", 3)[-1])
            elif section == 0:
                if first in "gx" and self.role == "watcher":
                    self._lobby_tables(line)
                elif first == "v" and line.startswith(f"vg{self.partner}.") and self.role == "player":
                    self.invited = not self.inviter and not self.accept_at
            elif section == self.uid and self.position is not None:
                self._game_line(line, now)

    def _refused(self, sentence: str) -> None:
        if self.role == "watcher" and RACES.fullmatch(sentence):
            self.tally.races += 1
        else:
            self.tally.error("refused command", f"{self.nick} ({self.role}): {sentence[:120]}")

    def _lobby_tables(self, line: str) -> None:
        if line[0] == "x":  # x<uid>.<side on move>.<result, - while playing>.<archive number>
            fields = line[1:].split(".")
            if len(fields) >= 3 and fields[0].isdigit():
                uid = int(fields[0])
                if fields[2] == "-":
                    self.live.add(uid)
                else:
                    self.live.discard(uid)
            return
        numbers = {int(n) for n in line[2:].split(".") if n.isdigit()}
        if line.startswith("gr"):
            self.tables = numbers
            self.live &= numbers
        elif line.startswith("ga"):
            self.tables |= numbers
        elif line.startswith("gd"):
            self.tables -= numbers
            self.live -= numbers

    def _new_game(self, uid: int, now: float) -> None:
        self.uid, self.colour = uid, 0
        self.position = Position(*self.size, self.rng)
        low, high = self.args.game_moves
        self.target = low + (uid * 2654435761 + self.args.seed) % (high - low + 1)  # both players agree
        self.in_flight, self.move_at = None, None
        self.resigned = self.stalled = self.invited = False
        self.invite_at = self.accept_at = 0.0
        self.progress = now
        self.tally.games_started += self.inviter

    def _game_line(self, line: str, now: float) -> None:
        assert self.position is not None
        if line.startswith("sa;"):
            for node in line[3:].split(";"):
                self._node(node, now)
        elif line.startswith("sr("):
            self.position.reset()
            for node in line[3:-1].split(";")[2:]:  # '' before the first ';', then the (empty) root
                self._node(node, now)
        elif line.startswith(f"d{self.uid}."):
            blue, red = line.rsplit(".", 2)[1:]
            self.colour = BLACK if blue == self.nick else WHITE if red == self.nick else 0
            if not self.colour:
                self.tally.error("tracking", f"{self.nick}: not a player of table {self.uid}: {line[:80]}")
        elif line.startswith(f"x{self.uid}.") and line.split(".")[2] != "-":
            self.tally.games_finished += self.inviter
            self.send("q", self.uid, "")
            self.old.add(self.uid)
            self.uid, self.position = 0, None
            if self.inviter:
                self.next_invite = now + self.rng.uniform(1.0, 5.0)

    def _node(self, node: str, now: float) -> None:
        assert self.position is not None
        colour, point = COLOUR.get(node[:1]), node[2:4]
        if colour is None or node[1:2] != "[" or len(point) != 2:
            self.tally.error("tracking", f"{self.nick}: unexpected node {node[:40]!r}")
            return
        try:
            self.position.apply(colour, point)
        except (IllegalMove, ValueError) as disagree:
            self.tally.error("tracking", f"{self.nick} at table {self.uid}: {disagree}")
            return
        self.progress = now
        if colour == self.colour and point == self.in_flight:
            self.in_flight = None
            self.tally.moves += 1

    # --- acting ----------------------------------------------------------------------------------------

    def begin(self, now: float) -> None:
        """The run starts: set the role's first timers, spread so that nobody acts in step."""
        rng, args = self.rng, self.args
        if self.role == "chatter":
            self.chat_at = now + rng.uniform(0, args.chat_every[1])
        elif self.role == "watcher":
            self.watch_at = now + rng.uniform(0, 20)
            self.chat_at = now + rng.uniform(0, 4 * args.chat_every[1])
        elif self.role == "churner":
            self.offline_at = now + rng.uniform(0, args.online[1])
            self.chat_at = now + rng.uniform(0, 2 * args.chat_every[1])
        else:
            self.chat_at = now + rng.uniform(0, 4 * args.chat_every[1])
            if self.inviter:
                self.next_invite = now + rng.uniform(0, 5)

    def act(self, now: float) -> bool:
        """Queue what the role does now; True when the client is to log out."""
        if now >= self.chat_at:
            self._chat(now)
        if self.role == "player":
            self._play(now)
        elif self.role == "watcher":
            self._watch(now)
        return now >= self.offline_at

    def _chat(self, now: float) -> None:
        rng, args = self.rng, self.args
        self.said += 1
        text = encode_chat(f"hello {self.index}.{self.said} from the soak @ home/away")
        if self.role == "chatter":
            self.chat_at = now + uniform(rng, args.chat_every)
            others = self.plan.chatters
            if len(others) > 1 and rng.random() < PRIVATE_SHARE:
                whom = rng.choice(others)
                if whom != self.nick:
                    self.send("c", f"_{whom}", text)
                    self.tally.private_lines += 1
                    return
        else:
            self.chat_at = now + (2 if self.role == "churner" else 4) * uniform(rng, args.chat_every)
        if self.role == "player" and self.uid and self.position is not None:
            self.send("c", self.uid, text)
        elif self.role == "player":
            return  # between games players say nothing
        else:
            self.send("c", 0, text)
        self.tally.chat_lines += 1

    def _watch(self, now: float) -> None:
        if not self.watching and now >= self.watch_at:
            choices = self.live or self.tables  # people watch games being played
            if not choices:
                self.watch_at = now + 5
                return
            self.watching = self.rng.choice(sorted(choices))
            self.send("b", self.watching, "")
            self.tally.joins += 1
            self.leave_at = now + uniform(self.rng, self.args.watch)
        elif self.watching and now >= self.leave_at:
            self.send("q", self.watching, "")
            self.watching = 0
            self.watch_at = now + self.rng.uniform(5, 20)

    def _play(self, now: float) -> None:
        if not self.uid:
            if self.inviter and not self.invite_at and now >= self.next_invite:
                self.send("v", 0, f"s.{self.partner}.{GAME_TYPE}")
                self.invite_at = now
            elif self.inviter and self.invite_at and now - self.invite_at > STALL:
                self.tally.error(
                    "stalled", f"{self.nick}: no table {STALL:g} s after inviting {self.partner}"
                )
                self.send("v", 0, f"s.{self.partner}.{GAME_TYPE}")
                self.invite_at = now
            elif not self.inviter and self.invited and not self.accept_at:
                self.send("v", 0, "a")
                self.accept_at, self.invited = now, False
            elif not self.inviter and self.accept_at and now - self.accept_at > STALL:
                self.tally.error("stalled", f"{self.nick}: no table {STALL:g} s after accepting")
                self.accept_at = 0.0
            return
        position = self.position
        if position is None or not self.colour or self.resigned:
            return
        if position.to_move() == self.colour and self.in_flight is None:
            if self.move_at is None:
                self.move_at = now + uniform(self.rng, self.args.think)
            elif now >= self.move_at:
                self.move_at = None
                point = position.pick() if position.moves < self.target else None
                if point is None:
                    self.send("u", self.uid, "resign")
                    self.resigned = True
                else:
                    self.send("s", self.uid, point)
                    self.in_flight = point
                self.progress = now
        if now - self.progress > STALL and not self.stalled:
            self.stalled = True
            self.tally.error(
                "stalled",
                f"{self.nick}: nothing happened at table {self.uid} for {STALL:g} s "
                f"({position.moves} moves, {'my' if position.to_move() == self.colour else 'their'} move)",
            )

    # --- a life ----------------------------------------------------------------------------------------

    async def life(self) -> None:
        shared = self.shared
        try:
            async with shared.gate:
                logged_in = await self.login() and await self.poll()
            shared.ready.arrive(self.index)
            if logged_in:
                await self._live()
        finally:
            shared.ready.arrive(self.index)
            self._drop()

    async def _live(self) -> None:
        shared = self.shared
        base = time.monotonic() - self.rng.random()
        last, begun = math.ceil(time.monotonic() - base) - 1, False
        while True:
            slot_number = max(last + 1, math.ceil(time.monotonic() - base))
            slot = base + slot_number
            if slot >= min(shared.end, self.plan.deadline):
                return
            self.tally.missed_slots += slot_number - last - 1
            last = slot_number
            await _sleep_until(slot)
            if shared.go.done() and slot >= shared.go.result():
                if not begun:
                    self.begin(slot)
                    begun = True
                if self.act(slot):
                    if not await self._churn():
                        return
                    last = math.ceil(time.monotonic() - base) - 1
                    continue
            await self.poll()

    async def _churn(self) -> bool:
        """Log out, stay away, log in again with a fresh session; False when the run ended meanwhile."""
        await self.logout()
        stop = min(self.shared.end, self.plan.deadline)
        back = time.monotonic() + uniform(self.rng, self.args.offline)
        while True:
            await _sleep_until(min(back, stop))
            if time.monotonic() >= stop:
                return False
            if await self.login():
                break
            back = time.monotonic() + 5.0
        self.offline_at = time.monotonic() + uniform(self.rng, self.args.online)
        return True


# --- the flood client ------------------------------------------------------------------------------------


class Holder:
    """One of the flood's connections, in the shape stream.watchdog reads."""

    def __init__(self) -> None:
        self.conn: HttpConnection | None = None


class Flood:
    """One id from one address: polls back to back, chat lines and invitations far above a person's rate."""

    def __init__(self, shared: Shared) -> None:
        self.shared, self.plan, self.args = shared, shared.plan, shared.plan.args
        self.holders = [Holder() for _ in range(self.args.flood_connections)]
        self.seen = self.acknowledged = 0
        self.commands: list[str] = []
        self.kinds: list[str] = []
        self.lines: set[str] = set()  # chat line ids already counted (replies overlap across connections)
        self.next_chat = self.next_invite = math.inf
        self.chats = self.invites = self.requests = 0

    @property
    def tally(self) -> Tally:
        return self.shared.recorder.now

    async def _get(self, holder: Holder, target: str) -> tuple[int, bytes]:
        if holder.conn is None or holder.conn.closed:
            loop = asyncio.get_running_loop()
            timeout = self.args.timeout
            try:
                _, holder.conn = await asyncio.wait_for(
                    loop.create_connection(
                        lambda: HttpConnection(self.plan.port, timeout),
                        HOST,
                        self.plan.port,
                        local_addr=(self.args.flood_address, 0),
                    ),
                    timeout,
                )
            except TimeoutError:
                raise TimeoutError(f"no connection within {timeout:g} s") from None
        return await holder.conn.get(target)

    async def life(self) -> None:
        shared = self.shared
        try:
            target = f"/a.kropki?co=guestLogin&idGracza={FLOOD_ID}&opis={quote(FLOOD_NICK, safe='')}&lang=en"
            try:
                answer = await self._get(self.holders[0], target)
            except (OSError, TimeoutError, ValueError) as failure:
                answer = (0, repr(failure).encode())
            if answer != (200, b""):
                bump(self.tally.flood_other, f"login refused: {answer[0]} {answer[1][:80]!r}")
                return
            await self._poll_once()  # the catch-up (a full lobby state), before the run
            shared.ready.arrive(0)
            while not await _wait_until(shared.go, min(self.plan.deadline, time.monotonic() + 20.0)):
                if time.monotonic() >= self.plan.deadline:
                    return
                await self._poll_once()  # the server logs out whoever is silent for 60 s
            start = shared.go.result()
            await _sleep_until(start)
            self.next_chat = self.next_invite = start
            await asyncio.gather(
                *(self._hammer(holder, number == 0) for number, holder in enumerate(self.holders))
            )
        finally:
            shared.ready.arrive(0)
            for holder in self.holders:
                if holder.conn is not None:
                    holder.conn.close()

    async def _poll_once(self) -> None:
        target = f"/a.kropki?co=getMsg&playerId={FLOOD_ID}&msgNo={self.seen}&msgFromClient=x"
        try:
            status, body = await self._get(self.holders[0], target)
        except (OSError, TimeoutError, ValueError) as failure:
            bump(self.tally.flood_other, f"catch-up poll: {failure!r}")
            return
        head = parse_head(body) if status == 200 else None
        if head is None:
            bump(self.tally.flood_other, f"catch-up poll: HTTP {status} {body[:40]!r}")
        else:
            self._read(head, body.decode(), self.tally)

    def _queue(self, now: float) -> None:
        """Chat lines and invitations at their rates while the backlog has room; none in the last 2 s."""
        args, tally = self.args, self.tally
        if now > self.shared.end - 2.0:
            return
        victims = self.plan.chatters
        while args.flood_chat_rate and now >= self.next_chat:
            self.next_chat += 1.0 / args.flood_chat_rate
            if len(self.commands) - self.acknowledged >= FLOOD_BACKLOG:
                tally.chat_skipped += 1
                continue
            self.chats += 1
            text = FLOOD_SAME_LINE if self.chats % 2 else f"flood line {self.chats}"
            self._send("c", "chat", f"0.{encode_chat(text)}")
            tally.chat_queued += 1
        while args.flood_invite_rate and victims and now >= self.next_invite:
            self.next_invite += 60.0 / args.flood_invite_rate
            if len(self.commands) - self.acknowledged >= FLOOD_BACKLOG:
                continue
            self.invites += 1
            self._send("v", "invite", f"0.s.{victims[self.invites % len(victims)]}.{GAME_TYPE}")
            tally.invites_queued += 1

    def _send(self, kind: str, what: str, rest: str) -> None:
        self.commands.append(f"{kind}{len(self.commands) + 1}.{rest}")
        self.kinds.append(what)

    async def _hammer(self, holder: Holder, carries_commands: bool) -> None:
        stop = min(self.shared.end, self.plan.deadline)
        while time.monotonic() < stop:
            if carries_commands:
                self._queue(time.monotonic())
            pending = self.commands[self.acknowledged :] if carries_commands else []
            commands = quote("/".join(pending), safe="") if pending else "x"
            target = f"/a.kropki?co=getMsg&playerId={FLOOD_ID}&msgNo={self.seen}&msgFromClient={commands}"
            sent = time.perf_counter()
            try:
                status, body = await self._get(holder, target)
            except (OSError, TimeoutError, ValueError) as failure:
                if holder.conn is not None:
                    holder.conn.close()
                bump(self.tally.flood_other, type(failure).__name__)
                await asyncio.sleep(0.1)  # a dead server must not turn this into a busy spin
                continue
            tally = self.tally
            tally.flood_requests += 1
            self.requests += 1
            if self.requests % FLOOD_LATENCY_EVERY == 0:
                tally.flood_latencies.append(time.perf_counter() - sent)
            head = parse_head(body) if status == 200 else None
            if head is not None:
                tally.flood_answered += 1
                self._read(head, body.decode(), tally)
            elif status == 429:
                bump(tally.flood_refused, "HTTP 429")
            elif body.startswith(b"err."):
                bump(tally.flood_refused, body[:40].decode(errors="replace"))
            else:
                bump(tally.flood_other, f"HTTP {status} {body[:40]!r}")

    def _read(self, head: tuple[int, int], text: str, tally: Tally) -> None:
        self.seen, processed = max(self.seen, head[0]), head[1]
        for number in range(self.acknowledged, min(processed, len(self.kinds))):
            if self.kinds[number] == "chat":
                tally.chat_processed += 1
            else:
                tally.invites_processed += 1
        self.acknowledged = max(self.acknowledged, processed)
        for line in text.split("/")[2:-1]:
            if not line.startswith(("ca", "cr")):  # cr: the chat history of a full state
                continue
            line_id, _, rest = line[2:].partition(".")
            if line_id in self.lines:
                continue
            if ERROR_LINE.match(line):
                self.lines.add(line_id)
                tally.e_lines += 1
                bump(tally.sentences, re.sub(r"\d+", "N", rest[3:])[:70])
            elif rest.startswith(f"{FLOOD_NICK}."):
                self.lines.add(line_id)
                tally.chat_accepted += 1


# --- one worker process ----------------------------------------------------------------------------------


def boundaries(start: float, args: argparse.Namespace) -> list[float]:
    """The ends of the report windows."""
    count = math.ceil(args.seconds / args.report_every)
    return [start + min(k * args.report_every, args.seconds) for k in range(1, count + 1)]


async def drive(plan: Plan, pipe: Connection) -> Summary:
    """Log in, then report window by window in step with the main process until the run ends."""
    loop = asyncio.get_running_loop()
    started_wall, started_cpu = time.monotonic(), time.process_time()
    go: asyncio.Future[float] = loop.create_future()
    last_seen: asyncio.Future[None] = loop.create_future()  # the main process has the last window's report
    windows = math.ceil(plan.args.seconds / plan.args.report_every)

    def on_message() -> None:
        try:
            kind, value = pipe.recv()
        except EOFError:  # the main process is gone: nobody will read the results
            os._exit(2)
        if kind == "go" and not go.done():
            go.set_result(value)
        elif kind == "tick" and value == windows and not last_seen.done():
            last_seen.set_result(None)

    rng = random.Random(plan.seed)
    size = parse_game_type(GAME_TYPE)
    shared = Shared(
        plan,
        Recorder(),
        rng,
        asyncio.Semaphore(plan.args.login_concurrency),
        Countdown(1 if plan.kind == "flood" else len(plan.members)),
        go,
    )
    if plan.kind == "flood":
        flood = Flood(shared)
        actors: list[Any] = [flood]
        watched: list[Any] = flood.holders
    else:
        actors = watched = [
            Agent(i, role, p, shared, (size.width, size.height)) for i, role, p in plan.members
        ]
    loop.add_reader(pipe.fileno(), on_message)
    tasks = [asyncio.create_task(actor.life()) for actor in actors]
    guard = asyncio.create_task(watchdog(watched, plan.args.timeout))
    try:
        if await _wait_until(shared.ready.done, plan.deadline):
            pipe.send(("ready", None))
        if await _wait_until(go, plan.deadline):
            start = go.result()
            shared.end = start + plan.args.seconds
            await _sleep_until(start)
            plan.reports.put((plan.number, 0, shared.recorder.rotate()))
            ends = boundaries(start, plan.args)
            for k, boundary in enumerate(ends, 1):
                await _sleep_until(boundary)
                if k == len(ends):  # the last replies, so that their errors are counted
                    await asyncio.wait(tasks, timeout=plan.args.timeout + 2.0)
                plan.reports.put((plan.number, k, shared.recorder.rotate()))
                pipe.send((f"w{k}", None))
            await _wait_until(last_seen, plan.deadline)  # its answer must not find this process gone
        else:
            shared.end = time.monotonic()
        await asyncio.wait(tasks, timeout=max(0.1, min(plan.deadline - time.monotonic(), 30.0)))
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        guard.cancel()
        loop.remove_reader(pipe.fileno())
    return Summary(time.process_time() - started_cpu, time.monotonic() - started_wall)


def worker_main(plan: Plan, pipe: Connection) -> None:
    """Entry point of a generator process; Ctrl-C is the main process's business."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        pipe.send(("result", asyncio.run(drive(plan, pipe))))
    except BaseException:
        pipe.send(("failed", traceback.format_exc()))


# --- the main process ------------------------------------------------------------------------------------


class TimedSamples(list):  # type: ignore[type-arg]
    """The RSS samples step_workers appends once a second, with the time each was taken."""

    def __init__(self, first: float) -> None:
        super().__init__([first])
        self.times = [time.monotonic()]

    def append(self, value: float) -> None:
        super().append(value)
        self.times.append(time.monotonic())

    def between(self, start: float, end: float) -> list[float]:
        return [value for at, value in zip(self.times, self, strict=True) if start <= at <= end]


@dataclass
class Row:
    """One printed window."""

    number: int
    at: float  # seconds from the start of the run to the window's end
    seconds: float  # length
    tally: Tally
    rss: float
    rss_peak: float
    server_cpu: float
    machine_cpu: float
    gauges: dict[str, float]  # the server's own /metrics gauges at the window's end


@dataclass
class Run:
    setup: Tally
    rows: list[Row]
    samples: TimedSamples
    times: dict[str, float]
    rss_after_setup: float
    server_cpu: float
    machine_cpu: float
    summaries: list[Summary]


def assign(args: argparse.Namespace) -> tuple[list[list[tuple[int, str, int]]], list[str]]:
    """Clients 1..N with their roles, in units (a pair of players or one client) dealt to the workers in a
    shuffled order, so that every worker logs in a mix of roles; and the chatters' nicks."""
    n = args.clients
    players = int(n * args.players) // 2 * 2
    watchers, churners = int(n * args.watchers), int(n * args.churners)
    units: list[list[tuple[int, str, int]]] = [
        [(i, "player", i + 1), (i + 1, "player", i)] for i in range(1, players, 2)
    ]
    number = players
    for role, count in (
        ("watcher", watchers),
        ("churner", churners),
        ("chatter", n - players - watchers - churners),
    ):
        for _ in range(count):
            number += 1
            units.append([(number, role, 0)])
    random.Random(args.seed).shuffle(units)
    workers = max(1, min(args.workers, len(units)))
    members: list[list[tuple[int, str, int]]] = [[] for _ in range(workers)]
    for k, unit in enumerate(units):
        members[k % workers] += unit
    chatters = [f"*s{i}" for unit in units for i, role, _ in unit if role == "chatter"]
    return members, chatters


def run(args: argparse.Namespace, server: Server) -> Run:
    members, chatters = assign(args)
    context = multiprocessing.get_context("spawn")
    reports = context.Queue()
    deadline = time.monotonic() + 300.0 + 0.1 * args.clients + args.seconds
    plans = [
        Plan("clients", number, server.port, mine, chatters, args, deadline, args.seed + number, reports)
        for number, mine in enumerate(members)
    ]
    if args.flood:
        plans.append(
            Plan("flood", len(plans), server.port, [], chatters, args, deadline, args.seed - 1, reports)
        )
    samples = TimedSamples(server.rss_mb())
    got: dict[tuple[int, int], Tally] = {}
    rows: list[Row] = []
    state: dict[str, Any] = {}
    count = math.ceil(args.seconds / args.report_every)
    grace = args.timeout + 30.0

    def collect(k: int) -> Tally:
        merged = Tally()
        for number in range(len(plans)):
            while (number, k) not in got:
                try:
                    worker, window, tally = reports.get(timeout=30.0)
                except Empty:
                    raise RuntimeError(f"no report for window {k} from load generator {number}") from None
                got[(worker, window)] = tally
            merged.add(got.pop((number, k)))
        return merged

    def on_phase(kind: str, times: dict[str, float]) -> Phase:
        now = time.monotonic()
        if kind == "ready":
            state["rss_after_setup"] = server.rss_mb()
            times["start"] = now + 0.2
            times["end"] = times["start"] + args.seconds
            state["mark"] = (times["start"], server.cpu_seconds(), machine_cpu_seconds())
            print(
                f"set-up: every client logged in and answered in {now - state['began']:.1f} s; server RSS "
                f"{state['rss_after_setup']:.1f} MB; the run begins",
                flush=True,
            )
            print(HEADER, flush=True)
            ends = boundaries(times["start"], args)
            return Phase(
                ("go", times["start"]), ends[0] + grace, "report window 1", sample_from=times["start"]
            )
        k = int(kind[1:])
        if k == 1:
            state["setup"] = collect(0)
        tally = collect(k)
        began, server_before, machine_before = state["mark"]
        server_now, machine_now = server.cpu_seconds(), machine_cpu_seconds()
        state["mark"] = (now, server_now, machine_now)
        rss_now = server.rss_mb()
        window = samples.between(began, now) + [rss_now]
        ends = boundaries(times["start"], args)
        length = ends[k - 1] - (ends[k - 2] if k > 1 else times["start"])
        row = Row(
            k,
            ends[k - 1] - times["start"],
            length,
            tally,
            rss_now,
            max(window),
            server_now - server_before,
            machine_now - machine_before,
            gauges(server.port),
        )
        rows.append(row)
        print(format_row(row), flush=True)
        for example in tally.examples[:3]:
            print(f"      {example}", flush=True)
        if k < count:
            return Phase(("tick", k), ends[k] + grace, f"report window {k + 1}")
        return Phase(("tick", k), now + grace, "finish after the last window")

    with worker_processes(worker_main, plans) as pipes:
        state["began"] = time.monotonic()
        phases = ("ready", *(f"w{k}" for k in range(1, count + 1)))
        start_deadline = time.monotonic() + 60.0 + 0.05 * args.clients
        summaries, times, cpu_at = step_workers(
            pipes, server, samples, phases, start_deadline, "log every client in", on_phase
        )
        samples.append(server.rss_mb())
        server_cpu, machine_cpu = cpu_in_window(cpu_at, server)
    return Run(
        state.get("setup", Tally()),
        rows,
        samples,
        times,
        state.get("rss_after_setup", math.nan),
        server_cpu,
        machine_cpu,
        summaries,
    )


HEADER = (
    "   t s  requests   req/s errors  p50 ms  p99 ms  max ms  moves games  chat login logout  online "
    "tables  RSS MB  server CPU  generators  rest |  flood req/s  answered  chat ok  e-lines"
)
GAUGES = {"kropki_players_online": "online", "kropki_tables_open": "tables"}


def gauges(port: int) -> dict[str, float]:
    """Players online and game tables open, from the server's /metrics (empty when it does not answer)."""
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}/metrics", timeout=5) as answer:
            text = answer.read().decode()
    except (OSError, ValueError):
        return {}
    found = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in GAUGES:
            with contextlib.suppress(ValueError):
                found[GAUGES[name]] = float(value)
    return found


def format_row(row: Row) -> str:
    tally, seconds = row.tally, row.seconds
    latencies = sorted(tally.latencies)
    errors = sum(tally.errors.values())
    rest = max(0.0, row.machine_cpu - row.server_cpu - tally.cpu)  # clock ticks can make it dip below 0
    flood = tally.flood_requests
    answered = f"{tally.flood_answered / flood:8.1%}" if flood else "       -"
    return (
        f"{row.at:6.0f} {tally.requests:9d} {tally.requests / seconds:7.0f} {errors:6d} "
        f"{percentile(latencies, 50) * 1000:7.1f} {percentile(latencies, 99) * 1000:7.1f} "
        f"{(latencies[-1] if latencies else math.nan) * 1000:7.1f} "
        f"{tally.moves:6d} {tally.games_finished:5d} "
        f"{tally.chat_lines + tally.private_lines:5d} {tally.logins:5d} {tally.logouts:6d} "
        f"{row.gauges.get('online', math.nan):6.0f} {row.gauges.get('tables', math.nan):6.0f} {row.rss:7.1f} "
        f"{row.server_cpu / seconds:11.0%} {tally.cpu / seconds:11.0%} {rest / seconds:5.0%} | "
        f"{flood / seconds:12.0f}  {answered}  {tally.chat_accepted:7d}  {tally.e_lines:7d}"
    )


def rss_trend(run: Run, args: argparse.Namespace) -> tuple[float, float, float, float, float]:
    """RSS at the end of the warm-up and over the last 10 s (medians of the once-a-second samples), the
    peak after the warm-up, and the slopes after the warm-up and over the run's second half in MB a minute
    (state that fills up for minutes, such as finished tables kept a minute, shows in the first only)."""
    samples, start, end = run.samples, run.times["start"], run.times["end"]
    warm = start + warmup(args)
    baseline = samples.between(warm - 10.0, warm) or samples.between(start, warm)[-1:]
    final = samples.between(end - 10.0, end) or samples[-1:]
    peak = max(samples.between(warm, end), default=math.nan)
    return (
        statistics.median(baseline or [math.nan]),
        statistics.median(final),
        peak,
        slope(samples, warm, end),
        slope(samples, (start + end) / 2, end),
    )


def slope(samples: TimedSamples, start: float, end: float) -> float:
    """Least-squares slope of the samples taken from start to end, in MB a minute."""
    chosen = [(at, value) for at, value in zip(samples.times, samples, strict=True) if start <= at <= end]
    if len(chosen) < 3:
        return math.nan
    return statistics.linear_regression([at for at, _ in chosen], [value for _, value in chosen]).slope * 60


def warmup(args: argparse.Namespace) -> float:
    return args.warmup if args.warmup is not None else max(60.0, 0.1 * args.seconds)


def report(run: Run, server: Server, args: argparse.Namespace) -> bool:
    total = Tally()
    for row in run.rows:
        total.add(row.tally)
    setup = run.setup
    seconds = sum(row.seconds for row in run.rows) or args.seconds
    print("\n== totals ==")
    setup_errors = sum(setup.errors.values())
    print(
        f"set-up (logins and first polls, before the run): {setup.requests} requests, {setup.logins} logins, "
        f"{setup_errors} errors, latency ms {ms(sorted(setup.latencies), 50, 99)}"
    )
    latencies = sorted(total.latencies)
    p99s = [percentile(sorted(row.tally.latencies), 99) * 1000 for row in run.rows]
    print(
        f"well-behaved requests in the {seconds:g} s run: {total.requests} = "
        f"{total.requests / seconds:.0f}/s, "
        f"mean reply {total.reply_bytes / max(1, total.requests):.0f} bytes; latency ms "
        f"{ms(latencies, 50, 90, 99, 99.9)}; p99 by window {min(p99s, default=math.nan):.1f} to "
        f"{max(p99s, default=math.nan):.1f} ms"
    )
    print(
        f"activity: {total.moves} moves, {total.games_started} games started and {total.games_finished} "
        f"finished; {total.chat_lines} chat lines and {total.private_lines} private lines; {total.joins} "
        f"spectator joins ({total.races} b/q racing a closed table, not errors); churn {total.logouts} "
        f"logouts, {total.logins} logins; {total.missed_slots} once-a-second polls skipped (reply still out)"
    )
    errors = setup_errors + sum(total.errors.values())
    kinds: dict[str, int] = dict(setup.errors)
    for kind, count in total.errors.items():
        kinds[kind] = kinds.get(kind, 0) + count
    listed = ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items(), key=lambda item: -item[1]))
    print(f"well-behaved errors: {errors}" + (f" ({listed})" if listed else ""))
    for example in (setup.examples + total.examples)[:10]:
        print(f"    {example}")

    baseline, final, peak, trend, late_trend = rss_trend(run, args)
    growth = final / baseline - 1 if baseline > 0 else math.nan
    print(
        f"server RSS MB: start {run.samples[0]:.1f}, after set-up {run.rss_after_setup:.1f}, at the end of "
        f"the {warmup(args):g} s warm-up {baseline:.1f}, last 10 s {final:.1f} ({growth:+.1%}), peak after "
        f"the warm-up {peak:.1f}; trend {trend:+.2f} MB a minute after the warm-up, {late_trend:+.2f} over "
        "the second half of the run"
    )
    generators = sum(row.tally.cpu for row in run.rows)
    print(f"server CPU in the run: {run.server_cpu:.1f} s = {run.server_cpu / seconds:.0%} of one core")
    print(
        f"load generator CPU ({len(run.summaries)} processes, the flood's included): {generators:.1f} s in "
        f"the run = {generators / seconds:.0%} of one core"
    )
    others = max(0.0, run.machine_cpu - run.server_cpu - generators)
    print(
        f"rest of the machine in the run: {others:.1f} CPU s = {others / seconds:.0%} of one core "
        f"({os.cpu_count()} CPUs; kernel work not charged to a process, this script's main process, other "
        "programs)"
    )
    if others / seconds > 0.25:
        print("NOTE: other work kept the CPUs busy during the run; these figures may be pessimistic")

    flood_ok = True
    if args.flood:
        flood_ok = report_flood(total, setup, seconds, args)
    print(f"server log: {server.log_summary()}")
    if server.exited_early is not None:
        print(
            f"the server exited on its own with code {server.exited_early}; last lines:\n{server.log_tail()}"
        )

    errors_ok = errors == 0
    memory_ok = growth * 100 <= args.rss_growth
    print(f"{'PASS' if errors_ok else 'FAIL'}: {errors} well-behaved errors (target 0)")
    if args.flood:
        print(
            f"{'PASS' if flood_ok else 'FAIL'}: the flood client "
            f"{'was limited' if flood_ok else 'was not limited'} (targets above)"
        )
    print(
        f"{'PASS' if memory_ok else 'FAIL'}: server RSS {growth:+.1%} after the warm-up "
        f"(target at most +{args.rss_growth:g}%)"
    )
    return errors_ok and flood_ok and memory_ok


def report_flood(total: Tally, setup: Tally, seconds: float, args: argparse.Namespace) -> bool:
    requests = total.flood_requests
    refused = sum(total.flood_refused.values())
    other = sum(total.flood_other.values())
    minutes = seconds / 60
    print(
        f"flood client ({args.flood_connections} connection(s) from {args.flood_address}, one id): "
        f"{requests} requests = {requests / seconds:.0f}/s, "
        f"latency ms {ms(sorted(total.flood_latencies), 50, 99)} "
        f"(1 in {FLOOD_LATENCY_EVERY})"
    )
    if requests:
        print(
            f"  answered normally {total.flood_answered} ({total.flood_answered / requests:.2%}, "
            f"{total.flood_answered / seconds:.1f}/s), refused {refused} ({refused / requests:.2%}), "
            f"other {other}"
        )
    for what, counts in (("refused", total.flood_refused), ("other", total.flood_other | setup.flood_other)):
        for key, count in sorted(counts.items(), key=lambda item: -item[1])[:5]:
            print(f"    {what}: {key} x {count}")
    chat_refused = total.chat_processed - total.chat_accepted
    invites_refused = max(0, total.e_lines - chat_refused)
    invites_accepted = total.invites_processed - invites_refused
    print(
        f"  chat lines: {total.chat_queued} queued ({total.chat_skipped} more skipped: backlog full), "
        f"{total.chat_processed} reached the hub, {total.chat_accepted} accepted = "
        f"{total.chat_accepted / minutes:.1f} a minute"
    )
    print(
        f"  invitations: {total.invites_queued} queued, {total.invites_processed} reached the hub, "
        f"{invites_refused} refused, {invites_accepted} accepted = {invites_accepted / minutes:.1f} a minute"
    )
    for sentence, count in sorted(total.sentences.items(), key=lambda item: -item[1])[:6]:
        print(f"    error line: {sentence!r} x {count}")
    # A limit of N a minute (a second) lets through up to N more at the start of the run than the
    # average, whatever its kind (sliding window or token bucket): allow a minute's (2 seconds') worth.
    allowed = (
        args.flood_max_rate * (seconds + 2),
        args.flood_max_chat * (minutes + 1),
        args.flood_max_invites * (minutes + 1),
    )
    got = (total.flood_answered, total.chat_accepted, invites_accepted)
    limited = requests > 0 and all(n <= most for n, most in zip(got, allowed, strict=True))
    print(
        f"  targets: answered {got[0]} = {got[0] / seconds:.1f}/s (at most {allowed[0]:.0f}: "
        f"{args.flood_max_rate:g}/s plus 2 s of burst), chat lines {got[1]} = "
        f"{got[1] / minutes:.1f} a minute "
        f"(at most {allowed[1]:.0f}: {args.flood_max_chat:g} a minute plus a minute's burst), invitations "
        f"{got[2]} = {got[2] / minutes:.1f} a minute (at most {allowed[2]:.0f}: {args.flood_max_invites:g} "
        "a minute plus a minute's burst)" + ("" if requests else "; the flood client sent nothing")
    )
    return limited


def main() -> int:
    parser = argument_parser(__doc__)
    add = parser.add_argument
    pair = {"nargs": 2, "type": float, "metavar": ("MIN", "MAX")}
    add("--seconds", type=float, default=600.0, help="length of the run after every client is in")
    add("--clients", type=int, default=1000, help="well-behaved clients")
    add("--report-every", type=float, default=30.0, help="seconds per printed window")
    add("--warmup", type=float, help="seconds before memory must stay flat (default: 10%% of the run, >= 60)")
    add(
        "--rss-growth", type=float, default=10.0, help="target: at most this RSS growth after the warm-up, %%"
    )
    add("--players", type=float, default=0.4, help="share of the clients who play games, in pairs")
    add("--watchers", type=float, default=0.2, help="share who join and leave tables as spectators")
    add("--churners", type=float, default=0.15, help="share who log out and in again; the rest chat")
    add("--chat-every", **pair, default=[30.0, 60.0], help="seconds between a chatter's lines")
    add("--think", **pair, default=[0.5, 2.5], help="seconds a player thinks before a move")
    add("--game-moves", nargs=2, type=int, metavar=("MIN", "MAX"), default=[10, 60], help="moves per game")
    add("--watch", **pair, default=[20.0, 60.0], help="seconds a spectator stays at a table")
    add("--online", **pair, default=[30.0, 120.0], help="seconds a churner stays logged in")
    add("--offline", **pair, default=[5.0, 30.0], help="seconds a churner stays away")
    add("--flood", action=argparse.BooleanOptionalAction, default=True, help="run the flood client")
    add("--flood-address", default="127.0.0.2", help="the flood's source address (not --unlimited)")
    add("--flood-connections", type=int, default=1, help="the flood's connections, each polling back to back")
    add("--flood-chat-rate", type=float, default=10.0, help="flood chat lines queued a second")
    add("--flood-invite-rate", type=float, default=60.0, help="flood invitations queued a minute")
    add("--flood-max-rate", type=float, default=25.0, help="target: flood requests answered a second")
    add("--flood-max-chat", type=float, default=25.0, help="target: flood chat lines accepted a minute")
    add("--flood-max-invites", type=float, default=12.0, help="target: flood invitations accepted a minute")
    add("--workers", type=int, default=1, help="load generator processes for the well-behaved clients")
    add("--login-concurrency", type=int, default=8, help="logins in flight at once per worker")
    add_server_arguments(parser)
    args = parser.parse_args()
    if min(args.seconds, args.clients, args.report_every, args.workers, args.login_concurrency) <= 0:
        parser.error(
            "--seconds, --clients, --report-every, --workers and --login-concurrency must be positive"
        )
    if (
        args.timeout <= 0
        or args.flood_connections <= 0
        or min(args.flood_chat_rate, args.flood_invite_rate) < 0
    ):
        parser.error("--timeout and --flood-connections must be positive, flood rates not negative")
    if not all(0 <= share <= 1 for share in (args.players, args.watchers, args.churners)) or (
        args.players + args.watchers + args.churners > 1
    ):
        parser.error("--players, --watchers and --churners are shares that add up to at most 1")
    for name in ("chat_every", "think", "game_moves", "watch", "online", "offline"):
        low, high = getattr(args, name)
        if not 0 < low <= high:
            parser.error(f"--{name.replace('_', '-')} needs 0 < MIN <= MAX")
    if args.seconds - warmup(args) < 20:
        parser.error("the run must last at least 20 s beyond the warm-up (--seconds, --warmup)")
    if args.flood:
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                probe.bind((args.flood_address, 0))
        except OSError as failure:
            parser.error(f"--flood-address {args.flood_address}: cannot send from it ({failure})")

    stop_as_on_ctrl_c()
    members, chatters = assign(args)
    roles = {role: sum(1 for mine in members for _, r, _ in mine if r == role) for role in ROLES}
    print(
        f"soak: {os.cpu_count()} CPUs; {args.clients} well-behaved clients ("
        + ", ".join(f"{count} {role}s" for role, count in roles.items())
        + f") in {len(members)} process(es) from {HOST}; {args.seconds:g} s, a line every "
        f"{args.report_every:g} s; server interpreter {args.python}"
    )
    if args.flood:
        print(
            f"flood client: {args.flood_connections} connection(s) from {args.flood_address} polling back to "
            f"back, {args.flood_chat_rate:g} chat lines a second, "
            f"{args.flood_invite_rate:g} invitations a minute"
        )
        if args.flood_address == HOST:
            print(f"NOTE: the server exempts {HOST} from its request-rate limits (--unlimited)")
    print(f"server code: commit {server_revision()}")
    try:
        with tempfile.TemporaryDirectory(prefix="kropki-soak-") as workdir:
            server = Server(args.python, args.log_level, Path(workdir), None)
            try:
                server.start()
                print(f"server: pid {server.pid}, port {server.port}, log level {args.log_level}", flush=True)
                result = run(args, server)
            finally:
                server.stop()
            ok = report(result, server, args)
    except KeyboardInterrupt:
        print("\ninterrupted; the server was stopped")
        return 130
    except (RuntimeError, OSError) as failure:
        print(f"benchmark failed, the server was stopped: {failure}")
        return 2
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
