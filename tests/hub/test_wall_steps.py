"""The hub under a step of the wall clock (an NTP correction, a resumed virtual machine, an operator
fixing the date): what is written in wall time (chat times, the sessions' last polls) stays right."""

from __future__ import annotations

import pytest

from server.hub.saved import SWEEP_EVERY
from server.hub.sessions import POLL_TIMEOUT
from tests.hub.test_acknowledged import Link
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


@pytest.mark.parametrize("step", [3600.0, -3600.0])
def test_a_restart_after_a_step_of_the_wall_clock_gives_a_quiet_session_what_was_left_of_its_minute(
    step: float,
) -> None:
    """A quiet session's last poll is written once, in wall time, when it goes quiet, and each heartbeat
    writes its own wall time: between them a step ahead of an hour made the session look an hour quiet
    at the next restart (it ended, though its player had polled 20 s before), and a step back gave it
    a whole minute again."""
    store, clock = StoreLike(), Clock()
    before = started(store, clock, clock.timers)
    before.guest_login("ala123", "*Ala", "en")
    clock.now += SWEEP_EVERY * 2
    before.sweep()  # Ala has not polled for 10 s: her last poll is written
    clock.step(step)
    clock.now += SWEEP_EVERY * 2
    before.sweep()
    clock.now += 1  # a crash, 21 s after her last poll

    after = started(store, clock, clock.timers)
    assert "*ala" in after.by_nick, "she has 40 s left"
    clock.now += POLL_TIMEOUT - 21 - SWEEP_EVERY
    after.sweep()
    assert "*ala" in after.by_nick
    clock.now += 2 * SWEEP_EVERY
    after.sweep()
    assert "*ala" not in after.by_nick, "and no more"


def test_a_lobby_line_after_the_wall_clock_stepped_back_takes_no_other_members_lines_id() -> None:
    """The lobby's lines of other members are kept in their parts, not in this member's room: after a
    step back of member a's clock to the second of a line said on member b, a line on a was numbered
    from 0 again, and had the id of b's line (a report of one quoted the other, and a `cd` of one took
    both off the screens). The test failed before the fix."""
    link = Link()
    a, b = link.hubs["a"], link.hubs["b"]
    now = {"a": START, "b": START}
    a.ctx.clock, b.ctx.clock = (lambda: now["a"]), (lambda: now["b"])
    a.guest_login("alaAla11", "*Ala", "en")
    b.guest_login("bobBob22", "*Bob", "en")
    link.deliver()
    b.chat_from("bobBob22", "0", "said at first")
    for n in range(10):  # a line every 10 s
        now["a"] += 10
        now["b"] += 10
        link.timers.advance(10)
        b.chat_from("bobBob22", "0", f"chat {n}")
        link.deliver()
    now["a"] = START  # an operator sets member a's clock back, to the second of Bob's first line
    a.chat_from("alaAla11", "0", "rude words")
    link.deliver()
    [bobs] = [entry for entry in b.tables[0].chat.entries if entry.text == "said at first"]
    [rude] = a.tables[0].chat.entries
    assert rude.time == bobs.time == int(START) and rude.chat_id != bobs.chat_id
