"""A cap on open connections, so that a flood of slow or long-polling clients cannot lock players out.

Every connection is a file descriptor. Without a cap, a few thousand slow clients use up the process's
open-file limit: `accept()` then fails with EMFILE, the database cannot open a file, and nobody gets in.
The guard keeps the connections at most `cap`, below that limit. When a new connection arrives at the
cap, it makes room by closing, in this order:

1. the connection idle longest between requests (a keep-alive connection with no request in progress);
2. the connection whose request has been arriving longest (headers trickling in: slowloris; a new
   connection that has not sent its first request yet counts from when it connected);
3. the long poll (`wait=`) waiting longest: it is answered at once with what there is, as when its time
   is up, and its connection is closed after that answer (a zagram client simply polls again);

and when none of these exists (every connection is busy with a request), it refuses the newcomer at once
with a short 503. A request whose headers are not all in `header_timeout` seconds after its first byte (or
after the connection opened) is closed as well, so slowloris connections do not pile up below the cap.
aiohttp has no timeout of its own for this: its keep-alive timer closes such a connection only after
`keepalive_timeout` (75 s) and not at all while a handler waits for a request's body.

It stands on aiohttp's documented API only (tests/test_public_api.py):
- `web.Server`, "a protocol factory compatible with `loop.create_server()`": the runner's `server`, which
  the sites serve, is wrapped so that each connection aiohttp's server makes is one of GuardedConnection,
  an asyncio protocol that tells the guard when the connection opens, receives and closes, and hands
  every asyncio call on to aiohttp's protocol unchanged (the transport is asyncio's, given to both);
- `BaseRequest.transport`, which names a request's connection to the guard, and the app's middleware
  (`watch`, from the front door or `watched`), which tells the guard when a request's handler starts
  and when its response is written (`StreamResponse.prepare()` and `write_eof()`, as a handler
  streaming its own response does; aiohttp then finds it sent), and `StreamResponse.force_close()`
  for a long poll the guard ended;
- asyncio's `Transport.abort()`, `close()` and `write()` to close a connection or refuse one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import signal
from collections.abc import Callable
from typing import Any, cast

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from server.logs import Fields
from server.web.metrics import METRICS_KEY, Metrics

log = logging.getLogger(__name__)

# Files the process needs besides its clients' connections: the listening socket and up to its backlog of
# connections accepted in one go before any can be refused, the database (a pool of up to 15 SQLite
# connections with a WAL and a shared-memory file each), the AI workers' pipes, the log, static files.
FILE_RESERVE = 256
HEADER_TIMEOUT = 15.0  # seconds from a request's first byte (or the connection's start) to its last header
KEEPALIVE_TIMEOUT = 75.0  # seconds an idle keep-alive connection stays open (aiohttp's run_app default)
SWEEP_EVERY = 1.0  # seconds between the checks for requests whose headers are late
# What an idle keep-alive connection holds after a poll, in KB, measured with 2,000 and 5,000 of them
# (benchmarks/idle_connections.py): 4.5-5.3 for its transport, aiohttp's protocol and parser, and
# 5.8-6.5 for the last request that aiohttp's connection loop keeps until the next (docs/architecture.md,
# "An idle connection's last request"). Logged with the cap, as what that many idle connections hold.
IDLE_CONNECTION_KB = 11
REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Content-Length: 36\r\nRetry-After: 1\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
    b"Too many connections; try again.\r\n\r\n"
)

# The guard knows a connection by its transport (uvloop's are asyncio's by their methods, not classes).
Connection = asyncio.Transport
# The guard of the app's server, set by GuardedAppRunner: the middleware tells it about requests.
GUARD_KEY: web.AppKey[ConnectionGuard] = web.AppKey("connection_guard")


def raise_open_files_limit() -> int:
    """Raise the soft limit on open files to the hard limit where the system allows; the soft limit then."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft != hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def connection_cap(configured: int, open_files: int) -> int:
    """The connections the server takes at most: as configured, but leaving FILE_RESERVE files free."""
    if open_files == resource.RLIM_INFINITY:
        return configured
    return max(1, min(configured, open_files - FILE_RESERVE))


class GuardedConnection(asyncio.Protocol):
    """One client connection: aiohttp's protocol for it, with the guard told when it opens, receives and
    closes. Everything asyncio calls is handed on to aiohttp's protocol as it comes."""

    __slots__ = ("guard", "inner", "transport")

    def __init__(self, guard: ConnectionGuard, inner: asyncio.Protocol) -> None:
        self.guard = guard
        self.inner = inner
        self.transport: Connection | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(Connection, transport)  # a stream's: it writes, reads and aborts
        self.inner.connection_made(transport)
        self.guard.opened(self.transport)

    def data_received(self, data: bytes) -> None:
        assert self.transport is not None
        self.guard.receiving(self.transport)
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.transport is not None:
            self.guard.lost(self.transport)
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


class ConnectionGuard:
    """Which connections are idle, arriving or long-polling, oldest first, and the cap that uses them.

    Each state is a dict in the order its connections entered it, so the oldest is the first key and
    every step, making room included, costs O(1).
    """

    def __init__(self, cap: int, metrics: Metrics | None, header_timeout: float = HEADER_TIMEOUT) -> None:
        self.cap = cap
        self.metrics = metrics
        self.header_timeout = header_timeout
        self.open: set[Connection] = set()
        self.closing: set[Connection] = set()  # closed by the guard, not yet gone
        self.idle: dict[Connection, float] = {}  # between requests, since when
        self.arriving: dict[Connection, float] = {}  # a request on its way in, since when
        self.polls: dict[Connection, asyncio.Future[None]] = {}  # long polls waiting: ends them
        self.sweeper: asyncio.TimerHandle | None = None
        if metrics is not None:
            metrics.connections_open.set_function(lambda: len(self.open))
            metrics.connections_max.set(cap)

    def start(self) -> None:
        self.sweeper = asyncio.get_running_loop().call_later(SWEEP_EVERY, self._sweep)

    def stop(self) -> None:
        if self.sweeper is not None:
            self.sweeper.cancel()
            self.sweeper = None

    def opened(self, connection: Connection) -> None:
        self.open.add(connection)
        self.arriving[connection] = asyncio.get_running_loop().time()
        if len(self.open) - len(self.closing) > self.cap and not self._make_room(connection):
            self._refuse(connection)

    def receiving(self, connection: Connection) -> None:
        since = self.idle.pop(connection, None)
        if since is not None:
            self.arriving[connection] = asyncio.get_running_loop().time()

    def started(self, connection: Connection) -> None:
        """The request's headers are in and its handler runs."""
        if self.arriving.pop(connection, None) is None:
            self.idle.pop(connection, None)  # a pipelined request, read while the one before was handled

    def answered(self, connection: Connection) -> None:
        if connection in self.open and connection not in self.closing:
            self.idle[connection] = asyncio.get_running_loop().time()

    def lost(self, connection: Connection) -> None:
        self.open.discard(connection)
        self.closing.discard(connection)
        self.idle.pop(connection, None)
        self.arriving.pop(connection, None)
        self.polls.pop(connection, None)

    def long_poll(self, request: web.BaseRequest) -> contextlib.AbstractContextManager[asyncio.Future[None]]:
        """Put around a long poll's wait, passing it what this gives: the guard may end the wait early
        (by that future's result) to make room for a new connection."""
        return EndableWait(self, request.transport)

    def _make_room(self, newcomer: Connection) -> bool:
        for states, kind in ((self.idle, "idle"), (self.arriving, "slow")):
            for connection in states:
                if connection is not newcomer:
                    del states[connection]
                    self._close_now(connection, kind)
                    return True
        for connection, early in self.polls.items():
            del self.polls[connection]
            self.closing.add(connection)  # its answer says Connection: close (watch)
            if not early.done():
                early.set_result(None)
            self._count_closed("long_poll")
            return True
        return False

    def _close_now(self, connection: Connection, kind: str) -> None:
        self.closing.add(connection)
        connection.abort()  # the file is freed even if the client reads nothing of what was written
        self._count_closed(kind)

    def _count_closed(self, kind: str) -> None:
        log.warning(
            "connection closed to make room %s",
            Fields(was=kind, open=len(self.open) - len(self.closing), cap=self.cap),
        )
        if self.metrics is not None:
            self.metrics.connections_closed.labels(kind).inc()

    def _refuse(self, connection: Connection) -> None:
        self.arriving.pop(connection, None)
        self.closing.add(connection)
        connection.write(REFUSAL)
        connection.close()  # once the refusal is sent
        log.warning("connection refused: every connection is busy %s", Fields(cap=self.cap))
        if self.metrics is not None:
            self.metrics.connections_refused.inc()

    def _sweep(self) -> None:
        """Close the connections whose request headers are late (the oldest are first)."""
        loop = asyncio.get_running_loop()
        late = loop.time() - self.header_timeout
        expired = []
        for connection, since in self.arriving.items():
            if since > late:
                break
            expired.append(connection)
        for connection in expired:
            del self.arriving[connection]
            self.closing.add(connection)
            connection.abort()
            log.warning("connection closed: request headers too slow %s", Fields(seconds=self.header_timeout))
            if self.metrics is not None:
                self.metrics.connections_closed.labels("header_timeout").inc()
        self.sweeper = loop.call_later(SWEEP_EVERY, self._sweep)


class EndableWait:
    """A long poll's wait that the guard may end early, as an event would: it wakes the future the bus
    waits on (Hub.wait_for_news's `early`), and the poll answers with what there is.

    A future and no asyncio.Timeout: a Timeout costs a look-up of the task on entering, a cancellation
    to end it and its bookkeeping on leaving, on every long poll (about 4% of the event loop's thread
    with 2,000 games; issue 19.2), to end one in a great many."""

    __slots__ = ("guard", "connection", "early")

    def __init__(self, guard: ConnectionGuard, connection: Connection | None) -> None:
        self.guard = guard
        self.connection = connection
        self.early: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def __enter__(self) -> asyncio.Future[None]:
        if self.connection is not None and self.connection not in self.guard.closing:
            self.guard.polls[self.connection] = self.early
        return self.early

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        if self.connection is not None:
            self.guard.polls.pop(self.connection, None)


async def watch(
    guard: ConnectionGuard, request: web.Request, respond: Callable[[], Any]
) -> web.StreamResponse:
    """The request's part in the guard (called by the front door): its connection is busy while
    `respond()` makes the response and until the response is written, then idle. A long poll the guard
    ended closes its connection after its answer."""
    connection = request.transport
    if connection is None:  # the client went away before its handler began
        return await respond()
    guard.started(connection)
    try:
        response: web.StreamResponse = await respond()
        if connection in guard.closing:
            response.force_close()  # says Connection: close
        try:
            await response.prepare(request)
            await response.write_eof()
        except ConnectionError:  # the client went away: aiohttp, finding it so too, drops the answer
            pass
        return response
    finally:
        guard.answered(connection)


@web.middleware
async def watched(request: web.Request, handler: Callable[[web.Request], Any]) -> web.StreamResponse:
    """`watch` as a middleware of its own, for an app without the server's front door (which calls
    `watch` itself, to spare every request a layer)."""
    guard = request.app.get(GUARD_KEY)
    if guard is None:
        return await handler(request)
    return await watch(guard, request, lambda: handler(request))


class GuardedServer:
    """The protocol factory the sites serve: each connection aiohttp's server makes, watched."""

    def __init__(self, guard: ConnectionGuard, plain: web.Server) -> None:
        self.guard = guard
        self.plain = plain

    def __call__(self) -> GuardedConnection:
        return GuardedConnection(self.guard, self.plain())


class GuardedAppRunner(web.AppRunner):
    """An AppRunner whose server caps its connections (see the module's docstring). Its app's first
    middleware calls `watch`: the server's front door, or `watched`.

    Its `server` is aiohttp's, wrapped: the sites serve it as the protocol factory it is documented to be,
    and aiohttp's own server still owns every connection (its graceful shutdown closes them all)."""

    def __init__(self, app: web.Application, guard: ConnectionGuard, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self.guard = guard
        self.guarded: GuardedServer | None = None
        app[GUARD_KEY] = guard

    @property
    def server(self) -> web.Server | None:
        plain = super().server
        if plain is None:
            return None
        if self.guarded is None or self.guarded.plain is not plain:
            self.guarded = GuardedServer(self.guard, plain)
        return self.guarded  # type: ignore[return-value]  # a protocol factory, as the sites use it

    async def setup(self) -> None:
        await super().setup()
        self.guard.start()

    async def cleanup(self) -> None:
        self.guard.stop()
        await super().cleanup()


def run_app(
    app: web.Application,
    *,
    host: str,
    port: int,
    max_connections: int,
    access_log_class: type[AbstractAccessLogger],
    print: Callable[[str], None],
    shutdown_timeout: float = 60.0,
    event_loop: str = "auto",
) -> None:
    """`web.run_app()` with the connection cap: serve until SIGINT or SIGTERM, then stop gracefully.

    The soft open-file limit is raised to the hard one first, and the cap is fitted below it. As with
    `web.run_app()`, the app (its stores and queues) is cleaned up before the loop's other tasks are
    cancelled, and an error at start-up (the app's cleanup context) propagates to the caller.
    """
    open_files = raise_open_files_limit()
    cap = connection_cap(max_connections, open_files)
    runner = GuardedAppRunner(
        app,
        ConnectionGuard(cap, app.get(METRICS_KEY)),
        access_log_class=access_log_class,
        keepalive_timeout=KEEPALIVE_TIMEOUT,
        shutdown_timeout=shutdown_timeout,
    )

    loop_name, loop_factory = event_loop_factory(event_loop)

    def listening(name: str) -> None:  # not before: a server refused at start says only why
        log.info(
            "connections capped %s",
            Fields(
                max_connections=cap,
                configured=max_connections,
                open_files=open_files,
                idle_memory_mb=round(cap * IDLE_CONNECTION_KB / 1024),
            ),
        )
        log.info("event loop %s", Fields(loop=loop_name, configured=event_loop))
        print(name)

    with asyncio.Runner(loop_factory=loop_factory) as loop_runner:
        loop_runner.run(_serve(runner, host, port, listening))


def event_loop_factory(choice: str) -> tuple[str, Callable[[], asyncio.AbstractEventLoop] | None]:
    """The loop to serve on: uvloop (libuv: an aiohttp hello-world answers about a fifth more requests
    a second on it, benchmarks/scale.py) when chosen or, for `auto`, when installed; asyncio's own
    otherwise (None: asyncio's default)."""
    if choice == "asyncio":
        return "asyncio", None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise
        return "asyncio", None
    return "uvloop", uvloop.new_event_loop


async def _serve(runner: GuardedAppRunner, host: str, port: int, announce: Callable[[str], None]) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        announce(site.name)
        await stop.wait()
    finally:
        await runner.cleanup()
