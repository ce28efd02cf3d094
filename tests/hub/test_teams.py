"""Team games in the hub (docs/teams.md), on a clock the test drives: the line-up and its turn order in
the `d`, `x`, `f` and `u` lines, refusals, propositions decided by everyone still in the game, leaving
and resigning, the team's clock, sayHi per player, STOP, undo and a new game."""

from __future__ import annotations

import random

import pytest

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.room import Room
from server.protocol.codec import ProtocolError, parse_commands

TIMED = parse_game_type("0808stanF0.120.5")  # a free game: 120 s a team, 5 s added per move
UNTIMED = parse_game_type("0808stanF0.0.0")
SEEK = "2020s0.4.a.F.a.180.2.."  # an open seek of a free game
PLAYERS = {"ala1": "*Ala", "bob1": "*Bob", "cid1": "*Cid", "dan1": "*Dan"}  # sides 1, 2, 3, 4


def two_against_two(game_type=TIMED, say_hi=(0, 0, 0, 0), tournament=None) -> tuple[Hub, ManualTimers, Room]:
    timers = ManualTimers()
    hub = Hub(timers=timers, rng=random.Random(5), clock=lambda: 1_700_000_000.0)
    for secret, nick in PLAYERS.items():
        hub.guest_login(secret, nick, "en")
    uid = hub.set_up_table(game_type, "*Ala", "*Bob", say_hi, tournament, None, {}, more=["*Cid", "*Dan"])
    room = hub.tables[uid].room
    assert room is not None
    return hub, timers, room


def chat(hub: Hub, room: Room) -> list[tuple[str, str]]:
    """The table's server lines as (nickType, text)."""
    return [(entry.nick_type, entry.text) for entry in hub.tables[room.uid].chat.entries if not entry.nick]


def test_the_turn_goes_round_the_table_and_every_line_names_the_side_on_move() -> None:
    hub, _, room = two_against_two()
    table = str(room.uid)

    assert room.description() == f"d{room.uid}.0808s0..s.F.a.120.5...*Ala,*Cid.*Bob,*Dan"
    sides = []
    for secret in ("ala1", "bob1", "cid1", "dan1", "ala1", "bob1"):
        sides.append(room.state().split(".")[1])
        assert room.flags().startswith(f"f{sides[-1]}_")
        hub.move(secret, table, f"{'abcdef'[len(sides) - 1]}a")
    assert sides == ["1", "2", "3", "4", "1", "2"]
    assert room.state() == f"x{room.uid}.3.-."
    assert [move.player for move in room.game.moves] == [1, 2, 1, 2, 1, 2]  # the engine sees two colours
    assert (room.blue, room.red) == ("*Ala, *Cid", "*Bob, *Dan")


@pytest.mark.parametrize("secret", ["bob1", "cid1", "dan1"])
def test_a_move_out_of_turn_is_refused_and_changes_nothing(secret: str) -> None:
    hub, _, room = two_against_two()
    before = (room.state(), room.flags(), len(room.game.moves))

    with pytest.raises(ProtocolError) as refused:
        hub.move(secret, str(room.uid), "aa")

    assert refused.value.code == "notYourTurn"
    assert str(refused.value) == "It is *Ala's turn, not yours."
    assert (room.state(), room.flags(), len(room.game.moves)) == before


def test_a_refusal_in_a_poll_reaches_only_the_player_who_moved_out_of_turn() -> None:
    hub, _, room = two_against_two()
    hub.reply("cid1", 0, with_subscriptions=False)
    seen = hub.counter.last

    hub.receive("cid1", parse_commands(f"s1.{room.uid}.aa"))

    reply = hub.reply("cid1", seen, with_subscriptions=False)
    assert "..e.It is *Ala&#39;s turn, not yours." in reply
    assert "turn" not in hub.reply("ala1", seen, with_subscriptions=False)
    assert not room.game.moves


@pytest.mark.parametrize(
    ("more", "say_hi", "code"),
    [
        (["*Cid"], (0, 0, 0), "badTeams"),  # three players: teams of equal size
        (["*Cid", "*Dan", "*Eve"], (0, 0, 0, 0, 0), "badTeams"),
        ([f"*P{n}" for n in range(8)], (0,) * 10, "badTeams"),  # five a team
        (["*Cid", "*ala"], (0, 0, 0, 0), "samePlayer"),
        (["*Cid", "AI easy"], (0, 0, 0, 0), "badTeams"),  # the computer plays no team games
        (["*Cid", "*Dan"], (0, 0), "badSayHiTimes"),  # a sayHi for each player
        (["*Cid", "Bad..nick"], (0, 0, 0, 0), "badNick"),
    ],
)
def test_bad_team_set_ups_create_nothing(more: list[str], say_hi: tuple[int, ...], code: str) -> None:
    hub = Hub(timers=ManualTimers(), rng=random.Random(1))

    with pytest.raises(ProtocolError) as refused:
        hub.set_up_table(TIMED, "*Ala", "*Bob", say_hi, None, None, {}, more=more)

    assert refused.value.code == code
    assert list(hub.tables) == [0]


def test_four_a_team_play_in_turn_and_their_nicks_sit_at_the_table() -> None:
    hub = Hub(timers=ManualTimers(), rng=random.Random(1))
    nicks = [f"*P{n}" for n in range(1, 9)]
    for nick in nicks:
        hub.guest_login(nick[1:].lower() + "xx", nick, "en")
    uid = hub.set_up_table(UNTIMED, nicks[0], nicks[1], (0,) * 8, None, None, {}, more=nicks[2:])
    room = hub.tables[uid].room
    assert room is not None

    assert room.description().endswith(".*P1,*P3,*P5,*P7.*P2,*P4,*P6,*P8")
    assert all(uid in hub.players[nick[1:].lower() + "xx"].tables for nick in nicks)
    for n, nick in enumerate(nicks * 2):
        assert room.side_on_move == n % 8 + 1
        hub.move(nick[1:].lower() + "xx", str(uid), "abcdefgh"[n % 8] + "ab"[n // 8])
    assert room.side_on_move == 1


def test_chat_names_each_team_by_its_colour() -> None:
    hub, _, room = two_against_two()
    table = hub.tables[room.uid]

    assert [table.colour_of(hub.players[secret]) for secret in PLAYERS] == ["B", "W", "B", "W"]


# --- propositions -------------------------------------------------------------------------------


def test_a_proposition_needs_everyone_else_still_in_the_game_and_one_refusal_declines_it() -> None:
    hub, _, room = two_against_two()
    table = str(room.uid)
    hub.propose("dan1", table, "draw")
    hub.propose("ala1", table, "ok4draw")
    assert room.proposal_line() == "u4draw.1"
    hub.propose("bob1", table, "draw")  # proposing what is pending agrees to it
    assert room.proposal_line() == "u4draw.1,2"
    assert room.game.result is None  # *Cid, the proposer's opponent, has not agreed

    hub.propose("cid1", table, "reject4draw")

    assert room.proposal_line() == "u" and room.game.result is None
    assert chat(hub, room) == [
        ("u4draw", "*Dan proposes to end the game in a draw."),
        ("agree4draw", "*Ala agreed to end the game in a draw; waiting for *Bob, *Cid."),
        ("agree4draw", "*Bob agreed to end the game in a draw; waiting for *Cid."),
        ("reject4draw", "*Cid declined to end the game in a draw."),
    ]


def test_the_last_agreement_settles_the_proposition() -> None:
    hub, _, room = two_against_two()
    table = str(room.uid)
    hub.propose("bob1", table, "draw")
    for secret in ("ala1", "cid1"):
        hub.propose(secret, table, "ok2draw")
    assert room.game.result is None
    hub.propose("dan1", table, "accept2draw")  # MultiPoints' word; the digit is not checked

    assert str(room.game.result) == "0"
    assert chat(hub, room)[-2:] == [
        ("ok2draw", "*Dan agreed to end the game in a draw."),
        ("0", "Draw by agreement."),
    ]


def test_the_proposer_cannot_answer_and_only_the_proposer_withdraws() -> None:
    hub, _, room = two_against_two()
    table = str(room.uid)
    hub.propose("ala1", table, "drop")
    hub.propose("bob1", table, "ok1drop")

    for secret, answer, code in [("ala1", "ok1drop", "noProposal"), ("bob1", "cancel1drop", "noProposal")]:
        with pytest.raises(ProtocolError) as refused:
            hub.propose(secret, table, answer)
        assert refused.value.code == code
    with pytest.raises(ProtocolError, match="agreed already; waiting for") as refused:
        hub.propose("bob1", table, "ok1drop")  # again: refused, and nothing changes (before: no answer)
    assert refused.value.code == "noProposal" and room.proposal_line() == "u1drop.2"

    hub.propose("ala1", table, "cancel1drop")
    assert room.proposal_line() == "u" and room.game.result is None


def test_a_take_back_agreed_by_all_gives_the_turn_back_to_who_made_the_move() -> None:
    hub, _, room = two_against_two()
    table = str(room.uid)
    for secret, where in (("ala1", "aa"), ("bob1", "hh"), ("cid1", "ab")):
        hub.move(secret, table, where)
    assert room.side_on_move == 4
    hub.propose("cid1", table, "undo")
    for secret in ("ala1", "bob1", "dan1"):
        hub.propose(secret, table, "ok3undo")

    assert len(room.game.moves) == 2 and room.side_on_move == 3
    hub.move("cid1", table, "ac")
    assert room.side_on_move == 4


def test_a_new_game_swaps_the_teams_colours_each_in_its_own_order() -> None:
    hub, _, room = two_against_two(UNTIMED)
    table = str(room.uid)
    hub.move("ala1", table, "aa")
    hub.propose("ala1", table, "drop")
    for secret in ("bob1", "cid1", "dan1"):
        hub.propose(secret, table, "ok1drop")
    assert str(room.game.result) == "Void"

    for secret in PLAYERS:
        hub.propose(secret, table, "new")

    assert room.description().endswith(".*Bob,*Dan.*Ala,*Cid")
    assert room.game.result is None and room.side_on_move == 1 and room.nick_of(1) == "*Bob"


# --- leaving and resigning ----------------------------------------------------------------------


def test_one_player_resigning_leaves_the_game_to_the_team_mates() -> None:
    hub, _, room = two_against_two()
    table = str(room.uid)
    hub.move("ala1", table, "aa")
    hub.move("bob1", table, "hh")
    hub.propose("cid1", table, "resign")  # on move: the turn goes round to *Ala

    assert room.game.result is None
    assert room.state() == f"x{room.uid}.1.-."
    assert room.blue == "*Ala, *Cid"  # the record keeps the whole team
    with pytest.raises(ProtocolError) as refused:
        hub.move("cid1", table, "ab")
    assert refused.value.code == "notPlayer"
    hub.move("ala1", table, "ab")
    assert room.side_on_move == 4
    assert ("resigned3", "*Cid resigned and left the game.") in chat(hub, room)


def test_the_last_of_a_team_to_resign_loses_the_game_for_it() -> None:
    hub, _, room = two_against_two()
    table = str(room.uid)
    hub.propose("bob1", table, "resign")
    hub.propose("dan1", table, "resign")

    assert str(room.game.result) == "B+R"
    assert chat(hub, room)[-2:] == [
        ("resigned4", "*Dan resigned and left the game."),
        ("B+R", "*Ala, *Cid won by resignation."),
    ]  # no move: nothing to archive


def test_leaving_the_table_hands_the_turn_to_the_next_team_mate() -> None:
    hub, _, room = two_against_two()
    table = str(room.uid)
    hub.move("ala1", table, "aa")
    hub.reply("dan1", 0, with_subscriptions=False)
    seen = hub.counter.last

    hub.change_table("bob1", 0)  # *Bob, on move, leaves for good

    assert room.side_on_move == 4
    assert hub.tables[room.uid].seat_of(hub.players["bob1"]) == 0
    reply = hub.reply("dan1", seen, with_subscriptions=False)
    assert "/ca1700000000_0..left2.*Bob left the game./" in reply
    assert f"/x{room.uid}.4.-./" in reply and "/f4_" in reply
    hub.move("dan1", table, "hh")
    hub.move("cid1", table, "ab")
    assert room.side_on_move == 4  # *Dan plays every move of team two now


def test_a_team_with_nobody_left_loses_by_resignation() -> None:
    hub, timers, room = two_against_two()
    hub.logout("bob1")
    hub.poll_timeout = 60
    timers.advance(30)
    for secret in ("ala1", "cid1"):
        hub.receive(secret, [])  # they poll; *Dan does not
    timers.advance(35)
    hub.sweep()

    assert "dan1" not in hub.players
    assert str(room.game.result) == "B+R"
    assert chat(hub, room)[-3:] == [
        ("left2", "*Bob left the game."),
        ("left4", "*Dan left the game."),
        ("B+R", "*Ala, *Cid won: *Bob, *Dan left the game."),
    ]  # no move: nothing to archive


def test_a_player_who_left_may_come_back_to_watch_but_not_to_play() -> None:
    hub, _, room = two_against_two()
    table = str(room.uid)
    hub.change_table("cid1", 0)
    hub.change_table("cid1", room.uid)

    cid = hub.players["cid1"]
    assert room.uid in cid.tables and hub.tables[room.uid].colour_of(cid) == ""
    with pytest.raises(ProtocolError) as refused:
        hub.propose("cid1", table, "draw")
    assert refused.value.code == "notPlayer"


def test_leaving_after_the_game_or_a_two_player_table_takes_nobody_out() -> None:
    hub, _, room = two_against_two()
    hub.propose("ala1", str(room.uid), "resign")
    hub.propose("cid1", str(room.uid), "resign")
    hub.change_table("bob1", 0)
    assert room.lineup.gone == {"*Ala", "*Cid"}

    two = hub.open_table(UNTIMED, "*Bob", "*Dan")
    hub.change_table("dan1", 0)
    assert two.room is not None and two.room.seat_of("*Dan") == 2 and two.room.game.result is None


# --- the team's clock ---------------------------------------------------------------------------


def test_a_team_shares_one_clock_and_loses_on_time_together() -> None:
    hub, timers, room = two_against_two()
    table = str(room.uid)
    timers.advance(10)
    hub.move("ala1", table, "aa")  # team one: 110 + 5
    timers.advance(20)
    hub.move("bob1", table, "hh")  # team two: 100 + 5
    timers.advance(15)
    assert room.flags() == "f3_100.105"  # *Cid spends the time *Ala left

    timers.advance(100)

    assert str(room.game.result) == "W+T"
    assert chat(hub, room)[-3:] == [
        ("W+T", "*Bob, *Dan won on time."),
        ("l1", "Game saved as number 1."),
        ("unratedFree", "Not rated: a free game."),
    ]


def test_each_players_say_hi_is_spent_on_their_own_first_move() -> None:
    hub, timers, room = two_against_two(say_hi=(30, 20, 10, 5), tournament="Pairs")
    table = str(room.uid)
    assert room.flags() == "f1_120.120.g30"
    timers.advance(25)
    hub.move("ala1", table, "aa")
    assert room.flags() == "f2_125.120.g20"
    hub.move("bob1", table, "hh")
    assert room.flags() == "f3_125.125.g10"  # *Cid's own sayHi, not what *Ala left
    timers.advance(12)
    hub.move("cid1", table, "ab")  # 2 s of the clock
    assert room.flags() == "f4_125.125.g5"
    hub.move("dan1", table, "hg")
    timers.advance(3)
    assert room.flags() == "f1_122.125"  # *Ala has moved: no more grace


def test_a_tournament_team_that_never_moves_forfeits() -> None:
    hub, timers, room = two_against_two(say_hi=(10, 10, 10, 10), tournament="Pairs")
    hub.move("ala1", str(room.uid), "aa")
    timers.advance(200)

    assert str(room.game.result) == "B+F"
    assert chat(hub, room)[-3] == ("B+F", "*Ala, *Cid won by forfeit: *Bob, *Dan did not show up.")


# --- STOP ---------------------------------------------------------------------------------------


def test_stop_is_the_side_on_moves_and_the_other_team_plays_on_in_its_own_order() -> None:
    timers = ManualTimers()
    hub = Hub(timers=timers, rng=random.Random(5))
    for secret, nick in PLAYERS.items():
        hub.guest_login(secret, nick, "en")
    no_territory = parse_game_type("0808noT1F0.0.0")
    uid = hub.set_up_table(no_territory, "*Ala", "*Bob", (0,) * 4, None, None, {}, more=["*Cid", "*Dan"])
    room = hub.tables[uid].room
    assert room is not None
    hub.move("ala1", str(uid), "aa")
    with pytest.raises(ProtocolError) as refused:
        hub.stop("dan1", str(uid))
    assert refused.value.code == "notYourTurn"

    hub.stop("bob1", str(uid))  # team two stops: team one goes on alone, *Cid then *Ala

    sides = []
    for secret, where in (("cid1", "ab"), ("ala1", "ac"), ("cid1", "ad")):
        sides.append(room.side_on_move)
        hub.move(secret, str(uid), where)
    assert sides == [3, 1, 3]
    assert ("stop2", "*Bob pressed STOP.") in chat(hub, room)


def test_the_lines_still_name_a_side_when_the_team_on_move_has_nobody_left() -> None:
    hub, _, room = two_against_two()
    hub.move("ala1", str(room.uid), "aa")
    hub.change_table("bob1", 0)
    hub.logout("dan1")  # team two, on move, is empty: it lost

    assert str(room.game.result) == "B+R"
    assert room.state() == f"x{room.uid}.2.B+R.1" and room.flags() == "f2_125.120"


def test_a_territory_move_with_its_ring_is_one_move_of_one_player() -> None:
    hub, _, room = two_against_two(parse_game_type("0808terrF0.0.0"))
    table = str(room.uid)
    for secret, where in (("ala1", "cb"), ("bob1", "cc"), ("cid1", "bc"), ("dan1", "hh"), ("ala1", "dc")):
        hub.move(secret, table, where)
    hub.move("bob1", table, "hg")

    hub.move("cid1", table, "cd.cbdccdbccb")  # the dot and the ring round *Bob's cc: one move of *Cid

    assert room.game.captured(1) == 1 and len(room.game.moves) == 7
    assert room.side_on_move == 4 and room.move_sides[-1] == 3


def test_a_new_game_at_the_table_leaves_the_seek_of_a_player_who_left_the_team_game_open() -> None:
    """A player out of a team game plays in none of the table's next games (docs/teams.md), so the new
    game the others agree there is not theirs to begin. Before, it ended *Cid's seek posted since, as
    a game *Cid began would (and took *Cid out of a pool they waited in)."""
    hub, _, room = two_against_two(UNTIMED)
    table = str(room.uid)
    hub.move("ala1", table, "aa")
    hub.propose("cid1", table, "resign")
    hub.receive("cid1", parse_commands(f"k1.0.s...{SEEK}"))
    (number,) = hub.seeks.open
    hub.propose("ala1", table, "draw")
    for secret in ("bob1", "dan1"):
        hub.propose(secret, table, "ok1draw")
    assert str(room.game.result) == "0"

    for secret in ("ala1", "bob1", "dan1"):
        hub.propose(secret, table, "new")

    assert room.game.result is None and room.description().endswith(".*Bob,*Dan.*Ala,*Cid")
    assert list(hub.seeks.open) == [number]


def test_a_player_who_left_while_storage_failed_is_out_of_the_game_once_it_is_back() -> None:
    """While storage fails nobody plays, and leaving a team game is play (server/hub/tables.py), so it
    waits for storage. Before, it was forgotten: *Bob, who logged out on move, stayed in the game, the
    turn never went to *Dan, and team two lost on time with *Dan at the table."""
    hub, timers, room = two_against_two()
    table = str(room.uid)
    hub.move("ala1", table, "aa")
    hub.persistence.storage_failure = "disk full"
    hub.storage_changed("disk full")
    hub.logout("bob1")
    hub.change_table("cid1", 0)  # *Cid leaves, then comes back to the table: still in the game
    hub.change_table("cid1", room.uid)
    assert not room.lineup.gone

    hub.persistence.storage_failure = None
    hub.storage_changed(None)

    assert room.lineup.gone == {"*Bob"} and room.side_on_move == 4
    assert ("left2", "*Bob left the game.") in chat(hub, room)
    timers.advance(60)
    hub.move("dan1", table, "hh")
    hub.move("cid1", table, "ab")
    assert room.game.result is None and len(room.game.moves) == 3


def test_a_team_leaving_after_the_other_teams_deadline_does_not_lose_a_game_already_lost_on_time() -> None:
    """The last of a team leaving ends the game against it, but not one whose other team's clock has
    run out, its timer due but not yet run (a busy loop): that game is lost on time (docs/protocol.md,
    "Clocks"); it was won by the team that ran out of time."""
    hub, timers, room = two_against_two()
    hub.move("ala1", str(room.uid), "aa")
    hub.move("bob1", str(room.uid), "hh")
    hub.change_table("bob1", 0)  # red's first player leaves for good; *Cid (blue) is on move
    timers.time += 126  # blue's 125 s are gone; the flag's timer has not run

    hub.change_table("dan1", 0)  # the last of red leaves

    assert str(room.game.result) == "W+T"


@pytest.mark.parametrize("moved_first", [False, True])
def test_a_player_leaving_does_not_give_the_side_on_move_its_say_hi_again(moved_first: bool) -> None:
    """Each player's sayHi is spent once, on their own first move; when someone of either team left (or
    resigned), the side on move that had not moved yet was granted its whole sayHi again."""
    hub, timers, room = two_against_two(say_hi=(60, 60, 10, 5), tournament="Pairs")
    if moved_first:
        hub.move("ala1", str(room.uid), "aa")  # *Bob (red) is on move, with 60 s of sayHi
    timers.advance(50)
    on_move = room.flags()
    assert on_move.endswith(".g10")

    hub.change_table("cid1", 0)  # a blue player leaves for good
    hub.propose("dan1", str(room.uid), "resign")  # a red one resigns, not the one on move

    assert room.flags() == on_move
