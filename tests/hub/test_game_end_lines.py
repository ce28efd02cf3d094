"""What the players at a table read when its game ends with nothing to archive (resigned or called off
before the first dot): the result in the table's own `x` line, as a game with moves has it once it is
archived. Only the lobby's `x` said it, so a bot's feed, which reads the table, never told the bot its
game had ended (docs/bots.md, `gameEnd`), and the example bot waited on it for good."""

from __future__ import annotations

from server.protocol.botfeed import Feed
from tests.hub.test_new_game_lines import a_game_of_ala_and_bob
from tests.hub.test_seeks import Lobby


def test_a_game_resigned_before_any_dot_ends_at_the_table_too() -> None:
    lobby = Lobby()
    uid, room = a_game_of_ala_and_bob(lobby)
    feed = Feed("*Ala")
    feed.read("/".join(lobby.reply("ala1")))  # the table as Ala sat down at it
    lobby.send("bob1" if room.red == "*Bob" else "ala1", f"u.{uid}.resign")

    reply = lobby.reply("ala1")
    table = reply[reply.index(f"q{uid}") :]
    assert f"x{uid}.1.B+R." in table
    events, _ = feed.read("/".join(reply))
    assert {"type": "gameEnd", "table": uid, "result": "B+R"} in [
        {key: event.get(key) for key in ("type", "table", "result")} for event in events
    ]
