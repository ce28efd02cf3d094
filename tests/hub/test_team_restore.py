"""A team table rebuilt from the journal after a restart (docs/teams.md): its line-up, the turn order,
who has left the game, a proposition some have agreed to, each player's sayHi; and the same after the
journal was compacted past a new game."""

from __future__ import annotations

import random

import pytest

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.restore import RESTART_GRACE
from server.protocol.codec import ProtocolError
from tests.hub.test_restore import RecordingPersistence, assert_restored, state

PLAYERS = {"ala1": "*Ala", "bob1": "*Bob", "cid1": "*Cid", "dan1": "*Dan", "eve1": "*Eve", "fay1": "*Fay"}


def team_hub(journal: RecordingPersistence, timers: ManualTimers) -> Hub:
    hub = Hub(timers=timers, persistence=journal, rng=random.Random(2), clock=lambda: 1_700_000_000.0)
    for secret, nick in PLAYERS.items():
        hub.guest_login(secret, nick, "en")
    return hub


def restored(journal: RecordingPersistence, timers: ManualTimers, uid: int) -> Hub:
    after = Hub(timers=timers, persistence=RecordingPersistence(), clock=lambda: 1_700_000_000.0)
    after.restore(journal.entries, next_uid=uid + 1)
    return after


def test_a_three_a_side_game_comes_back_with_its_turn_order_who_left_and_who_agreed() -> None:
    journal, timers = RecordingPersistence(), ManualTimers()
    before = team_hub(journal, timers)
    timed = parse_game_type("0808stanF0.120.5")
    more = ["*Cid", "*Dan", "*Eve", "*Fay"]  # team one *Ala, *Cid, *Eve; team two *Bob, *Dan, *Fay
    uid = before.set_up_table(timed, "*Ala", "*Bob", (0,) * 6, None, None, {}, more=more)
    table = str(uid)
    for secret, where in (("ala1", "aa"), ("bob1", "hh"), ("cid1", "ab"), ("dan1", "hg")):
        before.move(secret, table, where)
        timers.advance(4)
    before.change_table("eve1", 0)  # *Eve, on move, leaves: *Ala plays for team one
    before.move("ala1", table, "ac")
    before.propose("fay1", table, "drop")
    before.propose("ala1", table, "ok6drop")  # *Bob, *Cid and *Dan have not agreed yet
    before.announce_shutdown()
    expected = state(before, uid)

    after = restored(journal, timers, uid)

    assert_restored(state(after, uid), expected)
    assert expected[1] == f"x{uid}.6.-." and expected[3] == "u6drop.1"
    room = after.tables[uid].room
    assert room is not None and room.lineup.gone == {"*Eve"}
    for secret in PLAYERS:
        after.guest_login(secret, PLAYERS[secret], "en")  # the players come back and are seated
    eve = after.players["eve1"]
    assert uid in after.players["ala1"].tables and after.tables[uid].colour_of(eve) == ""
    for secret in ("bob1", "cid1", "dan1"):
        after.propose(secret, table, "ok6drop")
    assert str(room.game.result) == "Void"


def test_the_turn_order_goes_on_after_a_restart_and_each_players_say_hi_is_kept() -> None:
    journal, timers = RecordingPersistence(), ManualTimers()
    before = team_hub(journal, timers)
    timed = parse_game_type("0808stanF0.120.5")
    uid = before.set_up_table(
        timed, "*Ala", "*Bob", (10, 10, 40, 50), "Pairs", "1", {}, more=["*Cid", "*Dan"]
    )
    before.move("ala1", str(uid), "aa")
    before.move("bob1", str(uid), "hh")  # *Cid has not moved: 40 s of sayHi before team one's clock
    before.announce_shutdown()

    after = restored(journal, timers, uid)

    room = after.tables[uid].room
    assert room is not None and room.side_on_move == 3
    assert room.clock is not None and room.clock.grace_left(1) == 40 + RESTART_GRACE
    for secret in PLAYERS:
        after.guest_login(secret, PLAYERS[secret], "en")
    with pytest.raises(ProtocolError):
        after.move("ala1", str(uid), "ab")
    after.move("cid1", str(uid), "ab")
    assert room.side_on_move == 4 and room.clock.grace_left(2) == 50


def test_a_compacted_journal_keeps_who_left_in_an_earlier_game_and_the_swapped_teams() -> None:
    journal, timers = RecordingPersistence(), ManualTimers()
    hub = team_hub(journal, timers)
    untimed = parse_game_type("0808stanF0.0.0")
    more = ["*Cid", "*Dan", "*Eve", "*Fay"]
    uid = hub.set_up_table(untimed, "*Ala", "*Bob", (0,) * 6, None, None, {}, more=more)
    table = str(uid)
    hub.move("ala1", table, "aa")
    hub.propose("cid1", table, "resign")  # out of this game and the next
    hub.propose("bob1", table, "draw")
    for secret in ("ala1", "dan1", "eve1", "fay1"):
        hub.propose(secret, table, "ok2draw")
    for secret in ("ala1", "bob1", "dan1", "eve1", "fay1"):
        hub.propose(secret, table, "new")
    hub.move("bob1", table, "hh")  # team two is blue now: *Bob, *Dan, *Fay against *Ala, *Eve
    hub.propose("ala1", table, "undo")
    hub.propose("bob1", table, "ok2undo")  # pending: *Dan, *Eve, *Fay have not answered
    hub.tables[uid].since_compaction = 10_000
    hub.sweep()
    assert [kind for _, kind, _ in journal.entries[uid]][:4] == ["open", "seat", "seat", "seat"]

    after = restored(journal, timers, uid)

    assert state(after, uid) == state(hub, uid)
    room = after.tables[uid].room
    assert room is not None and room.lineup.gone == {"*Cid"} and room.blue == "*Bob, *Dan, *Fay"
    assert room.side_on_move == 2 and room.proposal_line() == "u2undo.1"
