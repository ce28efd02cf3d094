"""A bot's feed that its bot stops reading (docs/bots.md, "A feed not read"): what it holds, what waits
on it, and how soon it ends.

The real app on a port of its own and a SQLite file, in this process. Bot Stuck opens its feed over a
raw socket with a small receive buffer (--receive-buffer) and never reads it. Meanwhile --guests guests
post and cancel seeks that every bot's feed lists (the lobby's churn, the feed's steady stream), and
two other bots play moves: their move-to-opponent's-feed latency says whether anything waits on the
stuck feed. Printed: what the stuck feed's connection held (read once the run is over), when its
handler ended and with what last line, and how long the bot took to open its feed again and read its
first event.

    .venv/bin/python benchmarks/botstreams.py --seconds 30
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import socket
import statistics
import sys
import time
from collections import deque
from pathlib import Path

import aiohttp
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bots import next_event, pair, started_app  # noqa: E402
from server.hub.model import Origin  # noqa: E402
from server.protocol.codec import ProtocolError  # noqa: E402
from server.protocol.seeks import CancelSeek, PostSeek, parse_range  # noqa: E402
from server.web.botstreams import STREAMS_KEY  # noqa: E402
from server.web.common import HUB_KEY, STORE_KEY  # noqa: E402

SEEK = "2020n0.0.a.F.a.600.5._SRAUTP_srautp."
SEEKS_A_MINUTE = 9  # of a guest: the server allows 10 (server/hub/seeks.py)
OPEN_SEEKS = 120  # open at once; the lobby keeps a share of its 300 for registered players
TICK = 0.1  # seconds between the guests' turns


async def churn(app: web.Application, guests: int, until: float) -> int:
    """Guests posting seeks, each cancelled a few seconds later, until `until`: the seek lines every
    feed reads (a seek posted and cancelled between two reads of a feed is not listed)."""
    hub = app[HUB_KEY]
    secrets = [f"g{n:07d}" for n in range(guests)]
    for n, secret in enumerate(secrets):
        hub.guest_login(secret, f"*G{n}", "en", Origin(f"10.1.{n // 250}.{n % 250}", True))
    open_seeks: deque[tuple[str, int]] = deque()
    turn = itertools.cycle(secrets)
    per_tick = max(1, round(guests * SEEKS_A_MINUTE / 60 * TICK))
    posted = 0
    while time.monotonic() < until:
        for _ in range(per_tick):
            secret = next(turn)
            with contextlib.suppress(ProtocolError):  # the lobby's most open seeks: the next tick
                number = hub.seek(secret, PostSeek(SEEK, parse_range("", "")))
                if number is not None:
                    open_seeks.append((secret, number))
                    posted += 1
            while len(open_seeks) > OPEN_SEEKS:
                owner, number = open_seeks.popleft()
                hub.seek(owner, CancelSeek(number))
        await asyncio.sleep(TICK)
    return posted


async def stuck_feed(port: int, token: str, receive_buffer: int) -> socket.socket:
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    raw.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(raw, ("127.0.0.1", port))
    request = f"GET /api/bot/stream HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {token}\r\n\r\n"
    await loop.sock_sendall(raw, request.encode())
    return raw  # never read


async def main(args: argparse.Namespace) -> None:
    app, runner, port = await started_app("botstreams")
    base = f"http://127.0.0.1:{port}"
    streams = app[STREAMS_KEY]
    try:
        store = app[STORE_KEY].bots
        stuck_token = await store.create("Stuck")
        players = [await store.create(nick) for nick in ("Blue", "Red")]
        raw = await stuck_feed(port, stuck_token, args.receive_buffer)
        started = time.monotonic()
        while not streams.open:
            await asyncio.sleep(0.01)
        (feeding,) = streams.open.values()
        until = started + args.seconds
        churning = asyncio.create_task(churn(app, args.guests, until))
        ended_after = None
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as session:
            playing = asyncio.create_task(pair(session, base, tuple(players), ("Blue", "Red"), args.moves))
            while time.monotonic() < until:
                if ended_after is None and feeding not in streams.open.values():
                    ended_after = time.monotonic() - started
                await asyncio.sleep(0.1)
            latencies = sorted(await playing)
            posted = await churning
            reopened = time.monotonic()
            async with session.get(
                f"{base}/api/bot/stream", headers={"Authorization": f"Bearer {stuck_token}"}
            ) as again:
                status = again.status
                if status == 200:
                    await next_event(again, "seek")
            reopened = time.monotonic() - reopened
        tail, received = b"", 0
        raw.setblocking(True)
        raw.settimeout(2.0)
        try:
            while chunk := raw.recv(65536):
                tail, received = (tail + chunk)[-300:], received + len(chunk)
        except (TimeoutError, ConnectionError):
            pass
        raw.close()
    finally:
        await runner.cleanup()
    p99 = latencies[max(0, int(len(latencies) * 0.99) - 1)]
    print(f"{args.seconds:g} s; {posted} seeks posted and cancelled by {args.guests} guests")
    print(
        "the stuck feed ended after "
        + (f"{ended_after:.1f} s" if ended_after is not None else f"more than {args.seconds:g} s (not yet)")
    )
    print(f"what the server and the kernels held for it, read after the run: {received / 1024:.0f} KB")
    print(f"its last bytes: {tail[-120:]!r}")
    print(f"opened again: HTTP {status}, first event after {reopened * 1000:.0f} ms")
    print(
        f"meanwhile two other bots' moves -> opponent's feed: {len(latencies)} moves, "
        f"p50 {statistics.median(latencies) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--guests", type=int, default=2000, help="guests posting and cancelling seeks")
    parser.add_argument("--moves", type=int, default=40, help="moves of the other bots' game")
    parser.add_argument("--receive-buffer", type=int, default=4096, help="the stuck bot's SO_RCVBUF")
    asyncio.run(main(parser.parse_args()))
