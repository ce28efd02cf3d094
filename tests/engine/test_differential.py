"""The fast board against the simple reference implementation of rules.md 2.1-2.2, move by move."""

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.engine.board import BLACK, Board
from tests.engine.reference import ReferenceBoard


def compare_game(width: int, height: int, seed: int) -> int:
    """Play one random game on both boards and compare after every move; return the moves played."""
    rng = random.Random(seed)
    fast = Board(width, height)
    slow = ReferenceBoard(width, height)
    points = [(x, y) for y in range(height) for x in range(width)]
    rng.shuffle(points)
    player = BLACK
    moves = 0
    for x, y in points:
        pos = fast.index((x, y))
        legal = fast.playable(pos)
        assert legal == slow.playable(x, y), f"move {moves}: legality of {(x, y)} differs"
        if not legal:
            continue
        fast.play(pos, player)
        assert slow.play(x, y, player)
        moves += 1
        where = f"seed {seed}, move {moves} at {(x, y)}"
        assert (fast.score[1], fast.score[2]) == (slow.score(1), slow.score(2)), where
        for px, py in points:
            p = fast.index((px, py))
            assert fast.playable(p) == slow.playable(px, py), f"{where}: playable {(px, py)}"
            if fast.color[p]:
                assert (fast.live[p] != 0) == slow.is_live(px, py), f"{where}: live {(px, py)}"
            if fast.playable(p):
                assert fast.pool[p] == slow.pool(px, py), f"{where}: pool {(px, py)}"
        player = 3 - player
    return moves


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(min_value=4, max_value=12),
    st.integers(min_value=4, max_value=12),
    st.integers(min_value=0, max_value=2**32 - 1),
)
def test_small_boards_agree_with_the_reference(width: int, height: int, seed: int) -> None:
    compare_game(width, height, seed)


def test_full_size_games_agree_with_the_reference() -> None:
    for seed in range(3):
        assert compare_game(20, 20, seed) > 200
    assert compare_game(39, 32, 99) > 700
