"""Server events as wire lines, read back the way MultiPoints and roboCup read them.

Layouts: `shared/spec/protocol.md` 3.2 and 3.3; what each client requires of a line: section 12. The
client readers below follow their Java/Scala code, including Java's `String.split`, which drops
trailing empty strings.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.engine.board import BLACK, WHITE
from server.engine.game import Game, Result
from server.engine.gametype import (
    GameKind,
    GameType,
    GameTypeError,
    Rights,
    Rules,
    Start,
    WhoStarts,
    format_new,
    format_old,
    parse_game_type,
)
from server.engine.moves import parse_move
from server.protocol import events
from server.protocol.codec import check_nick, decode_server_text, encode_server_text


def java_split(text: str, separator: str = ".") -> list[str]:
    """Java's `text.split(regex)` for a one-character separator: trailing empty strings are dropped."""
    if text == "":
        return [""]
    parts = text.split(separator)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def java_int(text: str) -> int:
    """`Integer.parseInt`: an optional sign and ASCII digits, nothing else."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise ValueError(f"NumberFormatException: {text!r}")
    return int(text)


def multipoints_description(line: str) -> dict[str, object]:
    """ServerZagram.handleMessage for `d`, then getZagramGameType on the game-type part."""
    assert line.startswith("d")
    # "first section and last two sections": replaceFirst("[^.]*.", "") then twice "\\.[^.]*$".
    game_type = re.sub(r"[^.]*.", "", line, count=1)
    game_type = re.sub(r"\.[^.]*\Z", "", game_type, count=1)
    game_type = re.sub(r"\.[^.]*\Z", "", game_type, count=1)
    fields = java_split(line)
    parsed = java_split(game_type)
    head = parsed[0]
    old = game_type[5] in "teo"  # its format detection; it must say "new" for every line we send
    timed = parsed[4][0] == "a"
    return {
        "game_type": game_type,
        "old": old,
        "room": fields[0].replace("d", "", 1),
        "player1": fields[-2],
        "player2": fields[-1],
        "width": java_int(head[0:2]),
        "height": java_int(head[2:4]),
        "stop": head[4:5] == "n",
        "instant_win": java_int(head[5:]),
        "rated": parsed[3][0] == "R",
        "start_time": java_int(parsed[5]) if timed else 0,
        "added_time": java_int(parsed[6]) if timed else 0,
        "start": parsed[1],
    }


def robocup_fields(line: str) -> list[str]:
    """roboCup's `line.drop(1).split('.')`."""
    return java_split(line[1:])


def list_like_multipoints(line: str, prefix: str) -> list[str]:
    """`pa`/`pr`/`pd`/`ga`/`gr`/`gd`: split on dots, empty entries skipped."""
    assert line.startswith(prefix)
    return [item for item in java_split(line[len(prefix) :]) if item]


# ----------------------------------------------------------------------------------- people and tables


@pytest.mark.parametrize(("kind", "prefix"), [("r", "pr"), ("a", "pa"), ("d", "pd")])
def test_people_lines(kind: str, prefix: str) -> None:
    assert events.people(kind, ["*Ala", "John", "Вася"]) == f"{prefix}*Ala.John.Вася"
    assert events.people(kind, ["John Player"]) == f"{prefix}John Player"
    assert events.people(kind, []) == prefix
    assert events.people(kind, iter(["a", "b"])) == f"{prefix}a.b"


@pytest.mark.parametrize(("kind", "prefix"), [("r", "gr"), ("a", "ga"), ("d", "gd")])
def test_table_lines(kind: str, prefix: str) -> None:
    assert events.tables(kind, [101, 102, 7]) == f"{prefix}101.102.7"
    assert events.tables(kind, [0]) == f"{prefix}0"
    assert events.tables(kind, []) == prefix
    assert events.tables(kind, (uid for uid in (3, 4))) == f"{prefix}3.4"


guest_nicks = st.text(st.sampled_from("abzABZ019_łŁ"), min_size=1, max_size=19).map(lambda s: "*" + s)
registered_nicks = st.text(st.sampled_from("абвжЖЁ019_"), min_size=1, max_size=20)
nicks = (guest_nicks | registered_nicks).filter(lambda n: n == n.strip())


@given(st.sampled_from("rad"), st.lists(nicks, max_size=8))
def test_multipoints_reads_back_the_people(kind: str, people: list[str]) -> None:
    assert list_like_multipoints(events.people(kind, people), "p" + kind) == people


@given(st.sampled_from("rad"), st.lists(st.integers(0, 10**9), max_size=8))
def test_multipoints_reads_back_the_tables(kind: str, uids: list[int]) -> None:
    assert list_like_multipoints(events.tables(kind, uids), "g" + kind) == [str(uid) for uid in uids]


# ----------------------------------------------------------------------------------- descriptions


@pytest.mark.parametrize(
    ("game_type", "line"),
    [
        # old format in, new format out (MultiPoints parses only the new one)
        ("2020stanR0.180.15", "d101.2020s0..s.R.a.180.15...John.Player"),
        ("2525noT4R0.180.15", "d101.2525n0.4.s.R.a.180.15...John.Player"),
        ("3932noT1r0.180.20_PWC 2012", "d101.3932n0.1.a.R.a.180.20..PWC 2012.John.Player"),
        ("2020stanA0.0.0", "d101.2020s0..s.A.n.....John.Player"),
        ("3932noT1F0.60.2", "d101.3932n0.1.s.F.a.60.2...John.Player"),
        # new format in, the same out
        ("2020s0...A.n....", "d101.2020s0...A.n.....John.Player"),
        ("2020t15..s.R.a.180.15..", "d101.2020t15..s.R.a.180.15...John.Player"),
        ("3932n0.4.a.F.n...ua.tournament X", "d101.3932n0.4.a.F.n...ua.tournament X.John.Player"),
        ("3030n0.1.a.R.a.60.30._SRATP_sratp.", "d101.3030n0.1.a.R.a.60.30._SRATP_sratp..John.Player"),
        (
            "3030t.4.a.F.a.120.5._SRAP_srap.Cup 2.0. final",
            "d101.3030t0.4.a.F.a.120.5._SRAP_srap.Cup 2.0. final.John.Player",
        ),
    ],
)
def test_description_lines(game_type: str, line: str) -> None:
    assert events.description(101, parse_game_type(game_type), "John", "Player") == line


def test_description_from_an_old_string_has_nine_fields() -> None:
    line = events.description(7, parse_game_type("3932noT1r0.180.20_PWC 2012"), "*Ala", "Вася")
    read = multipoints_description(line)
    assert read["game_type"] == "3932n0.1.a.R.a.180.20..PWC 2012"
    assert len(str(read["game_type"]).split(".", 8)) == 9
    assert read["old"] is False
    assert read == {
        "game_type": "3932n0.1.a.R.a.180.20..PWC 2012",
        "old": False,
        "room": "7",
        "player1": "*Ala",
        "player2": "Вася",
        "width": 39,
        "height": 32,
        "stop": True,
        "instant_win": 0,
        "rated": True,
        "start_time": 180,
        "added_time": 20,
        "start": "1",
    }


def test_roboCup_finds_table_players_and_tournament() -> None:
    line = events.description(12, parse_game_type("3030noT4r0.180.20_Autumn Cup"), "Alice", "Bob")
    fields = robocup_fields(line)
    assert int(fields[0]) == 12
    assert (fields[-2], fields[-1]) == ("Alice", "Bob")
    assert "Autumn Cup" in line


@st.composite
def game_types(draw: st.DrawFn) -> GameType:
    width = draw(st.integers(4, 52))
    height = draw(st.integers(4, 52))
    rules = draw(st.sampled_from(list(Rules)))
    starts = [Start.empty(), Start.crosses(1)]
    if min(width, height) >= 10:
        starts.append(Start.crosses(4))
    if min(width, height) >= 5:
        starts.append(Start.handicap(draw(st.integers(2, 9))))
    start = draw(st.sampled_from(starts))
    timed = draw(st.booleans())
    rights = draw(
        st.sampled_from(
            [Rights(), Rights(black="SRATP", white="sratp"), Rights(black="SRAP", white="srap"), Rights("ua")]
        )
    )
    tournament = draw(
        st.sampled_from(["", "PWC 2012", "Cup 2.0. final", "a_b", "tournament X", "Кубок 1.5"])
        | st.text(st.characters(exclude_categories=("Cc", "Cs"), exclude_characters="/"), max_size=30)
    )
    return GameType(
        width=width,
        height=height,
        rules=rules,
        start=start,
        instant_win=draw(st.sampled_from([0, 15, 30]) | st.integers(0, 99)),
        who_starts=draw(st.sampled_from([WhoStarts.INVITER, WhoStarts.INVITED, WhoStarts.SERVER])),
        kind=draw(st.sampled_from([GameKind.RANKED, GameKind.FREE, GameKind.AI])),
        timed=timed,
        start_time=draw(st.integers(1, 86_400)) if timed else 0,
        added_time=draw(st.integers(0, 3_600)) if timed else 0,
        rights=rights,
        tournament=tournament,
    )


@given(st.integers(1, 10**9), game_types(), nicks, nicks)
def test_multipoints_reads_every_description(uid: int, game_type: GameType, blue: str, red: str) -> None:
    line = events.description(uid, game_type, blue, red)
    assert line == f"d{uid}.{encode_server_text(format_new(game_type))}.{blue}.{red}"
    assert "/" not in line
    read = multipoints_description(line)
    # "the gameType is everything between the first field and the last two" (protocol.md 12)
    assert read["game_type"] == encode_server_text(format_new(game_type))
    assert parse_game_type(decode_server_text(str(read["game_type"]))) == game_type
    assert len(str(read["game_type"]).split(".", 8)) == 9
    assert read["old"] is False
    assert read["room"] == str(uid)
    assert (read["player1"], read["player2"]) == (blue, red)
    assert (read["width"], read["height"]) == (game_type.width, game_type.height)
    assert read["rated"] == (game_type.kind is GameKind.RANKED)
    assert read["stop"] == (game_type.rules is Rules.NO_TERRITORY)
    assert read["instant_win"] == game_type.instant_win
    assert (read["start_time"], read["added_time"]) == (game_type.start_time, game_type.added_time)
    if game_type.tournament:
        assert encode_server_text(game_type.tournament) in line


@given(game_types())
def test_descriptions_of_old_strings_are_new(game_type: GameType) -> None:
    try:
        old = format_old(game_type)
    except GameTypeError:
        return
    line = events.description(1, parse_game_type(old), "A", "B")
    read = multipoints_description(line)
    assert read["old"] is False
    assert decode_server_text(str(read["game_type"])) == format_new(parse_game_type(old))  # names escaped


def test_a_team_tables_description_names_each_team_in_one_field_that_old_clients_read_whole() -> None:
    team_one, team_two = events.team(["*Ala", "*Cid"]), events.team(["Bob", "Dan Smith"])
    line = events.description(5, parse_game_type("3030noT4r0.180.20_Cup. 2.0"), team_one, team_two)

    assert line.endswith(".*Ala,*Cid.Bob,Dan Smith")
    read = multipoints_description(line)
    assert (read["player1"], read["player2"], read["width"]) == ("*Ala,*Cid", "Bob,Dan Smith", 30)
    assert robocup_fields(line)[-2:] == ["*Ala,*Cid", "Bob,Dan Smith"]
    assert events.described_players(line) == ["*Ala", "*Cid", "Bob", "Dan Smith"]
    two = events.description(5, parse_game_type("3030noT4r0.180.20"), "*Ala", "Bob")
    assert events.described_players(two) == ["*Ala", "Bob"]


def test_description_nicks_are_valid_nicks() -> None:
    # The last two fields work only because nicks never hold a dot (codec.check_nick).
    for nick in ("*Ala", "John Player", "Вася"):
        assert check_nick(nick, guest=nick.startswith("*")) == nick


# ----------------------------------------------------------------------------------- state


def play(game: Game, *moves: str) -> None:
    for move in moves:
        game.play(game.to_move, parse_move(move, game.width, game.height))


def test_state_while_playing() -> None:
    game = Game(10, 10)
    assert events.state(4, game, None) == "x4.1.-."
    play(game, "cc")
    assert events.state(4, game, None) == "x4.2.-."
    assert robocup_outcome(events.state(4, game, None)) == "playing"


def test_a_team_tables_state_carries_the_side_on_move() -> None:
    game = Game(10, 10)
    play(game, "cc", "dd")  # blue on move: at a team table side 1, 3, 5 or 7
    assert events.state(4, game, None, 3) == "x4.3.-."
    assert robocup_outcome(events.state(4, game, None, 3)) == "playing"


@pytest.mark.parametrize(
    ("finish", "result"),
    [
        (lambda g: g.resign(BLACK), "W+R"),
        (lambda g: g.resign(WHITE), "B+R"),
        (lambda g: g.lose_on_time(WHITE), "B+T"),
        (lambda g: g.forfeit(BLACK), "W+F"),
        (lambda g: g.void(), "Void"),
        (lambda g: g.finish_by_score(), "0"),
    ],
)
def test_state_of_a_finished_game(finish: Callable[[Game], object], result: str) -> None:
    game = Game(10, 10)
    finish(game)
    assert events.state(9, game, None) == f"x9.1.{result}."
    assert events.state(9, game, 123456) == f"x9.1.{result}.123456"


def test_state_after_a_capture_and_score() -> None:
    game = Game(8, 8)
    play(game, "cb", "cc", "bc", "aa", "dc", "ab", "cd")  # blue surrounds red's cc
    assert game.finish_by_score() == Result(BLACK, "score", Fraction(1))
    assert events.state(3, game, 42) == "x3.2.B+1.42"


def test_a_half_point_result_stays_one_dot_field() -> None:
    # Territory scores keep their half point (docs/rules.md: `B+1.5`). The `x` line is split on dots, so
    # the result must still be the third field and the archive number the fourth.
    game = Game(10, 10)
    game.result = Result(WHITE, "score", Fraction(3, 2))
    assert str(game.result) == "W+1.5"
    fields = events.state(5, game, 7)[1:].split(".")
    assert len(fields) == 4, fields
    assert fields[2] == "W+1,5" and Result.parse(fields[2].replace(",", ".")) == game.result
    assert fields[3] == "7"


def robocup_outcome(line: str) -> str:
    """FromZagram.handleGameState: the result is the third dot-field (an exception when there is none)."""
    fields = robocup_fields(line)
    if len(fields) < 3:
        return "error"  # roboCup logs "error processing line" and carries on
    result = fields[2]
    if result.startswith("B+"):
        return "first"
    if result.startswith("W+") or result == "Void":
        return "second"
    return "draw" if result == "0" else "playing"


@pytest.mark.parametrize(
    ("result", "outcome"),
    [("B+3", "first"), ("B+R", "first"), ("B+F", "first"), ("W+T", "second"), ("W+1.5", "second")]
    + [("Void", "second"), ("0", "draw")],
)
@pytest.mark.parametrize("archive", [None, 99])
def test_roboCup_reads_the_winner(result: str, outcome: str, archive: int | None) -> None:
    game = Game(10, 10)
    game.result = Result.parse(result)
    line = events.state(11, game, archive)
    assert robocup_fields(line)[:2] == ["11", "1"]
    assert robocup_outcome(line) == outcome
    if "." not in result:
        assert robocup_fields(line)[2:] == [result] + ([] if archive is None else [str(archive)])


def test_roboCup_sees_no_result_while_playing() -> None:
    assert robocup_outcome(events.state(11, Game(10, 10), None)) in ("playing", "error")


# ----------------------------------------------------------------------------------- user info


def test_guest_info_has_four_fields() -> None:
    line = events.user_info("*Ala", "", "F", "en", None)
    assert line == "i*Ala..F.en"
    assert len(line[1:].split(".")) == 4


def test_registered_info_has_nine_fields() -> None:
    line = events.user_info("John", "17", "F", "en", (1520, 10, 2, 3, ""))
    assert line == "iJohn.17.F.en.1520.10.2.3."
    assert len(line[1:].split(".")) == 9
    line = events.user_info("John", "17", "NJ", "ru", (1400, 0, 1, 2, "P3c2"))
    assert line == "iJohn.17.NJ.ru.1400.0.1.2.P3c2"


def multipoints_user_info(line: str) -> dict[str, object]:
    """ServerZagram.handlePlayerInfo: stops at the first missing or non-integer field."""
    fields = java_split(line[1:])
    read: dict[str, object] = {"nick": fields[0], "free": not re.search("N|b", fields[2])}
    read["lang"] = fields[3] or None
    try:
        read["rating"] = java_int(fields[4])
        read["wins"] = java_int(fields[5])
        read["losses"] = java_int(fields[7])
        read["draws"] = java_int(fields[6])
    except (IndexError, ValueError):
        pass
    return read


@pytest.mark.parametrize(
    ("flags", "free"), [("F", True), ("N", False), ("FJ", True), ("NJ", False), ("", True)]
)
def test_multipoints_reads_user_info(flags: str, free: bool) -> None:
    registered = multipoints_user_info(events.user_info("John", "17", flags, "en", (1520, 10, 2, 3, "P3")))
    assert registered == {
        "nick": "John",
        "free": free,
        "lang": "en",
        "rating": 1520,
        "wins": 10,
        "draws": 2,
        "losses": 3,
    }
    guest = multipoints_user_info(events.user_info("*Ala", "", flags, "ru", None))
    assert guest == {"nick": "*Ala", "free": free, "lang": "ru"}


def test_roboCup_reads_user_info() -> None:
    fields = robocup_fields(events.user_info("John", "17", "F", "en", (1520, 10, 2, 3, "")))
    rating, wins, losses, draws = int(fields[4]), int(fields[5]), int(fields[7]), int(fields[6])
    assert (fields[0], rating, wins, draws, losses) == ("John", 1520, 10, 2, 3)


# ----------------------------------------------------------------------------------- subscriptions


def test_subscriptions_line_matches_the_client_comment() -> None:
    assert events.subscriptions("*Вася", [0, 234, 1234, 1451, 21]) == "b*Вася.0.234.1234.1451.21"
    assert events.subscriptions("John", [0]) == "bJohn.0"
    assert events.subscriptions("John", []) == "bJohn."


def multipoints_subscriptions(line: str) -> tuple[str, list[str]]:
    """`player = replaceAll("\\..*", "").substring(1)`, `rooms = replaceFirst(".*?\\.", "").split(".")`."""
    player = re.sub(r"\..*", "", line)[1:]
    rooms = java_split(re.sub(r".*?\.", "", line, count=1))
    return player, rooms


@given(nicks, st.lists(st.integers(0, 10**9), min_size=1, max_size=8))
def test_multipoints_reads_back_subscriptions(nick: str, uids: list[int]) -> None:
    assert multipoints_subscriptions(events.subscriptions(nick, uids)) == (nick, [str(uid) for uid in uids])


def test_multipoints_reads_the_nick_of_an_empty_subscription_list() -> None:
    player, rooms = multipoints_subscriptions(events.subscriptions("*Ala", []))
    assert player == "*Ala"
    assert [room for room in rooms if room] == []


# ----------------------------------------------------------------------------------- small lines


def test_section_and_chat_lines() -> None:
    assert events.section(0) == "q0"
    assert events.section(101) == "q101"
    assert events.chat_added("1373011049_0.John.3.Salut Alexey") == "ca1373011049_0.John.3.Salut Alexey"
    assert events.chat_replaced("1_0.John.3.hi") == "cr1_0.John.3.hi"
    assert events.chat_deleted("1313684800_0") == "cd1313684800_0"


def test_every_line_of_the_illustrative_reply() -> None:
    # protocol.md 3.1's illustrative response, rebuilt from the builders.
    game = Game(20, 20)
    lines = [
        events.section(0),
        events.people("r", ["*Guest12", "John", "Player"]),
        events.tables("r", [101]),
        events.description(101, parse_game_type("2020s0..s.R.a.180.15.."), "John", "Player"),
        events.state(101, game, None),
        events.user_info("John", "17", "F", "en", (1520, 10, 2, 3, "")),
        events.chat_added("1373011049_0.John.3.Salut Alexey"),
        events.section(101),
    ]
    assert lines == [
        "q0",
        "pr*Guest12.John.Player",
        "gr101",
        "d101.2020s0..s.R.a.180.15...John.Player",
        "x101.1.-.",
        "iJohn.17.F.en.1520.10.2.3.",
        "ca1373011049_0.John.3.Salut Alexey",
        "q101",
    ]
    assert all(line and "/" not in line for line in lines)


def test_the_writer_of_a_chat_line_is_its_nick_or_its_private_side() -> None:
    line = events.chat_added("1700000000_0.*Ala.B1.hi.there")
    assert events.chat_writer(line) == "*Ala"
    assert events.chat_writer(events.chat_replaced("1700000000_1.*Bob.d.")) == "*Bob"  # a deleted line
    assert events.chat_writer("ca1700000000_2.*Ala-*Bob.1.hi") == "*Ala"
    assert events.chat_writer("ca1700000000_3.*Ala-*Bob.2.hi") == "*Bob"
    notices = ("ca1700000000_4.*Ala-*Bob.nochat.", "ca1700000000_5..e.refused")
    for other in (*notices, "cd1700000000_0", "pa*Ala"):
        assert events.chat_writer(other) == ""


# the prefixes MultiPoints' ServerZagram.handleMessage acts on, in its order; any other line it skips
MULTIPOINTS_READS = tuple("b ca cr d f ga gr gd h i m pa pr pd q sa sr".split())


def test_the_list_of_the_ignored_is_a_line_multipoints_would_skip() -> None:
    """MultiPoints never asks for it (docs/protocol.md, "Ignoring"); were it sent one, it reads nothing."""
    for line in (events.ignored(["*Bob", "Carol"]), events.ignored([])):
        assert not line.startswith(MULTIPOINTS_READS) and not line.startswith(("u", "vg", "vr", "vs"))
    assert events.ignored(["*Bob", "Carol"]) == "n*Bob.Carol" and events.ignored([]) == "n"


def test_prestige_and_moderating_powers_by_role_leave_what_multipoints_reads_as_it_was() -> None:
    """ServerZagram.handlePlayerInfo reads fields 0 to 7 (`drawCount = Integer.parseInt(dotSplitted[6])`
    is its last) and never the ninth, where the seed doc puts `prestige_and_mod_powers`."""
    assert [events.prestige(role) for role in ("none", "moderator", "admin")] == ["", "P2x1c3", "P3x2c3"]
    line = events.user_info("Boss", "", "F", "pl", (1500, 1, 2, 3, events.prestige("admin")))
    assert line == "iBoss..F.pl.1500.1.2.3.P3x2c3"
    assert multipoints_user_info(line) == {
        "nick": "Boss",
        "free": True,
        "lang": "pl",
        "rating": 1500,
        "wins": 1,
        "draws": 2,
        "losses": 3,
    }
