"""The in-process event bus: numbering, delivery to a table's followers and to one player, long polls."""

from __future__ import annotations

import asyncio

from server.hub.bus import (
    FIRST_J,
    LOBBY_WAKE_EVERY,
    PUSHED_LOBBY_WAKE_EVERY,
    WAIT_TICK,
    WAKE_SLICE,
    EventBus,
    LocalBus,
)
from server.hub.clock import LoopTimers, ManualTimers, Timers
from server.hub.mailbox import EventLog
from server.hub.model import LOBBY, Player
from server.hub.persistence import MemoryPersistence


def _bus(timers: Timers | None = None) -> LocalBus:
    persistence = MemoryPersistence()
    bus = LocalBus(lambda: persistence, table_history=10, timers=timers or LoopTimers())
    bus.open(LOBBY)
    bus.open(7)
    return bus


def _player() -> Player:
    return Player(secret="ala123", nick="*Ala", lang="en", inbox=EventLog(10))


def test_events_for_a_table_and_for_a_player_share_one_numbering() -> None:
    bus: EventBus = _bus(ManualTimers())
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
    bus = _bus(ManualTimers())
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
    assert ala.waiters and bus.channels[7].waiters
    bus.publish(7, "m1")
    await asyncio.wait_for(waiting, 1)
    assert not ala.waiters and not bus.channels[7].waiters and not bus.channels[LOBBY].waiters

    waiting = asyncio.ensure_future(bus.wait([LOBBY], ala, timeout=5))
    await asyncio.sleep(0)
    bus.nudge(ala)  # invitation lines changed: no event, but the reply differs
    await asyncio.wait_for(waiting, 1)

    waiting = asyncio.ensure_future(bus.wait([7], None, timeout=0.01))
    await asyncio.sleep(0)
    bus.close(7)  # the table closed meanwhile: the poll still ends, by its time-out
    await asyncio.wait_for(waiting, 1)


async def test_a_long_poll_on_a_table_closed_and_opened_again_ends_at_once() -> None:
    """A long poll waited on a table's channel as it was when the poll began. A table closed (a copy of
    another member's, when that member died) and opened again (taken over) has a new channel, whose
    events woke nobody waiting on the old one: the poll waited out its time. A channel closed or
    replaced ends the polls waiting on it, and their next poll waits on the table as it is now."""
    bus = _bus()
    ala = _player()
    waiting = asyncio.ensure_future(bus.wait([7], ala, timeout=5))
    await asyncio.sleep(0)
    bus.close(7)
    await asyncio.wait_for(waiting, 1)

    bus.open(7)
    waiting = asyncio.ensure_future(bus.wait([7], ala, timeout=5))
    await asyncio.sleep(0)
    bus.open(7)  # opened again over the one there
    await asyncio.wait_for(waiting, 1)


async def test_long_polls_with_nothing_new_end_on_the_first_tick_after_their_wait_one_timer_for_all() -> None:
    bus = _bus()
    loop = asyncio.get_running_loop()
    started = loop.time()
    ended: dict[float, float] = {}

    async def wait(timeout: float) -> None:
        await bus.wait([7], None, timeout)
        ended[timeout] = loop.time() - started

    timeouts = (0.06, 0.11, 0.16, 0.3)
    polls = [asyncio.ensure_future(wait(timeout)) for timeout in timeouts]
    woken = asyncio.ensure_future(bus.wait([7], _player(), timeout=30))  # ended by an event
    await asyncio.sleep(0)
    bus.send(_player(), 7, "x")  # another player's line wakes nobody here
    await asyncio.sleep(0.01)
    assert not woken.done()
    woken.cancel()
    await asyncio.wait_for(asyncio.gather(*polls), 2)

    for timeout in timeouts:  # never early; late by a tick at most (and what a busy machine adds)
        assert timeout <= ended[timeout] < timeout + WAIT_TICK + 0.5
    assert list(ended) == sorted(ended)
    deadlines = bus._deadlines
    assert deadlines is not None and not deadlines.ticks  # nothing left of the 30-s wait
    await asyncio.sleep(2 * WAIT_TICK)
    assert deadlines._timer is None and not deadlines.ticks  # nothing waits: no timer runs


async def test_lobby_news_wakes_the_lobbys_long_polls_at_once_then_at_most_once_a_period() -> None:
    """Every reader in the lobby waits on it: each lobby event answering all of them would be thousands
    of replies per login, game start or chat line on a busy server. A lone event still wakes them at once;
    the next ones within LOBBY_WAKE_EVERY go together, once it has passed. A table's events and a
    player's own are not held back."""
    timers = ManualTimers()
    bus = _bus(timers)
    ala = _player()

    async def woken_by(publish: object) -> bool:
        waiting = asyncio.ensure_future(bus.wait([LOBBY, 7], ala, timeout=5))
        await asyncio.sleep(0)
        publish()  # type: ignore[operator]
        await asyncio.sleep(0)
        done = waiting.done()
        if not done:
            timers.advance(LOBBY_WAKE_EVERY)
            await asyncio.wait_for(waiting, 1)
        return done

    assert await woken_by(lambda: bus.publish(LOBBY, "pa*Bob"))  # the first: at once
    assert not await woken_by(lambda: bus.publish(LOBBY, "pa*Cyd"))  # within the period: at its end
    for _ in range(3):  # a burst within one period: one wake for all of it
        bus.publish(LOBBY, "pa*Dan")
    waiting = asyncio.ensure_future(bus.wait([LOBBY], ala, timeout=5))
    await asyncio.sleep(0)
    assert not waiting.done()
    timers.advance(LOBBY_WAKE_EVERY)
    await asyncio.wait_for(waiting, 1)
    assert await woken_by(lambda: bus.publish(7, "m1"))  # a table's event: at once
    assert await woken_by(lambda: bus.send(ala, LOBBY, "e..."))  # the player's own: at once
    timers.advance(LOBBY_WAKE_EVERY)
    assert await woken_by(lambda: bus.publish(LOBBY, "pd*Bob"))  # quiet for a period: at once again


async def test_a_push_connection_gets_the_lobbys_news_at_most_every_pushed_period() -> None:
    """A push connection never goes away: a busy lobby would send thousands of them a frame a second,
    more than a client polling every 2 s gets. Its lobby news is paced on its own (2 s), the long
    polls' as before (1 s), and its own tables' events still come at once."""
    assert PUSHED_LOBBY_WAKE_EVERY > LOBBY_WAKE_EVERY
    timers = ManualTimers()
    bus = _bus(timers)
    ala, bob = _player(), Player(secret="bob456", nick="*Bob", lang="en", inbox=EventLog(10))
    bus.publish(LOBBY, "pa*Cyd")  # both paces have just woken: the next lobby news waits for them
    pushed = asyncio.ensure_future(bus.wait([LOBBY, 7], ala, timeout=5, pushed=True))
    polled = asyncio.ensure_future(bus.wait([LOBBY], bob, timeout=5))
    await asyncio.sleep(0)
    assert bus.pushed_lobby and not pushed.done()
    bus.publish(LOBBY, "pa*Dan")
    timers.advance(LOBBY_WAKE_EVERY)
    await asyncio.wait_for(polled, 1)  # the long poll: a period later
    await asyncio.sleep(0)
    assert not pushed.done()
    timers.advance(PUSHED_LOBBY_WAKE_EVERY - LOBBY_WAKE_EVERY)
    await asyncio.wait_for(pushed, 1)  # the push connection: its own, longer period later
    assert not bus.pushed_lobby and not ala.waiters

    pushed = asyncio.ensure_future(bus.wait([LOBBY, 7], ala, timeout=5, pushed=True))
    await asyncio.sleep(0)
    bus.publish(LOBBY, "pa*Eve")
    bus.publish(7, "m1")  # a table's event: at once, with no wait for the lobby's period
    await asyncio.wait_for(pushed, 1)
    assert not bus.pushed_lobby and not bus.channels[7].waiters


async def test_thousands_of_readers_are_woken_a_slice_a_turn_of_the_loop() -> None:
    """Waking every reader of a busy lobby in one turn would hold the loop for as long as their
    replies take (about a second at 10,000 push connections): no connection accepted, no move carried.
    A slice now, the rest one slice a turn, with the loop's other work in between."""
    bus = _bus()
    players = [Player(secret=f"s{n}", nick=f"*P{n}", lang="en", inbox=EventLog(10)) for n in range(600)]
    waits = [
        asyncio.ensure_future(bus.wait([LOBBY], p, timeout=5, pushed=n % 2 == 0))
        for n, p in enumerate(players)
    ]
    await asyncio.sleep(0)
    turns: list[int] = []
    bus.publish(LOBBY, "pa*Ala")  # the first lobby news: both paces wake at once
    asyncio.get_running_loop().call_soon(lambda: turns.append(sum(w.done() for w in waits)))
    assert turns == []
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    # other work ran after the first slices were woken and before the last ones were
    assert turns and turns[0] < len(waits)
    await asyncio.wait_for(asyncio.gather(*waits), 1)
    assert not bus.channels[LOBBY].waiters and not bus.pushed_lobby
    assert len(players) // 2 > WAKE_SLICE  # each pace had more than a slice to wake


def test_numbering_goes_on_above_an_earlier_run_and_starts_again_past_a_java_int() -> None:
    bus = _bus(ManualTimers())
    bus.continue_after(500)
    assert bus.last == 500 and bus.channels[LOBBY].log.dropped == 500
    bus.continue_after(2**30)
    assert bus.last == 500  # numbers never go back: every old msgNo is beyond j and gets the whole state
