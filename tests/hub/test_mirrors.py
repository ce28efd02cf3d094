"""Another member's table followed here (server/hub/mirrors.py) when that member dies and a third one
takes the table over: the people here sit down at it where it is now (issue 44); a person who leaves, or
whose session ends, or who comes back as a new session, while the owner seats them."""

from __future__ import annotations

from server.engine.gametype import parse_game_type
from tests.hub.test_acknowledged import Link, after_alas_move
from tests.hub.test_sessions import poll
from tests.hub.test_visitors import ELSEWHERE, HOME, HOME_AGAIN


def test_a_table_taken_over_by_another_member_is_sat_at_again_where_it_is_now() -> None:
    """issue 44: member b took the table of member a, which died, before member c heard of a's death.
    Cyd, on c, still sat at c's mirror of a's table, so b's `d` line did not seat him again; a's death
    then stood him up, and the game stood still until he chose the table again."""
    link = Link("abc")
    a, b, c = link.hubs["a"], link.hubs["b"], link.hubs["c"]
    a.guest_login("alaAla11", "*Ala", "en")
    c.guest_login("cydCyd33", "*Cyd", "en")
    c.guest_login("eveEve55", "*Eve", "en")
    b.guest_login("bobBob22", "*Bob", "en")
    link.deliver()
    uid = a.open_table(parse_game_type("0808stanF0.0.0"), "*Ala", "*Cyd").uid
    link.deliver()
    c.tables.subscribe(c.players["eveEve55"], uid)  # Eve watches it, and Bob from member b
    b.tables.subscribe(b.players["bobBob22"], uid)
    link.deliver()
    a.move("alaAla11", str(uid), "aa")
    poll(c, "cydCyd33", 0, f"s1.{uid}.hh")
    link.deliver()
    journal = {uid: list(link.stores["a"].entries[uid])}

    link.kill("a")
    b.take_tables(journal)  # member b takes the table over first
    link.deliver()
    for member in (b, c):  # then they hear that member a is gone
        member.member_gone("a")
    link.deliver()
    assert b.tables[uid].people["*Bob"] is b.players["bobBob22"]  # at the table of his own member now
    for secret in ("cydCyd33", "eveEve55"):
        assert uid in c.players[secret].tables
    state = poll(c, "cydCyd33", 0).sections[uid]
    assert any("aa" in line for line in state) and any("hh" in line for line in state)
    b.guest_login("alaAla11", "*Ala", "en")  # Ala's requests reach member b now
    b.move("alaAla11", str(uid), "ab")
    link.deliver()
    assert poll(c, "cydCyd33", 0, f"s2.{uid}.hg").processed == 1
    link.deliver()
    assert any("hg" in line for line in b.lobby_state.snapshot(uid))


def test_a_session_taken_from_a_member_that_died_sits_at_its_game_before_that_death_is_heard() -> None:
    """benchmarks/chaos.py, seed 29: Cyd's member b died; member c took his session at once (b's lock
    was free) and asked member a to seat him at his game there. Member a still had b's copy of Cyd at
    the table (b's announcement had 10 s to live) and refused "already at table"; nothing asked again,
    so his game stood still until his session moved once more (22 s). The same person, by the seat key
    (his session, or his account), takes the copy's place; a stranger with his nick does not."""
    link = Link("abcd")
    a, b, c, d = (link.hubs[name] for name in "abcd")
    a.guest_login("alaAla11", "*Ala", "en")
    b.guest_login("cydCyd33", "*Cyd", "en")
    link.deliver()
    uid = a.open_table(parse_game_type("0808stanF0.0.0"), "*Ala", "*Cyd").uid
    link.deliver()
    a.move("alaAla11", str(uid), "aa")
    link.deliver()
    assert poll(b, "cydCyd33", 0, f"s1.{uid}.hh").processed == 0
    link.deliver()
    assert poll(b, "cydCyd33", 0).processed == 1
    saved = link.stores["b"].sessions[a.ctx.persistence.id_hmac("cydCyd33")]

    link.kill("b")  # SIGKILL: members a, c and d hear nothing of it for a while
    d.guest_login("strangerX", "*Cyd", "en")  # somebody else by that nick (another session)
    d.tables.subscribe(d.players["strangerX"], uid)
    link.deliver()
    copy = a.tables[uid].people["*Cyd"]
    assert copy.visiting_from == "b" and uid not in d.players["strangerX"].tables
    assert any("already at table" in line for line in poll(d, "strangerX", 0).lines(0, ""))

    c.take_over(saved, None)  # his requests reach member c, which takes his session from the store
    link.deliver()
    assert a.tables[uid].people["*Cyd"].visiting_from == "c"
    state = poll(c, "cydCyd33", 0).sections[uid]
    assert any("aa" in line for line in state) and any("hh" in line for line in state)
    a.move("alaAla11", str(uid), "ab")
    link.deliver()
    assert poll(c, "cydCyd33", 0, f"s2.{uid}.hg").processed == 0  # sent to member a: not yet
    link.deliver()
    assert poll(c, "cydCyd33", 0).processed == 2
    assert any("hg" in line for line in a.lobby_state.snapshot(uid))

    a.member_gone("b")  # heard at last: Cyd, now of member c, stays
    link.deliver()
    assert a.tables[uid].people["*Cyd"].visiting_from == "c" and uid in c.players["cydCyd33"].tables


def test_a_seat_taken_back_at_a_dead_members_table_is_not_told_refused_and_a_chosen_one_is() -> None:
    """benchmarks/chaos.py with bots: players read "Table N cannot be reached now." 101 times in a run for
    nothing they did. Their session moved to another member, which seated them back at their game at a
    member that had just died; once that member was found gone and its table taken over, they sat down
    at it by themselves. Someone who chose that table meanwhile is still told."""
    link = Link("abc")
    uid, _, b = after_alas_move(link)  # Ala's game against Bob at member a
    a, c = link.hubs["a"], link.hubs["c"]
    c.guest_login("cydCyd33", "*Cyd", "en")
    link.deliver()
    saved = link.stores["a"].sessions[a.ctx.persistence.id_hmac("alaAla11")]
    journal = {uid: list(link.stores["a"].entries[uid])}

    link.kill("a")  # SIGKILL: the others hear nothing of it for a while
    c.take_over(saved, None)  # Ala's requests reach member c: seated back at her game, still at a
    c.tables.subscribe(c.players["cydCyd33"], uid)  # Cyd chooses that table
    link.deliver()  # neither `enter` is taken by anybody
    assert not [line for line in poll(c, "alaAla11", 0).lines(0, "") if "cannot be reached" in line]
    assert [line for line in poll(c, "cydCyd33", 0).lines(0, "") if "cannot be reached" in line]

    b.take_tables(journal)  # member b takes the table over
    link.deliver()
    for member in (b, c):
        member.member_gone("a")
    link.deliver()
    assert uid in c.players["alaAla11"].tables and uid not in c.players["cydCyd33"].tables
    state = poll(c, "alaAla11", 0).sections[uid]
    assert any("aa" in line for line in state)


def test_a_person_here_gives_time_and_pauses_a_clock_at_another_members_table() -> None:
    """The old-style `dodajeCzas` and the extension's `pauseClock` (the built-in client's) reach the
    table's member as a poll's `t` command does."""
    link = Link()
    a, b = link.hubs["a"], link.hubs["b"]
    a.guest_login("alaAla11", "*Ala", "en")
    b.guest_login("bobBob22", "*Bob", "en")
    link.deliver()
    table = a.open_table(parse_game_type("0808stanF0.60.5"), "*Ala", "*Bob")
    link.deliver()
    assert table.room is not None and table.room.flags() == "f1_60.60"
    b.pause("bobBob22", str(table.uid), "p")
    b.give_time("bobBob22", str(table.uid), "30")
    link.deliver()
    assert table.room.flags() == "f1_p90.60"
    b.pause("bobBob22", str(table.uid), "x")
    link.deliver()
    assert any("t takes p" in line for line in poll(b, "bobBob22", 0).lines(table.uid, "ca"))
    assert table.room.flags() == "f1_p90.60"


def watcher_coming(link: Link) -> int:
    """Eve, on member b, asks to watch Ala's game against Cyd on member a; member a seats her there, and
    its answer has not reached member b yet."""
    a, b = link.hubs["a"], link.hubs["b"]
    a.guest_login("alaAla11", "*Ala", "en")
    a.guest_login("cydCyd33", "*Cyd", "en")
    b.guest_login("eveEve55", "*Eve", "en")
    link.deliver()
    uid = a.open_table(parse_game_type("0808stanF0.0.0"), "*Ala", "*Cyd").uid
    link.deliver()
    b.tables.subscribe(b.players["eveEve55"], uid)
    link.deliver(only_to="a")
    assert "*Eve" in a.tables[uid].people
    return uid


def test_a_session_ended_while_the_owner_seats_it_leaves_the_owners_table() -> None:
    """A logout came between member a seating Eve and its answer reaching member b: member b dropped the
    answer and told member a nothing, and Eve stayed at the table of member a as long as it ran (a
    player there counted as present, so an opponent could never claim her game). Seen as a failure of
    tests/cluster/test_renamed_seats.py under load."""
    link = Link()
    uid = watcher_coming(link)
    link.hubs["b"].logout("eveEve55")
    link.deliver()
    assert "*Eve" not in link.hubs["a"].tables[uid].people


def test_a_person_who_leaves_a_table_while_its_owner_seats_them_leaves_it_there_too() -> None:
    link = Link()
    uid = watcher_coming(link)
    eve = link.hubs["b"].players["eveEve55"]
    link.hubs["b"].tables.leave(eve, uid, for_good=True, chose=True)
    link.deliver()
    assert "*Eve" not in link.hubs["a"].tables[uid].people
    assert uid not in eve.tables


def alas_game_being_seated(link: Link) -> int:
    """Ala's game against Bob opens at member b while she is on member a, which asks b to seat her
    there; b's answer has not reached member a yet."""
    a, b = link.hubs["a"], link.hubs["b"]
    a.guest_login("alaAla11", "*Ala", "en", HOME)
    b.guest_login("bobBob22", "*Bob", "en")
    link.deliver()
    uid = b.open_table(parse_game_type("0808stanF0.0.0"), "*Ala", "*Bob").uid
    link.deliver(only_to="a")  # its `d` line: member a asks b to seat her
    return uid


def test_a_guest_come_back_while_its_old_session_is_being_seated_is_seated_itself() -> None:
    """Before member b's answer reaches member a, Ala's MultiPoints starts again with a new id
    (docs/protocol.md, "A guest who comes back") and her new session asks to sit down too. Before, a
    took the old request for the new one's and swallowed it, b's answer then found the old session gone
    and took her away from the table, and her game stood still until she chose the table again."""
    link = Link()
    a, b = link.hubs["a"], link.hubs["b"]
    uid = alas_game_being_seated(link)
    a.guest_login("alaNew99", "*Ala", "en", HOME_AGAIN)
    assert "alaAla11" not in a.players
    link.deliver()
    ala = a.players["alaNew99"]
    visitor = b.tables[uid].people["*Ala"]
    assert uid in ala.tables and visitor.visiting_from == "a"
    assert b.tables[uid].owners["*Ala"] == visitor.seat_key == ala.seat_key  # the new session's seat
    a.move("alaNew99", str(uid), "aa")
    link.deliver()
    room = b.tables[uid].room
    assert room is not None and room.record_line() == "sr(;B[aa])"


def test_a_stranger_with_the_nick_while_its_old_session_is_being_seated_only_watches() -> None:
    """The same moment, but Ala logged out and somebody from another network took her nick: the owner
    seats the stranger for who they are, a spectator, not as the copy it seated for Ala's session."""
    link = Link()
    a, b = link.hubs["a"], link.hubs["b"]
    uid = alas_game_being_seated(link)
    assert a.logout("alaAla11")
    a.guest_login("eveEve55", "*Ala", "en", ELSEWHERE)
    link.deliver()
    visitor = b.tables[uid].people["*Ala"]
    assert visitor.seat_key == a.players["eveEve55"].seat_key and b.tables[uid].seat_of(visitor) == 0
    a.move("eveEve55", str(uid), "aa")
    link.deliver()
    room = b.tables[uid].room
    assert room is not None and "B[aa]" not in room.record_line()


def test_a_guest_come_back_who_leaves_the_table_before_asking_is_not_seated_there() -> None:
    link = Link()
    a, b = link.hubs["a"], link.hubs["b"]
    uid = alas_game_being_seated(link)
    a.guest_login("alaNew99", "*Ala", "en", HOME_AGAIN)
    a.tables.leave(a.players["alaNew99"], uid, for_good=True, chose=True)
    link.deliver()
    assert uid not in a.players["alaNew99"].tables and "*Ala" not in b.tables[uid].people


def test_a_team_player_whose_session_ends_while_being_seated_leaves_the_game() -> None:
    """A logout takes a team game's player out of the game (docs/teams.md), at a table of another member
    as at one here; also while that member is seating them, where before its `leave` at the answer said
    they had not gone for good, and their team waited for them."""
    link = Link()
    a, b = link.hubs["a"], link.hubs["b"]
    for secret, nick in (("alaAla11", "*Ala"), ("bobBob22", "*Bob"), ("cydCyd33", "*Cyd")):
        a.guest_login(secret, nick, "en")
    b.guest_login("danDan44", "*Dan", "en")
    link.deliver()
    uid = a.set_up_table(
        parse_game_type("0808stanF0.0.0"), "*Ala", "*Bob", (0, 0, 0, 0), None, None, {}, more=["*Cyd", "*Dan"]
    )
    link.deliver(only_to="b")  # its `d` line: member b asks a to seat Dan
    assert b.logout("danDan44")
    link.deliver()
    room = a.tables[uid].room
    assert room is not None and "*Dan" not in a.tables[uid].people
    assert "*Dan left the game." in [entry.text for entry in a.tables[uid].chat.entries if not entry.nick]
