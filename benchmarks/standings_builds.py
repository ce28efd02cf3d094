"""A big tournament's standings built again after one change, in-process: the CPU of all threads
(time.process_time) of

- an organiser's standings.json build (`standings_built`: the changed row read, the entries, the sums
  kept, ranked, joined) after one table set up, on a throwaway SQLite file holding "Big cup" of
  --sizes games (benchmarks/standings_flood.py's), the first build apart;
- an arena's standings for --players entrants: the whole count (`views.arena_standings` of every board)
  against the games kept between builds (`views.KeptArena`), its first build and the next builds after
  one game settled each, with --playing games being played.

    .venv/bin/python benchmarks/standings_builds.py --sizes 40000 108000
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiohttp import web
from standings_flood import CUP, RESULTS, fill

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.director.history import Board  # noqa: E402
from server.director.views import KeptArena, arena_standings  # noqa: E402
from server.hub.hub import Hub  # noqa: E402
from server.store.hosted import Entry  # noqa: E402
from server.store.store import Store  # noqa: E402
from server.web.common import HUB_KEY  # noqa: E402
from server.web.kept_tables import KeptTournaments  # noqa: E402
from server.web.shared import SHARED_ANSWERS_KEY, SharedAnswers  # noqa: E402
from server.web.tournament import KEPT_TABLES_KEY, TOURNAMENTS_KEY, standings_built  # noqa: E402

ENDS = 2000.0


def cpu(work: Callable[[], Any]) -> tuple[float, Any]:
    started = time.process_time()
    done = work()
    return time.process_time() - started, done


async def organisers(size: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        await fill(Path(folder), size)
        store = await Store.open(f"sqlite+aiosqlite:///{folder}/bench.sqlite3")
        try:
            app = web.Application()
            app[TOURNAMENTS_KEY], app[HUB_KEY] = store.tournaments, Hub()
            app[SHARED_ANSWERS_KEY], app[KEPT_TABLES_KEY] = SharedAnswers(), KeptTournaments()
            started = time.process_time()
            await standings_built(app, CUP)
            first = time.process_time() - started
            spent = []
            for number in range(repeat):
                store.writer.tournament_table(10**7 + number, CUP, "2", f"*C{number}", f"*D{number}", "1010")
                await store.writer.flush()
                started = time.process_time()
                await standings_built(app, CUP)
                spent.append(time.process_time() - started)
        finally:
            await store.close()
    print(
        f"{size:,} games, Big cup's standings.json: the first build {first * 1000:.0f} ms of CPU,"
        f" a next build after a table set up {statistics.median(spent) * 1000:.1f} ms"
        f" (median of {repeat}: {', '.join(f'{s * 1000:.1f}' for s in spent)})",
        flush=True,
    )


def arena(size: int, players: int, playing: int, repeat: int) -> None:
    rng = random.Random(size)
    nicks = [f"p{n}" for n in range(1, players + 1)]
    boards = []
    for uid in range(1, size + 1):
        blue, red = rng.sample(nicks, 2)
        boards.append(Board(uid, 0, blue, red, rng.choice(RESULTS), False, rng.randrange(10, 121), 1000.0))
    begun = datetime(2026, 12, 2, tzinfo=UTC)
    entries = [
        Entry(nick, nick, "", 2400.0 - 1000 * n / players, begun, False) for n, nick in enumerate(nicks)
    ]
    whole = [cpu(lambda: arena_standings(entries, boards, ENDS))[0] for _ in range(repeat)]
    kept = KeptArena()
    first, _ = cpu(lambda: kept.table(entries, boards, [], ENDS))
    live = [
        Board(10**7 + n, 0, nicks[0], nicks[1 + n % (players - 1)], None, False, 0, None)
        for n in range(playing)
    ]
    spent, rows = [], None
    for n in range(repeat):
        blue, red = rng.sample(nicks, 2)
        boards.append(Board(size + 1 + n, 0, blue, red, "B+R", False, 50, 1000.0))
        kept.settled(boards[-1])
        seconds, rows = cpu(lambda: kept.table(entries, None, live, ENDS))
        spent.append(seconds)
    if rows != arena_standings(entries, boards + live, ENDS):
        raise RuntimeError("the kept count is not the whole count")
    print(
        f"{size:,} games, an arena of {players} players: the whole count"
        f" {statistics.median(whole) * 1000:.0f} ms of CPU (median of {repeat}); kept: the first build"
        f" {first * 1000:.0f} ms, a next build after a game settled, {playing} being played,"
        f" {statistics.median(spent) * 1000:.1f} ms"
        f" (median of {repeat}: {', '.join(f'{s * 1000:.1f}' for s in spent)})",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[40_000, 108_000])
    parser.add_argument("--players", type=int, default=150)
    parser.add_argument("--playing", type=int, default=75)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for size in args.sizes:
        asyncio.run(organisers(size, args.repeat))
        arena(size, args.players, args.playing, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
