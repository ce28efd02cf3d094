"""The hourly counts' side of a cluster (server/hub/hourly.py): what another member did comes with its
age, in its place among this member's own, and what this member counts is handed on with its keys."""

from __future__ import annotations

import pytest

from server.hub.hourly import GAMES_BEGUN, HOUR, Hourly, Key
from server.hub.mailbox import EventLog
from server.hub.model import Player
from server.protocol.codec import ProtocolError


class Clock:
    def __init__(self) -> None:
        self.time = 10_000.0

    def __call__(self) -> float:
        return self.time


def guest(nick: str) -> Player:
    player = Player(secret=f"{nick}-id", nick=nick, lang="en", inbox=EventLog(10))
    player.host, player.network = "192.0.2.7", "192.0.2.0/24"
    return player


def test_another_members_games_count_from_when_they_began() -> None:
    clock = Clock()
    begun = Hourly(GAMES_BEGUN, 60, 2, 4, clock)
    handed_on: list[tuple[Key, ...]] = []
    begun.shared = handed_on.append
    begun.add([guest("*Ala")])
    assert handed_on == [(("host", "192.0.2.7"), ("network", "192.0.2.0/24"), ("nick", "*ala"))]

    begun.take([("host", "192.0.2.7"), ("nick", "*cyd")], HOUR - 600)  # heard late: the oldest
    begun.take([("host", "192.0.2.7"), ("unknown", "x")], HOUR)  # an hour old: not counted
    with pytest.raises(ProtocolError) as refused:
        begun.check_bound(guest("*Eve"), "gameFlood")
    assert str(refused.value).endswith("log in with an account, or wait 10 minutes.")
    assert handed_on == [(("host", "192.0.2.7"), ("network", "192.0.2.0/24"), ("nick", "*ala"))]  # not again

    clock.time += 600  # the other member's game is an hour old: one left
    begun.check_bound(guest("*Eve"), "gameFlood")
    assert ("unknown", "x") not in begun.done
