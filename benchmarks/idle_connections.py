"""What an idle keep-alive connection costs the server in memory (docs/architecture.md, "An idle
connection's last request").

A zagram client polls about once a second on one keep-alive connection, so between two polls every
player's connection is idle. aiohttp's connection loop keeps the last request it answered (the request,
its response, the parsed message, the writer) until the next request comes or the connection closes.
This measures it on the real server (benchmarks/stream.py's Server: `python -m server serve`, a
throwaway SQLite file):

1. --connections guests log in and take their first state over one connection (not measured);
2. as many connections are opened, and say nothing yet: the server's RSS grows by what an open
   connection costs (its transport, aiohttp's protocol and parser);
3. each sends one poll as MultiPoints does (`getMsg` with its id, the last msgNo and `msgFromClient=x`)
   and reads the answer, then stays open and idle: RSS grows by what an answered poll leaves on its
   connection;
4. each polls once more: a second poll replaces the first's objects, so RSS stays level.

RSS is read from /proc after each step has settled (--settle seconds). `--checkout DIR` runs the server
from another checkout (an older commit, for a before-and-after), with this checkout's interpreter.

    .venv/bin/python benchmarks/idle_connections.py --connections 2000
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
for _path in (str(HERE.parent), str(HERE)):  # the repository (server.*) and this folder (stream)
    if _path not in sys.path:
        sys.path.insert(0, _path)

import stream  # noqa: E402
from stream import HttpConnection, Server, connect, parse_head  # noqa: E402

TIMEOUT = 30.0  # seconds for any one reply
OPEN_AT_ONCE = 200  # connections opened (and polls sent) at a time


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--connections", type=int, default=2_000, help="idle connections, one guest each")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds before each reading of RSS")
    parser.add_argument("--python", default=sys.executable, help="the interpreter that runs the server")
    parser.add_argument("--checkout", type=Path, help="run the server from this checkout instead")
    parser.add_argument("--log-level", default="WARNING")
    return parser.parse_args(argv)


async def log_in(port: int, count: int) -> tuple[list[str], int]:
    """`count` guests logged in, each having taken its first state; their ids and the last msgNo."""
    loader = await connect(port, TIMEOUT)
    ids, last = [], 0
    try:
        for number in range(count):
            secret = f"i{number:07d}"  # a guest id: at most 9 characters
            status, body = await loader.get(f"/a.kropki?co=guestLogin&idGracza={secret}&opis=%2Aidle{number}")
            if status != 200 or body:
                raise RuntimeError(f"guest {number} not logged in: {status} {body[:80]!r}")
            status, body = await loader.get(f"/a.kropki?co=getMsg&idGracza={secret}&msgNo=0")
            head = parse_head(body)
            if status != 200 or head is None:
                raise RuntimeError(f"guest {number}'s first poll failed: {status} {body[:80]!r}")
            ids.append(secret)
            last = head[1]
    finally:
        loader.close()
    return ids, last


async def poll_each(connections: list[HttpConnection], ids: list[str], last: int) -> None:
    async def poll(connection: HttpConnection, secret: str) -> None:
        status, body = await connection.get(
            f"/a.kropki?co=getMsg&idGracza={secret}&msgNo={last}&msgFromClient=x"
        )
        if status != 200 or not body.startswith(b"ok/"):
            raise RuntimeError(f"a poll failed: {status} {body[:80]!r}")

    for start in range(0, len(connections), OPEN_AT_ONCE):
        pairs = zip(connections[start : start + OPEN_AT_ONCE], ids[start : start + OPEN_AT_ONCE], strict=True)
        await asyncio.gather(*(poll(connection, secret) for connection, secret in pairs))


async def measure(server: Server, args: argparse.Namespace) -> dict[str, float]:
    rss: dict[str, float] = {}

    async def reading(step: str) -> None:
        await asyncio.sleep(args.settle)
        rss[step] = server.rss_mb()

    ids, last = await log_in(server.port, args.connections)
    await reading("guests logged in")
    connections: list[HttpConnection] = []
    for start in range(0, args.connections, OPEN_AT_ONCE):
        size = min(OPEN_AT_ONCE, args.connections - start)
        connections += await asyncio.gather(*(connect(server.port, TIMEOUT) for _ in range(size)))
    await reading("connections open, no request")
    await poll_each(connections, ids, last)
    await reading("one poll answered on each")
    await poll_each(connections, ids, last)
    await reading("a second poll on each")
    closed = sum(connection.closed for connection in connections)
    for connection in connections:
        connection.close()
    if closed:
        raise RuntimeError(f"{closed} connections were closed by the server while measured")
    return rss


def report(rss: dict[str, float], count: int) -> None:
    steps = list(rss)
    for step in steps:
        print(f"  {step:32} RSS {rss[step]:7.1f} MB")
    opened = (rss[steps[1]] - rss[steps[0]]) * 1024 / count
    answered = (rss[steps[2]] - rss[steps[1]]) * 1024 / count
    again = (rss[steps[3]] - rss[steps[2]]) * 1024 / count
    print(f"an open connection:               {opened:6.1f} KB")
    print(f"what one answered poll leaves:    {answered:6.1f} KB")
    print(f"an idle connection after a poll:  {opened + answered:6.1f} KB")
    print(f"a second poll adds:               {again:6.1f} KB")
    print(f"{count:,} idle connections:        {(opened + answered) * count / 1024:6.1f} MB")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.checkout is not None:
        stream.REPO = args.checkout.resolve()  # Server.start runs `python -m server` from here
    players = args.connections + 1_000
    extra = ("--max-players", str(players), "--max-connections", str(players), "--registered-share", "0")
    with tempfile.TemporaryDirectory(prefix="kropki-idle-") as workdir:
        server = Server(args.python, args.log_level, Path(workdir), None, extra=extra)
        server.start()
        try:
            started = time.monotonic()
            rss = asyncio.run(measure(server, args))
        finally:
            server.stop()
        seconds = time.monotonic() - started
        print(f"{args.connections:,} connections, server from {stream.REPO} ({seconds:.0f} s)")
        report(rss, args.connections)
    return 0


if __name__ == "__main__":
    sys.exit(main())
