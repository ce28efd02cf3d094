"""Game flow: turns, manual moves, STOP, InstantWin, endings, results, undo, starting positions."""

import gc
from fractions import Fraction

import pytest

from server.engine.board import BLACK, WHITE, IllegalMove
from server.engine.game import Game, Result, Rules, game_for_type
from server.engine.gametype import parse_game_type
from server.engine.moves import MoveSpec, parse_move, point_to_sgf
from server.engine.record import game_to_record
from server.engine.replay import replay_record
from server.engine.sgf import read_record, write_record
from server.engine.start import four_crosses, handicap, one_cross, two_crosses
from tests.engine.drawing import draw

STANDARD = Rules()
NO_TERRITORY = Rules(stop_allowed=True)
TERRITORY = Rules(automatic=False)


def play(game: Game, *moves: str) -> None:
    """Alternate the given moves from whoever is on move."""
    for text in moves:
        game.play(game.to_move, parse_move(text, game.width, game.height))


def test_blue_starts_and_turns_alternate() -> None:
    game = Game(8, 8)
    assert game.to_move == BLACK
    play(game, "cc")
    assert game.to_move == WHITE
    with pytest.raises(IllegalMove, match="not your move"):
        game.play(BLACK, MoveSpec((4, 4)))


@pytest.mark.parametrize(
    ("move", "reason"),
    [("cc", "occupied"), ("zz", "outside"), ("cc.ccddcc", "automatic")],
)
def test_refused_moves_change_nothing(move: str, reason: str) -> None:
    game = Game(8, 8)
    play(game, "cc")
    before = (game.board.state(), game.to_move, len(game.moves))
    with pytest.raises(IllegalMove, match=reason):
        game.play(WHITE, parse_move(move))
    assert (game.board.state(), game.to_move, len(game.moves)) == before


def test_territory_move_with_an_invalid_second_ring_is_refused_whole() -> None:
    game = Game(8, 8, TERRITORY)
    play(game, "cb", "cc", "bc", "hh", "dc", "hg")
    before = game.board.state()
    with pytest.raises(IllegalMove, match="neighbour"):
        # the dot, a good ring, then a ring with a jump: nothing of it may stay
        game.play(BLACK, parse_move("cd.cbdccdbccb.cbdcbccdcb"))
    assert game.board.state() == before and game.to_move == BLACK
    move = game.play(BLACK, parse_move("cd.cbdccdbccb"))
    assert len(move.enclosures) == 1 and game.captured(BLACK) == 1


def test_territory_quick_enclosure_and_plain_dot() -> None:
    game = Game(8, 8, TERRITORY)
    play(game, "cb", "cc", "bc", "hh", "dc", "hg")
    move = game.play(BLACK, parse_move("cd!cc"))
    assert game.captured(BLACK) == 1 and len(move.enclosures[0].ring) == 4
    move = game.play(WHITE, parse_move("gh!cb"))  # no red ring round cb: the dot is just played
    assert move.enclosures == () and game.board.live[game.board.index((6, 7))] == WHITE


def test_stop_places_dots_round_ungrounded_dots_and_the_opponent_goes_on() -> None:
    game = Game(10, 10, NO_TERRITORY)
    play(game, "ee", "ad", "jj", "aa")  # blue's lone dot ee is ungrounded
    placed = game.stop(BLACK)
    assert [move.point for move in placed] == [(4, 3), (5, 4), (4, 5), (3, 4)]  # north, east, south, west
    assert all(move.player == WHITE and move.automatic for move in placed)
    assert game.captured(WHITE) == 1
    assert game.to_move == WHITE and game.result is None
    play(game, "hh", "hi")  # red alone places extra dots
    with pytest.raises(IllegalMove, match="pressed STOP"):
        game.play(BLACK, MoveSpec((0, 9)))
    game.stop(WHITE)  # red's own ungrounded dots (hh, hi, the ring round ee) are not given away
    assert str(game.result) == "W+1"
    assert "B pressed STOP" in (game.moves[3].comment or "")


def drawn_game(picture: str, rules: Rules = NO_TERRITORY) -> Game:
    """A game at a drawn position (tests/engine/drawing.py), blue on move."""
    board, _ = draw(picture)
    game = Game(board.width, board.height, rules)
    game.board = board
    return game


def test_stop_gives_away_dots_that_reach_a_grounded_dot_only_through_their_own_pool() -> None:
    """rules.md 1.6 (oppai-rs's test `grounded_empty_surrounding`): a pool is not an own point, so the
    five dots round blue's pool are ungrounded, although the pool touches ec, grounded by fc on the
    edge. The STOP used to give them away to nobody (its dots kept out of the pool: 0); oppai-rs and
    KvanTTT's dots-game count 5. Red's dots in the pool come last: cc rings bc, which ends the pool,
    then dc rings the rest."""
    game = drawn_game(
        """
        ......
        ..AA..
        .A..AA
        ..AA..
        ......
        """
    )
    placed = game.stop(BLACK)
    dots = ["bb", "bd", "ac", "ca", "ce", "da", "eb", "ed", "de", "cc", "dc"]
    assert [point_to_sgf(move.point) for move in placed] == dots
    assert game.board.score == [0, 0, 5] and game.ungrounded_dots() == (0, 0)
    assert str(game.score_result()) == "W+5"


def test_stop_counts_a_group_that_only_two_dots_in_the_stoppers_pool_could_ring() -> None:
    """Any one red dot in blue's pool would be blue's capture, so red's dots go round the three
    ungrounded groups above the pool and capture nothing; the score gives red their 8 dots all the
    same."""
    game = drawn_game(
        """
        ........
        ..AAAA..
        .A....A.
        .A....A.
        ..AAAA..
        ....A...
        ....A...
        """
    )
    placed = game.stop(BLACK)
    assert len(placed) == 12
    assert all(game.board.pool[game.board.index((x, y))] == BLACK for x in range(2, 6) for y in (2, 3))
    assert game.board.score == [0, 0, 0] and game.ungrounded_dots() == (8, 0)
    assert str(game.score_result()) == "W+8"


def test_stop_dots_keep_out_of_a_pool_that_only_ungrounded_dots_wall() -> None:
    game = drawn_game(
        """
        .....
        ..A..
        .A.A.
        ..A..
        .....
        """
    )
    placed = game.stop(BLACK)  # ba, cb, cd, dc in column order; round each, north, east, south, west
    assert [point_to_sgf(move.point) for move in placed] == ["bb", "bd", "ac", "ca", "db", "dd", "ce", "ec"]
    centre = game.board.index((2, 2))
    assert game.board.realm[centre] == WHITE and str(game.score_result()) == "W+4"


def test_stop_gives_away_an_ungrounded_realm_with_the_dots_it_holds() -> None:
    """Counted as oppai-rs and KvanTTT count: red gets blue's 4 dots, blue loses the red dot it held."""
    picture = """
        .......
        ...A...
        ..AbA..
        ...A...
        .......
        """
    game = drawn_game(picture)
    assert game.board.score == [0, 1, 0] and game.ungrounded_dots() == (0, 0)
    game.stop(BLACK, auto_place=False)  # as a record is read back: its dots would follow as moves
    assert game.ungrounded_dots() == (4, 1) and str(game.score_result()) == "W+4"
    played = drawn_game(picture)
    played.stop(BLACK)  # red's ring frees the red dot
    assert played.board.score == [0, 0, 4] and str(played.score_result()) == "W+4"


def test_stop_counts_what_its_dots_had_no_time_to_capture_when_instant_win_ends_the_game() -> None:
    game = Game(10, 5, Rules(stop_allowed=True, instant_win=1))
    play(game, "bb", "ia", "ed", "ja")  # blue's lone dots bb and ed are ungrounded
    placed = game.stop(BLACK)
    assert [point_to_sgf(move.point) for move in placed] == ["ba", "cb", "bc", "ab"]  # bb is taken: lead 1
    assert game.board.score == [0, 0, 1] and game.ungrounded_dots() == (1, 0)
    assert str(game.result) == "W+2"  # ed counts too
    record = write_record(game_to_record(game, black_name="Ala", white_name="Bob", date="2026-11-25"))
    replayed = replay_record(read_record(record)).game
    assert replayed.board.state() == game.board.state() and replayed.result == game.result


def test_stop_only_in_no_territory_rules_and_on_ones_move() -> None:
    with pytest.raises(IllegalMove, match="not allowed"):
        Game(8, 8).stop(BLACK)
    game = Game(8, 8, NO_TERRITORY)
    with pytest.raises(IllegalMove, match="not your move"):
        game.stop(WHITE)


def test_instant_win_ends_the_game_when_the_lead_reaches_it() -> None:
    game = Game(8, 8, Rules(instant_win=1))
    play(game, "cb", "cc", "bc", "hh", "dc", "hg", "cd")
    assert game.result == Result(BLACK, "score", Fraction(1))
    with pytest.raises(IllegalMove, match="over"):
        play(game, "aa")


def test_full_board_ends_the_game_by_score() -> None:
    game = Game(4, 4)
    order = ["aa", "ba", "ca", "da", "ab", "bb", "cb", "db", "ac", "bc", "cc", "dc", "ad", "bd", "cd", "dd"]
    play(game, *order)
    assert game.board.is_full() and game.result == Result(0, "score")


def test_free_placing_takes_either_colour_and_never_ends_by_itself() -> None:
    game = Game(4, 4, Rules(stop_allowed=True, instant_win=1, free_placing=True))
    game.play(WHITE, MoveSpec((0, 0)))  # red first
    game.play(WHITE, MoveSpec((1, 0)))  # and again
    assert game.to_move == BLACK
    order = ["ca", "da", "ab", "bb", "cb", "db", "ac", "bc", "cc", "dc", "ad", "bd", "cd", "dd"]
    play(game, *order)
    assert game.board.is_full() and game.result is None
    with pytest.raises(IllegalMove, match="no STOP in an analysis"):
        game.stop(game.to_move)
    game.undo()
    assert not game.board.is_full() and [m.player for m in game.moves[:3]] == [WHITE, WHITE, BLACK]


@pytest.mark.parametrize(
    ("end", "text"),
    [("resign", "W+R"), ("lose_on_time", "W+T"), ("forfeit", "W+F")],
)
def test_endings_by_a_player(end: str, text: str) -> None:
    game = Game(8, 8)
    getattr(game, end)(BLACK)
    assert str(game.result) == text
    with pytest.raises(IllegalMove, match="over"):
        game.resign(WHITE)


def test_void_and_agreed_score() -> None:
    game = Game(8, 8)
    assert str(game.void()) == "Void"
    game = Game(8, 8)
    play(game, "cb", "cc", "bc", "hh", "dc", "hg", "cd")
    assert str(game.finish_by_score()) == "B+1"


@pytest.mark.parametrize("text", ["B+3", "W+1.5", "0", "B+R", "W+T", "B+F", "W+F", "Void", "W+57"])
def test_results_read_and_write_back(text: str) -> None:
    assert str(Result.parse(text)) == text


@pytest.mark.parametrize("text", ["", "B+", "X+1", "B+1.25", "W+r", "void", "B+-1"])
def test_malformed_results_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        Result.parse(text)


def test_territory_rings_score_half_a_point_per_free_point() -> None:
    game = Game(8, 8, TERRITORY)
    play(game, "cb", "hh", "bc", "hg", "dc", "gh", "cd")
    game.apply_territory([[(2, 1), (3, 2), (2, 3), (1, 2), (2, 1)]], [])
    assert game.score(BLACK) == Fraction(1, 2) and str(game.score_result()) == "B+0.5"
    with pytest.raises(IllegalMove, match="already"):
        game.apply_territory([], [])


def test_undo_restores_captures_exactly() -> None:
    game = Game(8, 8)
    play(game, "cb", "cc", "bc", "hh", "dc", "hg")
    before = game.board.state()
    play(game, "cd")
    assert game.captured(BLACK) == 1
    undone = game.undo()
    assert undone.point == (2, 3) and game.board.state() == before and game.to_move == BLACK
    assert len(game.moves) == 6


def test_the_record_and_what_undo_replays_are_left_alone_by_the_garbage_collector() -> None:
    """A server keeps every move of thousands of games; a full collection walks every tracked object,
    so the record and the replay list hold flat tuples of numbers, which one collection of the young
    generation (all a serving process gives a new object, server/gcschedule.py) stops tracking."""
    game = Game(8, 8, TERRITORY)
    play(game, "cb", "cc", "bc", "hh", "dc", "hg")
    gc.collect(1)
    assert game._played and not any(gc.is_tracked(entry) for entry in game._played)
    assert not any(gc.is_tracked(row) for row in game.moves._rows)
    play(game, "cd.cbbccddccb")
    game.undo()  # and the replay still restores the position, manual rings included
    assert len(game.moves) == 6 and game.captured(BLACK) == 0


def test_undo_is_refused_without_a_move_and_after_the_end() -> None:
    game = Game(8, 8)
    with pytest.raises(IllegalMove, match="no move"):
        game.undo()
    play(game, "aa")
    game.resign(WHITE)
    with pytest.raises(IllegalMove, match="no move"):
        game.undo()


def test_one_cross_matches_zagram_records() -> None:
    assert one_cross(39, 32).black == ((18, 15), (19, 16))
    assert one_cross(39, 32).white == ((19, 15), (18, 16))
    assert one_cross(30, 30).black == ((14, 14), (15, 15))


def test_two_crosses_match_playdots_double_cross_record() -> None:
    # playdots.ru game 109964, "double cross in the centre": AB[sp][tq][uq][vp] AW[sq][tp][up][vq]
    setup = two_crosses(39, 32)
    assert set(setup.black) == {(18, 15), (19, 16), (20, 16), (21, 15)}
    assert set(setup.white) == {(18, 16), (19, 15), (20, 15), (21, 16)}
    assert setup.first == BLACK


@pytest.mark.parametrize(
    ("width", "height", "left"),
    [(4, 4, 0), (5, 4, 1), (6, 4, 1), (20, 20, 8), (25, 25, 11), (52, 52, 24)],  # KataGoDots' layouts
)
def test_two_crosses_are_a_centred_block_b_w_w_b_over_w_b_b_w(width: int, height: int, left: int) -> None:
    setup = two_crosses(width, height)
    top = height // 2 - 1
    colour = {**dict.fromkeys(setup.black, "B"), **dict.fromkeys(setup.white, "W")}
    rows = {y: "".join(colour.get((x, y), ".") for x in range(width)) for y in (top, top + 1)}
    assert rows[top][left : left + 4] == "BWWB" and rows[top + 1][left : left + 4] == "WBBW"
    assert len(setup.black) == len(setup.white) == 4 and rows[top].count(".") == width - 4
    if width % 2:
        assert set(one_cross(width, height).black) <= set(setup.black)  # the left cross is zagram's one cross


def test_four_crosses_are_reproducible_apart_and_inside() -> None:
    setup = four_crosses(39, 32, seed=7)
    assert setup == four_crosses(39, 32, seed=7)
    assert setup != four_crosses(39, 32, seed=8)
    assert len(set(setup.black + setup.white)) == 16
    corners = setup.black[::2]
    for i, (x1, y1) in enumerate(corners):
        assert 8 <= x1 <= 29 and 8 <= y1 <= 22
        for x2, y2 in corners[i + 1 :]:
            assert max(abs(x1 - x2), abs(y1 - y2)) >= 3
    with pytest.raises(ValueError, match="at least"):
        four_crosses(9, 20, seed=1)


def test_handicap_dots_and_red_moves_first() -> None:
    setup = handicap(15, 15, 4)
    assert set(setup.black) == {(11, 3), (3, 11), (11, 11), (3, 3)}  # HA[4]AB[ld][dl][ll][dd]
    assert setup.first == WHITE and Game(15, 15, STANDARD, setup).to_move == WHITE
    for stones in range(2, 10):
        assert len(set(handicap(20, 20, stones).black)) == stones
    with pytest.raises(ValueError):
        handicap(20, 20, 10)


def test_dots_placed_counts_stop_dots_but_not_crosses() -> None:
    game = Game(10, 10, NO_TERRITORY, one_cross(10, 10))
    play(game, "aa", "jj", "cc")
    game.stop(WHITE)
    assert game.dots_placed() == 3 + sum(1 for m in game.moves if m.automatic)


def test_pools_are_worth_nothing_in_standard_scoring() -> None:
    game = Game(8, 8)
    play(game, "cb", "hh", "bc", "hg", "dc", "gh", "cd")  # blue's diamond round the empty cc: a pool
    assert game.board.pool[game.board.index((2, 2))] == BLACK
    assert game.score(BLACK) == 0 and str(game.score_result()) == "0"


@pytest.mark.parametrize(
    ("text", "automatic", "stop", "instant_win", "black_dots", "first"),
    [
        ("2020stanR0.180.15", True, False, 0, 0, BLACK),
        ("3932noT1r0.180.20_PWC 2012", True, True, 0, 2, BLACK),
        ("2525noT4R15.180.15", True, True, 15, 8, BLACK),
        ("2525n0.2.a.R.a.300.5._SRAP_srap.", True, True, 0, 4, BLACK),
        ("2020terrF0.0.0", False, False, 0, 0, BLACK),
        ("1515s0.H4.s.F.n....", True, False, 0, 4, WHITE),
        ("2020t15..s.R.a.180.15..", False, False, 15, 0, BLACK),
    ],
)
def test_game_types_make_their_games(
    text: str, automatic: bool, stop: bool, instant_win: int, black_dots: int, first: int
) -> None:
    game = game_for_type(parse_game_type(text), seed=5)
    assert game.rules == Rules(automatic, stop, instant_win)
    assert len(game.setup.black) == black_dots and game.to_move == first


def test_archived_start_needs_its_set_up() -> None:
    game_type = parse_game_type("2020s0.SGFz12.a.F.n....")
    with pytest.raises(ValueError, match="archived game 12"):
        game_for_type(game_type)
    archived = one_cross(20, 20)
    assert game_for_type(game_type, archived=archived).setup == archived


def test_live_territory_move_needs_a_dot_but_a_record_may_hold_a_ring_alone() -> None:
    game = Game(8, 8, TERRITORY)
    play(game, "cb", "cc", "bc", "hh", "dc", "hg", "cd", "gh")
    with pytest.raises(IllegalMove, match="must place a dot"):
        game.play(BLACK, parse_move(".cbdccdbccb"))
    move = game.play(BLACK, parse_move(".cbdccdbccb"), any_ring_owner=True)
    assert move.point is None and game.captured(BLACK) == 1


def test_agreed_territory_takes_each_players_closed_regions() -> None:
    game = Game(8, 8, TERRITORY)
    # blue walls in the 2x2 corner region bb..cc; red has a lone dot inside blue's wall and one outside
    play(game, "ba", "bb", "ca", "hh", "ab", "hg", "db", "gh", "ac", "gg", "dc", "fh", "bd", "hf", "cd")
    game.agree_territory()
    black_rings, white_rings = game.final_rings
    assert len(black_rings) == 1 and set(black_rings[0]) == {
        (1, 0),
        (2, 0),
        (0, 1),
        (3, 1),
        (0, 2),
        (3, 2),
        (1, 3),
        (2, 3),
    }
    assert white_rings == []  # red's corner dots enclose nothing
    # blue takes red's dot bb (1 captured) and 3 free points (1.5)
    assert game.captured(BLACK) == 1 and game.score(BLACK) == Fraction(5, 2)
    assert str(game.score_result()).startswith("B+")
