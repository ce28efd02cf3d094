"""A room's lines that the lobby's whole state asks every table for: built once, built again when
they change (issue 19: the lobby's state at 2,000 tables)."""

from __future__ import annotations

import random

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.protocol import events


def test_the_description_is_built_once_and_again_after_the_seats_swap() -> None:
    hub = Hub(timers=ManualTimers(), rng=random.Random(1))
    hub.guest_login("ala12345", "*Ala", "en")
    hub.guest_login("bob12345", "*Bob", "en")
    table = hub.open_table(parse_game_type("0808stanF0.0.0"), "*Ala", "*Bob")
    room = hub.tables.room(str(table.uid))
    first = room.description()
    assert first == events.description(table.uid, room.game_type, "*Ala", "*Bob")
    assert room.description() is first  # kept, not formatted again

    hub.move("ala12345", str(table.uid), "aa")
    hub.propose("bob12345", str(table.uid), "resign")  # a new game once this one is over
    hub.propose("ala12345", str(table.uid), "new")
    hub.propose("bob12345", str(table.uid), "new")  # agreed: a new game, colours swapped

    assert (room.blue, room.red) == ("*Bob", "*Ala")
    assert room.description() == events.description(table.uid, room.game_type, "*Bob", "*Ala")
