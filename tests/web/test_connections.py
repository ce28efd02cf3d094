"""The connection cap on a real socket: what is closed first to make room, long polls answered early,
refusals, the header timeout, and, with a real `serve` process, a player who still gets in during a flood."""

from __future__ import annotations

import asyncio
import gzip
import logging
import os
import resource
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from prometheus_client import Counter

from server.app import create_app
from server.config import Settings
from server.hub.hub import Hub
from server.web.accesslog import RedactingAccessLogger
from server.web.common import HUB_KEY
from server.web.connections import (
    FILE_RESERVE,
    KEEPALIVE_TIMEOUT,
    ConnectionGuard,
    GuardedAppRunner,
    connection_cap,
    watched,
)
from server.web.metrics import METRICS_KEY, Metrics
from tests.ports import free_port
from tests.test_cli import REPO_ROOT, wait_for_healthz
from tests.web.zagram import parse_reply


@asynccontextmanager
async def guarded(app: web.Application, cap: int, header_timeout: float = 15.0) -> AsyncIterator[Served]:
    guard = ConnectionGuard(cap, app[METRICS_KEY], header_timeout=header_timeout)
    runner = GuardedAppRunner(
        app, guard, access_log_class=RedactingAccessLogger, keepalive_timeout=KEEPALIVE_TIMEOUT
    )
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        served = Served(guard, runner.addresses[0][1], app[METRICS_KEY])
        yield served
    finally:
        for client in served.clients:
            client.writer.transport.abort()
        await runner.cleanup()


class Served:
    def __init__(self, guard: ConnectionGuard, port: int, metrics: Metrics) -> None:
        self.guard = guard
        self.port = port
        self.metrics = metrics
        self.clients: list[Raw] = []

    async def connect(self) -> Raw:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.clients.append(Raw(reader, writer))
        return self.clients[-1]

    async def settled(self, condition: Callable[[ConnectionGuard], bool]) -> None:
        """Wait (2 s at most) until the server has seen what the test's clients did."""
        deadline = time.monotonic() + 2
        while not condition(self.guard):
            assert time.monotonic() < deadline, "the server did not get there"
            await asyncio.sleep(0.005)

    async def log_in(self, *secrets: tuple[str, str]) -> None:
        """Guests log in on a connection of their own, closed before the test goes on."""
        before = len(self.guard.open)
        client = await self.connect()
        for secret, nick in secrets:
            query = f"co=guestLogin&idGracza={secret}&opis=%2A{nick[1:]}&lang=en"
            assert (await client.request(f"/a.kropki?{query}"))[2] == ""
        client.writer.transport.abort()
        await self.settled(lambda guard: len(guard.open) == before)

    async def long_poll(self, secret: str = "") -> Raw:
        """A poll that waits: nothing happens in the lobby or to the player meanwhile."""
        polls = len(self.guard.polls)
        client = await self.connect()
        _, _, body = await client.request(f"/a.kropki?co=getMsg&msgNo=0&idGracza={secret}")
        last = parse_reply(body).last
        client.send(f"/a.kropki?co=getMsg&msgNo={last}&wait=30&idGracza={secret}")
        await self.settled(lambda guard: len(guard.polls) == polls + 1)
        return client


class Raw:
    """HTTP/1.1 by hand, to send half a request or hold a connection without a word."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def send(self, target: str) -> None:
        self.writer.write(f"GET {target} HTTP/1.1\r\nHost: kropki\r\n\r\n".encode())

    async def answer(self, timeout: float = 10.0) -> tuple[int, dict[str, str], str]:
        async with asyncio.timeout(timeout):
            head = (await self.reader.readuntil(b"\r\n\r\n")).decode()
            status_line, *lines = head.strip().split("\r\n")
            headers = {name.lower(): value for name, _, value in (line.partition(": ") for line in lines)}
            body = await self.reader.readexactly(int(headers["content-length"]))
        return int(status_line.split()[1]), headers, body.decode()

    async def request(self, target: str) -> tuple[int, dict[str, str], str]:
        self.send(target)
        return await self.answer()

    async def closed(self, timeout: float = 10.0) -> bool:
        """True when the server closes the connection within `timeout`, False when it stays open.

        The defaults here are long because a test's process shares a loaded host (`make test` runs four
        suites at once on two CPUs): CI once waited 2 s for a /healthz answer. Only a wait that must
        end without an answer or a close is short, and a stall there cannot fail the test."""
        try:
            async with asyncio.timeout(timeout):
                return await self.reader.read() == b""
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False


def count(counter: Counter, **labels: str) -> float:
    return sum(
        sample.value
        for family in counter.collect()
        for sample in family.samples
        if sample.name.endswith("_total") and sample.labels == labels
    )


async def test_the_connection_idle_longest_is_closed_first(settings: Settings) -> None:
    async with guarded(create_app(settings), cap=3) as served:
        a, b, c = [await served.connect() for _ in range(3)]
        for client in (a, b, c, b):  # b answered last: idle since the most recent answer
            assert (await client.request("/healthz"))[0] == 200

        d = await served.connect()
        assert await a.closed()
        e = await served.connect()
        assert await c.closed()

        for client in (b, d, e):
            assert (await client.request("/healthz"))[0] == 200
        assert count(served.metrics.connections_closed, reason="idle") == 2


async def test_a_request_trickling_in_is_closed_before_any_long_poll(settings: Settings) -> None:
    async with guarded(create_app(settings), cap=3) as served:
        first_poll = await served.long_poll()
        slow = await served.connect()
        slow.writer.write(b"GET /healthz HTTP/1.1\r\nHost: kro")  # and no more
        second_poll = await served.long_poll()

        newcomer = await served.connect()

        assert await slow.closed()
        assert not await first_poll.closed(0.2) and not await second_poll.closed(0.01)
        assert (await newcomer.request("/healthz"))[0] == 200
        assert count(served.metrics.connections_closed, reason="slow") == 1


async def test_the_longest_waiting_long_poll_is_answered_at_once_then_closed(settings: Settings) -> None:
    async with guarded(create_app(settings), cap=2) as served:
        await served.log_in(("idOfAla1", "*Ala"), ("idOfBob2", "*Bob"))
        first_poll = await served.long_poll("idOfAla1")
        second_poll = await served.long_poll("idOfBob2")
        started = time.monotonic()

        newcomer = await served.connect()

        status, headers, body = await first_poll.answer()
        assert time.monotonic() - started < 10  # not after its 30 s
        assert status == 200 and headers["connection"] == "close"
        assert parse_reply(body).status == "ok"  # an ordinary answer: the client polls again
        assert await first_poll.closed()
        assert not await second_poll.closed(0.2)
        assert (await newcomer.request("/healthz"))[0] == 200
        assert count(served.metrics.connections_closed, reason="long_poll") == 1


async def test_a_newcomer_is_refused_at_once_when_every_connection_is_busy() -> None:
    release = asyncio.Event()

    async def busy(_request: web.Request) -> web.Response:
        await release.wait()
        return web.Response(text="done")

    app = web.Application(middlewares=[watched])
    app.router.add_get("/busy", busy)
    app[METRICS_KEY] = Metrics(Hub(), {})
    async with guarded(app, cap=2) as served:
        workers = [await served.connect() for _ in range(2)]
        for worker in workers:
            worker.send("/busy")
        await served.settled(lambda guard: not guard.arriving and not guard.idle)

        refused = await served.connect()
        status, headers, body = await refused.answer()

        assert (status, headers["retry-after"], body.strip()) == (
            503,
            "1",
            "Too many connections; try again.",
        )
        assert await refused.closed()
        assert count(served.metrics.connections_refused) == 1
        release.set()
        assert [(await worker.answer())[2] for worker in workers] == ["done", "done"]


def test_a_newcomer_is_refused_on_uvloop_too() -> None:
    """`serve` runs on uvloop, whose transports are not asyncio's classes."""
    uvloop = pytest.importorskip("uvloop")
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(test_a_newcomer_is_refused_at_once_when_every_connection_is_busy())


async def test_requests_whose_headers_are_late_are_closed(settings: Settings) -> None:
    async with guarded(create_app(settings), cap=10, header_timeout=0.5) as served:
        trickling = await served.connect()
        trickling.writer.write(b"GET /healthz HTTP/1.1\r\n")
        silent = await served.connect()
        keeping_alive = await served.connect()
        assert (await keeping_alive.request("/healthz"))[0] == 200

        assert await trickling.closed() and await silent.closed()
        assert not await keeping_alive.closed(0.1)  # idle between requests is not late
        assert (await keeping_alive.request("/healthz"))[0] == 200
        assert count(served.metrics.connections_closed, reason="header_timeout") == 2


def test_the_cap_leaves_files_for_the_database_and_the_log() -> None:
    assert connection_cap(10_000, 65_536) == 10_000
    assert connection_cap(10_000, 1_024) == 1_024 - FILE_RESERVE
    assert connection_cap(20, 1_024) == 20
    assert connection_cap(10_000, 100) == 1  # a tiny limit still serves somebody
    assert connection_cap(10_000, resource.RLIM_INFINITY) == 10_000


# --- a real `serve` process -------------------------------------------------------------------------


def serve(
    tmp_path: Path, *flags: str, files: tuple[int, int] | None = None
) -> tuple[subprocess.Popen[str], int]:
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("KROPKI_")}
    command = [sys.executable, "-m", "server", "serve", "--migrate", "--port", str(port), "--ai-workers", "0"]
    command += ["--db", f"sqlite+aiosqlite:///{tmp_path}/data/k.sqlite3", "--unlimited", "127.0.0.1", *flags]

    def limit_files() -> None:
        if files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, files)

    with (tmp_path / "server.log").open("w") as log:
        process = subprocess.Popen(
            command,
            cwd=REPO_ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=limit_files,
        )
    wait_for_healthz(f"http://127.0.0.1:{port}/healthz", process)
    return process, port


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_the_cap_fits_under_the_open_file_limit_raised_to_the_hard_one(tmp_path: Path) -> None:
    process, _ = serve(tmp_path, files=(300, 400))
    stop(process)

    log = (tmp_path / "server.log").read_text()
    capped = f"connections capped max_connections={400 - FILE_RESERVE} configured=10000 open_files=400"
    assert f"{capped} idle_memory_mb=2" in log  # what 144 idle connections hold, about 11 KB each


def test_a_player_gets_in_and_polls_during_a_flood_of_slow_and_long_polling_connections(
    tmp_path: Path,
) -> None:
    process, port = serve(tmp_path, "--max-connections", "20")
    flood: list[socket.socket] = []
    try:
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/a.kropki?co=getMsg&msgNo=0", timeout=5
        ) as lobby:
            last = parse_reply(lobby.read().decode()).last  # anonymous polls from here on wait for news
        for number in range(120):  # six times the cap: slowloris and long polls, in turns
            attacker = socket.create_connection(("127.0.0.1", port))
            if number % 2:
                attacker.sendall(b"GET /healthz HTTP/1.1\r\nHost: kro")
            else:
                attacker.sendall(
                    f"GET /a.kropki?co=getMsg&msgNo={last}&wait=30 HTTP/1.1\r\nHost: kropki\r\n\r\n".encode()
                )
            flood.append(attacker)
        time.sleep(0.3)

        started = time.monotonic()
        base = f"http://127.0.0.1:{port}/a.kropki?idGracza=p1xq72&"
        with urllib.request.urlopen(base + "co=guestLogin&opis=%2AAla&lang=en", timeout=5) as login:
            assert login.read() == b""
        with urllib.request.urlopen(base + "co=getMsg&msgNo=0&msgFromClient=x", timeout=5) as poll:
            assert parse_reply(poll.read().decode()).status == "ok"
        assert time.monotonic() - started < 1

        still_open = sum(1 for attacker in flood if _open(attacker))
        assert still_open <= 20
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as page:
            metrics = page.read().decode()
        assert 'kropki_connections_closed_total{reason="slow"}' in metrics
        closed = sum(
            float(line.rsplit(" ", 1)[1])
            for line in metrics.splitlines()
            if line.startswith("kropki_connections_closed_total")
        )
        assert closed >= 100
    finally:
        for attacker in flood:
            attacker.close()
        stop(process)

    log = (tmp_path / "server.log").read_text().splitlines()
    assert any("connections capped max_connections=20 configured=20" in line for line in log)
    serving = next(number for number, line in enumerate(log) if "listening on" in line)
    # a line per kind of event (and per request of the player's), not one per connection closed
    assert len(log) - serving < 10, "\n".join(log[serving:])
    assert any("connection closed to make room" in line for line in log)


def _open(connection: socket.socket) -> bool:
    """Whether the server still holds the connection (an ended long poll is answered, then closed)."""
    connection.setblocking(False)
    try:
        while connection.recv(65536):
            pass
    except BlockingIOError:
        return True
    except ConnectionResetError:
        pass
    return False


async def test_polls_are_answered_through_the_front_door_and_timed(client: TestClient) -> None:
    """A poll is an ordinary aiohttp request: the front door's headers, its reply time in /metrics."""
    login = {"co": "guestLogin", "idGracza": "timed1", "opis": "*timed", "lang": "en"}
    assert await (await client.get("/a.kropki", params=login)).text() == ""
    poll = {"co": "getMsg", "idGracza": "timed1", "msgNo": "0"}
    answers = [await client.get("/a.kropki", params=poll) for _ in range(2)]
    answers.append(await client.get("/a.kropki", params=poll, headers={"Expect": "100-continue"}))
    for answer in answers:
        assert (await answer.text()).startswith("ok/")
        assert answer.headers["X-Content-Type-Options"] == "nosniff"  # the front door ran
    assert (await client.head("/a.kropki", params=poll)).status == 200
    assert (await client.post("/a.kropki", params=poll)).status == 405
    polls = client.app[METRICS_KEY].registry.get_sample_value(
        "kropki_reply_seconds_count", {"endpoint": "/a.kropki:getMsg"}
    )
    assert polls == 4  # the HEAD is a GET's answer without its body; the POST is no poll


async def test_a_long_poll_whose_client_left_ends_quietly(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """Its answer has nowhere to go: no error is logged (not a 500), and the guard forgets it."""
    caplog.set_level(logging.DEBUG)
    async with guarded(create_app(settings), cap=10) as served:
        await served.log_in(("idOfFay1", "*Fay"))
        poll = await served.long_poll("idOfFay1")
        poll.writer.transport.abort()
        await served.settled(lambda guard: not guard.open)
        await asyncio.sleep(0.1)
        again = await served.connect()
        assert (
            parse_reply((await again.request("/a.kropki?co=getMsg&msgNo=0&idGracza=idOfFay1"))[2]).status
            == "ok"
        )
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]


async def test_a_graceful_stop_answers_a_long_poll(settings: Settings) -> None:
    app = create_app(settings)
    guard = ConnectionGuard(10, app[METRICS_KEY])
    runner = GuardedAppRunner(
        app, guard, access_log_class=RedactingAccessLogger, keepalive_timeout=KEEPALIVE_TIMEOUT
    )
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    served = Served(guard, runner.addresses[0][1], app[METRICS_KEY])
    poll = await served.long_poll()
    stopping = asyncio.create_task(runner.cleanup())
    status, _, body = await poll.answer(10)
    assert status == 200 and parse_reply(body).status == "sd"
    await asyncio.wait_for(stopping, 30)
    poll.writer.transport.abort()


async def test_a_poll_answered_with_the_whole_lobby_is_compressed(settings: Settings) -> None:
    app = create_app(settings)
    async with guarded(app, cap=10) as served:
        for number in range(90):  # a lobby listing them is well over the 1 kB worth compressing
            app[HUB_KEY].guest_login(f"lobby{number}", f"*Guest{number}", "en")
        client = await served.connect()
        client.writer.write(
            b"GET /a.kropki?co=getMsg&msgNo=0 HTTP/1.1\r\nHost: kropki\r\nAccept-Encoding: gzip\r\n\r\n"
        )
        async with asyncio.timeout(2):
            head = (await client.reader.readuntil(b"\r\n\r\n")).decode()
            length = int(head.split("Content-Length: ")[1].split("\r\n")[0])
            body = await client.reader.readexactly(length)
        assert "Content-Encoding: gzip" in head
        assert "*Guest89" in gzip.decompress(body).decode()
