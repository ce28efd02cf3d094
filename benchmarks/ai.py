"""The AI players: how fast they search, how strong each level is, and what they cost everyone else.

1. Playouts per second of each level's search on a 20x20 middle game (one core).
2. Strength on --size boards (standard rules, empty start, colours alternating): --games games of the
   weakest level against a random mover (target: wins >= 95%), then of each level against the next
   weaker one (target: wins >= 70%). Levels are playout counts, so the figures do not depend on the
   machine; the games run in --processes processes.
3. The stream under load: the real server (benchmarks/stream.py's Server: a subprocess, throwaway
   SQLite, one AI worker process by default) with --ai-games guests each playing the computer
   (`AI hard` on 20x20, random moves as soon as it is their turn) and --watchers guests polling once a
   second; prints the p99 latency of the watchers' polls and of the players' moves (target: p99 of the
   polls under 100 ms).

    .venv/bin/python benchmarks/ai.py                      # everything (about 15 minutes on 2 cores)
    .venv/bin/python benchmarks/ai.py --games 10 --skip-stream
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import aiohttp  # noqa: E402
from stream import Server, percentile  # noqa: E402

from server.engine import ai  # noqa: E402
from server.engine.board import BLACK, Board  # noqa: E402
from server.engine.game import Game  # noqa: E402
from server.engine.moves import ALPHABET, MoveSpec  # noqa: E402

RANDOM = 0  # the random mover's "level"
TARGET_VS_RANDOM = 0.95
TARGET_VS_WEAKER = 0.70
TARGET_P99_MS = 100.0


def playouts_per_second(seconds: float) -> None:
    rng = random.Random(1)
    board = Board(20, 20)
    for turn in range(60):
        board.play(ai.random_move(board, rng), 1 + turn % 2)
    for level, spec in ai.LEVELS.items():
        unlimited = ai.Level(spec.name, playouts=10**9, playout_depth=spec.playout_depth)
        started = time.perf_counter()
        _, playouts = ai.search(board, BLACK, unlimited, seconds, random.Random(level))
        elapsed = time.perf_counter() - started
        rate = playouts / elapsed
        print(f"level {level} ({spec.name}): {rate:,.0f} playouts/s (depth {spec.playout_depth})")


def play_one(job: tuple[int, int, int, int]) -> tuple[int, int]:
    """One game: (level of blue, level of red, size, seed) -> (blue's captures, red's captures)."""
    blue, red, size, seed = job
    game = Game(size, size)
    rng = random.Random(seed)
    while game.result is None:
        player = game.to_move
        level = blue if player == BLACK else red
        board = game.board
        if level == RANDOM:
            index = ai.random_move(board, rng)
        else:
            index, _ = ai.choose_move(board, player, level, 3600.0, rng.randrange(2**32))
        game.play(player, MoveSpec(board.point(index)))
    return game.board.score[1], game.board.score[2]


def match(stronger: int, weaker: int, games: int, size: int, processes: int) -> float:
    """The stronger side's share of wins, playing blue in every other game."""
    jobs = [(stronger, weaker, size, n) if n % 2 == 0 else (weaker, stronger, size, n) for n in range(games)]
    started = time.monotonic()
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        results = pool.map(play_one, jobs)
    wins = draws = 0
    for n, (blue, red) in enumerate(results):
        mine, theirs = (blue, red) if n % 2 == 0 else (red, blue)
        wins += mine > theirs
        draws += mine == theirs
    name = "random" if weaker == RANDOM else f"level {weaker}"
    print(
        f"level {stronger} vs {name} on {size}x{size}: {wins} won, {draws} drawn, "
        f"{games - wins - draws} lost of {games} ({wins / games:.0%}) in {time.monotonic() - started:.0f} s"
    )
    return wins / games


async def stream_under_ai_load(args: argparse.Namespace) -> float:
    with tempfile.TemporaryDirectory() as folder:
        server = Server(args.python, "WARNING", Path(folder), None)
        server.start()
        try:
            return await _load(server.port, args)
        finally:
            server.stop()


async def _load(port: int, args: argparse.Namespace) -> float:
    base = f"http://127.0.0.1:{port}/a.kropki"
    polls: list[float] = []
    moves: list[float] = []
    errors: list[str] = []
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as http:

        async def get(params: dict[str, str], into: list[float] | None = None) -> str:
            started = time.perf_counter()
            async with http.get(base, params=params) as response:
                body = await response.text()
            if into is not None:
                into.append(time.perf_counter() - started)
            if response.status != 200 or body.startswith("err.internal"):
                errors.append(f"{response.status} {body[:60]}")
            return body

        async def player(n: int, until: float) -> None:
            secret, nick = f"p{n:05d}", f"*P{n}"
            await get({"co": "guestLogin", "idGracza": secret, "opis": nick})
            await get({"co": "zapraszam", "idGracza": secret, "whom": "AI hard", "gameType": args.game_type})
            seen, uid = 0, None
            rng = random.Random(n)
            points = [a + b for a in ALPHABET[:20] for b in ALPHABET[:20]]
            rng.shuffle(points)
            while time.monotonic() < until:
                body = await get({"co": "getMsg", "playerId": secret, "msgNo": str(seen), "wait": "5"})
                head, _, rest = body.partition("/")
                seen = int(rest.split("/", 1)[0][1:].split(".")[1])
                for part in body.split("/"):
                    if part.startswith("q") and part[1:].isdigit() and part != "q0":
                        uid = part[1:]
                my_turn = uid is not None and f"/x{uid}.1.-." in body
                while my_turn and points:
                    answer = await get(
                        {"co": "graczStawiaKropke", "idGracza": secret, "table": uid, "where": points.pop()},
                        moves,
                    )
                    my_turn = answer.startswith("err.illegalMove")

        async def watcher(n: int, until: float) -> None:
            secret = f"w{n:05d}"
            await get({"co": "guestLogin", "idGracza": secret, "opis": f"*W{n}"})
            seen = 0
            while time.monotonic() < until:
                body = await get({"co": "getMsg", "playerId": secret, "msgNo": str(seen)}, polls)
                seen = int(body.split("/", 2)[1][1:].split(".")[1])
                await asyncio.sleep(1.0)

        until = time.monotonic() + args.seconds
        await asyncio.gather(
            *(player(n, until) for n in range(args.ai_games)),
            *(watcher(n, until) for n in range(args.watchers)),
        )
    polls.sort()
    moves.sort()
    p99 = percentile(polls, 0.99) * 1000
    print(
        f"{args.ai_games} games against AI hard ({args.game_type}) and {args.watchers} watchers for "
        f"{args.seconds:.0f} s: {len(moves)} player moves (p99 {percentile(moves, 0.99) * 1000:.1f} ms), "
        f"{len(polls)} watcher polls p50 {percentile(polls, 0.5) * 1000:.1f} ms p99 {p99:.1f} ms "
        f"max {polls[-1] * 1000:.1f} ms; errors {len(errors)} {errors[:3]}"
    )
    return p99 if not errors else float("inf")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--games", type=int, default=50, help="games in each strength match")
    add("--size", type=int, default=10, help="board side in the strength matches")
    add("--processes", type=int, default=2, help="processes playing the strength matches")
    add("--search-seconds", type=float, default=3.0, help="seconds of search per level for playouts/s")
    add("--ai-games", type=int, default=100)
    add("--watchers", type=int, default=200)
    add("--seconds", type=float, default=60.0, help="length of the stream measurement")
    add("--game-type", default="2020s0..a.A.a.600.5..", help="the games against the computer")
    add("--skip-strength", action="store_true")
    add("--skip-stream", action="store_true")
    add("--python", default=str(HERE.parent / ".venv" / "bin" / "python"))
    args = parser.parse_args()

    ok = True
    playouts_per_second(args.search_seconds)
    if not args.skip_strength:
        levels = sorted(ai.LEVELS)
        share = match(levels[0], RANDOM, args.games, args.size, args.processes)
        ok &= share >= TARGET_VS_RANDOM
        for weaker, stronger in zip(levels, levels[1:], strict=False):
            ok &= match(stronger, weaker, args.games, args.size, args.processes) >= TARGET_VS_WEAKER
    if not args.skip_stream:
        ok &= asyncio.run(stream_under_ai_load(args)) < TARGET_P99_MS
    targets = "95% against random, 70% against the next weaker level, p99 < 100 ms"
    print("PASS" if ok else "FAIL", f"(targets: {targets})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
