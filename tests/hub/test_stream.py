"""The stream's k with real storage: it counts a poll's commands as processed once their own writes are
stored, whatever other players' writes are still on their way."""

from __future__ import annotations

import re
from pathlib import Path

from server.hub.hub import Hub
from server.hub.model import Origin
from server.protocol.codec import parse_commands
from server.store.store import Store
from tests.conftest import NewDatabase


def k_of(reply: str) -> int:
    head = re.match(r"ok/m\d+\.\d+\.(\d+)/", reply)
    assert head is not None, reply
    return int(head.group(1))


async def test_k_counts_a_polls_commands_once_their_writes_are_stored_not_everybody_elses(
    tmp_path: Path, new_database: NewDatabase
) -> None:
    store = await Store.open(new_database(tmp_path, True))
    hub = Hub()
    hub.persistence = store.writer
    try:
        await store.writer.load_sessions()
        for secret, nick in (("ala123", "*Ala"), ("bob456", "*Bob")):
            hub.guest_login(secret, nick, "en", Origin("127.0.0.1", False))
        await hub.settled(0)

        before = hub.writes()
        hub.receive("ala123", parse_commands("c1.0.hello"))
        assert await hub.settled(before)  # Ala's poll waits for its own writes, as /a.kropki does
        hub.chat_from("bob456", "0", "and Bob says something meanwhile")  # queued, not yet written
        assert store.writer.written < store.writer.queued
        assert k_of(hub.reply("ala123", 0, with_subscriptions=False)) == 1
    finally:
        await store.close()
