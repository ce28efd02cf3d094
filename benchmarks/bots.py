"""Bots through the bot API (docs/bots.md): how long a bot's move takes to reach its opponent's feed.

The real app on a port of its own and a SQLite file, in this process; --pairs pairs of bots, each
pair's first inviting the second (20x20, 600 s + 5 s), then playing --moves moves in turn at random
free points, all pairs at once, over aiohttp's client. For each move: from sending the move's POST
to the line of the opponent's feed that carries it; a move's answer comes once it is stored, and the
feed is read after it, so the figure is a bot's whole round trip. CPU is the process's: the server's
and the bots' clients' together.

    .venv/bin/python benchmarks/bots.py --pairs 20 --moves 40
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.app import create_app  # noqa: E402
from server.config import Settings  # noqa: E402
from server.store.database import migrate, open_engine  # noqa: E402
from server.web.common import STORE_KEY  # noqa: E402
from tests.ports import free_port  # noqa: E402

GAME = "2020n0.0.a.F.a.600.5._SRAUTP_srautp."
SIZE = 20


async def next_event(feed: aiohttp.ClientResponse, kind: str) -> dict:
    while True:
        line = await feed.content.readline()
        if not line:
            raise EOFError(f"the feed ended before a {kind} event")
        if line.strip():
            event = json.loads(line)
            if event["type"] == kind:
                return event


async def pair(
    session: aiohttp.ClientSession, base: str, tokens: tuple[str, str], nicks: tuple[str, str], moves: int
) -> list[float]:
    blue, red = ({"Authorization": f"Bearer {token}"} for token in tokens)
    red_feed = await session.get(f"{base}/api/bot/stream", headers=red)
    await session.post(f"{base}/api/bot/invite/{nicks[1]}", data={"gameType": GAME}, headers=blue)
    await next_event(red_feed, "invitation")
    await session.post(f"{base}/api/bot/invitation/accept", headers=red)
    blue_feed = await session.get(f"{base}/api/bot/stream", headers=blue)
    table = (await next_event(blue_feed, "gameFull"))["table"]
    points = [(x, y) for x in range(SIZE) for y in range(SIZE)]
    random.Random(table).shuffle(points)
    latencies: list[float] = []
    mover = 0
    for x, y in points:
        if len(latencies) == moves:
            break
        sent = time.perf_counter()
        async with session.post(
            f"{base}/api/bot/game/{table}/move/{x}/{y}", headers=(blue, red)[mover]
        ) as answer:
            done = await answer.json()
        if done.get("error") == "illegalMove":  # inside a realm by now: the next point
            continue
        assert done == {"ok": True}, done
        while True:
            event = await next_event((red_feed, blue_feed)[mover], "move")
            if (event["x"], event["y"]) == (x, y):
                latencies.append(time.perf_counter() - sent)
                break
        mover = 1 - mover
    blue_feed.close()
    red_feed.close()
    return latencies


async def started_app(name: str) -> tuple[web.Application, web.AppRunner, int]:
    """The real app serving on a free port of 127.0.0.1 (unlimited there), on a new SQLite file named
    after the benchmark; the caller cleans `runner` up."""
    folder = Path(tempfile.mkdtemp())
    url = f"sqlite+aiosqlite:///{folder}/{name}.sqlite3"
    engine = open_engine(url)
    await migrate(engine)
    await engine.dispose()
    port = free_port()
    settings = Settings(host="127.0.0.1", port=port, db_url=url, unlimited=("127.0.0.1",), ai_workers=0)
    app = create_app(settings)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return app, runner, port


async def main(pairs: int, moves: int) -> None:
    app, runner, port = await started_app("bots")
    try:
        nicks = [f"Bot{i}" for i in range(2 * pairs)]
        tokens = [await app[STORE_KEY].bots.create(nick) for nick in nicks]
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as session:
            cpu, wall = time.process_time(), time.perf_counter()
            runs = await asyncio.gather(
                *(
                    pair(
                        session,
                        f"http://127.0.0.1:{port}",
                        tuple(tokens[2 * i : 2 * i + 2]),
                        tuple(nicks[2 * i : 2 * i + 2]),
                        moves,
                    )
                    for i in range(pairs)
                )
            )
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        await runner.cleanup()
    latencies = sorted(latency for run in runs for latency in run)
    p99 = latencies[max(0, int(len(latencies) * 0.99) - 1)]
    print(
        f"{pairs} games, {len(latencies)} moves in {wall:.1f} s ({len(latencies) / wall:.0f} moves a second)"
    )
    print(
        f"move -> opponent's feed: p50 {statistics.median(latencies) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms"
    )
    print(
        f"CPU, the server and the bots' clients in one process: {cpu / len(latencies) * 1000:.2f} ms a move"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--moves", type=int, default=40, help="moves in each game (at most 200)")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.pairs, min(arguments.moves, SIZE * SIZE // 2)))
