"""A big tournament's records (`/tournament/<name>.sgf.zip`): what a download costs the server, and many at
once.

The real server (a subprocess) on a throwaway SQLite file: its schema made by the server's own start
(`--server-root` may name another checkout, to measure before a change), then --others games of no
tournament and, for each of --sizes, "Big cup"'s games archived straight into the file, each with a
record of --moves moves (about 1 KB for 60, as an arena's one-minute games).

One request at a time: the server's CPU for the first download and for each of --repeat next ones (10 ms
ticks), its wall time, and the zip's size; meanwhile --pollers guests poll the lobby every 100 ms, and
their polls' latency while the first zip is made is printed beside theirs for QUIET seconds before it.

Then --clients clients, each from an address of a /24 network of its own (so that no per-address limit
holds them back), all ask for it at once: the time until the last has it whole, the server's CPU
meanwhile and its peak memory (VmHWM: the zips and records held).

    .venv/bin/python benchmarks/records.py --sizes 4500 40000 108000 --clients 20
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
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

from aiflood import Guest
from standings_flood import connect_from, logged_in_pollers
from stream import HOST, REPO, Server, ms

CUP = "Big cup"
PAGE = f"/tournament/{quote(CUP)}.sgf.zip"
POINTS = [x + y for x in "abcdefghijklmnopqrst" for y in "abcdefghijklmnopqrst"]  # 20x20's
T = TypeVar("T")
QUIET = 3.0  # seconds of the pollers alone, before the first download


def record(rng: random.Random, number: int, moves: int) -> str:
    """A 20x20 game's record as the archive keeps one: its head and `moves` moves."""
    head = f"(;FF[4]GM[40]CA[UTF-8]AP[kropki]SZ[20]PB[p{number % 150}]PW[p{(number + 7) % 150}]EV[{CUP}]"
    steps = "".join(f";{'BW'[n % 2]}[{point}]" for n, point in enumerate(rng.choices(POINTS, k=moves)))
    return f"{head}RE[B+R]{steps})"


def fill(database: Path, size: int, others: int, moves: int) -> None:
    rng = random.Random(size)
    stamp = "2026-12-02 00:00:00.000000"
    rows = [
        (number, stamp, f"p{number % 150}", f"p{(number + 7) % 150}", CUP if number > others else None)
        + (record(rng, number, moves),)
        for number in range(1, others + size + 1)
    ]
    with contextlib.closing(sqlite3.connect(database)) as db, db:
        db.executemany(
            "INSERT INTO games (number, finished_at, blue_nick, red_nick, game_type, result, rated,"
            " tournament, sgf) VALUES (?, ?, ?, ?, '20x20', 'B+R', 0, ?, ?)",
            rows,
        )


async def one_at_a_time(server: Server, repeat: int, size: int, pollers: int) -> None:
    conn = await connect_from(server.port, HOST)
    guests: list[Guest] = []
    try:
        guests = await logged_in_pollers(server.port, pollers, 60.0)
        quiet: list[float] = []
        await polled_while(guests, asyncio.sleep(QUIET), quiet)
        costs, walls, first = [], [], []
        for number in range(repeat + 1):
            before, began = server.cpu_seconds(), time.monotonic()
            download = conn.get(PAGE)
            status, body = await (polled_while(guests, download, first) if number == 0 else download)
            costs.append(server.cpu_seconds() - before)
            walls.append(time.monotonic() - began)
            if status != 200:
                raise RuntimeError(f"HTTP {status} {body[:200]!r}")
        print(
            f"{size:,} games: the first download {costs[0]:.2f} s of the server's CPU ({walls[0]:.2f} s),"
            f" then {statistics.mean(costs[1:]) * 1000:.0f} ms each (mean of {repeat});"
            f" the zip {len(body) / 1e6:.1f} MB",
            flush=True,
        )
        if guests:
            print(
                f"  {pollers} pollers' polls while the first zip was made: {ms(sorted(first), 50, 99)} ms"
                f" over {len(first)}; before it, {QUIET:g} s alone: {ms(sorted(quiet), 50, 99)} ms"
                f" over {len(quiet)}",
                flush=True,
            )
    finally:
        conn.close()
        for guest in guests:
            guest.conn.close()


async def polled_while(guests: list[Guest], work: Awaitable[T], waits: list[float]) -> T:
    """What `work` gives, the guests polling every 100 ms until it is done, each poll's wait in `waits`."""
    done = asyncio.Event()

    async def poll(guest: Guest) -> None:
        while not done.is_set():
            sent = time.monotonic()
            await guest.poll(0)
            waits.append(time.monotonic() - sent)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), 0.1)

    polling = [asyncio.ensure_future(poll(guest)) for guest in guests]
    try:
        return await work
    finally:
        done.set()
        await asyncio.gather(*polling)


async def at_once(server: Server, clients: int, size: int) -> None:
    conns = [await connect_from(server.port, f"127.{n // 250}.{n % 250 + 1}.1") for n in range(clients)]
    try:
        before, began = server.cpu_seconds(), time.monotonic()
        answers = await asyncio.gather(*(conn.get(PAGE) for conn in conns))
        spent, took = server.cpu_seconds() - before, time.monotonic() - began
        statuses = sorted({status for status, _ in answers})
        print(
            f"{size:,} games, {clients} clients at once: all answered in {took:.1f} s (HTTP {statuses}),"
            f" {spent:.1f} s of the server's CPU, peak memory {server.rss_mb('VmHWM'):.0f} MB",
            flush=True,
        )
    finally:
        for conn in conns:
            conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[4500, 40_000, 108_000])
    parser.add_argument("--others", type=int, default=100_000, help="archived games of no tournament")
    parser.add_argument("--moves", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=3, help="downloads timed after the first")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--pollers", type=int, default=20, help="guests polling during the downloads")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--log-level", default="WARNING")
    parser.add_argument("--server-root", type=Path, default=REPO, help="the checkout whose server runs")
    args = parser.parse_args()
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as folder:
            workdir = Path(folder)
            server = Server(args.python, args.log_level, workdir, None, root=args.server_root)
            server.start(timeout=120.0)  # its schema
            server.stop()
            fill(workdir / "bench.sqlite3", size, args.others, args.moves)
            server.start(timeout=120.0, again=True)
            try:
                asyncio.run(one_at_a_time(server, args.repeat, size, args.pollers))
                server.stop()  # a fresh process: its peak memory is the clients' at once
                server.start(timeout=120.0, again=True)
                asyncio.run(at_once(server, args.clients, size))
            finally:
                server.stop()
            print(f"    log: {server.log_summary()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
