"""What a player may do at a table, by name: the game actions (server/hub/games.py) and chat at a table
(server/hub/chats.py).

A person here takes them from a poll's commands or the old-style endpoints (Stream.act), and a person
of another member of a cluster at a table here through its member (Visitors.act): both go through this
one table, so that a visitor can do exactly what a person here can, and no more.
"""

from __future__ import annotations

from collections.abc import Callable

from server.hub.chats import Chats
from server.hub.games import Games

Action = Callable[..., None]  # (player, table, *the action's own arguments)
# A poll's commands that are actions at a table (docs/protocol.md): `c` chat, `s` a dot, `u` a
# proposition, `t` a pause.
AT_A_TABLE = {"c": "chat", "s": "move", "u": "propose", "t": "pause"}


def table_actions(games: Games, chats: Chats) -> dict[str, Action]:
    """Each action's name and the part's method that does it."""
    return {
        "chat": chats.chat,
        "move": games.move,
        "enclose": games.draw_enclosure,
        "propose": games.propose,
        "pause": games.pause,
        "stop": games.stop,
        "give": games.give_time,
    }
