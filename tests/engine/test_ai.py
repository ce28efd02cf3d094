"""The AI's rules on drawn positions, and its search: always a legal move, stronger with more playouts."""

from __future__ import annotations

import random

import pytest

from server.engine import ai
from server.engine.board import BLACK, WHITE, Board
from server.engine.game import Game
from server.engine.moves import MoveSpec
from tests.engine.drawing import draw

# Blue has three sides round red's dot at (3, 2): the fourth point, (3, 3), captures it. Red's three
# dots round blue's (7, 2) wait for (7, 3) in the same way.
CAPTURE_OR_BE_CAPTURED = """
..........
...A...e..
..BcD.fGh.
..........
..........
"""


@pytest.mark.parametrize("level", sorted(ai.LEVELS))
def test_the_ai_captures_when_one_move_captures(level: int) -> None:
    board, _ = draw(CAPTURE_OR_BE_CAPTURED)
    for player, expected in ((BLACK, (3, 3)), (WHITE, (7, 3))):
        move, _ = ai.choose_move(board, player, level, 1.0, seed=1)
        assert board.point(move) == expected
        assert ai.gain(board, move, player) == 1


@pytest.mark.parametrize("level", sorted(ai.LEVELS))
def test_the_ai_stops_the_opponents_one_move_capture(level: int) -> None:
    # Only red threatens: red's dot at (7, 3) is gone, and blue has nothing to capture itself.
    board, _ = draw(
        """
        ..........
        ......e...
        .....fAg..
        ..........
        ..........
        """
    )
    move, _ = ai.choose_move(board, BLACK, level, 1.0, seed=2)
    assert board.point(move) == (6, 3)  # the one point where red would close round (6, 2)


def test_the_bigger_capture_comes_first() -> None:
    # Blue captures one dot at (3, 3), or two by closing at (7, 3) round red's (6, 2) and (7, 2).
    board, _ = draw(
        """
        ..........
        ...A..BC..
        ..BcD.ghE.
        ..........
        ..........
        """
    )
    board.play(board.index((5, 2)), BLACK)
    board.play(board.index((6, 3)), BLACK)
    move, _ = ai.choose_move(board, BLACK, 1, 1.0, seed=3)
    assert ai.gain(board, move, BLACK) == 2 and board.point(move) == (7, 3)


def test_the_search_leaves_the_board_as_it_was_and_answers_on_an_empty_board() -> None:
    board = Board(9, 9)
    before = board.state()
    move, playouts = ai.choose_move(board, BLACK, 2, 1.0, seed=4)
    assert board.state() == before
    assert board.point(move) == (4, 4) and playouts >= 1


@pytest.mark.parametrize("size", [4, 7, 10])
def test_every_move_of_a_whole_game_is_legal(size: int) -> None:
    game = Game(size, size)
    rng = random.Random(size)
    while game.result is None:
        player = game.to_move
        move, _ = ai.choose_move(game.board, player, 1, 0.5, rng.randrange(1000))
        game.play(player, MoveSpec(game.board.point(move)))  # raises IllegalMove if it is not legal
    assert game.board.free_points == 0


def test_a_level_plays_at_most_its_playouts() -> None:
    board, _ = draw(CAPTURE_OR_BE_CAPTURED.replace("c", ".").replace("e", "."))
    _, playouts = ai.search(board, BLACK, ai.LEVELS[1], 30.0, random.Random(5))
    assert playouts == ai.LEVELS[1].playouts
