"""The fast board against the simple reference implementation of rules.md 2.1-2.2, move by move, and
the STOP's score against a plain count of rules.md 1.6 on the reference board."""

import random
from fractions import Fraction

from hypothesis import HealthCheck, given, settings
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


def stop_position(width: int, height: int, seed: int) -> tuple[Game, ReferenceBoard]:
    """A dense random position of a no-territory game (60 to 100 % of the points tried), with
    InstantWin now and then, played on the game and on the reference board alike."""
    rng = random.Random(seed)
    game = Game(width, height, Rules(stop_allowed=True, instant_win=rng.choice((0, 0, 0, 3, 8))))
    reference = ReferenceBoard(width, height)
    points = [(x, y) for y in range(height) for x in range(width)]
    rng.shuffle(points)
    for x, y in points[: round(len(points) * rng.uniform(0.6, 1.0))]:
        if game.result is not None:
            break
        if game.board.playable(game.board.index((x, y))):
            assert reference.play(x, y, game.to_move)
            game.play(game.to_move, MoveSpec((x, y)))
    return game, reference


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
        game, reference = stop_position(width, height, seed)
        if game.result is None:
            tested += 1
            ours, theirs = stop_scores(game, reference)
            if ours != theirs:
                differ.append(f"{width}x{height} seed {seed}: {ours} instead of {theirs}")
    assert tested > 2000
    assert not differ, f"{len(differ)} of {tested} positions differ, as " + "; ".join(differ[:3])


def test_stop_dots_capture_all_they_count_unless_the_game_ends_first() -> None:
    """What the board shows is the score: the automatic dots ring every ungrounded group."""
    for seed in range(400):
        game, reference = stop_position(4 + seed % 9, 4 + seed // 9 % 9, seed)
        if game.result is None:
            ours, theirs = stop_scores(game, reference)
            assert ours == theirs and (game.result is not None or game.ungrounded_dots() == (0, 0)), seed


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(min_value=4, max_value=24),
    st.integers(min_value=4, max_value=24),
    st.integers(min_value=0, max_value=2**32 - 1),
)
def test_stop_scores_as_the_grounding_count_on_any_board(width: int, height: int, seed: int) -> None:
    game, reference = stop_position(width, height, seed)
    if game.result is None:
        ours, theirs = stop_scores(game, reference)
        assert ours == theirs
