"""Sessions outlive a restart: a client that polls on with its old id and message number carries on with
the same nick, seats, flags and command count, and a session still ends at logout and at its time-out,
counted from its last poll before the stop plus the downtime."""

from __future__ import annotations

import asyncio
import dataclasses
import random

import pytest

from server.engine.gametype import parse_game_type
from server.hub import hub as hub_module
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.limits import CHAT_LINES_PER_MINUTE, Caps
from server.hub.mailbox import RESERVE_AHEAD
from server.hub.model import Origin
from server.hub.persistence import Account, LiveSessions, SavedSession
from server.hub.saved import SESSION_JOURNAL, SWEEP_EVERY
from server.hub.sessions import POLL_TIMEOUT
from server.hub.stream import Poll
from server.protocol.codec import ProtocolError, parse_commands
from tests.hub.test_restore import RecordingPersistence
from tests.web.zagram import Reply, parse_reply

START = 1_700_000_000.0


class Clock:
    """The wall clock, with the hub's monotonic timers moving along with it (as they do unless the wall
    clock is stepped: `step` moves the wall clock alone)."""

    def __init__(self) -> None:
        self.timers = ManualTimers()
        self._now = START

    def __call__(self) -> float:
        return self._now

    @property
    def now(self) -> float:
        return self._now

    @now.setter
    def now(self, value: float) -> None:
        self.timers.advance(value - self._now)
        self._now = value

    def step(self, seconds: float) -> None:
        self._now += seconds


class StoreLike(RecordingPersistence):
    """Keeps sessions, the heartbeat and the event mark as the store's tables do (quiet_since changes
    only with the heartbeat), and gives them back as the store does at start-up."""

    def __init__(self) -> None:
        super().__init__()
        self.sessions: dict[str, SavedSession] = {}
        self.event_mark = 0
        self.alive_at: float | None = None

    def session_saved(self, session: SavedSession) -> None:
        old = self.sessions.get(session.id_hmac)
        quiet = old.quiet_since if old is not None else None
        self.sessions[session.id_hmac] = dataclasses.replace(session, quiet_since=quiet)

    def session_ended(self, id_hmac: str) -> None:
        self.sessions.pop(id_hmac, None)

    def sessions_seen(
        self, alive_at: float, quiet: dict[str, float | None], k: dict[str, int] | None = None
    ) -> None:
        self.alive_at = alive_at
        for key, since in quiet.items():
            if key in self.sessions:
                self.sessions[key] = dataclasses.replace(self.sessions[key], quiet_since=since)
        for key, last_command in (k or {}).items():
            if key in self.sessions:
                self.sessions[key] = dataclasses.replace(self.sessions[key], last_command=last_command)

    def events_reserved(self, mark: int) -> None:
        self.event_mark = mark

    def live(self, accounts: dict[str, Account] | None = None) -> LiveSessions:
        return LiveSessions(list(self.sessions.values()), accounts or {}, self.event_mark, self.alive_at)


def started(store: StoreLike, clock: Clock, timers: ManualTimers, **accounts: Account) -> Hub:
    """A server run on the store: what an earlier run left is restored, as at start-up."""
    hub = Hub(clock=clock, timers=timers, persistence=store, rng=random.Random(1))
    journals = {uid: list(entries) for uid, entries in store.entries.items()}
    hub.restore(journals, max(journals, default=0) + 1, store.live(accounts))
    return hub


def poll(hub: Hub, secret: str, seen: int, commands: str = "x") -> Reply:
    """A poll as the web layer makes it: the commands, then the reply."""
    hub.receive(secret, parse_commands(commands))
    return parse_reply(hub.reply(secret, seen, with_subscriptions=False))


def game(hub: Hub) -> int:
    hub.guest_login("ala123", "*Ala", "en")
    hub.guest_login("bob456", "*Bob", "en")
    uid = hub.open_table(parse_game_type("0808stanF0.0.0"), "*Ala", "*Bob").uid
    hub.move("ala123", str(uid), "aa")
    return uid


def test_a_client_polls_on_with_its_old_id_and_msg_no_after_a_crash() -> None:
    store, clock = StoreLike(), Clock()
    timers = clock.timers
    before = started(store, clock, timers)
    uid = game(before)
    before.guest_login("eve789", "*Eve", "en")
    before.tables.subscribe(before.players["eve789"], uid)  # Eve follows the game
    before.change_lang("eve789", "pl")
    poll(before, "eve789", 0, "i0nJb")  # busy, with the Java client
    ala_seen = poll(before, "ala123", 0, f"c1.{uid}.hello/c2.0.hi all").last
    eve_seen = poll(before, "eve789", 0).last
    numbers_handed_out = before.counter.last
    clock.now += 300  # a crash: nothing more is written; the server is down for 5 minutes

    after = started(store, clock, timers)

    assert after.counter.last > numbers_handed_out
    reply = poll(after, "ala123", ala_seen)
    assert (reply.status, reply.processed) == ("ok", 2), "the same session, with its k"
    assert reply.last > ala_seen
    assert reply.lines(0, "pr") == ["pr*Ala.*Bob.*Eve"] and reply.lines(0, f"d{uid}.")
    assert reply.lines(uid, "sr") == ["sr(;B[aa])"] and reply.lines(uid, "f") == ["f2_"]
    # she had "hello" before the crash: the whole state does not show it again (MultiPoints would)
    assert [line.rsplit(".", 1)[1] for line in reply.lines(uid, "cr")] == []
    bob = poll(after, "bob456", 0)  # never polled before the crash: the table's history is new to him
    assert [line.rsplit(".", 1)[1] for line in bob.lines(uid, "cr")] == ["hello"]
    eve = poll(after, "eve789", eve_seen)
    assert eve.status == "ok" and eve.lines(uid, "sr") == ["sr(;B[aa])"], "Eve still follows the game"
    assert "i*Eve..NJ.pl" in eve.lines(0, "i"), "her language and flags are kept"

    after.move("bob456", str(uid), "hh")  # the next move, with the old id
    later = poll(after, "ala123", reply.last)
    assert later.status == "ok" and later.lines(uid, "sa") == ["sa;W[hh]"], later
    assert poll(after, "ala123", later.last).lines(uid) == [], "and the stream goes on from there"


def test_a_command_resent_after_the_restart_is_not_applied_twice() -> None:
    store, clock = StoreLike(), Clock()
    timers = clock.timers
    before = started(store, clock, timers)
    uid = game(before)
    poll(before, "ala123", 0, f"c1.{uid}.once")  # taken; the client never saw the reply's k = 1

    after = started(store, clock, timers)
    reply = poll(after, "ala123", 0, f"c1.{uid}.once/c2.{uid}.twice")  # it sends everything above its k

    assert reply.processed == 2
    assert [line.rsplit(".", 1)[1] for line in reply.lines(uid, "cr")] == ["once", "twice"]


def test_k_goes_to_the_sessions_journal_and_the_heartbeat_moves_it_into_the_row() -> None:
    """A poll with commands appends its k to the sessions' journal instead of rewriting the session's
    row (which put 40 ms on the p99 of benchmarks/stream.py); a crash before the next heartbeat still
    brings k back, and the heartbeat puts k in the row and empties that journal."""
    store, clock = StoreLike(), Clock()
    timers = clock.timers
    before = started(store, clock, timers)
    before.guest_login("ala123", "*Ala", "en")
    (key,) = store.sessions
    poll(before, "ala123", 0, "c1.0.one/c2.0.two")
    assert store.sessions[key].last_command == 0 and store.entries[SESSION_JOURNAL][-1][2] == {
        "s": key,
        "k": 2,
    }
    after = started(store, clock, timers)  # a crash before any heartbeat
    assert poll(after, "ala123", 0, "c2.0.two/c3.0.three").processed == 3
    after.note_sessions()
    assert store.sessions[key].last_command == 3 and SESSION_JOURNAL not in store.entries
    again = started(store, clock, timers)
    assert poll(again, "ala123", 0, "c3.0.three").processed == 3


def test_a_resent_move_stays_one_move() -> None:
    store, clock = StoreLike(), Clock()
    timers = clock.timers
    before = started(store, clock, timers)
    uid = game(before)
    poll(before, "bob456", 0, f"s1.{uid}.hh")

    after = started(store, clock, timers)
    reply = poll(after, "bob456", 0, f"s1.{uid}.hh/s2.{uid}.gg")  # red again: refused as out of turn

    assert reply.lines(uid, "sr") == ["sr(;B[aa];W[hh])"]
    assert [line.split(".", 3)[2:] for line in reply.lines(uid, "ca")] == [
        ["e", "Move gg refused: it is not your move."]
    ], "the move resent is not played again, so red is not on move"


def test_the_time_out_counts_from_the_last_poll_before_the_crash_plus_the_downtime() -> None:
    store, clock = StoreLike(), Clock()
    timers = clock.timers
    before = started(store, clock, timers)
    before.guest_login("ala123", "*Ala", "en")
    before.guest_login("bob456", "*Bob", "en")
    before.guest_login("cyd000", "*Cyd", "en")
    for _ in range(10):  # Bob polls every 5 s; Ala stops at once, Cyd after 10 s
        clock.now += SWEEP_EVERY
        poll(before, "bob456", 0)
        if clock.now - START <= 10:
            poll(before, "cyd000", 0)
        before.sweep()
    clock.now += 2  # the crash: Ala polled 52 s ago, Cyd 42 s ago, Bob 2 s ago
    clock.now += 1000  # down for 1000 s

    after = started(store, clock, timers)
    assert set(after.by_nick) == {"*ala", "*bob", "*cyd"}
    clock.now += POLL_TIMEOUT - 50 - 1
    after.sweep()
    assert set(after.by_nick) == {"*ala", "*bob", "*cyd"}
    clock.now += 2  # Ala's 60 s are over (counting from the last heartbeat, 2 s before the crash)
    after.sweep()
    assert set(after.by_nick) == {"*bob", "*cyd"}
    assert {s.nick for s in store.sessions.values()} == {"*Bob", "*Cyd"}, "her row is deleted"
    assert parse_reply(after.reply("ala123", 0, with_subscriptions=False)).status == "sd"
    clock.now += 10
    after.sweep()
    assert set(after.by_nick) == {"*bob"}
    assert poll(after, "bob456", 0).status == "ok", "Bob's session had its whole minute"


def test_a_session_never_outlives_its_time_out_across_several_restarts() -> None:
    store, clock = StoreLike(), Clock()
    timers = clock.timers
    before = started(store, clock, timers)
    before.guest_login("ala123", "*Ala", "en")
    clock.now += 30
    before.sweep()  # Ala has been quiet for 30 s
    clock.now += 1  # crash

    for _ in range(3):  # three more crashes, each 20 s after a start and after a long downtime
        clock.now += 500
        hub = started(store, clock, timers)
        assert "*ala" in hub.by_nick
        clock.now += SWEEP_EVERY
        hub.sweep()
        clock.now += 20 - SWEEP_EVERY
        hub.sweep()
        clock.now += 1
        if "*ala" not in hub.by_nick:
            break
    assert "*ala" not in hub.by_nick and not store.sessions
    clock.now += 500
    assert "*ala" not in started(store, clock, timers).by_nick


def test_a_session_quiet_too_long_at_the_stop_does_not_come_back() -> None:
    store, clock = StoreLike(), Clock()
    timers = clock.timers
    before = started(store, clock, timers)
    before.guest_login("ala123", "*Ala", "en")
    clock.now += POLL_TIMEOUT + 1
    before.note_sessions()  # a clean stop before the sweep came round to her

    after = started(store, clock, timers)

    assert "*ala" not in after.by_nick and not store.sessions
    after.guest_login("new999", "*Ala", "en")  # the nick is free


def test_logout_ends_the_session_for_good() -> None:
    store, clock = StoreLike(), Clock()
    timers = clock.timers
    before = started(store, clock, timers)
    uid = game(before)
    before.logout("ala123")
    assert [s.nick for s in store.sessions.values()] == ["*Bob"]

    after = started(store, clock, timers)

    assert parse_reply(after.reply("ala123", 0, with_subscriptions=False)).status == "sd"
    assert "*Ala" not in after.tables[uid].people
    assert poll(after, "bob456", 0).status == "ok"


def test_a_restored_session_keeps_its_nick_from_others_and_can_log_in_again() -> None:
    store, clock = StoreLike(), Clock()
    timers = clock.timers
    before = started(store, clock, timers)
    uid = game(before)
    poll(before, "ala123", 0, "c1.0.hi/c2.0.hello")

    after = started(store, clock, timers)
    try:
        after.guest_login("other1", "*Ala", "en")
        raise AssertionError("another id took a nick whose session lives")
    except Exception as refused:
        assert getattr(refused, "code", None) == "nickInUse"
    after.guest_login("ala123", "*Ala", "en")  # a reloaded client: the same session, counting from 1 again

    reply = poll(after, "ala123", 0)
    assert reply.processed == 0 and reply.lines(uid, "sr") == ["sr(;B[aa])"]
    again = started(store, clock, timers)
    again.resume("bob456", "*Bob")  # an auto-login link takes over a restored session too
    assert poll(again, "bob456", 0).lines(uid, "sr") == ["sr(;B[aa])"]


def test_a_registered_session_comes_back_with_its_account_as_it_is_now() -> None:
    store, clock = StoreLike(), Clock()
    timers = clock.timers
    before = started(store, clock, timers)
    before.login("LongSecretId1", Account("Alice", 1500, 0, 0, 0))
    before.login("LongSecretId2", Account("Carol", 1500, 0, 0, 0))

    # an admin made Alice a moderator while the server was down, and deleted Carol's account
    after = started(store, clock, timers, alice=Account("Alice", 1612, 3, 0, 1, role="moderator"))

    reply = poll(after, "LongSecretId1", 0)
    assert reply.status == "ok" and "iAlice..F.en.1612.3.0.1.P2x1c3" in reply.lines(0, "i")  # a moderator now
    alice = after.players["LongSecretId1"]
    assert alice.moderator and not alice.guest
    assert "carol" not in after.by_nick and [s.nick for s in store.sessions.values()] == ["Alice"]


def test_event_numbers_go_on_above_every_number_the_earlier_run_handed_out() -> None:
    store, clock = StoreLike(), Clock()
    timers = clock.timers
    before = started(store, clock, timers)
    before.guest_login("ala123", "*Ala", "en")
    for n in range(RESERVE_AHEAD // 2 + 10):  # past the first reservation: a second one is written
        before.bus.publish(0, f"x{n}")
    assert store.event_mark > before.counter.last

    after = started(store, clock, timers)

    assert after.counter.last >= store.event_mark - RESERVE_AHEAD > before.counter.last - RESERVE_AHEAD
    assert after.counter.last > before.counter.last


def test_an_anonymous_reader_hears_a_new_lobby_line_as_new_on_a_quiet_server() -> None:
    """roboCup's reader polls with an id that never logged in and sends back the j of the last reply;
    it reads only `ca` lines. A j of 0 on a server with no event yet made it ask for everything again,
    and the first chat line came as a history `cr` line, which it does not read."""
    store, clock = StoreLike(), Clock()
    timers = clock.timers
    hub = started(store, clock, timers)
    first = parse_reply(hub.reply("1234567", 0, with_subscriptions=False))
    assert first.status == "sd" and first.last > 0

    hub.guest_login("ala123", "*Ala", "en")
    hub.chat_from("ala123", "0", "!register")
    reply = parse_reply(hub.reply("1234567", first.last, with_subscriptions=False))

    assert [line.rsplit(".", 1)[1] for line in reply.lines(0, "ca")] == ["!register"]


def test_an_anonymous_reader_after_a_restart_gets_the_lobby_then_goes_on() -> None:
    store, clock = StoreLike(), Clock()
    timers = clock.timers
    before = started(store, clock, timers)
    uid = game(before)
    before.propose("bob456", str(uid), "resign")
    seen = parse_reply(before.reply("1234567", 0, with_subscriptions=False)).last
    before.chat_from("ala123", "0", "said while the reader was away")

    after = started(store, clock, timers)
    whole = parse_reply(after.reply("1234567", seen, with_subscriptions=False))
    assert whole.lines(0, "x") == [f"x{uid}.2.B+R.1"], "the whole lobby, not only what followed the start"
    assert [line.rsplit(".", 1)[1] for line in whole.lines(0, "cr")] == ["said while the reader was away"]
    after.chat_from("bob456", "0", "gg")
    news = parse_reply(after.reply("1234567", whole.last, with_subscriptions=False))
    assert [line.rsplit(".", 1)[1] for line in news.lines(0, "ca")] == ["gg"]


def test_a_step_of_the_wall_clock_times_nobody_out_and_keeps_the_limits() -> None:
    store, clock = StoreLike(), Clock()
    hub = started(store, clock, clock.timers)
    hub.guest_login("ala123", "*Ala", "en")
    hub.guest_login("bob456", "*Bob", "en")
    hub.chat_from("bob456", "_*Ala", "go on")  # a conversation: only her own chat limit holds her
    for n in range(CHAT_LINES_PER_MINUTE):
        hub.chat_from("ala123", "_*Bob", f"note {n}")
    clock.step(3600)  # the wall clock jumps an hour ahead (an NTP step, a VM resumed)
    hub.sweep()
    assert "*ala" in hub.by_nick  # she polled a moment ago
    with pytest.raises(ProtocolError) as refused:
        hub.chat_from("ala123", "_*Bob", "one more")  # her minute of chat is not over either
    assert refused.value.code == "chatFlood"
    clock.step(-7200)  # and back, behind where it was
    clock.now += POLL_TIMEOUT + 1
    hub.sweep()
    assert "*ala" not in hub.by_nick  # a minute without a poll still ends the session


def test_the_sweep_times_out_and_notes_as_quiet_exactly_the_players_who_stopped_polling() -> None:
    """The sweep reads the players in the order of their last request (issue 19: not every player at
    every sweep), so a player who polls moves behind those who stopped, whatever the order they came in."""
    store, clock = StoreLike(), Clock()
    timers = clock.timers
    hub = started(store, clock, timers)
    for secret, nick in (("ala123", "*Ala"), ("bob456", "*Bob"), ("cyd000", "*Cyd"), ("dan111", "*Dan")):
        hub.guest_login(secret, nick, "en")
    keys = {nick: key for key, saved in store.sessions.items() for nick in [saved.nick]}
    for step in range(12):  # 60 s: Bob polls all along, Dan for the first 20 s, Ala and Cyd never
        clock.now += SWEEP_EVERY
        poll(hub, "bob456", 0)
        if step < 4:
            poll(hub, "dan111", 0)
        hub.sweep()
        if step == 1:  # 10 s in: Ala and Cyd are noted quiet since their login, Bob and Dan are not
            quiet = {nick: store.sessions[key].quiet_since for nick, key in keys.items()}
            assert quiet == {"*Ala": START, "*Bob": None, "*Cyd": START, "*Dan": None}
    assert store.sessions[keys["*Dan"]].quiet_since == START + 20
    clock.now += 1
    hub.sweep()
    assert set(hub.by_nick) == {"*bob", "*dan"}, "a minute without a poll: Ala and Cyd are out"
    poll(hub, "dan111", 0)  # Dan is back before his minute is over: no longer quiet
    clock.now += 2
    hub.sweep()
    assert (
        store.sessions[keys["*Dan"]].quiet_since is None and store.sessions[keys["*Bob"]].quiet_since is None
    )
    clock.now += POLL_TIMEOUT
    poll(hub, "bob456", 0)
    hub.sweep()
    assert set(hub.by_nick) == {"*bob"}


async def test_a_waiting_poll_is_out_of_the_sweeps_walk_and_its_player_seen_when_it_ends() -> None:
    """A poll that waits for news (a long poll, a push connection's) is a player present all along: out
    of the quiet order whose front each sweep walks (10,000 push connections, each seen every 20 s or
    so, made the heartbeat's walk 20-28 ms of a loaded loop), and seen when it ends, not when it began."""
    store, clock = StoreLike(), Clock()
    hub = started(store, clock, clock.timers)
    for secret, nick in (("ala123", "*Ala"), ("bob456", "*Bob"), ("cyd000", "*Cyd")):
        hub.guest_login(secret, nick, "en")
    ala, bob, cyd = (hub.roster.players[secret] for secret in ("ala123", "bob456", "cyd000"))
    seen = poll(hub, "ala123", 0).last
    waiting = asyncio.create_task(hub.poll(Poll("ala123", [], seen, False, wait=30.0)))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    clock.now += 10
    assert hub.roster.quiet_for(clock.timers.now(), SWEEP_EVERY) == [bob, cyd]
    hub.chat_from("cyd000", "_*Ala", "are you there?")  # news for Ala: her poll ends
    await asyncio.wait_for(waiting, 5)
    assert ala.last_seen == clock.timers.now()
    clock.now += POLL_TIMEOUT - 1  # a minute from Bob's login and Ala's poll's start, not from its end
    hub.sweep()
    assert set(hub.by_nick) == {"*ala", "*cyd"}


async def test_the_sweep_lets_the_loop_serve_between_its_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each part of the sweep in a turn of the loop of its own: all in one turn stopped a loaded loop
    for 45 ms every 5 s (2,000 games beside 10,000 push players), moves waiting behind it."""
    monkeypatch.setattr(hub_module, "SWEEP_EVERY", 0.01)
    hub = Hub(timers=ManualTimers(), rng=random.Random(1))
    turns: list[str] = []
    first = [[lambda n=n: turns.append(f"part {n}") for n in range(3)]]  # the sweeps after it: nothing
    monkeypatch.setattr(hub, "sweep_parts", lambda: first.pop() if first else [])
    loop = asyncio.get_running_loop()

    def tick() -> None:
        turns.append("tick")
        if turns.count("part 2") == 0:
            loop.call_soon(tick)

    tick()  # turning before the first sweep is due, however late this task runs on a loaded host
    hub.start()
    try:
        while "part 2" not in turns:
            await asyncio.sleep(0.005)
    finally:
        hub.close()
    parts = [turn for turn in turns if turn != "tick"]
    assert parts == ["part 0", "part 1", "part 2"]
    between = "".join("|" if turn == "tick" else "p" for turn in turns[turns.index("part 0") :])
    assert "pp" not in between, turns


def test_a_guest_coming_back_is_refused_as_any_login_and_then_nothing_changes() -> None:
    """Issue 43.5: the old session ends for the new one only once the new one may log in; the per-address
    count leaves the old session out when both come from the same address (it makes room)."""
    hub = Hub(timers=ManualTimers(), caps=Caps(players=100, players_per_address=2, network_factor=10))
    home, next_door = (
        Origin("203.0.113.7", False, "203.0.113.0/24"),
        Origin("203.0.113.8", False, "203.0.113.0/24"),
    )
    hub.guest_login("old1", "*Ala", "en", home)
    hub.guest_login("fill1", "*Fill", "en", next_door)
    hub.guest_login("fill2", "*Fill2", "en", next_door)
    with pytest.raises(ProtocolError, match="2 players are logged in from your address"):
        hub.guest_login("new1", "*Ala", "en", next_door)  # the same network, but a full address
    assert "old1" in hub.players and "new1" not in hub.players  # her session goes on
    hub.guest_login("fill3", "*Fill3", "en", home)  # her own address full: two sessions, hers one
    hub.players["old1"].blocked.add("*eve")  # as `zaproszenieBlokuj` and `c ignore` leave them
    hub.players["old1"].ignored["*bob"] = "*Bob"
    hub.guest_login("new2", "*Ala", "en", home)
    assert "old1" not in hub.players and hub.players["new2"].nick == "*Ala"
    assert hub.players["new2"].blocked == {"*eve"} and hub.players["new2"].ignored == {"*bob": "*Bob"}


def test_a_login_again_starts_k_from_0_and_a_crash_does_not_bring_the_old_k_back() -> None:
    """issue 44: a client logged in again under its id (after an `sd`, or a reloaded page) numbers its
    commands from 1. Its k was reset in the session's row, but the sessions' journal still said the old
    k, and the restart took it: the new login's commands 1..17 were "done" and dropped."""
    store, clock = StoreLike(), Clock()
    timers = clock.timers
    before = started(store, clock, timers)
    before.guest_login("ala123", "*Ala", "en")
    poll(before, "ala123", 0, "/".join(f"c{n}.0.line{n}" for n in range(1, 18)))
    before.guest_login("ala123", "*Ala", "en")  # logs in again: its next command is number 1

    after = started(store, clock, timers)  # a crash before any heartbeat, before the client's next poll
    reply = poll(after, "ala123", 0, "c1.0.again/c2.0.next")
    assert reply.processed == 2, "k is the new login's, not the one before it"
    assert [line.rsplit(".", 1)[1] for line in reply.lines(0, "cr")][-2:] == ["again", "next"]
