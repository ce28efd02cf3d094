"""Standings and their tie-breaks on a small tournament worked out by hand (the numbers in the
comments), and the properties the standings page relies on."""

from collections import defaultdict
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.engine.standings import PairSums, Played, Standing, blue_score, ranked, standings

# A beats B, draws C, loses to D; B beats C and D; D beats C; E and F draw; A-E void (not a game).
GAMES = [
    Played("A", "B", "B+R"),
    Played("A", "C", "0"),
    Played("B", "C", "B+12"),
    Played("C", "D", "W+T"),
    Played("D", "A", "B+F"),
    Played("D", "B", "W+R"),
    Played("E", "F", "0"),
    Played("A", "E", "Void"),
]
HALF = Fraction(1, 2)


def test_the_hand_checked_tournament() -> None:
    # points: A 1.5, B 2, C 0.5, D 2, E 0.5, F 0.5; G has a table but no finished game
    # Buchholz (opponents' points): A = B2 + C0.5 + D2 = 4.5; B = A1.5 + C0.5 + D2 = 4;
    #   C = A1.5 + B2 + D2 = 5.5; D = C0.5 + A1.5 + B2 = 4; E = F0.5; F = E0.5
    # Sonneborn-Berger (beaten opponents' points + half of drawn ones'): A = B2 + C0.25 = 2.25;
    #   B = C0.5 + D2 = 2.5; C = A0.75; D = C0.5 + A1.5 = 2; E = F0.25; F = E0.25
    # B and D: equal points and Buchholz, B ahead on Sonneborn-Berger; C ahead of E and F on
    # Buchholz; E and F equal in everything: one rank, by name.
    assert standings(GAMES, players=["G", "A"]) == [
        Standing(1, "B", Fraction(2), 3, Fraction(4), Fraction(5, 2)),
        Standing(2, "D", Fraction(2), 3, Fraction(4), Fraction(2)),
        Standing(3, "A", Fraction(3, 2), 3, Fraction(9, 2), Fraction(9, 4)),
        Standing(4, "C", HALF, 3, Fraction(11, 2), Fraction(3, 4)),
        Standing(5, "E", HALF, 1, HALF, Fraction(1, 4)),
        Standing(5, "F", HALF, 1, HALF, Fraction(1, 4)),
        Standing(7, "G", Fraction(0), 0, Fraction(0), Fraction(0)),
    ]


@pytest.mark.parametrize(
    ("result", "blue"),
    [("B+R", 1), ("B+3", 1), ("B+1.5", 1), ("B+F", 1), ("W+T", 0), ("W+2", 0), ("0", HALF), ("Void", None)],
)
def test_blue_score_of_every_kind_of_result(result: str, blue: Fraction | None) -> None:
    assert blue_score(result) == blue


def test_a_void_game_alone_lists_its_players_with_nothing() -> None:
    assert standings([Played("*Ala", "*Bob", "Void")]) == [
        Standing(1, "*Ala", Fraction(0), 0, Fraction(0), Fraction(0)),
        Standing(1, "*Bob", Fraction(0), 0, Fraction(0), Fraction(0)),
    ]


names = st.sampled_from(["A", "b", "C", "d", "E"])
results = st.sampled_from(["B+R", "W+R", "0", "B+4", "W+F", "Void"])
games = st.lists(st.builds(Played, names, names, results).filter(lambda g: g.blue != g.red), max_size=30)


def merit(standing: Standing) -> tuple[Fraction, Fraction, Fraction]:
    return standing.points, standing.buchholz, standing.sonneborn_berger


@given(games)
def test_points_add_up_and_ranks_follow_the_order(played: list[Played]) -> None:
    table = standings(played)
    counted = [g for g in played if g.result != "Void"]
    assert sum(s.points for s in table) == len(counted)  # every game gives out exactly one point
    assert sum(s.games for s in table) == 2 * len(counted)
    assert table == [] or table[0].rank == 1
    for place, (before, after) in enumerate(zip(table, table[1:], strict=False), start=2):
        assert merit(before) >= merit(after)
        assert after.rank == (before.rank if merit(after) == merit(before) else place)


def test_a_bye_counts_in_points_and_in_the_opponents_buchholz_only() -> None:
    # A beats B; C has the bye (1 point, no game). Round 2: C beats A; B has the bye.
    # points: A 1, B 1, C 2. Buchholz: A = B1 + C2 = 3; B = A1 = 1; C = A1 = 1 (the bye adds none).
    games = [Played("A", "B", "B+R"), Played("C", "A", "B+T")]
    assert standings(games, byes={"C": Fraction(1), "B": Fraction(1)}) == [
        Standing(1, "C", Fraction(2), 1, Fraction(1), Fraction(1)),
        Standing(2, "A", Fraction(1), 2, Fraction(3), Fraction(1)),
        Standing(3, "B", Fraction(1), 1, Fraction(1), Fraction(0)),
    ]


def per_game_standings(games: list[Played], players: list[str], byes: dict[str, Fraction]) -> list[Standing]:
    """standings() until 2026-12-02: a fraction added per game and per tie-break (the reference)."""
    scored = []
    everyone = set(players) | set(byes)
    for game in games:
        everyone.update((game.blue, game.red))
        blue = blue_score(game.result)
        if blue is not None:
            scored += [(game.blue, game.red, blue), (game.red, game.blue, 1 - blue)]
    points: dict[str, Fraction] = defaultdict(Fraction, byes)
    played: dict[str, int] = defaultdict(int)
    for player, _, score in scored:
        points[player] += score
        played[player] += 1
    buchholz: dict[str, Fraction] = defaultdict(Fraction)
    berger: dict[str, Fraction] = defaultdict(Fraction)
    for player, opponent, score in scored:
        buchholz[player] += points[opponent]
        berger[player] += score * points[opponent]

    def merit(player: str) -> tuple[Fraction, Fraction, Fraction]:
        return points[player], buchholz[player], berger[player]

    ordered = sorted(everyone, key=lambda p: (tuple(-value for value in merit(p)), p.casefold(), p))
    table: list[Standing] = []
    for place, player in enumerate(ordered, start=1):
        rank = table[-1].rank if table and merit(table[-1].player) == merit(player) else place
        table.append(Standing(rank, player, points[player], played[player], buchholz[player], berger[player]))
    return table


PER_GAME_NICKS = ["a", "B", "b", "c", "d"]


@given(
    st.lists(
        st.builds(
            Played,
            st.sampled_from(PER_GAME_NICKS),
            st.sampled_from(PER_GAME_NICKS),
            st.sampled_from(["B+R", "W+R", "B+3", "W+2.5", "0", "B+T", "W+F", "Void"]),
        ),
        max_size=40,
    ),
    st.lists(st.sampled_from(PER_GAME_NICKS), max_size=3),
    st.dictionaries(
        st.sampled_from(PER_GAME_NICKS), st.sampled_from([Fraction(1), Fraction(1, 2)]), max_size=2
    ),
)
def test_summed_per_pair_the_standings_are_those_summed_per_game(
    games: list[Played], players: list[str], byes: dict[str, Fraction]
) -> None:
    assert standings(games, players, byes) == per_game_standings(games, players, byes)


@given(
    st.lists(
        st.tuples(
            st.booleans(),
            st.builds(
                Played,
                st.sampled_from(PER_GAME_NICKS),
                st.sampled_from(PER_GAME_NICKS),
                st.sampled_from(["B+R", "W+R", "0", "W+F", "Void"]),
            ),
        ),
        max_size=40,
    )
)
def test_pair_sums_kept_a_game_at_a_time_rank_as_the_games_counted_whole(
    changes: list[tuple[bool, Played]],
) -> None:
    """Games added and taken out one at a time (an organiser's tables kept between builds: a result
    stored, taken back, renamed) rank as the games left counted whole, the players without a game too."""
    sums, games = PairSums(), []
    for add, game in changes:
        if add:
            games.append(game)
            sums.count(game)
        elif game in games:
            games.remove(game)
            sums.count(game, -1)
        assert ranked(sums.copy(), PER_GAME_NICKS) == standings(games, PER_GAME_NICKS)
    assert not sums.met or games  # nothing left summed once every game is taken out
