"""Addresses grouped into hosts and networks (issue 43.2): one person's many addresses fill no more
than one host's or one network's share of the server."""

from __future__ import annotations

import dataclasses

import pytest
from pytest_aiohttp import AiohttpClient

from server.app import create_app
from server.config import ConfigError, Settings, parse_prefixes
from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.limits import Caps
from server.hub.model import Origin
from server.protocol.codec import ProtocolError
from server.web import clients
from server.web.limits import NetworkBuckets, TokenBuckets
from server.web.networks import Grouping
from tests.hub.test_restore import RecordingPersistence
from tests.web.test_stream import chat_texts
from tests.web.zagram import Zagram

ANALYSIS = "s.{nick}.1010s0..a.a.n...c___SUsuen{nick}."  # a guest inviting itself to an analysis


def test_an_address_is_its_host_and_network() -> None:
    grouping = Grouping()
    assert grouping.where("203.0.113.7") == ("203.0.113.7", "203.0.113.0/24")
    assert grouping.where("2001:db8:1:2:aaaa::1") == ("2001:db8:1:2::/64", "2001:db8:1::/48")
    assert grouping.where("2001:db8:1:2:ffff:ffff:ffff:ffff")[0] == "2001:db8:1:2::/64"  # same host
    assert grouping.where("::ffff:203.0.113.7") == ("203.0.113.7", "203.0.113.0/24")  # IPv4, mapped
    assert grouping.where("unknown") == ("unknown", "unknown")
    wide = Grouping((24, 16), (56, 32))
    assert wide.where("203.0.113.7") == ("203.0.113.0/24", "203.0.0.0/16")
    assert wide.where("2001:db8:1:2::1") == ("2001:db8:1::/56", "2001:db8::/32")


def test_prefixes_are_checked() -> None:
    assert parse_prefixes("64,48", 6, "--ipv6-prefixes") == (64, 48)
    for bad in ("48,64", "64", "129,48", "32,4", "a,b", "64,48,32"):
        with pytest.raises(ConfigError, match="--ipv6-prefixes"):
            parse_prefixes(bad, 6, "--ipv6-prefixes")
    with pytest.raises(ConfigError, match="<= 32"):
        parse_prefixes("64,48", 4, "--ipv4-prefixes")
    with pytest.raises(ValueError):
        Grouping((24, 32))


def test_a_network_gets_factor_times_a_hosts_requests() -> None:
    buckets = NetworkBuckets(1e-9, 2, 3)
    grouping = Grouping()
    hosts = [grouping.where(f"198.51.100.{n}") for n in range(10)]
    taken = [buckets.take(clients.Origin(host, False, network)) for host, network in hosts for _ in range(2)]
    assert taken == [True] * 6 + [False] * 14  # 2 a host, but 6 for the whole /24
    other = grouping.where("198.51.101.1")
    assert buckets.take(clients.Origin(other[0], False, other[1]))  # the next /24 is another network


async def proxied(aiohttp_client: AiohttpClient, settings: Settings, hub: Hub):
    """The real app behind a trusted proxy (X-Forwarded-For names each caller), with room to log in."""
    settings = dataclasses.replace(settings, trusted_proxies=("127.0.0.1",), unlimited=())
    app = create_app(settings, hub)
    app[clients.LIMITS_KEY].guest_logins = NetworkBuckets(1e-9, 10_000, 1)
    app[clients.LIMITS_KEY].per_address = NetworkBuckets(1e-9, 10_000, 1)
    app[clients.LIMITS_KEY].per_id = TokenBuckets(1e-9, 10_000)
    return await aiohttp_client(app)


async def login_from(client, number: int, address: str) -> str:
    query = f"/a.kropki?co=guestLogin&idGracza=g{number}x&opis=*G{number}&lang=en"
    return await (await client.get(query, headers={"X-Forwarded-For": address})).text()


async def test_many_addresses_of_one_ipv6_host_are_one_address(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    hub = Hub(caps=Caps(players=100, players_per_address=3))
    client = await proxied(aiohttp_client, settings, hub)
    answers = [await login_from(client, n, f"2001:db8:5:6::{n + 1:x}") for n in range(5)]
    assert answers == ["", "", "", "err.tooManyPlayers", "err.tooManyPlayers"]
    assert await login_from(client, 9, "2001:db8:5:7::1") == ""  # the next /64 is another host


async def test_many_addresses_of_one_network_fill_only_the_networks_share(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """Before networks, 48 guests from 6 addresses filled a small server's guest slots (issue 43.2):
    now one /24 holds players_per_address * network_factor, one /48 as many."""
    hub = Hub(caps=Caps(players=100, players_per_address=2, network_factor=4))
    client = await proxied(aiohttp_client, settings, hub)
    ipv4 = [await login_from(client, n, f"203.0.113.{n // 2 + 1}") for n in range(12)]
    assert ipv4 == [""] * 8 + ["err.tooManyPlayers"] * 4  # 6 addresses x 2 tries: 8 of the /24
    ipv6 = [await login_from(client, 100 + n, f"2001:db8:7:{n // 2:x}::1") for n in range(12)]
    assert ipv6 == [""] * 8 + ["err.tooManyPlayers"] * 4  # 6 hosts (/64) of one /48
    assert await login_from(client, 200, "203.0.114.1") == ""  # another network
    assert len(hub.players) == 17


def test_the_refusal_says_whether_the_address_or_the_network_is_full() -> None:
    hub = Hub(timers=ManualTimers(), caps=Caps(players=100, players_per_address=1, network_factor=2))
    hub.guest_login("g1", "*G1", "en", Origin("198.51.100.1", False, "198.51.100.0/24"))
    with pytest.raises(ProtocolError, match="1 players are logged in from your address already"):
        hub.guest_login("g2", "*G2", "en", Origin("198.51.100.1", False, "198.51.100.0/24"))
    hub.guest_login("g3", "*G3", "en", Origin("198.51.100.2", False, "198.51.100.0/24"))
    with pytest.raises(ProtocolError, match=r"2 players are logged in from your network \(198.51.100.0/24\)"):
        hub.guest_login("g4", "*G4", "en", Origin("198.51.100.3", False, "198.51.100.0/24"))
    assert hub.logout("g1")
    hub.guest_login("g5", "*G5", "en", Origin("198.51.100.3", False, "198.51.100.0/24"))  # a slot is free


def behind(guest: Zagram, address: str) -> Zagram:
    guest.headers = {"X-Forwarded-For": address}
    return guest


async def test_guests_of_one_address_and_one_network_hold_a_bounded_number_of_tables(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """Before networks, 30 guests from 3 addresses took every guest table (issue 43.2)."""
    hub = Hub(
        caps=Caps(
            players=100,
            tables=100,
            players_per_address=10,
            guest_tables_per_address=2,
            analysis_per_player=5,
            network_factor=2,
        )
    )
    client = await proxied(aiohttp_client, settings, hub)
    addresses = [1, 1, 1, 2, 2, 3, 3]
    guests = [behind(Zagram(client, f"g{n}x", f"*G{n}"), f"192.0.2.{a}") for n, a in enumerate(addresses)]
    for guest in guests:
        assert await guest.login() == ""
    refusals = []
    for guest in guests:
        guest.send("v", 0, ANALYSIS.format(nick=guest.nick))
        refusals += [text for _, kind, text in chat_texts((await guest.poll()).lines(0)) if kind == "e"]
    assert refusals == [
        "Guests from your address have 2 game tables open already.",  # the third guest of 192.0.2.1
        "Guests from your network (192.0.2.0/24) have 4 game tables open already.",  # both of .3
        "Guests from your network (192.0.2.0/24) have 4 game tables open already.",
    ]
    assert sum(table.room is not None for table in hub.tables.values()) == 4
    stranger = behind(Zagram(client, "s1x", "*S1"), "198.51.100.1")
    assert await stranger.login() == ""
    stranger.send("v", 0, ANALYSIS.format(nick=stranger.nick))
    assert not [kind for _, kind, _ in chat_texts((await stranger.poll()).lines(0)) if kind == "e"]
    assert sum(table.room is not None for table in hub.tables.values()) == 5


def test_a_guests_table_counts_for_its_network_after_a_restart() -> None:
    """The seat's owner keeps its host and network in the table's journal (Table.guest_places)."""
    journal, timers = RecordingPersistence(), ManualTimers()
    before = Hub(timers=timers, persistence=journal, caps=Caps(guest_tables_per_address=1))
    before.guest_login("ala1", "*Ala", "en", Origin("192.0.2.9", False, "192.0.2.0/24"))
    before.guest_login("bob1", "*Bob", "en", Origin("198.51.100.1", False, "198.51.100.0/24"))
    uid = before.open_table(parse_game_type("0808stanF0.120.5"), "*Ala", "*Bob").uid
    before.move("ala1", str(uid), "cb")
    places = {"*Ala": ("192.0.2.9", "192.0.2.0/24"), "*Bob": ("198.51.100.1", "198.51.100.0/24")}
    assert before.tables[uid].guest_places == places

    after = Hub(timers=timers, persistence=RecordingPersistence(), caps=Caps(guest_tables_per_address=1))
    after.restore(journal.entries, next_uid=uid + 1)
    assert after.tables[uid].guest_places == places
    after.guest_login("cat1", "*Cat", "en", Origin("192.0.2.9", False, "192.0.2.0/24"))
    with pytest.raises(ProtocolError, match="Guests from your address have 1 game tables"):
        after.invite("cat1", "*Cat", "1010s0..a.a.n...c___SUsuen*Cat.")


def test_an_unlimited_guests_seat_keeps_its_network_for_its_coming_back_alone() -> None:
    """A school's proxy (--unlimited): its guests' tables count for no address or network, and a guest
    of it whose session ended is seated again at its game from that network, also after a restart (the
    ended sessions a server remembers are gone then). Before, such a seat kept no network."""
    school = Origin("192.0.2.9", True, "192.0.2.0/24")
    journal, timers = RecordingPersistence(), ManualTimers()
    before = Hub(timers=timers, persistence=journal, caps=Caps(guest_tables_per_address=1))
    before.guest_login("ala1", "*Ala", "en", school)
    before.guest_login("bob1", "*Bob", "en", Origin("198.51.100.1", False, "198.51.100.0/24"))
    uid = before.open_table(parse_game_type("0808stanF0.120.5"), "*Ala", "*Bob").uid
    before.move("ala1", str(uid), "cb")
    assert before.tables[uid].guest_places["*Ala"] == ("", "192.0.2.0/24")
    assert before.logout("ala1")

    one_table = Caps(guest_tables_per_address=1, network_factor=1)  # for each address and each network
    after = Hub(timers=timers, persistence=RecordingPersistence(), caps=one_table)
    after.restore(journal.entries, next_uid=uid + 1)
    after.guest_login("cat1", "*Cat", "en", Origin("192.0.2.10", False, "192.0.2.0/24"))
    after.invite("cat1", "*Cat", "1010s0..a.a.n...c___SUsuen*Cat.")  # the school's table counts for none
    after.guest_login("ala2", "*Ala", "en", school)
    assert uid in after.players["ala2"].tables and after.tables[uid].seat_of(after.players["ala2"]) == 1
