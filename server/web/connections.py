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

What this relies on in aiohttp (3.9 to 3.14; `aiohttp.web` exports all of it):
- `web.AppRunner._make_server()`: overridden to serve with a `web.Server` subclass. It is the runners'
  one extension point (`ServerRunner` and `AppRunner` both implement it); the plain server it makes
  lends its public `request_handler`, `request_factory` and `handler_cancellation`.
- `web.RequestHandler`, the asyncio protocol of one connection: its asyncio callbacks `connection_made`,
  `connection_lost` and `data_received`, its public `log_access()`, which it calls once a response has
  been written, and its public `close()` (close after the current response) and `force_close()`.
- `web.Server.__call__()`, the protocol factory that `loop.create_server()` calls per connection, and
  `BaseRequest.protocol`, the connection a request arrived on.
- `web.RequestHandler.start()`, replaced by a copy that keeps nothing of an answered request, where
  aiohttp's is the one copied (requestloop.py), and `data_received()`, which requestloop.py's goes
  before, reading and queueing as aiohttp's does (its queue of requests, its parser, its flow control).

The server also answers the app's busiest paths (DIRECT_PATHS_KEY: zagram's `/a.kropki`) without the
router: a GET of such a path goes to its route's handler inside the app's middlewares, built once at
start-up, as `Application._handle` would after resolving it: a few per cent of a core at 10,000
guests polling every 2 s (docs/operations.md, "Capacity"). It uses the public
`web.UrlMappingMatchInfo`, the router's resources and routes, and `Application.middlewares`, and
writes the one private attribute that `Application._handle` writes too, the request's `_match_info`
(which `request.app` reads); the whole test suite is served this way (tests/conftest.py), so an
aiohttp that changes it fails there. Anything else (another method, an `Expect:` header, another
spelling of the path) takes the router. The polls themselves (`getMsg`, `getBMsg`) do not even reach
aiohttp's request handling: the copied connection loop hands them to the app's poll lane
(server/web/polllane.py): `GuardedRequestHandler.answer_poll` tells the guard that one starts, the
lane that it is answered. Nor, when a poll's head comes alone, do they reach aiohttp's parser: the
lane reads it (requestloop.data_received).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import resource
import signal
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from contextvars import ContextVar
from typing import Any

from aiohttp import hdrs, web
from aiohttp.abc import AbstractAccessLogger
from aiohttp.web_request import BaseRequest

from server.logs import Fields
from server.web import requestloop
from server.web.metrics import METRICS_KEY, Metrics
from server.web.polllane import PollLane, PollRequest

log = logging.getLogger(__name__)

# Files the process needs besides its clients' connections: the listening socket and up to its backlog of
# connections accepted in one go before any can be refused, the database (a pool of up to 15 SQLite
# connections with a WAL and a shared-memory file each), the AI workers' pipes, the log, static files.
FILE_RESERVE = 256
HEADER_TIMEOUT = 15.0  # seconds from a request's first byte (or the connection's start) to its last header
KEEPALIVE_TIMEOUT = 75.0  # seconds an idle keep-alive connection stays open (aiohttp's run_app default)
SWEEP_EVERY = 1.0  # seconds between the checks for requests whose headers are late
REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Content-Length: 36\r\nRetry-After: 1\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
    b"Too many connections; try again.\r\n\r\n"
)

Handler = Callable[[BaseRequest], Awaitable[web.StreamResponse]]
# Paths whose GETs skip the router (see the module's docstring): set by the app factory.
DIRECT_PATHS_KEY = web.AppKey("direct_paths", tuple)


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


class GuardedRequestHandler(web.RequestHandler):
    """aiohttp's connection, telling the guard when it opens, receives, has answered and closes, and
    holding nothing of a request once it is answered (requestloop.py)."""

    __slots__ = ("between_requests", "guard", "poll_lane", "reads_polls")
    if requestloop.APPLIES:
        start = requestloop.start

    def __init__(
        self,
        guard: ConnectionGuard,
        manager: web.Server,
        poll_lane: PollLane | None,
        reads_polls: bool,
        **kwargs: Any,
    ) -> None:
        super().__init__(manager, **kwargs)
        self.guard = guard
        self.poll_lane = poll_lane
        # whether the lane reads polls' heads itself, and whether aiohttp's parser is between requests
        # (requestloop.data_received)
        self.reads_polls = reads_polls and poll_lane is not None and requestloop.READS
        self.between_requests = True

    def answer_poll(self, poll: PollRequest) -> Coroutine[Any, Any, bool]:
        """A poll by the lane, watched by the guard as `guarded` watches the others: the lane's own
        coroutine (which tells the guard when it has answered), not one more around it, as every held
        poll is walked by the collector and resumed through each."""
        assert self.poll_lane is not None
        guard = self.guard
        guard.started(self)
        current = _CURRENT.get()
        if current is None or current[1] is not self:  # set once: the connection's task runs its polls
            _CURRENT.set((guard, self))
        return self.poll_lane.answer(self, poll, guard)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self.guard.opened(self)

    def connection_lost(self, exc: BaseException | None) -> None:
        self.guard.lost(self)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self.guard.receiving(self)
        if self.reads_polls:
            requestloop.data_received(self, data)
        else:
            super().data_received(data)

    def log_access(self, request: BaseRequest, response: web.StreamResponse, time: float | None) -> None:
        super().log_access(request, response, time)
        self.guard.answered(self)


# The guard and connection of the request being handled, for `long_poll()`; set in each request's task.
_CURRENT: ContextVar[tuple[ConnectionGuard, GuardedRequestHandler] | None] = ContextVar(
    "connection", default=None
)


class ConnectionGuard:
    """Which connections are idle, arriving or long-polling, oldest first, and the cap that uses them.

    Each state is a dict in the order its connections entered it, so the oldest is the first key and
    every step, making room included, costs O(1).
    """

    def __init__(self, cap: int, metrics: Metrics | None, header_timeout: float = HEADER_TIMEOUT) -> None:
        self.cap = cap
        self.metrics = metrics
        self.header_timeout = header_timeout
        self.open: set[GuardedRequestHandler] = set()
        self.closing: set[GuardedRequestHandler] = set()  # closed by the guard, not yet gone
        self.idle: dict[GuardedRequestHandler, float] = {}  # between requests, since when
        self.arriving: dict[GuardedRequestHandler, float] = {}  # a request on its way in, since when
        self.polls: dict[GuardedRequestHandler, asyncio.Future[None]] = {}  # long polls waiting: ends them
        self._sweeper: asyncio.TimerHandle | None = None
        if metrics is not None:
            metrics.connections_open.set_function(lambda: len(self.open))
            metrics.connections_max.set(cap)

    def start(self) -> None:
        self._sweeper = asyncio.get_running_loop().call_later(SWEEP_EVERY, self._sweep)

    def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None

    def opened(self, connection: GuardedRequestHandler) -> None:
        self.open.add(connection)
        self.arriving[connection] = asyncio.get_running_loop().time()
        if len(self.open) - len(self.closing) > self.cap and not self._make_room(connection):
            self._refuse(connection)

    def receiving(self, connection: GuardedRequestHandler) -> None:
        since = self.idle.pop(connection, None)
        if since is not None:
            self.arriving[connection] = asyncio.get_running_loop().time()

    def started(self, connection: GuardedRequestHandler) -> None:
        """The request's headers are in and its handler runs."""
        if self.arriving.pop(connection, None) is None:
            self.idle.pop(connection, None)  # a pipelined request, read while the one before was handled

    def answered(self, connection: GuardedRequestHandler) -> None:
        self.arriving.pop(connection, None)  # a request aiohttp refused (400) never reached a handler
        if connection in self.open and connection not in self.closing:
            self.idle[connection] = asyncio.get_running_loop().time()

    def lost(self, connection: GuardedRequestHandler) -> None:
        self.open.discard(connection)
        self.closing.discard(connection)
        self.idle.pop(connection, None)
        self.arriving.pop(connection, None)
        self.polls.pop(connection, None)

    def _make_room(self, newcomer: GuardedRequestHandler) -> bool:
        for states, kind in ((self.idle, "idle"), (self.arriving, "slow")):
            for connection in states:
                if connection is not newcomer:
                    del states[connection]
                    self._close_now(connection, kind)
                    return True
        for connection, early in self.polls.items():
            del self.polls[connection]
            self.closing.add(connection)
            connection.close()  # once its answer is written
            if not early.done():
                early.set_result(None)
            self._count_closed("long_poll")
            return True
        return False

    def _close_now(self, connection: GuardedRequestHandler, kind: str) -> None:
        self.closing.add(connection)
        transport = connection.transport
        if transport is not None:
            transport.abort()  # the file is freed even if the client reads nothing of what was written
        connection.force_close()
        self._count_closed(kind)

    def _count_closed(self, kind: str) -> None:
        log.warning(
            "connection closed to make room %s",
            Fields(was=kind, open=len(self.open) - len(self.closing), cap=self.cap),
        )
        if self.metrics is not None:
            self.metrics.connections_closed.labels(kind).inc()

    def _refuse(self, connection: GuardedRequestHandler) -> None:
        self.arriving.pop(connection, None)
        self.closing.add(connection)
        if connection.transport is not None:
            connection.transport.write(REFUSAL)
        connection.force_close()  # the refusal is sent before the socket closes
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
            if connection.transport is not None:
                connection.transport.abort()
            connection.force_close()
            log.warning("connection closed: request headers too slow %s", Fields(seconds=self.header_timeout))
            if self.metrics is not None:
                self.metrics.connections_closed.labels("header_timeout").inc()
        self._sweeper = loop.call_later(SWEEP_EVERY, self._sweep)


class _EndableWait:
    """A long poll's wait that the guard may end early, as an event would: it wakes the future the bus
    waits on (Hub.wait_for_news's `early`), and the poll answers with what there is.

    A future and no asyncio.Timeout: a Timeout costs a look-up of the task on entering, a cancellation
    to end it and its bookkeeping on leaving, on every long poll (about 4% of the event loop's thread
    with 2,000 games; issue 19.2), to end one in a great many."""

    __slots__ = ("guard", "connection", "early")

    def __init__(self, guard: ConnectionGuard, connection: GuardedRequestHandler) -> None:
        self.guard = guard
        self.connection = connection
        self.early: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def __enter__(self) -> asyncio.Future[None]:
        if self.connection not in self.guard.closing:
            self.guard.polls[self.connection] = self.early
        return self.early

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        self.guard.polls.pop(self.connection, None)


def long_poll() -> contextlib.AbstractContextManager[asyncio.Future[None] | None]:
    """Put around a long poll's wait, passing it what this gives: the guard may end the wait early (by
    that future's result) to make room for a new connection."""
    current = _CURRENT.get()
    if current is None:  # a test server, without a guard
        return contextlib.nullcontext()
    return _EndableWait(*current)


Direct = Mapping[str, tuple[web.UrlMappingMatchInfo, Handler]]


def direct_routes(app: web.Application) -> Direct:
    """For each of the app's DIRECT_PATHS_KEY: its GET route's match, frozen, and its handler inside the
    app's middlewares (the first listed outermost, as the app nests them). Call once the app is frozen."""
    routes: dict[str, tuple[web.UrlMappingMatchInfo, Handler]] = {}
    for path in app.get(DIRECT_PATHS_KEY, ()):
        route = next(
            (
                route
                for resource in app.router.resources()
                if resource.canonical == path
                for route in resource
                if route.method == hdrs.METH_GET
            ),
            None,
        )
        if route is None:
            raise ValueError(f"{path} is to be answered directly, but the app has no GET route for it")
        match = web.UrlMappingMatchInfo({}, route)
        match.add_app(app)
        match.freeze()
        handler: Handler = route.handler  # type: ignore[assignment]
        for middleware in reversed(app.middlewares):
            handler = functools.partial(middleware, handler=handler)  # type: ignore[call-arg]
        routes[path] = (match, handler)
    return routes


class GuardedServer(web.Server):
    """aiohttp's server, whose connections the guard watches."""

    def __init__(
        self,
        guard: ConnectionGuard,
        handler: Handler,
        direct: Direct,
        poll_lane: PollLane | None,
        **kwargs: Any,
    ) -> None:
        async def guarded(request: BaseRequest) -> web.StreamResponse:
            connection: GuardedRequestHandler = request.protocol  # type: ignore[assignment]
            guard.started(connection)
            _CURRENT.set((guard, connection))  # in this request's own task and context
            route = (
                direct.get(request.rel_url.raw_path)
                if request.method == hdrs.METH_GET and hdrs.EXPECT not in request.headers
                else None
            )
            if route is None:
                response = await handler(request)
            else:
                request._match_info = route[0]  # type: ignore[attr-defined]  # as Application._handle does
                response = await route[1](request)
            if connection in guard.closing:
                response.force_close()  # says Connection: close
            return response

        self.guard = guard
        self.poll_lane = poll_lane
        self.reads_polls = True  # tests compare both readers of a poll's head (tests/web/test_polllane.py)
        self.loop = kwargs.pop("loop", None) or asyncio.get_running_loop()
        server_args = {name: kwargs.pop(name) for name in ("request_factory", "handler_cancellation")}
        self.connection_args = kwargs
        super().__init__(guarded, loop=self.loop, **server_args, **kwargs)

    def __call__(self) -> GuardedRequestHandler:
        return GuardedRequestHandler(
            self.guard, self, self.poll_lane, self.reads_polls, loop=self.loop, **self.connection_args
        )


class GuardedAppRunner(web.AppRunner):
    """An AppRunner whose server caps its connections (see the module's docstring)."""

    def __init__(self, app: web.Application, guard: ConnectionGuard, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self.guard = guard
        self.connection_args = {name: kwargs[name] for name in ("access_log_class", "keepalive_timeout")}

    async def _make_server(self) -> web.Server:
        plain = await super()._make_server()  # runs the app's start-up; its server never listens
        self.guard.start()
        return GuardedServer(
            self.guard,
            plain.request_handler,
            direct_routes(self.app),
            PollLane.for_app(self.app, self.connection_args["access_log_class"]),
            request_factory=plain.request_factory,
            handler_cancellation=plain.handler_cancellation,
            **self.connection_args,
        )

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
            Fields(max_connections=cap, configured=max_connections, open_files=open_files),
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
