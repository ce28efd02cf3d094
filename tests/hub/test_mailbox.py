"""Event logs: numbering, the bounded history, and reading after a number."""

from server.hub.mailbox import Counter, EventLog


def test_events_are_read_after_a_number_oldest_first() -> None:
    counter = Counter()
    log = EventLog(history=10)
    log.post(counter.next(), 0, "pa*Ala")
    counter.next()  # an event in another log
    log.post(counter.next(), 0, "b*Ala.0", b_only=True)
    assert counter.last == 3 and log.last == 3
    assert log.since(0) == [(1, 0, "pa*Ala", False), (3, 0, "b*Ala.0", True)]
    assert log.since(1) == log.since(2) == [(3, 0, "b*Ala.0", True)]
    assert log.since(3) == [] and log.covers(0)


def test_the_history_is_bounded_and_an_old_number_is_not_covered() -> None:
    log = EventLog(history=3)
    for number in range(1, 6):
        log.post(number, 7, f"ca{number}")
    assert log.covers(2) and not log.covers(1), "events 3..5 are kept: a reader at 2 misses nothing"
    assert [line for _, _, line, _ in log.since(2)] == ["ca3", "ca4", "ca5"]
    assert EventLog(history=3).last == 0
