"""The game clock on its own, driven by a manual timer."""

from __future__ import annotations

import gc
import json

from server.hub.clock import Clock, ManualTimers


def test_the_increment_is_capped_but_a_gift_is_kept_through_the_next_move() -> None:
    timers = ManualTimers()
    clock = Clock(timers, 300, 5, lambda player: None)
    timers.advance(10)
    clock.moved(1, 2)
    assert clock.left(1) == 295  # 300 - 10 + 5

    clock.give(1, 200)  # the opponent's gift
    timers.advance(3)
    clock.moved(2, 1)
    timers.advance(4)
    clock.moved(1, 2)

    assert clock.left(1) == 495 - 4  # before the fix the move cut it to start + added = 305
    assert clock.left(2) == 300 - 3 + 5 == 302  # no gift: capped at 305 as usual


def test_set_state_gives_grace_before_the_player_on_move_is_charged() -> None:
    flagged: list[int] = []
    timers = ManualTimers()
    clock = Clock(timers, 60, 0, flagged.append)

    clock.set_state([20.0, 30.0, False, False, 0.0, 0.0], grace=60)
    timers.advance(79)
    assert (clock.left(1), flagged) == (1.0, [])
    timers.advance(2)
    assert flagged == [1]


def test_the_journalled_state_is_left_alone_by_the_collector_and_comes_back_from_json() -> None:
    """Every move's journal entry keeps the clocks' state while the game lasts (issue 19.2)."""
    timers = ManualTimers()
    clock = Clock(timers, 300, 5, lambda player: None)
    timers.advance(12.5)
    clock.moved(1, 2)
    state = clock.state()
    gc.collect()
    assert not gc.is_tracked(state)

    again = Clock(ManualTimers(), 300, 5, lambda player: None)
    again.set_state(json.loads(json.dumps(state)))  # as the store gives it back: an array
    assert again.state() == state and again.left(1) == 292.5
