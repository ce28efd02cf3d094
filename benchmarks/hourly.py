"""The hourly counts across a cluster's members (docs/cluster.md, "Hourly counts"): what a thing counted
costs in Redis's memory, what a check and a publish cost the member, how soon another member counts it,
and how long a member starting takes to read the hour.

In-process, on a redis-server of its own (keeping nothing on disk) and two links (server/cluster/hourly.py)
around the hub's real counts: --things games begun by guests of as many addresses (each counted under a
nick, an address and a network: the most a thing is kept under), then --latencies games begun one at a
time, each waited for at the other member.

    .venv/bin/python benchmarks/hourly.py --things 100000
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from redis import Redis
from redis.exceptions import RedisError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.cluster.hourly import KEY_PREFIX, HourlyLink  # noqa: E402
from server.hub.hourly import GAMES_BEGUN, Hourly, Key  # noqa: E402
from server.hub.limits import GAMES_BEGUN_PER_ADDRESS, GAMES_BEGUN_PER_HOUR, NETWORK_FACTOR  # noqa: E402
from server.hub.mailbox import EventLog  # noqa: E402
from server.hub.model import Player  # noqa: E402

REDIS_SERVER = "/usr/bin/redis-server"
SECRET = "benchmark-cluster-secret-0123456789abcdef"
CHECKS = 100_000


class Watched:
    """A member's count of games begun, counting what it takes from the other member."""

    def __init__(self) -> None:
        self.hourly = Hourly(
            GAMES_BEGUN, GAMES_BEGUN_PER_HOUR, GAMES_BEGUN_PER_ADDRESS, NETWORK_FACTOR, time.monotonic
        )
        self.taken = 0

    @property
    def shared(self) -> Callable[[tuple[Key, ...]], None] | None:
        return self.hourly.shared

    @shared.setter
    def shared(self, listener: Callable[[tuple[Key, ...]], None] | None) -> None:
        self.hourly.shared = listener

    def take(self, keys: Iterable[Key], age: float) -> None:
        self.taken += 1
        self.hourly.take(keys, age)


def guest(n: int) -> Player:
    """A guest of an address and a network of its own: no check of the benchmark's is refused."""
    player = Player(secret=f"id{n}", nick=f"*Guest{n}", lang="en", inbox=EventLog(1))
    network = f"{10 + (n >> 16)}.{n >> 8 & 255}.{n & 255}"
    player.host, player.network = f"{network}.1", f"{network}.0/24"
    return player


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def taken(count: Watched, things: int) -> None:
    while count.taken < things:
        await asyncio.sleep(0.001)


async def measure(url: str, things: int, latencies: int) -> None:
    redis = Redis.from_url(url)
    a, b = Watched(), Watched()
    links = [HourlyLink(url, name, {"games": count}, [SECRET]) for name, count in (("a", a), ("b", b))]
    for link in links:
        await link.start()
    await asyncio.sleep(0.2)  # both subscribed
    used_before = int(redis.info("memory")["used_memory"])
    players = [guest(n) for n in range(things)]

    alone = Hourly(GAMES_BEGUN, GAMES_BEGUN_PER_HOUR, GAMES_BEGUN_PER_ADDRESS, NETWORK_FACTOR, time.monotonic)
    cpu = time.process_time()
    for player in players:
        alone.add((player,))
    alone_cpu = time.process_time() - cpu
    cpu, wall = time.process_time(), time.perf_counter()
    for player in players:
        a.hourly.add((player,))
    counted_cpu = time.process_time() - cpu
    await taken(b, things)
    all_in = time.perf_counter() - wall
    key = KEY_PREFIX + "games"
    kept = int(redis.zcard(key))
    per_thing = int(redis.memory_usage(key, samples=0) or 0) / kept
    used = (int(redis.info("memory")["used_memory"]) - used_before) / kept
    print(f"{things:,} games begun at member a, each by a guest of its own address ({kept:,} kept in Redis)")
    print(
        f"  Redis memory: {per_thing:.0f} bytes a thing (MEMORY USAGE of the set), {used:.0f} (used_memory)"
    )
    print(
        f"  counting a thing at a: {counted_cpu / things * 1e6:.1f} us CPU, handed on to the link included "
        f"(a server alone: {alone_cpu / things * 1e6:.1f} us)"
    )
    print(f"  all written, published and taken at b: {all_in:.2f} s ({things / all_in:,.0f} a second)")

    checks = players[:CHECKS]
    cpu = time.process_time()
    for player in checks:
        b.hourly.check_bound(player, "gameFlood")
    check = (time.process_time() - cpu) / len(checks)
    print(f"  a check at b (the hour holding {things:,} things): {check * 1e6:.2f} us")

    delays = []
    for n in range(latencies):
        start = time.perf_counter()
        a.hourly.add((guest(things + n),))
        await taken(b, things + n + 1)
        delays.append(time.perf_counter() - start)
    delays.sort()
    median, worst = statistics.median(delays), delays[int(len(delays) * 0.99) - 1]
    print(
        f"  one game begun at a, counted at b after: {median * 1e3:.2f} ms median, {worst * 1e3:.2f} ms p99"
    )

    for link in links:
        await link.stop()
    newcomer = Watched()
    link = HourlyLink(url, "c", {"games": newcomer}, [SECRET])
    wall = time.perf_counter()
    await link.start()
    read = time.perf_counter() - wall
    print(f"  a member starting reads the hour ({newcomer.taken:,} things) in {read:.2f} s")
    await link.stop()
    redis.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--things", type=int, default=100_000)
    parser.add_argument("--latencies", type=int, default=500)
    arguments = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        command = [
            REDIS_SERVER,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ]
        server = subprocess.Popen([*command, "--dir", folder], stdout=subprocess.DEVNULL)
        try:
            url = f"redis://127.0.0.1:{port}/0"
            deadline = time.monotonic() + 10
            while True:
                try:
                    Redis.from_url(url).ping()
                    break
                except RedisError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            asyncio.run(measure(url, arguments.things, arguments.latencies))
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
