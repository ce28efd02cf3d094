"""The long fuzz run outside the suite: random and mutated requests at the real server for minutes.

The requests and the judge are tests/test_fuzz.py's `Fuzzer` (the same code the suite runs for a few
seconds): a few guests and two registered players log in, invite each other, accept, move, propose,
chat, subscribe, and send random and mutated query strings, commands, gameTypes and moves to every
endpoint (`/a.kropki` with every `co`, `setUpTable` with a real organiser's key, `/auth.py`, `/sgf/<n>`,
`/games?nick=`, `/tournament/<name>`, odd paths). One request at a time, so message numbers must only grow.

A failure is: an HTTP status of 500 or more, no answer within --timeout, `err.internal` or `nieOk.`, an
answer `/a.kropki` does not give, a malformed reply (not one line, a message that is none of
docs/protocol.md's, unescaped HTML), `j` going back or not moving on when something new is sent, a
record from the archive that does not read or replay, anything logged at ERROR (but aiohttp's
shortened report of a request it could not parse, which docs/operations.md describes), and with
--subprocess a player's id in any line of the server's log (--log-level INFO: the access log's too).

Two ways to run the server:

- in-process (default): the app from `server.app.create_app` on a real 127.0.0.1 port (aiohttp's
  TestServer) with a throwaway migrated SQLite file (or --db), so the hub invariants are checked too
  (every --check-every requests and at the end: everyone at the tables they think they are at, nicks,
  invitations, every board's scores equal the dots in realms). The per-id request limit is lifted (it
  has tests of its own), and a table whose four crosses would never be placed is a failure, not a hang.
- --subprocess: `python -m server serve --migrate` (benchmarks/stream.py's `Server`; its SQLite file, or
  --db), as in production; only what HTTP shows is checked, plus the server's log. The server keeps its
  limit of 20 requests a second per player id, so requests are paced to 18 a second per id (more
  --guests, more requests).
- --subprocess --kill-every SECONDS: the server is SIGKILLed at random moments (every 0.5 to 1.5 times
  SECONDS), mostly in the middle of a request, and started again on the same database; the fuzz goes on
  with the same ids and message numbers. What the clients were answered before the kill must hold after
  it (docs/protocol.md, "After a restart"): every session alive comes back (`ok`, never `sd`), every dot
  of a running game is still on its board, every account logs in, a move, a lobby line or a private line
  answered just before the kill is there, and `j` never goes back; only the request the kill cut off may
  be lost.

    .venv/bin/python benchmarks/fuzz.py --seconds 300 [--seed N] [--subprocess [--kill-every 5]]

Prints the requests sent, answers by status and kind, and every failure with the request that caused it;
exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import aiohttp

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for _path in (str(REPO), str(HERE)):  # the repository (server.*, tests.*) and this folder (stream)
    if _path not in sys.path:
        sys.path.insert(0, _path)

from aiohttp.test_utils import TestServer  # noqa: E402
from stream import HOST, Server  # noqa: E402

from server.app import create_app  # noqa: E402
from server.config import Settings  # noqa: E402
from server.engine.moves import ALPHABET  # noqa: E402
from server.web.accesslog import install_malformed_request_filter  # noqa: E402
from server.web.common import HUB_KEY  # noqa: E402
from server.web.tournament import TOURNAMENTS_KEY  # noqa: E402
from tests.test_fuzz import (  # noqa: E402
    LOGGED_IN,
    REGISTERED,
    Fuzzer,
    Guest,
    Request,
    Send,
    TableInfo,
    check_archived,
    check_hub,
    check_idle,
    http_sender,
    lift_request_limits,
    no_endless_crosses,
)
from tests.web.test_stream import chat_texts  # noqa: E402
from tests.web.zagram import parse_reply  # noqa: E402

PROGRESS_EVERY = 10.0  # seconds between progress lines
ARCHIVE_CHECKED = 3000  # at most this many archived records are read back and replayed at the end
STUCK = 5  # consecutive requests without an answer after which the server is taken to be stuck
PER_ID = 18  # --subprocess: requests a second per player id, under the server's limit of 20
# aiohttp's report of a request it could not parse, as MalformedRequestFilter shortens it: answered 400,
# kept in the log on purpose (docs/operations.md, "Logging")
MALFORMED = re.compile(r"Error handling request from \S+: \w+ \(4\d\d\)")


class Errors(logging.Handler):
    """Keeps every record at ERROR or above that the in-process server logs, malformed requests aside."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []
        self.malformed = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.name == "aiohttp.server" and MALFORMED.fullmatch(record.getMessage()):
            self.malformed += 1
            return
        self.records.append(f"{record.levelname} {record.name}: {self.format(record)[:2000]}")


class Pace:
    """Holds requests back so that no player id sends more than PER_ID a second (a server process keeps
    its per-id limit; in-process the fuzzer lifts it)."""

    def __init__(self) -> None:
        self.sent: defaultdict[str, deque[float]] = defaultdict(deque)

    async def wait(self, request: Request) -> None:
        pairs = request.params if request.raw is None else parse_qsl(request.raw, keep_blank_values=True)
        ids = {value for name, value in pairs if name in ("idGracza", "playerId") and value}
        for secret in ids:
            times = self.sent[secret]
            while times and times[0] < time.monotonic() - 1.0:
                times.popleft()
            if len(times) >= PER_ID:
                await asyncio.sleep(times[0] + 1.0 - time.monotonic())
            times.append(time.monotonic())


async def fuzz(
    fuzzer: Fuzzer,
    send: Send,
    seconds: float,
    *,
    check: Callable[[], None] | None = None,
    check_every: int = 50,
    pace: Pace | None = None,
) -> list[str]:
    """Send requests until the time is up; returns the failures of the hub checks."""
    hub_failures = []
    started = last_progress = time.monotonic()
    silent = 0
    while (now := time.monotonic()) - started < seconds:
        request = fuzzer.next()
        if pace is not None:
            await pace.wait(request)
        status, body = await send(request)
        fuzzer.observe(request, status, body)
        silent = silent + 1 if status == 0 else 0
        if silent >= STUCK:
            hub_failures.append(f"the server stopped answering after {fuzzer.sent} requests")
            break
        if check is not None and fuzzer.sent % check_every == 0:
            try:
                check()
            except AssertionError as broken:
                hub_failures.append(f"after request {fuzzer.sent} ({request.target()[:300]}): {broken}")
                if len(hub_failures) >= 10:
                    break
        if now - last_progress >= PROGRESS_EVERY:
            last_progress = now
            rate = fuzzer.sent / (now - started)
            print(
                f"  {now - started:5.0f} s  {fuzzer.sent} requests ({rate:.0f}/s), failures "
                f"{fuzzer.failures}, tables {len(fuzzer.seen_tables)}, archived {len(fuzzer.archived)}",
                flush=True,
            )
    return hub_failures


# requests that change no session and no game: a kill that cuts one off leaves every check standing
READ_ONLY = {"login", "sgf", "games", "tournament", "paths", "tournaments"}


@dataclass
class Crash:
    """What the clients had been answered when the server was killed. Every answer is given only once its
    effects are written, so all of it must hold after the restart; the request the kill cut off may or
    may not have been done, and its answer, if it came, is not judged."""

    online: list[Guest]  # the sessions alive, as their last answers said
    accounts: list[Guest]  # the registered players whose id was answered "registered" or "logged in"
    dots: dict[int, dict[str, int]]  # table -> its dots, for every game running
    players: dict[int, list[str]]  # and its players, for a failure's report
    cut: Request
    known: bool = False  # the request cut off is a move on a free point or a new line, nothing else
    line: tuple[Guest, str] | None = None  # a lobby line answered "" just before the kill
    private: tuple[Guest, str, str] | None = None  # the same for a private line: writer, recipient, text
    sessions_back: int = 0  # how much the restart was held to
    logins: int = 0
    dots_checked: int = 0
    lines_checked: int = 0
    privates_checked: int = 0

    @classmethod
    def taken(cls, fuzzer: Fuzzer, accounts: list[Guest], cut: Request, *, known: bool) -> Crash:
        running = {uid: info for uid, info in fuzzer.tables.items() if not info.over}
        dots = {uid: dict(info.dots) for uid, info in running.items()}
        players = {uid: list(info.players) for uid, info in running.items()}
        return cls([g for g in fuzzer.guests if g.online], accounts, dots, players, cut, known)

    def may_have_changed(self, guest: Guest) -> bool:
        """Whether the request cut off may have changed the guest's session: it was the guest's (a move
        changes none), or named its id (a mutated one may)."""
        return not self.known and (self.cut.guest is guest or guest.secret in self.cut.target())

    def tables_checked(self, fuzzer: Fuzzer) -> set[int]:
        """The running games whose dots must all be back: not those the request cut off may have changed."""
        cut = self.cut
        if self.known or cut.kind in READ_ONLY or cut.kind.startswith("auth:"):
            return set(self.dots)
        if cut.raw is None and cut.guest is not None and (cut.kind == "poll" or cut.kind.startswith("old:")):
            nick = cut.guest.nick
            return {uid for uid in self.dots if nick not in fuzzer.tables.get(uid, TableInfo()).players}
        return set()  # an organiser's request, garbage, a mutated query, someone else's id: anything


def sections(body: str) -> dict[int, list[str]]:
    """A reply's lines by table (tests/web/zagram.py's reader, as MultiPoints reads them); none if it is
    not a stream reply."""
    return parse_reply(body).sections if body.startswith(("ok/", "sd/")) else {}


def lobby_lines(body: str) -> set[tuple[str, str]]:
    """(nick, text) of the lines said in the lobby that a reply carries."""
    return {(nick, text) for nick, _, text in chat_texts(sections(body).get(0, []))}


def whole_states(body: str) -> dict[int, str]:
    """The tables whose whole board (`sr(`) a reply carries, each with its section of the reply."""
    found = sections(body).items()
    return {uid: "/".join(lines) for uid, lines in found if any(line.startswith("sr(") for line in lines)}


async def answered(fuzzer: Fuzzer, send: Send, request: Request) -> tuple[int, str]:
    """The request sent, and its answer judged and learnt from by the fuzzer."""
    status, body = await send(request)
    fuzzer.observe(request, status, body)
    return status, body


async def check_after_restart(fuzzer: Fuzzer, send: Send, crash: Crash) -> list[str]:
    """Each session alive at the kill polls on with its old id and msgNo, as MultiPoints does: it must be
    back, and the whole boards it gets must hold every dot it had seen (docs/protocol.md, "After a
    restart"). Then every account that had been answered logs in with its id."""
    failures: list[str] = []
    boards: dict[int, str] = {}  # table -> the first whole state of it after the restart
    for guest in crash.online:
        if crash.may_have_changed(guest) or not guest.online:
            continue
        status, body = await answered(fuzzer, send, plain_poll(guest))
        crash.sessions_back += 1
        if not body.startswith("ok/"):
            failures.append(
                f"{guest.nick}'s session, alive at the kill, is not back: {status} {body[:200]!r}"
            )
        boards = whole_states(body) | boards
        if crash.line is not None and crash.line[0] is guest:  # not read yet, so in the lobby's history
            crash.lines_checked += 1
            if (guest.nick, crash.line[1]) not in lobby_lines(body):
                failures.append(f"{guest.nick}'s lobby line {crash.line[1]!r}, answered, is gone")
    if crash.private is not None and crash.private[0] in crash.online:
        writer, nick, text = crash.private
        crash.privates_checked += 1
        if (conversation(writer.nick, nick), text) not in await conversation_read(fuzzer, send, writer, nick):
            failures.append(f"{writer.nick}'s private line {text!r} to {nick}, answered, is gone")
    for guest in crash.accounts:
        if crash.may_have_changed(guest):
            continue
        params = [("co", "loguj"), ("opisGracza", guest.nick), ("idGracza", guest.secret), ("email", "v")]
        status, body = await answered(fuzzer, send, Request("/auth.py", params, kind="login", guest=guest))
        crash.logins += 1
        if not body.startswith(LOGGED_IN):
            failures.append(
                f"{guest.nick}, registered before the kill, cannot log in: {status} {body[:200]!r}"
            )
    for uid in crash.tables_checked(fuzzer) & boards.keys():
        info = fuzzer.tables.get(uid)
        lost = {point for point in crash.dots[uid] if info is None or point not in info.dots}
        if lost:
            failures.append(
                f"table {uid} lost dots the players were shown: {sorted(lost)}; cut off: "
                f"{crash.cut.target()[:300]}; its players {crash.players[uid]}, whole state after the "
                f"restart: {boards[uid][:1500]}"
            )
        crash.dots_checked += len(crash.dots[uid])
    return failures


def conversation(nick: str, other: str) -> str:
    """A private conversation's name in a line's nick field: both nicks in code-point order."""
    return "-".join(sorted((nick, other)))


async def conversation_read(fuzzer: Fuzzer, send: Send, guest: Guest, nick: str) -> set[tuple[str, str]]:
    """The guest's conversation with `nick` asked for (`get._nick`) and read: its lobby lines."""
    ask = [("co", "dodajWpis"), ("idGracza", guest.secret), ("table", "get"), ("newMsgs", f"_{nick}")]
    await answered(fuzzer, send, Request("/a.kropki", ask, kind="old:dodajWpis", guest=guest))
    _, body = await answered(fuzzer, send, plain_poll(guest))
    return lobby_lines(body)


def plain_poll(guest: Guest) -> Request:
    """A poll with the guest's own id and last j, no commands: what MultiPoints sends when idle."""
    params = [("co", "getMsg"), ("idGracza", guest.secret), ("msgNo", str(guest.seen))]
    return Request("/a.kropki", params, kind="poll", guest=guest, msg_no=guest.seen)


def known_move(fuzzer: Fuzzer, rng: random.Random) -> tuple[Request, int, str] | None:
    """A move whose whole effect the fuzzer knows: the guest on move at one of its running games, on a
    free point. (table, point) with it: once answered "", that dot must be on the board after any crash."""
    turns = [
        (uid, info, guest)
        for uid, info in sorted(fuzzer.tables.items())
        if not info.over and info.width
        for guest in fuzzer.guests
        if guest.online and fuzzer.my_turn(guest, info)
    ]
    if not turns:
        return None
    uid, info, guest = rng.choice(turns)
    points = (ALPHABET[x] + ALPHABET[y] for x in range(info.width) for y in range(info.height))
    free = [point for point in points if point not in info.dots]
    if not free:
        return None
    point = rng.choice(free)
    params = [("co", "graczStawiaKropke"), ("idGracza", guest.secret), ("table", str(uid)), ("where", point)]
    return Request("/a.kropki", params, kind="old:graczStawiaKropke", guest=guest), uid, point


def known_line(fuzzer: Fuzzer, rng: random.Random) -> tuple[Request, Guest, str] | None:
    """A lobby line no one said before, by an online guest: once answered "", it is in the lobby."""
    online = [g for g in fuzzer.guests if g.online]
    if not online:
        return None
    guest = rng.choice(online)
    text = f"said before kill {fuzzer.sent}"
    params = [("co", "dodajWpis"), ("idGracza", guest.secret), ("table", "0"), ("newMsgs", text)]
    return Request("/a.kropki", params, kind="old:dodajWpis", guest=guest), guest, text


def known_private(fuzzer: Fuzzer, rng: random.Random) -> tuple[Request, Guest, str, str] | None:
    """A private line no one wrote before, between two online guests: once answered "", it is in their
    conversation."""
    online = [g for g in fuzzer.guests if g.online]
    if len(online) < 2:
        return None
    writer, recipient = rng.sample(online, 2)
    text = f"written before kill {fuzzer.sent}"
    params = [("co", "dodajWpis"), ("idGracza", writer.secret), ("table", f"_{recipient.nick}")]
    request = Request("/a.kropki", [*params, ("newMsgs", text)], kind="old:dodajWpis", guest=writer)
    return request, writer, recipient.nick, text


async def fuzz_with_kills(
    fuzzer: Fuzzer, server: Server, args: argparse.Namespace, pace: Pace
) -> tuple[list[str], list[Crash]]:
    """The fuzz, the server SIGKILLed now and then in the middle of a request and started again on its
    port and database. Before each kill every session polls twice, so that what the fuzzer knows of the
    games is what they were answered: an old-style take-back answered "" shows on the board only at the
    next poll, and a new game at a table only at the one after (the first leaves the table out,
    docs/protocol.md, "A new game on the same table"). Then the next request is the fuzzer's; or, three
    times in ten, a move on a free point by a player on move, or a new line in the lobby or to another
    guest (each 15 in a hundred). The kill comes 0 to 4 ms after it is sent (before the server reads it,
    while it is done, while its writes go in, after its answer), or, for half the moves and lines, the
    moment its answer is read: a move or a line answered "" must then be on the board, in the lobby or in
    the conversation (a server that answers before its writes are in loses it). Returns the failures and
    the crashes."""
    rng = random.Random(fuzzer.rng.random())  # the kills' times apart from the requests' choices
    failures: list[str] = []
    started, crashes = time.monotonic(), []
    accounts: dict[str, Guest] = {}  # nick -> the registered player whose id the server took
    base = f"http://{HOST}:{server.port}"  # the same port at every start

    async def step(send: Send, request: Request) -> None:
        await pace.wait(request)
        _, body = await answered(fuzzer, send, request)
        guest = request.guest
        if request.path == "/auth.py" and guest and (body == REGISTERED or body.startswith(LOGGED_IN)):
            accounts[guest.nick] = guest

    while time.monotonic() - started < args.seconds and len(failures) < 10:
        due = time.monotonic() + rng.uniform(0.5, 1.5) * args.kill_every
        async with aiohttp.ClientSession() as session:  # no connection to the server killed before
            send = http_sender(session, base, args.timeout)
            while time.monotonic() < due:
                await step(send, fuzzer.next())
            if time.monotonic() - started >= args.seconds:
                break
            for guest in [g for g in fuzzer.guests if g.online] * 2:  # a new game comes in two replies
                await step(send, plain_poll(guest))
            roll = rng.random()
            move = known_move(fuzzer, rng) if roll < 0.3 else None
            line = known_line(fuzzer, rng) if 0.3 <= roll < 0.45 else None
            private = known_private(fuzzer, rng) if 0.45 <= roll < 0.6 else None
            cut = move[0] if move else line[0] if line else private[0] if private else fuzzer.next()
            known = move is not None or line is not None or private is not None
            crash = Crash.taken(fuzzer, list(accounts.values()), cut, known=known)
            await pace.wait(cut)
            sending = asyncio.ensure_future(send(cut))
            assert server.proc is not None
            if known and rng.random() < 0.5:
                answer = await sending
                server.proc.kill()
                if answer == (200, "") and move:  # the move was done, and said so: it must come back
                    _, uid, point = move
                    crash.dots[uid][point] = 0
                elif answer == (200, "") and line:
                    _, guest, text = line
                    crash.line = guest, text
                elif answer == (200, "") and private:
                    crash.private = private[1:]
            else:
                await asyncio.sleep(rng.uniform(0, 0.004))
                server.proc.kill()
                await sending  # its answer, if it came, is not judged: the kill may have cut it short
        if server.proc.wait() != -signal.SIGKILL:
            failures.append(f"the server exited with {server.proc.returncode} before it was killed")
            break
        crashes.append(crash)
        server.start(again=True)
        async with aiohttp.ClientSession() as session:
            failures += await check_after_restart(fuzzer, http_sender(session, base, args.timeout), crash)
    return failures, crashes


async def read_archive(fuzzer: Fuzzer, session: aiohttp.ClientSession, base: str) -> tuple[int, list[str]]:
    """Every archived game (the newest ARCHIVE_CHECKED) downloads, reads and replays."""
    failures = []
    numbers = sorted(fuzzer.archived)[-ARCHIVE_CHECKED:]
    for number in numbers:
        async with session.get(f"{base}/sgf/{number}") as response:
            text = await response.text()
            if response.status != 200:
                failures.append(f"/sgf/{number}: HTTP {response.status} {text[:200]!r}")
                continue
        try:
            check_archived(text)
        except Exception as broken:  # noqa: BLE001 - every way a record can fail is reported
            failures.append(f"/sgf/{number}: {type(broken).__name__}: {broken}\n{text[:1000]}")
    return len(numbers), failures


async def in_process(args: argparse.Namespace, seed: int, folder: Path) -> int:
    db = args.db or f"sqlite+aiosqlite:///{folder}/fuzz.sqlite3"
    errors = Errors()
    logging.getLogger().addHandler(errors)
    install_malformed_request_filter()  # as `kropki-server serve` does
    settings = Settings(host=HOST, port=0, db_url=db, migrate=True, unlimited=(HOST,), ai_workers=0)
    app = create_app(settings)
    server = TestServer(app, host=HOST)
    await server.start_server()
    lift_request_limits(app)
    hub = app[HUB_KEY]
    key = await app[TOURNAMENTS_KEY].add_key("fuzz", None, False)
    fuzzer = Fuzzer(seed, guests=args.guests, key=key)
    base = str(server.make_url("/")).rstrip("/")
    try:
        async with aiohttp.ClientSession() as session:
            with no_endless_crosses(fuzzer.hangs):
                send = http_sender(session, base, args.timeout)
                failures = await fuzz(
                    fuzzer, send, args.seconds, check=lambda: check_hub(hub), check_every=args.check_every
                )
            try:
                check_hub(hub)
                check_idle(hub)
            except AssertionError as broken:
                failures.append(f"at the end: {broken}")
            await hub.persistence.flush()
            replayed, archive_failures = await read_archive(fuzzer, session, base)
    finally:
        await server.close()
        logging.getLogger().removeHandler(errors)
    print(
        f"players online at the end: {len(hub.players)}, live tables: {len(hub.tables) - 1}, "
        f"moves played: {hub.moves_played}, malformed requests logged by aiohttp: {errors.malformed}"
    )
    return report(fuzzer, failures, archive_failures, replayed, errors.records)


class ServerOn(Server):
    """stream.Server on the database given (--db: a PostgreSQL one, say)."""

    def __init__(self, db_url: str, *args: Any) -> None:
        super().__init__(*args)
        self.db_url = db_url

    def database(self) -> list[str]:
        return ["--db", self.db_url, "--migrate"]


async def in_subprocess(args: argparse.Namespace, seed: int, folder: Path) -> int:
    db = args.db or f"sqlite+aiosqlite:///{folder}/bench.sqlite3"  # stream.Server's file by default
    python = sys.executable
    subprocess.run([python, "-m", "server", "migrate", "--db", db], cwd=REPO, check=True)
    made = subprocess.run(
        [python, "-m", "server", "tournament-key", "--db", db, "add", "fuzz"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    )
    fuzzer = Fuzzer(seed, guests=args.guests, key=made.stdout.strip())
    server = ServerOn(db, python, args.log_level, folder, None)
    server.start()
    print(f"server pid {server.pid} on port {server.port}")
    base = f"http://{HOST}:{server.port}"
    try:
        if args.kill_every:
            failures, crashes = await fuzz_with_kills(fuzzer, server, args, Pace())
            print(
                f"the server was killed {len(crashes)} times and started again; after the restarts "
                f"{sum(c.sessions_back for c in crashes)} sessions polled on, "
                f"{sum(c.logins for c in crashes)} accounts logged in, "
                f"{sum(c.lines_checked for c in crashes)} lobby lines and "
                f"{sum(c.privates_checked for c in crashes)} private lines answered just before looked for, "
                "and "
                f"{sum(c.dots_checked for c in crashes)} dots of running games were looked for"
            )
        async with aiohttp.ClientSession() as session:
            if not args.kill_every:
                failures = await fuzz(
                    fuzzer, http_sender(session, base, args.timeout), args.seconds, pace=Pace()
                )
            replayed, archive_failures = await read_archive(fuzzer, session, base)
    finally:
        server.stop()
    log = server.log_path.read_text(errors="replace").splitlines()
    bad = [line for line in log if re.search(r" level=(ERROR|CRITICAL) ", line) or "request failed" in line]
    logged = [line for line in bad if not MALFORMED.search(line)]
    print(f"server log: {len(log)} lines, {len(bad) - len(logged)} malformed requests reported by aiohttp")
    if server.exited_early is not None:
        failures.append(f"the server exited on its own with {server.exited_early}")
    # a player's id is a password: in no line of the log, whatever the request (--log-level INFO for the
    # access log's lines too)
    failures += [f"an id in the log: {line[:300]}" for line in log if any(s in line for s in fuzzer.ids_used)]
    return report(fuzzer, failures, archive_failures, replayed, logged)


def report(
    fuzzer: Fuzzer,
    failures: list[str],
    archive_failures: list[str],
    replayed: int,
    logged: list[str],
) -> int:
    print(fuzzer.summary())
    print(f"archived records read back and replayed: {replayed}")
    for problem in fuzzer.problems:
        print(f"FAILURE {problem}")
    if fuzzer.failures > len(fuzzer.problems):
        print(f"... and {fuzzer.failures - len(fuzzer.problems)} more failures")
    for line in fuzzer.hangs[:20]:
        print(f"FAILURE hang: {line}")
    for line in failures:
        print(f"FAILURE hub: {line}")
    for line in archive_failures[:20]:
        print(f"FAILURE archive: {line}")
    for line in logged[:20]:
        print(f"FAILURE logged: {line}")
    bad = fuzzer.failures + len(fuzzer.hangs) + len(failures) + len(archive_failures) + len(logged)
    print("result:", "FAILED" if bad else "OK", f"({bad} failures)")
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=300.0, help="how long to fuzz (default 300)")
    parser.add_argument("--seed", type=int, help="the random seed (default: a new one, printed)")
    parser.add_argument("--subprocess", action="store_true", help="fuzz `python -m server serve` instead")
    parser.add_argument(
        "--guests", type=int, help="guests besides the two registered players (default 5, --subprocess 15)"
    )
    parser.add_argument("--check-every", type=int, default=50, help="hub invariants every N requests")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds a request may take")
    parser.add_argument("--db", help="a database URL instead of a throwaway SQLite file (empty or migrated)")
    parser.add_argument("--log-level", default="WARNING", help="--subprocess: the server's log level")
    parser.add_argument(
        "--kill-every",
        type=float,
        help="--subprocess: SIGKILL the server every 0.5 to 1.5 times SECONDS and start it again",
    )
    args = parser.parse_args()
    if args.kill_every and not args.subprocess:
        parser.error("--kill-every needs --subprocess")
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    if args.guests is None:
        args.guests = 15 if args.subprocess else 5
    mode = "a server process" if args.subprocess else "the app in this process"
    print(f"fuzzing {mode} for {args.seconds:.0f} s, seed {seed}", flush=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kropki-fuzz-") as folder:
        run = in_subprocess if args.subprocess else in_process
        status = asyncio.run(run(args, seed, Path(folder)))
    print(f"took {time.monotonic() - started:.0f} s; rerun with --seed {seed}")
    return status


if __name__ == "__main__":
    sys.exit(main())
