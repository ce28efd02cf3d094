"""The lobby's open seeks shared out (docs/operations.md, "Abuse limits"): one address or network lists
a share of them, and guests all but the registered players' share, so that neither a network nor a
flood of guests fills the list that a newcomer looks for a game in."""

from __future__ import annotations

import pytest

from server.hub import seeks as seeks_module
from server.hub.limits import Caps
from server.hub.model import Origin
from server.hub.persistence import Account
from server.protocol.codec import decode_client_text
from tests.hub.test_seeks import FREE, Lobby

NETWORK = "192.0.2.0/24"


def guests_of(lobby: Lobby, network: str, hosts: range, each: int) -> list[str]:
    """`each` guests logged in from each address `hosts` numbers in `network` (an IPv4 /24); their ids."""
    prefix = network.rsplit(".", 1)[0]
    secrets = []
    for host in hosts:
        for n in range(each):
            secret = f"n{prefix.rsplit('.', 1)[1]}h{host}g{n}"
            nick = f"*N{secret[1:]}"
            lobby.hub.guest_login(secret, nick, "en", Origin(f"{prefix}.{host + 1}", False, network))
            lobby.reply(secret)
            secrets.append(secret)
    return secrets


def post_all(lobby: Lobby, secrets: list[str], seeks: int) -> list[str]:
    """Each of `secrets` posts `seeks` seeks; the refusals they read."""
    refusals = []
    for secret in secrets:
        refusals += lobby.refusals(lobby.send(secret, *[f"k.0.s...{FREE}"] * seeks))
    return refusals


def test_one_address_and_one_network_list_a_share_of_the_lobbys_seeks() -> None:
    """Before: 40 guests of one /24 (the most a network may log in) listed 120 seeks, their 3 each, so
    three networks filled the lobby's 300 and nobody else could post one."""
    lobby = Lobby()
    most = lobby.hub.caps.seeks_per_address
    assert post_all(lobby, guests_of(lobby, NETWORK, range(1), each=8), seeks=3)[0] == (
        f"Guests from your address have {most} open seeks already: accept one, or try later."
    )
    assert len(lobby.hub.seeks.open) == most

    refused = post_all(lobby, guests_of(lobby, NETWORK, range(1, 5), each=8), seeks=3)
    factor = lobby.hub.caps.network_factor
    told = decode_client_text(refused[-1])
    assert told == (
        f"Guests from your network ({NETWORK}) have {most * factor} open seeks already: accept one, "
        "or try later."
    )
    assert len(lobby.hub.seeks.open) == most * factor

    assert post_all(lobby, ["ala1"], seeks=1) == []  # others still post


def test_a_refused_seek_changes_nothing_and_a_seek_ended_makes_room_again() -> None:
    lobby = Lobby(Caps(seeks_per_address=2))
    first, second = guests_of(lobby, NETWORK, range(1), each=2)
    lobby.send(first, f"k.0.s...{FREE}", f"k.0.s...{FREE}")
    lobby.reply("oli1")
    refused = lobby.send(second, f"k.0.s...{FREE}")
    assert lobby.refusals(refused) == [
        "Guests from your address have 2 open seeks already: accept one, or try later."
    ]
    assert [line for line in lobby.reply("oli1") if line.startswith(("ka", "kd"))] == []
    number = min(lobby.hub.seeks.open)
    lobby.send(first, f"k.0.c.{number}")
    assert post_all(lobby, [second], seeks=1) == []


def test_guests_fill_all_but_the_registered_players_share_of_the_lobby(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(seeks_module, "MOST_OPEN_SEEKS", 10)
    lobby = Lobby()  # 20 % of the seeks kept for registered players: guests may list 8
    post_all(lobby, ["ala1", "bob1", "cid1"], seeks=3)
    assert len(lobby.hub.seeks.open) == 8
    assert lobby.refusals(lobby.send("oli1", f"k.0.s...{FREE}")) == [
        "The lobby keeps its last 2 seeks for registered players: accept one, try later, or log in with an "
        "account."
    ]
    lobby.log_in("eve1", "Eve", 1500)
    lobby.log_in("rex1", "Rex", 1500)
    assert post_all(lobby, ["eve1", "rex1"], seeks=1) == []
    assert lobby.refusals(lobby.send("rex1", f"k.0.s...{FREE}")) == [
        "The lobby has 10 open seeks already: accept one, or try later."
    ]


def test_accounts_and_unlimited_addresses_are_not_counted() -> None:
    """A bot's owner may run a few bots from one machine, each seeking several kinds of game; accounts
    are not free to make as guests are. A load test's unlimited address is exempt from every share."""
    lobby = Lobby(Caps(seeks_per_address=1))
    for n in range(3):
        lobby.hub.guest_login(f"load{n}x", f"*Load{n}", "en", Origin("192.0.2.9", True, NETWORK))
        lobby.reply(f"load{n}x")
        bot = Account(f"Bot{n}", 1500, 0, 0, 0, bot=True)
        lobby.hub.login(f"bot{n}xxxxxxxx", bot, "en", Origin("192.0.2.8", False, NETWORK))
        lobby.reply(f"bot{n}xxxxxxxx")
    seekers = [f"load{n}x" for n in range(3)] + [f"bot{n}xxxxxxxx" for n in range(3)]
    assert post_all(lobby, seekers, seeks=3) == []
    assert len(lobby.hub.seeks.open) == 18
    assert post_all(lobby, guests_of(lobby, NETWORK, range(7, 8), each=1), seeks=1) == []
