"""What a tournament's pairing costs everyone else: poll latency on the real app while it pairs.

The server's app (server/app.py, a throwaway SQLite file) runs in this process on the event loop `serve`
uses; --pollers guests in a separate process each poll `/a.kropki` once a second (spread evenly over the
second, stream.py's client). After --settle seconds, five phases of --seconds each:

- "no pairing": the polls alone;
- "swiss on a thread": pairing a --players round back to back with asyncio.to_thread(pair_round), as
  the director did until 2026-12-02: pure Python holding the GIL against the event loop;
- "swiss as the director": back to back through Director.pair_swiss_round, what the server does now;
- "arena on a thread" and "arena as the director": the same for an arena's wave of --arena-players
  free players, arena.pair on a thread as the director did until 2026-12-02, then
  Director.pair_arena_wave, on the same worker process as the swiss rounds.

The round paired is the last of a --rounds tournament of benchmarks/swiss.py's random results (its
slowest); the wave the last of --arena-waves of benchmarks/arena.py's. The worker process is started
before the first phase. Prints each phase's poll latency (p50, p99, max, by when the poll was sent) and
pairing times.

    .venv/bin/python benchmarks/swiss_load.py --pollers 300 --players 200 --arena-players 100
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

HERE = Path(__file__).resolve().parent
# the repository (server.*) and this folder (stream, swiss, arena)
for _path in (str(HERE.parent), str(HERE)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import arena as arena_bench  # noqa: E402
import swiss as swiss_bench  # noqa: E402
from aiohttp import web  # noqa: E402
from stream import HOST, connect, parse_head, percentile, run_generator  # noqa: E402

from server.app import create_app  # noqa: E402
from server.config import Settings  # noqa: E402
from server.engine import arena, swiss  # noqa: E402
from server.web.common import DIRECTOR_KEY  # noqa: E402
from tests.ports import free_port  # noqa: E402

TIMEOUT = 30.0  # seconds for any one reply
LOGINS_AT_ONCE = 20


@dataclass
class PollerPlan:
    port: int
    pollers: int
    begin: float  # time.monotonic() of the first polls (after every login)


async def _poller(
    index: int, plan: PollerPlan, stop: asyncio.Event, polls: list[tuple[float, float]]
) -> None:
    conn = await connect(plan.port, TIMEOUT)
    seen, slot = 0, plan.begin + index / plan.pollers
    while not stop.is_set():
        await asyncio.sleep(max(0.0, slot - time.monotonic()))
        sent = time.monotonic()
        status, body = await conn.get(f"/a.kropki?co=getMsg&playerId=s{index}&msgNo={seen}&msgFromClient=x")
        head = parse_head(body)
        if status != 200 or head is None:
            raise RuntimeError(f"poll of s{index}: HTTP {status} {body[:100]!r}")
        seen = head[0]
        polls.append((sent, time.monotonic() - sent))
        slot += 1.0
        while slot < time.monotonic():  # a slot missed while the reply was late is not made up for
            slot += 1.0
    conn.close()


async def _pollers(plan: PollerPlan, pipe: Connection) -> list[tuple[float, float]]:
    gate = asyncio.Semaphore(LOGINS_AT_ONCE)

    async def login(index: int) -> None:
        async with gate:
            conn = await connect(plan.port, TIMEOUT)
            status, body = await conn.get(f"/a.kropki?co=guestLogin&idGracza=s{index}&opis=*s{index}&lang=en")
            conn.close()
            if status != 200 or body:
                raise RuntimeError(f"login of s{index}: HTTP {status} {body[:100]!r}")

    await asyncio.gather(*(login(index) for index in range(plan.pollers)))
    pipe.send("logged in")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(pipe.fileno(), stop.set)  # any message from the main process: stop
    polls: list[tuple[float, float]] = []
    await asyncio.gather(*(_poller(index, plan, stop, polls) for index in range(plan.pollers)))
    loop.remove_reader(pipe.fileno())
    os.set_blocking(pipe.fileno(), True)  # uvloop's add_reader made it non-blocking; the result is large
    return polls


def poller_main(plan: PollerPlan, pipe: Connection) -> None:
    polls = run_generator(_pollers(plan, pipe))
    pipe.recv()  # the stop order that ended the polls
    pipe.send(polls)


async def _pair_back_to_back(
    pair: Callable[[], Awaitable[object]], seconds: float
) -> tuple[float, list[float]]:
    """Pair again and again for `seconds`: the phase's end and each pairing's wall time."""
    ends, took = time.monotonic() + seconds, []
    while time.monotonic() < ends:
        start = time.monotonic()
        await pair()
        took.append(time.monotonic() - start)
    return time.monotonic(), took


async def measure(args: argparse.Namespace, workdir: Path) -> None:
    inputs: list[list[swiss.Entrant]] = []
    swiss_bench.simulate(args.players, args.rounds, args.seed, 30, 25, inputs)
    entrants = inputs[-1]
    waves: list[arena_bench.Wave] = []
    arena_bench.simulate(args.arena_players, args.arena_waves, args.seed, waves)
    wave = waves[-1]
    port = free_port()
    settings = Settings(
        host=HOST,
        port=port,
        db_url=f"sqlite+aiosqlite:///{workdir}/bench.sqlite3",
        migrate=True,
        unlimited=(HOST,),
        ai_workers=0,
    )
    app = create_app(settings)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, HOST, port).start()
    director = app[DIRECTOR_KEY]
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    begin = time.monotonic() + 3.0
    process = context.Process(target=poller_main, args=(PollerPlan(port, args.pollers, begin), child))
    process.start()
    loop = asyncio.get_running_loop()
    try:
        await loop.run_in_executor(None, parent.recv)  # every guest logged in
        # the worker process started, and networkx imported in it, before any phase
        await director.pair_arena_wave(waves[0].waiting[:4], waves[0].ranks, args.arena_players)
        await asyncio.sleep(max(0.0, begin - time.monotonic()) + args.settle)

        start = time.monotonic()
        await asyncio.sleep(args.seconds)
        phases: list[tuple[str, float, float, list[float]]] = [("no pairing", start, time.monotonic(), [])]
        await asyncio.sleep(1.0)
        active = args.arena_players
        for name, pair in (
            ("swiss on a thread", lambda: asyncio.to_thread(swiss.pair_round, entrants, args.rounds)),
            ("swiss as the director", lambda: director.pair_swiss_round(entrants, args.rounds, [])),
            (
                "arena on a thread",
                lambda: asyncio.to_thread(arena.pair, wave.waiting, ranks=wave.ranks, active_players=active),
            ),
            ("arena as the director", lambda: director.pair_arena_wave(wave.waiting, wave.ranks, active)),
        ):
            start = time.monotonic()
            end, took = await _pair_back_to_back(pair, args.seconds)
            phases.append((name, start, end, took))
            await asyncio.sleep(1.0)  # the replies of the phase's last polls come back
        parent.send("stop")
        polls = await loop.run_in_executor(None, parent.recv)
    finally:
        process.join(10.0)
        if process.is_alive():
            process.terminate()
        await runner.cleanup()
    print(
        f"{args.pollers} pollers once a second; swiss: {len(entrants)} players paired (round {args.rounds}); "
        f"arena: {len(wave.waiting)} free players paired (wave {args.arena_waves})"
    )
    for name, start, end, took in phases:
        latencies = sorted(latency for sent, latency in polls if start <= sent < end)
        figures = " ".join(f"p{p} {percentile(latencies, p) * 1000:.1f}" for p in (50, 99))
        pairing = f"; {len(took)} pairings, {max(took) * 1000:.0f} ms the slowest" if took else ""
        due = (end - start) * args.pollers
        latency = f"latency ms {figures} max {latencies[-1] * 1000:.1f}"
        print(f"{name}: {len(latencies)} polls of {due:.0f} due, {latency}{pairing}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pollers", type=int, default=300)
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--arena-players", type=int, default=100)
    parser.add_argument("--arena-waves", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0, help="each phase")
    parser.add_argument("--settle", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        run_generator(measure(args, Path(workdir)))


if __name__ == "__main__":
    main()
