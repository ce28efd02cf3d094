"""Stream load: many guests polling `/a.kropki` on the real server, and empty-poll throughput.

The server runs as a subprocess (`python -m server serve` on a free 127.0.0.1 port, a throwaway SQLite
file, `--log-level WARNING` unless told otherwise) and is always stopped at the end.

Scenario "guests": N guests log in (a few at a time, nobody polling yet), then every guest polls once per
second, the polls spread evenly over the second; a fraction of polls carry a lobby chat line, numbered and
resent above k as MultiPoints does. Each guest's first poll (the catch-up since its login) and --settle
seconds after it are not measured; then --seconds are. Target: p99 poll latency below 50 ms and no errors.

Scenario "empty": --clients logged-in guests poll in a tight loop with msgFromClient=x, each no faster
than 90% of what the server allows one player id (server/web/clients.py PER_ID: a faster client is
refused with err.tooFast, which would count as errors), so that the server, not the limit, is measured.
Target: at least 5,000 empty polls per second from the one server process (and no errors).

The load generator is a minimal HTTP/1.1 keep-alive client on asyncio protocols (one connection per
client, stdlib only, on uvloop where it is installed: `run_generator`), in --workers processes; its own
CPU time is printed so a reader can tell whether the generator or the server was the bottleneck. Only
127.0.0.1 is contacted and every loop is bounded in time.

    .venv/bin/python benchmarks/stream.py --scenario both
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import importlib.util
import inspect
import math
import multiprocessing
import os
import pstats
import random
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, TypeVar, cast
from urllib.parse import quote

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from server.web.clients import PER_ID  # noqa: E402
from tests.ports import free_port  # noqa: E402

HOST = "127.0.0.1"
TARGET_P99_MS = 50.0
TARGET_EMPTY_RATE = 5_000.0
EMPTY_POLLS_PER_CLIENT = 0.9 * PER_ID[0]  # a second, in the "empty" scenario
EXAMPLES_KEPT = 5  # error examples kept per worker
STOP_GRACE = 5.0  # seconds between SIGTERM and SIGKILL
CLK_TCK = os.sysconf("SC_CLK_TCK")
T = TypeVar("T")
UVLOOP_INSTALLED = importlib.util.find_spec("uvloop") is not None  # the loop `serve` picks then


# --- the server under test -------------------------------------------------------------------------


def _die_with_parent() -> None:
    """Runs in the server child: if this script is killed outright, the kernel still stops the server."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG


class Server:
    """The real server as a subprocess, with its memory and CPU read from /proc."""

    launcher: tuple[str, ...] = ()  # what runs the interpreter (benchmarks/instructions.py: valgrind)

    def __init__(
        self,
        python: str,
        log_level: str,
        workdir: Path,
        profile: Path | None,
        extra: tuple[str, ...] = (),
        open_files: int | None = None,
        root: Path = REPO,
    ) -> None:
        self.python = python
        self.root = root  # the checkout whose server/ runs (scale.py --before measures another one)
        self.log_level = log_level
        self.workdir = workdir
        self.profile = profile
        self.extra = extra  # more `serve` flags
        self.open_files = open_files  # the server's limit on open files (soft and hard), if not inherited
        self.log_path = workdir / "server.log"
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.exited_early: int | None = None  # exit code when the server was gone before stop()

    def arguments(self) -> list[str]:
        """What the interpreter runs: the server, on self.port (set by start)."""
        return [
            "-m",
            "server",
            "serve",
            "--host",
            HOST,
            "--port",
            str(self.port),
            *self.database(),
            "--unlimited",  # thousands of simulated players share this one address
            HOST,
            "--log-level",
            self.log_level,
            *self.extra,
        ]

    def database(self) -> list[str]:
        """Where the server keeps its data: a throwaway SQLite file, its schema made at start."""
        return ["--db", f"sqlite+aiosqlite:///{self.workdir}/bench.sqlite3", "--migrate"]

    def start(self, *, timeout: float = 30.0, again: bool = False) -> None:
        """Start on a free port and wait for /healthz; `again`: on the port it had, its log kept (a restart
        behind a proxy that knows the port, as benchmarks/chaos.py restarts a killed member). `timeout` is
        keyword-only: a request's time-out (10 s) passed here once failed a loaded CI run, whose server
        took longer than that to migrate and start."""
        if not again:
            self.port = free_port()
        profiler = ["-m", "cProfile", "-o", str(self.profile)] if self.profile else []
        with open(self.log_path, "ab" if again else "wb") as log:  # the child keeps its own descriptor
            self.proc = subprocess.Popen(
                [*self.launcher, self.python, *profiler, *self.arguments()],
                cwd=self.root,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C reaches only this script, which stops the server in order
                preexec_fn=self._in_child,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"http://{HOST}:{self.port}/healthz", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        raise RuntimeError(f"GET /healthz did not answer within {timeout:.0f} s:\n{self.log_tail()}")

    def _in_child(self) -> None:
        _die_with_parent()
        if self.open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (self.open_files, self.open_files))

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def rss_mb(self, field: str = "VmRSS") -> float:
        """VmRSS of the server process in MB (0 once it is gone); `field` "VmHWM": its peak so far."""
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0.0

    def cpu_seconds(self) -> float:
        """User plus system CPU time of the server process so far."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            return math.nan
        return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime: fields 14 and 15 of stat

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after a few seconds; safe to call twice."""
        if self.proc is None or self.proc.poll() is not None:
            if self.proc is not None and self.exited_early is None:
                self.exited_early = self.proc.returncode
            return
        self.proc.terminate()
        try:
            self.proc.wait(STOP_GRACE)
        except subprocess.TimeoutExpired:
            print(f"server did not stop within {STOP_GRACE:.0f} s of SIGTERM; killing it")
            self.proc.kill()
            self.proc.wait()

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"

    def log_summary(self) -> str:
        """Size of the server's log and its first lines at WARNING or above, which may explain errors."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "no server log"
        lines = text.splitlines()
        bad = [line for line in lines if re.search(r" level=(WARNING|ERROR|CRITICAL) ", line)]
        summary = f"{len(lines)} lines, {len(text) / 1e6:.1f} MB, {len(bad)} at WARNING or above"
        return summary + "".join(f"\n    {line[:200]}" for line in bad[:EXAMPLES_KEPT])


HELLO_APP = """
import sys
from aiohttp import web

async def hello(request):
    return web.Response(text="Hello, world")

app = web.Application()
app.router.add_get("/{tail:.*}", hello)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)
"""


class HelloWorld(Server):
    """aiohttp's hello-world as the server under test: the floor under any aiohttp handler."""

    def arguments(self) -> list[str]:
        return ["-c", HELLO_APP, str(self.port)]


class HelloWorldOnUvloop(Server):
    """The same on uvloop, the loop `serve` picks where it is installed."""

    def arguments(self) -> list[str]:
        app = HELLO_APP.replace("print=None,", "print=None, loop=__import__('uvloop').new_event_loop(),")
        return ["-c", app, str(self.port)]


# --- the load generator: a minimal keep-alive HTTP/1.1 client -----------------------------------------


class HttpConnection(asyncio.Protocol):
    """One keep-alive connection with one request in flight: write a GET, read status, headers and
    exactly Content-Length bytes. Far cheaper per request than a full client, so one core keeps up.
    Timeouts are enforced by `watchdog`, which costs less than a timer per request."""

    def __init__(self, port: int, timeout: float, headers: dict[str, str] | None = None) -> None:
        """`headers`: more request headers, e.g. X-Forwarded-For for a client behind a trusted proxy."""
        more = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
        self._prefix = b"GET "
        self._suffix = f" HTTP/1.1\r\nHost: {HOST}:{port}\r\n{more}\r\n".encode()
        self._timeout = timeout
        self._transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._head: tuple[int, int, int] | None = None  # body start, status, content length
        self._waiter: asyncio.Future[tuple[int, bytes]] | None = None
        self.busy_since = 0.0  # time.monotonic() of the request in flight, 0 when idle
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass of it

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._fail(exc or ConnectionResetError("connection closed by the server"))

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if self._waiter is not None and not self._waiter.done():
            try:
                self._complete()
            except ValueError as bad:
                self._fail(bad)
                self.close()

    def _complete(self) -> None:
        if self._head is None:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self._buffer[:end])
            self._head = (end + 4, int(head[9:12]), _content_length(head))
        start, status, length = self._head
        if len(self._buffer) < start + length:
            return
        body = bytes(self._buffer[start : start + length])
        del self._buffer[: start + length]
        self._head = None
        assert self._waiter is not None
        self._waiter.set_result((status, body))

    def _fail(self, exc: BaseException) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(exc)

    def expire(self) -> None:
        self._fail(TimeoutError(f"no complete reply within {self._timeout:g} s"))
        self.close()

    async def get(self, target: str) -> tuple[int, bytes]:
        """(status, body) of `GET target`; raises OSError/TimeoutError/ValueError on any failure."""
        if self.closed or self._transport is None:
            raise ConnectionResetError("connection already closed")
        self._waiter = asyncio.get_running_loop().create_future()
        self.busy_since = time.monotonic()
        self._transport.write(self._prefix + target.encode() + self._suffix)
        try:
            return await self._waiter
        finally:
            self._waiter = None
            self.busy_since = 0.0

    def close(self) -> None:
        self.closed = True
        if self._transport is not None:
            self._transport.close()


def _content_length(head: bytes) -> int:
    """Content-Length of a response head; the exact spelling aiohttp writes is tried before a full scan."""
    at = head.find(b"\r\nContent-Length: ")
    if at >= 0 and b"\r\nTransfer-Encoding:" not in head and b"\r\nConnection: close" not in head:
        value_end = head.find(b"\r\n", at + 18)
        return int(head[at + 18 : value_end if value_end >= 0 else len(head)])
    length = -1
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding" or (name == b"connection" and b"close" in value.lower()):
            raise ValueError(f"unsupported response header {line.decode(errors='replace')!r}")
    if length < 0:
        raise ValueError("response without Content-Length")
    return length


async def watchdog(clients: list[Client], timeout: float) -> None:
    """Fail every request that has waited longer than `timeout`; runs until cancelled."""
    while True:
        await asyncio.sleep(min(0.5, timeout / 4))
        now = time.monotonic()
        for client in clients:
            conn = client.conn
            if conn is not None and conn.busy_since and now - conn.busy_since > timeout:
                conn.expire()


async def connect(port: int, timeout: float, headers: dict[str, str] | None = None) -> HttpConnection:
    loop = asyncio.get_running_loop()
    try:
        _, conn = await asyncio.wait_for(
            loop.create_connection(lambda: HttpConnection(port, timeout, headers), HOST, port), timeout
        )
    except TimeoutError:
        raise TimeoutError(f"no connection within {timeout:g} s") from None
    return conn


def encode_chat(text: str) -> str:
    """Client-side escaping of free text: `@` to `@A` first, then `/` to `@S` (URL-encoding comes later)."""
    return text.replace("@", "@A").replace("/", "@S")


def parse_head(body: bytes) -> tuple[int, int] | None:
    """(j, k) of `ok/m<i>.<j>.<k>/.../end`, or None when the reply is not a well-formed `ok` reply."""
    if not (body.startswith(b"ok/m") and body.endswith(b"/end")):
        return None
    slash = body.find(b"/", 4)
    numbers = body[4:slash].split(b".")
    if len(numbers) != 3 or not all(n.isdigit() for n in numbers):
        return None
    return int(numbers[1]), int(numbers[2])


# --- one worker process ------------------------------------------------------------------------------


@dataclass
class Plan:
    """What one worker process drives; times are time.monotonic(), the same clock in every process."""

    scenario: str  # "guests", "empty", or "hello" (empty polls of "/" on any server: no login)
    port: int
    indices: list[int]  # global client numbers of this worker, from 1
    total: int  # clients across all workers
    login_concurrency: int  # logins in flight at once in this worker
    seconds: float
    chat_rate: float
    timeout: float
    deadline: float  # nothing runs past this, whatever happens
    seed: int


@dataclass
class Stats:
    """What one worker measured; plain lists and numbers so that it pickles back to the main process."""

    latencies: list[float] = field(default_factory=list)  # seconds, polls sent inside the window
    first_latencies: list[float] = field(default_factory=list)  # each client's first poll: the catch-up
    other_latencies: list[float] = field(default_factory=list)  # the other polls before the window
    login_latencies: list[float] = field(default_factory=list)
    login_began: float = math.inf
    login_ended: float = 0.0
    logins: int = 0
    replies: int = 0  # good replies to polls sent inside the window
    reply_bytes: int = 0
    errors: int = 0
    early_errors: int = 0  # errors before the window
    examples: list[str] = field(default_factory=list)
    chat_sent: int = 0
    chat_in_window: int = 0
    resent: int = 0
    unacknowledged: int = 0
    missed_slots: int = 0  # once-a-second slots skipped because the previous reply was still out
    cpu_total: float = 0.0  # process_time() of the whole worker
    cpu_window: float = 0.0  # process_time() spent inside the measured window
    wall_total: float = 0.0

    def error(self, in_window: bool, what: str) -> None:
        self.errors += 1
        if not in_window:
            self.early_errors += 1
        if len(self.examples) < EXAMPLES_KEPT:
            self.examples.append(("" if in_window else "[before the window] ") + what)


class Window:
    """The measured interval; open-ended until the main process has seen every client ready."""

    def __init__(self) -> None:
        self.start = math.inf
        self.end = math.inf


class Countdown:
    """A future that completes once every client has passed a point (or given up on the way)."""

    def __init__(self, clients: int) -> None:
        self._waiting = clients
        self._arrived: set[int] = set()
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def arrive(self, index: int) -> None:
        if index not in self._arrived:
            self._arrived.add(index)
            if len(self._arrived) == self._waiting and not self.done.done():
                self.done.set_result(None)


@dataclass
class Shared:
    """What a worker's clients share: the window, the go signal for polling, the two countdowns."""

    plan: Plan
    stats: Stats
    window: Window
    rng: random.Random
    login_gate: asyncio.Semaphore
    logged_in: Countdown
    ready: Countdown
    polling: asyncio.Future[float]  # when polling begins: after every client of every worker is in


class Client:
    """One simulated player: its own connection, the stream counters j and k, its numbered commands."""

    def __init__(self, index: int, shared: Shared) -> None:
        self.shared = shared
        self.plan = shared.plan
        self.stats = shared.stats
        self.window = shared.window
        prefix = "g" if self.plan.scenario == "guests" else "e"
        self.index = index
        self.secret = f"{prefix}{index}"
        self.nick = f"*{prefix}{index}"
        self.conn: HttpConnection | None = None
        self.seen = 0
        self.polls = 0
        self.commands: list[str] = []
        self.acknowledged = 0
        self.sent_up_to = 0

    async def _get(self, target: str) -> tuple[int, bytes]:
        if self.conn is None or self.conn.closed:
            self.conn = await connect(self.plan.port, self.plan.timeout)
        return await self.conn.get(target)

    def _drop(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    async def login(self) -> bool:
        nick = quote(self.nick, safe="")
        target = f"/a.kropki?co=guestLogin&idGracza={self.secret}&opis={nick}&lang=en"
        self.stats.login_began = min(self.stats.login_began, time.monotonic())
        sent = time.perf_counter()
        try:
            status, body = await self._get(target)
        except (OSError, TimeoutError, ValueError) as failure:
            self._drop()
            self.stats.error(False, f"login {self.nick}: {failure!r}")
            return False
        finally:
            self.stats.login_ended = max(self.stats.login_ended, time.monotonic())
        if status != 200 or body:
            self.stats.error(False, f"login {self.nick}: HTTP {status} {body[:120]!r}")
            return False
        self.stats.login_latencies.append(time.perf_counter() - sent)
        self.stats.logins += 1
        return True

    def _maybe_chat(self, in_window: bool) -> None:
        if self.plan.chat_rate and self.shared.rng.random() < self.plan.chat_rate:
            number = len(self.commands) + 1
            text = encode_chat(f"load {self.index}.{number} @ home/away")
            self.commands.append(f"c{number}.0.{text}")
            self.stats.chat_sent += 1
            self.stats.chat_in_window += in_window

    async def poll(self, in_window: bool) -> bool:
        """One getMsg with every command above k; True when a well-formed reply came back."""
        pending = self.commands[self.acknowledged :]
        self.stats.resent += max(0, self.sent_up_to - self.acknowledged)
        self.sent_up_to = len(self.commands)
        commands = quote("/".join(pending), safe="") if pending else "x"
        target = f"/a.kropki?co=getMsg&playerId={self.secret}&msgNo={self.seen}&msgFromClient={commands}"
        hello = self.plan.scenario == "hello"
        if hello:
            target = "/"
        self.polls += 1
        sent = time.perf_counter()
        try:
            status, body = await self._get(target)
        except (OSError, TimeoutError, ValueError) as failure:
            self._drop()
            self.stats.error(in_window, f"poll {self.nick}: {failure!r}")
            return False
        latency = time.perf_counter() - sent
        head = (self.seen, self.acknowledged) if hello else parse_head(body)
        if head is None or status != 200:
            self.stats.error(in_window, f"poll {self.nick}: HTTP {status} {body[:120]!r}")
            return False
        self.seen, processed = head
        self.acknowledged = max(self.acknowledged, processed)
        if in_window:
            self.stats.latencies.append(latency)
            self.stats.replies += 1
            self.stats.reply_bytes += len(body)
        elif self.polls == 1:
            self.stats.first_latencies.append(latency)
        else:
            self.stats.other_latencies.append(latency)
        return True

    async def run(self) -> None:
        """Log in, wait until every client is in, then poll until the window (or the deadline) ends."""
        shared = self.shared
        try:
            if self.plan.scenario == "hello":
                logged_in = True  # nothing to log in to
            else:
                async with shared.login_gate:
                    logged_in = await self.login()
            shared.logged_in.arrive(self.index)
            if not logged_in:
                return
            begin = await shared.polling
            if self.plan.scenario == "guests":
                await self._poll_each_second(begin)
            else:
                await _sleep_until(begin)
                await self._poll_tight()
        finally:
            shared.logged_in.arrive(self.index)
            shared.ready.arrive(self.index)
            self._drop()
            self.stats.unacknowledged += len(self.commands) - self.acknowledged

    async def _poll_each_second(self, begin: float) -> None:
        base = begin + (self.index - 1) / self.plan.total  # phases spread evenly over the second
        last = -1
        while True:
            slot_number = max(last + 1, math.ceil(time.monotonic() - base))
            slot = base + slot_number
            if slot >= min(self.window.end, self.plan.deadline):
                return
            if last >= 0 and slot >= self.window.start:
                self.stats.missed_slots += slot_number - last - 1
            last = slot_number
            await _sleep_until(slot)
            in_window = self.window.start <= slot < self.window.end
            self._maybe_chat(in_window)
            await self.poll(in_window)
            self.shared.ready.arrive(self.index)

    async def _poll_tight(self) -> None:
        """Back to back, but never faster than EMPTY_POLLS_PER_CLIENT (a late reply is not made up for)."""
        interval = 1.0 / EMPTY_POLLS_PER_CLIENT
        due = time.monotonic()
        while True:
            now = time.monotonic()
            if now >= min(self.window.end, self.plan.deadline):
                return
            if not await self.poll(self.window.start <= now):
                await asyncio.sleep(0.1)  # a dead server must not turn this loop into a busy spin
            self.shared.ready.arrive(self.index)
            due = max(due + interval, time.monotonic())
            await _sleep_until(due)


async def _sleep_until(when: float) -> None:
    delay = when - time.monotonic()
    if delay > 0:
        await asyncio.sleep(delay)


async def _wait_until(future: asyncio.Future[Any], deadline: float) -> bool:
    try:
        await asyncio.wait_for(asyncio.shield(future), max(0.0, deadline - time.monotonic()))
        return True
    except TimeoutError:
        return False


async def drive(plan: Plan, pipe: Connection) -> Stats:
    """Run this worker's clients through login, catch-up and the window, in step with the main process."""
    loop = asyncio.get_running_loop()
    started_wall, started_cpu = time.monotonic(), time.process_time()
    orders: dict[str, asyncio.Future[float]] = {"poll": loop.create_future(), "start": loop.create_future()}

    def on_message() -> None:
        try:
            kind, value = pipe.recv()
        except EOFError:  # the main process is gone: nobody will read the results
            os._exit(2)
        if kind in orders and not orders[kind].done():
            orders[kind].set_result(value)

    shared = Shared(
        plan,
        Stats(),
        Window(),
        random.Random(plan.seed),
        asyncio.Semaphore(plan.login_concurrency),
        Countdown(len(plan.indices)),
        Countdown(len(plan.indices)),
        orders["poll"],
    )
    stats, window = shared.stats, shared.window
    clients = [Client(index, shared) for index in plan.indices]
    loop.add_reader(pipe.fileno(), on_message)
    tasks = [asyncio.create_task(client.run()) for client in clients]
    guard = asyncio.create_task(watchdog(clients, plan.timeout))
    if await _wait_until(shared.logged_in.done, plan.deadline):
        pipe.send(("logged_in", stats.logins))
    if await _wait_until(orders["poll"], plan.deadline) and await _wait_until(
        shared.ready.done, plan.deadline
    ):
        pipe.send(("ready", None))
    if await _wait_until(orders["start"], plan.deadline):
        window.start = orders["start"].result()
        window.end = window.start + plan.seconds
        await _sleep_until(window.start)
        cpu_start = time.process_time()
        await _sleep_until(window.end)
        stats.cpu_window = time.process_time() - cpu_start
    else:  # the main process gave up: stop everyone
        window.end = time.monotonic()
        if not orders["poll"].done():
            orders["poll"].set_result(window.end)
    await asyncio.gather(*tasks)
    guard.cancel()
    loop.remove_reader(pipe.fileno())
    os.set_blocking(pipe.fileno(), True)  # uvloop's add_reader made it non-blocking; the result is large
    stats.cpu_total = time.process_time() - started_cpu
    stats.wall_total = time.monotonic() - started_wall
    return stats


def run_generator(main: Coroutine[Any, Any, T]) -> T:
    """Run a generator process's coroutine on uvloop where it is installed, as the server's own loop.

    The generator shares the machine with the server: on the standard loop, picking the ready sockets
    out of epoll's answer in Python took half of a generator process's CPU, about 20% of a core per
    1,000 games that the server could not have (issue 19.2)."""
    if not UVLOOP_INSTALLED:
        return asyncio.run(main)
    import uvloop

    return uvloop.run(main)


def generator_loop() -> str:
    """The loop `run_generator` runs on, for the report's first line."""
    return "uvloop" if UVLOOP_INSTALLED else "asyncio"


def worker_main(plan: Plan, pipe: Connection) -> None:
    """Entry point of a generator process; Ctrl-C is the main process's business."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        pipe.send(("result", run_generator(drive(plan, pipe))))
    except BaseException:
        pipe.send(("failed", traceback.format_exc()))


# --- the main process: workers, sampling, report -------------------------------------------------------


def machine_cpu_seconds() -> float:
    """Busy CPU time of all cores (user, nice, system, irq, softirq, steal) from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / CLK_TCK


@dataclass
class Run:
    """What the main process saw of one scenario run."""

    stats: list[Stats]
    times: dict[str, float]  # monotonic: logged_in, polling, ready, start, end
    rss: list[float]  # MB, one sample a second from just after the server answered
    server_cpu_window: float
    machine_cpu_window: float  # busy CPU seconds of the whole machine, all cores


@dataclass
class Phase:
    """What to order the workers once every one of them reached a phase, and what to wait for next."""

    order: tuple[str, float]  # sent to every worker
    deadline: float  # monotonic: by then the next phase must be reached (or the workers done)
    goal: str  # for "the load generator did not {goal} in time"
    sample_from: float | None = None  # sample the server from then on (the window's edges too)


@contextlib.contextmanager
def worker_processes(
    target: Callable[[Any, Connection], None], plans: list[Any]
) -> Iterator[list[Connection]]:
    """One process per plan, each with a pipe to this one; joined (or terminated) at the end."""
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no inherited handlers or state
    pipes: list[Connection] = []
    processes = []
    try:
        for plan in plans:
            parent, child = context.Pipe()
            process = context.Process(target=target, args=(plan, child), daemon=True)
            process.start()
            child.close()
            pipes.append(parent)
            processes.append(process)
        yield pipes
    finally:
        for process in processes:
            process.join(2.0)
            if process.is_alive():
                process.terminate()
                process.join(2.0)


def loop_ns(rounds: int) -> float:
    """Nanoseconds of thread CPU time a round of a fixed pure-Python loop (HostSpeed, interpreters)."""
    started = time.thread_time_ns()
    total = 0
    for number in range(rounds):
        total += number * number
    return (time.thread_time_ns() - started) / rounds


def interpreters(server_python: str, samples: int = 10, turns: int = 3) -> str:
    """The server's interpreter beside the load generator's, on HostSpeed's loop, measured taking turns.

    CPython builds differ as much as the host's hours do: on this project's machine pyenv's default build
    (no profile-guided or link-time optimisation) ran the loop about a third slower than Debian's
    python3.11, and the server took about 15% more CPU a move on it (docs/operations.md, "The Python
    interpreter"). A run's figures are read for the interpreter that ran the server."""
    code = f"import time\n{inspect.getsource(loop_ns)}\n"
    code += f"print(min(loop_ns({HostSpeed.ROUNDS}) for _ in range({samples})))"
    least: dict[str, float] = {}
    for _ in range(turns):
        for python in dict.fromkeys((server_python, sys.executable)):
            run = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True, timeout=60)
            least[python] = min(least.get(python, math.inf), float(run.stdout))
    line = f"interpreters on the host speed's loop (ns a round, least of {samples * turns}, less is faster): "
    if len(least) == 1:
        return line + f"server and load generator {least[server_python]:.0f}"
    return line + f"server's {least[server_python]:.0f}, load generator's {least[sys.executable]:.0f}"


class HostSpeed:
    """How fast the machine runs Python, second by second: a fixed pure-Python loop's thread CPU time.

    On this project's 2-vCPU machine a loop like this one took 0.49-0.73 s of CPU in twenty runs on the
    idle machine (x1.51), and the server's CPU per poll under the same load varied about as much between
    runs of benchmarks/games.py (docs/performance.md, the twelfth session). A run's figures are read
    beside this one."""

    ROUNDS = 100_000  # a few milliseconds: sampled once a second, it takes well under 1% of a core

    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []  # (time.monotonic(), nanoseconds a round)

    def sample(self) -> None:
        self.samples.append((time.monotonic(), loop_ns(self.ROUNDS)))

    def summary(self, start: float, end: float) -> str:
        rounds = sorted(ns for at, ns in self.samples if start <= at <= end)
        if not rounds:
            return "host speed: not sampled in the window"
        return (
            f"host speed in the window (a fixed pure-Python loop, {len(rounds)} samples, less is faster): "
            f"ns a round min {rounds[0]:.0f} p50 {percentile(rounds, 50):.0f} max {rounds[-1]:.0f}"
        )


def step_workers(
    pipes: list[Connection],
    server: Server,
    samples: list[float],
    phases: tuple[str, ...],
    deadline: float,
    goal: str,
    on_phase: Callable[[str, dict[str, float]], Phase],
    speed: HostSpeed | None = None,
    at_start: Callable[[], None] | None = None,
) -> tuple[list[Any], dict[str, float], dict[str, tuple[float, float]]]:
    """Collect the workers' phase marks and results, sampling the server's RSS into samples (and the
    host's speed into `speed`) once a second.

    When every worker reached one of phases, times[phase] is set and on_phase(phase, times) says what
    to order next; it sets times["start"] and times["end"] (the window), at whose moments the server's
    and the machine's CPU seconds are recorded (and `at_start` runs, at the first). Returns the results
    in worker order, times and those CPU records (see cpu_in_window)."""
    results: dict[int, Any] = {}
    arrived: dict[str, set[int]] = {phase: set() for phase in phases}
    times: dict[str, float] = {"start": math.inf, "end": math.inf}
    cpu_at: dict[str, tuple[float, float]] = {}
    next_sample = time.monotonic() + 1.0
    while len(results) < len(pipes):
        now = time.monotonic()
        if now >= next_sample:
            samples.append(server.rss_mb())
            if speed is not None:
                speed.sample()
            next_sample += 1.0
        for mark in ("start", "end"):
            if mark not in cpu_at and now >= times[mark]:
                cpu_at[mark] = (server.cpu_seconds(), machine_cpu_seconds())
                if mark == "start" and at_start is not None:
                    at_start()
        if now > deadline:
            raise RuntimeError(f"the load generator did not {goal} in time")
        due = [next_sample, deadline] + [times[m] for m in ("start", "end") if m not in cpu_at]
        pending = [p for i, p in enumerate(pipes) if i not in results]
        for pipe in wait(pending, max(0.0, min(due) - time.monotonic())):
            assert isinstance(pipe, Connection)
            number = pipes.index(pipe)
            try:
                kind, value = pipe.recv()
            except EOFError:
                raise RuntimeError(f"load generator {number} died") from None
            if kind == "failed":
                raise RuntimeError(f"load generator {number} failed:\n{value}")
            if kind == "result":
                results[number] = value
                continue
            arrived[kind].add(number)
            if len(arrived[kind]) < len(pipes):
                continue
            times[kind] = time.monotonic()
            phase = on_phase(kind, times)
            if phase.sample_from is not None:
                next_sample = phase.sample_from
            deadline, goal = phase.deadline, phase.goal
            for each in pipes:
                each.send(phase.order)
    return [results[i] for i in range(len(pipes))], times, cpu_at


def cpu_in_window(cpu_at: dict[str, tuple[float, float]], server: Server) -> tuple[float, float]:
    """The server's and the whole machine's busy CPU seconds in the window (NaN if it never started)."""
    end = cpu_at.get("end") or (server.cpu_seconds(), machine_cpu_seconds())
    start = cpu_at.get("start", (math.nan, math.nan))
    return end[0] - start[0], end[1] - start[1]


def run_workers(plans: list[Plan], server: Server, args: argparse.Namespace) -> Run:
    """Start one process per plan, step them through the phases, sample the server once a second."""
    rss = [server.rss_mb()]
    clients = plans[0].total

    def on_phase(kind: str, times: dict[str, float]) -> Phase:
        if kind == "logged_in":
            times["polling"] = time.monotonic() + 0.1
            deadline = times["polling"] + 60.0 + 0.01 * clients
            return Phase(("poll", times["polling"]), deadline, "get a first reply for every client")
        times["start"] = time.monotonic() + args.settle
        times["end"] = times["start"] + args.seconds
        goal = "finish within 60 s of the window's end"
        return Phase(("start", times["start"]), times["end"] + 60.0, goal, sample_from=times["start"])

    with worker_processes(worker_main, plans) as pipes:
        deadline, goal = time.monotonic() + 60.0 + 0.05 * clients, "log every client in"
        phases = ("logged_in", "ready")
        results, times, cpu_at = step_workers(pipes, server, rss, phases, deadline, goal, on_phase)
        server_cpu, machine_cpu = cpu_in_window(cpu_at, server)
        rss.append(server.rss_mb())
        return Run(results, times, rss, server_cpu, machine_cpu)


def make_plans(args: argparse.Namespace, scenario: str, port: int, clients: int) -> list[Plan]:
    """Clients dealt round-robin to the workers, so that every worker has a share of every phase."""
    workers = max(1, min(args.workers, clients))
    deadline = time.monotonic() + 240.0 + 0.06 * clients + args.settle + args.seconds
    return [
        Plan(
            scenario,
            port,
            list(range(1 + number, clients + 1, workers)),
            clients,
            max(1, args.login_concurrency // workers),
            args.seconds,
            args.chat_rate if scenario == "guests" else 0.0,
            args.timeout,
            deadline,
            args.seed + number,
        )
        for number in range(workers)
    ]


def percentile(ordered: list[float], p: float) -> float:
    """Nearest-rank percentile of already sorted values, in the same unit."""
    if not ordered:
        return math.nan
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def ms(ordered: list[float], *ps: float) -> str:
    parts = [f"p{p:g} {percentile(ordered, p) * 1000:.1f}" for p in ps]
    return " ".join(parts) + (f" max {ordered[-1] * 1000:.1f}" if ordered else "")


def total(run: Run, name: str) -> Any:
    return sum(getattr(s, name) for s in run.stats)


def merged(run: Run, name: str) -> list[float]:
    return sorted(x for s in run.stats for x in getattr(s, name))


def report_before(run: Run, clients: int) -> None:
    """The phases before the window: logins (nobody polls yet), then every client's first poll."""
    began = min(s.login_began for s in run.stats)
    took = max(s.login_ended for s in run.stats) - began
    logins = total(run, "logins")
    print(
        f"logins: {logins} of {clients} in {took:.1f} s = {logins / max(took, 1e-9):.0f}/s (nobody polling "
        f"yet); login ms {ms(merged(run, 'login_latencies'), 50, 99)}"
    )
    catch_up = run.times.get("ready", math.nan) - run.times.get("polling", math.nan)
    print(
        f"first polls (catch-up since login, not measured): ms {ms(merged(run, 'first_latencies'), 50, 99)}; "
        f"every client had its first reply {catch_up:.1f} s after polling began"
    )
    others = merged(run, "other_latencies")
    print(f"other polls before the window: {len(others)}, ms {ms(others, 50, 99)}")


def report_common(run: Run, server: Server, args: argparse.Namespace) -> None:
    errors = total(run, "errors")
    print(f"errors: {errors} ({total(run, 'early_errors')} of them before the window)")
    for example in [e for s in run.stats for e in s.examples][:EXAMPLES_KEPT]:
        print(f"    {example}")
    rss = run.rss
    print(f"server RSS MB: start {rss[0]:.1f} peak {max(rss):.1f} end {rss[-1]:.1f}")
    server_cpu = run.server_cpu_window
    print(f"server CPU in the window: {server_cpu:.1f} s = {server_cpu / args.seconds:.0%} of one core")
    cpu_window = total(run, "cpu_window")
    cpu_all, wall = total(run, "cpu_total"), max(s.wall_total for s in run.stats)
    print(
        f"load generator CPU ({len(run.stats)} process{'es' if len(run.stats) > 1 else ''}): "
        f"{cpu_window:.1f} s in the window = {cpu_window / args.seconds:.0%} of one core; "
        f"{cpu_all:.1f} s over {wall:.1f} s wall in all"
    )
    others = max(0.0, run.machine_cpu_window - server_cpu - cpu_window)  # clock ticks can make it dip below 0
    print(
        f"rest of the machine in the window: {others:.1f} CPU s = {others / args.seconds:.0%} of one core "
        "(kernel work not charged to a process, this script's main process, other programs)"
    )
    if others / args.seconds > 0.25:
        print("NOTE: other work kept the CPUs busy during the window; these figures may be pessimistic")
    print(f"server log: {server.log_summary()}")
    if server.exited_early is not None:
        print(
            f"the server exited on its own with code {server.exited_early}; last lines:\n{server.log_tail()}"
        )


def report_guests(run: Run, server: Server, args: argparse.Namespace) -> bool:
    guests = args.guests
    report_before(run, guests)
    latencies = merged(run, "latencies")
    replies = total(run, "replies")
    print(f"guests: {guests}")
    print(f"duration: {args.seconds:g} s measured")
    print(
        f"replies: {replies} = {replies / args.seconds:.1f} replies/s "
        f"(expected {guests}/s), mean reply {total(run, 'reply_bytes') / max(1, replies):.0f} bytes"
    )
    print(f"latency ms: {ms(latencies, 50, 90, 99)}")
    print(f"missed once-a-second slots (previous reply still out): {total(run, 'missed_slots')}")
    print(
        f"chat lines sent: {total(run, 'chat_sent')} ({total(run, 'chat_in_window')} in the window), "
        f"resends: {total(run, 'resent')}, unacknowledged at the end: {total(run, 'unacknowledged')}"
    )
    report_common(run, server, args)
    p99 = percentile(latencies, 99) * 1000
    errors = total(run, "errors")
    ok = replies > 0 and p99 < TARGET_P99_MS and errors == 0
    print(
        f"{'PASS' if ok else 'FAIL'}: p99 {p99:.1f} ms (target < {TARGET_P99_MS:g} ms), {errors} errors "
        "(target 0)"
    )
    return ok


def report_empty(run: Run, server: Server, args: argparse.Namespace) -> bool:
    report_before(run, args.clients)
    latencies = merged(run, "latencies")
    replies = total(run, "replies")
    rate = replies / args.seconds
    print(
        f"clients: {args.clients} polling back to back with msgFromClient=x, each at most "
        f"{EMPTY_POLLS_PER_CLIENT:g} a second (at most {args.clients * EMPTY_POLLS_PER_CLIENT:,.0f} in all)"
    )
    print(f"duration: {args.seconds:g} s measured")
    print(f"polls: {replies} = {rate:,.0f} polls/s")
    print(f"latency ms: {ms(latencies, 50, 90, 99)}")
    report_common(run, server, args)
    errors = total(run, "errors")
    ok = rate >= TARGET_EMPTY_RATE and errors == 0
    print(
        f"{'PASS' if ok else 'FAIL'}: {rate:,.0f} empty polls/s (target >= {TARGET_EMPTY_RATE:,.0f}), "
        f"{errors} errors (target 0)"
    )
    return ok


def run_scenario(scenario: str, args: argparse.Namespace, workdir: Path) -> bool:
    """A fresh server per scenario, so that one scenario's players and memory do not skew the other."""
    profile = None
    if args.profile:
        profile = Path(args.profile).resolve()
        if args.scenario == "both":
            profile = profile.with_name(f"{profile.stem}.{scenario}{profile.suffix or '.prof'}")
    server = Server(args.python, args.log_level, workdir, profile)
    print(f"\n== scenario {scenario} ==")
    try:
        server.start()
        level_note = "on" if args.log_level in ("DEBUG", "INFO") else "off"
        print(
            f"server: pid {server.pid}, port {server.port}, log level {args.log_level} (the access log "
            f"writes at INFO, so it is {level_note})" + (f", under cProfile -> {profile}" if profile else "")
        )
        clients = args.guests if scenario == "guests" else args.clients
        run = run_workers(make_plans(args, scenario, server.port, clients), server, args)
    finally:
        server.stop()
    ok = report_guests(run, server, args) if scenario == "guests" else report_empty(run, server, args)
    if profile is not None and profile.exists():
        print(f"server profile written to {profile}; top {args.profile_top} by own time:")
        pstats.Stats(str(profile), stream=sys.stdout).sort_stats("tottime").print_stats(args.profile_top)
    return ok


def server_revision(root: Path = REPO) -> str:
    """The commit under test, and whether server/ differs from it: figures mean little without it."""
    git = ["git", "--no-optional-locks", "-C", str(root)]  # read-only: no index refresh, no locks
    try:
        commit = subprocess.run(
            [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10
        )
        dirty = subprocess.run(
            [*git, "status", "--porcelain", "--untracked-files=no", "--", "server"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown (no git)"
    if commit.returncode != 0:
        return "unknown (not a git checkout)"
    return commit.stdout.strip() + (" with uncommitted changes in server/" if dirty.stdout.strip() else "")


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def stop_as_on_ctrl_c() -> None:
    """SIGTERM to a benchmark runs the same clean-up as Ctrl-C (its servers stopped in order), and so
    does Ctrl-C when a shell started it in the background (which ignores SIGINT)."""
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def argument_parser(doc: str | None) -> argparse.ArgumentParser:
    """A benchmark's command line: its docstring's first paragraph, and every default in --help."""
    assert doc is not None
    return argparse.ArgumentParser(
        description=doc.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )


def fill_sizes(args: argparse.Namespace, *tables: dict[str, Any]) -> None:
    """Each size the command line left out (None) from the benchmark's tables (full, or --quick)."""
    for table in tables:
        for name, value in table.items():
            if getattr(args, name) is None:
                setattr(args, name, value)


def add_server_arguments(parser: argparse.ArgumentParser) -> None:
    """Options every benchmark that starts a server and loads it over HTTP shares."""
    venv_python = REPO / ".venv" / "bin" / "python"
    add = parser.add_argument
    add("--timeout", type=float, default=10.0, help="seconds before a request counts as failed")
    add(
        "--log-level",
        type=str.upper,
        default="WARNING",
        choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"),
        help="server log level; INFO turns the access log on",
    )
    add(
        "--python",
        default=str(venv_python if venv_python.exists() else sys.executable),
        help="interpreter that runs the server",
    )
    add("--seed", type=int, default=1)


def main() -> int:
    parser = argument_parser(__doc__)
    add = parser.add_argument
    add("--scenario", choices=("guests", "empty", "both"), default="both")
    add("--seconds", type=float, default=30.0, help="length of the measured window")
    add("--guests", type=int, default=2000, help="guests in the 'guests' scenario")
    add("--chat-rate", type=float, default=0.02, help="chance that a guest's poll carries a chat line")
    add("--clients", type=int, default=512, help="back-to-back pollers in the 'empty' scenario")
    add("--login-concurrency", type=int, default=8, help="logins in flight at once before polling begins")
    add("--settle", type=float, default=3.0, help="seconds between every client's first reply and the window")
    add("--workers", type=int, default=1, help="load generator processes")
    add("--profile", metavar="FILE", help="run the server under cProfile and write its stats to FILE")
    add("--profile-top", type=int, default=25, help="profile rows printed")
    add_server_arguments(parser)
    args = parser.parse_args()
    if min(args.seconds, args.guests, args.clients, args.login_concurrency, args.workers) <= 0:
        parser.error("--seconds, --guests, --clients, --login-concurrency and --workers must be positive")
    if not 0 <= args.chat_rate <= 1 or args.settle < 0 or args.timeout <= 0:
        parser.error("--chat-rate is a probability from 0 to 1, --settle >= 0, --timeout > 0")

    stop_as_on_ctrl_c()
    print(
        f"stream benchmark: {os.cpu_count()} CPUs, server interpreter {args.python}, "
        f"load generator {sys.executable} in {args.workers} process(es)"
    )
    print(f"server code: commit {server_revision()}")
    print(interpreters(args.python))
    results = []
    try:
        with tempfile.TemporaryDirectory(prefix="kropki-stream-") as workdir:
            for scenario in ("guests", "empty") if args.scenario == "both" else (args.scenario,):
                results.append(run_scenario(scenario, args, Path(workdir)))
    except KeyboardInterrupt:
        print("\ninterrupted; the server was stopped")
        return 130
    except RuntimeError as failure:
        print(f"benchmark failed: {failure}")
        return 2
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
