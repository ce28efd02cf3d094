"""What a report quotes (server/hub/reported.py), on the hub itself: the lines around a reported line in
the lobby, another member's lobby lines among this member's, a mirrored table's lines as its owner sent
them, and only what the reporter was shown."""

from __future__ import annotations

import random

from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.mirrors import Mirror
from server.hub.reported import LINES_AFTER, LINES_BEFORE, Quoted


def lobby_hub() -> tuple[Hub, list[float]]:
    now = [1_700_000_000.0]
    hub = Hub(timers=ManualTimers(), rng=random.Random(1), clock=lambda: now[0])
    for secret, nick in (("ala123", "*Ala"), ("bob456", "*Bob")):
        hub.guest_login(secret, nick, "en")
    return hub, now


def test_a_reported_line_comes_with_the_lines_before_and_after_it() -> None:
    hub, now = lobby_hub()
    for number in range(16):  # within the chat's limit of lines a minute
        now[0] += 1
        hub.chat_from("bob456", "0", f"line {number}")
    reported = next(e for e in hub.tables[0].chat.entries if e.text == "line 8")
    quoted = hub.quote_line(hub.players["ala123"], "0", reported.chat_id)
    assert quoted is not None
    assert [q.text for q in quoted] == [f"line {n}" for n in range(8 - LINES_BEFORE, 9 + LINES_AFTER)]
    assert [q.text for q in quoted if q.reported] == ["line 8"]
    first = next(e for e in hub.tables[0].chat.entries if e.text == "line 0")
    assert [q.text for q in hub.quote_line(hub.players["ala123"], "0", first.chat_id) or []][:2] == [
        "line 0",
        "line 1",
    ]
    assert hub.quote_line(hub.players["ala123"], "0", "1_0") is None
    assert hub.quote_line(hub.players["ala123"], "5", reported.chat_id) is None  # not at table 5


def test_another_members_lobby_lines_are_quoted_in_time_order_and_a_deletion_is_kept() -> None:
    hub, now = lobby_hub()
    now[0] = 1000
    hub.chat_from("bob456", "0", "here first")
    hub.remote_lobby.take("kropki-b", "ca1001_0.*Cyd.1.there &#45; back")
    now[0] = 1002
    hub.chat_from("bob456", "0", "here again")
    hub.remote_lobby.take("kropki-b", "ca1003_0.*Cyd.1.BUY GOLD")
    hub.remote_lobby.take("kropki-b", "cd1003_0")

    quoted = hub.quote_line(hub.players["ala123"], "0", "1001_0")
    assert quoted == [
        Quoted("1000_0", "*Bob", "here first"),
        Quoted("1001_0", "*Cyd", "there - back", reported=True),
        Quoted("1002_0", "*Bob", "here again"),
        Quoted("1003_0", "*Cyd", "", deleted=True),
    ]
    assert [q.text for q in hub.quote_player(hub.players["ala123"], "*Cyd")] == ["there - back", ""]


def test_a_mirrored_tables_lines_are_quoted_for_the_people_here_at_it() -> None:
    hub, _ = lobby_hub()
    ala = hub.players["ala123"]
    hub.mirrors.by_uid[17] = Mirror(
        17,
        "kropki-b",
        state=["x17.1.-.", "cr1000_0.*Dan.B3.good luck", "cr1000_1.*Cyd.W1.you too"],
        tail=["ca1001_0.*Dan.B3.idiot", "cd1001_0", "ca1002_0..stop1.*Dan pressed STOP."],
    )
    assert hub.quote_line(ala, "17", "1000_1") is None  # Ala is not at the table
    ala.tables.append(17)
    assert hub.quote_line(ala, "17", "1001_0") == [
        Quoted("1000_0", "*Dan", "good luck"),
        Quoted("1000_1", "*Cyd", "you too"),
        Quoted("1001_0", "*Dan", "idiot", deleted=True, reported=True),
        Quoted("1002_0", "", "*Dan pressed STOP."),
    ]
