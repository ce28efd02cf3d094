"""The stream's k with real storage: it counts a poll's commands as processed once their own writes are
stored, whatever other players' writes are still on their way."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from server.engine.gametype import parse_game_type
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.model import Origin
from server.hub.stream import Poll
from server.protocol.codec import ProtocolError, parse_commands
from server.store.idhash import MIN_COST
from server.store.store import Store
from tests.conftest import NewDatabase


def k_of(reply: str) -> int:
    head = re.match(r"ok/m\d+\.\d+\.(\d+)/", reply)
    assert head is not None, reply
    return int(head.group(1))


@asynccontextmanager
async def stored(tmp_path: Path, new_database: NewDatabase, *guests: str) -> AsyncIterator[tuple[Hub, Store]]:
    """A hub on a real store, with these guests logged in (`secret` and nick `*Secret`) and stored."""
    store = await Store.open(new_database(tmp_path, True), id_hash_cost=MIN_COST)
    hub = Hub()
    hub.persistence = store.writer
    try:
        await store.writer.load_sessions()
        for secret in guests:
            hub.guest_login(secret, f"*{secret[:3].title()}", "en", Origin("127.0.0.1", False))
        await hub.settled(0)
        yield hub, store
    finally:
        await store.close()


async def test_k_counts_a_polls_commands_once_their_writes_are_stored_not_everybody_elses(
    tmp_path: Path, new_database: NewDatabase
) -> None:
    async with stored(tmp_path, new_database, "ala123", "bob456") as (hub, store):
        before = hub.writes()
        hub.receive("ala123", parse_commands("c1.0.hello"))
        assert await hub.settled(before)  # Ala's poll waits for its own writes, as /a.kropki does
        hub.chat_from("bob456", "0", "and Bob says something meanwhile")  # queued, not yet written
        assert store.writer.written < store.writer.queued
        assert k_of(hub.reply("ala123", 0, with_subscriptions=False)) == 1


async def test_one_call_answers_a_poll_with_its_commands_done_and_stored(
    tmp_path: Path, new_database: NewDatabase
) -> None:
    """Hub.poll: the web layer hands the hub the parsed poll and writes what it returns."""
    async with stored(tmp_path, new_database, "ala123") as (hub, store):
        reply = await hub.poll(Poll("ala123", parse_commands("c1.0.hello"), 0, with_subscriptions=False))

        assert k_of(reply) == 1 and "hello" in reply
        assert store.writer.written == store.writer.queued  # k says done only once it is stored


async def test_a_poll_refused_a_whole_state_changes_nothing_and_a_quiet_one_is_not_asked() -> None:
    """The web layer's limit on whole states is asked by the hub, before the commands, and only for a
    poll that would get one."""
    hub = Hub()
    hub.guest_login("ala123", "*Ala", "en", Origin("127.0.0.1", False))
    asked: list[int] = []

    def refuse() -> bool:
        asked.append(1)
        return False

    with pytest.raises(ProtocolError, match="tooFast"):
        await hub.poll(Poll("ala123", parse_commands("c1.0.hello"), 0, False), may_send_whole_state=refuse)
    assert asked == [1] and hub.players["ala123"].last_command == 0

    whole = await hub.poll(Poll("ala123", [], 0, False))  # no limit: the whole state
    last = int(re.match(r"ok/m\d+\.(\d+)\.", whole).group(1))  # type: ignore[union-attr]
    quiet = Poll("ala123", parse_commands("c1.0.hello"), last, False)
    reply = await hub.poll(quiet, may_send_whole_state=refuse)
    assert asked == [1] and k_of(reply) == 1 and "hello" in reply


def test_a_quiet_poll_says_exactly_what_the_full_reply_says() -> None:
    """The shortcut for polls with nothing new must give the very text the full reply builds, for
    players at game tables, spectators, players with invitations pending, getMsg and getBMsg."""
    hub = Hub(timers=ManualTimers(), clock=lambda: 1_700_000_000.0)
    secrets = [f"quiet{n}" for n in range(6)]
    for n, secret in enumerate(secrets):
        hub.guest_login(secret, f"*Q{n}", "en")
    uid = hub.open_table(parse_game_type("0808stanF0.0.0"), "*Q0", "*Q1").uid
    hub.receive(secrets[2], parse_commands(f"b1.{uid}."))  # a spectator
    hub.receive(secrets[3], parse_commands("v1.0.s.*Q4.0808stanF0.0.0"))  # an invitation pending
    hub.receive(secrets[0], parse_commands(f"s1.{uid}.dd"))
    quiet = 0
    for with_subscriptions in (False, True):
        for secret in secrets:
            seen = k_head(hub.reply(secret, 0, with_subscriptions=with_subscriptions))
            player = hub.players[secret]
            if hub.stream.has_news(player, seen) or player.new_game_at:
                continue
            quiet += 1
            expected = hub.stream.full_reply(player, seen, with_subscriptions, True)
            assert hub.stream.quiet_reply(player, seen) == expected
            assert hub.reply(secret, seen, with_subscriptions=with_subscriptions) == expected
    assert quiet == 12


def k_head(reply: str) -> int:
    head = re.match(r"ok/m\d+\.(\d+)\.", reply)
    assert head is not None, reply
    return int(head.group(1))
