"""A player whose account an admin renamed keeps their seats at unfinished games: their session goes on
under the old nick while it lives, and the next one, under the new nick, sits at those games again (its
turn, its clock), after a restart too. The seat belongs to the account's number, never to whoever holds
the old nick next (docs/operations.md, "Accounts")."""

from __future__ import annotations

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.persistence import Account
from tests.hub.test_acknowledged import Link
from tests.hub.test_restore import RecordingPersistence, hub_with

TIMED = parse_game_type("0808stanF0.120.5")


def bob(nick: str = "Bob", number: int = 2) -> Account:
    """Account number 2, first registered as "Bob" (the nick it logs in with), now called `nick`."""
    former = () if nick == "Bob" else ("bob",)  # the store's users.former, for one rename
    return Account(nick, 1500, 0, 0, 0, login_key="bob", number=number, former=former)


def renamed_at_a_game(journal: RecordingPersistence, timers: ManualTimers) -> tuple[Hub, int]:
    """*Ala (blue) against Bob, who moves once and then leaves; an admin renames his account Robert."""
    hub = hub_with(journal, timers)
    hub.login("bob-id-1234", bob())
    uid = hub.open_table(TIMED, "*Ala", "Bob").uid
    hub.move("ala123", str(uid), "cc")
    hub.move("bob-id-1234", str(uid), "ff")
    hub.move("ala123", str(uid), "dd")  # Bob is on move
    assert hub.logout("bob-id-1234")
    return hub, uid


def test_the_next_session_under_the_new_nick_sits_at_the_game_and_plays_on() -> None:
    """Before, the seat stayed "Bob"'s: Robert's session was not seated, and his move was refused."""
    timers = ManualTimers()
    hub, uid = renamed_at_a_game(RecordingPersistence(), timers)
    room = hub.tables[uid].room
    assert room is not None
    left = room.clock.left(2)

    hub.login("bob-id-1234", bob("Robert"))

    assert uid in hub.players["bob-id-1234"].tables
    assert room.seat_of("Robert") == 2 and room.seat_of("Bob") == 0
    assert room.description().endswith(".*Ala.Robert")
    assert room.clock.left(2) == left
    hub.move("bob-id-1234", str(uid), "ee")
    assert len(room.game.moves) == 4


def test_the_moved_seat_comes_back_after_a_restart() -> None:
    journal, timers = RecordingPersistence(), ManualTimers()
    hub, uid = renamed_at_a_game(journal, timers)
    hub.login("bob-id-1234", bob("Robert"))
    hub.move("bob-id-1234", str(uid), "ee")
    assert hub.logout("bob-id-1234")
    hub.announce_shutdown()

    after = Hub(timers=timers, persistence=RecordingPersistence(), clock=lambda: 1_700_000_000.0)
    after.restore(journal.entries, next_uid=uid + 1)
    after.login("bob-id-1234", bob("Robert"))

    room = after.tables[uid].room
    assert room is not None and room.seat_of("Robert") == 2
    assert uid in after.players["bob-id-1234"].tables
    after.guest_login("ala123", "*Ala", "en")
    after.move("ala123", str(uid), "gg")
    after.move("bob-id-1234", str(uid), "hh")
    assert len(room.game.moves) == 6


def test_a_rename_while_the_server_was_down_moves_the_seat_at_the_first_login() -> None:
    journal, timers = RecordingPersistence(), ManualTimers()
    _, uid = renamed_at_a_game(journal, timers)

    after = Hub(timers=timers, persistence=RecordingPersistence(), clock=lambda: 1_700_000_000.0)
    after.restore(journal.entries, next_uid=uid + 1)
    after.login("bob-id-1234", bob("Robert"))

    assert uid in after.players["bob-id-1234"].tables
    after.move("bob-id-1234", str(uid), "ee")
    assert len(after.tables[uid].room.game.moves) == 4


def test_a_compacted_journal_keeps_the_moved_seat() -> None:
    journal, timers = RecordingPersistence(), ManualTimers()
    hub, uid = renamed_at_a_game(journal, timers)
    hub.login("bob-id-1234", bob("Robert"))
    hub.restorer.compact(hub.tables[uid])

    after = Hub(timers=timers, persistence=RecordingPersistence(), clock=lambda: 1_700_000_000.0)
    after.restore(journal.entries, next_uid=uid + 1)
    after.login("bob-id-1234", bob("Robert"))

    assert after.tables[uid].room.seat_of("Robert") == 2
    after.move("bob-id-1234", str(uid), "ee")


def test_a_stranger_with_the_nick_the_seat_had_never_gets_it() -> None:
    """Bob's account, renamed Robert and then Rob: "Robert" is free again, and another account takes it.
    The seat moved to "Robert" at Robert's login is Bob's account's, and goes to Rob, not to the
    stranger."""
    timers = ManualTimers()
    hub, uid = renamed_at_a_game(RecordingPersistence(), timers)
    hub.login("bob-id-1234", bob("Robert"))
    assert hub.logout("bob-id-1234")

    stranger = "robert-id-999"
    hub.login(stranger, Account("Robert", 1500, 0, 0, 0, login_key="robert", number=3))
    room = hub.tables[uid].room
    assert room is not None
    assert uid not in hub.players[stranger].tables
    for refused in (
        lambda: hub.move(stranger, str(uid), "ee"),
        lambda: hub.propose(stranger, str(uid), "resign"),
    ):
        try:
            refused()
        except Exception as error:
            assert getattr(error, "code", "") == "notYourSeat"
        else:
            raise AssertionError("the stranger acted in Bob's seat")
    assert room.game.result is None and len(room.game.moves) == 3

    hub.login("bob-id-1234", bob("Rob"))  # the stranger, online as Robert, keeps nothing of it
    assert uid in hub.players["bob-id-1234"].tables and room.seat_of("Rob") == 2
    hub.move("bob-id-1234", str(uid), "ee")


def test_a_guest_under_the_old_nick_gets_no_seat() -> None:
    timers = ManualTimers()
    hub, uid = renamed_at_a_game(RecordingPersistence(), timers)
    assert hub.logout("bob456")  # *Bob, a guest
    hub.guest_login("bobGst1", "*Bob", "en")
    hub.login("bob-id-1234", bob("Robert"))
    assert uid not in hub.players["bobGst1"].tables
    assert uid in hub.players["bob-id-1234"].tables


def test_a_seat_at_a_table_of_another_member_moves_when_the_player_logs_in_there() -> None:
    """Member b asks the other members to move the account's seats (by its number); member a, the
    table's owner, moves its seat, and its `d` line then seats Robert there from member b. Before, b
    looked his games up by the new nick and found none. A guest's person sent with the account's number
    moves nothing (tests/cluster/test_renamed_seats.py: the same on a real Redis)."""
    link = Link()
    a, b = link.hubs["a"], link.hubs["b"]
    a.guest_login("ala123", "*Ala", "en")
    a.login("bob-id-1234", bob())
    uid = a.open_table(TIMED, "*Ala", "Bob").uid
    for secret, dot in (("ala123", "cc"), ("bob-id-1234", "ff"), ("ala123", "dd")):
        a.move(secret, str(uid), dot)
    assert a.logout("bob-id-1234")
    link.deliver()
    room = a.tables[uid].room
    assert room is not None
    left = room.clock.left(2)

    a.take_from_member("b", {"renamed": {"nick": "*Bob", "guest": True, "account": 2, "role": ""}})
    b.guest_login("bobGst1", "*Bob", "en")
    link.deliver()
    assert room.seat_of("Bob") == 2 and room.seat_of("*Bob") == 0

    b.login("bob-id-1234", bob("Robert"))
    link.deliver()
    assert room.seat_of("Robert") == 2 and room.seat_of("Bob") == 0 and room.clock.left(2) == left
    assert a.tables[uid].seat_of(a.tables[uid].people["Robert"]) == 2
    assert uid in b.players["bob-id-1234"].tables and uid not in b.players["bobGst1"].tables
    b.move("bob-id-1234", str(uid), "ee")
    link.deliver()
    assert len(room.game.moves) == 4
