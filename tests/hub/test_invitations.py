"""Invitations (docs/protocol.md, "Invitations"): what an acceptance that cannot open a table tells the
player who accepts."""

from __future__ import annotations

import random

import pytest

from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.limits import Caps
from server.hub.model import Origin
from server.protocol.codec import ProtocolError

FREE = "0808s0..a.F.n...."  # 8x8, free, no clock


def guests_whose_network_holds_its_tables() -> Hub:
    """*Mal and *Mel play from 192.0.2.5, and their network's guests may hold one table: *Mil, of
    another address of that network, may begin no game; *Ala, *Bob and *Cid come from elsewhere."""
    hub = Hub(
        timers=ManualTimers(), rng=random.Random(4), caps=Caps(guest_tables_per_address=1, network_factor=1)
    )
    for secret, nick, host in [
        ("mal1", "*Mal", "192.0.2.5"),
        ("mel1", "*Mel", "192.0.2.5"),
        ("mil1", "*Mil", "192.0.2.9"),
    ]:
        hub.guest_login(secret, nick, "en", Origin(host, False, "192.0.2.0/24"))
    for secret, nick in [("ala1", "*Ala"), ("bob1", "*Bob"), ("cid1", "*Cid")]:
        hub.guest_login(secret, nick, "en", Origin("198.51.100.7", False, "198.51.100.0/24"))
    hub.invite("mal1", "*Mel", FREE)
    hub.answer_invitation("mel1", "a")
    return hub


@pytest.mark.parametrize("whom", ["*Ala", "*Ala,*Bob,*Cid"])
def test_an_acceptance_refused_for_the_inviters_network_names_the_inviter_not_the_network(whom: str) -> None:
    """*Ala was told `Guests from your network (192.0.2.0/24) ...`: *Mil's network, as if it were hers."""
    hub = guests_whose_network_holds_its_tables()
    hub.invite("mil1", whom, FREE)
    for secret in ("bob1", "cid1")[: whom.count(",")]:
        hub.answer_invitation(secret, "a")

    with pytest.raises(ProtocolError) as refused:
        hub.answer_invitation("ala1", "a")

    assert refused.value.code == "tooManyTables"
    assert str(refused.value) == (
        "*Mil cannot begin a game now: guests from the same address or network hold their most game tables."
    )
    assert (
        hub.invites.incoming[hub.players["ala1"]].inviter.nick == "*Mil"
    )  # it stays, for when there is room
    assert len([table for table in hub.tables.values() if table.room is not None]) == 1
