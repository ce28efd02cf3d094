"""Invitations between a bot and a person of two members of a cluster (docs/cluster.md, "Invitations
across members"), on members joined as server/cluster/lobby.py joins them: a rated one is refused
`botUnrated` whichever side is the bot, as on one member (docs/bots.md), because each member knows
the other's bots by the `R` in their `i` lines and by what an invitation says of its inviter."""

from __future__ import annotations

import pytest

from server.engine.gametype import parse_game_type
from server.hub.hub import Hub
from server.hub.persistence import Account
from server.hub.visiting import person
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


def ala_on_a_with_bobs_on_b(bobs: int) -> Link:
    """*Ala and *Cyd on member a; *Bob0, *Bob1, ... on member b."""
    link = Link()
    a, b = link.hubs["a"], link.hubs["b"]
    a.guest_login("alaAla11", "*Ala", "en")
    a.guest_login("cydCyd33", "*Cyd", "en")
    for n in range(bobs):
        b.guest_login(f"bob{n}Bob22", f"*Bob{n}", "en")
    link.deliver()
    return link


def games_at(hub: Hub) -> list[list[str]]:
    return [sorted(table.room.lineup.seats) for table in hub.tables.values() if table.room is not None]


def test_unfinished_games_at_another_member_count_towards_a_players_cap() -> None:
    """The cap of unfinished games is a player's, not a member's: each member counted only its own
    tables, so *Ala played five games at member b and five more at member a."""
    link = ala_on_a_with_bobs_on_b(5)
    a, b = link.hubs["a"], link.hubs["b"]
    for n in range(5):  # each accepted at b: the tables are b's
        a.invite("alaAla11", f"*Bob{n}", FREE)
        link.deliver()
        b.answer_invitation(f"bob{n}Bob22", "a")
        link.deliver()
    assert sorted(a.players["alaAla11"].tables) == [0, 1, 2, 3, 4, 5]  # the lobby and b's five tables
    assert games_at(a) == []
    with pytest.raises(ProtocolError) as refused:
        a.invite("alaAla11", "*Cyd", FREE)
    assert refused.value.code == "tooManyGames"
    assert str(refused.value) == "*Ala has 5 unfinished games already (at most 5)."
    a.invite("cydCyd33", "*Ala", FREE)
    with pytest.raises(ProtocolError) as refused:
        a.answer_invitation("alaAla11", "a")
    assert refused.value.code == "tooManyGames"

    b.propose("bob0Bob22", "1", "resign")  # one of them ends: room for one more
    link.deliver()
    a.answer_invitation("alaAla11", "a")
    assert games_at(a) == [["*Ala", "*Cyd"]]


def test_the_member_that_opens_a_table_counts_the_players_games_at_the_others() -> None:
    """*Bob0 accepts at member b an invitation *Ala sent before she sat down at five games of member a,
    b having lost a's word that sitting down withdrew it: b refuses him, as a would."""
    link = ala_on_a_with_bobs_on_b(1)
    a, b = link.hubs["a"], link.hubs["b"]
    a.invite("alaAla11", "*Bob0", FREE)
    link.deliver()
    link.losing = lambda message: "invitation_ended" in message
    for n in range(5):
        a.guest_login(f"eve{n}Eve44", f"*Eve{n}", "en")
        a.open_table(parse_game_type(FREE), "*Ala", f"*Eve{n}")  # as an organiser's setUpTable would
    link.deliver()
    with pytest.raises(ProtocolError) as refused:
        b.answer_invitation("bob0Bob22", "a")
    assert refused.value.code == "tooManyGames"
    assert str(refused.value) == "*Ala has 5 unfinished games already (at most 5)."
    assert games_at(b) == []
