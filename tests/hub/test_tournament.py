"""Tournament tables in the hub, on a clock the test drives: the sayHi timeline of docs/tournaments.md,
no-shows, who is blue, and what happens after the tournament game."""

from __future__ import annotations

import random

import pytest

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.games import ABSENT_PLAYERS_KEPT, IDLE_TABLE_KEPT, TOURNAMENT_TABLE_KEPT
from server.hub.hub import Hub
from server.hub.restore import RESTART_GRACE
from server.hub.room import Room
from server.protocol.codec import ProtocolError
from tests.hub.test_restore import RecordingPersistence

TIMED = parse_game_type("0808stanF0.120.5")  # start 120 s, 5 s added per move


def hub_and_timers() -> tuple[Hub, ManualTimers]:
    timers = ManualTimers()
    hub = Hub(timers=timers, rng=random.Random(3), clock=lambda: 1_700_000_000.0)
    return hub, timers


def room_of(hub: Hub, uid: int) -> Room:
    room = hub.tables[uid].room
    assert room is not None
    return room


def test_the_say_hi_timeline_of_the_docs() -> None:
    hub, timers = hub_and_timers()
    hub.guest_login("ala123", "*Ala", "en")
    hub.guest_login("bob456", "*Bob", "en")
    uid = hub.set_up_table(TIMED, "*Ala", "*Bob", (60, 60), "Cup", "1", {})
    room = room_of(hub, uid)
    assert (room.blue, room.red) == ("*Ala", "*Bob")  # free game: pl1 is blue

    assert room.flags() == "f1_120.120.g60"  # t=0: the sayHi shown, for clients to count down first
    timers.advance(50)  # t=50: blue still inside the 60 s of sayHi, the clock untouched
    assert room.flags() == "f1_120.120.g10"
    hub.move("ala123", str(uid), "aa")  # blue's first move within sayHi: 120 + 5, capped at 125
    assert room.flags() == "f2_125.120.g60"  # red's sayHi, untouched until red is on move

    timers.advance(80)  # t=130: red used the 60 s of sayHi and 20 s of the clock
    assert room.flags() == "f2_125.100"
    hub.move("bob456", str(uid), "hh")  # 100 + 5
    assert room.flags() == "f1_125.105"

    timers.advance(10)  # t=140: no more sayHi for blue: the clock runs at once
    assert room.flags() == "f1_115.105"
    hub.move("ala123", str(uid), "ab")
    assert room.flags() == "f2_120.105"
    assert room.game.result is None


def test_a_player_who_never_moves_forfeits_and_a_table_nobody_came_to_is_void() -> None:
    hub, timers = hub_and_timers()
    hub.guest_login("bob456", "*Bob", "en")
    came = hub.set_up_table(TIMED, "*Ala", "*Bob", (60, 60), "Cup", "1", {})  # Ala never comes
    nobody = hub.set_up_table(TIMED, "*Cid", "*Dan", (60, 60), "Cup", "1", {})
    moved = hub.set_up_table(TIMED, "*Bob", "*Eve", (0, 30), "Cup", "1", {})
    hub.move("bob456", str(moved), "aa")  # Eve never comes

    timers.advance(179)
    assert room_of(hub, came).game.result is None  # 60 s of sayHi + 120 s of clock
    timers.advance(2)

    assert str(room_of(hub, came).game.result) == "W+F"  # Bob was at the table: Ala forfeits
    assert str(room_of(hub, nobody).game.result) == "Void"
    assert str(room_of(hub, moved).game.result) == "B+F"  # Eve: 30 s of sayHi + 120 s, long gone
    texts = [entry.text for entry in hub.tables[nobody].chat.entries]
    assert "Nobody showed up; the game was cancelled." in texts


def test_an_r_game_makes_the_lower_rated_player_blue() -> None:
    hub, _ = hub_and_timers()
    ranked = parse_game_type("0808stanR0.120.5")

    lower_second = hub.set_up_table(ranked, "Ann", "Ben", (0, 0), None, None, {"Ann": 1600, "Ben": 1500})
    tie = hub.set_up_table(ranked, "Ann", "Ben", (0, 0), None, None, {"Ann": 1500, "Ben": 1500})
    inviter_starts = hub.set_up_table(
        parse_game_type("0808stanr0.120.5"), "Ann", "Ben", (0, 0), None, None, {"Ann": 1600, "Ben": 1500}
    )

    assert room_of(hub, lower_second).blue == "Ben"
    assert room_of(hub, tie).blue == "Ann"
    assert room_of(hub, inviter_starts).blue == "Ann"


@pytest.mark.parametrize(
    ("first", "second", "say_hi", "code"),
    [
        ("*Ala", "*ala", (0, 0), "samePlayer"),
        ("*Ala", "*Bob", (0, 7201), "badSayHiTimes"),
        ("*Ala", "Bad..nick", (0, 0), "badNick"),
    ],
)
def test_bad_set_ups_create_nothing(first: str, second: str, say_hi: tuple[int, int], code: str) -> None:
    hub, _ = hub_and_timers()

    with pytest.raises(ProtocolError) as refused:
        hub.set_up_table(TIMED, first, second, say_hi, "Cup", "1", {})

    assert refused.value.code == code
    assert list(hub.tables) == [0]
    assert hub.open_table(TIMED, "*Ala", "*Bob").uid == 1  # no table number was used up


def test_an_unfinished_tournament_table_stays_two_hours_and_only_its_first_game_counts() -> None:
    hub, timers = hub_and_timers()
    untimed = parse_game_type("0808stanF0.0.0")
    uid = hub.set_up_table(untimed, "*Ala", "*Bob", (0, 0), "Cup", "2 (final)", {})
    timers.advance(ABSENT_PLAYERS_KEPT + IDLE_TABLE_KEPT + 60)
    hub.sweep()
    assert uid in hub.tables  # an ordinary table would be gone by now

    hub.guest_login("ala123", "*Ala", "en")
    hub.guest_login("bob456", "*Bob", "en")
    hub.move("ala123", str(uid), "aa")
    hub.propose("bob456", str(uid), "resign")
    room = room_of(hub, uid)
    first = room.record("2026-11-22")
    assert (first.event, first.round, first.result) == ("Cup", "2 (final)", "B+R")
    hub.propose("ala123", str(uid), "new")
    hub.propose("bob456", str(uid), "new")

    assert not room.tournament_game
    second = room.record("2026-11-22")
    assert (second.event, second.round) == (None, None)
    assert TOURNAMENT_TABLE_KEPT == 2 * 3600


@pytest.mark.parametrize("compacted", ["never", "in play", "after the end"])
def test_a_player_whose_only_move_was_taken_back_loses_on_time_not_as_a_no_show(compacted: str) -> None:
    """A forfeit is for a player who never moved (docs/tournaments.md), and its loser is withdrawn from
    a swiss as a no-show: a move taken back was still made. It was judged by the moves left on the board,
    so running out of time after one's only move was taken back was `W+F`, "did not show up"."""
    journal, timers = RecordingPersistence(), ManualTimers()
    hub = Hub(timers=timers, persistence=journal, rng=random.Random(3), clock=lambda: 1_700_000_000.0)
    hub.guest_login("ala123", "*Ala", "en")
    hub.guest_login("bob456", "*Bob", "en")
    uid = hub.set_up_table(TIMED, "*Ala", "*Bob", (60, 60), "Cup", "1", {})
    hub.move("ala123", str(uid), "aa")
    hub.propose("ala123", str(uid), "undo")
    hub.propose("bob456", str(uid), "ok1undo")
    assert room_of(hub, uid).flags() == "f1_125.120"  # her sayHi was spent on the move
    if compacted == "in play":  # the move and its take-back leave the journal; that she moved must not
        hub = _compacted_and_restored(hub, journal, timers, uid)
        timers.advance(RESTART_GRACE)
    timers.advance(126)
    if compacted == "after the end":
        hub = _compacted_and_restored(hub, journal, timers, uid)

    assert str(room_of(hub, uid).game.result) == "W+T"


def _compacted_and_restored(hub: Hub, journal: RecordingPersistence, timers: ManualTimers, uid: int) -> Hub:
    hub.restorer.compact(hub.tables[uid])
    after = Hub(timers=timers, persistence=RecordingPersistence(), clock=lambda: 1_700_000_000.0)
    after.restore({uid: list(journal.entries[uid])}, next_uid=uid + 1)
    return after


def test_a_cancellation_after_the_deadline_finds_the_game_lost_on_time() -> None:
    """As every action that reaches a game after its deadline, before a busy loop ran the flag's timer
    (docs/protocol.md, "Clocks"): the organiser's cancellation made the loss on time `Void`."""
    hub, timers = hub_and_timers()
    hub.guest_login("ala123", "*Ala", "en")
    hub.guest_login("bob456", "*Bob", "en")
    uid = hub.set_up_table(TIMED, "*Ala", "*Bob", (0, 0), "Cup", "1", {})
    hub.move("ala123", str(uid), "aa")
    hub.move("bob456", str(uid), "hh")
    timers.time += 126  # blue's 125 s are gone; the timer is due but has not run

    with pytest.raises(ProtocolError) as refused:
        hub.cancel_table(uid, "Cup")

    assert refused.value.code == "gameOver"
    room = room_of(hub, uid)
    assert (str(room.game.result), room.cancelled) == ("W+T", False)
