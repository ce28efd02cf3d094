"""No two players online have nicks that look alike (UTS #39 skeletons, docs/protocol.md "Sessions"):
a second login under a look-alike is `err.nickInUse`, the same person logging in again is not refused,
and the look is free again once its holder leaves."""

from __future__ import annotations

import random

import pytest

from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.persistence import Account, SavedSession
from server.protocol.codec import ProtocolError
from tests.hub.test_sessions import Clock, StoreLike, poll, started


def refusal(login: object, *args: object) -> str | None:
    try:
        login(*args)  # type: ignore[operator]
    except ProtocolError as refused:
        return refused.code
    return None


@pytest.fixture
def hub() -> Hub:
    return Hub(clock=Clock(), timers=ManualTimers(), rng=random.Random(1))


@pytest.mark.parametrize(
    ("online", "newcomer"),
    [
        ("*Alan", "*Alɑn"),  # LATIN SMALL LETTER ALPHA
        ("*Alɑn", "*Alan"),  # whoever came first
        ("*Bop", "*Вор"),  # all Cyrillic: VE, O, ER
        ("*Ala", "*Аӏа"),  # all Cyrillic: A, PALOCHKA, A
        ("*Bob", "*B0b"),  # UTS #39: the digit 0 looks like O
        ("*Alan", "*A1an"),  # and 1 like l
        ("*alan", "*AIan"),  # capital I looks like l, and case does not count
        ("*Sam", "*Sarn"),  # rn looks like m
    ],
)
def test_a_guest_cannot_take_a_look_alike_of_an_online_guest(hub: Hub, online: str, newcomer: str) -> None:
    hub.guest_login("first1", online, "en")

    assert refusal(hub.guest_login, "second1", newcomer, "en") == "nickInUse"
    assert [p.nick for p in hub.players.values()] == [online]


def test_the_same_person_logs_in_again_and_a_left_look_is_free(hub: Hub) -> None:
    hub.guest_login("alan1", "*Alɑn", "en")
    hub.guest_login("alan1", "*Alɑn", "en")  # a reloaded client: the same session
    hub.guest_login("alen1", "*Alen", "en")  # another nick that merely resembles it
    assert sorted(p.nick for p in hub.players.values()) == ["*Alen", "*Alɑn"]

    assert hub.logout("alan1")
    hub.guest_login("alan2", "*Alan", "en")
    assert sorted(p.nick for p in hub.players.values()) == ["*Alan", "*Alen"]


def test_a_guests_star_tells_them_from_a_registered_player_as_before(hub: Hub) -> None:
    hub.login("LongSecretId1", Account("Alan", 1500, 0, 0, 0))

    hub.guest_login("alan1", "*Alɑn", "en")  # as *Alan could before look-alikes were refused

    assert sorted(p.nick for p in hub.players.values()) == ["*Alɑn", "Alan"]
    assert refusal(hub.guest_login, "alan2", "*Alan", "en") == "nickInUse"  # the guest holds that look


def test_two_accounts_registered_as_look_alikes_before_the_rule_are_not_online_together(hub: Hub) -> None:
    hub.login("LongSecretId1", Account("Alan", 1500, 0, 0, 0))

    assert refusal(hub.login, "LongSecretId2", Account("AIan", 1500, 0, 0, 0)) == "nickInUse"
    hub.logout("LongSecretId1")
    hub.login("LongSecretId2", Account("AIan", 1500, 0, 0, 0))
    assert [p.nick for p in hub.players.values()] == ["AIan"]


def test_of_two_look_alike_sessions_saved_before_the_rule_one_comes_back() -> None:
    store, clock, timers = StoreLike(), Clock(), ManualTimers()
    for secret, nick in (("alan1", "*Alan"), ("alan2", "*Alɑn")):
        key = store.id_hmac(secret)
        store.sessions[key] = SavedSession(key, nick, "en", False, True, "", (), (), 0)

    hub = started(store, clock, timers)

    assert poll(hub, "alan1", 0).status == "ok"
    assert [p.nick for p in hub.players.values()] == ["*Alan"]
    assert [s.nick for s in store.sessions.values()] == ["*Alan"]
    assert refusal(hub.guest_login, "alan2", "*Alɑn", "en") == "nickInUse"
