"""What a visitor (docs/cluster.md, "Tables across members") is told after a new game begins at a table of
another member: as on one member (tests/hub/test_new_game_lines.py), a refusal goes to the lobby only while
the new game keeps the table out of their replies, and to the table again once its whole state came."""

from __future__ import annotations

import asyncio

from server.protocol.codec import decode_client_text
from tests.hub.test_acknowledged import Link, game_across
from tests.hub.test_sessions import poll

REFUSED = "Move cc refused: it is not your move."


def told(lines: list[str]) -> list[str]:
    return [decode_client_text(line.split(".e.", 1)[1]) for line in lines if line.startswith("ca")]


async def new_game_across(link: Link) -> tuple[int, int]:
    """Ala on member a and Bob on member b, at a table of a: a game resigned and a new one agreed, which Bob
    begins (blue); the table, and what Bob's replies had read before the new game."""
    a, b = link.hubs["a"], link.hubs["b"]
    uid, _ = game_across(link)
    seen = poll(b, "bobBob22", 0).last
    a.move("alaAla11", str(uid), "aa")
    link.deliver()
    b.propose("bobBob22", str(uid), "resign")
    link.deliver()
    link.timers.advance(1)
    a.propose("alaAla11", str(uid), "new")
    b.propose("bobBob22", str(uid), "new")
    link.deliver()
    await asyncio.sleep(0)  # the new game's whole state goes to member b once it is set up
    link.deliver()
    room = a.tables[uid].room
    assert room is not None and room.games_played == 1 and room.blue == "*Bob"
    return uid, seen


def refused_on_b(link: Link, uid: int) -> None:
    """Bob moves, and once more while Ala is on move."""
    b = link.hubs["b"]
    b.move("bobBob22", str(uid), "bb")
    b.move("bobBob22", str(uid), "cc")
    link.deliver()


async def test_a_visitors_refusal_after_a_new_game_is_told_at_the_table() -> None:
    """Before, the owner kept the visitor's mark of the new game for good (a visitor never polls there), so
    every later refusal at that table was told in the visitor's lobby (test failed before the fix)."""
    link = Link()
    uid, seen = await new_game_across(link)
    b = link.hubs["b"]
    seen = poll(b, "bobBob22", seen).last  # the reply without the table
    whole = poll(b, "bobBob22", seen)
    assert uid in whole.sections  # the new game's whole state
    refused_on_b(link, uid)
    reply = poll(b, "bobBob22", whole.last)
    assert reply.lines(uid, "sa") == ["sa;B[bb]"]
    assert told(reply.lines(uid)) == [REFUSED]
    assert told(reply.lines(0)) == []


async def test_a_visitors_refusal_while_the_new_game_keeps_the_table_out_is_told_in_the_lobby() -> None:
    """Bob's member decides, as it marks his replies: the reply that leaves the table out for the new
    game has the line in the lobby."""
    link = Link()
    uid, seen = await new_game_across(link)
    refused_on_b(link, uid)
    reply = poll(link.hubs["b"], "bobBob22", seen)
    assert uid not in reply.sections
    assert told(reply.lines(0)) == [REFUSED]
