"""Seeks across the members of a cluster (docs/cluster.md, "Seeks and pools"), on members joined as
server/cluster/lobby.py joins them: every member lists the others' seeks under numbers of its own, in
its lines and its whole lobby state; one accepted at another member is checked and opened by the
seeker's member, and the player who accepted it sits down there; what the seeker's member refuses
comes back as a line saying why; a member that leaves takes its seeks along."""

from __future__ import annotations

import pytest

from server.hub import seeks as seeks_module
from server.hub.hub import Hub
from server.hub.limits import STORAGE_REFUSED
from server.hub.persistence import Account
from server.protocol.codec import ProtocolError, parse_commands
from server.protocol.seeks import AcceptSeek, CancelSeek, PostSeek, RatingRange
from tests.hub.test_acknowledged import Link

FREE = "2020s0.4.a.F.a.180.2.."  # the seeker is blue
RATED = "2020s0.4.a.R.a.180.2.."
ANYONE = RatingRange()


class Cluster(Link):
    """*Ala on member a; *Bob, who reads seeks, and *Cyd, whose client reads none (offered seeks as
    invitations), on member b. Each reply is read from the player's last msgNo."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, int] = {}
        self.a, self.b = self.hubs["a"], self.hubs["b"]
        self.a.guest_login("alaAla11", "*Ala", "en", reads_seeks=True)
        self.b.guest_login("bobBob22", "*Bob", "en", reads_seeks=True)
        self.b.guest_login("cydCyd33", "*Cyd", "en")
        self.deliver()
        for hub, secret in [(self.a, "alaAla11"), (self.b, "bobBob22"), (self.b, "cydCyd33")]:
            self.read(hub, secret)

    def read(self, hub: Hub, secret: str) -> list[str]:
        lines = hub.reply(secret, self.seen.get(secret, 0), with_subscriptions=False).split("/")
        self.seen[secret] = int(lines[1][1:].split(".")[1])
        return lines

    def post(self, hub: Hub, secret: str, game_type: str = FREE, rating_range: RatingRange = ANYONE) -> int:
        number = hub.seek(secret, PostSeek(game_type, rating_range))
        assert number is not None
        self.deliver()
        return number

    def games(self, hub: Hub) -> dict[int, list[str]]:
        return {uid: list(t.room.lineup.seats) for uid, t in hub.tables.items() if t.room is not None}


def seek_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith(("ka", "kd"))]


def told(lines: list[str]) -> list[str]:
    """The server lines saying why (`ca<time>.<n>..e.<text>`)."""
    return [line.split(".e.", 1)[1] for line in lines if line.startswith("ca") and ".e." in line]


def test_each_member_lists_the_others_seeks_under_its_own_numbers() -> None:
    link = Cluster()
    a, b = link.a, link.b
    assert a.seek("alaAla11", PostSeek(FREE, ANYONE)) == 1
    link.queue.clear()  # its `ka` lost on the way: b has not numbered it yet
    assert link.post(b, "bobBob22") == 1  # a lists it as 2
    b.take_lobby_part("a", a.lobby_part())  # a's part again, after the lines lost: a's seek is 2 at b
    assert seek_lines(link.read(b, "bobBob22")) == [f"ka1.*Bob...{FREE}", f"ka2.*Ala...{FREE}"]
    assert seek_lines(link.read(a, "alaAla11")) == [f"ka1.*Ala...{FREE}", f"ka2.*Bob...{FREE}"]
    whole = b.reply("cydCyd33", 0, with_subscriptions=False).split("/")
    assert seek_lines(whole) == [f"ka1.*Bob...{FREE}", f"ka2.*Ala...{FREE}"]
    assert seek_lines(b.lobby_part()) == [f"ka1.*Bob...{FREE}"]  # what b shares: its own alone

    a.seek("alaAla11", CancelSeek(1))
    link.deliver()
    assert seek_lines(link.read(b, "bobBob22")) == ["kd2"]
    assert list(b.seeks.open) == [1] and b.seeks.elsewhere == {}
    with pytest.raises(ProtocolError) as refused:
        b.seek("bobBob22", AcceptSeek(2))
    assert refused.value.code == "noSuchSeek"


def test_a_seek_accepted_at_another_member_opens_there_and_ends_the_acceptors_seeks_and_pool() -> None:
    link = Cluster()
    a, b = link.a, link.b
    link.post(a, "alaAla11")  # b lists it as 1
    link.post(b, "bobBob22")  # Bob's own, 2 at b, 2 at a
    b.pool("cydCyd33", "20x20_3_2")
    b.seek("cydCyd33", AcceptSeek(1))
    assert link.games(a) == {} and list(b.seeks.open) == [1, 2]  # until a answers
    link.deliver()

    [(uid, seats)] = link.games(a).items()
    assert seats == ["*Ala", "*Cyd"]  # the seeker blue, as the game type says
    assert uid in b.players["cydCyd33"].tables  # Cyd sits down at it from member b
    assert list(b.seeks.open) == [2] and [seek.player.nick for seek in a.seeks.open.values()] == ["*Bob"]
    assert seek_lines(link.read(a, "alaAla11")) == [f"ka1.*Ala...{FREE}", f"ka2.*Bob...{FREE}", "kd1"]
    assert b.pools.waiting == {}


def test_a_game_begun_at_another_member_ends_the_players_seeks_at_their_own() -> None:
    """Any game: an invitation across members accepted ends the inviter's seeks at its member."""
    link = Cluster()
    a, b = link.a, link.b
    link.post(b, "bobBob22")
    b.invite("bobBob22", "*Ala", FREE)
    link.deliver()
    a.answer_invitation("alaAla11", "a")  # the table opens at a
    link.deliver()
    assert b.seeks.open == {} and a.seeks.open == {}
    assert seek_lines(link.read(a, "alaAla11")) == [f"ka1.*Bob...{FREE}", "kd1"]


def test_the_seekers_member_refuses_whom_the_seeker_blocks_and_the_seek_is_not_offered_to_them_again() -> (
    None
):
    link = Cluster()
    a, b = link.a, link.b
    a.invites.block(a.players["alaAla11"], "*Cyd")
    link.post(a, "alaAla11")
    assert f"vg*Ala.{FREE}" in link.read(b, "cydCyd33")  # b cannot know of the block
    b.receive("cydCyd33", parse_commands("v1.0.a"))  # the offer accepted, as MultiPoints does
    link.deliver()

    assert link.games(a) == {}
    lines = link.read(b, "cydCyd33")
    assert told(lines) == ["*Ala does not accept your invitations."]
    assert not any(line.startswith("vg") for line in lines)
    sent = len(link.queue)
    with pytest.raises(ProtocolError) as refused:
        b.seek("cydCyd33", AcceptSeek(1))
    assert refused.value.code == "blocked" and len(link.queue) == sent  # at once, nothing sent
    b.seek("bobBob22", AcceptSeek(1))  # the others may still
    link.deliver()
    assert list(link.games(a).values()) == [["*Ala", "*Bob"]]


def test_an_old_client_accepts_another_members_seek_offered_as_an_invitation() -> None:
    link = Cluster()
    a, b = link.a, link.b
    link.post(a, "alaAla11")
    assert f"vg*Ala.{FREE}" in link.read(b, "cydCyd33")
    b.receive("cydCyd33", parse_commands("v1.0.a"))
    link.deliver()
    assert list(link.games(a).values()) == [["*Ala", "*Cyd"]]
    assert not any(line.startswith("vg") for line in link.read(b, "cydCyd33"))


def test_what_the_acceptors_member_knows_is_refused_there_at_once() -> None:
    link = Cluster()
    a, b = link.a, link.b
    a.login("robo12345678", Account("Robo", 1500, 0, 0, 0, bot=True))
    b.login("danDan44", Account("Dan", 1500, 0, 0, 0))
    link.deliver()
    link.post(a, "alaAla11", FREE, RatingRange(1400, 1600))  # for accounts rated 1400-1600: 1 at b
    link.post(a, "robo12345678", RATED)  # a bot's rated seek: 2 at b
    sent = len(link.queue)
    for secret, number, code in [("bobBob22", 1, "notEligible"), ("danDan44", 2, "botUnrated")]:
        with pytest.raises(ProtocolError) as refused:
            b.seek(secret, AcceptSeek(number))
        assert refused.value.code == code
    assert len(link.queue) == sent
    b.seek("danDan44", AcceptSeek(1))
    link.deliver()
    assert list(link.games(a).values()) == [["*Ala", "Dan"]]


def test_an_acceptance_is_sent_once_and_one_that_reaches_nobody_is_answered() -> None:
    link = Cluster()
    a, b = link.a, link.b
    link.post(a, "alaAla11")
    b.seek("bobBob22", AcceptSeek(1))
    b.seek("bobBob22", AcceptSeek(1))
    assert [(to, message["accept_seek"][0]) for to, _, message in link.queue] == [("a", 1)]
    link.kill("a")
    link.deliver()
    assert told(link.read(b, "bobBob22")) == ["*Ala cannot be reached now."]
    b.drop_lobby_part("a")  # as membership does once a is found gone
    assert seek_lines(link.read(b, "bobBob22")) == ["kd1"] and b.seeks.open == {}


def test_a_member_stopping_refuses_an_acceptance_it_cannot_send() -> None:
    link = Cluster()
    a, b = link.a, link.b
    link.post(a, "alaAla11")
    b.share_with_members(None)  # as the cluster's stop does, before its lobby goes
    with pytest.raises(ProtocolError) as refused:
        b.seek("bobBob22", AcceptSeek(1))
    assert refused.value.code == "notOnline" and not b.seeks.open[1].asked


def test_the_seekers_member_refuses_while_its_storage_fails_and_the_seek_stays() -> None:
    link = Cluster()
    a, b = link.a, link.b
    link.post(a, "alaAla11")
    a.persistence.storage_failure = "disk full"
    b.seek("bobBob22", AcceptSeek(1))
    link.deliver()
    assert link.games(a) == {} and len(a.seeks.open) == 1
    assert told(link.read(b, "bobBob22")) == [STORAGE_REFUSED]
    a.persistence.storage_failure = None
    b.seek("bobBob22", AcceptSeek(1))
    link.deliver()
    assert list(link.games(a).values()) == [["*Ala", "*Bob"]]


def test_a_whole_part_after_lost_lines_lists_the_seeks_as_they_are_now() -> None:
    link = Cluster()
    a, b = link.a, link.b
    a.seek("alaAla11", PostSeek(FREE, ANYONE))
    link.queue.clear()  # its `ka` lost on the way
    assert b.seeks.open == {}
    b.take_lobby_part("a", a.lobby_part())
    assert seek_lines(link.read(b, "bobBob22")) == [f"ka1.*Ala...{FREE}"]
    a.seek("alaAla11", CancelSeek(1))
    a.seek("alaAla11", PostSeek(RATED, ANYONE))
    link.queue.clear()
    b.take_lobby_part("a", a.lobby_part())
    assert seek_lines(link.read(b, "bobBob22")) == ["kd1", f"ka2.*Ala...{RATED}"]


def test_the_bound_on_open_seeks_counts_every_members(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(seeks_module, "MOST_OPEN_SEEKS", 2)
    link = Cluster()
    link.post(link.a, "alaAla11")
    link.post(link.a, "alaAla11")
    with pytest.raises(ProtocolError) as refused:
        link.b.seek("bobBob22", PostSeek(FREE, ANYONE))
    assert refused.value.code == "seeksFull" and len(link.b.seeks.open) == 2


def test_a_seek_declined_is_not_offered_again_when_its_member_comes_back_after_an_outage() -> None:
    """The reader's decline was kept by the seek's number here: while Redis was unreachable the other
    member's seeks went from the lobby, the decline with them, and the seek came back under a new
    number and was offered again."""
    link = Cluster()
    a, b = link.a, link.b
    link.post(a, "alaAla11")
    assert f"vg*Ala.{FREE}" in link.read(b, "cydCyd33")
    b.receive("cydCyd33", parse_commands("v1.0.r"))  # declined, as MultiPoints does
    assert not any(line.startswith("vg") for line in link.read(b, "cydCyd33"))

    b.drop_lobby_part("a")  # Redis unreachable: member a's part of the lobby is gone
    assert b.seeks.open == {}
    link.read(b, "cydCyd33")
    b.take_lobby_part("a", a.lobby_part())  # and back, its seek listed under a new number
    assert [seek.elsewhere for seek in b.seeks.open.values()] == [("a", 1)]
    assert not any(line.startswith("vg") for line in link.read(b, "cydCyd33"))
    link.post(a, "alaAla11", RATED)  # another seek of hers is offered
    assert f"vg*Ala.{RATED}" in link.read(b, "cydCyd33")
