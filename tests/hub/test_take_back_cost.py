"""A take-back replays the game from its start: in a long game it counts as more game actions
(docs/operations.md, "Abuse limits"), so that take-backs cannot fill the server's event loop."""

from __future__ import annotations

import random

import pytest

from server.engine.gametype import parse_game_type
from server.engine.moves import point_to_sgf
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.limits import MOVES_PER_ACTION
from server.hub.model import PLAYER_ACTIONS
from server.protocol.codec import ProtocolError
from tests.hub.test_acknowledged import Link
from tests.hub.test_sessions import poll

SIDE = 44
ANALYSIS = f"{SIDE}{SIDE}s0..a.a.n...c___SUsuen*Ala."
FREE = "ab"  # on a row left empty


def long_analysis() -> tuple[Hub, ManualTimers, str]:
    """*Ala's analysis table with a dot on every point of every other row (968 dots, no enclosure), placed
    no faster than she may; then she waits until she may act a whole burst again."""
    timers = ManualTimers()
    hub = Hub(timers=timers, rng=random.Random(1))
    hub.guest_login("ala123", "*Ala", "en")
    hub.invite("ala123", "*Ala", ANALYSIS)
    uid = str(max(hub.tables))
    for y in range(0, SIDE, 2):
        for x in range(SIDE):
            hub.move("ala123", uid, point_to_sgf((x, y)))
            timers.advance(0.15)
    timers.advance(60)
    return hub, timers, uid


def test_a_take_back_in_a_long_game_counts_as_more_game_actions() -> None:
    """Before, a dot and its take-back cost two game actions however long the game: 4 guests of one
    address taking dots back on 52x52 tables of 2,359 dots (27 ms of replay each) took half a core of
    the server and made another player's login and poll wait 1 s (benchmarks/abuse.py --only undo); 40
    guests of one network would have stopped the server."""
    hub, _, uid = long_analysis()
    room = hub.tables[int(uid)].room
    dots = len(room.game.moves)
    more = dots // MOVES_PER_ACTION
    assert dots == SIDE * SIDE // 2 and more == 9
    done = 0
    with pytest.raises(ProtocolError) as refused:
        while True:  # the clock stands still: one burst of game actions
            hub.move("ala123", uid, FREE)
            hub.propose("ala123", uid, "undo")
            done += 1
    assert refused.value.code == "tooFast"
    assert done == PLAYER_ACTIONS[1] // (2 + more) == 2  # before: 15
    assert f"counts as {more + 1} game actions" in str(refused.value)  # the take-back was refused...
    assert len(room.game.moves) == dots + 1  # ...and changed nothing: the dot is there


def test_a_take_back_in_a_short_game_is_one_game_action() -> None:
    timers = ManualTimers()
    hub = Hub(timers=timers, rng=random.Random(1))
    hub.guest_login("ala123", "*Ala", "en")
    hub.invite("ala123", "*Ala", ANALYSIS)
    uid = str(max(hub.tables))
    for _ in range(int(PLAYER_ACTIONS[1]) // 2):
        hub.move("ala123", uid, FREE)
        hub.propose("ala123", uid, "undo")
    assert not hub.tables[int(uid)].room.game.moves


def test_a_visitor_pays_for_its_take_backs_when_it_sits_down_again() -> None:
    """*Ala of member a plays *Bob at a table of member b, which charges her take-backs to her there (her
    own member counts each as one game action). Before, her account there went with her when she left
    the table, and she sat down again with a whole burst: leaving and sitting down between take-backs,
    she took back a long game as often as her own member let her act (5 a second), not 1 in 4 s."""
    link = Link("ab")
    a, b = link.hubs["a"], link.hubs["b"]
    a.guest_login("alaAla11", "*Ala", "en")
    b.guest_login("bobBob22", "*Bob", "en")
    link.deliver()
    uid = str(b.open_table(parse_game_type("2020stanF0.0.0"), "*Ala", "*Bob").uid)
    link.deliver()  # she sits down at it from member a
    rows = {"alaAla11": (a, range(0, 10, 2)), "bobBob22": (b, range(1, 10, 2))}  # no enclosure
    points = {
        secret: [point_to_sgf((x, y)) for y in ys for x in range(20)] for secret, (_, ys) in rows.items()
    }
    for turn in range(200):
        secret = "alaAla11" if turn % 2 == 0 else "bobBob22"
        rows[secret][0].move(secret, uid, points[secret][turn // 2])
        link.deliver()
        link.timers.advance(0.15)
    room = b.tables[int(uid)].room
    assert room is not None and len(room.game.moves) == 200  # each take-back counts 3 game actions
    link.timers.advance(60)

    def refused() -> bool:
        """Whether her next take-back is refused as too fast (the clock stands still)."""
        seen = poll(a, "alaAla11", 0).last
        a.propose("alaAla11", uid, "undo")
        link.deliver()
        return any("game actions" in line for line in poll(a, "alaAla11", seen).lines(int(uid), "ca"))

    taken = 0
    while not refused():
        taken += 1
    assert taken == PLAYER_ACTIONS[1] // 3
    a.change_table("alaAla11", 0)
    link.deliver()
    assert "*Ala" not in b.tables[int(uid)].people
    a.change_table("alaAla11", int(uid))
    link.deliver()
    assert "*Ala" in b.tables[int(uid)].people
    assert refused()  # as on one member
