"""Seeks and quick-pairing pools over the protocol (docs/protocol.md, "Seeks and quick pairing"): the `k`
and `j` commands inside polls, the `ka`/`kd` lines everyone in the lobby reads and the `w` line a waiting
player reads, the games they start, what ends them, and every refusal, which changes nothing."""

from __future__ import annotations

import asyncio
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.hub import seeks as seeks_module
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.limits import Caps
from server.hub.model import Origin
from server.hub.persistence import Account
from server.hub.pools import GAP_AT_FIRST, GAP_GROWTH, JOINS_PER_MINUTE, POOLS
from server.hub.seeks import MOST_SEEKS, SEEKS_PER_MINUTE
from server.protocol.codec import parse_commands
from server.protocol.seeks import AcceptSeek, PostSeek, RatingRange

FREE = "2020s0.4.a.F.a.180.2.."  # 20x20, four crosses, free, 3 min + 2 s; the seeker is blue
RATED = "2020s0.4.a.R.a.180.2.."
BOT_UNRATED = "A bot and a person play unrated games only here."
GUESTS = {"ala1": "*Ala", "bob1": "*Bob", "cid1": "*Cid", "oli1": "*Oli"}  # *Oli only reads


class Lobby:
    """A hub with players who poll: each command numbered as a client numbers them, each reply read
    from the player's last msgNo."""

    def __init__(self, caps: Caps | None = None) -> None:
        self.timers = ManualTimers()
        self.hub = Hub(timers=self.timers, rng=random.Random(5), caps=caps)
        self.seen: dict[str, int] = {}
        self.sent: dict[str, int] = {}
        for secret, nick in GUESTS.items():
            self.hub.guest_login(secret, nick, "en")
            self.reply(secret)

    def log_in(self, secret: str, nick: str, rating: int, *, bot: bool = False) -> None:
        self.hub.login(secret, Account(nick, rating, 0, 0, 0, bot=bot))
        self.reply(secret)

    def send(self, secret: str, *commands: str) -> list[str]:
        """Commands in one poll (`k.0.a.1` is numbered `k<n>.0.a.1`); the reply's lines."""
        numbered = []
        for command in commands:
            self.sent[secret] = self.sent.get(secret, 0) + 1
            numbered.append(f"{command[0]}{self.sent[secret]}{command[1:]}")
        self.hub.receive(secret, parse_commands("/".join(numbered)))
        return self.reply(secret)

    def reply(self, secret: str) -> list[str]:
        text = self.hub.reply(secret, self.seen.get(secret, 0), with_subscriptions=False)
        lines = text.split("/")
        self.seen[secret] = int(lines[1][1:].split(".")[1])
        return lines

    def whole(self, secret: str) -> list[str]:
        """The whole state a newcomer (or a client starting again from msgNo 0) reads."""
        return self.hub.reply(secret, 0, with_subscriptions=False).split("/")

    def refusals(self, lines: list[str]) -> list[str]:
        return [line.split(".e.", 1)[1] for line in lines if line.startswith("ca") and ".e." in line]

    def games(self) -> list[int]:
        return [uid for uid, table in self.hub.tables.items() if table.room is not None]


def seeks(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith(("ka", "kd"))]


def pool_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("w")]


def test_a_seek_is_seen_by_everyone_and_the_first_to_accept_plays_it() -> None:
    lobby = Lobby()
    assert seeks(lobby.send("ala1", f"k.0.s...{FREE}")) == [f"ka1.*Ala...{FREE}"]
    assert seeks(lobby.reply("bob1")) == [f"ka1.*Ala...{FREE}"]
    assert seeks(lobby.reply("cid1")) == [f"ka1.*Ala...{FREE}"]
    assert f"ka1.*Ala...{FREE}" in lobby.whole("cid1")  # a newcomer's whole lobby lists it

    news = lobby.send("bob1", "k.0.a.1")

    uid = lobby.games()[0]
    room = lobby.hub.tables[uid].room
    assert room is not None and (room.blue, room.red) == ("*Ala", "*Bob")  # `a`: the seeker is blue
    assert room.game_type.ranked is False and room.game_type.width == 20
    assert "kd1" in news and f"q{uid}" in news
    assert "kd1" in lobby.reply("cid1") and f"q{uid}" in lobby.reply("ala1")
    assert seeks(lobby.whole("cid1")) == []
    assert lobby.refusals(lobby.send("cid1", "k.0.a.1")) == ["There is no seek 1: it was taken or withdrawn."]
    assert lobby.games() == [uid]


def test_who_is_blue_follows_the_game_type_as_an_invitation_does() -> None:
    lobby = Lobby()
    lobby.send("ala1", "k.0.s..." + FREE.replace(".a.F.", ".p.F."))
    lobby.send("bob1", "k.0.a.1")
    room = lobby.hub.tables[lobby.games()[0]].room
    assert room is not None and (room.blue, room.red) == ("*Bob", "*Ala")  # `p`: the one who accepts


def test_a_rating_range_admits_only_accounts_within_it() -> None:
    lobby = Lobby()
    lobby.log_in("dan12345678", "Dan", 1520)
    lobby.log_in("eve12345678", "Eve", 1900)
    lobby.log_in("fay12345678", "Fay", 1650)
    lobby.send("dan12345678", f"k.0.s.1400.1700.{FREE}")
    assert seeks(lobby.reply("eve12345678")) == [f"ka1.Dan.1400.1700.{FREE}"]

    refused = lobby.send("eve12345678", "k.0.a.1")
    assert lobby.refusals(refused) == ["This seek is for ratings 1400 to 1700."]
    guest = lobby.send("bob1", "k.0.a.1")
    assert lobby.refusals(guest) == ["This seek is for ratings 1400 to 1700."]
    assert lobby.games() == [] and 1 in lobby.hub.seeks.open

    lobby.send("fay12345678", "k.0.a.1")
    assert len(lobby.games()) == 1 and lobby.hub.seeks.open == {}


def test_the_refusals_say_why_and_change_nothing() -> None:
    lobby = Lobby()
    lobby.send("ala1", f"k.0.s...{FREE}")
    lobby.reply("cid1")
    before = dict(lobby.hub.seeks.open)

    assert lobby.refusals(lobby.send("ala1", "k.0.a.1")) == ["This is your own seek: cancel it instead."]
    assert lobby.refusals(lobby.send("bob1", "k.0.c.1")) == ["That is not your seek."]
    assert lobby.refusals(lobby.send("bob1", "k.0.a.9")) == ["There is no seek 9: it was taken or withdrawn."]
    assert lobby.refusals(lobby.send("bob1", "k.0.z")) == [
        "k takes s.LOWEST.HIGHEST.GAMETYPE, a.NUMBER or c.NUMBER."
    ]
    assert lobby.refusals(lobby.send("bob1", f"k.0.s.1800.1200.{FREE}")) == [
        "The lowest rating of the range is above its highest."
    ]
    for game_type, why in [
        ("2020s0.4.a.A.a.180.2..", "A seek is a ranked or free game between two players."),
        ("2020s0..a.a.n...c___SUsuen*Bob.", "A seek is a ranked or free game between two players."),
        ("2020s0.4.a.F.a.180.2..Cup", "Tournament games are set up by organisers."),
        ("9999", "Game type refused: "),
    ]:
        refused = lobby.refusals(lobby.send("bob1", f"k.0.s...{game_type}"))
        assert len(refused) == 1 and refused[0].startswith(why), refused
    assert lobby.hub.seeks.open == before and lobby.games() == []
    assert seeks(lobby.reply("cid1")) == []  # nothing new in the lobby


def test_a_player_blocked_or_ignored_by_the_seeker_cannot_accept() -> None:
    lobby = Lobby()
    lobby.send("ala1", "c.ignore._*Bob", f"k.0.s...{FREE}")
    assert lobby.refusals(lobby.send("bob1", "k.0.a.1")) == ["*Ala does not accept your invitations."]
    assert lobby.games() == []
    lobby.send("cid1", "k.0.a.1")
    assert len(lobby.games()) == 1


def bots_and_people(caps: Caps | None = None) -> Lobby:
    """Dan and Eve people, Robo and Zed bots (docs/bots.md), all rated 1500."""
    lobby = Lobby(caps)
    for secret, nick, bot in [("dan", "Dan", False), ("eve", "Eve", False), ("robo", "Robo", True)]:
        lobby.log_in(f"{secret}12345678", nick, 1500, bot=bot)
    lobby.log_in("zed12345678", "Zed", 1500, bot=True)
    return lobby


def test_a_rated_seek_is_never_accepted_across_a_bot_and_a_person_whichever_is_the_bot() -> None:
    lobby = bots_and_people()
    lobby.send("dan12345678", f"k.0.s...{RATED}")
    lobby.send("robo12345678", f"k.0.s...{RATED}")
    assert lobby.refusals(lobby.send("robo12345678", "k.0.a.1")) == [BOT_UNRATED]  # a person's seek
    assert lobby.refusals(lobby.send("eve12345678", "k.0.a.2")) == [BOT_UNRATED]  # a bot's seek
    assert lobby.games() == [] and list(lobby.hub.seeks.open) == [1, 2]
    robo, dan = lobby.hub.players["robo12345678"], lobby.hub.players["dan12345678"]
    assert not lobby.hub.seeks.open_to(robo, 1) and lobby.hub.seeks.open_to(robo, 2)  # its own
    assert lobby.hub.seeks.open_to(dan, 1) and not lobby.hub.seeks.open_to(dan, 2)

    lobby.send("zed12345678", "k.0.a.2")  # bot against bot: rated
    lobby.send("eve12345678", "k.0.a.1")  # person against person
    rooms = [lobby.hub.tables[uid].room for uid in lobby.games()]
    assert sorted((room.blue, room.red) for room in rooms if room) == [("Dan", "Eve"), ("Robo", "Zed")]


def test_a_free_seek_is_open_across_bots_and_people_and_the_admin_may_allow_rated_ones() -> None:
    lobby = bots_and_people()
    lobby.send("dan12345678", f"k.0.s...{FREE}")
    lobby.send("robo12345678", "k.0.a.1")
    assert len(lobby.games()) == 1 and lobby.hub.seeks.open == {}

    allowed = bots_and_people(Caps(bots_rated=True))
    allowed.send("robo12345678", f"k.0.s...{RATED}")
    assert allowed.hub.seeks.open_to(allowed.hub.players["dan12345678"], 1)
    allowed.send("dan12345678", "k.0.a.1")
    assert len(allowed.games()) == 1


def test_a_pool_pairs_a_bot_with_bots_only_however_long_it_waits() -> None:
    lobby = bots_and_people()
    lobby.send("robo12345678", "j.0.20x20_3_2")
    lobby.send("dan12345678", "j.0.20x20_3_2")
    lobby.timers.advance(600)
    lobby.hub.pools.pair_all()
    assert lobby.games() == [] and len(lobby.hub.pools.waiting) == 2

    lobby.send("zed12345678", "j.0.20x20_3_2")
    lobby.send("eve12345678", "j.0.20x20_3_2")
    rooms = [lobby.hub.tables[uid].room for uid in lobby.games()]
    assert sorted({room.blue, room.red} == {"Robo", "Zed"} for room in rooms if room) == [False, True]
    assert lobby.hub.pools.waiting == {}


def test_the_admin_may_let_a_pool_pair_a_bot_with_a_person() -> None:
    lobby = bots_and_people(Caps(bots_rated=True))
    lobby.send("robo12345678", "j.0.20x20_3_2")
    lobby.send("dan12345678", "j.0.20x20_3_2")
    room = lobby.hub.tables[lobby.games()[0]].room
    assert room is not None and {room.blue, room.red} == {"Robo", "Dan"}


def test_a_player_has_a_few_seeks_at_most_and_a_flood_of_posts_is_refused() -> None:
    lobby = Lobby()
    for _ in range(MOST_SEEKS):
        assert lobby.refusals(lobby.send("ala1", f"k.0.s...{FREE}")) == []
    too_many = lobby.send("ala1", f"k.0.s...{FREE}")
    assert lobby.refusals(too_many) == [f"You have {MOST_SEEKS} open seeks already: cancel one first."]
    assert len(lobby.hub.seeks.open) == MOST_SEEKS

    posted = MOST_SEEKS
    while posted < SEEKS_PER_MINUTE:  # posted and cancelled again and again
        number = max(lobby.hub.seeks.open)
        assert lobby.refusals(lobby.send("ala1", f"k.0.c.{number}", f"k.0.s...{FREE}")) == []
        posted += 1
    number = max(lobby.hub.seeks.open)
    flood = lobby.send("ala1", f"k.0.c.{number}", f"k.0.s...{FREE}")
    assert lobby.refusals(flood) == [f"At most {SEEKS_PER_MINUTE} seeks a minute; please wait a little."]
    assert len(lobby.hub.seeks.open) == MOST_SEEKS - 1

    lobby.timers.advance(61)
    assert lobby.refusals(lobby.send("ala1", f"k.0.s...{FREE}")) == []


def test_the_lobby_lists_a_bounded_number_of_seeks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(seeks_module, "MOST_OPEN_SEEKS", 4)
    lobby = Lobby()
    lobby.send("ala1", f"k.0.s...{FREE}", f"k.0.s...{FREE}", f"k.0.s...{FREE}")
    lobby.send("bob1", f"k.0.s...{FREE}")
    assert lobby.refusals(lobby.send("bob1", f"k.0.s...{FREE}")) == [
        "The lobby has 4 open seeks already: accept one, or try later."
    ]
    assert len(lobby.hub.seeks.open) == 4


@pytest.mark.parametrize("how", ["cancel", "logout", "timeout", "invitation", "another seek", "pool"])
def test_a_seek_ends_when_cancelled_or_its_player_leaves_or_begins_another_game(how: str) -> None:
    lobby = Lobby()
    lobby.send("ala1", f"k.0.s...{FREE}", f"k.0.s...{FREE}")
    lobby.send("cid1", f"k.0.s...{FREE}")
    lobby.reply("oli1")
    if how == "cancel":
        lobby.send("ala1", "k.0.c.1", "k.0.c.2")
    elif how == "logout":
        lobby.hub.logout("ala1")
    elif how == "timeout":
        for secret in ("bob1", "cid1", "oli1"):
            lobby.hub.receive(secret, [])
        lobby.timers.advance(lobby.hub.poll_timeout - 1)
        for secret in ("bob1", "cid1", "oli1"):
            lobby.hub.receive(secret, [])
        lobby.timers.advance(2)
        lobby.hub.sweep()
        assert "ala1" not in lobby.hub.players
    elif how == "invitation":
        lobby.send("bob1", f"v.0.s.*Ala.{FREE}")
        lobby.send("ala1", "v.0.a")
    elif how == "another seek":
        lobby.send("ala1", "k.0.a.3")  # she takes *Cid's seek: all three end, *Cid's too
    else:
        lobby.send("ala1", "j.0.20x20_3_2")
        lobby.send("bob1", "j.0.20x20_3_2")
    news = seeks(lobby.reply("oli1"))
    assert {"kd1", "kd2"} <= set(news)
    assert ("kd3" in news) is (how == "another seek")
    assert sorted(lobby.hub.seeks.open) == ([] if how == "another seek" else [3])


def test_a_new_game_agreed_at_a_table_ends_the_players_seeks() -> None:
    lobby = Lobby()
    lobby.send("ala1", f"v.0.s.*Bob.{FREE}")
    lobby.send("bob1", "v.0.a")
    uid = lobby.games()[0]
    lobby.send("ala1", f"u.{uid}.resign")
    lobby.send("ala1", f"k.0.s...{FREE}")
    lobby.send("cid1", f"k.0.s...{FREE}")

    lobby.send("ala1", f"u.{uid}.new")
    lobby.send("bob1", f"u.{uid}.new")

    assert list(lobby.hub.seeks.open) == [2]  # *Cid's stays
    assert "kd1" in lobby.reply("cid1")


def test_an_analysis_board_does_not_end_a_seek() -> None:
    lobby = Lobby()
    lobby.send("ala1", f"k.0.s...{FREE}", "v.0.s.*Ala.2020s0..a.a.n...c___SUsuen*Ala.")
    assert len(lobby.games()) == 1 and list(lobby.hub.seeks.open) == [1]


def test_two_strangers_in_a_pool_are_paired_at_once_and_leave_it() -> None:
    lobby = Lobby()
    waiting = lobby.send("ala1", "j.0.20x20_3_2")
    assert pool_lines(waiting) == [f"w20x20_3_2.0.{GAP_AT_FIRST}.1"]
    lobby.timers.advance(3)
    assert pool_lines(lobby.reply("ala1")) == [f"w20x20_3_2.3.{GAP_AT_FIRST + 3 * GAP_GROWTH}.1"]
    assert pool_lines(lobby.reply("bob1")) == []  # to the one waiting alone

    paired = lobby.send("bob1", "j.0.20x20_3_2")

    uid = lobby.games()[0]
    room = lobby.hub.tables[uid].room
    assert room is not None and {room.blue, room.red} == {"*Ala", "*Bob"}
    assert str(room.game_type) == POOLS["20x20_3_2"]
    assert pool_lines(paired) == [] and f"q{uid}" in paired
    assert pool_lines(lobby.reply("ala1")) == [] and lobby.hub.pools.waiting == {}


def test_the_gap_a_pool_allows_widens_as_players_wait() -> None:
    lobby = Lobby()
    lobby.log_in("dan12345678", "Dan", 1500)
    lobby.log_in("eve12345678", "Eve", 1800)
    lobby.send("dan12345678", "j.0.39x32_5_5")
    lobby.timers.advance(5)
    lobby.send("eve12345678", "j.0.39x32_5_5")  # 300 apart: Dan's gap is 200 after 5 s
    assert lobby.games() == []
    assert pool_lines(lobby.reply("eve12345678")) == [f"w39x32_5_5.0.{GAP_AT_FIRST}.2"]

    lobby.timers.advance(4)
    lobby.hub.sweep()  # 9 s: 280
    assert lobby.games() == []
    lobby.timers.advance(1)
    lobby.hub.sweep()  # 10 s: 300

    room = lobby.hub.tables[lobby.games()[0]].room
    assert room is not None and (room.blue, room.red) == ("Dan", "Eve")  # ranked: the lower rating is blue


def test_whoever_waited_longest_takes_the_nearest_rating_not_the_earliest_comer() -> None:
    lobby = Lobby()
    players = [("dan12345678", "Dan", 1500), ("fay12345678", "Fay", 1750), ("eve12345678", "Eve", 1300)]
    for secret, nick, rating in players:  # each too far from the others to be paired at once
        lobby.log_in(secret, nick, rating)
        lobby.send(secret, "j.0.25x25_5_5")
    assert lobby.games() == []

    lobby.timers.advance(13)  # Dan's gap: 360, room for both Fay (250) and Eve (200)
    lobby.hub.sweep()

    room = lobby.hub.tables[lobby.games()[0]].room
    assert room is not None and (room.blue, room.red) == ("Eve", "Dan")
    assert pool_lines(lobby.reply("fay12345678")) == [f"w25x25_5_5.13.{GAP_AT_FIRST + 13 * GAP_GROWTH}.1"]


def test_leaving_the_pool_or_the_session_takes_the_player_out() -> None:
    lobby = Lobby()
    lobby.send("ala1", "j.0.20x20_3_2")
    assert pool_lines(lobby.send("ala1", "j.0.")) == []
    lobby.send("bob1", "j.0.20x20_3_2")
    assert lobby.games() == []
    lobby.hub.logout("bob1")
    lobby.send("ala1", "j.0.20x20_3_2")
    assert lobby.games() == [] and list(lobby.hub.pools.waiting) == [lobby.hub.players["ala1"]]


def test_a_player_joins_at_most_so_many_pools_a_minute() -> None:
    """Each join is a line to every member of a cluster: toggling pools in every command is refused."""
    lobby = Lobby()
    pools = list(POOLS)
    for n in range(JOINS_PER_MINUTE):
        lobby.send("ala1", f"j.0.{pools[n % 2]}")
    refused = lobby.send("ala1", f"j.0.{pools[2]}", "j.0.")
    words = f"At most {JOINS_PER_MINUTE} pools joined a minute; please wait a little."
    assert lobby.refusals(refused) == [words]
    assert lobby.hub.pools.waiting == {}  # the leave was done
    lobby.timers.advance(60)
    assert pool_lines(lobby.send("ala1", f"j.0.{pools[2]}")) == [f"w{pools[2]}.0.{GAP_AT_FIRST}.1"]


def test_another_pool_replaces_the_first_and_a_player_at_the_games_cap_is_refused() -> None:
    lobby = Lobby()
    lobby.send("ala1", "j.0.20x20_3_2")
    assert pool_lines(lobby.send("ala1", "j.0.39x32_15_10")) == [f"w39x32_15_10.0.{GAP_AT_FIRST}.1"]
    assert lobby.refusals(lobby.send("ala1", "j.0.10x10_1_0")) == [
        "There is no pool 10x10_1_0; the pools are 20x20_3_2, 25x25_5_5, 39x32_5_5, 39x32_15_10."
    ]
    assert pool_lines(lobby.reply("ala1")) == [f"w39x32_15_10.0.{GAP_AT_FIRST}.1"]  # unchanged

    for _ in range(lobby.hub.caps.games_per_player):
        lobby.send("bob1", f"v.0.s.*Cid.{FREE}")
        lobby.send("cid1", "v.0.a")
    refused = lobby.send("bob1", "j.0.20x20_3_2")
    assert lobby.refusals(refused) == ["*Bob has 5 unfinished games already (at most 5)."]
    assert lobby.refusals(lobby.send("bob1", f"k.0.s...{FREE}")) == [
        "*Bob has 5 unfinished games already (at most 5)."
    ]
    assert list(lobby.hub.pools.waiting) == [lobby.hub.players["ala1"]] and lobby.hub.seeks.open == {}


def guests_whose_address_holds_its_tables(lobby: Lobby, his_host: str = "192.0.2.5") -> None:
    """*Mal and *Mel play a game from one address, whose guests may hold one table (Caps), and *Mil, of
    that address (or of another of its network), waits in a pool and seeks a game: no game can open with
    *Mil now."""
    for secret, nick in [("mal1", "*Mal"), ("mel1", "*Mel"), ("mil1", "*Mil")]:
        host = his_host if secret == "mil1" else "192.0.2.5"
        lobby.hub.guest_login(secret, nick, "en", Origin(host, False, "192.0.2.0/24"))
        lobby.reply(secret)
    lobby.send("mil1", "j.0.20x20_3_2", f"k.0.s...{FREE}")
    lobby.send("mal1", f"v.0.s.*Mel.{FREE}")
    lobby.send("mel1", "v.0.a")
    assert len(lobby.games()) == 1


def test_a_waiter_whose_address_holds_its_tables_leaves_the_pool_rather_than_keep_others_from_pairs() -> None:
    """*Mil, the longest waiter and nearest to everyone, was chosen first and for everyone, and no table
    could open: nobody near his rating was ever paired."""
    lobby = Lobby(Caps(guest_tables_per_address=1))
    guests_whose_address_holds_its_tables(lobby)

    lobby.send("ala1", "j.0.20x20_3_2")
    lobby.send("bob1", "j.0.20x20_3_2")

    room = lobby.hub.tables[lobby.games()[1]].room
    assert room is not None and {room.blue, room.red} == {"*Ala", "*Bob"}
    assert lobby.hub.pools.waiting == {}
    told = lobby.refusals(lobby.reply("mil1"))
    assert told == ["Guests from your address have 1 game tables open already."]


def test_a_seek_whose_seekers_address_holds_its_tables_ends_and_the_acceptor_learns_nothing_of_it() -> None:
    """The acceptor was told `Guests from your network (192.0.2.0/24)...`: the seeker's network, as if
    it were theirs; and the seek stayed, offered as an invitation to every old client, never playable."""
    lobby = Lobby(Caps(guest_tables_per_address=1, network_factor=1))
    guests_whose_address_holds_its_tables(lobby, his_host="192.0.2.9")
    assert lobby.hub.offers.line(lobby.hub.players["oli1"]) == f"vg*Mil.{FREE}"

    refused = lobby.refusals(lobby.send("ala1", "k.0.a.1"))

    assert refused == ["*Mil cannot begin a game now: the seek is withdrawn."]
    assert lobby.hub.seeks.open == {} and "kd1" in lobby.reply("oli1")
    assert lobby.hub.offers.line(lobby.hub.players["oli1"]) is None
    told = lobby.refusals(lobby.reply("mil1"))
    assert told == ["Guests from your network (192.0.2.0@S24) have 1 game tables open already."]  # `/`
    assert len(lobby.games()) == 1


def test_no_pairing_while_storage_fails_and_no_seek_accepted() -> None:
    lobby = Lobby()
    lobby.send("ala1", "j.0.20x20_3_2", f"k.0.s...{FREE}")
    lobby.hub.persistence.storage_failure = "disk full"
    refused = lobby.send("bob1", "j.0.20x20_3_2", "k.0.a.1")
    assert len(lobby.refusals(refused)) == 2
    assert all(line.startswith("The server cannot save anything") for line in lobby.refusals(refused))
    assert lobby.games() == [] and len(lobby.hub.pools.waiting) == 1
    lobby.hub.persistence.storage_failure = None
    lobby.send("bob1", "j.0.20x20_3_2")
    assert len(lobby.games()) == 1


def test_the_hub_methods_for_the_endpoints_do_what_the_commands_do() -> None:
    lobby = Lobby()
    lobby.hub.seek("ala1", PostSeek(FREE, RatingRange()))
    assert seeks(lobby.reply("bob1")) == seeks(lobby.reply("cid1")) == [f"ka1.*Ala...{FREE}"]
    lobby.hub.seek("bob1", AcceptSeek(1))
    assert len(lobby.games()) == 1 and seeks(lobby.reply("cid1")) == ["kd1"]
    lobby.hub.pool("cid1", "20x20_3_2")
    assert pool_lines(lobby.reply("cid1"))
    lobby.hub.pool("cid1", "")
    assert not pool_lines(lobby.reply("cid1"))


@settings(max_examples=300)
@given(
    kind=st.sampled_from("kj"), text=st.text(alphabet=st.sampled_from("sacj.0123456789x_R F/"), max_size=40)
)
def test_any_seek_or_pool_command_is_done_or_refused_in_a_line(kind: str, text: str) -> None:
    lobby = Lobby()
    lines = lobby.send("ala1", f"{kind}.0.{text.replace('/', '')}")
    assert lines[0] == "ok" and lines[-1] == "end"
    assert lobby.games() == []  # alone: nobody to play


async def test_a_waiting_players_long_poll_ends_at_each_sweep_to_show_the_gap_grown() -> None:
    lobby = Lobby()
    lobby.send("ala1", "j.0.20x20_3_2")
    lobby.timers.advance(2)  # the lobby's wake after the logins is past (LOBBY_WAKE_EVERY)
    lobby.reply("ala1")
    waiting = lobby.hub.wait_for_news("ala1", lobby.seen["ala1"], 10.0)
    assert waiting is not None
    poll = asyncio.ensure_future(waiting)
    await asyncio.sleep(0.05)
    assert not poll.done()

    lobby.timers.advance(3)
    lobby.hub.sweep()

    await asyncio.wait_for(poll, 1.0)
    assert pool_lines(lobby.reply("ala1")) == [f"w20x20_3_2.5.{GAP_AT_FIRST + 5 * GAP_GROWTH}.1"]
