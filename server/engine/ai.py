"""The server's own player: tactical rules, then a Monte Carlo tree search (UCT) over the rules engine.

Pure computation on a `Board` (standard rules: automatic enclosures), so that it runs in a worker
process and the tests can call it directly. docs/ai.md describes the levels and the budgets.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass

from server.engine.board import EMPTY, Board, IllegalMove

EXPLORATION = 0.9  # UCB1's constant, for results scored 0..1
NEAR = 2  # candidate moves lie at most this many points (Chebyshev) from a dot


@dataclass(frozen=True)
class Level:
    name: str
    playouts: int  # per move, at most (a level is the same strength on any machine)
    playout_depth: int  # random moves per playout before the position is scored


LEVELS = {
    1: Level("easy", playouts=100, playout_depth=20),
    2: Level("medium", playouts=500, playout_depth=30),
    3: Level("hard", playouts=2000, playout_depth=40),
}


def playable_points(board: Board) -> list[int]:
    color, realm = board.color, board.realm
    return [i for i in board.board_indices() if color[i] == EMPTY and not realm[i]]


def candidates(board: Board) -> list[int]:
    """Free points near the dots (all free points on an empty board's centre area)."""
    color, realm, stride = board.color, board.realm, board.stride
    near: set[int] = set()
    steps = [dy * stride + dx for dy in range(-NEAR, NEAR + 1) for dx in range(-NEAR, NEAR + 1)]
    for i in board.board_indices():
        if color[i] in (1, 2):
            for step in steps:
                j = i + step
                if 0 <= j < board.size and color[j] == EMPTY and not realm[j]:
                    near.add(j)
    if not near:
        centre = board.index((board.width // 2, board.height // 2))
        return [centre] if board.playable(centre) else playable_points(board)
    return sorted(near)


def gain(board: Board, index: int, player: int) -> int:
    """Enemy dots `player` would capture by playing at `index` (what the move adds to the score)."""
    trial = board.copy()
    before = trial.score[player]
    try:
        trial.play(index, player)
    except IllegalMove:
        return -1
    return trial.score[player] - before


def tactical_move(board: Board, player: int, points: list[int]) -> int | None:
    """Capture when a move captures; otherwise take the point where the opponent would capture."""
    best_capture = max(((gain(board, i, player), i) for i in points), default=(0, None))
    best_threat = max(((gain(board, i, 3 - player), i) for i in points), default=(0, None))
    if best_capture[0] > 0 and best_capture[0] >= best_threat[0]:
        return best_capture[1]
    if best_threat[0] > 0:
        return best_threat[1]
    return None


class _Node:
    __slots__ = ("move", "parent", "children", "untried", "visits", "wins", "mover")

    def __init__(self, move: int | None, parent: _Node | None, mover: int, untried: list[int]) -> None:
        self.move, self.parent, self.mover = move, parent, mover
        self.children: list[_Node] = []
        self.untried = untried
        self.visits = 0
        self.wins = 0.0  # for `mover`, the player who made `move`

    def best_child(self) -> _Node:
        log_visits = math.log(self.visits)
        return max(
            self.children,
            key=lambda c: c.wins / c.visits + EXPLORATION * math.sqrt(log_visits / c.visits),
        )


def _playout(board: Board, to_move: int, depth: int, rng: random.Random) -> float:
    """Random moves near the dots, then 1 / 0.5 / 0 for blue by captured dots."""
    points = candidates(board)
    rng.shuffle(points)
    color, realm = board.color, board.realm
    played = 0
    for index in points:
        if played >= depth:
            break
        if color[index] == EMPTY and not realm[index]:
            board.play(index, to_move)
            to_move = 3 - to_move
            played += 1
    blue, red = board.score[1], board.score[2]
    return 1.0 if blue > red else 0.0 if blue < red else 0.5


def search(board: Board, player: int, level: Level, seconds: float, rng: random.Random) -> tuple[int, int]:
    """UCT from the position with `player` to move: the most visited move and the playouts run."""
    root_moves = candidates(board)
    root = _Node(None, None, 3 - player, list(root_moves))
    deadline = time.monotonic() + seconds
    playouts = 0
    while playouts < level.playouts and (playouts < 8 or time.monotonic() < deadline):
        node, trial, to_move = root, board.copy(), player
        while not node.untried and node.children:  # selection
            node = node.best_child()
            trial.play(node.move, to_move)
            to_move = 3 - to_move
        while node.untried:  # expansion (points a deeper move took are skipped)
            move = node.untried.pop(rng.randrange(len(node.untried)))
            if trial.playable(move):
                trial.play(move, to_move)
                remaining = [m for m in root_moves if trial.playable(m)]
                node.children.append(_Node(move, node, to_move, remaining))
                node = node.children[-1]
                to_move = 3 - to_move
                break
        blue_result = _playout(trial, to_move, level.playout_depth, rng)
        playouts += 1
        while node is not None:  # back-propagation
            node.visits += 1
            node.wins += blue_result if node.mover == 1 else 1.0 - blue_result
            node = node.parent
    if not root.children:
        return root_moves[0], playouts
    return max(root.children, key=lambda c: c.visits).move, playouts


def choose_move(board: Board, player: int, level: int, seconds: float, seed: int) -> tuple[int, int]:
    """The AI's move at `board` for `player`: (board index, playouts run). The board is not changed."""
    points = candidates(board)
    if not points:
        raise IllegalMove("no free point")
    tactic = tactical_move(board, player, points)
    if tactic is not None:
        return tactic, 0
    return search(board, player, LEVELS[level], seconds, random.Random(seed))


def quick_move(board: Board, player: int, seed: int) -> int:
    """A move without a search, for when the search cannot run: tactics, else a point near the dots."""
    points = candidates(board)
    if not points:
        raise IllegalMove("no free point")
    tactic = tactical_move(board, player, points)
    return tactic if tactic is not None else random.Random(seed).choice(points)


def random_move(board: Board, rng: random.Random) -> int:
    """The benchmark's opponent: any free point."""
    return rng.choice(playable_points(board))
