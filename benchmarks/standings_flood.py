"""A big tournament's public pages under a flood: what one request costs, and the players meanwhile.

The real server (a subprocess) on a throwaway SQLite file holding, for each of --sizes, two tournaments
of that many games: "Hourly arena", an arena the server ran (finished, 150 players: its answers carry
the director's standings), and "Big cup", an organiser's (setUpTable) tournament.

First, one request at a time: the server process's CPU for a request of each public page of the two
(standings.json, the results `/tournament/<name>`; the first request of a run apart from the next
--repeat), and the bytes of the answer, plain and with `Accept-Encoding: gzip`.

Then the flood, at the largest size: --clients connections, each from an address of a /24 network of
its own (127.N.M.1, so that no per-address or per-network limit holds them back), ask for one of the
four pages in a loop for --seconds, while --pollers guests poll the lobby every 100 ms from the
--unlimited address and an organiser's script sets up a table of "Big cup" every second (a change each
second, as results arrive in a running tournament). Printed: the flood's answers a second (by status),
the pollers' p50 and p99 (target: p99 within TARGET_P99_MS, docs/performance.md), the server's CPU
share and its peak memory.

Then, with --made-up N, the same for N connections from one address asking for the standings of
tournaments that do not exist, each a made-up name (nothing is kept for such a name, so each is a look
in the store), with the pollers and the organiser's script as above.

    .venv/bin/python benchmarks/standings_flood.py --sizes 4500 40000 108000 --clients 200 --seconds 20
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import count
from pathlib import Path
from urllib.parse import quote

from aiflood import Guest, guest_from
from stream import HOST, REPO, TARGET_P99_MS, HttpConnection, Server, ms

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.store.hosted import Entry, Settings  # noqa: E402
from server.store.store import Store  # noqa: E402

ARENA, CUP = "Hourly arena", "Big cup"
PLAYERS = 150
RESULTS = ["B+R", "W+R", "B+3", "W+2.5", "0", "B+T", "W+F", "Void"]
PAGES = [f"/tournament/{quote(name)}{tail}" for name in (ARENA, CUP) for tail in ("/standings.json", "")]
GZIP = {"Accept-Encoding": "gzip"}


async def fill(workdir: Path, size: int) -> str:
    """The database with both tournaments of `size` games each; returns the organiser's key of Big cup."""
    url = f"sqlite+aiosqlite:///{workdir}/bench.sqlite3"
    store = await Store.open(url, upgrade=True)
    begun = datetime(2026, 12, 2, tzinfo=UTC)
    try:
        arena = Settings(ARENA, "arena", "20x20", 0, 1440, begun, None, None, False, 0, "bench")
        hosted = await store.hosted.create(arena, begun - timedelta(days=1))
        for n in range(1, PLAYERS + 1):
            entry = Entry(f"p{n}", f"p{n}", f"@{n}", 2400.0 - 1000 * n / PLAYERS, begun, False)
            await store.hosted.register(hosted.id, entry)
        await store.hosted.set_state(hosted.id, "finished", begun + timedelta(days=1))
        key = await store.tournaments.add_key("bench", CUP, False)
    finally:
        await store.close()
    rng = random.Random(size)
    nicks = [f"p{n}" for n in range(1, PLAYERS + 1)]
    stamp = "2026-12-02 00:00:00.000000"
    games, tables = [], []
    for offset, name in ((0, ARENA), (size, CUP)):
        for uid in range(offset + 1, offset + size + 1):
            blue, red = rng.sample(nicks, 2)
            result = rng.choice(RESULTS)
            games.append((uid, stamp, blue, red, result, name))
            tables.append((uid, name, stamp, blue, red, result, uid, rng.randrange(10, 121)))
    with contextlib.closing(sqlite3.connect(f"{workdir}/bench.sqlite3")) as db, db:
        db.executemany(
            "INSERT INTO games (number, finished_at, blue_nick, red_nick, game_type, result, rated,"
            " tournament, sgf) VALUES (?, ?, ?, ?, '20x20', ?, 0, ?, '(;)')",
            games,
        )
        db.executemany(
            "INSERT INTO tournament_tables (uid, tournament, round, created_at, blue, red, game_type,"
            " result, game_number, moves) VALUES (?, ?, NULL, ?, ?, ?, '20x20', ?, ?, ?)",
            tables,
        )
    return key


async def one_at_a_time(server: Server, repeat: int, size: int) -> None:
    conn = await connect_from(server.port, HOST)
    try:
        for page in PAGES:
            costs = []
            for _ in range(repeat + 1):
                before = server.cpu_seconds()
                status, body = await conn.get(page)
                costs.append(server.cpu_seconds() - before)
                if status != 200:
                    raise RuntimeError(f"{page}: HTTP {status} {body[:200]!r}")
            zipped = await connect_from(server.port, HOST, GZIP)  # now: a connection idle for long is closed
            _, small = await zipped.get(page)
            zipped.close()
            print(
                f"{size:,} games, {_short(page)}: the first request {costs[0] * 1000:.0f} ms of the server's"
                f" CPU, then {statistics.mean(costs[1:]) * 1000:.1f} ms each (mean of {repeat});"
                f" {len(body) / 1e6:.2f} MB, {len(small) / 1e6:.2f} MB asked with gzip",
                flush=True,
            )
    finally:
        conn.close()


async def after_a_change(server: Server, key: str, repeat: int, size: int) -> None:
    """The next builds: Big cup's two pages asked after each of --repeat tables set up (a build reads
    the tables changed since the last one and keeps the others: docs/tournaments.md)."""
    conn = await connect_from(server.port, HOST)
    costs: dict[str, list[float]] = {page: [] for page in PAGES if quote(CUP) in page}
    try:
        for number in range(repeat):
            query = f"co=setUpTable&key={key}&gameType=2020stanF0.60.5&pl1=*C{number}&pl2=*D{number}"
            _, body = await conn.get(f"/a.kropki?{query}&tourn={quote(CUP)}&tRound=2")
            if not body.startswith(b"ok."):
                raise RuntimeError(f"set-up refused: {body[:200]!r}")
            for page, spent in costs.items():
                before = server.cpu_seconds()
                status, _ = await conn.get(page)
                spent.append(server.cpu_seconds() - before)
                if status != 200:
                    raise RuntimeError(f"{page}: HTTP {status}")
    finally:
        conn.close()
    for page, spent in costs.items():
        print(
            f"{size:,} games, {_short(page)} after a table set up: {statistics.mean(spent) * 1000:.0f} ms of"
            f" the server's CPU (mean of {repeat}; {', '.join(f'{s * 1000:.0f}' for s in spent)})",
            flush=True,
        )


async def connect_from(port: int, address: str, headers: dict[str, str] | None = None) -> HttpConnection:
    """A connection to the server from `address` (127.N.M.1: a /24 of its own, beyond every limit)."""
    loop = asyncio.get_running_loop()
    _, conn = await loop.create_connection(
        lambda: HttpConnection(port, 60.0, headers), HOST, port, local_addr=(address, 0)
    )
    return conn


def _short(page: str) -> str:
    return page.replace("/tournament/", "").replace("%20", " ")


async def logged_in_pollers(port: int, count: int, timeout: float) -> list[Guest]:
    """`count` guests of HOST, logged in: the players whose polls' latency a benchmark reports. Their
    connections are closed if one cannot log in (the caller has no guests to close then)."""
    guests = [await guest_from(port, HOST, f"poller{n}", f"*Poller{n}", timeout) for n in range(count)]
    try:
        for guest in guests:
            if await guest.login() != b"":
                raise RuntimeError(f"{guest.nick} could not log in")
    except BaseException:
        for guest in guests:
            guest.conn.close()
        raise
    return guests


async def flood(server: Server, key: str, clients: int, pollers: int, seconds: float) -> bool:
    guests = await logged_in_pollers(server.port, pollers, 10.0)
    flooders = [
        await connect_from(server.port, f"127.{1 + n // 200}.{n % 200}.1", GZIP if n % 2 else None)
        for n in range(clients)
    ]
    pages = [PAGES[n % len(PAGES)] for n in range(clients)]
    run = await _beside_pollers(server, key, flooders, pages, guests, seconds)
    memory = f", peak memory {server.rss_mb('VmHWM'):.0f} MB"
    return run.reported(f"flood of {clients} clients from {clients} networks", memory)


async def made_up(server: Server, key: str, clients: int, pollers: int, seconds: float) -> bool:
    guests = await logged_in_pollers(server.port, pollers, 10.0)
    askers = [await connect_from(server.port, "127.201.0.1") for _ in range(clients)]
    names = (f"/tournament/{quote(f'Made-up {random.getrandbits(48):x}')}/standings.json" for _ in count())
    run = await _beside_pollers(server, key, askers, [names] * clients, guests, seconds)
    return run.reported(f"made-up names from {clients} connections of one address")


@dataclass
class Run:
    answered: Counter[str]  # the askers' answers by status, and the organiser's set-ups
    waits: list[float]  # the pollers' polls, sorted
    elapsed: float
    cpu: float  # the server's share of a core

    def reported(self, what: str, more: str = "") -> bool:
        """Prints the run; whether the pollers' p99 met the target."""
        waits = self.waits
        met = bool(waits) and waits[int(0.99 * (len(waits) - 1))] * 1000 <= TARGET_P99_MS
        rates = ", ".join(
            f"{status} {count / self.elapsed:.1f}/s" for status, count in sorted(self.answered.items())
        )
        print(
            f"{what} for {self.elapsed:.0f} s: {rates};"
            f" the pollers' polls {ms(waits, 50, 99)} over {len(waits)} (target p99 {TARGET_P99_MS:.0f} ms)"
            f"{'' if met else '  MISSED'}; the server's CPU {self.cpu * 100:.0f}% of a core{more}",
            flush=True,
        )
        return met


async def _beside_pollers(
    server: Server,
    key: str,
    askers: list[HttpConnection],
    pages: list[str] | list[Iterator[str]],
    guests: list[Guest],
    seconds: float,
) -> Run:
    """Each asker asks for its page (or the next of them) in a loop for `seconds`, while the guests poll
    and an organiser's script sets up a table of Big cup every second; the askers are closed after."""
    stop_at = time.monotonic() + seconds
    answered: Counter[str] = Counter()
    waits: list[float] = []
    cpu_before, started = server.cpu_seconds(), time.monotonic()
    await asyncio.gather(
        *(_ask(conn, page, stop_at, answered) for conn, page in zip(askers, pages, strict=True)),
        *(_poll(guest, stop_at, waits) for guest in guests),
        _set_up(server.port, key, stop_at, answered),
    )
    elapsed = time.monotonic() - started
    cpu = (server.cpu_seconds() - cpu_before) / elapsed
    for conn in askers:
        conn.close()
    return Run(answered, sorted(waits), elapsed, cpu)


async def _ask(
    conn: HttpConnection, page: str | Iterator[str], stop_at: float, answered: Counter[str]
) -> None:
    """Asks for `page` (or each next of them) in a loop until `stop_at`."""
    while time.monotonic() < stop_at:
        try:
            status, _ = await conn.get(page if isinstance(page, str) else next(page))
        except (OSError, TimeoutError, ValueError):
            answered["failed"] += 1
            return
        answered[f"HTTP {status}"] += 1


async def _poll(guest: Guest, stop_at: float, waits: list[float]) -> None:
    while time.monotonic() < stop_at:
        sent = time.monotonic()
        await guest.poll(0)
        waits.append(time.monotonic() - sent)
        await asyncio.sleep(0.1)


async def _set_up(port: int, key: str, stop_at: float, answered: Counter[str]) -> None:
    """An organiser's script: a table of Big cup a second, between players who never come."""
    conn = await connect_from(port, HOST)
    number = 0
    try:
        while time.monotonic() < stop_at:
            number += 1
            query = f"co=setUpTable&key={key}&gameType=2020stanF0.60.5&pl1=*A{number}&pl2=*B{number}"
            _, body = await conn.get(f"/a.kropki?{query}&tourn={quote(CUP)}&tRound=1")
            answered["set up" if body.startswith(b"ok.") else "set-up refused"] += 1
            await asyncio.sleep(1.0)
    finally:
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[4500, 40_000, 108_000])
    parser.add_argument("--repeat", type=int, default=5, help="requests timed after the first, each page")
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--pollers", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--made-up", type=int, default=0, metavar="N", help="then N of one address")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--log-level", default="WARNING")
    parser.add_argument("--server-root", type=Path, default=REPO, help="the checkout whose server runs")
    args = parser.parse_args()
    met = True
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as folder:
            workdir = Path(folder)
            key = asyncio.run(fill(workdir, size))
            server = Server(args.python, args.log_level, workdir, None, root=args.server_root)
            server.start(timeout=120.0)
            try:
                asyncio.run(one_at_a_time(server, args.repeat, size))
                asyncio.run(after_a_change(server, key, args.repeat, size))
                if size == max(args.sizes):
                    met = asyncio.run(flood(server, key, args.clients, args.pollers, args.seconds))
                    if args.made_up:
                        met &= asyncio.run(made_up(server, key, args.made_up, args.pollers, args.seconds))
            finally:
                server.stop()
            print(f"    log: {server.log_summary()}", flush=True)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
