"""A room's lines that the lobby's whole state asks every table for: built once, built again when
they change (issue 19: the lobby's state at 2,000 tables)."""

from __future__ import annotations

import random

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.persistence import ArchiveDone, FinishedGame, MemoryPersistence
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


class LateArchive(MemoryPersistence):
    """A store that writes a finished game only when told: as a busy or retrying writer does."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting: list[tuple[FinishedGame, ArchiveDone]] = []

    def archive(self, game: FinishedGame, done: ArchiveDone) -> None:
        self.waiting.append((game, done))

    def write_all(self) -> None:
        for game, done in self.waiting:
            super().archive(game, done)
        self.waiting.clear()


def test_a_game_archived_after_the_next_began_still_says_its_number_and_rating_line() -> None:
    """issue 47.4: both players see how a game ended their ratings; the lines were dropped when the
    players agreed a new game before the store had written the last one."""
    persistence = LateArchive()
    hub = Hub(timers=ManualTimers(), rng=random.Random(1), persistence=persistence)
    hub.guest_login("ala12345", "*Ala", "en")
    hub.guest_login("bob12345", "*Bob", "en")
    uid = str(hub.open_table(parse_game_type("0808stanr0.0.0"), "*Ala", "*Bob").uid)
    hub.move("ala12345", uid, "aa")
    hub.propose("bob12345", uid, "resign")
    hub.propose("ala12345", uid, "new")
    hub.propose("bob12345", uid, "new")  # the next game has begun; the last one is not written yet

    persistence.write_all()

    said = [entry.text for entry in hub.tables[int(uid)].chat.entries if not entry.nick]
    assert "Game saved as number 1." in said
    assert "Not rated: fewer than 24 dots were placed." in said
    assert hub.tables.room(uid).archive_number is None  # the number is the last game's, not this one's
