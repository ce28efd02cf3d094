"""The seal on the members' messages (server/cluster/signing.py), without Redis: what opens, what is
dropped and why, and what the operator is told about it."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from server.cluster.signing import FRESH_SECONDS, Opener, Seal

SECRET = "a" * 64
OTHER = "b" * 64
LOBBY = "kropki:lobby"


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def payload(**fields: object) -> str:
    return json.dumps(fields, separators=(",", ":"))


async def test_a_sealed_message_opens_with_its_sender_and_payload(clock: Clock) -> None:
    seal, opener = Seal("kropki-b", SECRET, clock=clock), Opener("kropki-a", [SECRET], clock=clock)
    sealed = seal.seal(LOBBY, payload(n=1, l=[["pa*Cyd", False]]))

    opened = opener.open(LOBBY, sealed)

    assert opened is not None
    assert (opened.sender, opened.instance, opened.restarted) == ("kropki-b", seal.instance, False)
    assert opened.payload == {"n": 1, "l": [["pa*Cyd", False]]}
    assert Opener("kropki-b", [SECRET], clock=clock).open(LOBBY, sealed) is None  # its own: ignored
    assert set(opener.dropped.values()) == {0}


async def test_what_was_not_sealed_with_the_secret_is_dropped(clock: Clock) -> None:
    opener = Opener("kropki-a", [SECRET], clock=clock)
    genuine = Seal("kropki-b", SECRET, clock=clock).seal(LOBBY, payload(ask=True))
    mac, signed = genuine[3:67], genuine[68:]
    forged = [
        ('{"m":"kropki-b","i":"x","n":1,"l":[["pa*Eve",false]]}', "unsigned"),  # as before the seal
        ("", "unsigned"),
        ("k1 " + "0" * 64 + " kropki-b", "unsigned"),  # no header
        (Seal("kropki-b", OTHER, clock=clock).seal(LOBBY, payload(ask=True)), "signature"),  # other secret
        (genuine.replace('"ask":true', '"ask":false'), "signature"),  # the payload changed
        (genuine.replace("kropki-b", "kropki-c", 1), "signature"),  # another sender claimed
        (f"k1 {mac.upper()} {signed}", "unsigned"),
    ]
    for data, reason in forged:
        before = dict(opener.dropped)
        assert opener.open(LOBBY, data) is None, data
        assert opener.dropped[reason] == before[reason] + 1, (data, opener.dropped)
    # sealed for another channel: a message to one member cannot be replayed on another's
    assert opener.open("kropki:to:kropki-a", genuine) is None
    assert opener.dropped["signature"] == 4
    assert opener.open(LOBBY, genuine) is not None


async def test_a_message_replayed_or_too_old_is_dropped(clock: Clock) -> None:
    seal, opener = Seal("kropki-b", SECRET, clock=clock), Opener("kropki-a", [SECRET], clock=clock)
    first, second = seal.seal(LOBBY, payload(n=1)), seal.seal("kropki:to:kropki-a", payload(n=1))
    to_someone_else = seal.seal("kropki:to:kropki-c", payload(n=1))
    third = seal.seal(LOBBY, payload(n=2))
    assert opener.open(LOBBY, first) is not None
    assert opener.open("kropki:to:kropki-a", second) is not None  # one counter for every channel
    assert opener.open(LOBBY, first) is None and opener.open("kropki:to:kropki-a", second) is None
    assert opener.dropped["replay"] == 2
    assert to_someone_else  # never heard here: the counters seen have gaps
    assert opener.open(LOBBY, third) is not None

    clock.now += FRESH_SECONDS + 1
    late = Opener("kropki-d", [SECRET], clock=clock)  # never heard of kropki-b: only time stops it
    assert late.open(LOBBY, third) is None and late.dropped["stale"] == 1
    ahead = Seal("kropki-b", SECRET, clock=lambda: clock.now + FRESH_SECONDS + 1)
    assert late.open(LOBBY, ahead.seal(LOBBY, payload(n=1))) is None and late.dropped["stale"] == 2


async def test_what_was_sent_while_the_receiver_did_not_listen_stays_lost(clock: Clock) -> None:
    """Missed (before a start, during an outage), then published by someone else: not taken."""
    seal = Seal("kropki-b", SECRET, clock=clock)
    before_the_start = seal.seal(LOBBY, payload(n=1))
    clock.now += 1
    opener = Opener("kropki-a", [SECRET], clock=clock)
    assert opener.open(LOBBY, seal.seal(LOBBY, payload(n=2))) is not None
    missed = seal.seal(LOBBY, payload(n=3))  # while kropki-a was cut off
    clock.now += 1
    opener.listening()  # back
    assert opener.open(LOBBY, missed) is None and opener.open(LOBBY, before_the_start) is None
    assert opener.dropped["stale"] == 2
    assert opener.open(LOBBY, seal.seal(LOBBY, payload(n=4))) is not None


async def test_a_new_instance_is_a_restart_and_an_earlier_one_replayed_is_not(clock: Clock) -> None:
    opener = Opener("kropki-a", [SECRET], clock=clock)
    old = Seal("kropki-b", SECRET, clock=clock)
    recorded = old.seal(LOBBY, payload(n=7))
    assert opener.open(LOBBY, old.seal(LOBBY, payload(n=1))) is not None
    clock.now += 5  # the member restarts
    new = Seal("kropki-b", SECRET, clock=clock)
    opened = opener.open(LOBBY, new.seal(LOBBY, payload(n=1)))
    assert opened is not None and opened.restarted and opened.instance == new.instance

    # the earlier life's message, still fresh, replayed: dropped, never taken for another restart
    assert opener.open(LOBBY, recorded) is None
    assert opener.dropped["replay"] == 1
    again = opener.open(LOBBY, new.seal(LOBBY, payload(n=2)))
    assert again is not None and not again.restarted


def restarted_behind(clock: Clock) -> Seal:
    """kropki-b started again 2 s after its previous start, on a machine whose clock is 5 s behind."""
    clock.now += 2
    return Seal("kropki-b", SECRET, clock=lambda: clock.now - 5)


async def test_a_member_that_said_goodbye_is_heard_again_restarted_on_a_clock_behind(clock: Clock) -> None:
    opener = Opener("kropki-a", [SECRET], clock=clock)
    clock.now += 10  # kropki-a has listened for a while
    old = Seal("kropki-b", SECRET, clock=clock)
    assert opener.open(LOBBY, old.seal(LOBBY, payload(n=1))) is not None
    goodbye = old.seal(LOBBY, payload(bye=True))
    behind = restarted_behind(clock)
    early = behind.seal(LOBBY, payload(n=1))
    assert opener.open(LOBBY, early) is None and opener.dropped["replay"] == 1  # as an earlier life

    assert opener.open(LOBBY, goodbye) is not None
    opener.retire("kropki-b")
    assert opener.open(LOBBY, old.seal(LOBBY, payload(n=2))) is None  # its goodbye was its last word
    opened = opener.open(LOBBY, behind.seal(LOBBY, payload(n=2)))
    assert opened is not None and opened.instance == behind.instance
    assert opener.dropped["replay"] == 2


async def test_a_member_not_seen_alive_is_heard_again_as_it_was_or_restarted(clock: Clock) -> None:
    """Its announcement expired: it died (its next life may start on a clock behind), or it was only
    cut off from Redis for a while (it comes back as it was): both are heard; a replaced one is not."""
    opener = Opener("kropki-a", [SECRET], clock=clock)
    clock.now += 10
    old = Seal("kropki-b", SECRET, clock=clock)
    assert opener.open(LOBBY, old.seal(LOBBY, payload(n=1))) is not None
    opener.lapsed("kropki-b")
    assert opener.open(LOBBY, old.seal(LOBBY, payload(n=2))) is not None  # back as it was
    opener.lapsed("kropki-b")
    behind = restarted_behind(clock)
    opened = opener.open(LOBBY, behind.seal(LOBBY, payload(n=1)))
    assert opened is not None and opened.restarted
    assert opener.open(LOBBY, old.seal(LOBBY, payload(n=3))) is None  # replaced: over
    assert opener.dropped["replay"] == 1


async def test_two_secrets_while_the_secret_changes(clock: Clock) -> None:
    """A member with the new secret first and the old one second opens both and signs with the new."""
    rotating = Opener("kropki-a", [OTHER, SECRET], clock=clock)
    assert rotating.open(LOBBY, Seal("kropki-b", SECRET, clock=clock).seal(LOBBY, payload(n=1)))
    assert rotating.open(LOBBY, Seal("kropki-c", OTHER, clock=clock).seal(LOBBY, payload(n=1)))
    assert (
        Opener("kropki-d", [SECRET], clock=clock).open(
            LOBBY, Seal("kropki-a", OTHER, clock=clock).seal(LOBBY, payload(n=1))
        )
        is None
    )


async def test_a_signed_message_that_is_not_json_is_malformed(clock: Clock) -> None:
    opener = Opener("kropki-a", [SECRET], clock=clock)
    assert opener.open(LOBBY, Seal("kropki-b", SECRET, clock=clock).seal(LOBBY, "{not json")) is None
    assert opener.dropped["malformed"] == 1


def test_no_opener_without_a_secret() -> None:
    with pytest.raises(ValueError, match="needs the cluster's secret"):
        Opener("kropki-a", [])


async def test_drops_are_logged_at_most_once_per_interval_with_the_count_and_never_the_message(
    clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    opener = Opener("kropki-a", [SECRET], clock=clock, log_every=0.3)
    stranger = Seal("kropki-b", OTHER, clock=clock)
    with caplog.at_level(logging.WARNING, logger="server.cluster.signing"):
        for _ in range(5):
            opener.open(LOBBY, stranger.seal(LOBBY, payload(text="the secret plan")))
        opener.open(LOBBY, '{"text": "the secret plan"}')
        assert len(caplog.records) == 1  # the first at once
        await asyncio.sleep(0.5)  # the rest when the interval is over, counted
        opener.close()

    first, rest = (record.getMessage() for record in caplog.records)
    assert "signature=1 claimed_senders=kropki-b" in first
    assert "unsigned=1 signature=4 claimed_senders=kropki-b" in rest
    assert "same cluster secret" in first
    assert all("secret plan" not in record.getMessage() for record in caplog.records)
    assert opener.dropped["signature"] == 5 and opener.dropped["unsigned"] == 1
