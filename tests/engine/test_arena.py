"""The arena's rules against lichess's own examples and code (server/engine/arena.py names the sources):
sheets and points, streaks, draws, forfeits, pairing, colours, standings; then properties over any
history."""

from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.engine import arena
from server.engine.arena import (
    ArenaGame,
    ArenaPlayer,
    ArenaStanding,
    ColourHistory,
    WaitingPlayer,
    game_points,
    on_fire,
    performance,
    score,
    standings,
)

FOUGHT = 80  # moves: long enough for every draw rule


def win(opponent: str = "x", moves: int = FOUGHT, white: bool = True, forfeit: bool = False) -> ArenaGame:
    return ArenaGame(opponent, "win", white, moves, forfeit)


def draw(opponent: str = "x", moves: int = FOUGHT, white: bool = True) -> ArenaGame:
    return ArenaGame(opponent, "draw", white, moves)


def loss(opponent: str = "x", moves: int = FOUGHT, white: bool = True, forfeit: bool = False) -> ArenaGame:
    return ArenaGame(opponent, "loss", white, moves, forfeit)


# Points


def test_the_help_pages_example_two_wins_then_a_draw_make_6() -> None:
    # lichess.org/tournament/help: "two wins followed by a draw will be worth 6 points: 2 + 2 + (2 x 1)"
    games = [win(), win(), draw()]
    assert game_points(games) == (2, 2, 2)
    assert score(games) == 6


def test_a_worked_sheet_w_w_w_d_w_l_w() -> None:
    # 2, 2, then on fire: the win 4 and the draw 2; the draw ends the fire, so the next win is 2; the
    # loss 0 and the win after it 2
    games = [win(), win(), win(), draw(), win(), loss(), win()]
    assert game_points(games) == (2, 2, 4, 2, 2, 0, 2)
    assert score(games) == 14
    assert not on_fire(games)


@pytest.mark.parametrize(
    ("games", "points"),
    [
        ([win()] * 5, (2, 2, 4, 4, 4)),
        ([win(), win(), loss(), win(), win(), win()], (2, 2, 0, 2, 2, 4)),
        ([loss(), win(), loss(), win()], (0, 2, 0, 2)),
        ([win(), win(), loss(), loss()], (2, 2, 0, 0)),  # a loss on fire is still 0
    ],
)
def test_streaks_double_every_game_after_two_wins_until_one_is_not_a_win(
    games: list[ArenaGame], points: tuple[int, ...]
) -> None:
    assert game_points(games) == points


@pytest.mark.parametrize(
    ("games", "fire"),
    [
        ([], False),
        ([win()], False),
        ([win(), win()], True),
        ([loss(), win(), win()], True),
        ([win(), win(), draw()], False),
        ([win(), win(), win(), loss()], False),
    ],
)
def test_on_fire_means_the_last_two_games_were_wins(games: list[ArenaGame], fire: bool) -> None:
    assert on_fire(games) is fire


@pytest.mark.parametrize(
    ("games", "points"),
    [
        ([draw(moves=19)], (0,)),  # "drawing the game within the first 10 moves" (of each side)
        ([draw(moves=20)], (1,)),
        ([win(), win(), draw(moves=10)], (2, 2, 0)),  # even on fire
        ([win(), win(), draw(moves=10), win()], (2, 2, 0, 2)),  # and it ends the fire
    ],
)
def test_a_quick_draw_gives_nobody_a_point(games: list[ArenaGame], points: tuple[int, ...]) -> None:
    assert game_points(games) == points


@pytest.mark.parametrize(
    ("games", "points"),
    [
        ([draw(moves=30), draw(moves=30)], (1, 0)),  # only the first draw of a streak counts
        ([draw(moves=30), draw(moves=30), draw(moves=30)], (1, 0, 0)),
        ([draw(moves=30), loss(), draw(moves=30)], (1, 0, 0)),  # a loss does not break a draw streak
        ([draw(moves=30), win(), draw(moves=30)], (1, 2, 1)),  # a win does
        ([draw(moves=30), draw(moves=60)], (1, 1)),  # a draw of 60 moves or more always counts
        ([draw(moves=30), draw(moves=59)], (1, 0)),
        ([draw(moves=5), draw(moves=30)], (0, 0)),  # a quick draw is a draw for the streak too
        ([draw(), win(), win(), draw(moves=30)], (1, 2, 2, 2)),  # on fire wins over the draw streak
        ([win(), win(), draw(), draw(moves=30)], (2, 2, 2, 0)),
    ],
)
def test_draw_streaks(games: list[ArenaGame], points: tuple[int, ...]) -> None:
    assert game_points(games) == points


def test_a_forfeit_counts_as_the_win_or_loss_it_is() -> None:
    # lichess's sheet has no case for a game lost by not moving: the winner's win is a win
    won = [win(), win(), win(moves=0, forfeit=True), win()]
    assert game_points(won) == (2, 2, 4, 4)
    lost = [win(), win(), loss(moves=0, forfeit=True), win()]
    assert game_points(lost) == (2, 2, 0, 2)
    assert on_fire(won) and not on_fire(lost)


# Pairing


def player(key: str, rating: float = 1500, games: Sequence[ArenaGame] = ()) -> ArenaPlayer:
    return ArenaPlayer(key, rating, tuple(games))


def pair_players(
    players: Sequence[ArenaPlayer], ranks: Mapping[str, int] | None = None, active_players: int | None = None
) -> list[tuple[str, str]]:
    """arena.pair of these players, each read from their whole games."""
    waiting = [WaitingPlayer.of(p) for p in players]
    return arena.pair(waiting, ranks=ranks, active_players=active_players)


def test_nobody_or_one_player_makes_no_pair() -> None:
    assert pair_players([]) == []
    assert pair_players([player("A")]) == []


def test_two_who_just_played_each_other_wait_unless_they_are_the_only_two_left() -> None:
    a = player("A", games=[win("B")])
    b = player("B", games=[loss("A", white=False)])
    assert pair_players([a, b]) == []
    assert pair_players([a, b], active_players=3) == []
    assert pair_players([a, b], active_players=2) == [("B", "A")]  # lichess's duel: they play again


def test_the_last_opponent_of_either_player_is_enough_to_keep_them_apart() -> None:
    a = player("A", games=[win("B")])  # A's last game was against B
    b = player("B", games=[loss("A"), win("C")])  # B has played C since
    assert pair_players([a, b]) == []
    assert pair_players([player("A", games=[win("B"), win("C")]), b]) == [("A", "B")]  # both last met C


def test_with_an_odd_number_the_one_who_waited_least_waits() -> None:
    assert pair_players([player("A"), player("B"), player("C")]) == [("A", "B")]
    assert pair_players([player("C"), player("B"), player("A")]) == [("C", "B")]


def test_the_one_who_waited_least_plays_when_the_others_could_only_play_each_other() -> None:
    a = player("A", 1500, [win("B")])
    b = player("B", 1700, [loss("A", white=False)])
    c = player("C", 1650)
    assert pair_players([a, b, c]) == [("B", "C")]  # B is closer to C in rank and rating; B had black last


def test_pairs_follow_rank_and_rating() -> None:
    scored = [
        player("Top", 1500, [win("p"), win("q"), win("r")]),  # 8 points, rank 1
        player("Second", 1500, [win("p"), win("q")]),  # 4, rank 2
        player("Third", 1500, [win("p")]),  # 2, rank 3
        player("Last", 1500),  # 0, rank 4
    ]
    assert [sorted(p) for p in pair_players(scored)] == [["Second", "Top"], ["Last", "Third"]]


def test_leaders_who_just_met_play_the_next_ranks() -> None:
    # ranks 1..4, 1 and 2 just played: 1-3 and 2-4 cost 2*1575 + 2*1150 = 5450, 1-4 and 2-3
    # cost 3*1575 + 1150 = 5875 (the rank factor is 300 + 1700 * (4 - best rank) // 4)
    top = player("Top", 1500, [win("p"), win("q"), win("Second")])
    second = player("Second", 1500, [win("p"), loss("Top")])
    third = player("Third", 1500, [win("p")])
    last = player("Last", 1500)
    assert sorted(map(sorted, pair_players([top, second, third, last]))) == [
        ["Last", "Second"],
        ["Third", "Top"],
    ]


@pytest.mark.parametrize(
    ("gap", "pairs"), [(1300, [["A", "B"], ["C", "D"]]), (1700, [["A", "C"], ["B", "D"]])]
)
def test_the_rank_factor_weighs_ranks_against_ratings(gap: int, pairs: list[list[str]]) -> None:
    # ranks 1..4 by score; B and D are `gap` above A and C in rating. A-B + C-D cost 1575 + 725 +
    # 2 * gap, A-C + B-D cost 2 * 1575 + 2 * 1150 (the rank factor is 300 + 1700 * (4 - best) // 4):
    # ranks win up to a gap of 1575
    waiting = [
        player("A", 1500, [win("p"), win("q"), win("r")]),
        player("B", 1500 + gap, [win("p"), win("q")]),
        player("C", 1500, [win("p")]),
        player("D", 1500 + gap),
    ]
    assert [sorted(p) for p in pair_players(waiting)] == pairs


def test_rating_decides_between_equal_scores() -> None:
    waiting = [player("A", 1200), player("B", 1900), player("C", 1250), player("D", 1850)]
    assert sorted(map(sorted, pair_players(waiting))) == [["A", "C"], ["B", "D"]]


def test_ranks_in_the_whole_tournament_replace_the_ranks_among_the_waiting() -> None:
    waiting = [player("A"), player("B"), player("C"), player("D")]
    assert sorted(map(sorted, pair_players(waiting))) == [["A", "B"], ["C", "D"]]  # ranked in waiting order
    ranks = {"A": 1, "B": 10, "C": 2, "D": 11}
    assert sorted(map(sorted, pair_players(waiting, ranks=ranks))) == [["A", "C"], ["B", "D"]]
    assert pair_players(waiting, ranks=ranks)[0] in (("A", "C"), ("C", "A"))  # the best-ranked pair first


def test_the_best_ranked_pair_comes_first() -> None:
    waiting = [player("Low1", 1000), player("Low2", 1000), player("High1", 2000), player("High2", 2000)]
    assert [sorted(p) for p in pair_players(waiting)] == [["High1", "High2"], ["Low1", "Low2"]]


def test_white_goes_to_the_one_with_more_blacks_in_a_row() -> None:
    a = player("A", games=[win("p", white=True), win("q", white=False), win("r", white=False)])
    b = player("B", games=[win("s", white=False), win("t", white=False), win("u", white=True)])
    assert pair_players([b, a]) == [("A", "B")]  # A: two blacks in a row; B: white last


def test_with_equal_strikes_white_goes_to_the_one_who_had_it_less_often() -> None:
    a = player("A", games=[loss("p", white=False), loss("q", white=False), loss("r", white=True)])
    b = player("B", games=[loss("s", white=True), loss("t", white=False), loss("u", white=True)])
    assert pair_players([b, a]) == [("A", "B")]  # both had white last, once; A has 1 white to B's 2


def test_with_equal_colour_histories_white_goes_to_the_lower_rated_then_the_longer_waiting() -> None:
    assert pair_players([player("A", 1600), player("B", 1400)]) == [("B", "A")]
    assert pair_players([player("A"), player("B")]) == [("A", "B")]
    assert pair_players([player("B"), player("A")]) == [("B", "A")]


def test_two_players_who_both_had_one_colour_three_times_in_a_row_do_not_meet() -> None:
    whites = [win("p", white=True), win("q", white=True), win("r", white=True)]
    a, b = player("A", 1500, whites), player("B", 1500, whites)
    assert pair_players([a, b]) == []
    c = player("C", 1500, [loss("s", white=True), loss("t", white=False)])
    d = player("D", 1500, [loss("u", white=True), loss("v", white=False)])
    assert sorted(map(sorted, pair_players([a, b, c, d]))) == [["A", "C"], ["B", "D"]]
    blacks = [win("p", white=False)] * 3
    assert pair_players([player("A", games=blacks), player("B", games=blacks)]) == []
    assert pair_players([player("A", games=blacks), player("B", games=whites)]) == [("A", "B")]


def test_a_player_listed_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="twice"):
        pair_players([player("A"), player("B"), player("A")])


# Standings


def test_standings_by_score_then_performance_then_name() -> None:
    # Ann: beat Bob (1600) and lost to Cid (1400): ((1600 + 500) + (1400 - 500)) / 2 = 1500, 2 points.
    # Bob: lost to Ann (1500), beat Dan (1700): ((1500 - 500) + (1700 + 500)) / 2 = 1600, 2 points.
    # Cid: beat Ann: 1500 + 500 = 2000, 2 points. Dan: lost to Bob: 1100, 0 points. Eve and eva: no
    # game, no performance: their ratings (1500 both) break the tie with Dan, and they share a rank.
    players = [
        player("Ann", 1500, [win("Bob"), loss("Cid", white=False)]),
        player("Bob", 1600, [loss("Ann", white=False), win("Dan")]),
        player("Cid", 1400, [win("Ann")]),
        player("Dan", 1700, [loss("Bob", white=False)]),
        player("eva", 1500),
        player("Eve", 1500),
    ]
    assert standings(players) == [
        ArenaStanding(1, "Cid", 2, 1, 1, False, (2,), 2000),
        ArenaStanding(2, "Bob", 2, 2, 1, False, (0, 2), 1600),
        ArenaStanding(3, "Ann", 2, 2, 1, False, (2, 0), 1500),
        ArenaStanding(4, "eva", 0, 0, 0, False, (), None),
        ArenaStanding(4, "Eve", 0, 0, 0, False, (), None),
        ArenaStanding(6, "Dan", 0, 1, 0, False, (0,), 1100),
    ]


def test_standings_count_streaks_and_fire() -> None:
    (row,) = standings([player("A", games=[win("B"), win("C"), win("D"), draw("B")])])
    assert (row.score, row.games, row.wins, row.on_fire, row.sheet) == (10, 4, 3, False, (2, 2, 4, 2))
    assert row.performance is None  # no opponent among the players
    (row,) = standings([player("A", games=[loss("B"), win("C"), win("D")])])
    assert row.on_fire and row.score == 4


def test_performance_rounds_half_up_and_leaves_out_unknown_opponents() -> None:
    assert performance([draw("B"), draw("C")], {"B": 1500, "C": 1501}) == 1501  # 1500.5
    assert performance([win("B"), draw("Gone")], {"B": 1500}) == 2000
    assert performance([draw("Gone")], {}) is None
    assert performance([], {"B": 1500}) is None


# Properties over any history

KEYS = ["A", "B", "C", "D", "E", "F", "G"]
games_against = st.builds(
    ArenaGame,
    opponent=st.sampled_from(KEYS),
    outcome=st.sampled_from(["win", "draw", "loss"]),
    white=st.booleans(),
    moves=st.sampled_from([0, 10, 19, 20, 59, 60, 200]),
    forfeit=st.booleans(),
)


@st.composite
def waiting_players(draw_from: st.DrawFn) -> list[ArenaPlayer]:
    keys = draw_from(st.lists(st.sampled_from(KEYS), unique=True, max_size=7))
    return [
        ArenaPlayer(
            key,
            draw_from(st.sampled_from([1200.0, 1500.0, 1500.5, 1800.0])),
            tuple(
                draw_from(st.lists(games_against.filter(lambda g, key=key: g.opponent != key), max_size=6))
            ),
        )
        for key in keys
    ]


def strike(arena_player: ArenaPlayer) -> int:
    run = 0
    for game in arena_player.games:
        run = max(run + 1, 1) if game.white else min(run - 1, -1)
    return run


def may_meet(a: ArenaPlayer, b: ArenaPlayer) -> bool:
    just_met = (a.games and a.games[-1].opponent == b.key) or (b.games and b.games[-1].opponent == a.key)
    same_colour = (strike(a) >= 3 and strike(b) >= 3) or (strike(a) <= -3 and strike(b) <= -3)
    return not just_met and not same_colour


def most_pairs(players: list[ArenaPlayer]) -> int:
    if len(players) < 2:
        return 0
    first, rest = players[0], players[1:]
    best = most_pairs(rest)  # first waits
    for index, other in enumerate(rest):
        if may_meet(first, other):
            best = max(best, 1 + most_pairs(rest[:index] + rest[index + 1 :]))
    return best


@given(st.lists(games_against, max_size=8), st.lists(games_against, max_size=8))
def test_a_colour_history_goes_on_from_the_one_kept(first: list[ArenaGame], then: list[ArenaGame]) -> None:
    kept = ColourHistory().after(first)
    assert kept.after(then) == ColourHistory().after(first + then)
    whites = sum(game.white for game in first + then)
    assert kept.after(then) == ColourHistory(
        strike(player("A", games=first + then)), 2 * whites - len(first + then)
    )


@given(waiting_players())
def test_any_pairing_is_valid_and_as_large_as_possible(waiting: list[ArenaPlayer]) -> None:
    pairs = pair_players(waiting)
    by_key = {p.key: p for p in waiting}
    paired = [key for pair_ in pairs for key in pair_]
    assert len(paired) == len(set(paired))  # nobody twice, and never a player against themself
    assert set(paired) <= set(by_key)
    for white, black in pairs:
        assert may_meet(by_key[white], by_key[black])  # never the last opponent, never a 4th colour
    # the most pairs possible among those lichess considers: all but the last-come when that leaves any
    considered = waiting[:-1] if len(waiting) % 2 and most_pairs(waiting[:-1]) else waiting
    assert set(paired) <= {p.key for p in considered}
    assert len(pairs) == most_pairs(considered)


@given(st.lists(games_against, max_size=12))
def test_points_never_change_afterwards_and_follow_the_fire(games: list[ArenaGame]) -> None:
    points = game_points(games)
    assert len(points) == len(games)
    assert score(games) == sum(points)
    for index, game in enumerate(games):
        before = games[:index]
        assert game_points(before) == points[:index]
        if game.outcome == "win":
            assert points[index] == (4 if on_fire(before) else 2)
        elif game.outcome == "loss":
            assert points[index] == 0
        else:
            assert points[index] in ((2,) if on_fire(before) and game.moves >= 20 else (0, 1))


@given(waiting_players())
def test_standings_are_ordered_and_ranked(players: list[ArenaPlayer]) -> None:
    table = standings(players)
    assert sorted(row.key for row in table) == sorted(p.key for p in players)
    ratings = {p.key: p.rating for p in players}

    def merit(row: ArenaStanding) -> tuple[int, float]:
        return row.score, ratings[row.key] if row.performance is None else row.performance

    for place, (before, after) in enumerate(zip(table, table[1:], strict=False), start=2):
        assert merit(before) >= merit(after)
        assert after.rank == (before.rank if merit(after) == merit(before) else place)


def sliced_game_points(games: Sequence[ArenaGame]) -> tuple[int, ...]:
    """game_points as it was until 2026-12-02: each game's rules read again from the games before it
    (quadratic in the games, too slow for a wave of a long arena), kept to check the one-pass one."""

    def in_draw_streak(before: Sequence[ArenaGame]) -> bool:
        for game in reversed(before):
            if game.outcome != "loss":
                return game.outcome == "draw"
        return False

    points: list[int] = []
    for index, game in enumerate(games):
        fire = on_fire(games[:index])
        if game.outcome == "win":
            points.append(4 if fire else 2)
        elif game.outcome == "loss" or game.moves < 20:
            points.append(0)
        elif fire:
            points.append(2)
        elif game.moves < 60 and in_draw_streak(games[:index]):
            points.append(0)
        else:
            points.append(1)
    return tuple(points)


@given(st.lists(games_against, max_size=60))
def test_one_pass_points_are_the_sliced_ones(games: list[ArenaGame]) -> None:
    assert game_points(games) == sliced_game_points(games)
