"""Abuse: what one attacker's flood does to everybody else, on the real server.

Each section starts the real server as a subprocess (benchmarks/stream.py's Server: `python -m server
serve` on a free 127.0.0.1 port, a throwaway SQLite file, `--unlimited 127.0.0.1` so that one machine can
stand for many addresses, `--log-level WARNING` unless told otherwise), floods it one way, and meanwhile
measures a normal player from a process of its own. It prints its figures and whether the player stayed
within the target; the server is always stopped at the end. Only 127.0.0.1 is contacted and every loop is
bounded in time.

Section "connections" (connection_flood): --flood connections, half of them trickling a request's headers
in a byte a second (slowloris), half long-polling (`wait=30`), each opened again as soon as the server
closes it, against a server limited to --open-files files (1,024: systemd's default, which the shipped
unit used to keep; 1,100 such connections used to lock everybody out and write 310 MB of log in 75 s).
Meanwhile, once a second, a new guest logs in and polls on a new connection; login + poll is measured.
Target: p99 below 1 s, no failure, the server's log below 1 MB.

More sections (journal floods, full-state floods, player-slot floods) are functions of the same shape:
one entry in SECTIONS, their own options in add_arguments, run with `--only NAME`.

    .venv/bin/python benchmarks/abuse.py --only connections
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import re
import resource
import signal
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

HERE = Path(__file__).resolve().parent
for _path in (str(HERE.parent), str(HERE)):  # the repository (server.*) and this folder (stream)
    if _path not in sys.path:
        sys.path.insert(0, _path)

from stream import HOST, Server, add_server_arguments, connect, ms, percentile, server_revision  # noqa: E402

TARGET_P99 = 1.0  # seconds for a new player's login + first poll
TARGET_LOG_BYTES = 1_000_000
RECONNECT_DELAY = 0.5  # seconds an attacker waits before opening a closed connection again
TRICKLE_EVERY = 1.0  # seconds between a slowloris connection's bytes
SAMPLE_EVERY = 0.5  # seconds between readings of the server's memory and open files


# --- section "connections" ----------------------------------------------------------------------------


@dataclass
class FloodFigures:
    cap: int = 0  # the server's, fitted below its open-file limit
    opened: int = 0
    most_open: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)  # how each flood connection ended
    connect_errors: int = 0
    server_counts: dict[str, float] = field(default_factory=dict)  # from /metrics
    rss_mb: list[float] = field(default_factory=list)
    server_files: list[int] = field(default_factory=list)
    log_bytes: int = 0
    log_lines: int = 0
    log_warnings: list[str] = field(default_factory=list)  # the first lines at WARNING or above
    player_seconds: list[float] = field(default_factory=list)
    player_failures: list[str] = field(default_factory=list)
    generator_cpu: float = 0.0


class Flood:
    """--flood connections on one event loop, each opened again after the server closes it."""

    def __init__(self, port: int, lobby_last: int, figures: FloodFigures) -> None:
        self.port = port
        self.figures = figures
        self.open_now = 0
        self.lobby_last = lobby_last  # the newest lobby event seen: a poll from there waits for news

    async def attacker(self, slow: bool, start_at: float, stop_at: float) -> None:
        await asyncio.sleep(max(0.0, start_at - time.monotonic()))
        while time.monotonic() < stop_at:
            try:
                reader, writer = await asyncio.open_connection(HOST, self.port)
            except OSError:
                self.figures.connect_errors += 1
                await asyncio.sleep(RECONNECT_DELAY)
                continue
            self.figures.opened += 1
            self.open_now += 1
            self.figures.most_open = max(self.figures.most_open, self.open_now)
            try:
                if slow:
                    outcome = await self._trickle(reader, writer, stop_at)
                else:
                    writer.write(
                        f"GET /a.kropki?co=getMsg&msgNo={self.lobby_last}&wait=30 HTTP/1.1\r\n"
                        f"Host: {HOST}\r\nConnection: close\r\n\r\n".encode()
                    )
                    outcome = await self._until_closed(reader, stop_at)
            except OSError:
                outcome = "closed by the server"
            finally:
                writer.transport.abort()
                self.open_now -= 1
            self.figures.outcomes[outcome] += 1
            await asyncio.sleep(RECONNECT_DELAY)

    async def _trickle(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, stop_at: float
    ) -> str:
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: kropki\r\n")
        padding = b"X-Padding: " + b"x" * 8000  # a byte a second: never done
        for byte in range(len(padding)):
            try:
                async with asyncio.timeout(min(TRICKLE_EVERY, max(0.0, stop_at - time.monotonic()))):
                    return _outcome(await reader.read(4096))
            except TimeoutError:
                if time.monotonic() >= stop_at:
                    return "held to the end"
            writer.write(padding[byte : byte + 1])
        return "held to the end"

    async def _until_closed(self, reader: asyncio.StreamReader, stop_at: float) -> str:
        try:
            async with asyncio.timeout(max(0.0, stop_at - time.monotonic())):
                answer = await reader.read()
        except TimeoutError:
            return "held to the end"
        numbers = re.search(rb"\r\n\r\n\w+/m\d+\.(\d+)\.", answer)
        if numbers:
            self.lobby_last = max(self.lobby_last, int(numbers.group(1)))
        return _outcome(answer)


def _outcome(answer: bytes) -> str:
    if not answer:
        return "closed by the server"
    if answer.startswith(b"HTTP/1.1 503"):
        return "refused (503)"
    if answer.startswith(b"HTTP/1.1 200"):
        return "long poll answered"
    return f"answered {answer[9:12].decode(errors='replace')}"


def player(port: int, start_at: float, stop_at: float, timeout: float, results: Connection) -> None:
    """Runs in a process of its own, so that the flood's event loop does not slow the measurement."""
    seconds: list[float] = []
    failures: list[str] = []

    async def once(number: int) -> None:
        secret = f"fp{number}"  # a guest's id has at most 9 characters
        started = time.monotonic()
        try:
            async with asyncio.timeout(timeout):
                conn = await connect(port, timeout)
                try:
                    status, body = await conn.get(
                        f"/a.kropki?co=guestLogin&idGracza={secret}&opis=%2AP{number}&lang=en"
                    )
                    if (status, body) != (200, b""):
                        raise ValueError(f"login answered {status} {body[:40]!r}")
                    status, body = await conn.get(
                        f"/a.kropki?co=getMsg&idGracza={secret}&msgNo=0&msgFromClient=x"
                    )
                    if status != 200 or not body.startswith(b"ok/"):
                        raise ValueError(f"poll answered {status} {body[:40]!r}")
                finally:
                    conn.close()
            seconds.append(time.monotonic() - started)
        except (OSError, TimeoutError, ValueError) as failure:
            failures.append(f"{type(failure).__name__}: {failure}")

    async def main() -> None:
        await asyncio.sleep(max(0.0, start_at - time.monotonic()))
        number = 0
        while time.monotonic() < stop_at:
            next_at = time.monotonic() + 1.0
            await once(number)
            number += 1
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))

    asyncio.run(main())
    results.send((seconds, failures))


def connection_flood(
    python: str,
    workdir: Path,
    *,
    flood: int = 1_100,
    seconds: float = 30.0,
    ramp: float = 3.0,
    open_files: int = 1_024,
    max_connections: int | None = None,
    log_level: str = "WARNING",
    timeout: float = 10.0,
) -> FloodFigures:
    """Flood a real server with slow and long-polling connections; measure a normal player meanwhile."""
    _raise_own_open_files(flood + 200)
    extra = ("--max-connections", str(max_connections)) if max_connections else ()
    server = Server(python, log_level, workdir, None, extra, open_files=open_files)
    figures = FloodFigures()
    server.start()
    try:
        base = f"http://{HOST}:{server.port}"
        with urllib.request.urlopen(f"{base}/a.kropki?co=getMsg&msgNo=0", timeout=timeout) as lobby:
            lobby_last = int(re.match(rb"\w+/m\d+\.(\d+)\.", lobby.read()).group(1))
        start = time.monotonic()
        stop_at = start + ramp + seconds
        receiving, sending = multiprocessing.get_context("fork").Pipe(duplex=False)
        measuring = multiprocessing.get_context("fork").Process(
            target=player, args=(server.port, start + ramp, stop_at, timeout, sending), daemon=True
        )
        measuring.start()
        cpu_before = time.process_time()
        asyncio.run(_flood(server, flood, lobby_last, start, ramp, stop_at, figures))
        figures.generator_cpu = (time.process_time() - cpu_before) / (ramp + seconds)
        if receiving.poll(timeout + 5):
            figures.player_seconds, figures.player_failures = receiving.recv()
        measuring.join(5)
        with urllib.request.urlopen(f"{base}/metrics", timeout=timeout) as page:
            metrics = page.read().decode()
        figures.server_counts = _connection_counts(metrics)
        capped = re.search(r"^kropki_connections_max (\S+)$", metrics, re.M)
        figures.cap = int(float(capped.group(1))) if capped else 0  # none before issue 18.9
    finally:
        server.stop()
    text = server.log_path.read_text(errors="replace")
    lines = text.splitlines()
    figures.log_bytes, figures.log_lines = server.log_path.stat().st_size, len(lines)
    figures.log_warnings = [line for line in lines if re.search(r" level=(WARNING|ERROR|CRITICAL) ", line)][
        :5
    ]
    return figures


async def _flood(
    server: Server,
    flood: int,
    lobby_last: int,
    start: float,
    ramp: float,
    stop_at: float,
    figures: FloodFigures,
) -> None:
    attack = Flood(server.port, lobby_last, figures)
    attackers = [
        asyncio.create_task(attack.attacker(index % 2 == 0, start + ramp * index / flood, stop_at))
        for index in range(flood)
    ]
    while time.monotonic() < stop_at:
        figures.rss_mb.append(server.rss_mb())
        figures.server_files.append(_open_files(server.pid))
        await asyncio.sleep(SAMPLE_EVERY)
    await asyncio.gather(*attackers)


def _open_files(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def _connection_counts(metrics: str) -> dict[str, float]:
    counts = {}
    for line in metrics.splitlines():
        found = re.match(r'kropki_connections_(closed_total\{reason="(\w+)"\}|refused_total) (\S+)', line)
        if found:
            counts[found.group(2) or "refused"] = float(found.group(3))
    return counts


def _raise_own_open_files(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(needed, soft)), hard))
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < needed:
        raise RuntimeError(f"this script needs {needed} open files; the hard limit is {hard}")


def connections_section(args: argparse.Namespace, workdir: Path) -> bool:
    figures = connection_flood(
        args.python,
        workdir,
        flood=args.flood,
        seconds=args.seconds,
        ramp=args.ramp,
        open_files=args.open_files,
        max_connections=args.max_connections,
        log_level=args.log_level,
        timeout=args.timeout,
    )
    player = sorted(figures.player_seconds)
    p99 = percentile(player, 99) if player else float("inf")
    log_ok = figures.log_bytes < TARGET_LOG_BYTES
    cap = f"a cap of {figures.cap} connections" if figures.cap else "no cap on connections"
    print(f"server: {args.open_files} open files, {cap}")
    length = args.ramp + args.seconds
    print(f"flood: {args.flood} connections, half slowloris, half long polls, for {length:g} s")
    print(f"connections opened: {figures.opened} (at most {figures.most_open} open at once)")
    for outcome, number in sorted(figures.outcomes.items()):
        print(f"    {outcome}: {number}")
    print(f"    connect errors: {figures.connect_errors}")
    counts = ", ".join(f"{name} {value:.0f}" for name, value in sorted(figures.server_counts.items()))
    print(f"closed/refused by the server (/metrics): {counts}")
    rss = figures.rss_mb or [0.0]
    files = max(figures.server_files or [0])
    print(f"server RSS MB: start {rss[0]:.1f} peak {max(rss):.1f}; open files peak {files}")
    print(
        f"server log: {figures.log_bytes:,} bytes, {figures.log_lines} lines "
        f"(target < {TARGET_LOG_BYTES:,} bytes){'' if log_ok else '  MISSED'}"
    )
    for line in figures.log_warnings:
        print(f"    {line[:160]}")
    print(f"load generator CPU: {figures.generator_cpu:.0%} of one core")
    print(f"normal player login+poll: {len(player)} done, {len(figures.player_failures)} failed")
    for failure in figures.player_failures[:5]:
        print(f"    {failure}")
    met = p99 < TARGET_P99 and not figures.player_failures and log_ok
    print(
        f"normal player login+poll ms: {ms(player, 50, 99)} (target p99 < {TARGET_P99 * 1000:.0f})"
        f"{'' if met else '  MISSED'}"
    )
    return met


def connections_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("section connections")
    group.add_argument("--flood", type=int, default=1_100, help="flood connections open at once")
    group.add_argument(
        "--open-files", type=int, default=1_024, help="the server's open-file limit (soft and hard)"
    )
    group.add_argument(
        "--max-connections", type=int, help="the server's --max-connections (default: its own)"
    )


# --- the sections and the command line ----------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    run: Callable[[argparse.Namespace, Path], bool]  # prints its figures; True when the targets are met
    add_arguments: Callable[[argparse.ArgumentParser], None]


SECTIONS = {"connections": Section(connections_section, connections_arguments)}


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    add = parser.add_argument
    add(
        "--only", action="append", choices=sorted(SECTIONS), help="run this section (repeatable; default all)"
    )
    add("--seconds", type=float, default=30.0, help="length of each flood once it is at full strength")
    add("--ramp", type=float, default=3.0, help="seconds over which a flood's connections are opened")
    for section in SECTIONS.values():
        section.add_arguments(parser)
    add_server_arguments(parser)
    args = parser.parse_args()
    if args.seconds <= 0 or args.ramp < 0 or args.flood <= 0 or args.open_files <= 0:
        parser.error("--seconds, --flood and --open-files must be positive, --ramp at least 0")

    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    print(f"abuse benchmark: {os.cpu_count()} CPUs, server interpreter {args.python}")
    print(f"server code: commit {server_revision()}")
    results = []
    try:
        for name in args.only or sorted(SECTIONS):
            print(f"\n== section {name} ==")
            with tempfile.TemporaryDirectory(prefix=f"kropki-abuse-{name}-") as workdir:
                results.append(SECTIONS[name].run(args, Path(workdir)))
    except KeyboardInterrupt:
        print("\ninterrupted; the server was stopped")
        return 130
    except RuntimeError as failure:
        print(f"benchmark failed: {failure}")
        return 2
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
