"""What an open table keeps per move: nothing the garbage collector walks at a full collection. A
server keeps every move of thousands of games, and a full collection stops every reply while it walks
each object it tracks (issue 19.2): a class instance always, a plain tuple of numbers and strings not
once a collection has found everything in it untracked."""

from __future__ import annotations

import contextlib
import gc
import random
import weakref

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.room import Room
from server.protocol.codec import ProtocolError

# a capture first, so that moves with enclosures are among those kept
CAPTURE = ("bb", "ba", "jj", "ab", "kk", "cb", "ll", "bc")


def collected() -> None:
    """One collection of the young generations, as a serving process makes (server/gcschedule.py):
    what it leaves tracked is promoted to the oldest generation, walked at every full collection."""
    gc.collect(1)


def table(game_type: str) -> tuple[Hub, Room, ManualTimers]:
    timers = ManualTimers()
    hub = Hub(timers=timers, rng=random.Random(3), clock=lambda: 1_700_000_000.0)  # a store keeping nothing
    hub.guest_login("ala123", "*Ala", "en")
    hub.guest_login("bob456", "*Bob", "en")
    room = hub.open_table(parse_game_type(game_type), "*Ala", "*Bob").room
    assert room is not None
    return hub, room, timers


def play(hub: Hub, room: Room, timers: ManualTimers, points: list[str], until: int) -> None:
    nicks = {1: "ala123", 2: "bob456"}
    for point in points:
        if len(room.game.moves) == until:
            return
        with contextlib.suppress(ProtocolError):  # a point inside a realm by now
            hub.move(nicks[room.game.to_move], str(room.uid), point)
        timers.advance(0.5)
    raise AssertionError(f"only {len(room.game.moves)} moves")


def free_points() -> list[str]:
    free = [x + y for x in "defghijklmnopqrs" for y in "defghijklmnopqrs" if x + y not in CAPTURE]
    random.Random(1).shuffle(free)
    return free


def test_the_moves_of_a_game_with_captures_add_no_tracked_objects() -> None:
    hub, room, timers = table("2020stanF0.0.0")
    play(hub, room, timers, list(CAPTURE), until=len(CAPTURE) - 1)
    hub.move("bob456", str(room.uid), CAPTURE[-1])
    assert room.game.captured(2) == 1
    collected()
    before = len(gc.get_objects())
    play(hub, room, timers, free_points(), until=208)
    collected()
    grown = len(gc.get_objects()) - before
    assert grown < 20  # was two per move: the Move and its journal entry
    capture = room.game.moves[7]
    assert capture.point == (1, 2) and capture.enclosures[0].captured == 1  # read back as Moves


def test_the_journal_entries_of_a_timed_game_are_left_alone_by_the_collector() -> None:
    hub, room, timers = table("2020stanF0.120.5")
    play(hub, room, timers, free_points(), until=40)
    collected()
    assert room.clock is not None and len(room.game_entries) == 40  # each entry with both clocks
    assert not any(gc.is_tracked(entry) for entry in room.game_entries)
    assert all("c" in data for kind, data in room.compacted() if kind == "move")


def test_a_finished_timed_game_is_freed_by_its_last_reference_not_by_a_collection() -> None:
    """A serving process collects its oldest generation rarely: a closed table that only a collection
    could free (the room and its clock were a cycle) kept its whole game in memory until then."""
    hub, room, timers = table("2020stanF0.120.5")
    play(hub, room, timers, free_points(), until=6)
    hub.propose("ala123", str(room.uid), "resign")
    for nick in ("ala123", "bob456"):
        hub.change_table(nick, 0)
    uid, gone = room.uid, weakref.ref(room)
    gc.disable()
    try:
        del room
        for _ in range(3):  # the finished table closes once nobody is at it
            timers.advance(60)
            hub.sweep()
        assert uid not in hub.tables and gone() is None
    finally:
        gc.enable()
