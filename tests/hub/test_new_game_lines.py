"""What a player is told just after a new game begins at their table: the table leaves their next reply
(server/hub/tables.py, `show_again`) and comes back as its whole state, which holds no line for one
player, so a refusal written to the table's section in between was never read."""

from __future__ import annotations

from server.hub.room import Room
from server.protocol.codec import decode_client_text
from tests.hub.test_seeks import FREE, Lobby

SECRETS = {"*Ala": "ala1", "*Bob": "bob1"}


def a_game_of_ala_and_bob(lobby: Lobby) -> tuple[int, Room]:
    """*Ala invites *Bob to a free game (she is blue) and he accepts: its table and its room."""
    lobby.send("ala1", f"v.0.s.*Bob.{FREE}")
    lobby.send("bob1", "v.0.a")
    uid = max(uid for uid, table in lobby.hub.tables.items() if table.room is not None)
    room = lobby.hub.tables[uid].room
    assert room is not None
    return uid, room


def test_a_refusal_right_after_a_new_game_is_told_in_the_lobby() -> None:
    lobby = Lobby()
    uid, room = a_game_of_ala_and_bob(lobby)
    lobby.hub.move(SECRETS[room.blue], str(uid), "aa")
    lobby.hub.propose(SECRETS[room.red], str(uid), "resign")
    lobby.timers.advance(1)
    lobby.send("ala1", f"u.{uid}.new")
    lobby.send("bob1", f"u.{uid}.new")
    assert room.games_played == 1

    not_on_move = SECRETS[room.red]
    told = lobby.refusals(lobby.send(not_on_move, f"s.{uid}.bb"))
    told += lobby.refusals(lobby.reply(not_on_move))
    assert [decode_client_text(line) for line in told] == ["Move bb refused: it is not your move."]
