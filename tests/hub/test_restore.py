"""A hub rebuilt from another hub's journal has the same tables: moves, clocks, proposition, chat."""

from __future__ import annotations

import random
from typing import Any

from server.engine.gametype import parse_game_type
from server.hub.chats import PRIVATE_JOURNAL
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.persistence import Account, ArchiveDone, FinishedGame, MemoryPersistence, SavedSession
from server.hub.restore import RESTART_GRACE

Journal = dict[int, list[tuple[int, str, dict[str, Any]]]]


class RecordingPersistence(MemoryPersistence):
    """Keeps the journal the way the store would hand it back at start-up."""

    def __init__(self) -> None:
        super().__init__()
        self.entries: Journal = {}
        self.closed: list[int] = []
        self.set_aside: list[tuple[int, int, str]] = []
        self.sessions: dict[str, SavedSession] = {}  # id_hmac -> the session's row as last written

    def session_saved(self, session: SavedSession) -> None:
        self.sessions[session.id_hmac] = session

    def session_ended(self, id_hmac: str) -> None:
        self.sessions.pop(id_hmac, None)

    def journal(self, uid: int, seq: int, kind: str, data: dict[str, Any]) -> None:
        self.entries.setdefault(uid, []).append((seq, kind, data))

    def archive(self, game: FinishedGame, done: ArchiveDone) -> None:
        super().archive(game, done)
        self.journal(
            game.uid, game.journal_seq, "archived", {"number": len(self.records), "game": game.game_index}
        )

    def table_closed(self, uid: int) -> None:
        self.entries.pop(uid, None)

    def journal_dropped(self, uid: int) -> None:
        self.entries.pop(uid, None)

    def journal_compacted(self, uid: int, upto: int, rows: list[tuple[int, str, dict[str, Any]]]) -> None:
        kept = [entry for entry in self.entries.get(uid, []) if entry[0] > upto]
        self.entries[uid] = [*rows, *kept]

    def journal_set_aside(self, uid: int, seq: int, reason: str) -> None:
        self.set_aside.append((uid, seq, reason))


def hub_with(persistence: RecordingPersistence, timers: ManualTimers) -> Hub:
    hub = Hub(timers=timers, persistence=persistence, rng=random.Random(1), clock=lambda: 1_700_000_000.0)
    hub.guest_login("ala123", "*Ala", "en")
    hub.guest_login("bob456", "*Bob", "en")
    return hub


def state(hub: Hub, uid: int) -> tuple[Any, ...]:
    table = hub.tables[uid]
    room = table.room
    assert room is not None
    return (
        room.description(),
        room.state(),
        room.record_line(),
        room.proposal_line(),
        room.flags(),
        table.chat.lines(),
        hub.lobby.chat.lines(),
    )


def assert_restored(restored: tuple, expected: tuple) -> None:
    """The same state, but for the clock line, which says the grace the side on move has before its
    clock runs again after the restart (so that clients wait too)."""
    assert restored[:4] + restored[5:] == expected[:4] + expected[5:]
    assert restored[4] == f"{expected[4]}.g{int(RESTART_GRACE)}"


def test_a_live_game_comes_back_whole_and_its_clock_waits_for_the_players() -> None:
    journal, timers = RecordingPersistence(), ManualTimers()
    before = hub_with(journal, timers)
    uid = before.open_table(parse_game_type("0808stanF0.120.5"), "*Ala", "*Bob").uid
    for secret, where in [
        ("ala123", "cb"),
        ("bob456", "cc"),
        ("ala123", "bc"),
        ("bob456", "hh"),
        ("ala123", "dc"),
    ]:
        before.move(secret, str(uid), where)
        timers.advance(7)
    before.move("bob456", str(uid), "hg")
    before.move("ala123", str(uid), "cd")  # encloses cc
    before.chat_from("bob456", str(uid), "well played")
    before.chat_from("ala123", "0", "hello lobby")
    timers.advance(3)
    before.propose("bob456", str(uid), "undo")  # pending when the server stops
    before.announce_shutdown()
    expected = state(before, uid)

    after = Hub(timers=timers, persistence=RecordingPersistence(), clock=lambda: 1_700_000_000.0)
    after.restore(journal.entries, next_uid=uid + 1)

    assert_restored(state(after, uid), expected)
    assert "B[cd" in expected[2] and "u2undo" == expected[3]
    room = after.tables[uid].room
    assert room is not None
    left = room.clock.left(2)  # red is on move
    timers.advance(RESTART_GRACE - 1)
    assert room.clock.left(2) == left
    timers.advance(11)
    assert room.clock.left(2) == left - 10
    assert after.open_table(parse_game_type("0808stanF0.0.0"), "*Ala", "*Bob").uid == uid + 1


def test_a_game_finished_before_the_stop_keeps_its_archive_number() -> None:
    journal, timers = RecordingPersistence(), ManualTimers()
    before = hub_with(journal, timers)
    uid = before.open_table(parse_game_type("0808stanF0.0.0"), "*Ala", "*Bob").uid
    before.move("ala123", str(uid), "aa")
    before.propose("bob456", str(uid), "resign")
    assert before.tables[uid].room.archive_number == 1  # type: ignore[union-attr]

    after = Hub(timers=timers, persistence=journal)
    after.restore(journal.entries, next_uid=uid + 1)

    room = after.tables[uid].room
    assert room is not None
    assert (str(room.game.result), room.archive_number) == ("B+R", 1)
    assert len(journal.records) == 1  # not archived a second time


def test_a_game_that_ended_unwritten_is_archived_at_restore() -> None:
    journal, timers = RecordingPersistence(), ManualTimers()
    before = hub_with(journal, timers)
    uid = before.open_table(parse_game_type("0808stanF0.0.0"), "*Ala", "*Bob").uid
    before.move("ala123", str(uid), "aa")
    before.propose("bob456", str(uid), "resign")
    lost = [entry for entry in journal.entries[uid] if entry[1] != "archived"]  # the crash came first
    journal.records.clear()

    after = Hub(timers=timers, persistence=journal)
    after.restore({uid: lost}, next_uid=uid + 1)

    assert after.tables[uid].room.archive_number == 1  # type: ignore[union-attr]
    assert len(journal.records) == 1


def test_a_clock_run_out_when_the_server_stops_is_not_brought_back_by_the_restart() -> None:
    journal, timers = RecordingPersistence(), ManualTimers()
    before = hub_with(journal, timers)
    uid = before.open_table(parse_game_type("0808stanF0.60.5"), "*Ala", "*Bob").uid
    before.move("ala123", str(uid), "aa")
    timers.time += 60  # red's 60 s are gone, and the stop comes before the flag's timer runs
    before.announce_shutdown()

    after = Hub(timers=ManualTimers(timers.time), persistence=journal)
    after.restore(journal.entries, next_uid=uid + 1)

    room = after.tables[uid].room
    assert room is not None and str(room.game.result) == "B+T"


def test_a_move_in_the_grace_after_a_stop_at_the_deadline_comes_back_after_the_next_restart() -> None:
    """The clocks a stop journals can show the player on move at 0 s: the server stopped in the last
    half millisecond before their deadline. Their move in the restart's grace was in time, and the next
    restart replays it so: it is not taken for a move made after the deadline (Room._check_playing)."""
    journal, timers = RecordingPersistence(), ManualTimers()
    before = hub_with(journal, timers)
    uid = before.open_table(parse_game_type("0808stanF0.60.5"), "*Ala", "*Bob").uid
    before.move("ala123", str(uid), "aa")
    timers.time += 59.9996  # red's 0.4 ms left are journalled as 0.0
    before.announce_shutdown()
    assert journal.entries[uid][-1][1:] == ("clock", {"c": (65.0, 0.0, False, False, 0.0, 0.0)})
    timers = ManualTimers(timers.time)  # the stopped server's timers never run
    middle = Hub(timers=timers, persistence=journal)
    middle.restore(journal.entries, next_uid=uid + 1)
    middle.guest_login("bob456", "*Bob", "en")
    timers.advance(10)
    middle.move("bob456", str(uid), "hh")
    middle.announce_shutdown()

    after = Hub(timers=ManualTimers(timers.time), persistence=journal)
    after.restore(journal.entries, next_uid=uid + 1)

    room = after.tables[uid].room
    assert room is not None
    assert (room.game.result, len(room.game.moves), journal.set_aside) == (None, 2, [])


def test_a_new_game_agreed_just_before_a_crash_comes_back_with_full_clocks() -> None:
    """The agreement to a new game is journalled with the clocks of the game it ended; replayed, they were
    set on the new game: red came back with the 25 s the old game left it, blue paused at 75 s."""
    journal, timers = RecordingPersistence(), ManualTimers()
    before = hub_with(journal, timers)
    uid = before.open_table(parse_game_type("0808stanF0.120.5"), "*Ala", "*Bob").uid
    before.move("ala123", str(uid), "cb")
    timers.advance(100)
    before.move("bob456", str(uid), "cc")
    timers.advance(50)
    before.pause("bob456", str(uid), "p")  # blue's clock, paused when the game ends
    before.propose("ala123", str(uid), "resign")
    before.propose("ala123", str(uid), "new")
    before.propose("bob456", str(uid), "new")
    assert before.tables[uid].room.flags() == "f1_120.120"  # type: ignore[union-attr]

    after = Hub(timers=timers, persistence=RecordingPersistence(), clock=lambda: 1_700_000_000.0)
    after.restore(journal.entries, next_uid=uid + 1)  # a crash: no clocks journalled at a stop

    room = after.tables[uid].room
    assert room is not None and room.games_played == 1
    assert room.flags() == f"f1_120.120.g{int(RESTART_GRACE)}"


def test_the_grace_of_a_restart_is_given_afresh_by_the_next_not_added_to_what_is_left_of_it() -> None:
    """Each restart gave the player on move 60 s more on top of what was left of the last restart's:
    three clean stops 10 s apart left red 160 s before the clock, a crash after a pause in the grace 110.
    The sayHi red has not yet spent stays, as before."""
    journal, timers = RecordingPersistence(), ManualTimers()
    hub = hub_with(journal, timers)
    uid = hub.set_up_table(parse_game_type("0808stanF0.120.5"), "*Ala", "*Bob", (0, 30), "Cup", "1", {})
    hub.move("ala123", str(uid), "aa")
    timers.advance(10)  # red has 20 s of sayHi left
    for _ in range(3):
        hub.announce_shutdown()
        hub = Hub(timers=timers, persistence=journal, clock=lambda: 1_700_000_000.0)
        hub.restore({uid: list(journal.entries[uid])}, next_uid=uid + 1)
        assert hub.tables[uid].room.flags() == "f2_125.120.g80"  # type: ignore[union-attr]
        timers.advance(10)
    hub.guest_login("ala123", "*Ala", "en")
    hub.pause("ala123", str(uid), "p")  # journalled with red's grace as it stands
    hub.pause("ala123", str(uid), "u")

    crashed = Hub(timers=timers, persistence=RecordingPersistence(), clock=lambda: 1_700_000_000.0)
    crashed.restore({uid: list(journal.entries[uid])}, next_uid=uid + 1)

    assert crashed.tables[uid].room.flags() == "f2_125.120.g80"  # type: ignore[union-attr]


def test_a_journal_that_cannot_open_its_table_is_set_aside_and_the_others_come_back() -> None:
    journal, timers = RecordingPersistence(), ManualTimers()
    before = hub_with(journal, timers)
    good = before.open_table(parse_game_type("0808stanF0.0.0"), "*Ala", "*Bob").uid
    before.move("ala123", str(good), "aa")
    broken = {7: [(1, "move", {"p": 1, "w": "aa"}), (2, "move", {"p": 2, "w": "bb"})]}  # no "open" entry

    after_journal = RecordingPersistence()
    after = Hub(timers=timers, persistence=after_journal)
    after.restore({**journal.entries, **broken}, next_uid=8)

    assert 7 not in after.tables
    assert after.tables[good].room.record_line() == "sr(;B[aa])"  # type: ignore[union-attr]
    assert [(uid, seq) for uid, seq, _ in after_journal.set_aside] == [(7, 1), (7, 2)]


def test_one_bad_entry_is_set_aside_and_the_rest_of_its_table_comes_back() -> None:
    journal, timers = RecordingPersistence(), ManualTimers()
    before = hub_with(journal, timers)
    uid = before.open_table(parse_game_type("0808stanF0.0.0"), "*Ala", "*Bob").uid
    before.move("ala123", str(uid), "aa")
    before.chat_from("ala123", str(uid), "hello")
    before.move("bob456", str(uid), "bb")
    before.chat_from("bob456", "0", "in the lobby")
    before.chat_from("ala123", str(uid), "after it")
    entries = journal.entries[uid]
    last_move = max(index for index, entry in enumerate(entries) if entry[1] == "move")
    seq, _, data = entries[last_move]
    entries[last_move] = (seq, "move", {**data, "w": "not a point"})  # a row damaged on disk
    lobby = journal.entries[0]
    lobby.insert(0, (0, "chat", {"nick": "*Ala"}))  # a lobby line without its text
    journal.entries[-1] = [(1, "private", {"t": 1}), *journal.entries.get(-1, [])]

    after_journal = RecordingPersistence()
    after = Hub(timers=timers, persistence=after_journal, clock=lambda: 1_700_000_000.0)
    after.restore(journal.entries, next_uid=uid + 1)

    room = after.tables[uid].room
    assert room is not None
    assert room.record_line() == "sr(;B[aa])"
    assert [line.split(".", 3)[3] for line in after.tables[uid].chat.lines()] == ["hello", "after it"]
    assert [line.split(".", 3)[3] for line in after.lobby.chat.lines()] == ["in the lobby"]
    assert sorted((uid_, seq_) for uid_, seq_, _ in after_journal.set_aside) == [(-1, 1), (0, 0), (uid, seq)]


def test_private_conversations_come_back_with_what_each_side_hid() -> None:
    journal, timers = RecordingPersistence(), ManualTimers()
    before = hub_with(journal, timers)
    before.chat_from("ala123", "_*Bob", "psst")
    before.chat_from("bob456", "_*Ala", "what")
    before.chat_from("ala123", "del", "_*Bob")  # Ala clears the conversation on her side
    before.chat_from("bob456", "_*Ala", "hello?")

    after = Hub(timers=timers, persistence=RecordingPersistence(), clock=lambda: 1_700_000_000.0)
    after.restore(journal.entries, next_uid=1)

    talk = after.private.get("*Ala", "*Bob")
    assert talk is not None
    assert [entry.line() for entry in talk.visible_to("*Bob")] == [
        entry.line()
        for entry in before.private.get("*Ala", "*Bob").visible_to("*Bob")  # type: ignore[union-attr]
    ]
    assert [entry.text for entry in talk.visible_to("*Bob")] == ["psst", "what", "hello?"]
    assert [entry.text for entry in talk.visible_to("*Ala")] == ["hello?"]
    assert after.private.add(1_700_000_000, "*Ala", "*Bob", "x").chat_id != talk.entries[-2].chat_id


def test_what_a_deleted_accounts_nick_hid_from_the_next_account_stays_hidden_after_a_restart() -> None:
    """Lines to the nick written after the new account was registered stay its own: a member of a
    cluster can hold them before that account's first session there (its `hide` names how many lines)."""
    now = 1_700_000_000
    journal = RecordingPersistence()
    journal.entries[PRIVATE_JOURNAL] = [
        (1, "private", {"t": now - 120, "from": "Alice", "to": "*Bob", "text": "the secret plan", "n": 1}),
        (2, "private", {"t": now - 110, "from": "*Bob", "to": "Alice", "text": "my pin is 1234", "n": 1}),
        (3, "private", {"t": now - 5, "from": "*Bob", "to": "Alice", "text": "who are you?", "n": 1}),
    ]
    before = Hub(timers=ManualTimers(), persistence=journal, clock=lambda: float(now))
    before.restore(dict(journal.entries), next_uid=1)
    before.login("new-alice", Account("Alice", 1500, 0, 0, 0, registered_at=now - 60.0))

    after = Hub(timers=ManualTimers(), persistence=RecordingPersistence(), clock=lambda: float(now))
    after.restore(journal.entries, next_uid=1)

    talk = after.private.get("Alice", "*Bob")
    assert talk is not None
    assert [entry.text for entry in talk.visible_to("Alice")] == ["who are you?"]
    assert len(talk.visible_to("*Bob")) == 3


def test_a_journalled_line_no_utf8_reply_can_hold_comes_back_readable() -> None:
    """A server before 2026-12-01 took a bot's chat line of JSON "\\udc80" and journalled it; from then on
    every poll of the lobby failed, after a restart too (server/web/bots.py refuses such text now)."""
    journal, timers = RecordingPersistence(), ManualTimers()
    before = hub_with(journal, timers)
    before.chat_from("ala123", "0", "hello")
    before.chat_from("ala123", "_*Bob", "psst")
    for entries in (journal.entries[0], journal.entries[PRIVATE_JOURNAL]):
        entries[-1][2]["text"] += "\udc80"

    after = hub_with(RecordingPersistence(), ManualTimers())
    after.restore(journal.entries, next_uid=1)

    reply = after.stream.reply("bob456", 0, with_subscriptions=True).encode()
    assert "hello\ufffd".encode() in reply
    talk = after.private.get("*Ala", "*Bob")
    assert talk is not None and [entry.text for entry in talk.visible_to("*Bob")] == ["psst\ufffd"]


def test_a_msg_no_from_before_the_restart_still_gets_the_whole_state() -> None:
    journal, timers = RecordingPersistence(), ManualTimers()
    before = hub_with(journal, timers)
    uid = before.open_table(parse_game_type("0808stanF0.0.0"), "*Ala", "*Bob").uid
    before.move("ala123", str(uid), "aa")
    old_msg_no = before.counter.last

    after = Hub(timers=timers, persistence=RecordingPersistence(), clock=lambda: 1_700_000_000.0)
    after.restore(journal.entries, next_uid=uid + 1)
    after.guest_login("ala123", "*Ala", "en")
    after.guest_login("eve789", "*Eve", "en")
    for n in range(old_msg_no - after.counter.last + 1):  # the new run's numbers pass the old msgNo
        after.chat_from("eve789", "0", f"line {n}")
    assert after.counter.last > old_msg_no

    reply = after.reply("ala123", old_msg_no, with_subscriptions=False)

    assert f"/q{uid}/" in reply and "sr(;B[aa])" in reply and "/pr*Ala" in reply
    assert "line 0" in reply  # the lobby's chat from the start of the session too


def test_a_tournament_table_comes_back_with_its_say_hi_and_who_showed_up() -> None:
    journal, timers = RecordingPersistence(), ManualTimers()
    before = hub_with(journal, timers)  # Ala and Bob are online: both showed up
    uid = before.set_up_table(parse_game_type("0808stanF0.120.5"), "*Ala", "*Bob", (60, 90), "Cup", "1", {})
    timers.advance(20)
    before.move("ala123", str(uid), "aa")  # red's 90 s of sayHi are still to come
    before.announce_shutdown()

    after = Hub(timers=timers, persistence=RecordingPersistence())
    after.restore(journal.entries, next_uid=uid + 1)

    room = after.tables[uid].room
    assert room is not None and room.tournament_game and room.showed_up == {1, 2}
    assert room.clock is not None and room.clock.grace_left(2) == 90 + RESTART_GRACE
    assert room.record("2026-11-22").event == "Cup"
    timers.advance(90 + RESTART_GRACE + 120 + 1)  # red never moves: blue wins by forfeit
    assert str(room.game.result) == "B+F"
