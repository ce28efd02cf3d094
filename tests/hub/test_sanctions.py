"""The sanctions in force as the hub checks them (server/hub/sanctions.py), without a store."""

from __future__ import annotations

import pytest

from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.limits import CHAT_LINES_PER_MINUTE
from server.hub.mailbox import EventLog
from server.hub.model import Player
from server.hub.sanctions import BAN, GUEST, MUTE, PLAYER, SLOW, STAFF, Sanction, SanctionBook, within
from server.protocol.codec import ProtocolError, look_key

NOW = 1_800_000_000.0  # 2027-01-15 08:00 UTC


def sanction(kind: str, look: str | None = None, network: str | None = None, **more: object) -> Sanction:
    values: dict = {"seconds": None, "ends": NOW + 3600, "reason": "spam", "by": "Mod", **more}
    return Sanction(f"k{kind}{look}{network}", kind, look or network or "lobby", look, network, **values)


def person(nick: str, host: str = "", guest: bool = True, role: str = "none") -> Player:
    return Player(secret="s1", nick=nick, lang="pl", inbox=EventLog(4), guest=guest, role=role, host=host)


def test_an_address_or_network_covers_the_hosts_inside_it() -> None:
    assert within("203.0.113.7", "203.0.113.0/24") and within("203.0.113.7", "203.0.113.7")
    assert not within("203.0.114.7", "203.0.113.0/24")
    assert within("2001:db8:1:2::/64", "2001:db8:1::/48") and not within(
        "2001:db8:1:2::/64", "2001:db8:1:2::1"
    )
    assert not within("203.0.113.7", "2001:db8::/32") and not within("unknown", "203.0.113.0/24")


def test_a_network_banned_with_a_guests_nick_keeps_only_guests_out_and_none_keeps_staff_out() -> None:
    with_nick = sanction(BAN, "*troll", "203.0.113.0/24")
    alone = sanction(BAN, None, "203.0.113.0/24")
    assert with_nick.names("*TroIl", "", GUEST)  # a look-alike, from anywhere
    assert with_nick.names("*Guest1", "203.0.113.9", GUEST)
    assert not with_nick.names("Ann", "203.0.113.9", PLAYER)
    assert alone.names("Ann", "203.0.113.9", PLAYER) and alone.names("*Gus", "203.0.113.9", GUEST)
    assert not alone.names("Boss", "203.0.113.9", STAFF)
    assert not alone.names("Ann", "203.0.114.9", PLAYER)


def test_a_ban_refuses_a_login_with_its_end_and_reason_until_it_ends() -> None:
    book = SanctionBook()
    book.active = [
        sanction(BAN, "*troll", reason="BUY/GOLD\nnow"),
        sanction(BAN, look_key("*Spam"), ends=None),
    ]
    with pytest.raises(ProtocolError) as refused:
        book.check_login("*Troll", "", GUEST, NOW)
    assert refused.value.code == "banned.2027-01-15T09:00Z.BUY GOLD now"
    with pytest.raises(ProtocolError) as for_good:
        book.check_login("*Spam", "", GUEST, NOW)
    assert for_good.value.code == "banned.forGood.spam"
    book.check_login("*Troll", "", GUEST, NOW + 3600)  # ended
    book.check_login("*Ala", "", GUEST, NOW)


def test_a_mute_says_until_when_and_why() -> None:
    book = SanctionBook()
    book.active = [sanction(MUTE, "*troll")]
    with pytest.raises(ProtocolError) as refused:
        book.check_chat(person("*Troll"), NOW)
    assert (refused.value.code, refused.value.values) == (
        "muted",
        {"until": "2027-01-15 09:00 UTC", "reason": "spam"},
    )
    book.check_chat(person("*Ala"), NOW)


def test_the_slow_lobby_counts_each_players_lines_and_lets_moderators_be() -> None:
    book = SanctionBook()
    book.active = [sanction(SLOW, seconds=30)]
    ala, mod = person("*Ala"), person("Mod", guest=False, role="moderator")
    book.check_lobby(ala, NOW, 100.0)
    book.spoke_in_lobby(ala, 100.0)
    with pytest.raises(ProtocolError) as refused:
        book.check_lobby(ala, NOW, 129.0)
    assert refused.value.values == {"seconds": "30"}
    book.check_lobby(ala, NOW, 130.0)
    book.spoke_in_lobby(mod, 130.0)
    book.check_lobby(mod, NOW, 130.5)


def test_lines_the_slow_lobby_refused_do_not_count_against_the_chat_limits() -> None:
    """The lobby's mode is checked before the chat limits: what it refuses was not said, so a player
    who kept trying is not held for flooding once their turn comes."""
    timers = ManualTimers()
    hub = Hub(timers=timers, clock=lambda: NOW)
    hub.guest_login("ala123", "*Ala", "en")
    hub.ctx.sanctions.active = [sanction(SLOW, seconds=30)]
    hub.chat_from("ala123", "0", "one")
    for n in range(CHAT_LINES_PER_MINUTE):
        with pytest.raises(ProtocolError, match="slow mode"):
            hub.chat_from("ala123", "0", f"try {n}")
    timers.advance(30)
    hub.chat_from("ala123", "0", "two")
    assert [entry.text for entry in hub.lobby.chat.entries if entry.nick == "*Ala"] == ["one", "two"]


def test_a_long_slow_lobby_forgets_who_spoke_once_their_wait_is_over() -> None:
    """A slow mode may last up to ten years, and it remembered every nick that ever wrote in the lobby
    while it lasted, guests' made-up nicks too, until it ended: a slow lobby kept for a month held one
    entry for each of them. A line said an hour ago (the longest a slow mode may ask) holds nobody back."""
    timers = ManualTimers()
    hub = Hub(timers=timers, clock=lambda: NOW)
    hub.ctx.sanctions.active = [sanction(SLOW, seconds=30, ends=NOW + 10 * 365 * 86400)]
    for n in range(1000):  # a guest a minute for 1,000 minutes
        hub.guest_login(f"g{n:05d}", f"*G{n}", "en")
        hub.chat_from(f"g{n:05d}", "0", "hello")
        hub.logout(f"g{n:05d}")
        timers.advance(60)
    assert len(hub.ctx.sanctions.spoke) == 60  # the last hour's; was 1,000: every nick that ever spoke
    hub.guest_login("ala123", "*Ala", "en")
    hub.chat_from("ala123", "0", "one")
    with pytest.raises(ProtocolError, match="slow mode"):
        hub.chat_from("ala123", "0", "two")
    timers.advance(30)
    hub.chat_from("ala123", "0", "two")
