"""Instructions an empty poll costs, against aiohttp's hello-world: a figure the host's speed does not move.

On this project's shared machine a timed figure moves by a factor of two through a day (docs/
performance.md, "a fourth session": the same code's empty polls at 62 and 158 µs), and the empty-poll
ratio of scale.py's section "empty" is a ratio of rates capped by what the load generator offers. This
counts instead: each server runs under valgrind's callgrind (`--instr-atstart=no`), --counted-clients
keep-alive connections make their warm-up requests, counting is switched on (`callgrind_control -i on`),
the clients make --counted-requests requests in all, each no faster than stream.py's empty pollers
(under the per-id limit), counting is switched off and the count read from callgrind's dump.
Everything the server's process does meanwhile is counted: its timers, sweeps and collections as well as
the requests.

The servers: this code's empty poll (getMsg with msgFromClient=x, logged-in guests, as stream.py's
"empty"), aiohttp's hello-world on asyncio's loop (the issue's comparison) and on uvloop (the loop `serve`
picks). Counts are of one interpreter build: they compare servers run by the same interpreter, not
interpreters. Needs valgrind (Debian's package).

    .venv/bin/python benchmarks/instructions.py                  # 200 clients, 4,000 counted requests
    .venv/bin/python benchmarks/scale.py --only instructions --before ../old
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
for _path in (str(HERE.parent), str(HERE)):  # the repository (server.*) and this folder (stream)
    if _path not in sys.path:
        sys.path.insert(0, _path)

import stream  # noqa: E402
from stream import (  # noqa: E402
    EMPTY_POLLS_PER_CLIENT,
    REPO,
    HelloWorld,
    HelloWorldOnUvloop,
    HttpConnection,
    Server,
    add_server_arguments,
    argument_parser,
    connect,
    fill_sizes,
    parse_head,
    server_revision,
    stop_as_on_ctrl_c,
    watchdog,
)

TARGET_RATIO = 0.8  # the hello-world's count over the poll's: issue 45's empty-poll target, counted
START_UNDER_VALGRIND = 300.0  # seconds for /healthz: under callgrind a server starts 50-100 times slower
SLOWER = 10  # --timeout is for a server at full speed
WARM_UP = 3  # requests per client before counting
SIZES = {
    "full": {"counted_clients": 200, "counted_requests": 4_000},
    "quick": {"counted_clients": 4, "counted_requests": 40},
}


@dataclass
class Count:
    instructions: int  # in the counted stretch, by callgrind
    requests: int
    errors: int  # replies other than a 200 and, for a poll, other than an `ok` reply
    seconds: float  # the counted stretch's wall time, under valgrind

    @property
    def per_request(self) -> float:
        return self.instructions / self.requests


class Counted:
    """A server of stream.py's run under callgrind, counting only between `on` and `off`."""

    def __init__(self, server: Server, workdir: Path) -> None:
        self.server = server
        self.dumps = workdir / "callgrind"
        self.dumps.mkdir(parents=True)
        server.launcher = (
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={self.dumps}/out.%p",
        )

    def control(self, *flags: str) -> None:
        subprocess.run(["callgrind_control", *flags, str(self.server.pid)], check=True, capture_output=True)

    def instructions(self) -> int:
        """Dump the counts and add up the dumps' totals (only the counted stretch has any)."""
        self.control("--dump")
        total = 0
        for dump in self.dumps.iterdir():
            for line in dump.read_text(errors="replace").splitlines():
                if line.startswith("totals:"):
                    total += int(line.split()[1])
        return total


class Client:
    """One keep-alive connection: a logged-in guest's empty polls, or plain GETs of `/`."""

    def __init__(self, index: int, poll: bool) -> None:
        self.secret = f"i{index}"
        self.poll = poll
        self.seen = 0
        self.conn: HttpConnection | None = None
        self.next_at = 0.0

    async def start(self, port: int, timeout: float) -> None:
        self.conn = await connect(port, timeout)
        if self.poll:
            await self.conn.get(f"/a.kropki?co=guestLogin&idGracza={self.secret}&opis=*{self.secret}&lang=en")

    async def one(self) -> bool:
        """One request, no sooner than the per-id limit allows; whether its answer was right."""
        assert self.conn is not None
        await asyncio.sleep(max(0.0, self.next_at - time.monotonic()))
        self.next_at = time.monotonic() + 1.0 / EMPTY_POLLS_PER_CLIENT
        if not self.poll:
            status, _ = await self.conn.get("/")
            return status == 200
        status, body = await self.conn.get(
            f"/a.kropki?co=getMsg&playerId={self.secret}&msgNo={self.seen}&msgFromClient=x"
        )
        head = parse_head(body)
        if status != 200 or head is None:
            return False
        self.seen = head[0]
        return True


async def drive(counted: Counted, connections: list[Client], requests: int, timeout: float) -> Count:
    """Warm up, then count `requests` requests spread over the connections."""
    for client in connections:
        await client.start(counted.server.port, timeout)
    for _ in range(WARM_UP):
        await asyncio.gather(*(client.one() for client in connections))
    left = [requests]
    errors = [0]

    async def go_on(client: Client) -> None:
        while left[0] > 0:
            left[0] -= 1
            if not await client.one():
                errors[0] += 1

    counted.control("--instr=on")
    began = time.monotonic()
    await asyncio.gather(*(go_on(client) for client in connections))
    seconds = time.monotonic() - began
    counted.control("--instr=off")
    return Count(counted.instructions(), requests, errors[0], seconds)


async def drive_watched(counted: Counted, poll: bool, clients: int, requests: int, timeout: float) -> Count:
    """`drive` with `clients` connections, every request failed that takes longer than `timeout`."""
    connections = [Client(index, poll) for index in range(clients)]
    watching = asyncio.ensure_future(watchdog(connections, timeout))
    try:
        return await drive(counted, connections, requests, timeout)
    finally:
        watching.cancel()
        for client in connections:
            if client.conn is not None:
                client.conn.close()


def count(server: Server, poll: bool, args: argparse.Namespace, workdir: Path) -> Count:
    counted = Counted(server, workdir)
    try:
        server.start(timeout=START_UNDER_VALGRIND)
        return asyncio.run(
            drive_watched(counted, poll, args.counted_clients, args.counted_requests, args.timeout * SLOWER)
        )
    finally:
        server.stop()


@dataclass(frozen=True)
class Subject:
    label: str
    kind: type[Server]
    poll: bool


POLL = "empty poll"
HELLO = "aiohttp's hello-world on asyncio"
HELLO_ON_UVLOOP = "the same on uvloop"


def section(args: argparse.Namespace, workdir: Path) -> bool:
    """Counts the code at args.root and the hello-worlds, all run by args.python; prints each and the
    ratios. True when the poll had no errors and the hello-world's count over its count meets
    TARGET_RATIO."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise RuntimeError("valgrind is not installed (Debian's package valgrind)")
    print(
        f"{args.counted_clients} clients, {args.counted_requests:,} requests counted after {WARM_UP} each, "
        f"every server under callgrind, run by {args.python}"
    )
    measured = [Subject(POLL, Server, True), Subject(HELLO, HelloWorld, False)]
    if stream.UVLOOP_INSTALLED:
        measured.append(Subject(HELLO_ON_UVLOOP, HelloWorldOnUvloop, False))
    counts: dict[str, Count] = {}
    for turn, subject in enumerate(measured):
        server = subject.kind(args.python, args.log_level, workdir, None, root=args.root)
        found = counts[subject.label] = count(server, subject.poll, args, workdir / str(turn))
        print(
            f"  {subject.label}: {found.per_request:,.0f} instructions a request, {found.errors} errors "
            f"({found.requests:,} requests in {found.seconds:.1f} s under valgrind)"
        )
    poll, hello = counts[POLL], counts[HELLO].per_request
    ratio = hello / poll.per_request
    ok = poll.errors == 0 and ratio >= TARGET_RATIO
    on_uvloop = counts.get(HELLO_ON_UVLOOP)
    print(
        f"{'PASS' if ok else 'FAIL'}: an empty poll {poll.per_request:,.0f} instructions, the hello-world "
        f"{hello:,.0f}: {ratio:.2f} (target >= {TARGET_RATIO:g}), {poll.errors} errors"
    )
    if on_uvloop is not None:
        print(f"  against the hello-world on uvloop: {on_uvloop.per_request / poll.per_request:.2f}")
    return ok


def add_size_arguments(parser: argparse.ArgumentParser) -> None:
    full = SIZES["full"]
    parser.add_argument("--counted-clients", type=int, help=f"connections ({full['counted_clients']})")
    counted = full["counted_requests"]
    parser.add_argument("--counted-requests", type=int, help=f"requests counted ({counted:,})")


def main() -> int:
    parser = argument_parser(__doc__)
    add_size_arguments(parser)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, those of scale.py --quick")
    add_server_arguments(parser)
    args = parser.parse_args()
    fill_sizes(args, SIZES["quick" if args.quick else "full"])
    if min(args.counted_clients, args.counted_requests) <= 0:
        parser.error("--counted-clients and --counted-requests must be positive")
    args.root = REPO
    stop_as_on_ctrl_c()
    print(f"instructions benchmark: commit {server_revision(REPO)}")
    try:
        with tempfile.TemporaryDirectory(prefix="kropki-instructions-") as workdir:
            return 0 if section(args, Path(workdir)) else 1
    except KeyboardInterrupt:
        print("\ninterrupted; the server was stopped")
        return 130
    except (RuntimeError, OSError, subprocess.SubprocessError) as failure:
        print(f"benchmark failed, the server was stopped: {failure}")
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
