"""A guest's seats and private chats belong to the session, not to the nick: when the session is over,
whoever takes the nick next is somebody else and gets none of it. A registered player's belong to the
account, whichever session they log in with."""

from __future__ import annotations

import random

import pytest

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.persistence import Account
from server.hub.sessions import POLL_TIMEOUT
from server.protocol.codec import ProtocolError, parse_commands
from tests.hub.test_restore import RecordingPersistence

START = 1_700_000_000.0


class Clock:
    """The wall clock, with the hub's monotonic timers moving along with it (as they do unless the wall
    clock is stepped: `step` moves the wall clock alone)."""

    def __init__(self) -> None:
        self.timers = ManualTimers()
        self._now = START

    def __call__(self) -> float:
        return self._now

    @property
    def now(self) -> float:
        return self._now

    @now.setter
    def now(self, value: float) -> None:
        self.timers.advance(value - self._now)
        self._now = value

    def step(self, seconds: float) -> None:
        self._now += seconds


def game(hub: Hub) -> int:
    """*Ala (blue, id ala123) against *Bob (red, bob456), with one move each and a private word."""
    hub.guest_login("ala123", "*Ala", "en")
    hub.guest_login("bob456", "*Bob", "en")
    hub.invite("ala123", "*Bob", "0808stanF0.0.0")
    hub.answer_invitation("bob456", "a")
    uid = max(hub.tables)
    assert hub.tables[uid].room.blue == "*Ala"  # type: ignore[union-attr]
    hub.move("ala123", str(uid), "aa")
    hub.move("bob456", str(uid), "hh")
    hub.chat_from("ala123", "_*Bob", "my plan")
    hub.chat_from("bob456", "_*Ala", "good luck")
    return uid


def hub_with(persistence: RecordingPersistence | None = None, clock: Clock | None = None) -> Hub:
    clock = clock or Clock()
    return Hub(
        timers=clock.timers,
        persistence=persistence or RecordingPersistence(),
        rng=random.Random(1),
        clock=clock,
    )


@pytest.mark.parametrize("ending", ["logout", "timeout"])
def test_a_stranger_with_a_gone_guests_nick_gets_neither_the_seat_nor_the_chats(ending: str) -> None:
    clock = Clock()
    hub = hub_with(clock=clock)
    uid = game(hub)
    if ending == "logout":
        assert hub.logout("ala123")
    else:
        clock.now += POLL_TIMEOUT + 1
        hub.receive("bob456", [])  # Bob polls on
        hub.sweep()
    assert "ala123" not in hub.players

    hub.guest_login("eve999", "*Ala", "en")  # a stranger takes the nick
    eve = hub.players["eve999"]
    assert uid not in eve.tables  # not sat back at Ala's game
    with pytest.raises(ProtocolError) as refused:
        hub.propose("eve999", str(uid), "resign")
    assert refused.value.code == "notYourSeat"
    with pytest.raises(ProtocolError):
        hub.move("eve999", str(uid), "bb")
    hub.receive("eve999", parse_commands(f"b1.{uid}./s2.{uid}.cc/u3.{uid}.resign"))  # as a spectator
    room = hub.tables[uid].room
    assert room is not None and room.game.result is None and room.record_line() == "sr(;B[aa];W[hh])"
    assert hub.tables[uid].seat_of(eve) == 0
    hub.chat_from("eve999", str(uid), "hi")
    assert hub.tables[uid].chat.lines()[-1].split(".")[2] == "1"  # a spectator's nickType, not B1

    talk = hub.private.get("*Ala", "*Bob")
    assert talk is not None and talk.visible_to("*Ala") == []  # the earlier private chat is not hers
    assert [entry.text for entry in talk.visible_to("*Bob")] == ["my plan", "good luck"]
    reply = hub.reply("eve999", 0, with_subscriptions=True)
    assert "my plan" not in reply and "good luck" not in reply


def test_the_same_session_logging_in_again_sits_back_at_its_game() -> None:
    hub = hub_with()
    uid = game(hub)
    hub.guest_login("ala123", "*Ala", "en")  # a reloaded client, same id

    assert uid in hub.players["ala123"].tables
    hub.move("ala123", str(uid), "bb")
    assert hub.tables[uid].room.record_line() == "sr(;B[aa];W[hh];B[bb])"  # type: ignore[union-attr]


def test_a_registered_players_seat_is_the_accounts_in_any_session() -> None:
    hub = hub_with()
    ala = Account("Ala", 1500, 0, 0, 0)
    hub.login("ala-first-1", ala)
    hub.guest_login("bob456", "*Bob", "en")
    hub.invite("ala-first-1", "*Bob", "0808stanF0.0.0")
    hub.answer_invitation("bob456", "a")
    uid = max(hub.tables)
    assert hub.logout("ala-first-1")

    hub.login("ala-second-2", ala)  # she logs in again, from another device

    assert uid in hub.players["ala-second-2"].tables
    blue = hub.tables[uid].room.blue  # type: ignore[union-attr]
    hub.move("ala-second-2" if blue == "Ala" else "bob456", str(uid), "aa")
    assert hub.tables[uid].room.record_line() == "sr(;B[aa])"  # type: ignore[union-attr]


def test_seats_stay_the_sessions_after_a_restart() -> None:
    journal = RecordingPersistence()
    before = hub_with(journal)
    uid = game(before)

    after = hub_with(RecordingPersistence())
    after.restore(journal.entries, next_uid=uid + 1)
    after.guest_login("eve999", "*Ala", "en")  # the stranger is first after the restart

    assert uid not in after.players["eve999"].tables
    with pytest.raises(ProtocolError):
        after.propose("eve999", str(uid), "resign")
    assert after.logout("eve999")
    after.guest_login("ala123", "*Ala", "en")  # the real Ala, with her id
    after.move("ala123", str(uid), "bb")
    assert after.tables[uid].room.record_line() == "sr(;B[aa];W[hh];B[bb])"  # type: ignore[union-attr]


def test_a_set_up_tables_guest_seat_goes_to_the_first_session_that_sits_in_it() -> None:
    hub = hub_with()
    uid = hub.set_up_table(parse_game_type("0808stanF0.0.0"), "*Ala", "*Bob", (0, 0), "Cup", "1", {})
    hub.guest_login("ala123", "*Ala", "en")
    hub.guest_login("bob456", "*Bob", "en")
    blue = "ala123" if hub.tables[uid].room.blue == "*Ala" else "bob456"  # type: ignore[union-attr]
    hub.move(blue, str(uid), "aa")
    assert hub.logout("ala123")
    hub.guest_login("eve999", "*Ala", "en")

    assert uid not in hub.players["eve999"].tables
