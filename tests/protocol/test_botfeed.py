"""The bot feed's translation of stream replies (server/protocol/botfeed.py), on the line layouts of
docs/protocol.md: what is new is said once, what a reply repeats is not said again."""

from __future__ import annotations

import random

import pytest

from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.persistence import Account
from server.protocol.botfeed import Feed, move_text
from server.protocol.codec import ProtocolError

GAME = "2020s0..s.F.a.180.15.."


def reply(*lines: str, head: str = "ok", numbers: str = "0.10.0") -> str:
    return "/".join([head, f"m{numbers}", *lines, "end"])


def test_a_game_from_its_whole_state_to_its_archive() -> None:
    feed = Feed("Robo")
    events, logged_in = feed.read(
        reply(
            "q0",
            "q17",
            f"d17.{GAME}.*Ala.Robo",
            "x17.1.-.",
            "f1_180.p175.g30",
            "sr(;AB[jj]AW[kj];B[cb]BL[170];W[cc])",
            "u",
        )
    )
    assert logged_in and feed.seen == 10
    full, clock = events
    assert full == {
        "type": "gameFull",
        "table": 17,
        "gameType": GAME,
        "width": 20,
        "height": 20,
        "blue": "*Ala",
        "red": "Robo",
        "colour": "red",
        "setup": [{"colour": "blue", "x": 9, "y": 9}, {"colour": "red", "x": 10, "y": 9}],
        "moves": [{"colour": "blue", "x": 2, "y": 1, "seconds": 170}, {"colour": "red", "x": 2, "y": 2}],
    }
    assert clock == {
        "type": "clock",
        "table": 17,
        "toMove": "blue",
        "blue": 180,
        "red": 175,
        "paused": ["red"],
        "grace": 30,  # the `.g30`: seconds before blue's clock runs
    }

    events, _ = feed.read(reply("q0", "q17", "sa;B[cd.cddccbbccd]BL[65.5]", "f2_65.40", "u1undo"))
    assert events == [
        {"type": "move", "table": 17, "colour": "blue", "x": 2, "y": 3, "seconds": 65.5},
        {"type": "clock", "table": 17, "toMove": "red", "blue": 65, "red": 40, "paused": [], "grace": 0},
        {"type": "proposal", "table": 17, "by": "blue", "what": "undo"},
    ]
    events, _ = feed.read(reply("q0", "q17", "sa;UB[cd]", "u", "ca1700000000_0..u1undo.*Ala withdrew"))
    assert events == [
        {"type": "move", "table": 17, "colour": "blue", "x": 2, "y": 3, "undo": True},
        {"type": "proposalGone", "table": 17},
        {"type": "chat", "table": 17, "from": "", "code": "u1undo", "text": "*Ala withdrew"},
    ]
    events, _ = feed.read(reply("q0", "q17", "x17.2.W+1,5.", "ca1700000000_1.Robo.W3.gg &#45; @S"))
    assert events == [
        {"type": "gameEnd", "table": 17, "result": "W+1.5"},
        {"type": "chat", "table": 17, "from": "Robo", "code": "W3", "text": "gg - /"},
    ]
    events, _ = feed.read(reply("q0", "q17", "x17.2.W+1,5.1234"))
    assert events == [{"type": "archived", "table": 17, "number": 1234}]


def test_a_whole_state_followed_by_lines_in_one_reply_is_the_game_at_the_end_of_the_reply() -> None:
    """Another member's table comes to its follower as the owner's last whole state and the lines since
    (docs/cluster.md, "Tables across members"): a reply had a gameFull without the last move and a clock
    saying the bot was on move, then that move and the clock after it. A bot acting on each event as it
    came moved twice (tests/cluster/test_nginx.py, the example bots through nginx)."""
    feed = Feed("Robo")
    events, _ = feed.read(
        reply(
            "q0",
            "q17",
            f"d17.{GAME}.*Ala.Robo",
            "x17.1.-.",
            "f2_180.175",
            "sr(;B[cb];W[cc];B[dd])",
            "u",
            "sa;W[ee]WL[170]",
            "f1_180.170",
            "ca1700000000_0.*Ala.1.hi",
            "sa;B[ff]",
            "sa;UB[ff]",
            "f1_180.170",
        )
    )
    full, chat, clock = events
    assert full["type"] == "gameFull" and full["moves"] == [
        {"colour": "blue", "x": 2, "y": 1},
        {"colour": "red", "x": 2, "y": 2},
        {"colour": "blue", "x": 3, "y": 3},
        {"colour": "red", "x": 4, "y": 4, "seconds": 170},
    ]
    assert chat["type"] == "chat" and chat["text"] == "hi"
    assert clock == {
        "type": "clock",
        "table": 17,
        "toMove": "blue",
        "blue": 180,
        "red": 170,
        "paused": [],
        "grace": 0,
    }


def test_invitations_are_said_when_they_come_and_go_not_on_every_reply() -> None:
    feed = Feed("Robo")
    incoming = "vg*Ala.2020n0.0.a.R.a.180.15._SRATP_sratp."
    events, _ = feed.read(reply("q0", incoming))
    assert events == [
        {
            "type": "invitation",
            "from": "*Ala",
            "gameType": "2020n0.0.a.R.a.180.15._SRATP_sratp.",
            "width": 20,
            "height": 20,
            "rated": True,
        }
    ]
    assert feed.read(reply("q0", incoming))[0] == []
    assert feed.read(reply("q0"))[0] == [{"type": "invitationGone", "from": "*Ala"}]
    feed.read(reply("q0", f"vs*Bob.{GAME}"))
    assert feed.read(reply("q0", "vr*Bob"))[0] == [{"type": "invitationDeclined", "by": "*Bob"}]
    feed.read(reply("q0", f"vs*Cid.{GAME}"))
    assert feed.read(reply("q0"))[0] == [{"type": "invitationEnded", "to": "*Cid"}]


def test_a_team_invitation_gives_its_game_type_and_its_teams_once() -> None:
    """docs/teams.md: `vg` carries the teams and who accepted after the game type. Before, they were
    read as the game type's tournament name, and each acceptance made a new `invitation` event."""
    feed = Feed("Robo")
    offer = "vg*Ala.1010s0..s.F.n....Cup.2.*Ala,Robo.*Ola,*Ela"  # a tournament name may hold dots
    events, _ = feed.read(reply("q0", f"{offer}.*Ala"))
    assert events == [
        {
            "type": "invitation",
            "from": "*Ala",
            "gameType": "1010s0..s.F.n....Cup.2",
            "width": 10,
            "height": 10,
            "rated": False,
            "teams": [["*Ala", "Robo"], ["*Ola", "*Ela"]],
        }
    ]
    assert feed.read(reply("q0", f"{offer}.*Ala,*Ola"))[0] == [], "*Ola accepted: the same invitation"
    assert feed.read(reply("q0"))[0] == [{"type": "invitationGone", "from": "*Ala"}]


def test_a_session_that_is_gone_and_a_reply_that_is_not_one() -> None:
    assert Feed("Robo").read(reply("q0", head="sd")) == ([], False)
    assert Feed("Robo").read("err.storage") == ([], False)


def test_a_move_is_the_streams_two_letters_and_off_every_board_is_refused() -> None:
    assert move_text(0, 0) == "aa" and move_text(26, 51) == "AZ"
    for x, y in ((-1, 0), (52, 0), (0, 52)):
        with pytest.raises(ProtocolError) as refused:
            move_text(x, y)
        assert refused.value.code == "illegalMove"


SEEK = "2020s0.4.a.R.a.180.2.."


def test_seeks_are_listed_when_posted_and_gone_once_and_only_those_the_bot_may_take() -> None:
    feed = Feed("Robo")
    open_to = {3, 5}.__contains__  # seek 4 is a rated person's, or outside the bot's rating range
    events, _ = feed.read(
        reply("q0", f"ka3.*Ala...{SEEK}", f"ka4.*Bob.1800..{SEEK}", f"ka5.Zed.1400.1600.{GAME}"), open_to
    )
    assert events == [
        {
            "type": "seek",
            "id": 3,
            "from": "*Ala",
            "gameType": SEEK,
            "width": 20,
            "height": 20,
            "rated": True,
            "minRating": None,
            "maxRating": None,
        },
        {
            "type": "seek",
            "id": 5,
            "from": "Zed",
            "gameType": GAME,
            "width": 20,
            "height": 20,
            "rated": False,
            "minRating": 1400,
            "maxRating": 1600,
        },
    ]
    assert feed.read(reply("q0", "kd4", "kd3"), open_to)[0] == [{"type": "seekGone", "id": 3}]
    assert feed.read(reply("q0", "kd3"), open_to)[0] == []


def test_a_whole_lobby_state_lists_the_open_seeks_and_ends_the_others() -> None:
    feed = Feed("Robo")
    feed.read(reply("q0", f"ka3.*Ala...{SEEK}", f"ka5.Zed...{SEEK}"))
    events, _ = feed.read(reply("q0", "pr*Ala.Robo.Zed", "gr", f"ka5.Zed...{SEEK}", f"ka8.*Ala...{SEEK}"))
    assert [(event["type"], event["id"]) for event in events] == [("seek", 8), ("seekGone", 3)]
    assert feed.read(reply("q0", "pr*Ala.Robo.Zed", "gr"))[0] == [
        {"type": "seekGone", "id": 5},
        {"type": "seekGone", "id": 8},
    ]


def test_the_pool_the_bot_waits_in_is_said_when_it_changes_not_at_every_sweep() -> None:
    feed = Feed("Robo")
    assert feed.read(reply("q0", "w20x20_3_2.0.100.1"))[0] == [{"type": "poolWaiting", "pool": "20x20_3_2"}]
    assert feed.read(reply("q0", "w20x20_3_2.1.120.2"))[0] == []
    assert feed.read(reply("q0", "w39x32_5_5.0.100.1"))[0] == [
        {"type": "poolLeft", "pool": "20x20_3_2"},
        {"type": "poolWaiting", "pool": "39x32_5_5"},
    ]
    assert feed.read(reply("q0"))[0] == [{"type": "poolLeft", "pool": "39x32_5_5"}]


def test_at_a_team_table_the_clock_names_the_colour_on_move_and_the_side_a_bot_compares_with_its_own() -> (
    None
):
    """docs/bots.md: a bot moves when `toMove` is its colour, and at a team table (docs/teams.md) when
    `side` is its own too. Before, `toMove` was the `f` line's side itself at sides 3 to 8 (`"3"`): a
    bot on side 3 was never told that it was on move, and its team's clock ran out."""
    feed = Feed("Robo")
    events, _ = feed.read(
        reply(
            "q0", "q17", f"d17.{GAME}.*Ala,Robo.*Bob,*Dan", "x17.3.-.", "f3_180.175", "sr(;B[cb];W[cc])", "u"
        )
    )
    full, clock = events
    assert (full["colour"], full["side"]) == ("blue", 3)
    assert clock == {
        "type": "clock",
        "table": 17,
        "toMove": "blue",
        "side": 3,
        "blue": 180,
        "red": 175,
        "paused": [],
        "grace": 0,
    }

    events, _ = feed.read(reply("q0", "q17", "sa;B[dd]BL[170]", "f4_170.175", "u4draw"))
    assert events[1:] == [
        {
            "type": "clock",
            "table": 17,
            "toMove": "red",
            "side": 4,
            "blue": 170,
            "red": 175,
            "paused": [],
            "grace": 0,
        },
        {"type": "proposal", "table": 17, "by": "red", "side": 4, "what": "draw"},
    ]
    assert (
        Feed("*Eve").read(reply("q0", "q17", f"d17.{GAME}.*Ala,Robo.*Bob,*Dan", "sr(;GM[40])"))[0][0]["side"]
        is None
    )


def test_a_feed_forgets_the_tables_its_bot_no_longer_sits_at() -> None:
    """A bot's feed is one connection for as long as the bot runs (weeks): it kept a view of every table
    the bot ever played at, closed or not, about 470 bytes each (tracemalloc), so a bot playing its 60
    games an hour held 20 MB more a month, never given back. Each reply names every table the session
    sits at (`q<uid>`): the others are gone."""
    timers = ManualTimers()
    hub = Hub(timers=timers, rng=random.Random(1), clock=lambda: 1_800_000_000.0 + timers.now())
    hub.login("robo1234", Account("Robo", 1500, 0, 0, 0, bot=True), "en")
    feed = Feed("Robo")

    def read() -> list[dict]:
        hub.requester("robo1234")  # a poll: the bot's session stays
        events, logged_in = feed.read(hub.reply("robo1234", feed.seen, with_subscriptions=False))
        assert logged_in
        return events

    read()
    for game in range(30):
        secret = f"ala{game:05d}"
        hub.guest_login(secret, f"*Ala{game}", "en")
        hub.invite(secret, "Robo", GAME.replace("..s.", "..a."))  # *Ala is blue and moves first
        hub.answer_invitation("robo1234", "a")
        (uid,) = [uid for uid in hub.players["robo1234"].tables if uid]
        assert [event["type"] for event in read()][:1] == ["gameFull"]
        hub.move(secret, str(uid), "jj")
        hub.propose(secret, str(uid), "resign")
        assert {"gameEnd", "archived"} <= {event["type"] for event in read()}
        hub.logout(secret)
        for _ in range(121):  # a finished game's table closes after an hour without events
            timers.advance(30)
            hub.sweep()
            read()
        assert [uid for uid in hub.players["robo1234"].tables if uid] == []
    assert feed.tables == {}  # was 30 tables' views, one a game the bot ever played


def test_a_whole_state_says_a_proposition_told_before_gone_and_tells_one_still_pending_again() -> None:
    """A table's whole state sent again (play taken back when storage failed, a feed that lagged past
    what the stream keeps) comes with `u` empty when the proposition went meanwhile. Before, the feed
    said nothing: an engine kept answering a proposition that was gone."""
    whole = [f"d17.{GAME}.*Ala.Robo", "x17.1.-.", "f2_170.180", "sr(;B[cb])"]
    feed = Feed("Robo")
    feed.read(reply("q0", "q17", *whole, "u1draw"))
    events, _ = feed.read(reply("q0", "q17", *whole, "u"))
    assert [event["type"] for event in events] == ["proposalGone", "gameFull", "clock"]
    assert events[0] == {"type": "proposalGone", "table": 17}

    feed.read(reply("q0", "q17", "u1draw"))
    events, _ = feed.read(reply("q0", "q17", *whole, "u1draw"))  # still pending: gone, then told again
    assert [event["type"] for event in events] == ["proposalGone", "gameFull", "clock", "proposal"]
    events, _ = feed.read(reply("q0", "q17", *whole, "u"))
    assert events[0] == {"type": "proposalGone", "table": 17}
    events, _ = feed.read(reply("q0", "q17", *whole, "u"))  # none told, none gone
    assert [event["type"] for event in events] == ["gameFull", "clock"]
