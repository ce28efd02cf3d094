"""Lobby news among long-polling readers: how many replies a burst of lobby events costs (issue 19).

Every reader in the lobby waits on it, so each lobby event (a login, a game starting or ending, a line
of lobby chat) used to answer every long-polling reader at once. The bus now wakes them at once for a
lone event and at most once per `LOBBY_WAKE_EVERY` seconds after it (server/hub/bus.py).

In-process, on the hub itself (no HTTP: the figures are the hub's and the event loop's share): --readers
guests each long-poll (`wait=25`, the built-in client's) and poll again as soon as answered, while lobby
chat lines come --rate a second for --seconds. Run twice, with every event waking everyone (the old way)
and with the bus's own setting. Target: at most one reply per reader per LOBBY_WAKE_EVERY (and a
second), whatever the rate of lobby events.

    .venv/bin/python benchmarks/lobby_news.py --readers 2000 --rate 10 --seconds 5
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.hub import bus  # noqa: E402
from server.hub.hub import Hub  # noqa: E402
from server.hub.limits import Caps  # noqa: E402

WAIT = 25.0  # the built-in client's long poll
SETTLE = 0.5  # seconds for every reader to be waiting before the events start
SPEAKERS = 100  # chat lines come from this many readers in turn (each may say 20 a minute)


async def lobby_news(every: float, readers: int, seconds: float, rate: float) -> tuple[int, int, float]:
    """(lobby chat lines said, replies, CPU seconds) with the lobby woken at most every `every` s."""
    bus.LOBBY_WAKE_EVERY = every
    room = 2 * readers + 10  # guests may fill only part of the server (Caps.registered_share)
    hub = Hub(caps=Caps(players=room, players_per_address=room))
    hub.start()
    secrets = [f"{n:07d}" for n in range(1, readers + 1)]
    for n, secret in enumerate(secrets):
        hub.guest_login(secret, f"*R{n}", "en")
    replies = 0

    def j(reply: str) -> int:
        """The reply's j (`ok/m<i>.<j>.<k>/...`): the msgNo of the reader's next poll."""
        return int(reply.split("/", 2)[1].split(".")[1])

    async def reader(secret: str) -> None:
        nonlocal replies
        seen = j(hub.reply(secret, 0, with_subscriptions=False))
        while True:
            await hub.wait_for_news(secret, seen, WAIT)
            seen = j(hub.reply(secret, seen, with_subscriptions=False))
            replies += 1

    tasks = [asyncio.create_task(reader(secret)) for secret in secrets]
    await asyncio.sleep(SETTLE)
    replies, said = 0, 0
    cpu, started = time.process_time(), time.monotonic()
    while time.monotonic() - started < seconds:
        hub.chat_from(secrets[said % min(SPEAKERS, readers)], "0", f"line {said}")
        said += 1
        await asyncio.sleep(1 / rate)
    cpu = time.process_time() - cpu
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    hub.close()
    return said, replies, cpu


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--readers", type=int, default=2000, help="long-polling guests in the lobby")
    parser.add_argument("--seconds", type=float, default=5.0, help="how long lobby chat goes on")
    parser.add_argument("--rate", type=float, default=10.0, help="lobby chat lines a second")
    args = parser.parse_args()
    if min(args.readers, args.seconds, args.rate) <= 0:
        parser.error("--readers, --seconds and --rate must be positive")
    setting = bus.LOBBY_WAKE_EVERY
    print(
        f"lobby news: {args.readers} readers long-polling the lobby, {args.rate:g} lobby chat lines a second"
    )
    for every in (0.0, setting):
        said, replies, cpu = asyncio.run(lobby_news(every, args.readers, args.seconds, args.rate))
        print(
            f"  woken at most every {every:g} s: {said} lines in {args.seconds:g} s, {replies:,} replies "
            f"({replies / args.readers / args.seconds:.2f} a reader a second), hub and loop CPU {cpu:.2f} s "
            f"({cpu / args.seconds:.0%} of a core)"
        )
    allowed = args.readers * (args.seconds / setting + 1)
    ok = replies <= allowed
    print(
        f"{'PASS' if ok else 'FAIL'}: {replies:,} replies with the bus's setting (target <= {allowed:,.0f})"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
