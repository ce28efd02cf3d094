"""A player who leaves a game (issue 47; docs/protocol.md, "An opponent who left"), over the protocol and
on a clock the test drives: the opponent is told, may claim the win or call the game off once the grace
is over, and is told when the player comes back in time; bad and early claims are refused and change
nothing."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from server.engine.gametype import parse_game_type
from server.engine.sgf import read_record
from server.hub.absences import AWAY_AFTER, CLAIM_AFTER
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.persistence import MemoryPersistence
from server.hub.room import Room
from server.hub.saved import SWEEP_EVERY
from server.hub.stream import Poll
from server.protocol.codec import ProtocolError, parse_commands
from tests.hub.test_restore import RecordingPersistence

UNTIMED = parse_game_type("1010noT1F0.0.0")  # a free game without a clock
RANKED = parse_game_type("1010noT1R0.0.0")
TIMED = parse_game_type("1010noT1F0.600.5")


class Game:
    """*Ala (blue) and *Bob (red) at one table, each polling as a client does."""

    def __init__(self, game_type=UNTIMED, persistence: MemoryPersistence | None = None) -> None:
        self.timers = ManualTimers()
        self.hub = Hub(
            timers=self.timers,
            rng=random.Random(3),
            clock=lambda: 1_700_000_000.0,
            persistence=persistence,
        )
        self.hub.guest_login("ala1", "*Ala", "en")
        self.hub.guest_login("bob1", "*Bob", "en")
        self.uid = self.hub.open_table(game_type, "*Ala", "*Bob").uid
        self.seen = {"ala1": 0, "bob1": 0}
        self.commands = {"ala1": 0, "bob1": 0}
        for secret in self.seen:
            self.poll(secret)

    @property
    def room(self) -> Room:
        room = self.hub.tables[self.uid].room
        assert room is not None
        return room

    def poll(self, secret: str, command: str = "") -> str:
        """One getMsg: the command (`u.<table>.claim` gets its number here) and the reply's new lines."""
        messages: list[Any] = []
        if command:
            self.commands[secret] += 1
            kind, rest = command[0], command[1:]
            messages = parse_commands(f"{kind}{self.commands[secret]}{rest}")
        self.hub.receive(secret, messages)
        reply = self.hub.reply(secret, self.seen[secret], with_subscriptions=False)
        self.seen[secret] = self.hub.counter.last
        return reply

    def moves(self, *dots: str) -> None:
        for number, dot in enumerate(dots):
            self.hub.move("ala1" if number % 2 == 0 else "bob1", str(self.uid), dot)

    def wait(self, seconds: float, *polling: str) -> None:
        """`seconds` pass, the sweep running as often as the hub's; `polling` poll all along."""
        while seconds > 0:
            step = min(SWEEP_EVERY, seconds)
            self.timers.advance(step)
            seconds -= step
            for secret in polling:
                self.hub.receive(secret, [])
            self.hub.sweep()

    def lines(self) -> list[tuple[str, str]]:
        """The table's server lines as (nickType, text)."""
        return [(e.nick_type, e.text) for e in self.hub.tables[self.uid].chat.entries if not e.nick]

    def codes(self) -> list[str]:
        return [code for code, _ in self.lines()]


AWAY_LINE = (
    "away2",
    f"*Bob has left the game. If they are not back within {CLAIM_AFTER:.0f} s, *Ala may claim the win or "
    "call the game off.",
)


def test_an_opponent_who_stops_polling_is_announced_and_the_win_claimed_after_the_grace() -> None:
    game = Game()
    game.moves("aa", "jj", "ab", "jh")

    game.wait(AWAY_AFTER - SWEEP_EVERY, "ala1")
    assert game.codes() == []  # a client asks again well within AWAY_AFTER
    game.wait(SWEEP_EVERY, "ala1")
    assert game.lines() == [AWAY_LINE]
    assert "away2" in game.poll("ala1")

    game.wait(CLAIM_AFTER, "ala1")
    assert game.lines()[-1] == (
        "claimable2",
        "*Bob has not come back: *Ala may claim the win or call the game off.",
    )
    reply = game.poll("ala1", f"u.{game.uid}.claim")

    assert str(game.room.game.result) == "B+R"
    assert game.lines()[-3:] == [
        ("B+R", "*Ala won: *Bob left the game and did not come back."),
        ("l1", "Game saved as number 1."),
        ("unratedFree", "Not rated: a free game."),
    ]
    assert f"x{game.uid}.1.B+R.1" in reply  # blue on move, as when *Bob left
    record = read_record(game.hub.persistence.records[1])  # type: ignore[attr-defined]
    assert record.result == "B+R"
    assert game.hub.absences.away == {}


async def test_a_player_whose_poll_waits_for_news_is_at_the_table_however_long_it_waits() -> None:
    """A push connection waits up to 75 s between its quiet polls (server/web/push.py, KEEP_ALIVE): its
    player, asking all along, is never announced as gone while the opponent thinks."""
    game = Game()
    game.moves("aa", "jj", "ab", "jh")
    waiting = asyncio.create_task(game.hub.poll(Poll("bob1", [], game.hub.counter.last, False, wait=300.0)))
    await asyncio.sleep(0.05)
    game.wait(AWAY_AFTER + CLAIM_AFTER, "ala1")
    assert not waiting.done() and game.codes() == []
    game.hub.move("ala1", str(game.uid), "ac")
    await asyncio.wait_for(waiting, 5)
    game.wait(AWAY_AFTER, "ala1")
    assert game.codes() == ["away2"]  # the wait over and no poll after it: gone


def test_a_player_who_comes_back_in_time_plays_on_and_the_opponent_is_told() -> None:
    game = Game()
    game.moves("aa", "jj")
    game.wait(AWAY_AFTER + SWEEP_EVERY, "ala1")
    assert game.codes() == ["away2"]

    game.wait(CLAIM_AFTER / 2, "ala1", "bob1")  # *Bob's client polls again

    assert game.lines()[-1] == ("back2", "*Bob is back; the game goes on.")
    assert "back2" in game.poll("ala1")
    game.wait(CLAIM_AFTER, "ala1", "bob1")
    with pytest.raises(ProtocolError) as refused:
        game.hub.propose("ala1", str(game.uid), "claim")
    assert refused.value.code == "notAway"
    assert game.room.game.result is None
    game.moves("ab")  # and the game goes on


def test_a_claim_against_a_player_back_before_the_sweep_saw_it_is_refused_and_changes_nothing() -> None:
    game = Game()
    game.moves("aa", "jj", "ab", "jh")
    game.wait(AWAY_AFTER + CLAIM_AFTER + SWEEP_EVERY, "ala1")
    assert game.codes() == ["away2", "claimable2"]
    assert "bob1" not in game.hub.players  # timed out meanwhile
    game.hub.guest_login("bob1", "*Bob", "en")  # his client logs in again, between two sweeps
    before = (game.room.state(), game.lines(), game.hub.tables[game.uid].journal_seq)

    reply = game.poll("ala1", f"u.{game.uid}.claim")

    assert "..e.*Bob is here: there is nothing to claim." in reply
    assert (game.room.state(), game.lines(), game.hub.tables[game.uid].journal_seq) == before


def test_an_early_claim_is_refused_with_the_time_left_and_in_the_players_language() -> None:
    game = Game()
    game.moves("aa", "jj", "ab", "jh")
    game.wait(AWAY_AFTER, "ala1")  # *Bob is away from this sweep on
    game.wait(20, "ala1")

    with pytest.raises(ProtocolError) as refused:
        game.hub.propose("ala1", str(game.uid), "claim")
    assert refused.value.code == "claimTooSoon"
    assert str(refused.value) == f"*Bob may still come back: you may claim in {CLAIM_AFTER - 20:.0f} s."

    game.hub.change_lang("ala1", "pl")
    reply = game.poll("ala1", f"u.{game.uid}.abort")
    assert "Przeciwnik może jeszcze wrócić" in reply
    assert game.room.game.result is None and game.codes() == ["away2"]


def test_a_player_whose_session_ended_is_away_at_the_next_sweep() -> None:
    """MultiPoints says usunGracza when it is closed: no need to wait for silence."""
    game = Game()
    game.moves("aa", "jj")
    game.hub.logout("bob1")

    game.wait(SWEEP_EVERY, "ala1")

    assert game.codes() == ["away2"]


def test_a_game_with_fewer_than_two_moves_each_is_called_off_unrated_not_won() -> None:
    game = Game(RANKED)
    game.moves("aa", "jj", "ab")  # *Bob has made one move
    game.wait(AWAY_AFTER + CLAIM_AFTER + SWEEP_EVERY, "ala1")
    assert game.lines()[-1] == (
        "claimable2",
        "*Bob has not come back: *Ala may call the game off (too few moves to win it).",
    )

    reply = game.poll("ala1", f"u.{game.uid}.claim")
    assert "..e.Fewer than 2 moves each: the game can be called off, not won." in reply
    assert game.room.game.result is None

    game.poll("ala1", f"u.{game.uid}.abort")

    assert str(game.room.game.result) == "Void"
    assert game.lines()[-3:] == [
        ("Void", "The game was called off: a player left it."),
        ("l1", "Game saved as number 1."),
        ("unratedCancelled", "Not rated: the game was cancelled."),
    ]


def test_a_timed_game_can_be_claimed_too_and_the_clock_stops() -> None:
    game = Game(TIMED)
    game.moves("aa", "jj", "ab", "jh")
    game.wait(AWAY_AFTER + CLAIM_AFTER + SWEEP_EVERY, "ala1")

    game.hub.propose("ala1", str(game.uid), "claim")

    assert str(game.room.game.result) == "B+R"
    clock = game.room.clock
    assert clock is not None and clock.stopped


def test_claims_that_make_no_sense_are_refused() -> None:
    game = Game()
    game.moves("aa", "jj", "ab", "jh")
    game.hub.guest_login("cid1", "*Cid", "en")
    game.hub.change_table("cid1", game.uid)
    with pytest.raises(ProtocolError) as refused:
        game.hub.propose("ala1", str(game.uid), "claim")  # *Bob is here
    assert refused.value.code == "notAway"
    with pytest.raises(ProtocolError) as refused:
        game.hub.propose("cid1", str(game.uid), "claim")
    assert refused.value.code == "notPlayer"

    game.hub.propose("bob1", str(game.uid), "resign")
    with pytest.raises(ProtocolError) as refused:
        game.hub.propose("ala1", str(game.uid), "abort")
    assert refused.value.code == "gameOver"


def test_a_tournament_game_is_left_to_the_clock_and_the_organiser() -> None:
    timers = ManualTimers()
    hub = Hub(timers=timers, rng=random.Random(3), clock=lambda: 1_700_000_000.0)
    hub.guest_login("ala1", "*Ala", "en")
    uid = hub.set_up_table(TIMED, "*Ala", "*Bob", (0, 0), "Cup", "1", {})
    for _ in range(int((AWAY_AFTER + CLAIM_AFTER) / SWEEP_EVERY) + 1):
        timers.advance(SWEEP_EVERY)
        hub.receive("ala1", [])
        hub.sweep()
    table = hub.tables[uid]
    assert [e.nick_type for e in table.chat.entries if not e.nick] == []  # a no-show, not someone who left

    hub.guest_login("bob1", "*Bob", "en")
    hub.move("ala1", str(uid), "aa")
    hub.move("bob1", str(uid), "jj")
    hub.logout("bob1")
    for _ in range(int((AWAY_AFTER + CLAIM_AFTER) / SWEEP_EVERY) + 1):
        timers.advance(SWEEP_EVERY)
        hub.receive("ala1", [])
        hub.sweep()
    lines = [(e.nick_type, e.text) for e in table.chat.entries if not e.nick]
    assert lines == [
        ("awayClock2", "*Bob has left the game; in a tournament game the clock and the organiser decide.")
    ]
    with pytest.raises(ProtocolError) as refused:
        hub.propose("ala1", str(uid), "claim")
    assert refused.value.code == "claimInTournament"


def test_a_team_game_is_not_claimed() -> None:
    timers = ManualTimers()
    hub = Hub(timers=timers, rng=random.Random(3), clock=lambda: 1_700_000_000.0)
    for secret, nick in (("ala1", "*Ala"), ("bob1", "*Bob"), ("cid1", "*Cid"), ("dan1", "*Dan")):
        hub.guest_login(secret, nick, "en")
    uid = hub.set_up_table(UNTIMED, "*Ala", "*Bob", (0,) * 4, None, None, {}, more=["*Cid", "*Dan"])
    with pytest.raises(ProtocolError) as refused:
        hub.propose("ala1", str(uid), "claim")
    assert refused.value.code == "badProposal"
    assert str(refused.value) == "Only a game between two people can be claimed."  # a claim, known


def test_a_claimed_game_comes_back_over_after_a_restart() -> None:
    journal = RecordingPersistence()
    game = Game(persistence=journal)
    game.moves("aa", "jj", "ab", "jh")
    game.wait(AWAY_AFTER + CLAIM_AFTER + SWEEP_EVERY, "ala1")
    game.hub.propose("ala1", str(game.uid), "claim")

    after = Hub(timers=game.timers, persistence=journal)
    after.restore(journal.entries, next_uid=game.uid + 1)

    room = after.tables[game.uid].room
    assert room is not None and str(room.game.result) == "B+R"
    assert room.archive_number == 1
