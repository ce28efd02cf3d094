"""The move syntax shared by SGF values and the protocol's `where=`."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.engine.moves import MoveSpec, MoveSyntaxError, parse_move, point_to_sgf, sgf_to_point


def test_coordinates_run_a_to_z_then_A_to_Z() -> None:
    assert sgf_to_point("aa") == (0, 0)
    assert sgf_to_point("sp") == (18, 15)
    assert sgf_to_point("Aq") == (26, 16)
    assert point_to_sgf((51, 51)) == "ZZ"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sm", MoveSpec((18, 12))),
        ("sm.rlqmrnsmrl", MoveSpec((18, 12), (((17, 11), (16, 12), (17, 13), (18, 12), (17, 11)),))),
        ("sm!rm", MoveSpec((18, 12), (), ((17, 12),))),
        (
            "sm.rlqmrnsmrl!bb",
            MoveSpec((18, 12), (((17, 11), (16, 12), (17, 13), (18, 12), (17, 11)),), ((1, 1),)),
        ),
        (".abbccbbaab", MoveSpec(None, (((0, 1), (1, 2), (2, 1), (1, 0), (0, 1)),))),
    ],
)
def test_documented_forms(text: str, expected: MoveSpec) -> None:
    assert parse_move(text) == expected
    assert str(expected) == text


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("s", "not a point"),
        ("s1", "not a point"),
        ("sm.rlqm", "not closed"),
        ("sm.rlq", "odd"),
        ("sm!", "not a point"),
        ("zz", "outside"),
        ("x" * 5000, "too long"),
    ],
)
def test_malformed_moves_are_refused_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(MoveSyntaxError, match=reason):
        parse_move(text, 20, 20)


@given(st.text(max_size=40))
def test_any_text_parses_or_is_refused_cleanly(text: str) -> None:
    try:
        spec = parse_move(text)
    except MoveSyntaxError:
        return
    assert parse_move(str(spec)) == spec


points = st.tuples(st.integers(0, 51), st.integers(0, 51))


@given(
    st.one_of(st.none(), points),
    st.lists(st.lists(points, min_size=1, max_size=6), max_size=3),
    st.lists(points, max_size=3),
)
def test_format_then_parse_is_identity(dot, rings, targets) -> None:
    closed = tuple(tuple(ring + ring[:1]) for ring in rings)
    if dot is None and not closed and not targets:
        return
    spec = MoveSpec(dot, closed, tuple(targets))
    assert parse_move(str(spec)) == spec
