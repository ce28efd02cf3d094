"""Event logs: numbering, the bounded history, and reading after a number."""

import random

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


def test_a_transcript_is_the_logs_lines_joined_as_a_reply_joins_them() -> None:
    """Transcript.since is a slice of text kept up to date: for every msgNo the log covers it must be
    what joining the log's lines gives (empty lines left out; subscription lines only when asked),
    through events dropped from the log, read or unread."""
    rng = random.Random(19)
    log = EventLog(history=50)
    number = 0
    for round_ in range(400):
        for _ in range(rng.choice((0, 1, 1, 2, 5, 80))):  # 80: more than the log keeps, unread
            number += rng.choice((1, 1, 3))
            line = rng.choice(("", "pa*A", "i*A..F.en", "x1.2.-.", f"cr{number}_1.*B.1.hi"))
            log.post(number, 0, line, b_only=rng.random() < 0.3)
        for with_b_only in (False, True):
            for seen in {log.dropped, log.last, max(log.dropped, log.last - rng.randint(0, 60))}:
                expected = "/".join(
                    line for _, _, line, b_only in log.since(seen) if line and (with_b_only or not b_only)
                )
                assert log.transcript(with_b_only).since(seen) == expected, (round_, seen, with_b_only)
