"""`/push`: the getMsg/getBMsg stream over a WebSocket, an extension (docs/protocol.md, "Push").

A poll every two seconds costs a request's CPU whether anything happened or not; a push connection is
a long poll that never ends. Its frames are the replies a poll would get (`ok/m<i>.<j>.<k>/.../end`),
each built by `Hub.poll` as a poll's is, sent as its news happens; a reply with no news and nothing
changed since the last frame is not sent. The client's frames are msgFromClient texts, applied as a
poll's commands are (`Hub.take`): a command counts in k only once its writes are stored.

One connection is two coroutines: the handler reads the client's frames, and `Push.write` polls and
sends. It builds the next frame only once the last one is written, so what waits for a slow reader is
one frame and the socket's buffers; the events themselves wait in the hub's logs, which are bounded,
and a reader that falls behind them gets the whole state, as a poll would. A frame that is not written
within `send_timeout` is a reader too slow: its connection is aborted (`Pushes.sweep`), and the client
resumes from its last msgNo.

Everything a poll passes also holds here: the id is screened once, at the upgrade (server/web/ids.py,
which in a cluster brings a session another member serves here first); each frame (of commands, a ping
too) is one request for the per-id and per-address limits (clients.refused), and a client that goes on
sending after FLOOD_REFUSALS refusals in a row is let go; the limit on whole states is asked by every
poll of the connection, as by a poll. The connection cap (server/web/connections.py) counts a
push connection as an open connection, and may end it as it ends a long poll, to make room.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncIterator
from socket import SO_RCVBUF, SO_SNDBUF, SOL_SOCKET

from aiohttp import WSCloseCode, WSMsgType, web
from prometheus_client import CollectorRegistry, Counter, Gauge

from server.hub.hub import Hub
from server.hub.stream import Poll
from server.protocol.codec import ProtocolError, parse_commands, parse_msg_no, reply_head
from server.web.clients import refused, refuses_whole_state
from server.web.common import HUB_KEY, text_response
from server.web.connections import GUARD_KEY
from server.web.headers import SECURITY_HEADERS
from server.web.ids import screened_id
from server.web.kropki import MAX_MSG_FROM_CLIENT, POLLS, failed, sent_id
from server.web.metrics import METRICS_KEY

log = logging.getLogger(__name__)

# Seconds between aiohttp's pings, on average; a pong later than half of it closes the connection. Each
# connection's is drawn from KEEP_ALIVE_SPREAD: connections opened together (after a restart, or 10,000
# in the push benchmark's ten seconds) pinged together, 1,100 pings a second for nine seconds every 30 s,
# and moves beside them reached their opponents late
HEARTBEAT = 30.0
SEND_TIMEOUT = 10.0  # seconds a frame may take to be written before its reader counts as too slow
# The kernel's send buffer of a push connection, in bytes: fixed (no autotuning to megabytes), so that
# what waits for a reader is bounded and a reader that stops reading is found within SEND_TIMEOUT. At
# a round trip of 200 ms it still carries 640 KB a second, far more than the stream needs.
SEND_BUFFER = 128 * 1024
# The kernel's receive buffer of a push connection, in bytes: what one read hands aiohttp, which parses
# all of it before any frame comes to Push.read (a flood's 256 KB read, 37,000 tiny frames, held the loop
# for tens of ms). A client's frames are commands, a few a second at most.
RECEIVE_BUFFER = 16 * 1024
SWEEP_EVERY = 1.0  # seconds between the looks for readers too slow
# Seconds between a quiet connection's polls, each sending a frame only if something changed. The
# session needs none (a waiting poll keeps it, Roster.hold; a table counts its player present,
# Absences.present) nor does the connection (HEARTBEAT's pings): they bound a wait. Each waits
# KEEP_ALIVE times a factor drawn from KEEP_ALIVE_SPREAD (average 1): a lobby wake starts thousands of
# connections' waits within a second, and equal waits kept them in step, every 20 s a burst of quiet
# frames (10,000 of them: nearly half the moves of 2,000 games in that second reached their opponents
# over 20 ms late).
KEEP_ALIVE = 60.0
KEEP_ALIVE_SPREAD = (0.75, 1.25)
DRAIN_CHECK_EVERY = 0.05  # seconds between the looks at a frame the socket has not taken whole
STORED_CHECK_EVERY = 1.0  # seconds between the looks at writes that storage has not taken yet
MAX_FRAME = 16 * 1024  # bytes of a client's frame; aiohttp closes a larger one's connection (1009)
# Frames refused in a row (the per-id limit's burst) that end a connection: a client told `err.tooFast`
# that goes on sending floods, and each of its frames, however small, costs as much as a request's refusal
FLOOD_REFUSALS = 40
# Seconds a refused connection's close waits for the client's close frame: its flood keeps coming
# meanwhile, each frame parsed (a wait of 1 s let a binary flood keep 0.6 of a core busy), so not the
# 10 s a clean close may take; a client nearby still answers within it
REFUSED_CLOSE_WAIT = 0.05
CLIENT_FRAMES = frozenset((WSMsgType.TEXT, WSMsgType.BINARY, WSMsgType.PING, WSMsgType.PONG))
# Close codes besides WebSocket's own (docs/protocol.md, "Push"): the frame before says why.
REFUSED = 4000  # the frame before is `err.<code>`, as a poll's answer would be
LOG_IN_AGAIN = 4003  # the frame before is `sd/...`: the id has no session (log in, then connect again)
# no frame before: the session went on on another member of a cluster, where the client's next
# connection lands (nginx sends its id there): connect again, with the same id and msgNo
CONNECT_AGAIN = 4004

routes = web.RouteTableDef()


class Pushes:
    """The open push connections: the frames being written (oldest first), which a sweep reads to
    abort the readers too slow, and every connection, closed at a stop."""

    def __init__(self, send_timeout: float = SEND_TIMEOUT, send_buffer: int = SEND_BUFFER) -> None:
        self.send_timeout = send_timeout
        self.send_buffer = send_buffer
        self.open: set[Push] = set()
        self.sending: dict[Push, float] = {}  # a frame being written, since when
        self.sweeper: asyncio.TimerHandle | None = None
        self.connections: Gauge | None = None
        self.closed: Counter | None = None

    def count(self, metrics_registry: CollectorRegistry) -> None:
        """Show the connections and the closes in /metrics."""
        self.connections = Gauge(
            "kropki_push_connections", "Push connections open (/push)", registry=metrics_registry
        )
        self.connections.set_function(lambda: len(self.open))
        self.closed = Counter(
            "kropki_push_closed",
            "Push connections the server closed: a reader too slow (slow), to make room at the cap "
            "(cap), at a stop (stop), frames refused in a row (flood), a binary frame (binary)",
            ["reason"],
            registry=metrics_registry,
        )
        for reason in ("slow", "cap", "stop", "flood", "binary"):
            self.closed.labels(reason)

    def start(self) -> None:
        self.sweeper = asyncio.get_running_loop().call_later(SWEEP_EVERY, self.sweep)

    def stop(self) -> None:
        if self.sweeper is not None:
            self.sweeper.cancel()
            self.sweeper = None

    def sweep(self) -> None:
        """Abort the connections whose frame has waited send_timeout, and count a connection closed but
        still here as waiting from now: a client that floods pings and reads nothing holds its handler
        in aiohttp's answer to a ping, on a full socket, and aiohttp's close after its heartbeat waits
        to flush that socket, so nothing else would end it (0.6 ms a sweep at 10,000 connections)."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        late = now - self.send_timeout
        slow = []
        for push, since in self.sending.items():
            if since > late:
                break
            slow.append(push)
        for push in slow:
            del self.sending[push]
            log.info("push connection closed: reader too slow")
            self.note_closed("slow")
            push.abort()
        for push in self.open:
            if push.socket.closed and push not in self.sending:
                self.sending[push] = now
        self.sweeper = loop.call_later(SWEEP_EVERY, self.sweep)

    def note_closed(self, reason: str) -> None:
        if self.closed is not None:
            self.closed.labels(reason).inc()

    async def close_all(self) -> None:
        """A clean stop: each connection sends what is new (the hub has just announced the stop) and
        closes with 1001; the client resumes from its last msgNo when the server is back."""
        pushes = list(self.open)
        for push in pushes:
            push.end(WSCloseCode.GOING_AWAY)
            self.note_closed("stop")
        # asyncio.wait, not wait_for: a writer cancelled meanwhile (its connection ended, and its handler
        # with it) is done like any other, where awaiting it would cancel the stop itself.
        writers = {push.writer for push in pushes if push.writer is not None}
        if writers:
            await asyncio.wait(writers, timeout=self.send_timeout)


PUSHES_KEY = web.AppKey("pushes", Pushes)


class Push:
    """One push connection: whose stream, where it has got to, and its writer."""

    __slots__ = (
        "pushes", "hub", "request", "socket", "secret", "sent_id", "seen", "with_subscriptions",
        "subscriptions_seen", "kicked", "early", "closing", "writer", "last_sent", "unstored",
    )  # fmt: skip

    def __init__(
        self, pushes: Pushes, request: web.Request, socket: web.WebSocketResponse, secret: str, co: str
    ) -> None:
        self.pushes, self.request, self.socket, self.secret = pushes, request, socket, secret
        self.hub: Hub = request.app[HUB_KEY]
        self.sent_id = sent_id(request.query)
        self.seen, self.subscriptions_seen = parse_msg_no(request.query.get("msgNo", ""))
        self.with_subscriptions = POLLS[co]
        # the next poll answers at once: the first (the client learns that the connection passes), a
        # command's k to show, or the end
        self.kicked = True
        self.early: asyncio.Future[None] | None = None  # ends the poll waiting now
        self.closing: int | None = None  # the close code, once the connection is to end
        self.writer: asyncio.Task[None] | None = None
        self.last_sent: tuple[int, str | None] | None = None  # the last frame's k and, if quiet, lines
        self.unstored: asyncio.Task[None] | None = None  # waits for writes storage did not take at once

    def kick(self) -> None:
        self.kicked = True
        if self.early is not None and not self.early.done():
            self.early.set_result(None)

    def end(self, code: int) -> None:
        """Close after what is new has been sent."""
        if self.closing is None:
            self.closing = code
        self.kick()

    def abort(self) -> None:
        """A reader too slow: its frames cannot even take a close frame, so the connection goes."""
        self.closing = self.closing or WSCloseCode.ABNORMAL_CLOSURE
        transport = self.request.transport
        if transport is not None:
            transport.abort()

    async def write(self) -> None:
        """Poll, send, repeat: each reply built as a poll's, sent once the one before is written."""
        loop = asyncio.get_running_loop()
        socket, pushes = self.socket, self.pushes
        while not socket.closed:
            early = self.early = loop.create_future()
            kicked, self.kicked = self.kicked, False
            closing = self.closing
            poll = Poll(
                self.secret, [], self.seen, self.with_subscriptions, self.subscriptions_seen,
                0.0 if kicked or closing is not None else KEEP_ALIVE * random.uniform(*KEEP_ALIVE_SPREAD),
                pushed=True,
            )  # fmt: skip
            try:
                reply = await self.hub.poll(poll, early, self.may_send_whole_state)
            except ProtocolError as refused_poll:
                await self.send_and_close(f"err.{refused_poll.code}", REFUSED)
                return
            except Exception as failure:  # a bug ends this connection with a refusal, never the server
                await self.send_and_close(failed(self.request, "push", failure), REFUSED)
                return
            seen, processed, quiet = reply_head(reply)
            logged_out = reply.startswith("sd") and bool(self.secret)
            if logged_out and self.hub.moved_away(self.secret):  # no login needed: it goes on there
                await self.close(CONNECT_AGAIN)
                return
            if quiet is None or self.last_sent != (processed, quiet) or logged_out:
                pushes.sending[self] = loop.time()
                try:
                    await socket.send_str(reply)
                    del reply  # the transport keeps what the socket has not taken; the text need not wait
                    await self.written()
                except (ConnectionError, RuntimeError):  # the client went, or the socket closed
                    return
                finally:
                    pushes.sending.pop(self, None)
                # a quiet reply is kept to compare the next one with; news is never sent twice anyway, and
                # a whole state kept here for each connection would hold its size thousands of times
                self.last_sent = (processed, quiet)
                # the next frame starts where this one ended (a reply not sent leaves it where it was)
                self.seen, self.subscriptions_seen = seen, True
            if logged_out:  # an id with no session: the client logs in again, then connects again
                await self.close(LOG_IN_AGAIN)
                return
            if closing is not None:
                await self.close(closing)
                return

    async def written(self) -> None:
        """Until the frame is all in the kernel's buffer: aiohttp hands a frame to the transport at once,
        which keeps what the socket does not take. Most frames go at once; a reader that does not read
        leaves them there, and the sweep ends it (Pushes.sweep)."""
        transport = self.request.transport
        while transport is not None and transport.get_write_buffer_size() and not self.socket.closed:
            await asyncio.sleep(DRAIN_CHECK_EVERY)

    def may_send_whole_state(self) -> bool:
        return not refuses_whole_state(self.request, self.sent_id)

    async def send_and_close(self, text: str, code: int) -> None:
        with contextlib.suppress(ConnectionError):
            await self.socket.send_str(text)
        await self.close(code)

    async def close(self, code: int) -> None:
        with contextlib.suppress(ConnectionError):
            await self.socket.close(code=code)

    async def read(self) -> None:
        """The client's frames, in order: each is msgFromClient, taken as a poll's commands are; the
        writer then sends the k that counts them (once stored). Every frame, a ping too, is a request
        for the per-id and per-address limits; FLOOD_REFUSALS refused in a row, or a binary frame, end
        the connection."""
        refused_in_a_row = 0
        async for message in self.socket:
            # aiohttp parses all that one read of the socket brings (a flood's small frames by the
            # thousand) and hands them on without a pause: each waits its turn here, as a request does
            # (one client's flood put a p99 of 0.2-0.9 s on other players' polls: benchmarks/frames.py)
            await asyncio.sleep(0)
            kind = message.type
            if kind not in CLIENT_FRAMES:
                continue  # aiohttp's own (an error it has closed the connection for): the loop ends
            if refused(self.request) is not None:  # the per-id and per-address limits
                refused_in_a_row += 1
                if refused_in_a_row >= FLOOD_REFUSALS:
                    log.info("push connection closed: frames refused in a row")
                    self.pushes.note_closed("flood")
                    await self.refuse("err.tooFast", REFUSED)
                    return
                await self.send_refusal("err.tooFast")
                continue
            refused_in_a_row = 0
            if kind is WSMsgType.BINARY:  # nothing of this protocol comes as bytes
                self.pushes.note_closed("binary")
                await self.refuse("", WSCloseCode.UNSUPPORTED_DATA)
                return
            if kind is WSMsgType.PING:
                with contextlib.suppress(ConnectionError):
                    await self.socket.pong(message.data)
                continue
            if kind is WSMsgType.TEXT:
                await self.take(message.data)

    async def take(self, text: str) -> None:
        try:
            if len(text) > MAX_MSG_FROM_CLIENT:
                raise ProtocolError("tooLong")
            unstored = await self.hub.take(self.secret, parse_commands(text))
        except ProtocolError as refused_frame:  # changes nothing: the client sends it again
            await self.send_refusal(f"err.{refused_frame.code}")
            return
        except Exception as failure:
            await self.send_refusal(failed(self.request, "push", failure))
            return
        self.kick()
        if unstored is not None and self.unstored is None:
            self.unstored = asyncio.create_task(self.when_stored(unstored))

    async def refuse(self, text: str, code: int) -> None:
        """The refusal's frame, if any, and the close frame; the client's close frame is waited for only
        REFUSED_CLOSE_WAIT, after which aiohttp closes the socket, reading no more of it."""
        with contextlib.suppress(ConnectionError, TimeoutError):
            if text:
                await self.socket.send_str(text)
            async with asyncio.timeout(REFUSED_CLOSE_WAIT):
                await self.socket.close(code=code)

    async def when_stored(self, since: int) -> None:
        """Storage did not take a frame's writes in time (or fails): once it has, the k that counts
        them goes out, as the next poll would show it."""
        while not await self.hub.settled(since):
            await asyncio.sleep(STORED_CHECK_EVERY)
        self.unstored = None
        self.kick()

    async def send_refusal(self, text: str) -> None:
        """A refused frame of commands is answered as a refused poll would be; the stream goes on."""
        with contextlib.suppress(ConnectionError):
            await self.socket.send_str(text)


@routes.get("/push")
async def push(request: web.Request) -> web.StreamResponse:
    """`/push?co=getBMsg&idGracza=...&msgNo=...`: the stream of `co` (getMsg or getBMsg) from msgNo."""
    query = request.query
    co = query.get("co", "")
    socket = web.WebSocketResponse(
        heartbeat=HEARTBEAT * random.uniform(*KEEP_ALIVE_SPREAD),
        compress=False,
        max_msg_size=MAX_FRAME,
        autoping=False,  # a client's pings come to Push.read, which counts them before it answers
    )
    if not socket.can_prepare(request).ok:
        return text_response("err.notWebSocket")
    try:
        if co not in POLLS:
            raise ProtocolError("unknownCo")
        if "msgNo" not in query:
            raise ProtocolError("missing.msgNo")
        parse_msg_no(query["msgNo"])
        secret = await screened_id(request, sent_id(request.query)) or ""
    except ProtocolError as refusal:
        return text_response(f"err.{refusal.code}")
    socket.headers.update(SECURITY_HEADERS)
    await socket.prepare(request)
    pushes = request.app[PUSHES_KEY]
    transport = request.transport
    endpoint = transport.get_extra_info("socket") if transport is not None else None
    if endpoint is not None:
        endpoint.setsockopt(SOL_SOCKET, SO_SNDBUF, pushes.send_buffer)
        endpoint.setsockopt(SOL_SOCKET, SO_RCVBUF, RECEIVE_BUFFER)
    connection = Push(pushes, request, socket, secret, co)
    pushes.open.add(connection)
    guard = request.app.get(GUARD_KEY)
    try:
        with guard.long_poll(request) if guard is not None else contextlib.nullcontext() as room:
            if room is not None:  # the cap ends it as it ends a long poll: to make room
                room.add_done_callback(lambda _: _made_room(pushes, connection))
            connection.writer = asyncio.create_task(connection.write())
            await connection.read()
            connection.end(WSCloseCode.OK)
            await connection.writer
    finally:
        pushes.open.discard(connection)
        pushes.sending.pop(connection, None)
        for task in (connection.writer, connection.unstored):
            if task is not None:
                task.cancel()
        if request.transport is not None:  # closed, it waits to flush what a client that reads nothing
            # never takes (aiohttp's answers to its pings): it has send_timeout, as a frame has
            asyncio.get_running_loop().call_later(pushes.send_timeout, request.transport.abort)
    return socket


def _made_room(pushes: Pushes, connection: Push) -> None:
    if connection.closing is None:
        pushes.note_closed("cap")
    connection.end(WSCloseCode.TRY_AGAIN_LATER)


async def keep_pushes(app: web.Application) -> AsyncIterator[None]:
    """cleanup_ctx: the push connections' registry and its sweep; at a stop (on_shutdown, before
    aiohttp waits for handlers) every connection is closed."""
    pushes = app[PUSHES_KEY]
    pushes.start()
    yield
    pushes.stop()


def add_pushes(app: web.Application, send_timeout: float = SEND_TIMEOUT) -> None:
    pushes = app[PUSHES_KEY] = Pushes(send_timeout)
    metrics = app.get(METRICS_KEY)
    if metrics is not None:
        pushes.count(metrics.registry)
    app.add_routes(routes)
    app.cleanup_ctx.append(keep_pushes)
    app.on_shutdown.append(_close_pushes)


async def _close_pushes(app: web.Application) -> None:
    await app[PUSHES_KEY].close_all()
