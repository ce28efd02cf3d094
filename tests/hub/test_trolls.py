"""One troll with many networks against one victim: fresh guests, each from a network of its own, inviting
the victim and writing to them (docs/operations.md, "Abuse limits"), and what still reaches the victim
from everyone else."""

from __future__ import annotations

import random

import pytest

from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.invitations import GUEST_REJECTIONS, GUEST_REJECTIONS_WINDOW
from server.hub.limits import PRIVATE_FROM_GUESTS_PER_MINUTE, PRIVATE_TO_ONE_PER_MINUTE
from server.hub.model import Origin
from server.hub.persistence import Account
from server.protocol.codec import ProtocolError, parse_commands

FREE = "0808s0..a.F.n...."  # 8x8, free, no clock


def victim_and_troll() -> tuple[Hub, ManualTimers]:
    """*Vic is a guest online; the troll's guests come one at a time, each from a network of its own."""
    timers = ManualTimers()
    hub = Hub(timers=timers, rng=random.Random(7))
    hub.guest_login("vic1", "*Vic", "en", Origin("198.51.100.7", False, "198.51.100.0/24"))
    return hub, timers


def troll(hub: Hub, n: int) -> str:
    """A fresh guest of the troll's n-th network, as MultiPoints logs in: a new id and a new nick."""
    secret = f"tr{n:07d}"
    hub.guest_login(secret, f"*Guest{n}", "en", Origin(f"10.{n // 256}.{n % 256}.9", False, f"10.{n}.0.0/24"))
    return secret


def test_fresh_guests_cannot_keep_a_player_busy_for_everyone_by_inviting_them_again_and_again() -> None:
    """Each rejection was followed by a new guest's invitation, and *Vic answered one at a time: every
    honest guest was told `busy` for ever, and `v..b` and ignoring held one nick each."""
    hub, _ = victim_and_troll()
    for n in range(GUEST_REJECTIONS):
        hub.invite(troll(hub, n), "*Vic", FREE)
        hub.answer_invitation("vic1", "b")

    with pytest.raises(ProtocolError) as refused:
        hub.invite(troll(hub, 99), "*Vic", FREE)

    assert refused.value.code == "blocked"
    assert "not taking invitations from guests" in str(refused.value)
    assert hub.players["vic1"] not in hub.invites.incoming  # free for the others
    hub.login("bob1", Account("Bob", 1500, 0, 0, 0))
    hub.invite("bob1", "*Vic", FREE)  # an account is not free to make: it still may
    assert hub.invites.incoming[hub.players["vic1"]].inviter.nick == "Bob"


def test_a_guest_the_player_wrote_to_and_every_guest_after_the_window_may_invite_again() -> None:
    hub, timers = victim_and_troll()
    for n in range(GUEST_REJECTIONS):
        hub.invite(troll(hub, n), "*Vic", FREE)
        hub.answer_invitation("vic1", "r")
    hub.guest_login("ala1", "*Ala", "en", Origin("203.0.113.4", False, "203.0.113.0/24"))
    hub.chat_from("vic1", "_*Ala", "let us play")

    hub.invite("ala1", "*Vic", FREE)  # a friend asked for in a private line
    hub.invites.command(hub.players["ala1"], "c")
    timers.advance(GUEST_REJECTIONS_WINDOW)
    hub.invite(troll(hub, 50), "*Vic", FREE)  # the window over: guests again, a newcomer's first one too


def test_a_newcomers_first_invitation_and_a_few_rejections_are_untouched() -> None:
    hub, _ = victim_and_troll()
    for n in range(GUEST_REJECTIONS - 1):
        hub.invite(troll(hub, n), "*Vic", FREE)
        hub.answer_invitation("vic1", "r")
    hub.invite(troll(hub, 60), "*Vic", FREE)
    assert hub.invites.incoming[hub.players["vic1"]].inviter.nick == "*Guest60"


def test_a_troll_s_guests_leave_room_for_strangers_with_accounts_in_a_players_private_lines() -> None:
    """30 fresh guests, one line each, filled *Vic's 30 lines a minute from strangers: every stranger
    after them was told `privateFull`, accounts too."""
    hub, _ = victim_and_troll()
    refused = []
    for n in range(PRIVATE_TO_ONE_PER_MINUTE):
        try:
            hub.chat_from(troll(hub, n), "_*Vic", f"junk {n}")
        except ProtocolError as refusal:
            refused.append(refusal.code)
    assert refused == ["privateFull"] * (PRIVATE_TO_ONE_PER_MINUTE - PRIVATE_FROM_GUESTS_PER_MINUTE)
    hub.login("bob1", Account("Bob", 1500, 0, 0, 0))

    hub.chat_from("bob1", "_*Vic", "good game yesterday")

    talk = hub.chats.private.get("Bob", "*Vic")
    assert talk is not None and [entry.text for entry in talk.entries] == ["good game yesterday"]
    from_guests = [other for other in hub.chats.private.others_of("*Vic") if other.startswith("*")]
    assert len(from_guests) == PRIVATE_FROM_GUESTS_PER_MINUTE


def test_seeks_aimed_at_one_player_by_fresh_guests_stop_being_offered_to_them() -> None:
    """A seek whose range only *Vic's rating fits was offered to *Vic as an invitation (`vg`); each
    decline brought the next fresh guest's, from another network, for as long as the troll liked."""
    hub, _ = victim_and_troll()
    hub.login("vic2", Account("Vic", 1734, 0, 0, 0))

    def offers() -> list[str]:
        lines = hub.reply("vic2", 0, with_subscriptions=False).split("/")
        return [line for line in lines if line.startswith("vg")]

    aimed = "k1.0.s.1734.1734.2020n0.4.a.F.a.180.2.."
    for n in range(GUEST_REJECTIONS):
        hub.receive(troll(hub, n), parse_commands(aimed))
        assert offers() == [f"vg*Guest{n}.2020n0.4.a.F.a.180.2.."]
        hub.answer_invitation("vic2", "r")

    hub.receive(troll(hub, 70), parse_commands(aimed))
    assert offers() == []
    hub.login("ann1", Account("Ann", 1734, 0, 0, 0))
    hub.receive("ann1", parse_commands(aimed))
    assert offers() == ["vgAnn.2020n0.4.a.F.a.180.2.."]  # an account's seek is offered as ever
