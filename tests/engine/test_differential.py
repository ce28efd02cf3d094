"""The fast board against the simple reference implementation of rules.md 2.1-2.2, move by move, and
the STOP's score against a plain count of rules.md 1.6 on the reference board."""

import random
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from server.engine.board import BLACK, WHITE, Board
from server.engine.game import Game, Rules
from server.engine.moves import MoveSpec
from tests.engine.reference import ReferenceBoard, scores_after_grounding


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


@settings(max_examples=80)
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


def stop_position(width: int, height: int, seed: int, reference: ReferenceBoard | None = None) -> Game:
    """A dense random position of a no-territory game (60 to 100 % of the points tried), with
    InstantWin now and then, played on the reference board too when one is given."""
    rng = random.Random(seed)
    game = Game(width, height, Rules(stop_allowed=True, instant_win=rng.choice((0, 0, 0, 3, 8))))
    points = [(x, y) for y in range(height) for x in range(width)]
    rng.shuffle(points)
    for x, y in points[: round(len(points) * rng.uniform(0.6, 1.0))]:
        if game.result is not None:
            break
        if game.board.playable(game.board.index((x, y))):
            assert reference is None or reference.play(x, y, game.to_move)
            game.play(game.to_move, MoveSpec((x, y)))
    return game


Scores = tuple[Fraction, Fraction]


def stop_scores(game: Game, reference: ReferenceBoard) -> tuple[Scores, Scores]:
    """Press STOP for the side on move: (our blue and red scores, the reference count)."""
    assert (game.captured(BLACK), game.captured(WHITE)) == (reference.score(1), reference.score(2))
    expected = scores_after_grounding(reference, game.to_move)
    game.stop(game.to_move)
    return (game.score(BLACK), game.score(WHITE)), (Fraction(expected[0]), Fraction(expected[1]))


def test_stop_scores_as_the_grounding_count_on_thousands_of_dense_positions() -> None:
    differ = []
    tested = 0
    for seed in range(2500):
        width, height = 4 + seed % 9, 4 + seed // 9 % 9
        reference = ReferenceBoard(width, height)
        game = stop_position(width, height, seed, reference)
        if game.result is None:
            tested += 1
            ours, theirs = stop_scores(game, reference)
            if ours != theirs:
                differ.append(f"{width}x{height} seed {seed}: {ours} instead of {theirs}")
    assert tested > 2000
    assert not differ, f"{len(differ)} of {tested} positions differ, as " + "; ".join(differ[:3])


def test_stop_dots_are_plain_moves_and_leave_only_groups_beside_the_stoppers_pool() -> None:
    """The automatic dots replay as ordinary moves (at an analysis table, in another program), and the
    only ungrounded groups they leave, unless the game ends first, touch a pool of the stopper, where
    their dot would have been the stopper's capture."""
    left_beside_a_pool = 0
    for seed in range(300):
        game = stop_position(20, 20, seed)
        if game.result is not None:
            continue
        stopper = game.to_move
        game.stop(stopper)
        again = Game(20, 20, Rules(free_placing=True))
        for move in game.moves:
            again.play(move.player, MoveSpec(move.point))
        assert again.board.state() == game.board.state(), seed
        if game.result is None and game.ungrounded_dots() != (0, 0):
            board = game.board
            for group in groups(board, set(board.ungrounded(stopper))):
                assert any(board.pool[pos + step] == stopper for pos in group for step in steps(board)), seed
            left_beside_a_pool += 1
    assert 0 < left_beside_a_pool < 15  # about 1.5 % of such positions


def steps(board: Board) -> tuple[int, ...]:
    return (-board.stride, 1, board.stride, -1)


def groups(board: Board, points: set[int]) -> list[set[int]]:
    """The points split into groups joined by orthogonal steps."""
    found = []
    while points:
        group = {points.pop()}
        todo = list(group)
        while todo:
            pos = todo.pop()
            for nxt in (pos + step for step in steps(board)):
                if nxt in points:
                    points.remove(nxt)
                    group.add(nxt)
                    todo.append(nxt)
        found.append(group)
    return found


@settings(max_examples=40)
@given(
    st.integers(min_value=4, max_value=24),
    st.integers(min_value=4, max_value=24),
    st.integers(min_value=0, max_value=2**32 - 1),
)
def test_stop_scores_as_the_grounding_count_on_any_board(width: int, height: int, seed: int) -> None:
    reference = ReferenceBoard(width, height)
    game = stop_position(width, height, seed, reference)
    if game.result is None:
        ours, theirs = stop_scores(game, reference)
        assert ours == theirs
