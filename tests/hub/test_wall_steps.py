"""The hub under a step of the wall clock (an NTP correction, a resumed virtual machine, an operator
fixing the date): what is written in wall time (chat times, the sessions' last polls) stays right."""

from __future__ import annotations

from tests.hub.test_sessions import START, Clock, StoreLike, started


def test_a_chat_line_said_after_the_wall_clock_stepped_back_takes_no_earlier_lines_id() -> None:
    """A chat line's id is its second and its number in that second, and the counter remembered only
    the last 8 seconds: after a step back of a minute, the second of an earlier line was numbered from
    0 again, and a moderator deleting the new line (`delmsg`) took the earlier one off the screens too."""
    store, clock = StoreLike(), Clock()
    hub = started(store, clock, clock.timers)
    hub.guest_login("ala123", "*Ala", "en")
    hub.guest_login("bob456", "*Bob", "en")
    hub.players["bob456"].role = "moderator"  # set on the account by an admin
    hub.chat_from("ala123", "0", "said at first")
    for n in range(10):  # a line every 10 s
        clock.now += 10
        hub.chat_from("bob456", "0", f"chat {n}")
    clock.step(-100)  # an operator sets the clock back, to the second of Ala's line
    hub.chat_from("ala123", "0", "rude words")
    first, *_, rude = hub.tables[0].chat.entries
    assert rude.time == first.time == int(START) and rude.chat_id != first.chat_id

    hub.chat_from("bob456", "delmsg", f"0.{rude.chat_id}")
    assert [entry.text for entry in hub.tables[0].chat.entries if entry.deleted] == ["rude words"]
