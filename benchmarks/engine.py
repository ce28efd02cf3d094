"""Engine speed: random complete games on 39x32 under standard rules.

Every game tries all points in a random order, skips the illegal ones and alternates players,
as oppai-rs's verifier does. Prints moves per second and microseconds per move for the board
alone and for the full Game layer (turn checks and move records), on one core.
Target (issue 2): at least 50,000 moves per second.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.engine.board import BLACK, Board  # noqa: E402
from server.engine.game import Game  # noqa: E402
from server.engine.moves import MoveSpec  # noqa: E402


def board_game(width: int, height: int, rng: random.Random) -> int:
    board = Board(width, height)
    points = board.board_indices()
    rng.shuffle(points)
    player = BLACK
    moves = 0
    for pos in points:
        if board.playable(pos):
            board.play(pos, player)
            player = 3 - player
            moves += 1
    return moves


def full_game(width: int, height: int, rng: random.Random) -> int:
    game = Game(width, height)
    board_index = game.board.index
    points = [(x, y) for y in range(height) for x in range(width)]
    rng.shuffle(points)
    for point in points:
        if game.result is not None:
            break
        if game.board.playable(board_index(point)):
            game.play(game.to_move, MoveSpec(point))
    return len(game.moves)


def measure(name: str, play, games: int, width: int, height: int, seed: int) -> float:
    rng = random.Random(seed)
    moves = 0
    start = time.perf_counter()
    for _ in range(games):
        moves += play(width, height, rng)
    elapsed = time.perf_counter() - start
    rate = moves / elapsed
    print(
        f"{name:6} {games} games {width}x{height}: {moves} moves in {elapsed:.2f} s = "
        f"{rate:,.0f} moves/s, {1e6 / rate:.1f} us/move"
    )
    return rate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--width", type=int, default=39)
    parser.add_argument("--height", type=int, default=32)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rate = measure("board", board_game, args.games, args.width, args.height, args.seed)
    measure("game", full_game, args.games, args.width, args.height, args.seed)
    print(f"target 50,000 moves/s on the board: {'met' if rate >= 50_000 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
