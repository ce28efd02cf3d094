"""A member process killed with SIGKILL in the middle of a game, with real processes: two members
started as `kropki-server serve` on a real PostgreSQL and Redis, behind a real nginx with the shipped
cluster site, players parsing replies as MultiPoints does (tests/web/zagram.py). The game's member dies;
its players reach the other member through nginx with the same ids, its table is taken over from the
store with every acknowledged move, and the game goes on."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import ClientSession
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from server.config import ENV_CLUSTER_SECRET, Settings
from tests.cluster.conftest import CLUSTER_SECRET, Nginx, RedisServer, _free_port
from tests.cluster.test_invitations import invitation_lines
from tests.cluster.test_tables import at_table, colours, has
from tests.web.zagram import Zagram

STARTED_WITHIN = 30.0
TAKEN_OVER_WITHIN = 40.0  # the announcement's ttl (10 s), a heartbeat, the take-over, with room


class MemberProcess:
    def __init__(self, settings: Settings, redis: RedisServer, name: str, folder: Path) -> None:
        self.name, self.port = name, _free_port()
        command = [sys.executable, "-m", "server", "serve", "--db", settings.db_url]
        command += ["--redis-url", redis.url, "--member", name, "--port", str(self.port)]
        command += ["--unlimited", "127.0.0.1", "--ai-workers", "0", "--event-loop", "asyncio"]
        env = {key: value for key, value in os.environ.items() if not key.startswith("KROPKI_")}
        env[ENV_CLUSTER_SECRET] = CLUSTER_SECRET
        self.log = folder / f"{name}.log"
        with self.log.open("wb") as output:
            self.process = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + STARTED_WITHIN
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/readyz", timeout=1)
                return
            except OSError:
                assert self.process.poll() is None and time.monotonic() < deadline, self.output()
                time.sleep(0.2)

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture
def member_processes(tmp_path: Path) -> Iterator[list[MemberProcess]]:
    started: list[MemberProcess] = []
    try:
        yield started
    finally:
        for process in started:
            process.stop()


async def owner_of(settings: Settings, uid: int) -> str:
    engine = create_async_engine(settings.db_url)
    try:
        async with engine.connect() as connection:
            query = "SELECT m.name FROM tables t JOIN members m ON m.id = t.owner WHERE t.uid = :uid"
            return (await connection.execute(text(query), {"uid": uid})).scalar_one()
    finally:
        await engine.dispose()


async def test_a_member_killed_in_the_middle_of_a_game(
    postgres: Settings,
    redis_server: RedisServer,
    nginx: Nginx,
    member_processes: list[MemberProcess],
    tmp_path: Path,
) -> None:
    for name in ("kropki-a", "kropki-b"):
        member_processes.append(MemberProcess(postgres, redis_server, name, tmp_path))
    nginx.members([member.port for member in member_processes])
    async with ClientSession(base_url=nginx.url) as web:
        ala, bob = Zagram(web, "alaAla11", "*Ala"), Zagram(web, "bobBob22", "*Bob")  # type: ignore[arg-type]
        for player in (ala, bob):
            assert await player.login() == ""
            await player.poll(b=True, msg_no="0.0")
        for _ in range(100):  # wait until each member hears of the other's player
            ala.send("v", 0, "s.*Bob.0808stanF0.60.5")
            await ala.poll(b=True)
            if any(line.startswith("vs*Bob.") for line in await invitation_lines(ala, lambda lines: True)):
                break
            await asyncio.sleep(0.1)
        await invitation_lines(bob, lambda lines: any(line.startswith("vg*Ala.") for line in lines))
        bob.send("v", 0, "a")
        uid = 0
        while not uid:
            uid = next((table for table in (await bob.poll(b=True)).sections if table), 0)
        state = await at_table(ala, uid, has("pr"))
        blue, red = colours(state, uid, ala, bob)
        for player, where in [(blue, "aa"), (red, "hh"), (blue, "ab")]:
            player.send("s", uid, where)
            reply = await player.poll(b=True)
            while reply.processed < len(player.commands):  # acknowledged: stored by the table's member
                reply = await player.poll(b=True)
            await at_table(red if player is blue else blue, uid, has(where))

        owner = await owner_of(postgres, uid)
        victim = next(member for member in member_processes if member.name == owner)
        victim.kill()

        for player in (blue, red):  # through nginx, with the same ids: back at the game, every move there
            state = await at_table(
                player, uid, lambda lines: any(line.startswith("pr") for line in lines), TAKEN_OVER_WITHIN
            )
            assert all(any(where in line for line in state) for where in ("aa", "hh", "ab")), state
        assert await owner_of(postgres, uid) != owner
        red.send("s", uid, "hg")
        await red.poll(b=True)
        await at_table(blue, uid, has("hg"))
