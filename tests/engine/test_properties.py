"""Property tests over random legal games: invariants, undo, and SGF write-then-read."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from server.engine.board import BLACK, EDGE, EMPTY, Board
from server.engine.game import DEFAULT_RULES, Game, Rules
from server.engine.moves import MoveSpec
from server.engine.record import game_to_record
from server.engine.replay import replay_record
from server.engine.sgf import read_record, write_record
from server.engine.start import one_cross

sizes = st.integers(min_value=4, max_value=14)
seeds = st.integers(min_value=0, max_value=2**32 - 1)
FAST = settings(max_examples=60)


def check_invariants(board: Board) -> None:
    """Every point is in exactly one consistent state and the scores are the dots inside realms."""
    counted = [0, 0, 0]
    free = 0
    for pos in board.indices():
        colour, realm, live, bound, pool = (
            board.color[pos],
            board.realm[pos],
            board.live[pos],
            board.bound[pos],
            board.pool[pos],
        )
        if colour == EDGE:
            assert live == EDGE and not realm and not bound and not pool
        elif colour == EMPTY:
            assert live == EMPTY and not bound
            assert not (realm and pool), "a point is either in a realm or in a pool"
            free += realm == 0
        else:
            assert not pool
            dead = realm not in (0, colour)
            assert live == (0 if dead else colour)
            assert not (bound and dead)
            if dead:
                counted[realm] += 1
    assert counted == board.score, "scores equal the enemy dots inside each player's realms"
    assert board.free_points == free


def random_game(
    width: int, height: int, seed: int, rules: Rules = DEFAULT_RULES, *, limit: int = 10_000
) -> Game:
    rng = random.Random(seed)
    game = Game(width, height, rules)
    points = [(x, y) for y in range(height) for x in range(width)]
    rng.shuffle(points)
    for point in points[:limit]:
        if game.result is not None:
            break
        if game.board.playable(game.board.index(point)):
            game.play(game.to_move, MoveSpec(point))
    return game


@FAST
@given(sizes, sizes, seeds)
def test_random_games_keep_the_invariants(width: int, height: int, seed: int) -> None:
    rng = random.Random(seed)
    board = Board(width, height)
    points = board.board_indices()
    rng.shuffle(points)
    player = BLACK
    for pos in points:
        if board.playable(pos):
            board.play(pos, player)
            check_invariants(board)
            player = 3 - player


@FAST
@given(sizes, sizes, seeds, st.integers(min_value=1, max_value=200))
def test_undo_after_any_move_restores_the_previous_state(
    width: int, height: int, seed: int, cut: int
) -> None:
    game = random_game(width, height, seed, limit=cut)
    if game.result is not None or not game.moves:
        return
    before = (game.board.state(), game.to_move, len(game.moves))
    free = [p for p in game.board.board_indices() if game.board.playable(p)]
    if not free:
        return
    game.play(game.to_move, MoveSpec(game.board.point(random.Random(seed).choice(free))))
    if game.result is not None:  # the move filled the board: a finished game has no undo
        assert not game.can_undo()
        return
    game.undo()
    assert (game.board.state(), game.to_move, len(game.moves)) == before
    check_invariants(game.board)


def territory_game(width: int, height: int, seed: int) -> Game:
    """Random territory play where each dot also tries a `!` enclosure round a random enemy dot."""
    rng = random.Random(seed)
    game = Game(width, height, Rules(automatic=False))
    points = [(x, y) for y in range(height) for x in range(width)]
    rng.shuffle(points)
    for point in points:
        board = game.board
        if game.result is not None or not board.playable(board.index(point)):
            continue
        enemies = [board.point(p) for p in board.board_indices() if board.live[p] == 3 - game.to_move]
        targets = (rng.choice(enemies),) if enemies and rng.random() < 0.5 else ()
        game.play(game.to_move, MoveSpec(point, (), targets))
    return game


@FAST
@given(sizes, sizes, seeds, st.sampled_from(["standard", "stop", "territory", "cross"]))
def test_sgf_write_then_read_gives_the_same_game(width: int, height: int, seed: int, kind: str) -> None:
    if kind == "territory":
        game = territory_game(width, height, seed)
    elif kind == "cross":
        game = Game(width, height, Rules(), one_cross(width, height))
        rng = random.Random(seed)
        for _ in range(width * height):
            free = [p for p in game.board.board_indices() if game.board.playable(p)]
            if not free or game.result is not None:
                break
            game.play(game.to_move, MoveSpec(game.board.point(rng.choice(free))))
    else:
        rules = Rules(stop_allowed=kind == "stop")
        game = random_game(width, height, seed, rules, limit=width * height // 2)
        if kind == "stop" and game.result is None:
            game.stop(game.to_move)
    for number in range(len(game.moves)):
        game.set_time_left(number, float(number % 7) + 0.5)
    text = write_record(game_to_record(game, black_name="Ala", white_name="Олег", date="2026-11-22"))
    record = read_record(text)
    replayed = replay_record(record).game
    assert replayed.board.state() == game.board.state()
    assert [(m.player, m.point) for m in replayed.moves] == [(m.player, m.point) for m in game.moves]
    assert [m.time_left for m in replayed.moves] == [m.time_left for m in game.moves]
    assert replayed.stopped == game.stopped
    assert str(replayed.score_result()) == str(game.score_result())
    assert replayed.result == game.result
    meta = {"black_name": "Ala", "white_name": "Олег", "date": "2026-11-22"}
    assert write_record(game_to_record(replayed, **meta)) == text
    assert record.black_name == "Ala" and record.white_name == "Олег"


def test_writer_marks_the_variant_in_ru() -> None:
    game = random_game(8, 8, 1, Rules(stop_allowed=True, instant_win=15), limit=10)
    record = game_to_record(game)
    assert record.rules["MustSurr"] == "1" and record.rules["Stop"] == "1"
    assert record.rules["InstantWin"] == "15"
    assert game_to_record(Game(8, 8, Rules(automatic=False))).rules["MustSurr"] == "0"
    assert game_to_record(Game(8, 8)).rules["Stop"] == "0"
    assert record.handicap is None
