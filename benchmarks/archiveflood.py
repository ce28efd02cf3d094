"""A flood of games into the archive, a section of benchmarks/abuse.py.

Section "archive": the real server on a throwaway SQLite file. Two guests from 127.0.0.2 (an address the
server's --unlimited 127.0.0.1 does not cover) open a game with an invitation, then for --archive-seconds
play one dot, resign and agree a new game, as fast as their game actions allow: every finished game with
a move is archived for good. Printed: the games archived, a minute's worth, the database's growth for each
and the refusals the guests read. Target: at most GAMES_BEGUN_PER_HOUR games (docs/operations.md, "Abuse
limits"), whatever the length of the run.

    .venv/bin/python benchmarks/abuse.py --only archive --archive-seconds 60
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from aiflood import Guest, guest_from
from stream import Server

from server.hub.limits import GAMES_BEGUN_PER_HOUR

GAME = "2020s0.4.a.F.a.180.2.."  # 20x20, four crosses, free, 3 min + 2 s; the inviter blue
ADDRESS = "127.0.0.2"
DESCRIBED = re.compile(rb"/d(\d+)\.[^/]*\.\*(Ala|Bob)\.\*(Ala|Bob)/")  # a table's d line: uid, blue, red
REFUSED = re.compile(rb"\.\.e\.([^/]*)")


@dataclass
class Figures:
    archived: int = 0
    database_bytes: int = 0
    refusals: Counter[str] = field(default_factory=Counter)


async def flood(port: int, stop_at: float, timeout: float, figures: Figures) -> None:
    ala = await guest_from(port, ADDRESS, "ala1", "*Ala", timeout)
    bob = await guest_from(port, ADDRESS, "bob1", "*Bob", timeout)
    players = {b"Ala": ala, b"Bob": bob}
    try:
        for guest in (ala, bob):
            if await guest.login() != b"":
                raise RuntimeError(f"{guest.nick} could not log in")
        if await ala.invite("*Bob", GAME) != b"" or await bob.call("co=zaproszenieTak") != b"":
            raise RuntimeError("the guests could not open a table")
        uid, blue, red = await _table(ala)
        while time.monotonic() < stop_at:
            for guest, query in (
                (players[blue], f"co=graczStawiaKropke&table={uid}&where=aa"),
                (players[red], f"co=propose&table={uid}&proposal=resign"),
                (ala, f"co=propose&table={uid}&proposal=new"),
                (bob, f"co=propose&table={uid}&proposal=new"),
            ):
                answer = await guest.call(query)
                if answer:
                    figures.refusals[answer.decode(errors="replace")[:40]] += 1
            bodies = [await guest.poll(0) for guest in (ala, bob)]
            for body in bodies:
                figures.refusals.update(text.decode(errors="replace")[:40] for text in REFUSED.findall(body))
            described = DESCRIBED.findall(bodies[0])
            if described:
                blue, red = described[-1][1], described[-1][2]
            await asyncio.sleep(0.05)
    finally:
        ala.conn.close()
        bob.conn.close()


async def _table(guest: Guest) -> tuple[int, bytes, bytes]:
    for _ in range(20):
        found = DESCRIBED.findall(await guest.poll(1))
        if found:
            return int(found[-1][0]), found[-1][1], found[-1][2]
    raise RuntimeError("the table never appeared")


def archive_flood(python: str, workdir: Path, *, seconds: float, timeout: float) -> Figures:
    figures = Figures()
    server = Server(python, "WARNING", workdir, None)
    server.start()
    database = workdir / "bench.sqlite3"
    try:
        before = sum(path.stat().st_size for path in workdir.glob("bench.sqlite3*"))
        asyncio.run(flood(server.port, time.monotonic() + seconds, timeout, figures))
    finally:
        server.stop()
    with contextlib.closing(sqlite3.connect(database)) as db:  # a connection's own `with` leaves it open
        figures.archived = db.execute("SELECT count(*) FROM games").fetchone()[0]
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    figures.database_bytes = sum(path.stat().st_size for path in workdir.glob("bench.sqlite3*")) - before
    return figures


def archive_section(args: argparse.Namespace, workdir: Path) -> bool:
    seconds = args.archive_seconds
    figures = archive_flood(args.python, workdir, seconds=seconds, timeout=args.timeout)
    print(f"flood: two guests from {ADDRESS} play a dot, resign and agree a new game for {seconds:g} s")
    each = figures.database_bytes / figures.archived if figures.archived else 0.0
    print(
        f"games archived: {figures.archived:,} ({figures.archived * 60 / seconds:.1f} a minute); "
        f"database grew {figures.database_bytes / 1e6:.2f} MB, {each / 1e3:.1f} KB a game"
    )
    refusals = ", ".join(f"{text} {number}" for text, number in figures.refusals.most_common(4)) or "none"
    print(f"refusals read: {refusals}")
    met = figures.archived <= GAMES_BEGUN_PER_HOUR
    print(f"target: at most {GAMES_BEGUN_PER_HOUR} games an hour{'' if met else '  MISSED'}")
    return met


def archive_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("section archive")
    group.add_argument("--archive-seconds", type=float, default=60.0, help="length of the archive flood")
