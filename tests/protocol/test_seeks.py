"""The seeks' and pools' wire format (server/protocol/seeks.py): the `k` command's text read into values,
every malformed one refused with a code, and the lines written as docs/protocol.md shows them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.protocol.codec import ProtocolError
from server.protocol.events import lobby_subject
from server.protocol.seeks import (
    POOL_LEFT,
    AcceptSeek,
    CancelSeek,
    PoolWaiter,
    PostSeek,
    RatingRange,
    SeekAdded,
    parse_pool_waiter,
    parse_range,
    parse_seek_added,
    parse_seek_command,
    pool_left,
    pool_waiter,
    pool_waiting,
    seek_added,
    seek_gone,
    seek_number,
)

FREE = "2020s0.4.a.F.a.180.2.."


def test_a_post_keeps_the_game_type_whole_dots_and_all() -> None:
    assert parse_seek_command(f"s.1400.1700.{FREE}") == PostSeek(FREE, RatingRange(1400, 1700))
    assert parse_seek_command(f"s...{FREE}") == PostSeek(FREE, RatingRange())
    assert parse_seek_command(f"s.1400..{FREE}") == PostSeek(FREE, RatingRange(1400, None))
    assert parse_seek_command(f"s..1700.{FREE}") == PostSeek(FREE, RatingRange(None, 1700))


def test_accept_and_cancel_name_a_seek_by_its_number() -> None:
    assert parse_seek_command("a.12") == AcceptSeek(12)
    assert parse_seek_command("c.3") == CancelSeek(3)
    assert seek_number("12") == 12


@pytest.mark.parametrize(
    "text",
    ["", "s", "s.1400.1700", "s.1400.1700.", "x.1", "a.", "a.x", "a.1.2", "c.-1", "a.²", "s.1400"],
)
def test_a_malformed_command_is_refused_as_one(text: str) -> None:
    with pytest.raises(ProtocolError) as refused:
        parse_seek_command(text)
    assert refused.value.code == "badCommand"


@pytest.mark.parametrize(
    ("lowest", "highest"),
    [("abc", ""), ("", "10000"), ("1800", "1200"), ("-5", ""), ("15.5", ""), ("１５", "")],
)
def test_a_bad_range_is_refused_with_its_own_code(lowest: str, highest: str) -> None:
    with pytest.raises(ProtocolError) as refused:
        parse_range(lowest, highest)
    assert refused.value.code == "badRange"
    with pytest.raises(ProtocolError) as in_a_command:
        parse_seek_command(f"s.{lowest}.{highest}.{FREE}")
    assert in_a_command.value.code == "badRange"


def test_a_seek_number_that_is_no_number_is_no_seek() -> None:
    for text in ("", "x", "1.5", "-1"):
        with pytest.raises(ProtocolError) as refused:
            seek_number(text)
        assert refused.value.code == "noSuchSeek"


def test_a_range_admits_ratings_within_its_bounds_and_a_guest_only_when_open() -> None:
    assert RatingRange().admits(None) and RatingRange().admits(2500)
    between = RatingRange(1400, 1700)
    assert between.admits(1400) and between.admits(1700) and between.admits(1550)
    assert not between.admits(1399) and not between.admits(1701) and not between.admits(None)
    assert RatingRange(None, 1700).admits(100) and not RatingRange(None, 1700).admits(None)
    assert RatingRange(1400, None).admits(3000) and not RatingRange(1400, None).admits(1000)


def test_the_lines_put_the_game_type_last() -> None:
    assert seek_added(7, "*Ala", RatingRange(), FREE) == f"ka7.*Ala...{FREE}"
    assert seek_added(8, "Bob", RatingRange(1400, 1700), FREE) == f"ka8.Bob.1400.1700.{FREE}"
    assert seek_added(9, "Bob", RatingRange(None, 1700), FREE) == f"ka9.Bob..1700.{FREE}"
    assert seek_gone(7) == "kd7"
    assert pool_waiting("20x20_3_2", 12, 340, 2) == "w20x20_3_2.12.340.2"


@settings(max_examples=500)
@given(st.text(alphabet=st.sampled_from("sac.0123456789-x²１ F"), max_size=30) | st.text(max_size=30))
def test_any_text_is_read_or_refused_with_a_code(text: str) -> None:
    try:
        command = parse_seek_command(text)
    except ProtocolError as refused:
        assert refused.code in ("badCommand", "badRange")
    else:
        assert isinstance(command, (PostSeek, AcceptSeek, CancelSeek))


@settings(max_examples=300)
@given(
    number=st.integers(0, 10**9 - 1),  # parse_number: up to nine digits
    nick=st.from_regex(r"\*?[A-Za-z][A-Za-z0-9_]{0,14}", fullmatch=True),
    lowest=st.none() | st.integers(0, 5000),
    highest=st.none() | st.integers(5000, 9999),
    game_type=st.sampled_from([FREE, "3932noT4r0.0.0", "2525s0.4.s.R.a.300.5.."]),
)
def test_a_ka_line_of_another_member_reads_back_as_it_was_written(
    number: int, nick: str, lowest: int | None, highest: int | None, game_type: str
) -> None:
    line = seek_added(number, nick, RatingRange(lowest, highest), game_type)
    assert parse_seek_added(line) == SeekAdded(number, nick, RatingRange(lowest, highest), game_type)
    assert lobby_subject(line) == ("seek", str(number))
    assert lobby_subject(seek_gone(number)) == ("unseek", str(number))


@pytest.mark.parametrize(
    "line",
    [
        "kd7",
        "ka",
        "ka7",
        f"ka7.*Ala..{FREE}",
        f"kax.*Ala...{FREE}",
        "ka7.*Ala...",
        f"ka7..1.2.{FREE}",
        f"ka7.Bob.1700.1400.{FREE}",
        f"ka7.Bob.1²..{FREE}",
        "ca1_1.*Ala.g.hello",
    ],
)
def test_a_line_that_is_no_seek_reads_as_none(line: str) -> None:
    assert parse_seek_added(line) is None


@settings(max_examples=300)
@given(
    nick=st.from_regex(r"\*?[A-Za-z][A-Za-z0-9_]{0,14}", fullmatch=True),
    pool=st.sampled_from(["20x20_3_2", "39x32_15_10"]),
    rating=st.none() | st.integers(0, 9999),
    joined=st.integers(0, 10**12).map(lambda milliseconds: milliseconds / 1000),
    bot=st.booleans(),
)
def test_a_ja_line_of_another_member_reads_back_as_it_was_written(
    nick: str, pool: str, rating: int | None, joined: float, bot: bool
) -> None:
    waiter = PoolWaiter(nick, pool, rating, joined, bot)
    line = pool_waiter(waiter)
    assert parse_pool_waiter(line) == waiter
    assert lobby_subject(line) == ("waiter", nick)
    assert lobby_subject(pool_left(nick)) == ("unwaiter", nick)


@pytest.mark.parametrize(
    "line",
    [
        f"{POOL_LEFT}*Ala",
        "ja",
        "ja*Ala",
        "ja*Ala.20x20_3_2..1764547200.000",
        "ja.20x20_3_2..1764547200.000.",
        "ja*Ala...1764547200.000.",
        "ja*Ala.20x20_3_2.x.1764547200.000.",
        "ja*Ala.20x20_3_2.1²..1764547200.000.",
        "ja*Ala.20x20_3_2..1764547200.0.",
        f"ja*Ala.20x20_3_2..{'9' * 400}.000.",
        "ja*Ala.20x20_3_2..inf.000.",
        "ja*Ala.20x20_3_2..1764547200.000.c",
        "ja*Ala.20x20_3_2..1764547200.000.b.",
    ],
)
def test_a_line_that_is_no_waiter_reads_as_none(line: str) -> None:
    assert parse_pool_waiter(line) is None
