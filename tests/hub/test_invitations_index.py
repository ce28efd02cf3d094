"""Invitations.sent_by, the pending invitations by their inviter's nick: a game start withdraws its
players' invitations through it (Invitations.withdraw_sent_by) rather than walking every pending
invitation of the server, so it must say what the invitations say whatever happened to them: sent,
replaced, accepted, rejected, blocked, cancelled, lapsed, withdrawn by a game start, dropped at a
logout."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.invitations import INVITATION_LIFETIME
from server.hub.model import Origin
from server.hub.saved import SWEEP_EVERY
from server.protocol.codec import ProtocolError, nick_key

FREE = "0808s0..a.F.n...."  # 8x8, free, the inviter blue, no clock
NICKS = ("*Ala", "*Bob", "*Cid", "*Dan", "*Eve")
WHO = st.sampled_from(range(len(NICKS)))
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("invite"), WHO, WHO),
        st.tuples(st.just("team"), WHO, st.permutations(range(len(NICKS)))),
        st.tuples(st.just("answer"), WHO, st.sampled_from("arbco")),
        st.tuples(st.just("wait"), st.sampled_from([SWEEP_EVERY, INVITATION_LIFETIME]), st.just(0)),
        st.tuples(st.just("again"), WHO, st.just(0)),  # logs out and in again
    ),
    max_size=40,
)


def secret(index: int) -> str:
    return f"{NICKS[index][1:].lower()}123"


def login(hub: Hub, index: int) -> None:
    hub.guest_login(secret(index), NICKS[index], "en", Origin(f"198.51.100.{index + 1}"))


def index_of_the_invitations(hub: Hub) -> dict[str, set[int]]:
    """What sent_by must hold: the pending invitations (by identity) by their inviter's nick_key."""
    expected: dict[str, set[int]] = {}
    for invitation in hub.invites.invitations.values():
        expected.setdefault(nick_key(invitation.inviter.nick), set()).add(id(invitation))
    return expected


@settings(max_examples=300)
@given(STEPS)
def test_the_index_by_inviter_follows_every_path_an_invitation_takes(steps: list[tuple]) -> None:
    timers = ManualTimers()
    hub = Hub(timers=timers, rng=random.Random(5))
    for index in range(len(NICKS)):
        login(hub, index)
    for step, who, what in steps:
        try:
            if step == "invite":
                hub.invite(secret(who), NICKS[what], FREE)
            elif step == "team":
                others = [NICKS[other] for other in what if other != who][:3]
                hub.invite(secret(who), ",".join(others), FREE)
            elif step == "answer":
                hub.answer_invitation(secret(who), what)
            elif step == "wait":
                timers.advance(who)
                for player in hub.players.values():
                    player.last_seen = timers.now()
                hub.sweep()
            else:
                assert hub.logout(secret(who))
                login(hub, who)
        except ProtocolError:
            pass  # refused: it changes nothing, and the index must still hold
        indexed = {key: {id(i) for i in invitations} for key, invitations in hub.invites.sent_by.items()}
        assert indexed == index_of_the_invitations(hub)
        assert all(hub.invites.sent_by.values())  # no key kept for an inviter with nothing pending


def test_a_game_start_withdraws_only_its_players_invitations() -> None:
    timers = ManualTimers()
    hub = Hub(timers=timers, rng=random.Random(5))
    for index in range(len(NICKS)):
        login(hub, index)
    hub.invite(secret(0), "*Bob", FREE)  # *Ala -> *Bob
    hub.invite(secret(2), "*Eve", FREE)  # *Cid -> *Eve
    hub.invite(secret(3), "*Cid", FREE)  # *Dan -> *Cid, accepted: *Cid and *Dan begin a game

    hub.answer_invitation(secret(2), "a")

    assert {nick_key(i.inviter.nick) for i in hub.invites.invitations.values()} == {nick_key("*Ala")}
    assert list(hub.invites.sent_by) == [nick_key("*Ala")]
