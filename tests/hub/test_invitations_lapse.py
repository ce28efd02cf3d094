"""Invitations lapse (docs/protocol.md, "Invitations"): INVITATION_LIFETIME after it was sent, or when its
inviter begins another game, an invitation is withdrawn as its cancellation is (its `vg` and `vs` go).

Before, an invitation stayed while both sessions lasted: an inviter whose browser tab kept polling while
they were away kept the invitee `busy` for everyone else (`*Bob is answering another invitation.`) for
hours, and one who began another game meanwhile had a second table opened under them when it was
accepted."""

from __future__ import annotations

import asyncio
import random

import pytest

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.invitations import INVITATION_LIFETIME
from server.hub.model import Origin
from server.hub.saved import SWEEP_EVERY
from server.protocol.codec import ProtocolError

FREE = "0808s0..a.F.n...."  # 8x8, free, the inviter blue, no clock
NICKS = ("*Ala", "*Bob", "*Cid", "*Dan")


def four_guests() -> tuple[Hub, ManualTimers]:
    timers = ManualTimers()
    hub = Hub(timers=timers, rng=random.Random(5))
    for nick in NICKS:
        hub.guest_login(secret(nick), nick, "en", Origin(f"198.51.100.{len(nick) + ord(nick[1])}"))
    return hub, timers


def secret(nick: str) -> str:
    return nick[1:].lower() + "123"


def invitation_lines(hub: Hub, nick: str) -> list[str]:
    player = hub.players[secret(nick)]
    return [line for line in hub.invites.lines(player) if line.startswith(("vg", "vs"))]


def wait(hub: Hub, timers: ManualTimers, seconds: float) -> None:
    """`seconds` pass with everyone polling (no session times out) and the hub sweeping as it does."""
    for _ in range(int(seconds // SWEEP_EVERY)):
        timers.advance(SWEEP_EVERY)
        for nick in NICKS:
            hub.players[secret(nick)].last_seen = timers.now()
        hub.sweep()


def games(hub: Hub) -> list[tuple[str, str]]:
    return [(t.room.blue, t.room.red) for t in hub.tables.values() if t.room is not None]


def test_an_unanswered_invitation_lapses_and_the_invitee_may_be_invited_again() -> None:
    hub, timers = four_guests()
    hub.invite(secret("*Ala"), "*Bob", FREE)
    wait(hub, timers, INVITATION_LIFETIME - SWEEP_EVERY)
    assert invitation_lines(hub, "*Bob") == [f"vg*Ala.{FREE}"]
    with pytest.raises(ProtocolError, match=r"\*Bob is answering another invitation"):
        hub.invite(secret("*Dan"), "*Bob", FREE)  # what a newcomer sees meanwhile

    wait(hub, timers, SWEEP_EVERY)

    assert invitation_lines(hub, "*Bob") == invitation_lines(hub, "*Ala") == []
    assert hub.invites.invitations == hub.invites.incoming == {}
    with pytest.raises(ProtocolError, match="no invitation to answer"):
        hub.answer_invitation(secret("*Bob"), "a")
    hub.invite(secret("*Dan"), "*Bob", FREE)
    assert invitation_lines(hub, "*Bob") == [f"vg*Dan.{FREE}"]


def test_an_invitation_sent_again_lives_from_then() -> None:
    hub, timers = four_guests()
    hub.invite(secret("*Ala"), "*Bob", FREE)
    wait(hub, timers, INVITATION_LIFETIME / 2)
    hub.invite(secret("*Ala"), "*Bob", FREE)
    wait(hub, timers, INVITATION_LIFETIME - SWEEP_EVERY)
    assert invitation_lines(hub, "*Bob") == [f"vg*Ala.{FREE}"]


def test_an_inviter_who_begins_another_game_withdraws_the_invitation() -> None:
    hub, _ = four_guests()
    hub.invite(secret("*Ala"), "*Bob", FREE)
    hub.invite(secret("*Cid"), "*Ala", FREE)
    hub.answer_invitation(secret("*Ala"), "a")  # Ala plays Cid now

    assert invitation_lines(hub, "*Bob") == []
    assert invitation_lines(hub, "*Ala") == []
    with pytest.raises(ProtocolError, match="no invitation to answer"):
        hub.answer_invitation(secret("*Bob"), "a")
    assert games(hub) == [("*Cid", "*Ala")]


def test_a_flood_of_invitations_keeps_one_and_nothing_once_it_lapses() -> None:
    """Ten invitations a minute for ten minutes, each replacing the last: never more than one kept, and
    none left after the last one's lifetime (no timer or record per invitation sent)."""
    hub, timers = four_guests()
    for _ in range(10):
        for n in range(10):
            hub.invite(secret("*Ala"), NICKS[1 + n % 3], FREE)
            assert len(hub.invites.invitations) == len(hub.invites.incoming) == 1
        wait(hub, timers, 60)
    wait(hub, timers, INVITATION_LIFETIME)
    assert hub.invites.invitations == hub.invites.incoming == {}


def test_an_inviter_seated_by_an_organiser_withdraws_the_invitation() -> None:
    """An organiser's setUpTable (or the director's arena or swiss table) begins a game as an accepted
    invitation does: accepted later, Ala's invitation opened a second table under her."""
    hub, _ = four_guests()
    hub.invite(secret("*Ala"), "*Bob", FREE)
    hub.invite(secret("*Dan"), "*Cid", FREE)
    hub.set_up_table(parse_game_type(FREE), "*Ala", "*Cid", (0, 0), "Cup", "1", {})

    assert invitation_lines(hub, "*Bob") == invitation_lines(hub, "*Ala") == []
    with pytest.raises(ProtocolError, match="no invitation to answer"):
        hub.answer_invitation(secret("*Bob"), "a")
    assert invitation_lines(hub, "*Cid") == [f"vg*Dan.{FREE}"]  # only those they sent go
    assert games(hub) == [("*Ala", "*Cid")]


def test_an_analysis_table_keeps_the_invitation() -> None:
    """An analysis is no game begun: its opener's invitation stays, as it always did."""
    hub, _ = four_guests()
    hub.invite(secret("*Ala"), "*Bob", FREE)
    hub.invite(secret("*Ala"), "*Ala", "1010s0..a.a.n...c___SUsuen*Ala.")
    assert len(games(hub)) == 1
    assert invitation_lines(hub, "*Bob") == [f"vg*Ala.{FREE}"]


def multipoints_outgoing(reply: str) -> set[str]:
    """The nicks MultiPoints keeps as its invitations out after a reply: of its `vs<nick>[.…]` lines,
    `message.substring(2).split("\\\\.")[0]` (ServerZagram.handleMessage); one kept before and missing now it
    shows as ended (`if (personalInvitesOutgoingNew.contains(player) == false) { // invitation cancelled`)."""
    return {message[2:].split(".")[0] for message in reply.split("/") if message.startswith("vs")}


async def test_the_inviters_waiting_poll_ends_at_the_lapse_without_the_vs_line() -> None:
    """zagram has no line that says an invitation ended (`vr` is a rejection, which the client must
    acknowledge): the `vs` line left out of a reply says it. The inviter's long poll ends at the sweep
    that withdraws it, not at its time-out."""
    hub, timers = four_guests()
    hub.invite(secret("*Ala"), "*Bob", FREE)
    seen = hub.counter.last
    assert multipoints_outgoing(hub.reply(secret("*Ala"), 0, with_subscriptions=False)) == {"*Bob"}
    wait(hub, timers, INVITATION_LIFETIME - SWEEP_EVERY)
    hub.reply(secret("*Ala"), seen, with_subscriptions=False)
    waiting = hub.wait_for_news(secret("*Ala"), hub.counter.last, 30.0)
    assert waiting is not None
    poll = asyncio.ensure_future(waiting)
    await asyncio.sleep(0)
    assert not poll.done()

    wait(hub, timers, SWEEP_EVERY)

    await asyncio.wait_for(poll, 1.0)
    reply = hub.reply(secret("*Ala"), hub.counter.last, with_subscriptions=False)
    assert multipoints_outgoing(reply) == set()
