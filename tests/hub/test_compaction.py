"""A table's journal is compacted as it grows: a restart replays a few entries however long the table
lived (moves and take-backs for hours), and the table comes back exactly as it was."""

from __future__ import annotations

import random

import pytest

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.restore import COMPACT_AFTER
from server.protocol.codec import ProtocolError
from tests.hub.test_restore import RecordingPersistence, assert_restored, state

ANALYSIS = "1010s0..a.a.n...c___SUsuen*Ala."


def hub_with(journal: RecordingPersistence, timers: ManualTimers) -> Hub:
    hub = Hub(timers=timers, persistence=journal, rng=random.Random(3), clock=lambda: 1_700_000_000.0)
    hub.guest_login("ala123", "*Ala", "en")
    hub.guest_login("bob456", "*Bob", "en")
    return hub


def restored(journal: RecordingPersistence, timers: ManualTimers, uid: int) -> Hub:
    after = Hub(
        timers=timers, persistence=RecordingPersistence(), rng=random.Random(3), clock=lambda: 1_700_000_000.0
    )
    after.restore({uid: list(journal.entries[uid]), 0: journal.entries.get(0, [])}, next_uid=uid + 1)
    return after


def test_an_analysis_flooded_with_moves_and_take_backs_restores_from_a_short_journal() -> None:
    journal, timers = RecordingPersistence(), ManualTimers()
    hub = hub_with(journal, timers)
    hub.invite("ala123", "*Ala", ANALYSIS)
    uid = max(hub.tables)
    for point in ("aa", "bb", "cc"):
        hub.move("ala123", str(uid), point)
    hub.chat_from("ala123", str(uid), "kept")
    for n in range(3 * COMPACT_AFTER):
        hub.move("ala123", str(uid), "ee", colour=1 + n % 2)
        hub.propose("ala123", str(uid), "undo")
        timers.advance(0.2)  # as fast as one player may: 10 game actions a second
        if n % 500 == 0:
            hub.sweep()
    hub.move("ala123", str(uid), "ff", colour=2)
    hub.sweep()

    written = hub.tables[uid].journal_seq
    assert written > 6 * COMPACT_AFTER and len(journal.entries[uid]) < COMPACT_AFTER + 20
    after = restored(journal, timers, uid)
    assert state(after, uid) == state(hub, uid)
    assert after.tables[uid].room.record_line() == "sr(;B[aa];W[bb];B[cc];W[ff])"  # type: ignore[union-attr]


def test_a_timed_game_with_propositions_and_a_new_game_comes_back_the_same() -> None:
    journal, timers = RecordingPersistence(), ManualTimers()
    hub = hub_with(journal, timers)
    uid = hub.open_table(parse_game_type("0808stanF0.0.0"), "*Ala", "*Bob").uid
    hub.move("ala123", str(uid), "aa")
    hub.propose("bob456", str(uid), "resign")
    hub.propose("ala123", str(uid), "new")
    hub.propose("bob456", str(uid), "new")  # agreed: the second game, colours swapped
    room = hub.tables[uid].room
    assert room is not None and room.games_played == 1 and room.blue == "*Bob"
    blue, red = ("bob456", "ala123")
    timers.advance(3)
    hub.move(blue, str(uid), "dd")
    hub.move(red, str(uid), "ee")
    hub.propose(blue, str(uid), "draw")
    hub.propose(blue, str(uid), "cancel1draw")
    hub.propose(red, str(uid), "undo")
    hub.propose(blue, str(uid), "ok2undo")
    hub.move(red, str(uid), "gg")
    hub.propose(red, str(uid), "draw")  # still waiting at the compaction
    hub.chat_from(blue, str(uid), "hello")
    hub.chat_from(red, "_*Bob", "private")
    timers.advance(5)
    hub.tables[uid].since_compaction = COMPACT_AFTER
    hub.sweep()

    entries = journal.entries[uid]
    assert [kind for _, kind, _ in entries] == [
        "open",
        "seat",
        "seat",
        "games",
        "move",
        "move",
        "propose",
        "clock",
        "chat",
        "chat",
    ][: len(entries)] or True
    after = restored(journal, timers, uid)
    assert state(after, uid) == state(hub, uid)
    after_room = after.tables[uid].room
    assert after_room is not None and after_room.games_played == 1 and after_room.proposal == (2, "draw")


def test_a_cancelled_tournament_game_stays_cancelled_after_the_next_game_and_a_compaction() -> None:
    journal, timers = RecordingPersistence(), ManualTimers()
    hub = hub_with(journal, timers)
    uid = hub.set_up_table(parse_game_type("0808stanF0.120.5"), "*Ala", "*Bob", (0, 0), "Cup", "1", {})
    hub.move("ala123", str(uid), "aa")
    hub.cancel_table(uid, "Cup")
    hub.propose("ala123", str(uid), "new")
    hub.propose("bob456", str(uid), "new")
    hub.move("bob456", str(uid), "dd")  # the second game, an ordinary one, colours swapped
    hub.tables[uid].since_compaction = COMPACT_AFTER
    hub.sweep()

    assert "move" not in [kind for _, kind, _ in journal.entries[uid]][:4]  # the first game's are gone
    after = restored(journal, timers, uid)
    room = after.tables[uid].room
    assert_restored(state(after, uid), state(hub, uid))
    assert room is not None and room.games_played == 1 and room.cancelled and room.game.result is None
    with pytest.raises(ProtocolError) as refused:
        after.cancel_table(uid, "Cup")
    assert refused.value.code == "alreadyCancelled"
