"""Games begun in an hour (docs/operations.md, "Abuse limits"): every finished game with a move is
archived for good, so a pair of guests who played a dot, resigned and agreed a new game wrote 328 games to
the archive a minute (benchmarks/abuse.py --only archive), and the guests of one network twenty times as
many, until the disk was full."""

from __future__ import annotations

from server.engine.gametype import parse_game_type
from server.hub.limits import GAMES_BEGUN_PER_HOUR, Caps
from server.hub.model import Origin
from server.hub.persistence import Account
from server.protocol.codec import decode_client_text
from tests.hub.test_seeks import FREE, Lobby

NETWORK = "192.0.2.0/24"


def table_of(lobby: Lobby, nick: str) -> int:
    """The number of the newest game table `nick` plays at."""
    return max(uid for uid, t in lobby.hub.tables.items() if t.room is not None and t.room.seat_of(nick))


def play_one_and_resign(lobby: Lobby, uid: int) -> None:
    room = lobby.hub.tables[uid].room
    assert room is not None and room.game.result is None
    secrets = {"*Ala": "ala1", "*Bob": "bob1", "*Cid": "cid1", "*Oli": "oli1"}
    lobby.hub.move(secrets[room.blue], str(uid), "aa")
    lobby.hub.propose(secrets[room.red], str(uid), "resign")
    assert room.game.result is not None
    lobby.timers.advance(1)  # within the game actions' rates


def new_game(lobby: Lobby, uid: int, first: str, second: str) -> list[str]:
    """Both players propose a new game at table `uid`; the refusals they read."""
    refusals = []
    for secret in (first, second):
        refusals += lobby.refusals(lobby.send(secret, f"u.{uid}.new"))
    return [decode_client_text(refusal) for refusal in refusals]


def test_a_player_begins_a_bounded_number_of_games_an_hour_then_waits() -> None:
    lobby = Lobby()
    lobby.send("ala1", f"v.0.s.*Bob.{FREE}")
    lobby.send("bob1", "v.0.a")
    uid = table_of(lobby, "*Ala")
    for _ in range(GAMES_BEGUN_PER_HOUR - 1):
        play_one_and_resign(lobby, uid)
        assert new_game(lobby, uid, "ala1", "bob1") == []
    play_one_and_resign(lobby, uid)
    room = lobby.hub.tables[uid].room
    assert room is not None and room.games_played == GAMES_BEGUN_PER_HOUR - 1

    refused = new_game(lobby, uid, "ala1", "bob1")
    assert refused[0].startswith(f"*Ala has begun {GAMES_BEGUN_PER_HOUR} games in the last hour; ")
    assert room.games_played == GAMES_BEGUN_PER_HOUR - 1 and room.game.result is not None
    assert lobby.refusals(lobby.send("cid1", f"v.0.s.*Ala.{FREE}")) == []
    told = lobby.refusals(lobby.send("ala1", "v.0.a"))  # nor any other way
    assert decode_client_text(told[0]).startswith(f"*Ala has begun {GAMES_BEGUN_PER_HOUR} games")

    lobby.timers.advance(3600)
    lobby.send("cid1", f"v.0.s.*Ala.{FREE}")
    assert lobby.refusals(lobby.send("ala1", "v.0.a")) == []


def test_the_guests_of_one_address_and_one_network_share_a_bound() -> None:
    lobby = Lobby(Caps(games_begun_per_address=2, network_factor=2))
    for secret, nick, host in [
        ("gus1", "*Gus", 1),
        ("gil1", "*Gil", 1),
        ("gem1", "*Gem", 2),
        ("gia1", "*Gia", 3),
    ]:
        lobby.hub.guest_login(secret, nick, "en", Origin(f"192.0.2.{host}", False, NETWORK))
        lobby.reply(secret)
    for guest in ("gus1", "gil1", "gem1"):
        lobby.send(guest, f"v.0.s.*Oli.{FREE}")
        assert lobby.refusals(lobby.send("oli1", "v.0.a")) == []

    told = [decode_client_text(line) for line in lobby.refusals(lobby.send("gil1", f"v.0.s.*Bob.{FREE}"))]
    assert told == [
        "Guests from the address of *Gil have begun 2 games in the last hour; log in with an account, or "
        "wait 60 minutes."
    ]
    lobby.send("gem1", f"v.0.s.*Bob.{FREE}")  # another address of the network: its own bound, 2
    assert lobby.refusals(lobby.send("bob1", "v.0.a")) == []
    told = [decode_client_text(line) for line in lobby.refusals(lobby.send("gia1", f"v.0.s.*Cid.{FREE}"))]
    assert told == [  # the network's bound: 2 times the network factor
        "Guests from the network of *Gia have begun 4 games in the last hour; log in with an account, or "
        "wait 60 minutes."
    ]


def test_accounts_count_for_themselves_only_and_tournament_tables_for_nobody() -> None:
    lobby = Lobby(Caps(games_begun_per_address=1))
    for n in range(3):
        account = Account(f"Acc{n}", 1500, 0, 0, 0)
        lobby.hub.login(f"acc{n}xxxxxxx", account, "en", Origin("192.0.2.1", False, NETWORK))
        lobby.reply(f"acc{n}xxxxxxx")
    lobby.send("acc0xxxxxxx", f"v.0.s.Acc1.{FREE}")
    assert lobby.refusals(lobby.send("acc1xxxxxxx", "v.0.a")) == []
    lobby.send("acc2xxxxxxx", f"v.0.s.Acc0.{FREE}")
    assert lobby.refusals(lobby.send("acc0xxxxxxx", "v.0.a")) == []

    for _ in range(GAMES_BEGUN_PER_HOUR + 1):  # an organiser's tables are the organiser's to bound
        table = lobby.hub.open_table(parse_game_type("2020stanR0.180.15"), "*Ala", "*Bob")
        play_one_and_resign(lobby, table.uid)
    lobby.send("ala1", f"v.0.s.*Bob.{FREE}")
    assert lobby.refusals(lobby.send("bob1", "v.0.a")) == []
