"""A STOP comes back from the journal with the same automatic dots, times and score."""

from __future__ import annotations

from server.engine.board import BLACK, WHITE
from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from tests.hub.test_restore import RecordingPersistence, assert_restored, hub_with, state


def test_a_stop_replayed_from_the_journal_puts_the_same_dots() -> None:
    journal, timers = RecordingPersistence(), ManualTimers()
    before = hub_with(journal, timers)
    uid = before.open_table(parse_game_type("1010noT1F0.120.5"), "*Ala", "*Bob").uid
    before.move("ala123", str(uid), "ai")
    timers.advance(4)
    before.move("bob456", str(uid), "jj")
    timers.advance(9)
    before.stop("ala123", str(uid))  # blue's cross dots are ungrounded: red's dots ring them
    game = before.tables[uid].room.game
    placed = [move for move in game.moves if move.automatic]
    assert placed and all(move.player == WHITE for move in placed)
    assert game.score(WHITE) == 2 and game.stopped == {BLACK}
    expected = state(before, uid)

    after = Hub(timers=timers, persistence=RecordingPersistence(), clock=lambda: 1_700_000_000.0)
    after.restore(journal.entries, next_uid=uid + 1)

    assert_restored(state(after, uid), expected)
    again = after.tables[uid].room.game
    assert [(m.player, m.point, m.time_left) for m in again.moves] == [
        (m.player, m.point, m.time_left) for m in game.moves
    ]
    assert again.score(WHITE) == 2 and again.to_move == WHITE
