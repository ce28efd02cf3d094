"""Gifts of time (`dodajeCzas`, right `T`): as many as a player likes, but never a clock above MAX_CLOCK.

Before, a gift had no overall bound: 3,600 s at a time and 10 game actions a second lifted a clock past
2^31 s in about 16 hours, and MultiPoints, which reads the `f` line's seconds with Java's
Integer.parseInt, then dropped every clock line of that table."""

from __future__ import annotations

import random

import pytest

from server.hub.clock import MAX_CLOCK, MAX_GIFT, Clock, ManualTimers
from server.hub.hub import Hub
from server.hub.model import Origin
from server.protocol.codec import ProtocolError

TIMED = "0808s0..a.F.a.60.5._SRATP_sratp."  # 8x8, free, the inviter blue, 60 s + 5 s, time may be added
JAVA_INT_MAX = 2**31 - 1  # what MultiPoints' Integer.parseInt takes


def a_timed_game() -> tuple[Hub, str]:
    """*Ala (blue, on move) and *Bob at a timed table: *Ala gives, *Bob's clock stands still."""
    hub = Hub(timers=ManualTimers(), rng=random.Random(3))
    for secret, nick in [("ala1", "*Ala"), ("bob1", "*Bob")]:
        hub.guest_login(secret, nick, "en", Origin("198.51.100.7", False, "198.51.100.0/24"))
    hub.invite("ala1", "*Bob", TIMED)
    hub.answer_invitation("bob1", "a")
    (uid,) = [table.uid for table in hub.tables.values() if table.room is not None]
    return hub, str(uid)


def test_a_gift_that_would_lift_the_clock_above_the_cap_is_refused_and_changes_nothing() -> None:
    hub, uid = a_timed_game()
    room = hub.tables[int(uid)].room
    assert room is not None
    gifts = (MAX_CLOCK - 60) // MAX_GIFT
    for _ in range(gifts):
        hub.give_time("ala1", uid, str(MAX_GIFT))
    before = room.flags()
    assert before == f"f1_60.{60 + gifts * MAX_GIFT}"

    with pytest.raises(ProtocolError) as refused:
        hub.give_time("ala1", uid, str(MAX_GIFT))

    room_left = MAX_CLOCK - 60 - gifts * MAX_GIFT
    assert refused.value.code == "clockFull"
    assert str(refused.value) == (
        f"A gift may not lift the opponent's clock above {MAX_CLOCK} seconds (25 hours); "
        f"at most {room_left} can be added now."
    )
    assert room.flags() == before
    hub.give_time("ala1", uid, str(room_left))  # up to the cap exactly
    assert room.flags() == f"f1_60.{MAX_CLOCK}"
    with pytest.raises(ProtocolError, match="at most 0 can be added now"):
        hub.give_time("ala1", uid, "1")


def test_no_clock_holds_more_than_the_cap_even_from_a_journal_written_before_it() -> None:
    """A journal of the unbounded days may hold 3e9 s; it comes back at the cap, which Java reads."""
    clock = Clock(ManualTimers(), 60, 5, lambda player: None)
    clock.set_state([60.0, 3e9, False, False, 0.0, 0.0])
    assert clock.left(2) == MAX_CLOCK <= JAVA_INT_MAX
    assert clock.left(1) == 60
