"""Abuse: what one attacker's flood does to everybody else, on the real server.

Each section starts the real server as a subprocess (benchmarks/stream.py's Server: `python -m server
serve` on a free 127.0.0.1 port, a throwaway SQLite file, `--unlimited 127.0.0.1` so that one machine can
stand for many addresses, `--log-level WARNING` unless told otherwise), floods it one way, and meanwhile
measures a normal player from a process of its own. It prints its figures and whether the player stayed
within the target; the server is always stopped at the end. Only 127.0.0.1 is contacted and every loop is
bounded in time.

Section "connections" (connection_flood): --flood connections, half of them trickling a request's headers
in a byte a second (slowloris), half long-polling (`wait=30`), each opened again as soon as the server
closes it, against a server limited to --open-files files (1,024: systemd's default, which the shipped
unit used to keep; 1,100 such connections used to lock everybody out and write 310 MB of log in 75 s).
Meanwhile, once a second, a new guest logs in and polls on a new connection; login + poll is measured.
Target: p99 below 1 s, no failure, the server's log below 1 MB.

Section "journal" (journal_flood): one guest, from an address of its own (127.0.0.2: the server's
--unlimited 127.0.0.1 does not cover it), sends the worst it can for --journal-seconds (600: the issue's
10 minutes): moves and take-backs on its analysis tables, as many as the server's limit on game actions
takes (sending more only gets the surplus refused), polling as often as the limit on requests allows.
Before issue 18.2 that wrote about 1,600 journal rows a second, and a restart after an hour of it took
87 s. Then the server is killed (SIGKILL) and started again. Printed: the rows written
and the rows left in the journal, the restart time, memory, the normal player's p99 during the flood.
Target: restart under 5 s.

Section "whole-states" (whole_state_flood): --players guests, --tables of them at an analysis table each,
make the lobby's whole state large; then --burst anonymous polls with msgNo=0 are sent at once, over as
many connections (5,000 of them at 100-166 KB each used to take 1.6 GB and stall a normal client for
12.5 s), and then the same from a limited address. Printed: the state's size, how long the burst took,
the server's memory, how many a limited address got, the normal player's p99. Target: p99 below 2 s
(12.5 s before), RSS below 300 MB.

Section "slots" (slot_flood): --slot-addresses addresses (127.0.1.x) each try --logins-per-address guest
logins (167 addresses used to fill all 5,000 player slots in 6 s), then every guest that got in tries
--tables-per-guest analysis tables (260 guests used to fill all 2,500 tables in 1.6 s). Printed: what got
in and what was refused with which answer; then a registered player registers and logs in. Target: the
registered player gets in, and the flood holds no more than its caps.

Section "logins" (login_flood): --login-flood failed logins sent at once to a server at --id-hash-cost
--login-cost, each from an address in a network of its own (10.N.M.1 through a pretend proxy, as
benchmarks/attacks.py's sections: each address's first try, which no per-address or per-network limit
stops), each for a made-up nick: every one costs a scrypt check. Meanwhile the normal player. 0.2 s into
the flood, a registered player logs in from the address she registered from. Printed: how long the flood
took to be answered, the answers, the server's RSS before and at its peak, her login's answer and time.
Target: every flood answer `nieOk.wrongNickOrId`, or `nieOk.tooFast` for a check that would have waited
more than idhash.MOST_WAIT for a thread, the whole flood answered within 1.5 times MOST_WAIT and a
second, the player's p99 below 1 s, the server's peak no more above its RSS before than the id hashes'
threads' scrypt memory (server/store/idhash.py: HASH_THREADS checks at 128 * r * N bytes each) and 64 MB,
and her login in at most three scrypt checks' time and 250 ms (the flood's checks wait behind hers).
Before the hashes had threads of their own they ran on asyncio's default ones (6 on 2 vCPUs, up to 32):
863 MB at cost 17 on this project's machine, and her login waited behind the whole flood
(docs/performance.md, "Abuse limits").

Section "ai": floods of the AI players' worker processes; section "undo": take-backs on analysis tables
of a long game (benchmarks/aiflood.py).

Section "frames": one client's flood of WebSocket frames on /push, each kind in turn (benchmarks/frames.py).

Section "archive": two guests who play a dot, resign and agree a new game as fast as they may, each
game archived for good (benchmarks/archiveflood.py).

Section "rows": the bytes each kind of row a guest or a cheap account adds for good takes on SQLite, and
the megabytes a day one guest, one network and 100 networks could add at the fastest rate the limits
allow (benchmarks/diskrows.py).

    .venv/bin/python benchmarks/abuse.py --only connections
    .venv/bin/python benchmarks/abuse.py --only journal --journal-seconds 600
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import re
import resource
import sqlite3
import sys
import tempfile
import time
import urllib.request
from collections import Counter
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

import aiflood  # noqa: E402
import archiveflood  # noqa: E402
import attacks  # noqa: E402
import diskrows  # noqa: E402
import frames  # noqa: E402
from stream import (  # noqa: E402
    HOST,
    HttpConnection,
    Server,
    add_server_arguments,
    argument_parser,
    connect,
    ms,
    parse_head,
    percentile,
    server_revision,
    stop_as_on_ctrl_c,
)

from server.hub.model import PLAYER_ACTIONS  # noqa: E402
from server.hub.rates import Bucket  # noqa: E402
from server.store.idhash import HASH_THREADS, MOST_WAIT, IdHashing, R  # noqa: E402
from server.web.clients import PER_ID  # noqa: E402

TARGET_P99 = 1.0  # seconds for a new player's login + first poll
TARGET_LOG_BYTES = 1_000_000
RECONNECT_DELAY = 0.5  # seconds an attacker waits before opening a closed connection again
TRICKLE_EVERY = 1.0  # seconds between a slowloris connection's bytes
SAMPLE_EVERY = 0.5  # seconds between readings of the server's memory and open files
OWNER_AFTER = 0.2  # seconds into a login flood that the account's owner logs in


# --- section "connections" ----------------------------------------------------------------------------


@dataclass
class FloodFigures:
    cap: int = 0  # the server's, fitted below its open-file limit
    opened: int = 0
    most_open: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)  # how each flood connection ended
    connect_errors: int = 0
    server_counts: dict[str, float] = field(default_factory=dict)  # from /metrics
    rss_mb: list[float] = field(default_factory=list)
    server_files: list[int] = field(default_factory=list)
    log_bytes: int = 0
    log_lines: int = 0
    log_warnings: list[str] = field(default_factory=list)  # the first lines at WARNING or above
    player_seconds: list[float] = field(default_factory=list)
    player_failures: list[str] = field(default_factory=list)
    generator_cpu: float = 0.0


class Flood:
    """--flood connections on one event loop, each opened again after the server closes it."""

    def __init__(self, port: int, lobby_last: int, figures: FloodFigures) -> None:
        self.port = port
        self.figures = figures
        self.open_now = 0
        self.lobby_last = lobby_last  # the newest lobby event seen: a poll from there waits for news

    async def attacker(self, slow: bool, start_at: float, stop_at: float) -> None:
        await asyncio.sleep(max(0.0, start_at - time.monotonic()))
        while time.monotonic() < stop_at:
            try:
                reader, writer = await asyncio.open_connection(HOST, self.port)
            except OSError:
                self.figures.connect_errors += 1
                await asyncio.sleep(RECONNECT_DELAY)
                continue
            self.figures.opened += 1
            self.open_now += 1
            self.figures.most_open = max(self.figures.most_open, self.open_now)
            try:
                if slow:
                    outcome = await self._trickle(reader, writer, stop_at)
                else:
                    writer.write(
                        f"GET /a.kropki?co=getMsg&msgNo={self.lobby_last}&wait=30 HTTP/1.1\r\n"
                        f"Host: {HOST}\r\nConnection: close\r\n\r\n".encode()
                    )
                    outcome = await self._until_closed(reader, stop_at)
            except OSError:
                outcome = "closed by the server"
            finally:
                writer.transport.abort()
                self.open_now -= 1
            self.figures.outcomes[outcome] += 1
            await asyncio.sleep(RECONNECT_DELAY)

    async def _trickle(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, stop_at: float
    ) -> str:
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: kropki\r\n")
        padding = b"X-Padding: " + b"x" * 8000  # a byte a second: never done
        for byte in range(len(padding)):
            try:
                async with asyncio.timeout(min(TRICKLE_EVERY, max(0.0, stop_at - time.monotonic()))):
                    return _outcome(await reader.read(4096))
            except TimeoutError:
                if time.monotonic() >= stop_at:
                    return "held to the end"
            writer.write(padding[byte : byte + 1])
        return "held to the end"

    async def _until_closed(self, reader: asyncio.StreamReader, stop_at: float) -> str:
        try:
            async with asyncio.timeout(max(0.0, stop_at - time.monotonic())):
                answer = await reader.read()
        except TimeoutError:
            return "held to the end"
        numbers = re.search(rb"\r\n\r\n\w+/m\d+\.(\d+)\.", answer)
        if numbers:
            self.lobby_last = max(self.lobby_last, int(numbers.group(1)))
        return _outcome(answer)


def _outcome(answer: bytes) -> str:
    if not answer:
        return "closed by the server"
    if answer.startswith(b"HTTP/1.1 503"):
        return "refused (503)"
    if answer.startswith(b"HTTP/1.1 200"):
        return "long poll answered"
    return f"answered {answer[9:12].decode(errors='replace')}"


def player(port: int, start_at: float, stop_at: float, timeout: float, results: Connection) -> None:
    """Runs in a process of its own, so that the flood's event loop does not slow the measurement."""
    seconds: list[float] = []
    failures: list[str] = []

    async def once(number: int) -> None:
        secret = f"fp{number}"  # a guest's id has at most 9 characters
        started = time.monotonic()
        try:
            async with asyncio.timeout(timeout):
                conn = await connect(port, timeout)
                try:
                    status, body = await conn.get(
                        f"/a.kropki?co=guestLogin&idGracza={secret}&opis=%2AP{number}&lang=en"
                    )
                    if (status, body) != (200, b""):
                        raise ValueError(f"login answered {status} {body[:40]!r}")
                    status, body = await conn.get(
                        f"/a.kropki?co=getMsg&idGracza={secret}&msgNo=0&msgFromClient=x"
                    )
                    if status != 200 or not body.startswith(b"ok/"):
                        raise ValueError(f"poll answered {status} {body[:40]!r}")
                finally:
                    conn.close()
            seconds.append(time.monotonic() - started)
        except (OSError, TimeoutError, ValueError) as failure:
            failures.append(f"{type(failure).__name__}: {failure}")

    async def main() -> None:
        await asyncio.sleep(max(0.0, start_at - time.monotonic()))
        number = 0
        while time.monotonic() < stop_at:
            next_at = time.monotonic() + 1.0
            await once(number)
            number += 1
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))

    asyncio.run(main())
    results.send((seconds, failures))


def connection_flood(
    python: str,
    workdir: Path,
    *,
    flood: int = 1_100,
    seconds: float = 30.0,
    ramp: float = 3.0,
    open_files: int = 1_024,
    max_connections: int | None = None,
    log_level: str = "WARNING",
    timeout: float = 10.0,
) -> FloodFigures:
    """Flood a real server with slow and long-polling connections; measure a normal player meanwhile."""
    _raise_own_open_files(flood + 200)
    extra = ("--max-connections", str(max_connections)) if max_connections else ()
    server = Server(python, log_level, workdir, None, extra, open_files=open_files)
    figures = FloodFigures()
    server.start()
    try:
        base = f"http://{HOST}:{server.port}"
        with urllib.request.urlopen(f"{base}/a.kropki?co=getMsg&msgNo=0", timeout=timeout) as lobby:
            lobby_last = int(re.match(rb"\w+/m\d+\.(\d+)\.", lobby.read()).group(1))
        start = time.monotonic()
        stop_at = start + ramp + seconds
        receiving, sending = multiprocessing.get_context("fork").Pipe(duplex=False)
        measuring = multiprocessing.get_context("fork").Process(
            target=player, args=(server.port, start + ramp, stop_at, timeout, sending), daemon=True
        )
        measuring.start()
        cpu_before = time.process_time()
        asyncio.run(_flood(server, flood, lobby_last, start, ramp, stop_at, figures))
        figures.generator_cpu = (time.process_time() - cpu_before) / (ramp + seconds)
        if receiving.poll(timeout + 5):
            figures.player_seconds, figures.player_failures = receiving.recv()
        measuring.join(5)
        with urllib.request.urlopen(f"{base}/metrics", timeout=timeout) as page:
            metrics = page.read().decode()
        figures.server_counts = _connection_counts(metrics)
        capped = re.search(r"^kropki_connections_max (\S+)$", metrics, re.M)
        figures.cap = int(float(capped.group(1))) if capped else 0  # none before issue 18.9
    finally:
        server.stop()
    text = server.log_path.read_text(errors="replace")
    lines = text.splitlines()
    figures.log_bytes, figures.log_lines = server.log_path.stat().st_size, len(lines)
    figures.log_warnings = [line for line in lines if re.search(r" level=(WARNING|ERROR|CRITICAL) ", line)][
        :5
    ]
    return figures


async def _flood(
    server: Server,
    flood: int,
    lobby_last: int,
    start: float,
    ramp: float,
    stop_at: float,
    figures: FloodFigures,
) -> None:
    attack = Flood(server.port, lobby_last, figures)
    attackers = [
        asyncio.create_task(attack.attacker(index % 2 == 0, start + ramp * index / flood, stop_at))
        for index in range(flood)
    ]
    while time.monotonic() < stop_at:
        figures.rss_mb.append(server.rss_mb())
        figures.server_files.append(_open_files(server.pid))
        await asyncio.sleep(SAMPLE_EVERY)
    await asyncio.gather(*attackers)


def _open_files(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def _connection_counts(metrics: str) -> dict[str, float]:
    counts = {}
    for line in metrics.splitlines():
        found = re.match(r'kropki_connections_(closed_total\{reason="(\w+)"\}|refused_total) (\S+)', line)
        if found:
            counts[found.group(2) or "refused"] = float(found.group(3))
    return counts


def _raise_own_open_files(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(needed, soft)), hard))
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < needed:
        raise RuntimeError(f"this script needs {needed} open files; the hard limit is {hard}")


def connections_section(args: argparse.Namespace, workdir: Path) -> bool:
    figures = connection_flood(
        args.python,
        workdir,
        flood=args.flood,
        seconds=args.seconds,
        ramp=args.ramp,
        open_files=args.open_files,
        max_connections=args.max_connections,
        log_level=args.log_level,
        timeout=args.timeout,
    )
    player = sorted(figures.player_seconds)
    p99 = percentile(player, 99) if player else float("inf")
    log_ok = figures.log_bytes < TARGET_LOG_BYTES
    cap = f"a cap of {figures.cap} connections" if figures.cap else "no cap on connections"
    print(f"server: {args.open_files} open files, {cap}")
    length = args.ramp + args.seconds
    print(f"flood: {args.flood} connections, half slowloris, half long polls, for {length:g} s")
    print(f"connections opened: {figures.opened} (at most {figures.most_open} open at once)")
    for outcome, number in sorted(figures.outcomes.items()):
        print(f"    {outcome}: {number}")
    print(f"    connect errors: {figures.connect_errors}")
    counts = ", ".join(f"{name} {value:.0f}" for name, value in sorted(figures.server_counts.items()))
    print(f"closed/refused by the server (/metrics): {counts}")
    rss = figures.rss_mb or [0.0]
    files = max(figures.server_files or [0])
    print(f"server RSS MB: start {rss[0]:.1f} peak {max(rss):.1f}; open files peak {files}")
    print(
        f"server log: {figures.log_bytes:,} bytes, {figures.log_lines} lines "
        f"(target < {TARGET_LOG_BYTES:,} bytes){'' if log_ok else '  MISSED'}"
    )
    for line in figures.log_warnings:
        print(f"    {line[:160]}")
    print(f"load generator CPU: {figures.generator_cpu:.0%} of one core")
    print(f"normal player login+poll: {len(player)} done, {len(figures.player_failures)} failed")
    for failure in figures.player_failures[:5]:
        print(f"    {failure}")
    met = p99 < TARGET_P99 and not figures.player_failures and log_ok
    print(
        f"normal player login+poll ms: {ms(player, 50, 99)} (target p99 < {TARGET_P99 * 1000:.0f})"
        f"{'' if met else '  MISSED'}"
    )
    return met


def connections_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("section connections")
    group.add_argument("--flood", type=int, default=1_100, help="flood connections open at once")
    group.add_argument(
        "--open-files", type=int, default=1_024, help="the server's open-file limit (soft and hard)"
    )
    group.add_argument(
        "--max-connections", type=int, help="the server's --max-connections (default: its own)"
    )


# --- the other floods' shared parts -------------------------------------------------------------------

ANALYSIS = "s.{nick}.1010s0..a.a.n...c___SUsuen{nick}."  # inviting oneself to an analysis table (10x10)
ATTACK_SHARE = 0.97  # of the server's allowances the journal flood uses: all of it but timing jitter
TARGET_RESTART = 5.0  # seconds from starting the server again to its first answer
# A burst of whole states: the normal player's login + poll while 5,000 of them go out (it waited 12.5 s
# before they were shared), and the server's memory (1.64 GB before).
TARGET_BURST_P99 = 2.0
TARGET_BURST_RSS_MB = 300


class Guest:
    """One player on one keep-alive connection from a chosen source address (127.0.0.0/8 is all this
    machine's): its own numbered commands, resent above the k the server acknowledged, as MultiPoints does."""

    def __init__(self, conn: HttpConnection, secret: str, nick: str) -> None:
        self.conn, self.secret, self.nick = conn, secret, nick
        self.seen = 0
        self.sent = 0  # commands numbered so far
        self.acknowledged = 0
        self.pending: list[str] = []

    async def login(self) -> bytes:
        _, body = await self.conn.get(
            f"/a.kropki?co=guestLogin&idGracza={self.secret}&opis={quote(self.nick)}"
        )
        return body

    def send(self, kind: str, table: int, text: str) -> None:
        self.sent += 1
        self.pending.append(f"{kind}{self.sent}.{table}.{text}")

    async def poll(self) -> bytes:
        commands = "/".join(self.pending) or "x"
        _, body = await self.conn.get(
            f"/a.kropki?co=getMsg&idGracza={self.secret}&msgNo={self.seen}&msgFromClient={quote(commands)}"
        )
        head = parse_head(body)
        if head is not None:
            self.seen, done = head
            self.pending = self.pending[max(0, done - self.acknowledged) :]
            self.acknowledged = max(self.acknowledged, done)
        return body


async def connect_from(port: int, source: str, timeout: float) -> HttpConnection:
    loop = asyncio.get_running_loop()
    _, conn = await asyncio.wait_for(
        loop.create_connection(lambda: HttpConnection(port, timeout), HOST, port, local_addr=(source, 0)),
        timeout,
    )
    return conn


def tables_in(body: bytes) -> list[int]:
    return [int(uid) for uid in re.findall(rb"/q(\d+)(?=/)", body) if uid != b"0"]


def measure_player(port: int, start_at: float, stop_at: float, timeout: float) -> tuple[Any, Connection]:
    """benchmarks' normal player (a login and a whole-state poll a second) in a process of its own."""
    receiving, sending = multiprocessing.get_context("fork").Pipe(duplex=False)
    process = multiprocessing.get_context("fork").Process(
        target=player, args=(port, start_at, stop_at, timeout, sending), daemon=True
    )
    process.start()
    return process, receiving


def player_report(process: Any, receiving: Connection, timeout: float) -> tuple[list[float], list[str]]:
    result: tuple[list[float], list[str]] = ([], ["no report"])
    if receiving.poll(timeout + 5):
        result = receiving.recv()
    process.join(5)
    return sorted(result[0]), result[1]


def print_player(seconds: list[float], failures: list[str], target: float = TARGET_P99) -> bool:
    p99 = percentile(seconds, 99) if seconds else float("inf")
    met = p99 < target and not failures
    print(f"normal player login+poll: {len(seconds)} done, {len(failures)} failed")
    for failure in failures[:5]:
        print(f"    {failure}")
    print(
        f"normal player login+poll ms: {ms(seconds, 50, 99)} (target p99 < {target * 1000:.0f})"
        f"{'' if met else '  MISSED'}"
    )
    return met


def sample_rss(server: Server, until: float, samples: list[float]) -> asyncio.Task[None]:
    async def sample() -> None:
        while time.monotonic() < until:
            samples.append(server.rss_mb())
            await asyncio.sleep(SAMPLE_EVERY)

    return asyncio.create_task(sample())


# --- section "journal" ----------------------------------------------------------------------------------


@dataclass
class JournalFigures:
    commands: int = 0
    refused: int = 0  # commands answered with an error line
    answers: Counter[str] = field(default_factory=Counter)
    written: int = 0  # journal entries the flood's tables were given (the last entry's number)
    rows: int = 0  # journal rows in the database at the kill
    database_mb: float = 0.0
    rss_mb: list[float] = field(default_factory=list)
    restart_seconds: float = 0.0
    restored_rss_mb: float = 0.0
    tables_back: int = 0
    player_seconds: list[float] = field(default_factory=list)
    player_failures: list[str] = field(default_factory=list)


def journal_flood(python: str, workdir: Path, *, seconds: float, timeout: float) -> JournalFigures:
    figures = JournalFigures()
    server = Server(python, "WARNING", workdir, None)
    server.start()
    try:
        start = time.monotonic()
        process, receiving = measure_player(server.port, start, start + seconds, timeout)
        tables = asyncio.run(_journal_attack(server, start + seconds, timeout, figures))
        figures.player_seconds, figures.player_failures = player_report(process, receiving, timeout)
        database = workdir / "bench.sqlite3"
        with contextlib.closing(sqlite3.connect(database)) as db:  # a connection's own `with` leaves it open
            figures.rows = db.execute("SELECT count(*) FROM journal").fetchone()[0]
            marks = ",".join(str(uid) for uid in tables) or "0"
            figures.written = db.execute(
                "SELECT coalesce(sum(s), 0) FROM "
                f"(SELECT max(seq) s FROM journal WHERE uid IN ({marks}) GROUP BY uid)"
            ).fetchone()[0]
        figures.database_mb = sum(path.stat().st_size for path in workdir.glob("bench.sqlite3*")) / 1e6
    finally:
        assert server.proc is not None
        server.proc.kill()  # the worst moment to stop: no clean stop, nothing flushed by it
        server.proc.wait()
    again = Server(python, "WARNING", workdir, None)
    started = time.monotonic()
    again.start()
    figures.restart_seconds = time.monotonic() - started
    try:
        figures.restored_rss_mb = again.rss_mb()
        with urllib.request.urlopen(
            f"http://{HOST}:{again.port}/a.kropki?co=getMsg&msgNo=0", timeout=timeout
        ) as lobby:
            state = lobby.read()
        figures.tables_back = sum(1 for uid in tables if f"/d{uid}.".encode() in state)
    finally:
        again.stop()
    return figures


async def _journal_attack(
    server: Server, stop_at: float, timeout: float, figures: JournalFigures
) -> list[int]:
    """The most journal rows one player can make: a move and its take-back, round its analysis tables,
    as many as its game-action allowance takes (flooding faster only gets the extra refused, and a
    refused take-back leaves the next move illegal), in polls as frequent as its request allowance."""
    attacker = Guest(await connect_from(server.port, "127.0.0.2", timeout), "atk1", "*Atk")
    if await attacker.login() != b"":
        raise RuntimeError("the attacker could not log in")
    tables: list[int] = []
    for _ in range(3):  # as many analysis tables as one player may have
        attacker.send("v", 0, ANALYSIS.format(nick="*Atk"))
        tables += [uid for uid in tables_in(await attacker.poll()) if uid not in tables]
    if not tables:
        raise RuntimeError("the attacker got no analysis table")
    sampler = sample_rss(server, stop_at, figures.rss_mb)
    rate, burst = PLAYER_ACTIONS
    allowance = Bucket(ATTACK_SHARE * rate, burst - 2)  # the server's own bucket, a hair behind it
    poll_every = 1 / (ATTACK_SHARE * PER_ID[0])
    turn = 0
    while time.monotonic() < stop_at:
        started = time.monotonic()
        while allowance.take(started):  # a move, then its take-back, then the next table's move...
            uid = tables[turn // 2 % len(tables)]
            attacker.send(*(("s", uid, "ee") if turn % 2 == 0 else ("u", uid, "undo")))
            turn += 1
            figures.commands += 1
        body = await attacker.poll()
        answer = body[:14].decode(errors="replace").split("/")[0]
        figures.answers[answer] += 1
        figures.refused += len(re.findall(rb"/c[a-z]\d+_\d+\.\.e\.", body))
        await asyncio.sleep(max(0.0, poll_every - (time.monotonic() - started)))
    await sampler
    attacker.conn.close()
    return tables


def journal_section(args: argparse.Namespace, workdir: Path) -> bool:
    figures = journal_flood(args.python, workdir, seconds=args.journal_seconds, timeout=args.timeout)
    print(
        "flood: one guest from 127.0.0.2, moves and take-backs on 3 analysis tables "
        f"for {args.journal_seconds:g} s"
    )
    answers = ", ".join(f"{answer} {number}" for answer, number in figures.answers.most_common())
    print(
        f"game actions sent: {figures.commands:,} ({figures.commands / args.journal_seconds:.1f} a second), "
        f"{figures.refused:,} refused; polls answered: {answers}"
    )
    rate = figures.written / args.journal_seconds
    print(f"journal entries written for the flood's tables: {figures.written:,} ({rate:.1f} a second)")
    print(
        f"journal rows in the database at the kill: {figures.rows:,}; "
        f"database files {figures.database_mb:.1f} MB"
    )
    rss = figures.rss_mb or [0.0]
    print(f"server RSS MB during the flood: start {rss[0]:.1f} peak {max(rss):.1f}")
    met = figures.restart_seconds < TARGET_RESTART and figures.tables_back == 3
    print(
        f"restart after SIGKILL: {figures.restart_seconds:.2f} s to the first answer "
        f"(target < {TARGET_RESTART:g} s), RSS {figures.restored_rss_mb:.1f} MB, "
        f"{figures.tables_back} of 3 tables back{'' if met else '  MISSED'}"
    )
    return print_player(figures.player_seconds, figures.player_failures) and met


def journal_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("section journal")
    group.add_argument("--journal-seconds", type=float, default=600.0, help="length of the journal flood")


# --- section "whole-states" -----------------------------------------------------------------------------


@dataclass
class WholeStateFigures:
    state_bytes: int = 0
    answered: int = 0
    failed: list[str] = field(default_factory=list)
    burst_seconds: float = 0.0
    rss_mb: list[float] = field(default_factory=list)
    limited: Counter[str] = field(default_factory=Counter)
    player_seconds: list[float] = field(default_factory=list)
    player_failures: list[str] = field(default_factory=list)


def whole_state_flood(
    python: str, workdir: Path, *, players: int, tables: int, burst: int, timeout: float
) -> WholeStateFigures:
    _raise_own_open_files(burst + 200)
    figures = WholeStateFigures()
    extra = ("--max-players", str(players + 100), "--registered-share", "0")
    server = Server(python, "WARNING", workdir, None, extra)
    server.start()
    try:
        asyncio.run(_populate(server.port, players, tables, timeout))
        with urllib.request.urlopen(
            f"http://{HOST}:{server.port}/a.kropki?co=getBMsg&msgNo=0", timeout=timeout
        ) as lobby:
            figures.state_bytes = len(lobby.read())
        start = time.monotonic()
        process, receiving = measure_player(server.port, start, start + 5.0, timeout)
        asyncio.run(_burst(server, burst, timeout, figures))
        figures.player_seconds, figures.player_failures = player_report(process, receiving, timeout)
    finally:
        server.stop()
    return figures


async def _populate(port: int, players: int, tables: int, timeout: float) -> None:
    conns = [await connect(port, timeout) for _ in range(20)]

    async def one(index: int) -> None:
        guest = Guest(conns[index % len(conns)], f"wp{index}", f"*W{index}")
        await guest.login()
        if index < tables:
            guest.send("v", 0, ANALYSIS.format(nick=f"*W{index}"))
            await guest.poll()

    for first in range(0, players, len(conns)):
        await asyncio.gather(*(one(index) for index in range(first, min(players, first + len(conns)))))
    for conn in conns:
        conn.close()


async def _burst(server: Server, burst: int, timeout: float, figures: WholeStateFigures) -> None:
    sampler = sample_rss(server, time.monotonic() + 5.0, figures.rss_mb)
    conns = await asyncio.gather(
        *(connect(server.port, timeout * 3) for _ in range(burst)), return_exceptions=True
    )
    ready = [conn for conn in conns if isinstance(conn, HttpConnection)]
    figures.failed += [f"connect: {conn}" for conn in conns if not isinstance(conn, HttpConnection)]
    started = time.monotonic()
    answers = await asyncio.gather(
        *(conn.get("/a.kropki?co=getBMsg&msgNo=0") for conn in ready), return_exceptions=True
    )
    figures.burst_seconds = time.monotonic() - started
    for answer in answers:
        if isinstance(answer, tuple) and answer[0] == 200 and answer[1].startswith(b"sd/"):
            figures.answered += 1
        else:
            figures.failed.append(repr(answer)[:80])
    for conn in ready:
        conn.close()
    limited = await connect_from(server.port, "127.0.0.3", timeout)
    for _ in range(100):  # an address the server does not exempt
        status, body = await limited.get("/a.kropki?co=getBMsg&msgNo=0")
        figures.limited["whole state" if body.startswith(b"sd/") else body[:20].decode(errors="replace")] += 1
    limited.close()
    await sampler


def whole_states_section(args: argparse.Namespace, workdir: Path) -> bool:
    figures = whole_state_flood(
        args.python, workdir, players=args.players, tables=args.tables, burst=args.burst, timeout=args.timeout
    )
    print(
        f"lobby: {args.players} guests, {args.tables} analysis tables; "
        f"its whole state {figures.state_bytes:,} bytes"
    )
    print(
        f"burst: {args.burst} polls with msgNo=0 at once, one a connection: {figures.answered} whole states "
        f"in {figures.burst_seconds:.2f} s, {len(figures.failed)} failed"
    )
    for failure in figures.failed[:3]:
        print(f"    {failure}")
    rss = figures.rss_mb or [0.0]
    print(f"server RSS MB: start {rss[0]:.1f} peak {max(rss):.1f}")
    print("100 more from a limited address: " + ", ".join(f"{k} {v}" for k, v in figures.limited.items()))
    peak_ok = max(rss) < TARGET_BURST_RSS_MB
    print(f"server RSS peak target < {TARGET_BURST_RSS_MB} MB{'' if peak_ok else '  MISSED'}")
    met = print_player(figures.player_seconds, figures.player_failures, TARGET_BURST_P99)
    return met and peak_ok and not figures.failed


def whole_states_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("section whole-states")
    group.add_argument("--players", type=int, default=2_000, help="guests logged in before the burst")
    group.add_argument("--tables", type=int, default=1_000, help="analysis tables among them")
    group.add_argument("--burst", type=int, default=5_000, help="whole-state polls sent at once")


# --- section "slots" ------------------------------------------------------------------------------------


@dataclass
class SlotFigures:
    logins: Counter[str] = field(default_factory=Counter)
    login_seconds: float = 0.0
    tables: Counter[str] = field(default_factory=Counter)
    registered: str = ""
    players_online: float = 0.0
    tables_open: float = 0.0


def slot_flood(
    python: str, workdir: Path, *, addresses: int, logins: int, tables: int, timeout: float
) -> SlotFigures:
    figures = SlotFigures()
    server = Server(python, "WARNING", workdir, None)
    server.start()
    try:
        asyncio.run(_slots(server.port, addresses, logins, tables, timeout, figures))
        with urllib.request.urlopen(f"http://{HOST}:{server.port}/metrics", timeout=timeout) as page:
            metrics = page.read().decode()
        for name, attribute in (
            ("kropki_players_online", "players_online"),
            ("kropki_tables_open", "tables_open"),
        ):
            found = re.search(rf"^{name} (\S+)$", metrics, re.M)
            setattr(figures, attribute, float(found.group(1)) if found else -1.0)
    finally:
        server.stop()
    return figures


async def _slots(
    port: int, addresses: int, logins: int, tables: int, timeout: float, figures: SlotFigures
) -> None:
    async def address(number: int) -> list[Guest]:
        conn = await connect_from(port, f"127.0.1.{number + 1}", timeout)
        inside = []
        for index in range(logins):
            guest = Guest(conn, f"s{number}x{index}", f"*S{number}x{index}")
            answer = (await guest.login()).decode(errors="replace") or "ok"
            figures.logins[answer] += 1
            if answer == "ok":
                inside.append(guest)
        return inside

    started = time.monotonic()
    groups = await asyncio.gather(*(address(number) for number in range(addresses)))
    figures.login_seconds = time.monotonic() - started

    async def open_tables(guests: list[Guest]) -> None:
        for guest in guests:
            for _ in range(tables):
                guest.send("v", 0, ANALYSIS.format(nick=guest.nick))
                body = await guest.poll()
                refused = re.search(rb"\.e\.([^/]*)", body)
                reason = refused.group(1).decode(errors="replace") if refused else "opened"
                figures.tables[re.sub(r"^\*\S+ has \d+", "<guest> has N", reason)[:60]] += 1

    await asyncio.gather(*(open_tables(guests) for guests in groups))
    conn = await connect(port, timeout)
    _, answer = await conn.get("/auth.py?co=rejestruj&opisGracza=Regular&idGracza=regular12345&lang=en")
    figures.registered = answer.decode(errors="replace")
    conn.close()


def slots_section(args: argparse.Namespace, workdir: Path) -> bool:
    figures = slot_flood(
        args.python,
        workdir,
        addresses=args.slot_addresses,
        logins=args.logins_per_address,
        tables=args.tables_per_guest,
        timeout=args.timeout,
    )
    tried = args.slot_addresses * args.logins_per_address
    print(
        f"flood: {args.slot_addresses} addresses x {args.logins_per_address} guest logins = {tried} "
        f"in {figures.login_seconds:.1f} s"
    )
    print("    " + ", ".join(f"{answer}: {number}" for answer, number in figures.logins.most_common()))
    print(f"then {args.tables_per_guest} analysis tables asked by each guest that got in:")
    for answer, number in figures.tables.most_common():
        print(f"    {answer}: {number}")
    print(f"players online {figures.players_online:.0f}, game tables {figures.tables_open:.0f} (/metrics)")
    met = figures.registered.startswith("ok")
    print(f"a registered player afterwards: {figures.registered[:60]!r}{'' if met else '  MISSED'}")
    return met


def slots_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("section slots")
    group.add_argument("--slot-addresses", type=int, default=167, help="addresses the guests log in from")
    group.add_argument("--logins-per-address", type=int, default=30, help="guest logins each address tries")
    group.add_argument("--tables-per-guest", type=int, default=10, help="analysis tables each guest asks for")


# --- section "logins" ---------------------------------------------------------------------------------


@dataclass
class LoginFloodFigures:
    seconds: float = 0.0
    answers: Counter[str] = field(default_factory=Counter)
    rss_before: float = 0.0  # MB
    rss_peak: float = 0.0  # MB, the server's high-water mark once the flood is answered
    owner: str = ""  # the answer to the account's owner, logging in from her own address meanwhile
    owner_seconds: float = 0.0


def login_flood(
    python: str, workdir: Path, *, count: int, cost: int, seconds: float, timeout: float
) -> tuple[LoginFloodFigures, tuple[list[float], list[str]]]:
    """`count` failed logins at once, each the first of an address in a network of its own."""
    server = Server(python, "WARNING", workdir, None, (*attacks.PROXY, "--id-hash-cost", str(cost)))
    server.start()
    figures = LoginFloodFigures()
    try:
        figures.rss_before = server.rss_mb()
        start_at = time.monotonic() + 0.5
        process, receiving = measure_player(server.port, start_at, start_at + seconds, timeout)
        asyncio.run(_login_flood(server.port, count, start_at, timeout, figures))
        figures.rss_peak = server.rss_mb("VmHWM")
        player = player_report(process, receiving, seconds + timeout)
    finally:
        server.stop()
    return figures, player


async def _login_flood(
    port: int, count: int, start_at: float, timeout: float, figures: LoginFloodFigures
) -> None:
    owner = attacks.Proxied(port, attacks.HOME, timeout + 60)  # registered from her address: known there
    secret = attacks.registered_id("Alice", "pw")
    _, answer = await owner.get(f"/auth.py?co=rejestruj&opisGracza=Alice&idGracza={secret}&lang=en")
    if not answer.startswith(b"ok.zarejestrowalem"):
        raise RuntimeError(f"Alice could not register: {answer[:80]!r}")
    await asyncio.sleep(max(0.0, start_at + 0.5 - time.monotonic()))  # the player's first login first

    async def guess(number: int) -> None:
        client = attacks.Proxied(port, f"10.{number // 250}.{number % 250}.1", timeout + 60)
        nick = f"Flood{number}"
        try:
            _, answer = await client.get(
                f"/auth.py?co=loguj&opisGracza={nick}&idGracza={attacks.registered_id(nick, 'guess')}"
            )
            figures.answers[answer.decode(errors="replace")] += 1
        except (OSError, TimeoutError, ValueError) as failure:
            figures.answers[type(failure).__name__] += 1
        finally:
            client.close()

    async def owner_logs_in() -> None:
        await asyncio.sleep(OWNER_AFTER)  # the guesses queued for the id hashes' threads
        sent = time.monotonic()
        try:
            _, answer = await owner.get(f"/auth.py?co=loguj&opisGracza=Alice&idGracza={secret}")
            figures.owner = answer.decode(errors="replace")
        except (OSError, TimeoutError, ValueError) as failure:
            figures.owner = type(failure).__name__
        figures.owner_seconds = time.monotonic() - sent

    started = time.monotonic()
    await asyncio.gather(owner_logs_in(), *(guess(number) for number in range(count)))
    figures.seconds = time.monotonic() - started
    owner.close()


def logins_section(args: argparse.Namespace, workdir: Path) -> bool:
    figures, (player, failures) = login_flood(
        args.python,
        workdir,
        count=args.login_flood,
        cost=args.login_cost,
        seconds=args.seconds,
        timeout=args.timeout,
    )
    # what the id hashes' threads may hold at once (server/store/idhash.py), and 64 MB for the rest
    allowed = HASH_THREADS * 128 * R * 2**args.login_cost / 2**20 + 64
    print(
        f"{args.login_flood} failed logins at once, each from a network of its own, id hash cost "
        f"{args.login_cost}: answered in {figures.seconds:.1f} s"
    )
    print("    " + ", ".join(f"{answer}: {number}" for answer, number in figures.answers.most_common()))
    wrong_only = set(figures.answers) <= {"nieOk.wrongNickOrId", "nieOk.tooFast"}  # nothing else
    in_time = figures.seconds <= 1.5 * MOST_WAIT + 1
    print(
        f"    answered in {figures.seconds:.1f} s: target at most {1.5 * MOST_WAIT + 1:.0f} s (a check that "
        f"would wait over {MOST_WAIT:.0f} s for a thread is refused at once){'' if in_time else '  MISSED'}"
    )
    check = _one_check_seconds(args.login_cost)
    owner_met = (
        figures.owner.startswith("ok.zalogowanyNaSerwer") and figures.owner_seconds <= 3 * check + 0.25
    )
    print(
        f"the account's owner, from her own address {OWNER_AFTER} s into the flood: {figures.owner[:30]!r} "
        f"in {figures.owner_seconds * 1000:.0f} ms (target at most three checks, {check * 1000:.0f} ms each "
        f"here, and 250 ms){'' if owner_met else '  MISSED'}"
    )
    grew = figures.rss_peak - figures.rss_before
    memory_met = grew <= allowed
    print(
        f"server RSS {figures.rss_before:.0f} MB before, peak {figures.rss_peak:.0f} MB: {grew:.0f} MB more "
        f"(target at most {allowed:.0f}: {HASH_THREADS} hash threads' scrypt and 64 MB)"
        f"{'' if memory_met else '  MISSED'}"
    )
    return print_player(player, failures) and memory_met and wrong_only and in_time and owner_met


def _one_check_seconds(cost: int) -> float:
    """What one id hash at `cost` (server/store/idhash.py) takes here, the least of three."""
    hashing = IdHashing(cost)
    times = []
    for _ in range(3):
        started = time.perf_counter()
        hashing.hash("K4ZUPkUzXY")
        times.append(time.perf_counter() - started)
    hashing.close()
    return min(times)


def logins_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("section logins")
    group.add_argument("--login-flood", type=int, default=200, help="failed logins sent at once")
    group.add_argument(
        "--login-cost", type=int, default=14, help="the server's --id-hash-cost (14: its default; up to 17)"
    )


# --- the sections and the command line ----------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    run: Callable[[argparse.Namespace, Path], bool]  # prints its figures; True when the targets are met
    add_arguments: Callable[[argparse.ArgumentParser], None]


SECTIONS = {
    "ai": Section(aiflood.ai_section, aiflood.ai_arguments),
    "archive": Section(archiveflood.archive_section, archiveflood.archive_arguments),
    "connections": Section(connections_section, connections_arguments),
    "rows": Section(diskrows.rows_section, diskrows.rows_arguments),
    "frames": Section(frames.frames_section, frames.frames_arguments),
    "guesses": Section(attacks.guesses_section, attacks.guesses_arguments),
    "networks": Section(attacks.networks_section, attacks.networks_arguments),
    "log-flood": Section(attacks.log_flood_section, attacks.log_flood_arguments),
    "journal": Section(journal_section, journal_arguments),
    "logins": Section(logins_section, logins_arguments),
    "whole-states": Section(whole_states_section, whole_states_arguments),
    "slots": Section(slots_section, slots_arguments),
    "undo": Section(aiflood.undo_section, aiflood.undo_arguments),
}


def main() -> int:
    parser = argument_parser(__doc__)
    add = parser.add_argument
    add(
        "--only", action="append", choices=sorted(SECTIONS), help="run this section (repeatable; default all)"
    )
    add("--seconds", type=float, default=30.0, help="length of each flood once it is at full strength")
    add("--ramp", type=float, default=3.0, help="seconds over which a flood's connections are opened")
    for section in SECTIONS.values():
        section.add_arguments(parser)
    add_server_arguments(parser)
    args = parser.parse_args()
    if args.seconds <= 0 or args.ramp < 0 or args.flood <= 0 or args.open_files <= 0:
        parser.error("--seconds, --flood and --open-files must be positive, --ramp at least 0")

    stop_as_on_ctrl_c()
    print(f"abuse benchmark: {os.cpu_count()} CPUs, server interpreter {args.python}")
    print(f"server code: commit {server_revision()}")
    results = []
    try:
        for name in args.only or sorted(SECTIONS):
            print(f"\n== section {name} ==")
            with tempfile.TemporaryDirectory(prefix=f"kropki-abuse-{name}-") as workdir:
                results.append(SECTIONS[name].run(args, Path(workdir)))
    except KeyboardInterrupt:
        print("\ninterrupted; the server was stopped")
        return 130
    except RuntimeError as failure:
        print(f"benchmark failed: {failure}")
        return 2
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
