"""The actions people here sent to a member found gone, waiting for its tables' take-over (docs/cluster.md,
"A bad day"). Given up at once, they were sent again by their clients before the table was anywhere,
and refused "There is no game table N." (benchmarks/chaos.py: 21-52 moves a run). Now they are given up
(their clients send them again: Mirrors._given_up) once the table of one of them is taken over (its `d`
line, or this member's own take-over), or TAKEOVER_WAIT after the death was found.

TAKEOVER_WAIT is short beside the k such an action may hold (UNCONFIRMED_AT_MOST from its sending): the
death is found within 12 s of it, and every member looks for the dead member's tables when it finds it.
"""

from __future__ import annotations

from collections.abc import Callable

from server.hub.clock import Handle
from server.hub.context import Context
from server.hub.model import Player
from server.protocol.codec import parse_number

TAKEOVER_WAIT = 6.0


class Orphans:
    def __init__(self, ctx: Context, give_up: Callable[[Player, str], None]) -> None:
        self._ctx, self._give_up = ctx, give_up
        self._waiting: dict[str, tuple[Handle, list[Player]]] = {}  # by the member found gone

    def __contains__(self, owner: str) -> bool:
        return owner in self._waiting

    def wait(self, owner: str, players: list[Player]) -> None:
        """`owner` was found gone: the actions these players sent it wait for a take-over."""
        if not players:
            return
        self._end(owner)
        timers = self._ctx.timers
        handle = timers.call_at(timers.now() + TAKEOVER_WAIT, lambda: self._give_all_up(owner))
        self._waiting[owner] = (handle, players)

    def taken_over(self, uid: int) -> None:
        """Table `uid` is somewhere again: the actions sent to it at its dead member go again."""
        for owner, (_, players) in list(self._waiting.items()):
            for player in players:
                if any(_table(message) == uid for message in player.acknowledged.unconfirmed(owner)):
                    self._give_up(player, owner)
            if not any(player.acknowledged.unconfirmed(owner) for player in players):
                self._end(owner)

    def _give_all_up(self, owner: str) -> None:
        _, players = self._waiting.pop(owner, (None, []))
        for player in players:
            if player.acknowledged.unconfirmed(owner):
                self._give_up(player, owner)

    def _end(self, owner: str) -> None:
        handle, _ = self._waiting.pop(owner, (None, []))
        if handle is not None:
            handle.cancel()


def _table(message: dict[str, object]) -> int | None:
    action = message.get("do")
    return parse_number(str(action[2])) if isinstance(action, list) and len(action) > 2 else None
