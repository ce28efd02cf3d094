"""What a player's actions leave in the database for good, a section of benchmarks/abuse.py.

Section "rows": a throwaway SQLite file, migrated as the server migrates it; --rows rows of each kind a
guest or a cheap account adds and nothing deletes, each as large as the server lets it be (20-character
nicks, 300-character lines in a 3-byte script, a 200-character email), written through the store as the
server writes them. Printed: the bytes each row adds to the file (after a checkpoint), and with the
fastest rate today's limits let one guest (or account), the 40 guests one network may log in, and 100
networks add them, the megabytes a day. Target: none of them above DAY_TARGET_MB for one network.

    .venv/bin/python benchmarks/abuse.py --only rows --rows 2000
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from server.hub.limits import (
    ANALYSES_PER_ADDRESS,
    ANALYSES_PER_HOUR,
    ENTRIES_PER_ADDRESS,
    INVITATIONS_PER_MINUTE,
    NETWORK_FACTOR,
    PLAYERS_PER_ADDRESS,
)
from server.store.hosted import Entry, Settings
from server.store.reports import (
    REPORTS_PER_NETWORK,
    REPORTS_PER_NETWORK_A_DAY,
    REPORTS_PER_PLAYER,
    REPORTS_PER_PLAYER_A_DAY,
    REPORTS_WINDOW,
    NewReport,
)
from server.store.store import Store
from server.web.auth import REGISTRATIONS, REGISTRATIONS_A_DAY
from server.web.clients import GUEST_LOGINS

DAY = 24 * 3600
DAY_TARGET_MB = 5.0  # a network's rows a day at the fastest rate its limits allow
NICK = "N" * 19
LINE = "字" * 300  # the longest chat line, 3 bytes a character in UTF-8


@dataclass(frozen=True)
class Kind:
    """One kind of row: how it is written, and how many a day one guest (or account) and one network
    may add under the limits (docs/operations.md, "Abuse limits")."""

    name: str
    limit: str
    per_player_day: float
    per_network_day: float


async def _rows(store: Store, kind: str, count: int) -> None:
    now = datetime.now(UTC)
    if kind == "tables":  # an analysis table opened and closed
        for uid in range(1, count + 1):
            store.writer.table_opened(uid)
            store.writer.table_closed(uid)
    elif kind == "reports":
        quoted = [{"id": f"{n}_{n}", "nick": f"*{NICK}", "text": LINE, "deleted": False} for n in range(11)]
        for n in range(count):
            report = NewReport(f"*{NICK}", f"r{n:018}", "", f"*{NICK}", "", "0", "", LINE, quoted)
            await store.reports.make(report)
    elif kind == "hosted_entries":
        start = now + timedelta(hours=1)
        settings = Settings("Cup", "arena", "2020s0.4.a.F.a.180.2..", 0, 60, start, None, None, False, 0, "k")
        hosted = await store.hosted.create(settings, now)
        for n in range(count):
            await store.hosted.register(
                hosted.id, Entry(f"*{n:019}", f"*{n:019}", "f" * 64, 1500, now, False)
            )
    elif kind in ("users", "ignored_players"):
        for n in range(count):
            nick = f"U{n:019}"
            account = await store.accounts.register(nick, f"secret{n}", "e" * 200, "en")
            if kind == "ignored_players":
                for m in range(100):
                    store.writer.ignored_added(account.number, f"*{m:019}", f"*{m:019}")
    await store.writer.flush()


def _size(database: Path) -> int:
    with contextlib.closing(sqlite3.connect(database)) as db:  # a connection's own `with` leaves it open
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(path.stat().st_size for path in database.parent.glob(database.name + "*"))


async def bytes_a_row(workdir: Path, kind: str, count: int) -> float:
    """The file's growth for each row, measured with the store closed before and after."""
    database = workdir / f"{kind}.sqlite3"
    url = f"sqlite+aiosqlite:///{database}"
    await (await Store.open(url, upgrade=True)).close()
    before = _size(database)
    store = await Store.open(url, id_hash_cost=10)
    try:
        await _rows(store, kind, count)
    finally:
        await store.close()
    return (_size(database) - before) / count


def kinds_today() -> list[Kind]:
    """The fastest rates under the limits (docs/operations.md, "Abuse limits"); a network is NETWORK_FACTOR
    addresses' worth, its guests as many as may log in from it at once."""
    guests = PLAYERS_PER_ADDRESS * NETWORK_FACTOR
    logins = GUEST_LOGINS[0] * DAY  # a new guest nick every 2 s from an address
    registered = min(REGISTRATIONS[0] * DAY / REGISTRATIONS[1], REGISTRATIONS_A_DAY[0])
    windows = DAY / REPORTS_WINDOW.total_seconds()
    return [
        Kind(
            "tables",
            "analysis tables: 10 invitations a minute, 30 an hour a player and an address",
            min(INVITATIONS_PER_MINUTE * 1440, ANALYSES_PER_HOUR * 24),
            min(INVITATIONS_PER_MINUTE * 1440 * guests, ANALYSES_PER_ADDRESS * NETWORK_FACTOR * 24),
        ),
        Kind(
            "reports",
            "5 a nick, 20 a network in 10 minutes; 20 and 100 a day",
            min(REPORTS_PER_PLAYER * windows, REPORTS_PER_PLAYER_A_DAY),
            min(REPORTS_PER_NETWORK * windows, REPORTS_PER_NETWORK_A_DAY),
        ),
        Kind(
            "hosted_entries",
            "a new guest nick per entry, one tournament: 20 an hour an address",
            min(logins, ENTRIES_PER_ADDRESS * 24),
            min(logins, ENTRIES_PER_ADDRESS * 24) * NETWORK_FACTOR,
        ),
        Kind(
            "users", "registrations: 10 an hour, 25 a day an address", registered, registered * NETWORK_FACTOR
        ),
        Kind(
            "ignored_players",
            "a new account ignoring 100 (per account)",
            registered,
            registered * NETWORK_FACTOR,
        ),
    ]


def rows_section(args: argparse.Namespace, workdir: Path) -> bool:
    met = True
    print(f"rows kept for good, {args.rows:,} of each kind, each as large as the server takes")
    print(f"{'kind':<16} {'bytes/row':>9} {'MB/day: one':>12} {'network':>9} {'100 networks':>13}  limit")
    for kind in kinds_today():
        each = asyncio.run(bytes_a_row(workdir, kind.name, args.rows))
        one, network = kind.per_player_day * each / 1e6, kind.per_network_day * each / 1e6
        flag = "" if network <= DAY_TARGET_MB else "  MISSED"
        met = met and not flag
        figures = f"{each:9.0f} {one:12.2f} {network:9.2f} {network * 100:13.0f}"
        print(f"{kind.name:<16} {figures}  {kind.limit}{flag}")
    return met


def rows_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("section rows")
    group.add_argument("--rows", type=int, default=1000, help="rows of each kind written")
