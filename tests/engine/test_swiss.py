"""The Dutch swiss pairing: every round of the tournaments bbpPairings paired (tests/fixtures/swiss,
remade by scripts/swiss_reference.py) paired again the same, board order and colours included; the
rules players notice, by hand; and a property test that random tournaments only ever get pairings
that C.04.1 allows, or a refusal when none exists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.engine.swiss import Entrant, NoPairing, Pairing, Round, pair_round
from tests.engine.swiss_trf import read

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "swiss"
BOARDS = json.loads((FIXTURES / "boards.json").read_text(encoding="utf-8"))["tournaments"]
REFERENCE_ROUNDS = [(name, index) for name, rounds in BOARDS.items() for index in range(len(rounds))]


def test_the_fixtures_are_all_there() -> None:
    assert sorted(path.stem for path in FIXTURES.glob("*.trf")) == sorted(BOARDS)
    assert len(REFERENCE_ROUNDS) > 200


@pytest.mark.parametrize(
    ("name", "index"), REFERENCE_ROUNDS, ids=[f"{n}-round{i + 1}" for n, i in REFERENCE_ROUNDS]
)
def test_pairs_every_reference_round_as_bbppairings_did(name: str, index: int) -> None:
    tournament = read(FIXTURES / f"{name}.trf")
    entrants, others = tournament.before(index)
    pairing = pair_round(
        entrants,
        tournament.total_rounds,
        top_seed_white=tournament.initial_colour == "white",
        others=others,
    )
    pairs, bye = tournament.pairing(index)
    assert (set(pairing.boards), pairing.bye) == (pairs, bye)
    expected = BOARDS[name][index]
    assert list(pairing.boards) == [(str(white), str(black)) for white, black in expected["boards"]]
    assert pairing.bye == (None if expected["bye"] is None else str(expected["bye"]))


# -- the rules by hand ---------------------------------------------------------------------------


def game(opponent: str, colour: str, points: float) -> Round:
    return Round(opponent, colour, points, True)  # type: ignore[arg-type]


def forfeit(opponent: str, won: bool) -> Round:
    return Round(opponent, None, 1.0 if won else 0.0, False)


def pab(points: float = 1.0) -> Round:
    return Round(None, None, points, False, bye=True)


def field(count: int, rounds: dict[str, tuple[Round, ...]] | None = None) -> list[Entrant]:
    """Players p1..p`count` in ranking order; their rounds from `rounds` (none by default)."""
    rounds = rounds or {}
    return [Entrant(f"p{n}", 2000 - n, rounds.get(f"p{n}", ())) for n in range(1, count + 1)]


def test_round_one_pairs_the_top_half_with_the_bottom_half_colours_alternating() -> None:
    assert pair_round(field(8), 5) == Pairing(
        boards=(("p1", "p5"), ("p6", "p2"), ("p3", "p7"), ("p8", "p4")), bye=None
    )
    assert pair_round(field(8), 5, top_seed_white=False).boards == (
        ("p5", "p1"),
        ("p2", "p6"),
        ("p7", "p3"),
        ("p4", "p8"),
    )


def test_an_odd_field_gives_the_bye_to_the_lowest_player() -> None:
    assert pair_round(field(7), 5) == Pairing(boards=(("p1", "p4"), ("p5", "p2"), ("p3", "p6")), bye="p7")


def test_players_who_met_are_not_paired_again() -> None:
    # After 1-3 and 4-2, both drawn, everyone has 1/2: the natural 1-3 and 2-4 would be repeats.
    rounds = {
        "p1": (game("p3", "white", 0.5),),
        "p3": (game("p1", "black", 0.5),),
        "p4": (game("p2", "white", 0.5),),
        "p2": (game("p4", "black", 0.5),),
    }
    pairing = pair_round(field(4, rounds), 5)
    met = {frozenset(("p1", "p3")), frozenset(("p2", "p4"))}
    assert not {frozenset(board) for board in pairing.boards} & met
    # ... and the colours follow: 1 and 4 had white, 2 and 3 black.
    assert pairing.boards == (("p2", "p1"), ("p3", "p4"))


def test_two_players_who_met_cannot_be_paired_and_the_refusal_says_so() -> None:
    rounds = {"p1": (game("p2", "white", 1.0),), "p2": (game("p1", "black", 0.0),)}
    with pytest.raises(NoPairing, match="repeated games"):
        pair_round(field(2, rounds), 5)
    assert issubclass(NoPairing, ValueError)


def test_a_forfeit_counts_for_points_but_not_for_pairing() -> None:
    # p1 won by forfeit: they may meet again, the forfeit gave no colour, and p1 cannot get the bye.
    rounds = {"p1": (forfeit("p2", won=True),), "p2": (forfeit("p1", won=False),), "p3": (pab(),)}
    assert pair_round(field(2, rounds), 5) == Pairing(boards=(("p1", "p2"),), bye=None)
    with pytest.raises(NoPairing):
        pair_round([Entrant("p1", 0, rounds["p1"])], 5)  # alone, p1 would need a second unplayed win
    assert pair_round([Entrant("p2", 0, rounds["p2"])], 5).bye == "p2"


def test_the_bye_goes_to_the_lowest_eligible_player_and_never_twice() -> None:
    # 1-2 drawn, p3 had a bye worth 0: p3 is alone at the bottom but may not have a second bye, and
    # 1-2 would be a repeat, so the lowest of the others, p2, gets it.
    rounds = {"p1": (game("p2", "white", 0.5),), "p2": (game("p1", "black", 0.5),), "p3": (pab(0.0),)}
    assert pair_round(field(3, rounds), 5) == Pairing(boards=(("p3", "p1"),), bye="p2")


def test_the_bye_goes_to_one_who_played_rather_than_one_who_was_absent() -> None:
    # Round 2: p3 and p4 lost, p5 was absent, all three on 0. The 2025 rules (C9) give the bye to
    # the one with the fewest unplayed rounds, the lowest of those: p4, not p5.
    rounds = {
        "p1": (game("p3", "white", 1.0),),
        "p3": (game("p1", "black", 0.0),),
        "p4": (game("p2", "white", 0.0),),
        "p2": (game("p4", "black", 1.0),),
        "p5": (Round(None, None, 0.0, False),),
    }
    assert pair_round(field(5, rounds), 5) == Pairing(boards=(("p2", "p1"), ("p3", "p5")), bye="p4")


def test_colours_alternate() -> None:
    # 1-3 and 4-2 in round 1, the higher players won: 2 (black) meets 1 (white), 3 (black) meets 4.
    rounds = {
        "p1": (game("p3", "white", 1.0),),
        "p3": (game("p1", "black", 0.0),),
        "p4": (game("p2", "white", 0.0),),
        "p2": (game("p4", "black", 1.0),),
    }
    assert pair_round(field(4, rounds), 5).boards == (("p2", "p1"), ("p3", "p4"))


def test_no_colour_three_times_in_a_row_except_for_topscorers_in_the_last_round() -> None:
    twice_white = {
        "a": (game("x", "white", 1.0), game("y", "white", 1.0)),
        "b": (game("z", "white", 1.0), game("w", "white", 1.0)),
    }
    both = [Entrant(key, 0, rounds) for key, rounds in twice_white.items()]
    with pytest.raises(NoPairing):
        pair_round(both, 5)  # round 3 of 5: both must have black
    # The last round, both over 50%: they may meet, the higher-ranked one gets the colour it needs.
    assert pair_round(both, 3).boards == (("b", "a"),)
    # With a third player, the one with two whites gets black whatever the ranking says.
    third = Entrant("c", 0, (game("v", "black", 1.0), game("u", "white", 1.0)))
    pairing = pair_round([both[0], third], 5)
    assert pairing.boards == (("c", "a"),)


def test_a_withdrawn_player_is_left_out() -> None:
    rounds = {
        "p1": (game("p3", "white", 1.0),),
        "p3": (game("p1", "black", 0.0),),
        "p4": (game("p2", "white", 0.0),),
        "p2": (game("p4", "black", 1.0),),
    }
    withdrawn = field(4, rounds)[3]
    present = [entrant for entrant in field(4, rounds) if entrant.key != "p4"]
    pairing = pair_round(present, 5)
    assert "p4" not in {key for board in pairing.boards for key in board} | {pairing.bye}
    assert pairing.bye == "p3"
    # Passing p4 as one of `others` (with pairing numbers) tells its opponent's float: same pairing.
    numbered = [Entrant(e.key, e.rating, e.rounds, number=int(e.key[1:])) for e in present]
    gone = Entrant(withdrawn.key, withdrawn.rating, withdrawn.rounds, number=4)
    assert pair_round(numbered, 5, others=[gone]) == pairing


def test_nobody_to_pair_is_no_boards() -> None:
    assert pair_round([], 5) == Pairing(boards=(), bye=None)


@pytest.mark.parametrize(
    ("entrants", "total_rounds", "message"),
    [
        ([Entrant("a", 0, ()), Entrant("a", 0, ())], 5, "same key"),
        ([Entrant("a", 0, (pab(),)), Entrant("b", 0, ())], 5, "one Round per round"),
        ([Entrant("a", 0, ()), Entrant("b", 0, ())], 0, "total_rounds"),
        ([Entrant("a", 0, (Round("b", None, 1.0, True),)), Entrant("b", 0, (pab(),))], 5, "colour"),
        ([Entrant("a", 0, (Round("b", "blue", 1.0, True),)), Entrant("b", 0, (pab(),))], 5, "colour"),  # type: ignore[arg-type]
        ([Entrant("a", 0, (Round(None, "white", 1.0, True),)), Entrant("b", 0, (pab(),))], 5, "opponent"),
    ],
)
def test_bad_input_is_refused_clearly(entrants: list[Entrant], total_rounds: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pair_round(entrants, total_rounds)


def test_players_passed_as_others_need_pairing_numbers() -> None:
    with pytest.raises(ValueError, match="pairing number"):
        pair_round([Entrant("a", 0, ())], 5, others=[Entrant("b", 0, ())])


# -- the property: only legal pairings ------------------------------------------------------------

OUTCOMES = ["white", "black", "draw", "white by forfeit", "black by forfeit", "both forfeit"]


def colour_needed(history: tuple[Round, ...]) -> str | None:
    """The colour C.04.1 forces on a player: after two in a row of one colour, or a difference of two."""
    colours = [round_.colour for round_ in history if round_.played]
    difference = colours.count("white") - colours.count("black")
    if difference > 1 or colours[-2:] == ["white", "white"]:
        return "black"
    if difference < -1 or colours[-2:] == ["black", "black"]:
        return "white"
    return None


def legal_pair(a: Entrant, b: Entrant, topscorer: set[str]) -> bool:
    met = {round_.opponent for round_ in a.rounds if round_.played}
    need_a, need_b = colour_needed(a.rounds), colour_needed(b.rounds)
    clash = need_a is not None and need_a == need_b and not ({a.key, b.key} & topscorer)
    return b.key not in met and not clash


def may_have_bye(entrant: Entrant) -> bool:
    return not any(not r.played and (r.bye or r.points >= 1) for r in entrant.rounds)


def some_legal_pairing_exists(entrants: list[Entrant], topscorer: set[str]) -> bool:
    def pairable(rest: list[Entrant]) -> bool:
        if not rest:
            return True
        first, others = rest[0], rest[1:]
        return any(
            legal_pair(first, other, topscorer) and pairable(others[:i] + others[i + 1 :])
            for i, other in enumerate(others)
        )

    if len(entrants) % 2 == 0:
        return pairable(entrants)
    return any(
        may_have_bye(entrant) and pairable(entrants[:i] + entrants[i + 1 :])
        for i, entrant in enumerate(entrants)
    )


@settings(max_examples=150)
@given(
    players=st.integers(min_value=2, max_value=7),
    total_rounds=st.integers(min_value=1, max_value=8),
    data=st.data(),
)
def test_random_tournaments_get_only_legal_pairings(
    players: int, total_rounds: int, data: st.DataObject
) -> None:
    history: dict[str, list[Round]] = {f"p{n}": [] for n in range(1, players + 1)}
    for round_index in range(total_rounds):
        absent = set(data.draw(st.sets(st.sampled_from(sorted(history)), max_size=1)))
        entrants = [
            Entrant(key, 0, tuple(rounds), number=int(key[1:]))
            for key, rounds in history.items()
            if key not in absent
        ]
        others = [
            Entrant(key, 0, tuple(rounds), number=int(key[1:]))
            for key, rounds in history.items()
            if key in absent
        ]
        last = round_index == total_rounds - 1
        topscorer = {e.key for e in entrants if last and sum(r.points for r in e.rounds) > round_index / 2}
        try:
            pairing = pair_round(entrants, total_rounds, others=others)
        except NoPairing:
            assert not some_legal_pairing_exists(entrants, topscorer)
            return
        by_key = {entrant.key: entrant for entrant in entrants}
        seated = [key for board in pairing.boards for key in board]
        assert sorted(seated + ([pairing.bye] if pairing.bye else [])) == sorted(by_key)
        assert (pairing.bye is not None) == (len(entrants) % 2 == 1)
        if pairing.bye is not None:
            assert may_have_bye(by_key[pairing.bye])
            history[pairing.bye].append(pab())
        for white, black in pairing.boards:
            assert legal_pair(by_key[white], by_key[black], topscorer)
            for key, colour in ((white, "white"), (black, "black")):
                needed = colour_needed(by_key[key].rounds)
                assert needed in (None, colour) or {white, black} & topscorer
            outcome = data.draw(st.sampled_from(OUTCOMES))
            if outcome.endswith("forfeit"):
                history[white].append(forfeit(black, won=outcome == "white by forfeit"))
                history[black].append(forfeit(white, won=outcome == "black by forfeit"))
            else:
                white_points = {"white": 1.0, "black": 0.0, "draw": 0.5}[outcome]
                history[white].append(game(black, "white", white_points))
                history[black].append(game(white, "black", 1.0 - white_points))
        for key in absent:
            history[key].append(Round(None, None, 0.0, False))
