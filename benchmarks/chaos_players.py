"""The players of benchmarks/chaos.py: MultiPoints clients (tests/clients/multipoints.py) through nginx,
and what each of them sent, was told and saw, for the check at the end.

Each player is the line-by-line port of MultiPoints' ServerZagram: `query()` builds the poll exactly as
ThreadMain.run does, `handle_text()` reads the answer exactly as handleText does. The differences from
MultiPoints are chaos.py's docstring's ("The players").
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from yarl import URL

from server.engine.board import BLACK, WHITE, Board, IllegalMove
from tests.clients.multipoints import GameRoom, MultiPoints, decode, encode

HOST = "127.0.0.1"
POLL_EVERY = 1.0  # ThreadMain.run: Wait.waitExactly(1000L) after each answer
REQUEST_TIMEOUT = 70.0  # beyond nginx's proxy_read_timeout (60 s): MultiPoints' URLConnection has none
INVITE_AGAIN = 10.0  # seconds before an invitation or an acceptance without a table is sent again
SUBSCRIBE_AGAIN = 20.0  # seconds without its game's tab before a player chooses the table again
MOVE_DELAY = (1.0, 3.0)  # seconds a player thinks once on move
# 20x20, empty start, the inviter starts, untimed; no-territory rules, the only ones MultiPoints invites
# with and accepts (ServerZagram.java rejects an invitation to `t` or `s` rules by itself)
GAME_TYPE = "2020n0..a.F.n..._SRATP_sratp."
# a server line for one player (`e`: a refused command), or for a table: `unsaved`, play taken back
# (a table's server lines also come as `cr` in its whole state, which a take-back sends)
REFUSAL = re.compile(r"ca\d+_\d+\.\.(e)\.(.*)|c[ar]\d+_\d+\.\.(unsaved)\.(.*)")
RESULT = re.compile(r"ca\d+_\d+\.\.([BW]\+[^.]*|0|Void)\.")  # a server line: the game ended
MESSAGE_NUMBERS = re.compile(r"m(\d+)\.(\d+)\.(\d+)")


def reason_of(text: str) -> str:
    """A refusal's sentence with its numbers as N, so that refusals group by kind."""
    return re.sub(r"\d+", "N", decode(text))[:100]


@dataclass
class Command:
    """One numbered command of one login: `s` (a move), `v` (an invitation, an acceptance), `b`."""

    player: str
    login: int
    number: int
    kind: str
    table: str
    point: tuple[int, int] | None
    red: bool
    queued: float
    sent: float | None = None  # the first poll that carried it
    acked: float | None = None  # the reply whose k covered it
    refused: str | None = None  # the refusal's reason (numbers as N)
    abandoned: float | None = None  # its login ended (`sd`) before k covered it
    skipped: bool = False  # k covered it before any poll carried it: MultiPoints never sends it


@dataclass
class Recorder:
    """What every player saw, in one place: times are time.monotonic()."""

    started: float = field(default_factory=time.monotonic)
    ok_times: dict[str, list[float]] = field(default_factory=dict)
    sd: list[tuple[float, str]] = field(default_factory=list)
    nick_in_use: int = 0
    nick_refused: dict[str, float] = field(default_factory=dict)  # nick -> since when its logins get it
    nick_in_use_longest: tuple[float, str] = (0.0, "")  # seconds a player kept getting it, who
    logins: Counter[str] = field(default_factory=Counter)  # answers to guestLogin
    answers: Counter[str] = field(default_factory=Counter)  # polls answered neither ok nor sd
    no_answer: Counter[str] = field(default_factory=Counter)  # connection errors, HTTP statuses
    bad_k: list[str] = field(default_factory=list)  # a reply's k above what its login sent
    k_back: list[str] = field(default_factory=list)  # a reply's k below an earlier one of its login
    unattributed: Counter[str] = field(default_factory=Counter)  # refusals with no command to go to
    failures: list[str] = field(default_factory=list)  # lines the port could not parse
    tracking: list[str] = field(default_factory=list)  # dots the engine would not place
    chosen_again: int = 0  # `b` sent for the player's own game
    unsaved: list[str] = field(default_factory=list)  # the `unsaved` lines players read

    def at(self, moment: float) -> str:
        return f"+{moment - self.started:.1f} s"

    def nick_free(self, nick: str, now: float) -> None:
        """The end of a run of err.nickInUse answers to `nick`'s logins, if it had one."""
        since = self.nick_refused.pop(nick, None)
        if since is not None and now - since > self.nick_in_use_longest[0]:
            self.nick_in_use_longest = (now - since, nick)


class Pair:
    """Two players and their game: the inviter invites, the other accepts; a new table when one ends."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.players: list[Player] = []
        self.uid: str | None = None  # the table of its current game
        self.tables: list[str] = []
        self.finished: set[str] = set()
        self.seen: dict[str, set[tuple[int, int]]] = {}  # table -> points either player's board showed
        self.move_times: list[float] = []  # when a point first showed on either board

    def table_at(self, moment: float) -> str | None:
        """Its table (a pair of players plays a new game at its table only after one ends)."""
        return self.uid

    def note_board(self, table: str, dots: dict[tuple[int, int], bool], now: float) -> None:
        seen = self.seen.setdefault(table, set())
        new = dots.keys() - seen
        if new:
            seen.update(new)
            self.move_times.append(now)


class Player:
    def __init__(self, number: int, secret: str, pair: Pair, port: int, run: Run) -> None:
        self.nick = f"*c{number}"
        self.secret = secret
        self.pair = pair
        self.port = port
        # its own address, in a network of its own (127.0.N.1; all of 127/8 is this machine's): players
        # have addresses of their own, and the limits per address count each one's requests alone
        self.address = f"127.{number // 250}.{number % 250 + 1}.1"
        self.session: aiohttp.ClientSession | None = None
        self.run = run
        self.rng = random.Random(f"{run.seed}:{number}")
        self.mp: MultiPoints | None = None
        self.login = 0  # logins made so far: the current one's number
        self.commands: list[Command] = []  # of every login
        self.current: dict[int, Command] = {}  # the current login's, by number
        self.k = 0  # the current login's last k
        self.refusals_seen: set[str] = set()
        self.due: float | None = None  # when the move it thinks about goes out
        self.last_invite = -1e9
        self.tab_missing_since: float | None = None
        self.last_choice = -1e9
        self.boards: dict[str, Known] = {}  # table -> the engine's board of its tab
        run.recorder.ok_times[self.nick] = []

    @property
    def partner(self) -> Player:
        return next(player for player in self.pair.players if player is not self)

    # --- the wire ---------------------------------------------------------------------------------------

    async def _get(self, target: str) -> str | None:
        """The body, or None where MultiPoints' getLinkContent catches an IOException and returns ""
        (no connection, no answer in time, an HTTP error status such as nginx's 502)."""
        url = URL(f"http://{HOST}:{self.port}{target}", encoded=True)
        assert self.session is not None
        try:
            async with self.session.get(url, timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT)) as reply:
                body = await reply.text(encoding="utf-8")
                if reply.status != 200:
                    self.run.recorder.no_answer[f"HTTP {reply.status}"] += 1
                    return None
                return body
        except (aiohttp.ClientError, TimeoutError, OSError) as failure:
            self.run.recorder.no_answer[type(failure).__name__] += 1
            return None

    async def log_in(self) -> None:
        """ServerZagram.connect's guestLogin (with lang=en: refusals read in English), until it is
        answered "" (logged in); err.nickInUse counted with how long it lasted."""
        recorder = self.run.recorder
        target = f"/a.kropki?co=guestLogin&idGracza={self.secret}&opis={encode(self.nick)}&lang=en"
        while not self.run.stopping:
            answer = await self._get(target)
            recorder.logins["(no answer)" if answer is None else answer[:40] or "ok"] += 1
            if answer == "":
                recorder.nick_free(self.nick, time.monotonic())
                self.login += 1
                self.mp = MultiPoints(self.nick, self.secret)
                self.current, self.k, self.due = {}, 0, None
                return
            if answer is not None and answer.startswith("err.nickInUse"):
                recorder.nick_in_use += 1
                recorder.nick_refused.setdefault(self.nick, time.monotonic())
            await asyncio.sleep(POLL_EVERY)

    async def play(self) -> None:
        connector = aiohttp.TCPConnector(local_addr=(self.address, 0))
        async with aiohttp.ClientSession(connector=connector) as self.session:
            await self._play()

    async def _play(self) -> None:
        """ThreadMain.run, with a login again after `sd` (MultiPoints exits for good)."""
        while not self.run.stopping:
            if self.mp is None:
                await self.log_in()
                continue
            now = time.monotonic()
            self._decide(now)
            mp = self.mp
            # Every command above k goes out on every poll, as in MultiPoints (ServerZagram.java): the `m`
            # line sets `lastSentCommandNumber = i3;` (i3 is k; the port's handle_text does the same) and
            # ThreadMain.run sends `for (int i = lastSentCommandNumber + 1; i < queue.size() + 1; i++)`,
            # then `lastSentCommandNumber = queue.size();` (the port's query(), MessageQueue(10)'s last 10)
            first = max(mp.last_sent_command_number + 1, len(mp.queue) - 9)
            sent_upto = len(mp.queue)
            for number in range(1, min(mp.last_sent_command_number, sent_upto) + 1):  # k covered, unsent
                command = self.current[number]
                if command.sent is None:
                    command.sent = command.acked = now
                    command.skipped = True
            for number in range(first, sent_upto + 1):
                command = self.current.get(number)
                if command is not None and command.sent is None:
                    command.sent = now
            body = await self._get(mp.url())
            self._read(body, sent_upto, time.monotonic())
            await asyncio.sleep(POLL_EVERY)

    # --- reading ------------------------------------------------------------------------------------

    def _read(self, body: str | None, sent_upto: int, now: float) -> None:
        recorder = self.run.recorder
        if not body:  # handleText: "we got an empty result. Well, lets treat this as normal."
            return
        if body.startswith("sd"):
            recorder.sd.append((now, self.nick))
            for command in self.current.values():
                if command.acked is None:
                    command.abandoned = now
            self.mp = None
            return
        if not (body.startswith("ok") and body.endswith("end")):
            recorder.answers[body[:40]] += 1  # MultiPoints exits here too; this player goes on
            return
        assert self.mp is not None
        lines = body.split("/")
        numbers = next((MESSAGE_NUMBERS.fullmatch(line) for line in lines if line.startswith("m")), None)
        k = int(numbers.group(3)) if numbers else self.k
        where = f"{recorder.at(now)} {self.nick} login {self.login}"
        if k > sent_upto:
            recorder.bad_k.append(f"{where}: k={k} although this login had sent {sent_upto} command(s)")
        if k < self.k:
            recorder.k_back.append(f"{where}: k={k} after k={self.k}")
        self.k = k
        self._refusals(lines)
        for number in range(1, min(k, len(self.current)) + 1):
            command = self.current[number]
            if command.acked is None and command.sent is not None:
                command.acked = now
        self.mp.handle_text(body)
        recorder.failures += self.mp.failures
        self.mp.failures = []
        recorder.ok_times[self.nick].append(now)
        uid = self.pair.uid
        tab = self.mp.tabs.get(uid) if uid else None
        if uid and tab is not None:
            self.pair.note_board(uid, tab.dots, now)

    def _refusals(self, lines: list[str]) -> None:
        """Refusal lines go to the command they answer: the unacknowledged one at their table, or the
        only unacknowledged one; results end the pair's game."""
        section = ""
        for line in lines:
            if line.startswith("q"):
                section = line[1:]
                continue
            ended = RESULT.match(line)
            if ended and section not in ("", "0"):
                self.pair.finished.add(section)
            refusal = REFUSAL.match(line)
            if not refusal:
                continue
            line_id = line.split(".", 1)[0]
            if line_id in self.refusals_seen:
                continue
            self.refusals_seen.add(line_id)
            reason = reason_of(refusal.group(2) or refusal.group(4))
            if refusal.group(3) == "unsaved":  # for everyone at the table: a move of mine waiting is undone
                reason = "(taken back) " + reason
                mine = [
                    c
                    for c in self.current.values()
                    if c.kind == "s" and c.table == section and c.sent is not None and c.refused is None
                ]
                told = mine[-1] if mine and mine[-1].acked is None else None
                if told is not None:
                    told.refused = reason
                moment = self.run.recorder.at(time.monotonic())
                waited = f"its move {told.point} waiting" if told else "no move of its own waiting"
                self.run.recorder.unsaved.append(f"{moment} {self.nick} table {section}: {waited}")
                continue
            waiting = [
                c
                for c in self.current.values()
                if c.sent is not None and c.acked is None and c.refused is None
            ]
            at_table = [c for c in waiting if c.table == section and section != "0"]
            if len(at_table) == 1 or (not at_table and len(waiting) == 1):
                (at_table or waiting)[0].refused = reason
            else:
                self.run.recorder.unattributed[reason] += 1

    # --- deciding -----------------------------------------------------------------------------------

    def _queue(self, kind: str, table: str, point: tuple[int, int] | None = None, red: bool = False) -> None:
        assert self.mp is not None
        number = len(self.mp.queue)
        command = Command(self.nick, self.login, number, kind, table, point, red, time.monotonic())
        self.commands.append(command)
        self.current[number] = command

    def _decide(self, now: float) -> None:
        pair, mp = self.pair, self.mp
        assert mp is not None
        if pair.uid is None or pair.uid in pair.finished:
            self._find_game(now)
            return
        uid = pair.uid
        tab = mp.tabs.get(uid)
        if tab is None:  # not seated back at its game after a login: chooses the table in the lobby
            self.tab_missing_since = self.tab_missing_since or now
            if now - self.tab_missing_since > SUBSCRIBE_AGAIN and now - self.last_choice > SUBSCRIBE_AGAIN:
                mp.subscribe(uid)
                self._queue("b", uid)
                self.last_choice = now
                self.run.recorder.chosen_again += 1
            return
        self.tab_missing_since = None
        game = mp.games.get(uid)
        red = game is not None and game.second == self.nick
        on_move = len(tab.dots) % 2 == int(red)  # standard rules from an empty board: turns alternate
        pending = any(c.kind == "s" and c.acked is None and c.refused is None for c in self.current.values())
        if not on_move or pending or self.run.no_new_moves:
            self.due = None
            return
        if self.due is None:
            self.due = now + self.rng.uniform(*MOVE_DELAY)
            return
        if now < self.due:
            return
        point = self._pick(uid, tab)
        self.due = None
        if point is None:
            return  # the board is full: the server ends the game
        mp.make_move(uid, *point)
        self._queue("s", uid, point, red)

    def _find_game(self, now: float) -> None:
        pair, mp = self.pair, self.mp
        assert mp is not None
        partner = self.partner.nick
        for room, game in mp.games.items():
            if {game.first, game.second} == {self.nick, partner} and room in mp.tabs:
                if room not in pair.finished and room not in pair.tables:
                    pair.uid = room
                    pair.tables.append(room)
                    return
        if now - self.last_invite < INVITE_AGAIN:
            return
        if self is pair.players[0] and partner in mp.lobby:
            mp.invite(partner, GAME_TYPE)
            self._queue("v", "0")
            self.last_invite = now
        elif self is pair.players[1] and partner in mp.invites_incoming:
            mp.accept_invite()
            self._queue("v", "0")
            self.last_invite = now

    def _pick(self, uid: str, tab: GameRoom) -> tuple[int, int] | None:
        """A random point the rules let this player take, from the engine's board kept in step with
        the tab's (MultiPoints') board; a new tab (the table chosen again) is a new board."""
        known = self.boards.get(uid)
        if known is None or known.tab is not tab:
            known = self.boards[uid] = Known(tab, Board(*tab.size), 0, Board(*tab.size).board_indices())
            self.rng.shuffle(known.order)
        board = known.board
        for x, y, red in tab.moves[known.applied :]:
            try:
                board.play(board.index((x - 1, y - 1)), WHITE if red else BLACK)
            except IllegalMove as refused:
                self.run.recorder.tracking.append(f"{self.nick} at table {uid}: ({x}, {y}) {refused}")
        known.applied = len(tab.moves)
        while known.order:
            index = known.order[-1]
            x, y = board.point(index)
            if board.playable(index) and (x + 1, y + 1) not in tab.dots:
                return x + 1, y + 1
            known.order.pop()
        return None


@dataclass
class Known:
    """The engine's board of one MultiPoints tab, and the random order this player tries points in."""

    tab: GameRoom
    board: Board
    applied: int  # the tab's moves played on it
    order: list[int]


@dataclass
class Run:
    """What every player shares: the seed, the switches the schedule throws, the recorder."""

    seed: int
    recorder: Recorder = field(default_factory=Recorder)
    stopping: bool = False
    no_new_moves: bool = False


def secrets_for(count: int, seed: int) -> list[str]:
    """Distinct ids as MultiPoints draws them ((int) (Math.random() * 999999)), seeded."""
    rng = random.Random(f"ids:{seed}")
    return [str(number) for number in rng.sample(range(100000, 999999), count)]


def make_pairs(games: int, port: int, run: Run) -> list[Pair]:
    secrets = secrets_for(2 * games, run.seed)
    pairs = []
    for index in range(games):
        pair = Pair(index)
        for side in range(2):
            number = 2 * index + side + 1
            pair.players.append(Player(number, secrets[number - 1], pair, port, run))
        pairs.append(pair)
    return pairs


def write_log(path: Path, pairs: list[Pair]) -> None:
    """Every command every player sent, one line each, for reading after a run kept with --keep."""
    with open(path, "w") as out:
        for pair in pairs:
            for player in pair.players:
                for c in player.commands:
                    out.write(
                        f"{c.player} login {c.login} #{c.number} {c.kind} table {c.table} point {c.point} "
                        f"queued {c.queued:.1f} sent {c.sent} acked {c.acked} refused {c.refused!r} "
                        f"abandoned {c.abandoned}\n"
                    )
