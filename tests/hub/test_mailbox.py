"""Mailboxes: numbering, the bounded history, subscription lines, and the long-poll wake-up."""

import asyncio

from server.hub.mailbox import Mailbox


def test_events_are_numbered_and_read_after_a_number() -> None:
    box = Mailbox(history=10)
    assert [box.post(0, "pa*Ala"), box.post(17, "sa;B[aa]"), box.post(0, "b*Ala.0", b_only=True)] == [1, 2, 3]
    assert box.since(0) == [(0, "pa*Ala", False), (17, "sa;B[aa]", False), (0, "b*Ala.0", True)]
    assert box.since(2) == [(0, "b*Ala.0", True)]
    assert box.since(3) == [] and box.covers(3)


def test_the_history_is_bounded_and_an_old_number_is_not_covered() -> None:
    box = Mailbox(history=3)
    for i in range(5):
        box.post(0, f"ca{i}")
    assert box.covers(2) and not box.covers(1), "events 3..5 are kept: a reader at 2 misses nothing"
    assert [line for _, line, _ in box.since(2)] == ["ca2", "ca3", "ca4"]
    assert not box.covers(6), "a number from the future (a server restart) is not covered either"


async def test_a_waiting_poll_wakes_on_the_next_event() -> None:
    box = Mailbox()
    waiting = asyncio.create_task(box.wait(0, 5))
    await asyncio.sleep(0.01)
    assert not waiting.done()
    box.post(0, "ca")
    await asyncio.wait_for(waiting, 1)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await box.wait(1, 0.05)
    assert loop.time() - started >= 0.04
