"""A login seats the player back at the unfinished games they have a seat at, found by their nick
(`Tables.seats`) instead of by walking every open table; a table that closes leaves nothing in it."""

from __future__ import annotations

import random

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.model import LOBBY

GAME = parse_game_type("0808stanF0.0.0")


def test_a_player_logging_in_again_sits_back_at_their_unfinished_games_only() -> None:
    hub = Hub(timers=ManualTimers(), rng=random.Random(1))
    for secret, nick in (("ala123", "*Ala"), ("bob456", "*Bob"), ("cid789", "*Cid")):
        hub.guest_login(secret, nick, "en")
    first = hub.open_table(GAME, "*Ala", "*Bob").uid
    finished = hub.open_table(GAME, "*Cid", "*Ala")
    closed = hub.open_table(GAME, "*Ala", "*Cid")
    others = hub.open_table(GAME, "*Bob", "*Cid").uid
    last = hub.open_table(GAME, "*Cid", "*Ala").uid
    assert finished.room is not None
    finished.room.propose("*Cid", "resign")
    hub.games.close(closed)
    assert hub.logout("ala123")
    assert hub.players["bob456"].tables == [LOBBY, first, others]

    hub.guest_login("ala999", "*Ala", "en")  # a stranger who took the nick: not at Ala's games
    assert hub.players["ala999"].tables == [LOBBY]
    assert hub.logout("ala999")

    hub.guest_login("ala123", "*Ala", "en")

    assert hub.players["ala123"].tables == [LOBBY, first, last]
    assert list(hub.tables.seats["*Ala"]) == [first, finished.uid, last]


def test_closed_tables_leave_no_seats_behind() -> None:
    hub = Hub(timers=ManualTimers(), rng=random.Random(1))
    hub.guest_login("ala123", "*Ala", "en")
    hub.guest_login("bob456", "*Bob", "en")
    tables = [hub.open_table(GAME, "*Ala", "*Bob") for _ in range(3)]
    assert list(hub.tables.seats) == ["*Ala", "*Bob"]

    for table in tables:
        hub.games.close(table)

    assert hub.tables.seats == {}


def test_a_players_copy_left_at_a_table_by_a_member_gone_does_not_take_their_place() -> None:
    """issue 44: a member died with its player visiting a table here; her session came here (taken from
    the store) and she sat down while her copy from that member still sat there. Her entry replaced the
    copy's, the copy's leaving (the member found gone) took hers out, and her own leaving then failed with
    a KeyError (logged as a traceback in the hand-over of her session)."""
    hub = Hub(timers=ManualTimers(), rng=random.Random(1))
    hub.guest_login("ala123", "*Ala", "en")
    hub.guest_login("bob456", "*Bob", "en")
    uid = hub.open_table(GAME, "*Ala", "*Bob").uid
    hub.visitors.enter("kropki-b", uid, {"nick": "*Cyd", "guest": True, "seat": "cydseat"})
    hub.guest_login("cyd789", "*Cyd", "en")
    cyd = hub.players["cyd789"]
    hub.tables.subscribe(cyd, uid)
    hub.visitors.member_gone("kropki-b")
    assert hub.tables[uid].people["*Cyd"] is cyd
    assert hub.logout("cyd789")
    assert "*Cyd" not in hub.tables[uid].people
