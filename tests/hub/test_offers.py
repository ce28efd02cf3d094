"""Seeks offered as invitations (docs/protocol.md, "What old clients see"): a reader whose client does
not read seeks gets one seek at a time as a `vg` line, answers it with `v..a`, `v..r` or `v..b` as an
invitation, never gets one it could not accept or its client could not play, and a real invitation
always comes first."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc

from server.hub.persistence import Account
from server.protocol.codec import parse_commands
from tests.hub.test_seeks import FREE, Lobby, seeks

RANKED = "2020s0.4.s.R.a.180.2.."
NO_TERRITORY = "2020n0.4.a.F.a.180.2.."
TERRITORY = "2020t0.4.a.F.a.180.2.."
BIG = "3932s0.4.a.F.a.300.5.."


def offered(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("vg")]


def test_a_seek_is_offered_to_every_reader_as_an_invitation_and_v_a_plays_it() -> None:
    lobby = Lobby()
    lobby.send("ala1", f"k.0.s...{FREE}")
    assert offered(lobby.reply("bob1")) == [f"vg*Ala.{FREE}"]
    assert offered(lobby.reply("cid1")) == [f"vg*Ala.{FREE}"]
    assert offered(lobby.reply("ala1")) == []  # not one's own

    accepted = lobby.send("bob1", "v.0.a")
    (uid,) = lobby.games()
    assert f"q{uid}" in accepted and offered(accepted) == []
    assert lobby.hub.tables[uid].room.lineup.seats == ("*Ala", "*Bob")  # the seek's `a`: the seeker is blue
    assert lobby.hub.seeks.open == {}
    assert seeks(lobby.reply("cid1")) == ["kd1"] and offered(lobby.reply("cid1")) == []
    assert f"q{uid}" in lobby.reply("ala1") and lobby.hub.invitations == {}


def test_quiet_polls_carry_the_offer_as_every_reply_repeats_an_invitation() -> None:
    lobby = Lobby()
    lobby.send("ala1", f"k.0.s...{FREE}")
    lobby.reply("bob1")
    quiet = lobby.reply("bob1")  # nothing new since the last reply
    assert quiet[2:] == ["q0", f"vg*Ala.{FREE}", "end"]
    assert lobby.reply("bob1") == quiet


def test_v_r_declines_the_seek_for_good_offers_the_next_and_tells_the_seeker_nothing() -> None:
    lobby = Lobby()
    lobby.send("ala1", f"k.0.s...{FREE}")
    lobby.send("cid1", f"k.0.s...{BIG}")
    assert offered(lobby.reply("bob1")) == [f"vg*Ala.{FREE}"]  # the oldest

    assert offered(lobby.send("bob1", "v.0.r")) == [f"vg*Cid.{BIG}"]
    assert [line for line in lobby.reply("ala1") if line.startswith("vr")] == []
    assert lobby.hub.players["ala1"].rejected_by == [] and 1 in lobby.hub.seeks.open
    assert offered(lobby.reply("oli1")) == [f"vg*Ala.{FREE}"]  # declined by Bob alone

    assert offered(lobby.send("bob1", "v.0.r")) == []  # both declined: nothing, on every poll
    assert offered(lobby.reply("bob1")) == [] and lobby.games() == []
    assert lobby.refusals(lobby.send("bob1", "v.0.a")) == ["You have no invitation to answer."]


def test_the_next_seek_of_the_same_seeker_comes_after_a_reply_without_it() -> None:
    """MultiPoints keeps an invitation's row while `vg` lines of its nick keep coming: a second seek of
    the same player straight after the first would show as the first's game."""
    lobby = Lobby()
    lobby.send("ala1", f"k.0.s...{FREE}", f"k.0.s...{BIG}")
    assert offered(lobby.reply("bob1")) == [f"vg*Ala.{FREE}"]
    assert offered(lobby.send("bob1", "v.0.r")) == []
    assert lobby.hub.players["bob1"].nudged  # the next poll is answered at once
    assert offered(lobby.reply("bob1")) == [f"vg*Ala.{BIG}"]
    lobby.send("bob1", "v.0.a")
    (uid,) = lobby.games()
    assert lobby.hub.tables[uid].room.game_type.width == 39


def test_v_b_declines_and_refuses_the_seekers_seeks_and_invitations() -> None:
    lobby = Lobby()
    lobby.send("ala1", f"k.0.s...{FREE}")
    lobby.send("cid1", f"k.0.s...{BIG}")
    lobby.reply("bob1")
    assert offered(lobby.send("bob1", "v.0.b")) == [f"vg*Cid.{BIG}"]
    assert lobby.refusals(lobby.send("ala1", f"v.0.s.*Bob.{FREE}")) == [
        "*Bob does not accept your invitations."
    ]
    lobby.send("cid1", "k.0.c.2")
    lobby.send("ala1", f"k.0.s...{BIG}")  # another seek of hers: not for Bob either
    assert offered(lobby.reply("bob1")) == []


def test_v_a_takes_the_seek_the_reader_was_shown_or_none() -> None:
    """The seek a reply offered was taken before the reader answered: the answer takes no other."""
    lobby = Lobby()
    lobby.send("ala1", f"k.0.s...{FREE}")
    lobby.send("cid1", f"k.0.s...{BIG}")
    assert offered(lobby.reply("bob1")) == [f"vg*Ala.{FREE}"]
    lobby.send("oli1", "k.0.a.1")
    answer = lobby.send("bob1", "v.0.a")
    assert lobby.refusals(answer) == ["*Ala no longer offers that game: it was taken or withdrawn."]
    assert len(lobby.games()) == 1 and 2 in lobby.hub.seeks.open
    assert offered(answer) == [f"vg*Cid.{BIG}"]


def test_a_real_invitation_comes_first_and_an_offer_never_makes_the_reader_busy() -> None:
    lobby = Lobby()
    lobby.send("ala1", f"k.0.s...{FREE}")
    assert offered(lobby.reply("bob1")) == [f"vg*Ala.{FREE}"]
    assert lobby.refusals(lobby.send("cid1", f"v.0.s.*Bob.{BIG}")) == []  # not busy
    assert offered(lobby.reply("bob1")) == [f"vg*Cid.{BIG}"]  # the invitation alone

    lobby.send("cid1", "v.0.c")
    assert offered(lobby.reply("bob1")) == [f"vg*Ala.{FREE}"]  # the offer again
    lobby.send("cid1", f"v.0.s.*Bob.{BIG}")
    lobby.reply("bob1")
    lobby.send("bob1", "v.0.a")  # the invitation it was shown
    (uid,) = lobby.games()
    assert lobby.hub.tables[uid].room.lineup.seats == ("*Cid", "*Bob") and 1 in lobby.hub.seeks.open


def test_seeks_a_reader_could_not_accept_are_not_offered() -> None:
    lobby = Lobby()
    lobby.log_in("eve1", "Eve", 1500)
    lobby.log_in("ian1", "Ian", 1900)
    lobby.send("eve1", f"k.0.s.1400.1600.{RANKED}")
    assert offered(lobby.reply("ian1")) == []  # above the range
    assert offered(lobby.reply("bob1")) == []  # a guest: no rating
    lobby.send("cid1", f"k.0.s...{FREE}")
    assert offered(lobby.reply("ian1")) == [f"vg*Cid.{FREE}"]
    assert offered(lobby.reply("eve1")) == [f"vg*Cid.{FREE}"]  # her own is not offered to her

    lobby.log_in("uma1", "Uma", 1450)
    assert offered(lobby.reply("uma1")) == [f"vgEve.{RANKED}"]  # the oldest she may accept
    lobby.send("uma1", "c.ignore._Eve")
    assert offered(lobby.reply("uma1")) == [f"vg*Cid.{FREE}"]  # nor from one she ignores


def test_a_bots_ranked_seek_is_not_offered_to_a_person_where_bots_play_unrated() -> None:
    lobby = Lobby()
    lobby.hub.login("bot1", Account("Robo", 1500, 0, 0, 0, bot=True))
    lobby.reply("bot1")
    lobby.send("bot1", f"k.0.s...{RANKED}")
    assert offered(lobby.reply("bob1")) == []
    lobby.send("bot1", f"k.0.s...{FREE}")
    assert offered(lobby.reply("bob1")) == [f"vgRobo.{FREE}"]
    assert offered(lobby.reply("bot1")) == []  # nor to a bot: its feed reads seeks


def test_no_offer_to_a_busy_reader_nor_one_at_a_game_of_their_own() -> None:
    lobby = Lobby()
    lobby.send("ala1", f"k.0.s...{FREE}")
    lobby.send("bob1", f"v.0.s.*Cid.{BIG}")
    lobby.reply("cid1")
    lobby.send("cid1", "v.0.a")
    (uid,) = lobby.games()
    assert offered(lobby.reply("bob1")) == [] and offered(lobby.reply("cid1")) == []
    lobby.send("bob1", f"u.{uid}.resign")
    assert offered(lobby.reply("bob1")) == [f"vg*Ala.{FREE}"]  # the game is over

    lobby.hub.receive("oli1", parse_commands("i0nJb"))  # busy, as MultiPoints says it
    assert offered(lobby.reply("oli1")) == []
    lobby.hub.receive("oli1", parse_commands("i0nJa"))
    assert offered(lobby.reply("oli1")) == []  # the Java client: standard rules are not for it


def test_the_java_client_is_offered_only_games_without_territory_rules() -> None:
    """MultiPoints rejects an invitation to standard or territory rules by itself and writes to the
    inviter that it cannot play them (ServerZagram.java, `isEmptyScored`)."""
    lobby = Lobby()
    lobby.hub.receive("bob1", parse_commands("i0nJa"))
    lobby.send("ala1", f"k.0.s...{TERRITORY}", f"k.0.s...{FREE}")
    assert offered(lobby.reply("bob1")) == []
    assert offered(lobby.reply("cid1")) == [f"vg*Ala.{TERRITORY}"]  # zagram's client reads territory
    lobby.send("oli1", f"k.0.s...{NO_TERRITORY}")
    assert offered(lobby.reply("bob1")) == [f"vg*Oli.{NO_TERRITORY}"]


def test_a_client_that_reads_seeks_is_offered_none() -> None:
    lobby = Lobby()
    lobby.hub.guest_login("dan1", "*Dan", "en", reads_seeks=True)
    lobby.reply("dan1")
    lobby.send("ala1", f"k.0.s...{FREE}")
    lines = lobby.reply("dan1")
    assert seeks(lines) == [f"ka1.*Ala...{FREE}"] and offered(lines) == []
    assert lobby.hub.players["dan1"].info.split(".")[2] == "FK"  # its `i` flags

    lobby.hub.receive("bob1", parse_commands("i0nK"))  # a stream client says it as a flag
    assert offered(lobby.reply("bob1")) == []
    lobby.hub.guest_login("dan1", "*Dan", "en")  # the same session, now in a client that does not
    assert offered(lobby.reply("dan1")) == [f"vg*Ala.{FREE}"]


async def test_a_long_poll_ends_when_an_offer_comes_and_when_it_goes() -> None:
    lobby = Lobby()
    lobby.timers.advance(2)  # the lobby's wake after the logins is past (LOBBY_WAKE_EVERY)
    lobby.reply("bob1")
    waiting = lobby.hub.wait_for_news("bob1", lobby.seen["bob1"], 10.0)
    assert waiting is not None
    poll = asyncio.ensure_future(waiting)
    await asyncio.sleep(0.05)
    assert not poll.done()
    lobby.send("ala1", f"k.0.s...{FREE}")
    await asyncio.wait_for(poll, 1.0)
    assert offered(lobby.reply("bob1")) == [f"vg*Ala.{FREE}"]

    lobby.timers.advance(2)
    waiting = lobby.hub.wait_for_news("bob1", lobby.seen["bob1"], 10.0)
    assert waiting is not None
    poll = asyncio.ensure_future(waiting)
    await asyncio.sleep(0.05)
    lobby.send("ala1", "k.0.c.1")
    await asyncio.wait_for(poll, 1.0)
    assert offered(lobby.reply("bob1")) == []


def test_the_offer_is_chosen_again_only_when_the_seeks_or_the_reader_change() -> None:
    lobby = Lobby()
    for secret in ("ala1", "cid1", "oli1"):
        lobby.send(secret, f"k.0.s...{FREE}")
    lobby.reply("bob1")
    chosen = lobby.hub.offers.chosen[lobby.hub.players["bob1"]]
    for _ in range(3):
        lobby.reply("bob1")
    assert lobby.hub.offers.chosen[lobby.hub.players["bob1"]] is chosen
    lobby.send("oli1", "k.0.c.3")
    lobby.reply("bob1")
    assert lobby.hub.offers.chosen[lobby.hub.players["bob1"]] is not chosen


def test_a_seek_open_for_days_keeps_none_of_the_sessions_that_declined_it_and_left() -> None:
    """A seek lasts as long as its player's session (a bot's: weeks), and every reader who declined it
    stayed in its declines after their session ended, and with them the whole session (its mailbox, its
    lists): 12 KB for each guest who declined it and left. A session that ends declines nothing
    any more (a new one of the same person is another reader, offered it again)."""
    lobby = Lobby()
    lobby.send("ala1", f"k.0.s...{FREE}")
    tracemalloc.start()
    try:
        for n in range(1000):
            secret = f"g{n:06d}"
            lobby.hub.guest_login(secret, f"*G{n}", "en")
            assert offered(lobby.reply(secret)) == [f"vg*Ala.{FREE}"]
            lobby.send(secret, "v.0.r")
            lobby.hub.logout(secret)
            lobby.hub.sweep()  # as the server's sweeps do, every 5 s (what they write lets go)
            if n == 99:
                gc.collect()
                kept = tracemalloc.get_traced_memory()[0]
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - kept
    finally:
        tracemalloc.stop()
    assert 1 in lobby.hub.seeks.open
    assert sum(len(readers) for readers in lobby.hub.offers.declined.values()) == 0  # was 1,000
    assert grown < 1_000_000  # the lobby's log of their comings and goings (bounded); was 11.1 MB
    assert offered(lobby.reply("bob1")) == [f"vg*Ala.{FREE}"]
    assert offered(lobby.send("bob1", "v.0.r")) == []  # a session still here declines as before
    assert offered(lobby.reply("bob1")) == [] and offered(lobby.reply("cid1")) == [f"vg*Ala.{FREE}"]
