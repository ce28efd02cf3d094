"""Quick-pairing pools across the members of a cluster (docs/cluster.md, "Seeks and pools"), on members
joined as server/cluster/lobby.py joins them: every member shares its waiters (`ja`/`jd`, for the members
alone) and pairs its own with the others'; of two players of two members, the member of the one who came
first proposes the pairing, and the other's member opens the table if its player still waits. No player
is ever given two games, and a pairing whose answer is lost or refused holds nobody for long."""

from __future__ import annotations

import random
from collections import deque
from dataclasses import replace
from typing import Any

from server.hub.hub import Hub
from server.hub.persistence import Account
from server.hub.pools import GAP_AT_FIRST, PROPOSAL_WAIT
from server.protocol.seeks import POOL_LEFT, POOL_WAITER
from tests.hub.test_acknowledged import Link
from tests.hub.test_seeks_across import told

POOL = "20x20_3_2"


class Counted(deque[tuple[str, str, Any]]):
    """Link's queue, counting the pairings proposed on it."""

    proposals = 0

    def append(self, item: tuple[str, str, Any]) -> None:
        if isinstance(item[2], dict) and "pool_pair" in item[2]:
            self.proposals += 1
        super().append(item)


class Cluster(Link):
    """Members whose wall clocks agree with the test's timers, numbering their tables apart as the
    shared database has them do; each reply read from the player's last msgNo."""

    def __init__(self, names: str = "ab") -> None:
        super().__init__(names)
        self.queue = Counted()
        self.seen: dict[str, int] = {}
        self.where: dict[str, Hub] = {}  # secret -> its member
        for n, hub in enumerate(self.hubs.values()):
            hub.ctx.clock = self.timers.now
            hub.tables.numbers.next_uid = 1 + 1000 * n

    def guest(self, member: str, secret: str, nick: str) -> None:
        self.where[secret] = self.hubs[member]
        self.hubs[member].guest_login(secret, nick, "en")
        self.deliver()
        self.read(secret)

    def account(self, member: str, secret: str, nick: str, rating: int, *, bot: bool = False) -> None:
        self.where[secret] = self.hubs[member]
        self.hubs[member].login(secret, Account(nick, rating, 0, 0, 0, bot=bot))
        self.deliver()
        self.read(secret)

    def join(self, secret: str, pool: str = POOL, *, deliver: bool = True) -> None:
        self.where[secret].pool(secret, pool)
        if deliver:
            self.deliver()

    def read(self, secret: str) -> list[str]:
        text = self.where[secret].reply(secret, self.seen.get(secret, 0), with_subscriptions=False)
        lines = text.split("/")
        self.seen[secret] = int(lines[1][1:].split(".")[1])
        return lines

    def waiting_line(self, secret: str) -> list[str]:
        return [line for line in self.read(secret) if line.startswith("w")]

    def sweep(self, seconds: float) -> None:
        self.timers.advance(seconds)
        for hub in self.hubs.values():
            hub.sweep()
        self.deliver()

    def games(self) -> list[tuple[str, list[str]]]:
        """(member, seats) of every game table."""
        return [
            (name, list(table.room.lineup.seats))
            for name, hub in self.hubs.items()
            for table in hub.tables.values()
            if table.room is not None
        ]

    def proposals(self) -> int:
        """Pairings proposed to another member so far, delivered or not."""
        return self.queue.proposals


def test_two_waiters_of_two_members_are_paired_at_once_at_the_later_comers_member() -> None:
    link = Cluster()
    link.guest("a", "alaAla11", "*Ala")
    link.guest("b", "bobBob22", "*Bob")
    link.join("alaAla11")
    assert link.waiting_line("alaAla11") == [f"w{POOL}.0.{GAP_AT_FIRST}.1"]

    link.join("bobBob22")

    [(member, seats)] = link.games()
    assert member == "b" and sorted(seats) == ["*Ala", "*Bob"]  # a proposed it: Ala came first
    uid = next(iter(link.hubs["b"].tables))
    assert uid in link.hubs["a"].players["alaAla11"].tables  # Ala sits down at it from member a
    assert f"q{uid}" in link.read("alaAla11") and link.waiting_line("bobBob22") == []
    for hub in link.hubs.values():
        assert hub.pools.waiting == {} and hub.pools.elsewhere == {}


def test_every_members_waiters_are_counted_and_the_gap_widens_across_members() -> None:
    link = Cluster()
    link.account("a", "dan12345678", "Dan", 1500)
    link.account("b", "eve12345678", "Eve", 1800)
    link.join("dan12345678", "39x32_5_5")
    link.sweep(5)  # Dan's gap: 200
    link.join("eve12345678", "39x32_5_5")  # 300 apart
    assert link.games() == []
    assert link.waiting_line("eve12345678") == [f"w39x32_5_5.0.{GAP_AT_FIRST}.2"]
    assert link.waiting_line("dan12345678") == ["w39x32_5_5.5.200.2"]

    link.sweep(4)  # 9 s: 280
    assert link.games() == []
    link.sweep(1)  # 10 s: 300

    [(member, seats)] = link.games()
    assert member == "b" and seats == ["Dan", "Eve"]  # ranked: the lower rating is blue


def test_a_pairing_the_other_member_refuses_for_a_block_is_never_proposed_again() -> None:
    link = Cluster()
    link.guest("a", "alaAla11", "*Ala")
    link.guest("b", "bobBob22", "*Bob")
    link.guest("b", "cydCyd33", "*Cyd")
    link.hubs["b"].invites.block(link.hubs["b"].players["bobBob22"], "*Ala")  # member a cannot know it
    link.join("alaAla11")
    link.join("bobBob22")
    assert link.games() == [] and link.proposals() == 1

    link.sweep(PROPOSAL_WAIT + 1)
    link.hubs["a"].pools.pair_all()
    assert link.games() == [] and link.proposals() == 1  # refused once, never proposed again

    link.join("cydCyd33")  # Bob, who came first, takes Cyd
    [(member, seats)] = link.games()
    assert member == "b" and sorted(seats) == ["*Bob", "*Cyd"]
    link.guest("b", "dagDag44", "*Dag")
    link.join("dagDag44")
    assert sorted(link.games()[1][1]) == ["*Ala", "*Dag"]


def test_a_pairing_whose_proposal_is_lost_holds_both_for_proposal_wait_then_is_proposed_again() -> None:
    link = Cluster()
    link.guest("a", "alaAla11", "*Ala")
    link.guest("b", "bobBob22", "*Bob")
    lost: list[dict[str, object]] = []
    link.losing = lambda message: "pool_pair" in message and not lost and not lost.append(message)
    link.join("alaAla11")
    link.join("bobBob22")
    assert link.games() == [] and len(lost) == 1

    link.sweep(PROPOSAL_WAIT / 2)
    assert link.games() == []  # still waiting for the answer: proposed to nobody else
    link.sweep(PROPOSAL_WAIT / 2)

    [(member, seats)] = link.games()
    assert member == "b" and sorted(seats) == ["*Ala", "*Bob"]


def test_a_pairing_proposed_to_a_member_that_died_frees_its_waiter_here() -> None:
    link = Cluster("abc")
    link.guest("a", "alaAla11", "*Ala")
    link.guest("b", "bobBob22", "*Bob")
    link.guest("c", "cydCyd33", "*Cyd")
    link.join("alaAla11")
    link.join("bobBob22", deliver=False)
    link.hubs["a"].take_lobby_line("b", link.hubs["b"].lobby_part()[-1], False)  # Bob's `ja`, seen by a alone
    assert link.proposals() == 1
    link.kill("b")
    link.deliver()  # the proposal reaches nobody
    link.hubs["a"].drop_lobby_part("b")  # as membership says
    link.hubs["c"].drop_lobby_part("b")
    assert link.waiting_line("alaAla11") == [f"w{POOL}.0.{GAP_AT_FIRST}.1"]

    link.join("cydCyd33")

    [(member, seats)] = link.games()
    assert member == "c" and sorted(seats) == ["*Ala", "*Cyd"]


def test_a_whole_part_carries_the_waiters_whose_lines_were_lost() -> None:
    link = Cluster()
    link.guest("a", "alaAla11", "*Ala")
    link.guest("b", "bobBob22", "*Bob")
    link.join("alaAla11", deliver=False)
    assert link.queue[-1][2] == (f"{POOL_WAITER}*Ala.{POOL}..1000.000.", False)
    link.queue.clear()  # lost
    link.hubs["b"].take_lobby_part("a", link.hubs["a"].lobby_part())  # asked for after the gap

    link.join("bobBob22")

    [(member, seats)] = link.games()
    assert member == "b" and sorted(seats) == ["*Ala", "*Bob"]


def test_leaving_the_pool_tells_the_other_members() -> None:
    link = Cluster()
    link.guest("a", "alaAla11", "*Ala")
    link.guest("b", "bobBob22", "*Bob")
    link.join("alaAla11", "25x25_5_5")
    link.join("bobBob22")
    assert link.waiting_line("bobBob22") == [f"w{POOL}.0.{GAP_AT_FIRST}.1"]
    link.hubs["a"].pool("alaAla11", "")
    assert link.queue[-1][2] == (f"{POOL_LEFT}*Ala", False)
    link.deliver()
    assert link.hubs["b"].pools.elsewhere == {}
    link.hubs["a"].pool("alaAla11", POOL)  # another pool: its line replaces the first
    link.deliver()
    assert len(link.games()) == 1


def test_the_count_follows_the_other_members_waiters_into_a_pool_this_member_does_not_have() -> None:
    link = Cluster()
    link.guest("a", "alaAla11", "*Ala")
    link.guest("b", "bobBob22", "*Bob")
    link.hubs["b"].invites.block(link.hubs["b"].players["bobBob22"], "*Ala")  # they wait side by side
    link.join("alaAla11")
    link.join("bobBob22")
    assert link.waiting_line("bobBob22") == [f"w{POOL}.0.{GAP_AT_FIRST}.2"]

    link.hubs["b"].take_lobby_line("a", f"{POOL_WAITER}*Ala.64x64_1_0..1000.000.", False)  # a newer member's

    assert link.waiting_line("bobBob22") == [f"w{POOL}.0.{GAP_AT_FIRST}.1"]
    assert link.hubs["b"].pools.elsewhere == {}


def test_a_waiter_at_the_cap_of_games_leaves_the_pool_told_why_on_either_side_of_a_proposal() -> None:
    """A game begun ends a place in a pool, so a waiter reaches the cap only as the cap comes down to
    them: here the cap is lowered under the waiters, on the proposing member, then on the asked one."""
    link = Cluster()
    link.guest("a", "alaAla11", "*Ala")
    link.guest("b", "bobBob22", "*Bob")
    link.guest("b", "dagDag44", "*Dag")
    a, b = link.hubs["a"], link.hubs["b"]
    link.join("bobBob22")
    link.timers.advance(1)
    b.ctx.limits.caps = replace(b.caps, games_per_player=0)
    link.join("alaAla11")  # b would propose: Bob came first

    assert told(link.read("bobBob22")) == ["*Bob has 0 unfinished games already (at most 0)."]
    assert b.pools.waiting == {} and link.games() == [] and link.proposals() == 0
    b.ctx.limits.caps = a.caps
    link.timers.advance(1)
    link.join("dagDag44", deliver=False)  # Ala came first: a proposes, and b finds Dag at the cap
    b.ctx.limits.caps = replace(b.caps, games_per_player=0)
    link.deliver()

    assert told(link.read("dagDag44")) == ["*Dag has 0 unfinished games already (at most 0)."]
    assert link.games() == [] and b.pools.waiting == {} and link.proposals() == 1
    assert list(a.pools.waiting) == [a.players["alaAla11"]]
    assert a.pools.waiting[a.players["alaAla11"]].proposed is None  # free again at once


def test_a_bot_and_a_person_of_two_members_are_not_paired_rated() -> None:
    link = Cluster()
    link.account("a", "botBot12345", "Robo", 1500, bot=True)
    link.account("b", "eve12345678", "Eve", 1500)
    link.join("botBot12345")
    link.join("eve12345678")
    link.sweep(60)
    assert link.games() == [] and link.proposals() == 0


def test_players_joining_on_three_members_at_once_get_one_game_each() -> None:
    """Joins and deliveries interleaved at random: two members may each find a partner for the same
    player at one moment; the one whose player is asked refuses what it can no longer give."""
    for seed in range(20):
        rng = random.Random(seed)
        link = Cluster("abc")
        secrets = [f"guest{n:03d}" for n in range(12)]
        for n, secret in enumerate(secrets):
            link.guest("abc"[n % 3], secret, f"*G{n}")
        for secret in rng.sample(secrets, len(secrets)):
            link.join(secret, deliver=False)
            for _ in range(rng.randrange(4)):  # some of what is on its way arrives
                deliver_one(link, rng)
        link.deliver()
        link.sweep(PROPOSAL_WAIT + 1)

        seats = [seat for _, game in link.games() for seat in game]
        assert sorted(seats) == sorted(f"*G{n}" for n in range(12)), seed  # everyone plays, once
        assert all(hub.pools.waiting == {} for hub in link.hubs.values()), seed


def deliver_one(link: Link, rng: random.Random) -> None:
    """One queued item, of any pair of members: what one member sends another arrives in order (one
    Redis connection hears both channels in the order they were published), the rest in any order."""
    firsts: dict[tuple[str, str], int] = {}
    for index, (to, by, _) in enumerate(link.queue):
        firsts.setdefault((to, by), index)
    if not firsts:
        return
    index = rng.choice(list(firsts.values()))
    to, by, message = link.queue[index]
    del link.queue[index]
    if isinstance(message, tuple):
        link.hubs[to].take_lobby_line(by, *message)
    else:
        link.hubs[to].take_from_member(by, message)


def test_two_waiters_who_joined_in_one_millisecond_on_two_members_are_paired() -> None:
    """Each member read who came first from its own waiter's wall time as the clock gave it and the other's
    as its `ja` line gives it, to the millisecond: Ala joined at ...0.0004 on member a, Bob at ...0.0001
    on member b, and each member found the other's waiter first (1000.000 before either), left the
    pairing to the other member, and neither paired them (the test failed before the fix)."""
    link = Cluster()
    link.hubs["a"].ctx.clock = lambda: link.timers.now() + 0.0004
    link.hubs["b"].ctx.clock = lambda: link.timers.now() + 0.0001
    link.guest("a", "alaAla11", "*Ala")
    link.guest("b", "bobBob22", "*Bob")
    link.join("alaAla11")
    link.join("bobBob22")
    link.sweep(1)

    [(member, seats)] = link.games()
    assert member == "b" and sorted(seats) == ["*Ala", "*Bob"]  # Ala first: the nicks' order at a tie
