"""How often oppai-rs's realm interiors would differ from this engine's, in dense random games.

docs/rules.md, capture semantics: a new realm swallows everything inside its ring, a pool walled only by
the borders of older realms too (rules.md 2.1), while oppai-rs's capture flood (field.rs `capture`)
does not enter a dot of the mover that lies on the border of a realm, so such a pool stays a playable
pool there. `OppaiInteriorBoard` is this engine with that one change. Both boards play the same games:
every point of the board tried once in a random order, illegal ones skipped, the players alternating
(as benchmarks/engine.py and oppai-rs's own verifier play). A game differs from the first move after
which the two boards disagree on the free points or the scores, or at its end on the position.
Prints the count, the rate, and the seed and move of each game that differs.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.engine.board import BLACK, EDGE, Board  # noqa: E402


class OppaiInteriorBoard(Board):
    """The engine, with a realm's interior flood stopped by the mover's dots on older realm borders."""

    def _interior(self, chain: list[int] | tuple[int, ...], inside: int) -> list[int]:
        player = self.live[chain[0]]
        self._stamp += 1
        stamp = self._stamp
        tag = self._tag
        for pos in chain:
            tag[pos] = stamp
        if tag[inside] == stamp:
            return []
        s = self.stride
        color = self.color
        live = self.live
        bound = self.bound
        tag[inside] = stamp
        found = [inside]
        i = 0
        while i < len(found):
            pos = found[i]
            i += 1
            for nxt in (pos - s, pos + 1, pos + s, pos - 1):
                if tag[nxt] != stamp and not (bound[nxt] and live[nxt] == player):
                    if color[nxt] == EDGE:
                        return []
                    tag[nxt] = stamp
                    found.append(nxt)
        return found


def first_difference(width: int, height: int, seed: int) -> int | None:
    """The move after which the two boards first disagree, or None for a game they play alike."""
    rng = random.Random(seed)
    ours = Board(width, height)
    oppai = OppaiInteriorBoard(width, height)
    points = ours.board_indices()
    rng.shuffle(points)
    player = BLACK
    moves = 0
    for pos in points:
        legal = ours.playable(pos)
        if legal != oppai.playable(pos):
            return moves
        if not legal:
            continue
        ours.play(pos, player)
        oppai.play(pos, player)
        moves += 1
        if ours.free_points != oppai.free_points or ours.score != oppai.score:
            return moves
        player = 3 - player
    return None if position(ours) == position(oppai) else moves


def position(board: Board) -> tuple:
    """What play depends on: dots, which are live, pools, realms round empty points and dead dots, scores.

    Leaves out the realm mark on a live dot inside its owner's realm, which this engine sets and
    oppai-rs's flood does not reach, but which changes nothing.
    """
    realms = bytes(owner if not board.live[pos] else 0 for pos, owner in enumerate(board.realm))
    return bytes(board.color), bytes(board.live), bytes(board.pool), realms, tuple(board.score)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=25_000)
    parser.add_argument("--width", type=int, default=20)
    parser.add_argument("--height", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0, help="the games' seeds are seed, seed + 1, ...")
    args = parser.parse_args()
    start = time.perf_counter()
    differ = []
    for seed in range(args.seed, args.seed + args.games):
        move = first_difference(args.width, args.height, seed)
        if move is not None:
            differ.append(seed)
            print(f"seed {seed}: the boards differ after move {move}", flush=True)
    elapsed = time.perf_counter() - start
    rate = f"one in {args.games / len(differ):,.0f}" if differ else "none"
    print(
        f"{len(differ)} of {args.games} random {args.width}x{args.height} games differ from oppai-rs's "
        f"interiors ({rate}), seeds {args.seed}..{args.seed + args.games - 1}, {elapsed:.0f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
