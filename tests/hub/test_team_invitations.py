"""Team invitations (docs/teams.md): one player names the others in turn order; each must accept before
the table opens, any one may reject, the inviter may cancel; the `vg`/`vs` lines name both teams and
who has accepted."""

from __future__ import annotations

import random

import pytest

from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.persistence import Account
from server.protocol.botfeed import Feed
from server.protocol.codec import ProtocolError, parse_commands

FREE = "0808s0..a.F.n...."  # 8x8, free, no clock, the inviter's team starts
PLAYERS = {"ala1": "*Ala", "bob1": "*Bob", "cid1": "*Cid", "dan1": "*Dan", "eve1": "*Eve"}


def lobby() -> Hub:
    hub = Hub(timers=ManualTimers(), rng=random.Random(4))
    for secret, nick in PLAYERS.items():
        hub.guest_login(secret, nick, "en")
    return hub


def invitation_lines(hub: Hub, secret: str) -> list[str]:
    reply = hub.reply(secret, hub.counter.last, with_subscriptions=False)
    return [line for line in reply.split("/") if line[:2] in ("vg", "vs", "vr")]


def test_every_invited_player_accepts_then_the_table_opens_in_turn_order() -> None:
    hub = lobby()
    hub.invite("ala1", "*Bob,*Cid,*Dan", FREE)  # *Bob and *Dan against *Ala and her team-mate *Cid

    teams = ".*Ala,*Cid.*Bob,*Dan."
    assert invitation_lines(hub, "ala1") == [f"vs*Bob.{FREE}{teams}"]
    assert invitation_lines(hub, "dan1") == [f"vg*Ala.{FREE}{teams}"]
    assert invitation_lines(hub, "eve1") == []
    hub.answer_invitation("dan1", "a")
    hub.answer_invitation("cid1", "a")
    assert invitation_lines(hub, "bob1") == [f"vg*Ala.{FREE}{teams}*Cid,*Dan"]
    assert list(hub.tables) == [0]

    hub.receive("bob1", parse_commands("v1.0.a"))  # the last one, from a poll

    uid = max(hub.tables)
    room = hub.tables[uid].room
    assert room is not None
    assert room.description() == f"d{uid}.{FREE}.*Ala,*Cid.*Bob,*Dan"
    assert all(uid in hub.players[secret].tables for secret in ("ala1", "bob1", "cid1", "dan1"))
    assert invitation_lines(hub, "ala1") == invitation_lines(hub, "bob1") == []


@pytest.mark.parametrize(("who_starts", "blue_team"), [("a", "*Ala,*Cid"), ("p", "*Bob,*Dan")])
def test_the_game_type_says_which_team_is_blue(who_starts: str, blue_team: str) -> None:
    hub = lobby()
    hub.invite("ala1", "*Bob,*Cid,*Dan", f"0808s0..{who_starts}.F.n....")
    for secret in ("bob1", "cid1", "dan1"):
        hub.answer_invitation(secret, "a")

    room = hub.tables[max(hub.tables)].room
    assert room is not None and room.description().split(".")[-2] == blue_team


def test_one_rejection_ends_the_invitation_for_everyone() -> None:
    hub = lobby()
    hub.invite("ala1", "*Bob,*Cid,*Dan", FREE)
    hub.answer_invitation("cid1", "a")

    hub.answer_invitation("dan1", "r")

    assert invitation_lines(hub, "ala1") == ["vr*Dan"]
    assert all(invitation_lines(hub, secret) == [] for secret in ("bob1", "cid1", "dan1"))
    assert list(hub.tables) == [0] and not hub.incoming


def test_the_inviter_cancels_and_a_player_who_logs_out_takes_the_invitation_away() -> None:
    hub = lobby()
    hub.invite("ala1", "*Bob,*Cid,*Dan", FREE)
    hub.answer_invitation("ala1", "c")
    assert not hub.invitations and not hub.incoming

    hub.invite("ala1", "*Bob,*Cid,*Dan", FREE)
    hub.logout("cid1")
    assert not hub.invitations and not hub.incoming
    assert invitation_lines(hub, "bob1") == []


@pytest.mark.parametrize(
    ("whom", "code"),
    [
        ("*Bob,*Cid", "badTeams"),  # three players
        ("*Bob,*Cid,*Dan,*Eve", "badTeams"),
        ("*Bob,*Cid,*bob", "badTeams"),
        ("*Bob,*Ala,*Dan", "badTeams"),
        ("*Bob,*Cid,*Zed", "notOnline"),
        ("*Bob,*Cid,AI easy", "badTeams"),
    ],
)
def test_bad_team_invitations_change_nothing(whom: str, code: str) -> None:
    hub = lobby()

    with pytest.raises(ProtocolError) as refused:
        hub.invite("ala1", whom, FREE)

    assert refused.value.code == code
    assert not hub.invitations and not hub.incoming


def test_a_player_answering_a_team_invitation_is_busy_for_others() -> None:
    hub = lobby()
    hub.invite("ala1", "*Bob,*Cid,*Dan", FREE)
    hub.answer_invitation("bob1", "a")

    with pytest.raises(ProtocolError) as refused:
        hub.invite("eve1", "*Bob", FREE)
    assert refused.value.code == "busy"
    with pytest.raises(ProtocolError) as refused:
        hub.invite("eve1", "*Dan,*Cid,*Ala", "0808s0..a.A.n....")  # a team game against the computer type
    assert refused.value.code == "badGameType"


def test_a_bot_may_be_invited_to_a_team_game_of_a_ranked_type_since_team_games_are_unrated() -> None:
    """A bot and a person play unrated games only (docs/bots.md), and a team game is unrated whatever its
    type (docs/teams.md). Before, a team invitation of a ranked type naming a bot was refused
    `botUnrated`, for a rating the game never touches."""
    hub = lobby()
    hub.login("robo1", Account("Robo", 1500, 0, 0, 0, bot=True))

    hub.invite("ala1", "*Bob,Robo,*Dan", "0808s0..a.R.n....")
    feed = Feed("Robo")
    (offer,) = feed.read(hub.reply("robo1", 0, with_subscriptions=False))[0]
    assert offer["type"] == "invitation" and offer["rated"] is False  # bots decline rated invitations
    for secret in ("bob1", "robo1", "dan1"):
        hub.answer_invitation(secret, "a")

    room = hub.tables[max(hub.tables)].room
    assert room is not None and room.lineup.seats == ("*Ala", "*Bob", "Robo", "*Dan")
