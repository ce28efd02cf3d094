"""Analysis tables opened in an hour (docs/operations.md, "Abuse limits"): every table ever opened keeps its
row in `tables`, so that its number is never reused, and an analysis is opened at once and closed again.
At 10 invitations a minute the 40 guests one network may log in opened 576,000 a day, 31 MB
(benchmarks/abuse.py --only rows); analyses were counted by no hourly bound, unlike games begun."""

from __future__ import annotations

from server.hub.limits import ANALYSES_PER_ADDRESS, ANALYSES_PER_HOUR, Caps
from server.hub.model import Origin
from server.protocol.codec import decode_client_text
from tests.hub.test_seeks import Lobby

NETWORK = "192.0.2.0/24"
ROOMY = Caps(analysis_per_player=1000, guest_tables_per_address=1000)  # open ones are not what is counted


def analyse(lobby: Lobby, secret: str, nick: str) -> list[str]:
    """`nick` opens an analysis (within the invitations a minute); the refusals read."""
    lobby.timers.advance(7)
    told = lobby.refusals(lobby.send(secret, f"v.0.s.{nick}.1010s0..a.a.n...c___SUsuen{nick}."))
    return [decode_client_text(line) for line in told]


def guest_from(lobby: Lobby, secret: str, nick: str, host: int) -> None:
    lobby.hub.guest_login(secret, nick, "en", Origin(f"192.0.2.{host}", False, NETWORK))
    lobby.reply(secret)


def test_a_player_opens_a_bounded_number_of_analysis_tables_an_hour() -> None:
    lobby = Lobby(ROOMY)
    for _ in range(ANALYSES_PER_HOUR):
        assert analyse(lobby, "ala1", "*Ala") == []
    tables = len(lobby.hub.tables)
    told = analyse(lobby, "ala1", "*Ala")
    assert told == [
        f"*Ala has opened {ANALYSES_PER_HOUR} analysis tables in the last hour; the next can open in 57 "
        "minutes."
    ]
    assert len(lobby.hub.tables) == tables, "nothing opened"
    assert analyse(lobby, "bob1", "*Bob") == [], "another player's own count"
    lobby.timers.advance(3600)
    assert analyse(lobby, "ala1", "*Ala") == []


def test_the_guests_of_one_address_and_one_network_share_a_bound() -> None:
    lobby = Lobby(ROOMY)
    for host in range(1, 5):
        guest_from(lobby, f"gus{host}", f"*Gus{host}", host)
        for _ in range(ANALYSES_PER_ADDRESS):
            assert analyse(lobby, f"gus{host}", f"*Gus{host}") == []
        guest_from(lobby, f"gil{host}", f"*Gil{host}", host)
        told = analyse(lobby, f"gil{host}", f"*Gil{host}")
        assert told[0].startswith(
            f"Guests from the address of *Gil{host} have opened {ANALYSES_PER_ADDRESS} analysis tables "
            "in the last hour; log in with an account, or wait "
        )
    guest_from(lobby, "gem1", "*Gem", 5)
    assert analyse(lobby, "gem1", "*Gem")[0].startswith(
        f"Guests from the network of *Gem have opened {ANALYSES_PER_ADDRESS * 4} analysis tables"
    )
