"""A guest who comes back with a new id on another member of a cluster (docs/protocol.md, "A guest who
comes back"; docs/cluster.md, "One name space"): sat again at its game on a third member, as one member
seats it; a stranger with its nick, from another network, is not."""

from __future__ import annotations

import pytest

from server.engine.gametype import parse_game_type
from server.hub.hub import Hub
from server.hub.model import Origin
from server.protocol.codec import ProtocolError
from tests.hub.test_acknowledged import Link
from tests.hub.test_sessions import poll

HOME = Origin("198.51.100.7", False, "198.51.100.0/24")
HOME_AGAIN = Origin("198.51.100.9", False, "198.51.100.0/24")  # another address of her provider's
ELSEWHERE = Origin("203.0.113.9", False, "203.0.113.0/24")
SCHOOL = Origin("198.51.100.7", True, "198.51.100.0/24")  # a school's proxy, --unlimited (operations.md)


def game_on_c(link: Link, ala_from: Origin = HOME) -> int:
    """*Ala on member a against *Bob on member b, at a table of member c; Ala has moved."""
    a, b, c = (link.hubs[name] for name in "abc")
    a.guest_login("alaAla11", "*Ala", "en", ala_from)
    b.guest_login("bobBob22", "*Bob", "en", Origin("192.0.2.5", False, "192.0.2.0/24"))
    link.deliver()
    uid = c.open_table(parse_game_type("0808stanF0.0.0"), "*Ala", "*Bob").uid
    link.deliver()  # its `d` line names them: they sit down at it from their members
    a.move("alaAla11", str(uid), "aa")
    link.deliver()
    return uid


def plays_on(link: Link, uid: int, hub: Hub, secret: str) -> bool:
    """Whether the guest `secret` of `hub` moves at the game at member c after Bob."""
    c = link.hubs["c"]
    link.hubs["b"].move("bobBob22", str(uid), "hh")
    link.deliver()
    hub.move(secret, str(uid), "bb")
    link.deliver()
    room = c.tables[uid].room
    assert room is not None
    return room.record_line() == "sr(;B[aa];W[hh];B[bb])"


def test_a_guest_whose_session_ended_sits_again_at_its_game_on_a_third_member() -> None:
    """Ala's MultiPoints crashed; her session on member a timed out (a logout here); she starts it again,
    with a new id, and nginx's hash of that id sends her to member d. Her game is at member c: before,
    c kept her seat for the old session and seated her as a spectator, and her game was lost on time."""
    link = Link("abcd")
    uid = game_on_c(link)
    a, c, d = link.hubs["a"], link.hubs["c"], link.hubs["d"]
    assert a.logout("alaAla11")
    link.deliver()
    assert "*Ala" not in c.tables[uid].people

    d.guest_login("alaNew99", "*Ala", "en", HOME_AGAIN)
    link.deliver()
    visitor = c.tables[uid].people["*Ala"]
    assert visitor.visiting_from == "d" and c.tables[uid].seat_of(visitor) == 1
    assert c.tables[uid].owners["*Ala"] == visitor.seat_key  # and journalled so: a restart keeps it
    assert c.tables[uid].guest_places["*Ala"] == (HOME_AGAIN.host, HOME_AGAIN.group)
    assert link.stores["c"].entries[uid][-1][1] == "seat"
    assert plays_on(link, uid, d, "alaNew99")


def test_a_stranger_with_the_nick_from_another_network_only_watches() -> None:
    link = Link("abcd")
    uid = game_on_c(link)
    a, c, d = link.hubs["a"], link.hubs["c"], link.hubs["d"]
    assert a.logout("alaAla11")
    link.deliver()

    d.guest_login("eveEve55", "*Ala", "en", ELSEWHERE)
    link.deliver()
    eve = c.tables[uid].people["*Ala"]
    assert c.tables[uid].seat_of(eve) == 0
    assert not plays_on(link, uid, d, "eveEve55")
    refused = [line for line in poll(d, "eveEve55", 0).lines(uid) if line.startswith("ca")]
    assert len(refused) == 1 and refused[0].endswith(
        f"..e.The seat of *Ala at table {uid} is another session&#39;s."
    )


def test_a_live_session_given_up_for_the_guest_come_back_on_another_member() -> None:
    """MultiPoints started again while the old session lives (up to 60 s): member d asks member a, which
    holds the nick, to give the session up (server/cluster/sessions.py). Whom she blocked and ignored
    comes along; her seat at member c is hers again."""
    link = Link("abcd")
    uid = game_on_c(link)
    a, c, d = link.hubs["a"], link.hubs["c"], link.hubs["d"]
    a.players["alaAla11"].blocked.add("*troll")
    a.players["alaAla11"].ignored["*troll"] = "*Troll"

    assert a.give_up("*Ala", ELSEWHERE.group) is None  # a stranger's login: nothing given up
    assert a.give_up("*ala", HOME_AGAIN.group) is None  # another case is another nick
    assert "alaAla11" in a.players
    carried = a.give_up("*Ala", HOME_AGAIN.group)
    assert carried is not None and (carried.blocked, carried.ignored) == ({"*troll"}, {"*troll": "*Troll"})
    assert "alaAla11" not in a.players
    assert a.ctx.persistence.id_hmac("alaAla11") not in link.stores["a"].sessions  # its end stored
    link.deliver()
    room = c.tables[uid].room
    assert "*Ala" not in c.tables[uid].people and room is not None and room.game.result is None

    d.guest_login("alaNew99", "*Ala", "en", HOME_AGAIN, carried=carried)
    link.deliver()
    ala = d.players["alaNew99"]
    assert (ala.blocked, ala.ignored) == ({"*troll"}, {"*troll": "*Troll"})
    assert plays_on(link, uid, d, "alaNew99")


def test_a_guest_of_an_unlimited_address_come_back_at_its_tables_member_sits_again() -> None:
    """Found with MultiPoints itself on two members: Ala, behind her school's proxy (--unlimited), plays
    at a table of member c from member a; she starts MultiPoints again and nginx sends the new id to c.
    Before, an --unlimited guest's seat kept no network (the limits alone read it then, and they skip
    such guests), c had seen no session of hers end, and it seated her as a spectator."""
    link = Link("abc")
    uid = game_on_c(link, SCHOOL)
    a, c = link.hubs["a"], link.hubs["c"]
    assert c.tables[uid].guest_places["*Ala"] == ("", SCHOOL.group)  # for her coming back, counted for none

    carried = a.give_up("*Ala", SCHOOL.group)
    link.deliver()
    c.guest_login("alaNew99", "*Ala", "en", SCHOOL, carried=carried)
    link.deliver()
    ala = c.players["alaNew99"]
    assert c.tables[uid].seat_of(ala) == 1
    assert plays_on(link, uid, c, "alaNew99")


def test_the_copy_a_dead_member_left_gives_way_to_the_guest_come_back() -> None:
    """Member a died with Ala's session; once its nick claims expired (10 s) she logs in on member d,
    perhaps before member c heard of a's death: c's copy of her old session gives her its place, as it
    gives it to the same session come from another member. A stranger's login is refused the table
    (and not told: the server took the seat back, not the stranger)."""
    link = Link("abcd")
    uid = game_on_c(link)
    c, d = link.hubs["c"], link.hubs["d"]
    link.kill("a")

    d.guest_login("eveEve55", "*Ala", "en", ELSEWHERE)
    link.deliver()
    assert c.tables[uid].people["*Ala"].visiting_from == "a"
    assert uid not in d.players["eveEve55"].tables
    # she did not choose the table: the refusal of a seat taken back by itself is not hers to read
    assert not any("already at table" in line for line in poll(d, "eveEve55", 0).lines(0))
    assert d.logout("eveEve55")
    link.deliver()

    d.guest_login("alaNew99", "*Ala", "en", HOME_AGAIN)
    link.deliver()
    assert c.tables[uid].people["*Ala"].visiting_from == "d"
    assert plays_on(link, uid, d, "alaNew99")
    c.member_gone("a")  # heard at last: she stays
    link.deliver()
    assert c.tables[uid].people["*Ala"].visiting_from == "d"


def test_while_storage_fails_a_live_session_is_not_given_up_and_nothing_ends() -> None:
    """Its end could not be stored before the login goes on elsewhere, and a crash would bring the old
    session back beside the new one: refused as any command storage must keep, before anything ends.
    Before, the session ended here all the same, and the login elsewhere was refused `nickInUse`."""
    link = Link("abc")
    uid = game_on_c(link)
    a = link.hubs["a"]
    a.persistence.storage_failure = "disk full"

    with pytest.raises(ProtocolError) as refused:
        a.give_up("*Ala", HOME_AGAIN.group)
    assert refused.value.code == "storage"
    assert a.give_up("*Ala", ELSEWHERE.group) is None  # a stranger is told no, storage or not
    assert "alaAla11" in a.players and uid in a.players["alaAla11"].tables

    a.persistence.storage_failure = None
    assert a.give_up("*Ala", HOME_AGAIN.group) is not None
