"""The capture rules on drawn positions: every edge case of rules.md 2.3 and the manual rings."""

import pytest

from server.engine.board import BLACK, WHITE, Board, IllegalMove
from tests.engine.drawing import draw


def at(board: Board, x: int, y: int) -> int:
    return board.index((x, y))


def test_dot_enclosed_by_four_is_captured() -> None:
    board, made = draw(
        """
        .....
        ..B..
        .BaB.
        ..B..
        .....
        """
    )
    assert board.score[BLACK] == 1 and board.score[WHITE] == 0
    assert len(made) == 1 and made[0].owner == BLACK and len(made[0].ring) == 4
    centre = at(board, 2, 2)
    assert board.live[centre] == 0 and board.realm[centre] == BLACK
    assert not board.playable(centre)


def test_region_touching_the_edge_is_never_enclosed() -> None:
    board, made = draw(
        """
        .BaB.
        ..B..
        .....
        """
    )
    assert made == [] and board.score[BLACK] == 0
    assert board.live[at(board, 2, 0)] == WHITE


def test_empty_enclosure_is_a_pool_and_stays_playable() -> None:
    board, made = draw(
        """
        .....
        ..A..
        .A.A.
        ..A..
        .....
        """
    )
    centre = at(board, 2, 2)
    assert made == [] and board.pool[centre] == BLACK
    assert board.playable(centre)


def test_enemy_dot_put_into_a_pool_is_captured_at_once() -> None:
    board, made = draw(
        """
        .....
        ..A..
        .AbA.
        ..A..
        .....
        """
    )
    assert board.score[BLACK] == 1
    assert [e.owner for e in made] == [BLACK]
    assert board.live[at(board, 2, 2)] == 0


def test_own_dot_in_own_pool_just_ends_the_pool_there() -> None:
    board, made = draw(
        """
        ......
        ..AA..
        .A..A.
        ..AA..
        ......
        """
    )
    assert board.pool[at(board, 2, 2)] == BLACK and board.pool[at(board, 3, 2)] == BLACK
    board.play(at(board, 2, 2), BLACK)
    assert board.pool[at(board, 2, 2)] == 0 and board.pool[at(board, 3, 2)] == BLACK
    assert board.score == [0, 0, 0]


def test_dot_in_a_pool_that_closes_its_own_ring_wins_and_dissolves_the_pool() -> None:
    board, made = draw(
        """
        ..c..
        .cAc.
        .AdA.
        ..A..
        .....
        """
    )
    assert board.score[WHITE] == 1 and board.score[BLACK] == 0
    assert [e.owner for e in made] == [WHITE]
    assert board.live[at(board, 2, 1)] == 0  # the blue border dot is captured
    assert board.live[at(board, 2, 2)] == WHITE
    assert not any(board.pool)


def test_enclosing_an_enemy_realm_frees_own_dots() -> None:
    board, made = draw(
        """
        .......
        ...C...
        ..CbC..
        .CbAbC.
        ..CbC..
        ...C...
        .......
        """
    )
    # red's diamond captured blue's A first; then blue's C diamond swallows red's realm
    assert [e.owner for e in made] == [WHITE, BLACK]
    assert board.score[WHITE] == 0, "the freed blue dot is taken off red's score"
    assert board.score[BLACK] == 4
    assert board.live[at(board, 3, 3)] == BLACK


def test_own_empty_ring_inside_a_new_realm_is_swallowed() -> None:
    board, made = draw(
        """
        ...........
        .....C.....
        ....C.C....
        ...C...C...
        ..C..A..C..
        .C.bA.A..C.
        ..C..A..C..
        ...C...C...
        ....C.C....
        .....C.....
        ...........
        """
    )
    inner = at(board, 5, 5)
    assert len(made) == 1 and board.score[BLACK] == 1
    assert board.realm[inner] == BLACK and board.pool[inner] == 0 and not board.playable(inner)


def test_own_ring_touching_the_new_border_is_not_a_hole() -> None:
    """The region's outer boundary runs along the inner ring when the two touch (rules.md 2.1)."""
    board, made = draw(
        """
        .........
        ....C....
        ...C.C...
        ..C..AC..
        .Cb.A.AC.
        ..C..AC..
        ...C.C...
        ....C....
        .........
        """
    )
    assert len(made) == 1 and board.score[BLACK] == 1
    assert board.pool[at(board, 5, 4)] == BLACK and board.playable(at(board, 5, 4))


def test_realm_is_minimal_in_a_lattice_of_own_dots() -> None:
    board, made = draw(
        """
        .......
        .BBB...
        .BaB...
        .BBB...
        .......
        """
    )
    assert len(made) == 1 and sorted(board.point(p) for p in made[0].ring) == [(1, 2), (2, 1), (2, 3), (3, 2)]
    assert not board.bound[at(board, 1, 1)], "corner dots are not part of the minimal ring"
    assert board.score[BLACK] == 1


def test_double_ring_only_the_part_with_an_enemy_dot_becomes_a_realm() -> None:
    board, made = draw(
        """
        .......
        .BB.BB.
        B.aC..B
        .BB.BB.
        .......
        """
    )
    assert len(made) == 1 and board.score[BLACK] == 1
    assert board.realm[at(board, 1, 2)] == BLACK
    assert board.pool[at(board, 4, 2)] == BLACK and board.playable(at(board, 4, 2))


def test_one_move_can_close_two_realms() -> None:
    board, made = draw(
        """
        .......
        .BB.BB.
        B.aCa.B
        .BB.BB.
        .......
        """
    )
    assert len(made) == 2 and {e.owner for e in made} == {BLACK}
    assert board.score[BLACK] == 2


def test_dots_already_captured_are_not_counted_again() -> None:
    board, made = draw(
        """
        .........
        ....D....
        ...D.D...
        ..D.B.D..
        .D.BaB.D.
        ..D.B.D..
        ...DcD...
        ....D....
        .........
        """
    )
    # the big ring holds blue's older realm: its red dot is not counted a second time
    assert [e.captured for e in made] == [1, 1]
    assert board.score[BLACK] == 2


def test_captured_dots_are_dead_for_play_and_for_rings() -> None:
    board, _ = draw(
        """
        .......
        ..B....
        .BaB...
        ..Bc...
        .......
        """
    )
    dead = at(board, 2, 2)
    assert not board.playable(dead)
    with pytest.raises(IllegalMove, match="captured dot"):
        board.play(dead, BLACK)
    # red's dots round blue's (3,2) would need the dead dot to close: nothing happens
    made = board.play(at(board, 4, 2), WHITE) + board.play(at(board, 3, 1), WHITE)
    assert made == [] and board.score[WHITE] == 0


def test_no_play_inside_a_realm() -> None:
    board, _ = draw(
        """
        ......
        ..BB..
        .Ba.B.
        ..BB..
        ......
        """
    )
    empty_inside = at(board, 3, 2)
    assert board.realm[empty_inside] == BLACK
    with pytest.raises(IllegalMove, match="inside a realm"):
        board.play(empty_inside, WHITE)


def test_last_dot_on_a_full_board_can_be_captured() -> None:
    board, _ = draw(
        """
        aBa
        B.B
        aBa
        """
    )
    last = at(board, 1, 1)
    assert board.free_points == 1 and board.pool[last] == BLACK
    board.play(last, WHITE)
    assert board.score[BLACK] == 1 and board.is_full()


def ring(board: Board, points: str) -> list[int]:
    from server.engine.moves import parse_points

    return [board.index(p) for p in parse_points(points)]


def test_manual_mode_never_encloses_by_itself() -> None:
    board, _ = draw(
        """
        .....
        ..B..
        .BaB.
        ..B..
        .....
        """,
        automatic=False,
    )
    assert board.score == [0, 0, 0] and board.live[at(board, 2, 2)] == WHITE


def test_manual_ring_captures() -> None:
    board, _ = draw(
        """
        .....
        ..B..
        .BaB.
        ..B..
        .....
        """,
        automatic=False,
    )
    enclosure = board.enclose_ring(ring(board, "cbdccdbccb"), BLACK)
    assert enclosure.captured == 1 and board.score[BLACK] == 1
    assert board.live[at(board, 2, 2)] == 0


@pytest.mark.parametrize(
    ("points", "reason"),
    [
        ("cbdccdbc", "closed"),
        ("cbdccdbccbdccb", "only once"),
        ("cbccdccb", "at least 4"),
        ("cbdcbccdcb", "neighbour"),
        ("cbdccdcccb", "live dot of the player"),
    ],
)
def test_bad_manual_rings_are_refused_and_change_nothing(points: str, reason: str) -> None:
    board, _ = draw(
        """
        .....
        ..B..
        .BaB.
        ..B..
        .....
        """,
        automatic=False,
    )
    before = board.state()
    with pytest.raises(IllegalMove, match=reason):
        board.enclose_ring(ring(board, points), BLACK)
    assert board.state() == before


def test_manual_ring_must_hold_a_live_enemy_dot_unless_it_is_territory() -> None:
    board, _ = draw(
        """
        .....
        ..B..
        .B.B.
        ..B..
        .....
        """,
        automatic=False,
    )
    with pytest.raises(IllegalMove, match="no live enemy dot"):
        board.enclose_ring(ring(board, "cbdccdbccb"), BLACK)
    free = board.free_points
    board.enclose_ring(ring(board, "cbdccdbccb"), BLACK, territory=True)
    assert board.free_points == free - 1 and not board.playable(at(board, 2, 2))


def test_target_enclosure_is_minimal_or_nothing() -> None:
    board, _ = draw(
        """
        .......
        .BBB...
        .BaB.b.
        .BBB...
        .......
        """,
        automatic=False,
    )
    made = board.enclose_target(at(board, 2, 2), BLACK)
    assert made is not None and len(made.ring) == 4 and board.score[BLACK] == 1
    assert board.enclose_target(at(board, 5, 2), BLACK) is None
    with pytest.raises(IllegalMove, match="live enemy dot"):
        board.enclose_target(at(board, 1, 1), BLACK)


def test_pool_walled_only_by_older_realm_borders_is_swallowed() -> None:
    """A hole bounded by the borders of two older realms is inside the new realm too (rules.md 2.1).

    oppai-rs stops its interior flood at realm borders and would leave (5, 5) a playable pool.
    """
    picture = """
        ...........
        ...EEEEE...
        ..E.....E..
        .E..B..a.E.
        .E.BaB...E.
        .E..B.C..E.
        .E...CaD.E.
        .E....D..E.
        ..E.....E..
        ...EEEEF...
        ...........
        """
    before, _ = draw(picture.replace("E", ".").replace("F", "."))
    hole = at(before, 5, 5)
    assert before.pool[hole] == BLACK and before.score[BLACK] == 2
    board, _ = draw(picture)
    assert board.score[BLACK] == 3
    assert board.realm[hole] == BLACK and board.pool[hole] == 0 and not board.playable(hole)
