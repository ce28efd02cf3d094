"""The in-process event bus: numbering, delivery to a table's followers and to one player, long polls."""

from __future__ import annotations

import asyncio

from server.hub.bus import FIRST_J, EventBus, LocalBus
from server.hub.mailbox import EventLog
from server.hub.model import LOBBY, Player
from server.hub.persistence import MemoryPersistence


def _bus() -> LocalBus:
    persistence = MemoryPersistence()
    bus = LocalBus(lambda: persistence, table_history=10)
    bus.open(LOBBY)
    bus.open(7)
    return bus


def _player() -> Player:
    return Player(secret="ala123", nick="*Ala", lang="en", inbox=EventLog(10))


def test_events_for_a_table_and_for_a_player_share_one_numbering() -> None:
    bus: EventBus = _bus()
    ala = _player()
    first = bus.publish(7, "pa*Ala")
    bus.send(ala, 7, "ca...")
    mark = bus.mark()
    second = bus.publish(LOBBY, "x1", b_only=True)
    assert (first, mark, second) == (FIRST_J + 1, FIRST_J + 3, FIRST_J + 4) and bus.last == second
    assert isinstance(bus, LocalBus)
    assert bus.channels[7].log.since(0) == [(first, 7, "pa*Ala", False)]
    assert bus.channels[LOBBY].log.since(0) == [(second, LOBBY, "x1", True)]
    assert ala.inbox.since(0) == [(first + 1, 7, "ca...", False)]


def test_a_watcher_hears_of_game_tables_only() -> None:
    bus = _bus()
    heard: list[int] = []
    bus.watch(heard.append)
    bus.publish(LOBBY, "x1")
    bus.publish(7, "m1")
    assert heard == [7]


async def test_a_long_poll_ends_at_the_next_event_of_a_table_it_follows_or_for_its_player() -> None:
    bus = _bus()
    ala = _player()
    waiting = asyncio.ensure_future(bus.wait([LOBBY, 7], ala, timeout=5))
    await asyncio.sleep(0)
    assert ala.waiter is not None and bus.channels[7].waiters
    bus.publish(7, "m1")
    await asyncio.wait_for(waiting, 1)
    assert ala.waiter is None and not bus.channels[7].waiters and not bus.channels[LOBBY].waiters

    waiting = asyncio.ensure_future(bus.wait([LOBBY], ala, timeout=5))
    await asyncio.sleep(0)
    bus.nudge(ala)  # invitation lines changed: no event, but the reply differs
    await asyncio.wait_for(waiting, 1)

    waiting = asyncio.ensure_future(bus.wait([7], None, timeout=0.01))
    await asyncio.sleep(0)
    bus.close(7)  # the table closed meanwhile: the poll still ends, by its time-out
    await asyncio.wait_for(waiting, 1)


def test_numbering_goes_on_above_an_earlier_run_and_starts_again_past_a_java_int() -> None:
    bus = _bus()
    bus.continue_after(500)
    assert bus.last == 500 and bus.channels[LOBBY].log.dropped == 500
    bus.continue_after(2**30)
    assert bus.last == 500  # numbers never go back: every old msgNo is beyond j and gets the whole state
