"""An invitation that lapses over the wire: its `vg` and `vs` lines go from the next replies, as a
cancelled one's do, which is how MultiPoints and the built-in client learn that it ended (MultiPoints
drops an incoming invitation whose `vg` a reply no longer lists)."""

from __future__ import annotations

from server.hub.invitations import INVITATION_LIFETIME
from tests.web.test_games import Players
from tests.web.test_tournament import Organiser, organiser  # noqa: F401 (the fixture)
from tests.web.zagram import Zagram

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


async def test_an_inviter_an_organiser_seats_withdraws_the_invitation(
    organiser: Organiser,  # noqa: F811
) -> None:
    """setUpTable seats *Ala while her invitation to *Bob is out: it leaves both replies, as a cancelled
    one does, so that Bob's accepting it cannot open a second table under her."""
    client = organiser.client
    ala, bob = Zagram(client, "ala123", "*Ala"), Zagram(client, "bob456", "*Bob")
    for guest in (ala, bob):
        assert await guest.login() == ""
        await guest.poll()
    ala.send("v", 0, f"s.*Bob.{FREE}")
    await ala.poll()
    assert (await bob.poll()).lines(0, "vg") == [f"vg*Ala.{FREE}"]

    assert await organiser.set_up(pl1="*Ala", pl2="*Cid") == "ok.1"

    assert (await bob.poll()).lines(0, "vg") == []
    assert (await ala.poll()).lines(0, "vs") == []
    assert await bob.get(co="zaproszenieTak", idGracza=bob.secret) == "err.noInvitation"
    assert [table.uid for table in organiser.hub.tables.values() if table.room is not None] == [1]
