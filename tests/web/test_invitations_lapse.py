"""An invitation that lapses over the wire: its `vg` and `vs` lines go from the next replies, as a
cancelled one's do, which is how MultiPoints and the built-in client learn that it ended (MultiPoints
drops an incoming invitation whose `vg` a reply no longer lists)."""

from __future__ import annotations

from server.hub.invitations import INVITATION_LIFETIME
from tests.web.test_games import Players

FREE = "0808s0..a.F.n...."


async def test_a_lapsed_invitation_leaves_both_replies_and_cannot_be_accepted(game: Players) -> None:
    game.ala.send("v", 0, f"s.*Bob.{FREE}")
    await game.ala.poll()
    assert (await game.bob.poll()).lines(0, "vg") == [f"vg*Ala.{FREE}"]
    for _ in range(int(INVITATION_LIFETIME // 50)):  # both poll on, as open tabs do (the time-out is 60 s)
        game.timers.advance(50)
        await game.ala.poll()
        await game.bob.poll()
        game.hub.sweep()

    assert (await game.bob.poll()).lines(0, "vg") == []
    assert (await game.ala.poll()).lines(0, "vs") == []
    assert await game.bob.get(co="zaproszenieTak", idGracza=game.bob.secret) == "err.noInvitation"
    assert [table for table in game.hub.tables.values() if table.room is not None] == []
