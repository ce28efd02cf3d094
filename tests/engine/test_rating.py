"""Glicko-2 ratings: the paper's worked example and the properties the server relies on."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.engine.rating import (
    INITIAL,
    MAX_DEVIATION,
    MIN_DEVIATION,
    Rating,
    rate_game,
    shown,
    unrated_reason,
    update,
)


def test_glickman_worked_example() -> None:
    player = Rating(1500.0, 200.0, 0.06)
    results = [
        (Rating(1400.0, 30.0), 1.0),
        (Rating(1550.0, 100.0), 0.0),
        (Rating(1700.0, 300.0), 0.0),
    ]
    after = update(player, results)
    # The paper rounds its intermediate values; unrounded arithmetic gives 1464.0507 and 151.5165.
    assert after.rating == pytest.approx(1464.06, abs=0.01)
    assert after.deviation == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=1e-5)


def test_no_games_only_widens_deviation() -> None:
    player = Rating(1600.0, 100.0, 0.06)
    after = update(player, [])
    assert after.rating == player.rating
    assert after.volatility == player.volatility
    assert after.deviation > player.deviation


def test_winner_gains_and_loser_loses() -> None:
    first, second = rate_game(Rating(1520.0, 120.0), Rating(1480.0, 80.0), 1.0)
    assert first.rating > 1520.0
    assert second.rating < 1480.0
    first, second = rate_game(Rating(1520.0, 120.0), Rating(1480.0, 80.0), 0.0)
    assert first.rating < 1520.0
    assert second.rating > 1480.0


def test_equal_players_change_symmetrically() -> None:
    first, second = rate_game(INITIAL, INITIAL, 1.0)
    gain = first.rating - INITIAL.rating
    loss = second.rating - INITIAL.rating
    assert gain > 0
    assert gain + loss == pytest.approx(0.0, abs=1e-9)
    assert first.deviation == pytest.approx(second.deviation)


def test_draw_between_equals_keeps_ratings() -> None:
    player = Rating(1700.0, 90.0, 0.05)
    first, second = rate_game(player, player, 0.5)
    assert first.rating == player.rating
    assert second.rating == player.rating


def test_upset_moves_more_than_expected_win() -> None:
    weak, strong = Rating(1400.0, 100.0), Rating(1600.0, 100.0)
    upset, _ = rate_game(weak, strong, 1.0)
    expected, _ = rate_game(strong, weak, 1.0)
    assert upset.rating - weak.rating > expected.rating - strong.rating


def test_deviation_shrinks_after_a_game() -> None:
    first, second = rate_game(Rating(1500.0, 200.0), Rating(1550.0, 150.0), 0.5)
    assert first.deviation < 200.0
    assert second.deviation < 150.0


def test_deviation_floor_holds() -> None:
    veteran = Rating(1800.0, MIN_DEVIATION, 0.01)
    for _ in range(50):
        veteran, _ = rate_game(veteran, Rating(1800.0, MIN_DEVIATION, 0.01), 0.5)
    assert veteran.deviation == MIN_DEVIATION


def test_deviation_cap_holds() -> None:
    first, second = rate_game(Rating(1500.0, MAX_DEVIATION, 0.2), INITIAL, 1.0)
    assert first.deviation <= MAX_DEVIATION
    assert update(Rating(1500.0, MAX_DEVIATION, 0.2), []).deviation == MAX_DEVIATION


@pytest.mark.parametrize("score", [-1.0, 0.25, 0.75, 2.0, math.nan])
def test_bad_score_raises(score: float) -> None:
    with pytest.raises(ValueError):
        rate_game(INITIAL, INITIAL, score)


def test_shown_rounds() -> None:
    assert shown(INITIAL) == 1500
    assert shown(Rating(1464.06)) == 1464
    assert shown(Rating(1464.6)) == 1465


ratings = st.builds(
    Rating,
    rating=st.floats(100.0, 3000.0),
    deviation=st.floats(MIN_DEVIATION, MAX_DEVIATION),
    volatility=st.floats(0.01, 0.2),
)


@given(ratings, ratings, st.sampled_from([0.0, 0.5, 1.0]))
def test_rate_game_is_sane(first: Rating, second: Rating, score: float) -> None:
    new_first, new_second = rate_game(first, second, score)
    for rating in (new_first, new_second):
        assert math.isfinite(rating.rating)
        assert math.isfinite(rating.volatility)
        assert MIN_DEVIATION <= rating.deviation <= MAX_DEVIATION
    if score == 1.0:
        assert new_first.rating >= first.rating
        assert new_second.rating <= second.rating
    elif score == 0.0:
        assert new_first.rating <= first.rating
        assert new_second.rating >= second.rating


@pytest.mark.parametrize(
    ("kind", "teams", "finished", "cancelled", "registered", "dots", "reason"),
    [
        ("R", False, True, False, True, 24, None),
        ("R", False, True, False, True, 23, "short"),
        ("R", False, True, False, True, None, None),  # not known: not a reason
        ("R", False, True, False, False, 40, "account"),
        ("R", False, True, True, True, 40, "cancelled"),
        ("R", False, False, False, True, 40, "unfinished"),
        ("R", True, True, False, True, 40, "team"),
        ("F", False, True, False, True, 40, "free"),
        ("A", False, True, False, True, 40, "computer"),
    ],
)
def test_why_a_game_is_not_rated(
    kind: str,
    teams: bool,
    finished: bool,
    cancelled: bool,
    registered: bool,
    dots: int | None,
    reason: str | None,
) -> None:
    assert (
        unrated_reason(
            kind=kind, teams=teams, finished=finished, cancelled=cancelled, registered=registered, dots=dots
        )
        == reason
    )
