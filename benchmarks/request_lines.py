"""What long request lines cost the server: the memory of connections whose line is still arriving, and
the time to answer polls whose line is as long as the server takes (server/web/kropki.py,
MAX_REQUEST_LINE: 6,000 characters of commands, each percent-encoded as four UTF-8 bytes).

aiohttp's parser keeps a request line that has not ended, up to its limit, so a client that sends most
of a line and then waits holds that much of the server's memory until the header timeout (15 s) closes
it; the connection cap bounds how many do. This measures it on the real server (benchmarks/stream.py's
Server), one fresh server a line length:

1. --connections connections are opened and say nothing: RSS is read;
2. each sends the first LENGTH bytes of a poll's request line and no more: RSS is read again; the
   difference, a connection, is what such a line holds;
3. on one keep-alive connection, --polls polls of that length (padded with a query parameter the server
   ignores) are answered one after the other: polls a second.

    .venv/bin/python benchmarks/request_lines.py --connections 2000
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

from stream import HOST, Server, connect  # noqa: E402

from server.web.kropki import MAX_REQUEST_LINE  # noqa: E402

TIMEOUT = 30.0
OPEN_AT_ONCE = 200
POLL = "/a.kropki?co=getMsg&msgNo=0&msgFromClient=x&pad="


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--connections", type=int, default=2_000, help="connections holding a partial line")
    parser.add_argument("--polls", type=int, default=2_000, help="whole polls answered, a line length")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds before each reading of RSS")
    parser.add_argument("--python", default=sys.executable, help="the interpreter that runs the server")
    return parser.parse_args(argv)


def request_line(length: int) -> bytes:
    """A poll's request line of `length` bytes in all, its CRLF included."""
    start, end = f"GET {POLL}", " HTTP/1.1\r\n"
    return (start + "x" * (length - len(start) - len(end)) + end).encode()


async def partial_lines(server: Server, args: argparse.Namespace, length: int) -> float:
    """KB of the server's memory a connection holds while the first `length` bytes of its line are in."""
    writers: list[asyncio.StreamWriter] = []
    for _ in range(0, args.connections, OPEN_AT_ONCE):
        opened = await asyncio.gather(
            *(asyncio.open_connection(HOST, server.port) for _ in range(OPEN_AT_ONCE))
        )
        writers += [writer for _, writer in opened]
    await asyncio.sleep(args.settle)
    before = server.rss_mb()
    part = request_line(length)[:-2]  # never ends: no CRLF
    for writer in writers:
        writer.write(part)
    await asyncio.gather(*(writer.drain() for writer in writers))
    await asyncio.sleep(args.settle)
    after = server.rss_mb()
    for writer in writers:
        writer.transport.abort()
    return (after - before) * 1024 / len(writers)


async def polls_a_second(server: Server, args: argparse.Namespace, length: int) -> float:
    connection = await connect(server.port, TIMEOUT)
    target = request_line(length).decode()[4 : -len(" HTTP/1.1\r\n")]
    try:
        started = time.perf_counter()
        for _ in range(args.polls):
            status, body = await connection.get(target)
            if status != 200 or not body.startswith(b"sd"):  # nobody logged in with no id: start again
                raise RuntimeError(f"a poll of {length} bytes failed: {status} {body[:80]!r}")
        return args.polls / (time.perf_counter() - started)
    finally:
        connection.close()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    extra = ("--max-connections", str(args.connections + 1_000))
    print(f"{args.connections:,} connections holding a partial line; {args.polls:,} polls a length")
    for length in (100, 8_000, MAX_REQUEST_LINE):
        with tempfile.TemporaryDirectory(prefix="kropki-lines-") as workdir:
            server = Server(args.python, "WARNING", Path(workdir), None, extra=extra)
            server.start()
            try:
                held = asyncio.run(partial_lines(server, args, length))
                rate = asyncio.run(polls_a_second(server, args, length))
                peak = server.rss_mb("VmHWM")
            finally:
                server.stop()
        print(
            f"  line of {length:6,} bytes: {held:6.1f} KB a connection while it arrives "
            f"({held * args.connections / 1024:6.1f} MB for all), {rate:7,.0f} polls/s, "
            f"peak RSS {peak:5.0f} MB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
