"""Game actions are limited per player and per table: a flood is refused clearly and changes nothing,
a game played at any human speed never meets the limit."""

from __future__ import annotations

import random

import pytest

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.model import PLAYER_ACTIONS, Origin
from server.protocol.codec import ProtocolError, parse_commands

ANALYSIS = "1010s0..a.a.n...c___SUsuen*Ala."


def hub_with(timers: ManualTimers) -> Hub:
    hub = Hub(timers=timers, rng=random.Random(5), clock=lambda: 1_700_000_000.0)
    hub.guest_login("ala123", "*Ala", "en")
    hub.guest_login("bob456", "*Bob", "en")
    return hub


def test_a_flood_of_moves_and_take_backs_is_refused_beyond_the_burst_then_at_the_rate() -> None:
    timers = ManualTimers()
    hub = hub_with(timers)
    hub.invite("ala123", "*Ala", ANALYSIS)
    uid = max(hub.tables)
    refused = 0
    for _ in range(50):
        try:
            hub.move("ala123", str(uid), "ee", colour=1)
            hub.propose("ala123", str(uid), "undo")
        except ProtocolError as error:
            assert error.code == "tooFast"
            refused += 1
    _, burst = PLAYER_ACTIONS
    assert refused == 50 - int(burst) // 2
    room = hub.tables[uid].room
    assert room is not None and room.game.moves == []  # nothing refused changed the board
    before = hub.tables[uid].journal_seq
    hub.receive("ala123", parse_commands("/".join(f"s{n}.{uid}.ff" for n in range(1, 6))))
    assert hub.tables[uid].journal_seq == before  # refused inside the stream too: a line, no entry

    timers.advance(1.0)
    hub.move("ala123", str(uid), "ee", colour=1)  # a second later, some more may go
    assert len(room.game.moves) == 1


def test_a_fast_human_game_never_meets_the_limit() -> None:
    timers = ManualTimers()
    hub = hub_with(timers)
    uid = hub.open_table(parse_game_type("2020stanF0.0.0"), "*Ala", "*Bob").uid
    players = ["ala123", "bob456"]
    for n in range(300):  # a move every 0.3 s, the fastest blitz, with premoves in bursts
        x, y = divmod(n, 20)
        hub.move(players[n % 2], str(uid), "abcdefghijklmnopqrst"[x] + "abcdefghijklmnopqrst"[y])
        timers.advance(0.0 if n % 10 < 3 else 0.3)
    room = hub.tables[uid].room
    assert room is not None and len(room.game.moves) == 300


def test_a_tournament_bot_from_an_unlimited_address_is_not_limited() -> None:
    timers = ManualTimers()
    hub = Hub(timers=timers, rng=random.Random(5))
    hub.guest_login("bot111", "*Bot", "en", Origin("192.0.2.1", unlimited=True))
    hub.invite("bot111", "*Bot", "1010s0..a.a.n...c___SUsuen*Bot.")
    uid = max(hub.tables)
    for _ in range(100):
        hub.move("bot111", str(uid), "ee", colour=1)
        hub.propose("bot111", str(uid), "undo")
    with pytest.raises(ProtocolError):
        hub.propose("bot111", str(uid), "undo")  # nothing left to take back: the usual refusal
