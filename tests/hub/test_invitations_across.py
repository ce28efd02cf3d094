"""Invitations between a bot and a person of two members of a cluster (docs/cluster.md, "Invitations
across members"), on members joined as server/cluster/lobby.py joins them: a rated one is refused
`botUnrated` whichever side is the bot, as on one member (docs/bots.md), because each member knows
the other's bots by the `R` in their `i` lines and by what an invitation says of its inviter."""

from __future__ import annotations

import pytest

from server.hub.mirrors import person
from server.hub.persistence import Account
from server.protocol.codec import ProtocolError
from tests.hub.test_acknowledged import Link

RATED = "2020s0.4.a.R.a.180.2.."
FREE = "2020s0.4.a.F.a.180.2.."


def robo_on_a_cyd_on_b() -> Link:
    link = Link()
    link.hubs["a"].login("robo12345678", Account("Robo", 1500, 0, 0, 0, bot=True))
    link.hubs["b"].guest_login("cydCyd33", "*Cyd", "en")
    link.deliver()
    return link


def invitations_sent(link: Link) -> list[object]:
    return [message for _, _, message in link.queue if isinstance(message, dict) and "invite" in message]


def test_a_bots_rated_invitation_to_a_person_of_another_member_is_refused_at_once() -> None:
    link = robo_on_a_cyd_on_b()
    a, b = link.hubs["a"], link.hubs["b"]
    with pytest.raises(ProtocolError) as refused:
        a.invite("robo12345678", "*Cyd", RATED)
    assert refused.value.code == "botUnrated"
    assert a.invites.invitations == {} and invitations_sent(link) == []

    a.invite("robo12345678", "*Cyd", FREE)
    link.deliver()
    assert b.invites.incoming[b.players["cydCyd33"]].inviter.nick == "Robo"


def test_a_persons_rated_invitation_to_a_bot_of_another_member_is_refused_at_once() -> None:
    link = robo_on_a_cyd_on_b()
    a, b = link.hubs["a"], link.hubs["b"]
    with pytest.raises(ProtocolError) as refused:
        b.invite("cydCyd33", "Robo", RATED)  # b knows Robo is a bot: `R` in its `i` line from a
    assert refused.value.code == "botUnrated"
    assert b.invites.invitations == {} and invitations_sent(link) == []

    b.invite("cydCyd33", "Robo", FREE)
    link.deliver()
    assert a.invites.incoming[a.players["robo12345678"]].inviter.nick == "*Cyd"


def test_the_invitees_member_refuses_a_rated_invitation_from_a_bot_of_another() -> None:
    """What b checks of an invitation a sends it (a checked it too): the inviter is a bot."""
    link = robo_on_a_cyd_on_b()
    a, b = link.hubs["a"], link.hubs["b"]
    b.take_from_member("a", {"invite": [person(a.players["robo12345678"]), "*Cyd", RATED]})
    assert b.invites.incoming == {}
    [(to, _, answer)] = link.queue
    assert to == "a" and answer["invitation_ended"][:3] == ["Robo", "*Cyd", "refused"]
