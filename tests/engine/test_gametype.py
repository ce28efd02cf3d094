"""gameType strings: the documented examples, every rejection, and round trips through both formats."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from server.engine.gametype import (
    BLACK_RIGHTS,
    MAX_SGF_NUMBER,
    TABLE_RIGHTS,
    WHITE_RIGHTS,
    GameKind,
    GameType,
    GameTypeError,
    Right,
    Rights,
    Rules,
    Start,
    StartKind,
    WhoStarts,
    format_new,
    format_old,
    format_rights,
    parse_game_type,
    parse_rights,
)

# ---------------------------------------------------------------- documented and client examples

S, T, N = Rules.STANDARD, Rules.TERRITORY, Rules.NO_TERRITORY
R, F, A = GameKind.RANKED, GameKind.FREE, GameKind.AI

# Each text with the value it must parse to; fields left out have GameType's defaults
# (instant win 0, untimed, default rights, no tournament).
EXAMPLES: list[tuple[str, GameType]] = [
    ("2020stanA0.0.0", GameType(width=20, height=20, rules=S, kind=A, who_starts=WhoStarts.SERVER)),
    (
        "2525noT4R0.180.15",
        GameType(
            width=25,
            height=25,
            rules=N,
            start=Start.crosses(4),
            kind=R,
            who_starts=WhoStarts.SERVER,
            timed=True,
            start_time=180,
            added_time=15,
        ),
    ),
    (
        "3932noT1r0.180.20_PWC 2012",
        GameType(
            width=39,
            height=32,
            rules=N,
            start=Start.crosses(1),
            kind=R,
            who_starts=WhoStarts.INVITER,
            timed=True,
            start_time=180,
            added_time=20,
            tournament="PWC 2012",
        ),
    ),
    (
        "3932noT1F0.60.2",
        GameType(
            width=39,
            height=32,
            rules=N,
            start=Start.crosses(1),
            kind=F,
            who_starts=WhoStarts.SERVER,
            timed=True,
            start_time=60,
            added_time=2,
        ),
    ),
    (
        "2020terrR30.300.25",
        GameType(
            width=20,
            height=20,
            rules=T,
            instant_win=30,
            kind=R,
            who_starts=WhoStarts.SERVER,
            timed=True,
            start_time=300,
            added_time=25,
        ),
    ),
    ("2020s0...A.n....", GameType(width=20, height=20, rules=S, kind=A, who_starts=WhoStarts.UNSPECIFIED)),
    (
        "2020t15..s.R.a.180.15..",
        GameType(
            width=20,
            height=20,
            rules=T,
            instant_win=15,
            kind=R,
            who_starts=WhoStarts.SERVER,
            timed=True,
            start_time=180,
            added_time=15,
        ),
    ),
    (
        "3932n0.4.a.F.n...ua.tournament X",
        GameType(
            width=39,
            height=32,
            rules=N,
            start=Start.crosses(4),
            kind=F,
            who_starts=WhoStarts.INVITER,
            rights=Rights(table="ua"),
            tournament="tournament X",
        ),
    ),
    (
        "3030n0.4.a.R.a.180.20._SRAP_srap.",
        GameType(
            width=30,
            height=30,
            rules=N,
            start=Start.crosses(4),
            kind=R,
            who_starts=WhoStarts.INVITER,
            timed=True,
            start_time=180,
            added_time=20,
            rights=Rights(black="SRAP", white="srap"),
        ),
    ),
    (
        "2020t0..a.a.n...c___SUsuenJohn.",
        GameType(
            width=20,
            height=20,
            rules=T,
            kind=GameKind.ANALYSIS,
            who_starts=WhoStarts.INVITER,
            rights=Rights("c", "", "", "SUsue", "John"),
        ),
    ),
    (
        "3030n0.1.a.R.a.60.15._SRATP_sratp.",
        GameType(
            width=30,
            height=30,
            rules=N,
            start=Start.crosses(1),
            kind=R,
            who_starts=WhoStarts.INVITER,
            timed=True,
            start_time=60,
            added_time=15,
            rights=Rights(black="SRATP", white="sratp"),
        ),
    ),
    (
        "3932t0.SGFz12345.p.F.a.600.30._SRAUP_sraup.Cup",
        GameType(
            width=39,
            height=32,
            rules=T,
            start=Start.sgf(12345),
            kind=F,
            who_starts=WhoStarts.INVITED,
            timed=True,
            start_time=600,
            added_time=30,
            rights=Rights(black="SRAUP", white="sraup"),
            tournament="Cup",
        ),
    ),
    (
        "1515s0.H4.p.A.n....",
        GameType(width=15, height=15, rules=S, start=Start.handicap(4), kind=A, who_starts=WhoStarts.INVITED),
    ),
    # roboCup's default tournament set-up (game.crossesCount=2), timed and with infinite time
    (
        "2525n0.2.a.R.a.300.5._SRAP_srap.",
        GameType(
            width=25,
            height=25,
            rules=N,
            start=Start.crosses(2),
            kind=R,
            who_starts=WhoStarts.INVITER,
            timed=True,
            start_time=300,
            added_time=5,
            rights=Rights(black="SRAP", white="srap"),
        ),
    ),
    (
        "2525n0.2.a.F.n..._SRAP_srap.",
        GameType(
            width=25,
            height=25,
            rules=N,
            start=Start.crosses(2),
            kind=F,
            who_starts=WhoStarts.INVITER,
            rights=Rights(black="SRAP", white="srap"),
        ),
    ),
    # the form MultiPoints quotes as zagram's from 2016 on
    (
        "3030t0.2.s.R.a.60.30..",
        GameType(
            width=30,
            height=30,
            rules=T,
            start=Start.crosses(2),
            kind=R,
            who_starts=WhoStarts.SERVER,
            timed=True,
            start_time=60,
            added_time=30,
        ),
    ),
]


@pytest.mark.parametrize(("text", "expected"), EXAMPLES)
def test_examples_parse_to_their_fields(text: str, expected: GameType) -> None:
    parsed = parse_game_type(text)
    for field in dataclasses.fields(GameType):
        assert getattr(parsed, field.name) == getattr(expected, field.name), field.name


@pytest.mark.parametrize(
    "text",
    [t for t, _ in EXAMPLES if t[5] in "teo"],
)
def test_old_examples_format_back_exactly(text: str) -> None:
    assert format_old(parse_game_type(text)) == text


@pytest.mark.parametrize(
    "text",
    [t for t, _ in EXAMPLES if t[5] not in "teo"],
)
def test_new_examples_format_back_exactly(text: str) -> None:
    game_type = parse_game_type(text)
    assert format_new(game_type) == text
    assert str(game_type) == text


def test_old_examples_in_new_format() -> None:
    assert format_new(parse_game_type("2020stanA0.0.0")) == "2020s0..s.A.n...."
    assert format_new(parse_game_type("2525noT4R0.180.15")) == "2525n0.4.s.R.a.180.15.."
    assert format_new(parse_game_type("3932noT1r0.180.20_PWC 2012")) == "3932n0.1.a.R.a.180.20..PWC 2012"


def test_old_ranked_inviter_starts_is_new_ranked_with_who_a() -> None:
    old = parse_game_type("3030noT4r0.180.20")
    assert (old.kind, old.who_starts) == (GameKind.RANKED, WhoStarts.INVITER)
    new = format_new(old)
    assert new == "3030n0.4.a.R.a.180.20.."
    assert parse_game_type(new) == old
    assert format_old(parse_game_type(new)) == "3030noT4r0.180.20"


def test_old_plain_letters_mean_server_decides() -> None:
    for letter, kind in (("R", GameKind.RANKED), ("F", GameKind.FREE), ("A", GameKind.AI)):
        game_type = parse_game_type(f"2020stan{letter}0.60.5")
        assert (game_type.kind, game_type.who_starts) == (kind, WhoStarts.SERVER)
        assert format_new(game_type) == f"2020s0..s.{letter}.a.60.5.."


def test_old_untimed_forces_added_time_to_zero() -> None:
    game_type = parse_game_type("2020stanA0.0.15")
    assert (game_type.timed, game_type.start_time, game_type.added_time) == (False, 0, 0)
    assert format_old(game_type) == "2020stanA0.0.0"
    assert format_new(game_type) == "2020s0..s.A.n...."


def test_multipoints_zero_start_means_empty_board() -> None:
    game_type = parse_game_type("3030n0.0.a.F.a.60.15._SRATP_sratp.")
    assert game_type.start == Start.empty()
    assert format_new(game_type) == "3030n0..a.F.a.60.15._SRATP_sratp."


def test_robocup_untimed_string() -> None:
    game_type = parse_game_type("3932t0..a.F.n..._SRAP_srap.")
    assert (game_type.rules, game_type.timed, game_type.start_time, game_type.added_time) == (
        Rules.TERRITORY,
        False,
        0,
        0,
    )
    assert not game_type.rights.may(1, Right.UNDO)
    assert not game_type.rights.may(2, Right.ADD_TIME)


def test_empty_instant_win_is_zero_and_written_as_digits() -> None:
    game_type = parse_game_type("2020s...F.n....")
    assert game_type.instant_win == 0
    assert format_new(game_type) == "2020s0...F.n...."
    assert parse_game_type("2020stanF.0.0").instant_win == 0


def test_tournament_names_keep_dots_and_underscores() -> None:
    assert parse_game_type("2020s0...F.n....Cup 2.0. final").tournament == "Cup 2.0. final"
    assert parse_game_type("2020stanF0.0.0_a_b.c").tournament == "a_b.c"
    assert format_old(parse_game_type("2020stanF0.0.0_a_b.c")) == "2020stanF0.0.0_a_b.c"


def test_old_trailing_underscore_is_no_tournament() -> None:
    assert parse_game_type("2020stanF0.0.0_").tournament == ""


def test_accepted_rights_values() -> None:
    assert parse_game_type("2020s0..a.R.a.60.5._SRATP_sratp.").rights == Rights(black="SRATP", white="sratp")
    assert parse_game_type("2020s0..a.R.a.60.5._SRAUP_sraup.").rights == Rights(black="SRAUP", white="sraup")
    assert parse_game_type("2020s0..a.R.a.60.5._SRAP_srap.").rights == Rights(black="SRAP", white="srap")


# ---------------------------------------------------------------- derived properties


@pytest.mark.parametrize(
    ("rules", "start", "variant"),
    [
        (Rules.STANDARD, Start.empty(), "stan"),
        (Rules.TERRITORY, Start.empty(), "terr"),
        (Rules.NO_TERRITORY, Start.crosses(1), "noT1"),
        (Rules.NO_TERRITORY, Start.crosses(2), "noT2"),
        (Rules.NO_TERRITORY, Start.crosses(4), "noT4"),
        (Rules.NO_TERRITORY, Start.empty(), "noT"),
        (Rules.STANDARD, Start.crosses(4), "stan+4"),
        (Rules.STANDARD, Start.crosses(2), "stan+2"),
        (Rules.TERRITORY, Start.crosses(1), "terr+1"),
        (Rules.NO_TERRITORY, Start.handicap(3), "noT+H3"),
    ],
)
def test_variant_names(rules: Rules, start: Start, variant: str) -> None:
    assert GameType(width=20, height=20, rules=rules, start=start).variant == variant


def test_variant_with_sgf_start() -> None:
    game_type = GameType(
        width=20, height=20, rules=Rules.STANDARD, start=Start.sgf(12), who_starts=WhoStarts.INVITED
    )
    assert game_type.variant == "stan+SGFz12"


@pytest.mark.parametrize(
    ("text", "ranked", "automatic", "stop"),
    [
        ("2020stanR0.60.5", True, True, False),
        ("2020terrF0.60.5", False, False, False),
        ("2020noT1r0.60.5", True, True, True),
        ("2020n0.4.a.a.n....", False, True, True),
    ],
)
def test_rule_properties(text: str, ranked: bool, automatic: bool, stop: bool) -> None:
    game_type = parse_game_type(text)
    assert (game_type.ranked, game_type.automatic_enclosures, game_type.stop_allowed) == (
        ranked,
        automatic,
        stop,
    )


def test_start_codes() -> None:
    assert [s.code for s in (Start.empty(), Start.crosses(1), Start.crosses(2), Start.crosses(4))] == [
        "",
        "1",
        "2",
        "4",
    ]
    assert Start.sgf(12345).code == "SGFz12345"
    assert Start.handicap(9).code == "H9"
    assert Start.handicap(2).kind is StartKind.HANDICAP


# ---------------------------------------------------------------- rights


def test_default_rights_round_trip_as_empty() -> None:
    assert parse_rights("") == Rights()
    assert format_rights(Rights()) == ""
    assert parse_rights("_SRAUTP_srautp") == Rights()
    assert format_rights(parse_rights("_SRAUTP_srautp")) == ""
    assert Rights().is_default


def test_bare_table_rights_keep_default_player_rights() -> None:
    rights = parse_rights("ua")
    assert (rights.table, rights.black, rights.white) == ("ua", BLACK_RIGHTS, WHITE_RIGHTS)
    assert rights == parse_rights("ua_SRAUTP_srautp")
    assert str(rights) == "ua"
    assert not rights.is_default


def test_player_letters_are_a_set_in_canonical_order() -> None:
    assert parse_rights("_PARS_spar") == parse_rights("_SRAP_srap")
    assert format_rights(parse_rights("_PARS_spar")) == "_SRAP_srap"
    assert Rights(black="US").black == "SU"


def test_table_letters_keep_their_order() -> None:
    assert parse_rights("au").table == "au"
    assert parse_rights("au") != parse_rights("ua")


def test_no_rights_at_all() -> None:
    rights = parse_rights("__")
    assert (rights.table, rights.black, rights.white) == ("", "", "")
    assert format_rights(rights) == "__"
    assert not any(rights.may(player, right) for player in (1, 2) for right in Right)


def test_analysis_rights() -> None:
    rights = parse_rights("c___SUsuenJohn")
    assert (rights.table, rights.black, rights.white, rights.analyser, rights.analyser_nick) == (
        "c",
        "",
        "",
        "SUsue",
        "John",
    )
    assert rights.has_analyser
    assert rights.analyser_may("S")
    assert rights.analyser_may("e")
    assert not parse_rights("c___SUnJohn").analyser_may("s")
    assert format_rights(rights) == "c___SUsuenJohn"


def test_analyser_nick_may_hold_underscore_star_and_cyrillic() -> None:
    assert parse_rights("c___SnJo_hn").analyser_nick == "Jo_hn"
    rights = parse_rights("c___Sn*Вася Пупкин")
    assert rights.analyser_nick == "*Вася Пупкин"
    assert parse_rights(format_rights(rights)) == rights


def test_analyser_letters_end_at_first_n() -> None:
    rights = parse_rights("c___Sn_n")
    assert (rights.analyser, rights.analyser_nick) == ("S", "_n")


def test_may_default_and_restricted() -> None:
    default = Rights()
    assert all(default.may(1, right) and default.may(2, right) for right in Right)
    assert default.may(1, "U")
    assert default.may(2, "u")
    assert default.may(2, "U")
    no_undo = parse_rights("_SRATP_sratp")
    assert not no_undo.may(1, Right.UNDO)
    assert not no_undo.may(2, Right.UNDO)
    assert no_undo.may(1, Right.ADD_TIME)
    assert no_undo.may(2, "p")
    only_blue_undo = parse_rights("_SRAUP_srap")
    assert only_blue_undo.may(1, Right.UNDO)
    assert not only_blue_undo.may(2, Right.UNDO)


@pytest.mark.parametrize(
    ("player", "right", "reason"),
    [(0, "S", "player must be 1 or 2"), (3, "S", "player must be 1 or 2"), (1, "X", "'X'"), (1, "", "''"),
     (2, "SR", "'SR'")],
)  # fmt: skip
def test_may_rejects_bad_questions(player: int, right: str, reason: str) -> None:
    """A wrong question is a programming error, not bad input: plain ValueError, not GameTypeError."""
    with pytest.raises(ValueError, match=reason) as error:
        Rights().may(player, right)
    assert not isinstance(error.value, GameTypeError)


@pytest.mark.parametrize("letter", ["R", "", "Ss", "n"])
def test_analyser_may_rejects_bad_letters(letter: str) -> None:
    with pytest.raises(ValueError, match="analyser rights are letters of SUsue"):
        Rights().analyser_may(letter)


# ---------------------------------------------------------------- rejections

REJECTIONS = [
    ("", "empty"),
    ("2" * 301, "at most 300 characters"),
    ("20", "9 dot-separated fields, got 1"),
    ("2020s0...A.n...", "9 dot-separated fields, got 8"),
    ("20x0s0...A.n....", "board size must be 4 digits"),
    ("2\uff1020s0...A.n....", "board size must be 4 digits"),
    ("0320s0...A.n....", "board width must be 4..52"),
    ("2053s0...A.n....", "board height must be 4..52"),
    ("2020x0...A.n....", "unknown rules 'x'"),
    ("2020...A.n....", "unknown rules ''"),
    ("2020s100...A.n....", "instant win must be an integer 0..99"),
    ("2020s1a...A.n....", "instant win"),
    ("2020s0.3..A.n....", "starting position '3'"),
    ("2020s0.H1..A.n....", "starting position 'H1'"),
    ("2020s0.H10..A.n....", "starting position 'H10'"),
    ("2020s0.SGFz.a.A.n....", "starting position 'SGFz'"),
    ("2020s0.SGFzx.a.A.n....", "starting position 'SGFzx'"),
    ("2020s0.SGFz0.a.A.n....", "SGF archive number"),
    ("2020s0.SGFz1000000000.a.A.n....", "SGF archive number"),
    ("2020s0..x.A.n....", "unknown who-starts 'x'"),
    ("2020s0...X.n....", "unknown game type 'X'"),
    ("2020s0....n....", "unknown game type ''"),
    ("2020s0...A.x....", "unknown time method 'x'"),
    ("2020s0...A.....", "unknown time method ''"),
    ("2020s0...A.a.-5.0..", "start time"),
    ("2020s0...A.a.86401.0..", "start time must be an integer 1..86400"),
    ("2020s0...A.a.0.15..", "start time must be an integer 1..86400"),
    ("2020s0...A.a..15..", "start time"),
    ("2020s0...A.a.1e3.0..", "start time"),
    ("2020s0...A.a.١٢.0..", "start time"),
    ("2020s0...A.a.99999999999999999999999.0..", "start time"),
    ("2020s0...A.a.180.3601..", "added time must be an integer 0..3600"),
    ("2020s0...A.a.180...", "added time"),
    ("2020s0...A.a.180.+5..", "added time"),
    ("2020s0...A.n.60...", "time method 'n' needs empty"),
    ("2020s0...A.n..5..", "time method 'n' needs empty"),
    ("2020s0...A.n....a/b", "tournament name must not contain '/'"),
    ("2020s0...A.n....a\nb", "control characters"),
    ("2020s0...A.n....a\x00b", "control characters"),
    ("2020s0...A.n....a\u202eb", "control characters"),  # shown reversed in the lobby
    ("2020s0...A.n....a\u2067b\u2069", "control characters"),
    ("2020s0...A.n...." + "x" * 101, "tournament name must be at most 100"),
    ("0909n0.4..F.n....", "4 crosses need a board of at least 10x10"),
    ("3009n0.4..F.n....", "4 crosses need"),
    ("0420s0.H2..F.n....", "handicap needs a board of at least 5x5"),
    ("2020s0.SGFz5.s.F.n....", "SGF starting position needs who-starts 'a' or 'p'"),
    ("2020s0.SGFz5..F.n....", "SGF starting position"),
    ("2020t0..a.F.n...c___SUsuenJohn.", "analyser rights are only allowed in analysis games"),
    ("2020s0...F.n...X.", "unknown table right 'X'"),
    ("2020s0...F.n...u1.", "unknown table right '1'"),
    ("2020s0...F.n...uu.", "repeated table right 'u'"),
    ("2020s0...F.n..._SRAX_srap.", "unknown right for B 'X'"),
    ("2020s0...F.n..._SRAP_SRAP.", "unknown right for W 'S'"),
    ("2020s0...F.n..._srap_srap.", "unknown right for B 's'"),
    ("2020s0...F.n..._SS_s.", "repeated right for B 'S'"),
    ("2020s0...F.n..._S_ss.", "repeated right for W 's'"),
    ("2020s0...F.n...a_SRAP.", "rights must be table_B_W"),
    ("2020t0..a.a.n...c___SUsue.", "followed by 'n' and the analyser's nick"),
    ("2020t0..a.a.n...c___SUsuen.", "followed by 'n' and the analyser's nick"),
    ("2020t0..a.a.n...c___SUsxnJohn.", "unknown analyser right 'x'"),
    ("2020t0..a.a.n...c___SSnJohn.", "repeated analyser right 'S'"),
    ("2020t0..a.a.n...c___SnJo/hn.", "analyser nick must be"),
    ("2020t0..a.a.n...c___SnJo-hn.", "analyser nick must be"),
    ("2020t0..a.a.n...c___Sn" + "x" * 21 + ".", "analyser nick must be 1..20"),
    # old format
    ("2020stAnA0.0.0", "unknown rules 'stAn'"),
    ("2020noT2R0.0.0", "unknown rules 'noT2'"),
    ("2020stanX0.0.0", "unknown game type 'X'"),
    ("2020stan", "unknown game type ''"),
    ("2020stana0.0.0", "unknown game type 'a'"),
    ("2020stanA0.0", "old gameType must end with <instantWin>.<startTime>.<addedTime>"),
    ("2020stanA0.0.0.0", "old gameType must end with"),
    ("2020stanA0.0_0.0", "old gameType must end with"),
    ("2020stanAx.0.0", "instant win"),
    ("2020stanA100.0.0", "instant win must be an integer 0..99"),
    ("2020stanA0.-1.0", "start time"),
    ("2020stanA0.86401.0", "start time must be an integer 0..86400"),
    ("2020stanA0.60.3601", "added time must be an integer 0..3600"),
    ("2020stanA0.60.", "added time"),
    ("0909noT4F0.0.0", "4 crosses need a board of at least 10x10"),
    ("xx20stanA0.0.0", "board size must be 4 digits"),
    ("5520stanA0.0.0", "board width must be 4..52"),
    ("2020stanA0.0.0_a/b", "tournament name must not contain '/'"),
    ("2020stanA0.0.0_" + "y" * 101, "tournament name must be at most 100"),
]


@pytest.mark.parametrize(("text", "reason"), REJECTIONS)
def test_rejections_name_the_problem(text: str, reason: str) -> None:
    with pytest.raises(GameTypeError) as error:
        parse_game_type(text)
    assert reason in str(error.value)
    assert isinstance(error.value, ValueError)


def test_error_messages_quote_long_input_briefly() -> None:
    with pytest.raises(GameTypeError) as error:
        parse_game_type("2020s0.SGFz" + "x" * 200 + ".a.A.n....")
    assert len(str(error.value)) < 120


@pytest.mark.parametrize(
    ("build", "reason"),
    [
        (lambda: GameType(width=3, height=20, rules=Rules.STANDARD), "board width must be 4..52"),
        (lambda: GameType(width=True, height=20, rules=Rules.STANDARD), "board width"),
        (lambda: GameType(width=20, height=53, rules=Rules.STANDARD), "board height must be 4..52"),
        (lambda: GameType(width=20, height=20, rules=Rules.STANDARD, instant_win=-1), "instant win"),
        (lambda: GameType(width=20, height=20, rules=Rules.STANDARD, start_time=60), "untimed game"),
        (lambda: GameType(width=20, height=20, rules=Rules.STANDARD, added_time=5), "untimed game"),
        (
            lambda: GameType(width=20, height=20, rules=Rules.STANDARD, timed=True),
            "start time must be 1..86400",
        ),
        (
            lambda: GameType(
                width=20, height=20, rules=Rules.STANDARD, timed=True, start_time=9, added_time=-1
            ),
            "added time must be 0..3600",
        ),
        (lambda: Start.crosses(3), "crosses must be 1, 2 or 4"),
        (lambda: Start.crosses(0), "crosses must be 1, 2 or 4"),
        (lambda: Start.handicap(1), "handicap must be 2..9"),
        (lambda: Start.handicap(10), "handicap must be 2..9"),
        (lambda: Start.sgf(0), "SGF archive number"),
        (lambda: Start(StartKind.EMPTY, 3), "empty start takes no number"),
        (lambda: Start("diamond", 1), "unknown start kind"),  # type: ignore[arg-type]
        (lambda: Rights(analyser="S"), "analyser nick"),
        (lambda: Rights(black="SRAUTPS"), "repeated right for B 'S'"),
    ],
)
def test_invalid_values_cannot_be_built(build: object, reason: str) -> None:
    with pytest.raises(GameTypeError) as error:
        build()  # type: ignore[operator]
    assert reason in str(error.value)


def test_longest_value_fits_the_length_limit() -> None:
    longest = GameType(
        width=52,
        height=52,
        rules=Rules.NO_TERRITORY,
        start=Start.sgf(MAX_SGF_NUMBER),
        instant_win=99,
        who_starts=WhoStarts.INVITED,
        kind=GameKind.ANALYSIS,
        timed=True,
        start_time=86_400,
        added_time=3_600,
        rights=Rights(TABLE_RIGHTS, "SRAUT", "srautp", "SUsue", "n" * 20),
        tournament="x" * 100,
    )
    text = format_new(longest)
    assert len(text) < 300
    assert parse_game_type(text) == longest


def test_plain_strings_are_stored_as_enums() -> None:
    built = GameType(width=20, height=20, rules="n", kind="R", who_starts="a")  # type: ignore[arg-type]
    assert built == parse_game_type("2020n0..a.R.n....")
    assert built.rules is Rules.NO_TERRITORY
    assert built.stop_allowed
    assert Start("crosses", 4) == Start.crosses(4)  # type: ignore[arg-type]
    with pytest.raises(GameTypeError, match="unknown rules 'x'"):
        GameType(width=20, height=20, rules="x")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("2020n0...F.n....", "variant 'noT' has no old-format name"),
        ("2020s0.4..F.n....", "variant 'stan+4' has no old-format name"),
        ("2525n0.2.s.R.a.300.5..", "variant 'noT2' has no old-format name"),
        ("2020s0.H3.p.F.n....", "variant 'stan+H3' has no old-format name"),
        ("2020s0.SGFz7.a.F.n....", "variant 'stan+SGFz7' has no old-format name"),
        ("2020s0..a.F.n....", "cannot express game type 'F' with who-starts 'a'"),
        ("2020s0..p.R.n....", "cannot express game type 'R' with who-starts 'p'"),
        ("2020s0...R.n....", "cannot express game type 'R' with who-starts ''"),
        ("2020s0..a.a.n....", "cannot express game type 'a'"),
        ("2020s0..s.F.n..._SRAP_srap.", "old format cannot carry rights"),
        ("2020s0..s.F.n...ua.", "old format cannot carry rights"),
    ],
)
def test_format_old_refuses_what_it_cannot_express(text: str, reason: str) -> None:
    with pytest.raises(GameTypeError) as error:
        format_old(parse_game_type(text))
    assert reason in str(error.value)


# ---------------------------------------------------------------- property tests

OLD_RULES = [
    ("stan", Rules.STANDARD, Start.empty()),
    ("terr", Rules.TERRITORY, Start.empty()),
    ("noT1", Rules.NO_TERRITORY, Start.crosses(1)),
    ("noT4", Rules.NO_TERRITORY, Start.crosses(4)),
]
OLD_KINDS = [
    ("R", GameKind.RANKED, WhoStarts.SERVER),
    ("F", GameKind.FREE, WhoStarts.SERVER),
    ("A", GameKind.AI, WhoStarts.SERVER),
    ("r", GameKind.RANKED, WhoStarts.INVITER),
]

sizes = st.integers(4, 52)
tournaments = st.text(
    st.characters(exclude_categories=("Cc", "Cs"), exclude_characters="/"), max_size=100
) | st.sampled_from(["", "PWC 2012", "Cup 2.0. final", "a_b", "tournament X"])
nicks = st.text(st.sampled_from("abcXYZ019_ *жЖ"), min_size=1, max_size=20)


def _letters(alphabet: str) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(alphabet), unique=True).map("".join)


@st.composite
def rights(draw: st.DrawFn, analysis: bool) -> Rights:
    if draw(st.booleans()):
        return Rights(table=draw(_letters(TABLE_RIGHTS)))
    with_analyser = analysis and draw(st.booleans())
    return Rights(
        table=draw(_letters(TABLE_RIGHTS)),
        black=draw(_letters(BLACK_RIGHTS)),
        white=draw(_letters(WHITE_RIGHTS)),
        analyser=draw(_letters("SUsue")) if with_analyser else "",
        analyser_nick=draw(nicks) if with_analyser else "",
    )


@st.composite
def timing(draw: st.DrawFn) -> tuple[bool, int, int]:
    if draw(st.booleans()):
        return True, draw(st.integers(1, 86_400)), draw(st.integers(0, 3_600))
    return False, 0, 0


@st.composite
def game_types(draw: st.DrawFn) -> GameType:
    width, height = draw(sizes), draw(sizes)
    starts = [
        st.just(Start.empty()),
        st.just(Start.crosses(1)),
        st.just(Start.crosses(2)),
        st.integers(1, MAX_SGF_NUMBER).map(Start.sgf),
    ]
    if min(width, height) >= 10:
        starts.append(st.just(Start.crosses(4)))
    if min(width, height) >= 5:
        starts.append(st.integers(2, 9).map(Start.handicap))
    start = draw(st.one_of(starts))
    kind = draw(st.sampled_from(GameKind))
    if start.kind is StartKind.SGF:
        who = draw(st.sampled_from([WhoStarts.INVITER, WhoStarts.INVITED]))
    else:
        who = draw(st.sampled_from(WhoStarts))
    timed, start_time, added_time = draw(timing())
    return GameType(
        width=width,
        height=height,
        rules=draw(st.sampled_from(Rules)),
        start=start,
        instant_win=draw(st.integers(0, 99)),
        who_starts=who,
        kind=kind,
        timed=timed,
        start_time=start_time,
        added_time=added_time,
        rights=draw(rights(kind is GameKind.ANALYSIS)),
        tournament=draw(tournaments),
    )


@st.composite
def old_game_types(draw: st.DrawFn) -> GameType:
    name, rules_, start = draw(st.sampled_from(OLD_RULES))
    low = 10 if name == "noT4" else 4
    _, kind, who = draw(st.sampled_from(OLD_KINDS))
    timed, start_time, added_time = draw(timing())
    return GameType(
        width=draw(st.integers(low, 52)),
        height=draw(st.integers(low, 52)),
        rules=rules_,
        start=start,
        instant_win=draw(st.integers(0, 99)),
        who_starts=who,
        kind=kind,
        timed=timed,
        start_time=start_time,
        added_time=added_time,
        tournament=draw(tournaments),
    )


def _old_expressible(game_type: GameType) -> bool:
    return (
        any((r, s) == (game_type.rules, game_type.start) for _, r, s in OLD_RULES)
        and any((k, w) == (game_type.kind, game_type.who_starts) for _, k, w in OLD_KINDS)
        and game_type.rights == Rights()
    )


@given(game_types())
def test_new_format_round_trip(game_type: GameType) -> None:
    text = format_new(game_type)
    assert parse_game_type(text) == game_type
    assert format_new(parse_game_type(text)) == text
    assert text.count(".") >= 8
    assert text[5] not in "teo"


@given(game_types())
def test_format_old_succeeds_exactly_when_expressible(game_type: GameType) -> None:
    try:
        text = format_old(game_type)
    except GameTypeError:
        assert not _old_expressible(game_type)
    else:
        assert _old_expressible(game_type)
        assert parse_game_type(text) == game_type


@given(old_game_types())
def test_old_format_round_trip(game_type: GameType) -> None:
    old = format_old(game_type)
    assert old[5] in "teo"
    assert parse_game_type(old) == game_type
    assert format_old(parse_game_type(old)) == old
    assert format_old(parse_game_type(format_new(game_type))) == old


@given(
    st.sampled_from(OLD_RULES),
    st.sampled_from(OLD_KINDS),
    st.integers(0, 99),
    st.integers(1, 86_400),
    st.integers(0, 3_600),
    tournaments,
)
def test_canonical_old_strings_parse_to_their_parts(
    rules_: tuple[str, Rules, Start],
    kind: tuple[str, GameKind, WhoStarts],
    instant_win: int,
    start_time: int,
    added_time: int,
    tournament: str,
) -> None:
    suffix = f"_{tournament}" if tournament else ""
    text = f"3030{rules_[0]}{kind[0]}{instant_win}.{start_time}.{added_time}{suffix}"
    game_type = parse_game_type(text)
    assert (game_type.rules, game_type.start) == rules_[1:]
    assert (game_type.kind, game_type.who_starts) == kind[1:]
    assert (game_type.instant_win, game_type.start_time, game_type.added_time) == (
        instant_win,
        start_time,
        added_time,
    )
    assert game_type.timed
    assert game_type.tournament == tournament
    assert format_old(game_type) == text


@given(rights(analysis=True))
def test_rights_round_trip(value: Rights) -> None:
    assert parse_rights(format_rights(value)) == value
    assert parse_rights(format_rights(value)).may(1, Right.UNDO) == ("U" in value.black)


def _parses_or_rejects(text: str) -> None:
    """The contract for untrusted input: a value that round-trips, or GameTypeError, nothing else."""
    try:
        game_type = parse_game_type(text)
    except GameTypeError as error:
        message = str(error)
    else:
        assert isinstance(game_type, GameType)
        assert parse_game_type(format_new(game_type)) == game_type
        return
    assert message


@given(st.text(max_size=320))
@example("2020stanA0.0.0")
@example("2020s0...A.n....")
@example("______")
@example("2020t")
def test_arbitrary_text_parses_or_raises_game_type_error(text: str) -> None:
    _parses_or_rejects(text)


@given(st.text(st.sampled_from("0123456789.stnaeopTrRFAH_SUGz2 /"), max_size=60))
def test_protocol_alphabet_text_parses_or_raises_game_type_error(text: str) -> None:
    _parses_or_rejects(text)


@given(game_types(), st.data())
def test_mutated_valid_strings_parse_or_raise_game_type_error(
    game_type: GameType, data: st.DataObject
) -> None:
    texts = [format_new(game_type)]
    if _old_expressible(game_type):
        texts.append(format_old(game_type))
    text = data.draw(st.sampled_from(texts))
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(text)))
        character = data.draw(st.sampled_from("._0195aRrnstH/\n") | st.characters())
        edit = data.draw(st.sampled_from(["insert", "delete", "replace"]))
        if edit == "insert":
            text = text[:position] + character + text[position:]
        elif edit == "delete":
            text = text[:position] + text[position + 1 :]
        else:
            text = text[:position] + character + text[position + 1 :]
    _parses_or_rejects(text)
