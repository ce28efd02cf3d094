"""aiohttp's connection loop, changed so that a keep-alive connection does not hold its last request,
and so that polls go by the poll lane.

`web.RequestHandler.start()` runs a connection's requests one after another in one coroutine. Its locals
(the request, the response, the parsed message, the writer) stay set while it waits for the next
request, so every idle keep-alive connection keeps its last request's objects: about 30 tracked
objects. With thousands of clients polling every 2 s, each poll's objects then live 2 s: all of them
are walked by a young collection and fill memory. Cleared at the end of each request instead, they
are freed at once by their reference count and never reach a collection: at 4,000 polling guests the
young collections took 1.4% of a core instead of 3.0%, and 10,000 guests' peak RSS was 255 MB
instead of 303 (benchmarks/scale.py, issue 19.1; docs/operations.md).

`start` below is aiohttp 3.14.5's `RequestHandler.start` (Apache License 2.0, (c) aiohttp's authors),
reformatted by this project's formatter, otherwise as it is but for the two marked changes (the keep-alive
timer's few lines moved into `_keep_alive` for the second). It
replaces aiohttp's only where aiohttp's source is the one it was copied from (`APPLIES`, by its hash):
another aiohttp keeps its own start (as fast as before this copy), and tests/web/test_requestloop.py
says so until the copy is brought up to date. It reads the connection's private state, as aiohttp's
own method does.

The second change: a request the connection's poll lane takes (server/web/polllane.py: getMsg and
getBMsg) is answered there, without the request, task, response and writer aiohttp makes for each.

`data_received` below goes before aiohttp's `RequestHandler.data_received` (which it calls for anything
else): a poll's head that comes alone, while aiohttp's parser is between requests, is read by the lane
(`PollLane.read`) instead of that parser, and queued for `start` as aiohttp queues what its parser read.
It serves where `start` does and aiohttp's `data_received` is the one it was written against (`READS`).
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import sys
from asyncio.base_events import BaseEventLoop

from aiohttp import web
from aiohttp.helpers import ceil_timeout
from aiohttp.http import StreamWriter
from aiohttp.streams import EMPTY_PAYLOAD
from aiohttp.web_protocol import _PAYLOAD_ACCESS_ERROR, ERROR, _ErrInfo

from server.web.polllane import PollLane, PollRequest

COPIED_FROM_VERSION = "3.14.5"
COPIED_FROM = "2e565fd40c8e04fb3afb481d5ba52691a61d28396573b4b8a4cf3b168782288e"  # sha256 of its source
APPLIES = hashlib.sha256(inspect.getsource(web.RequestHandler.start).encode()).hexdigest() == COPIED_FROM
# data_received below queues requests as aiohttp 3.14.5's does, whose source has this sha256
READS_AS = "1ee57ebe052e6c80ced26c96e4ccb1223172e1d55afba460353c5e414914d3f6"
READS = APPLIES and (
    hashlib.sha256(inspect.getsource(web.RequestHandler.data_received).encode()).hexdigest() == READS_AS
)


async def start(self: web.RequestHandler) -> None:
    """Process incoming request.

    It reads request line, request headers and request payload, then
    calls handle_request() method. Subclass has to override
    handle_request(). start() handles various exceptions in request
    or response handling. Connection is being closed always unless
    keep_alive(True) specified.
    """
    loop = self._loop
    manager = self._manager
    assert manager is not None
    keepalive_timeout = self._keepalive_timeout
    resp = None
    assert self._request_factory is not None
    assert self._request_handler is not None

    while not self._force_close:
        if not self._messages:
            try:
                # wait for next request
                self._waiter = loop.create_future()
                await self._waiter
            finally:
                self._waiter = None

        message, payload = self._messages.popleft()
        read_by_lane = type(message) is PollRequest  # the second change (data_received, below)

        # Free a parser slot; resume reading once drained to low water so
        # pipelining keeps flowing while this request is handled.
        # no branch: _parser is only None after connection_lost, whose path
        # exits this loop, so the None case is not reachably exercisable.
        if self._parser is not None and not read_by_lane:  # pragma: no branch
            self._parser.message_consumed()
        if self._buffer_paused and len(self._messages) <= self._msg_queue_resume_size:
            self._resume_reading_if_drained()

        # The second change: a poll the lane takes is answered there (server/web/polllane.py).
        lane: PollLane | None = self.poll_lane  # type: ignore[attr-defined]
        if read_by_lane:
            poll: PollRequest | None = message  # type: ignore[assignment]
        else:
            poll = None if lane is None or isinstance(message, _ErrInfo) else lane.takes(message, payload)
        if poll is not None:
            message = payload = None  # type: ignore[assignment]  # the poll keeps what it needs of them
            manager.requests_count += 1
            try:
                self._keepalive = await self.answer_poll(poll)  # type: ignore[attr-defined]
            except asyncio.CancelledError:
                self.force_close()
                raise
            except Exception as exc:
                self.log_exception("Unhandled exception", exc_info=exc)
                self.force_close()
            poll = None  # as the first change
            if not _keep_alive(self, keepalive_timeout):
                break
            continue

        # time is only fetched if logging is enabled as otherwise
        # its thrown away and never used.
        start = loop.time() if self._logging_enabled else None

        manager.requests_count += 1
        writer = StreamWriter(self, loop)
        if isinstance(message, _ErrInfo):
            # make request_factory work
            request_handler = self._make_error_handler(message)
            message = ERROR
        else:
            request_handler = self._request_handler

        # Important don't hold a reference to the current task
        # as on traceback it will prevent the task from being
        # collected and will cause a memory leak.
        request = self._request_factory(
            message,
            payload,
            self,
            writer,
            self._task_handler or asyncio.current_task(loop),  # type: ignore[arg-type]
        )
        try:
            # a new task is used for copy context vars (#3406)
            coro = self._handle_request(request, start, request_handler)
            if sys.version_info >= (3, 14):
                if isinstance(loop, BaseEventLoop):
                    task = asyncio.create_task(coro, eager_start=True)
                else:
                    task = asyncio.Task(coro, loop=loop, eager_start=True)
            elif sys.version_info >= (3, 12):
                task = asyncio.Task(coro, loop=loop, eager_start=True)
            else:
                task = loop.create_task(coro)
            try:
                resp, reset = await task
            except ConnectionError:
                self.log_debug("Ignored premature client disconnection")
                break

            # Drop the processed task from asyncio.Task.all_tasks() early
            del task
            if reset:
                self.log_debug("Ignored premature client disconnection 2")
                break

            # notify server about keep-alive
            self._keepalive = bool(resp.keep_alive)

            # check payload
            if not payload.is_eof():
                lingering_time = self._lingering_time
                if not self._force_close and lingering_time:
                    self.log_debug("Start lingering close timer for %s sec.", lingering_time)

                    now = loop.time()
                    end_t = now + lingering_time

                    try:
                        while not payload.is_eof() and now < end_t:
                            async with ceil_timeout(end_t - now):
                                # read and ignore
                                await payload.readany()
                            now = loop.time()
                    except (TimeoutError, asyncio.CancelledError):
                        if sys.version_info >= (3, 11) and (t := asyncio.current_task()) and t.cancelling():
                            raise

                # if payload still uncompleted
                if not payload.is_eof() and not self._force_close:
                    self.log_debug("Uncompleted request.")
                    self.close()

            payload.set_exception(_PAYLOAD_ACCESS_ERROR)

        except asyncio.CancelledError:
            self.log_debug("Ignored premature client disconnection")
            self.force_close()
            raise
        except Exception as exc:
            self.log_exception("Unhandled exception", exc_info=exc)
            self.force_close()
        except BaseException:
            self.force_close()
            raise
        finally:
            request._task = None  # type: ignore[assignment] # Break reference cycle in case of exception
            if self.transport is None and resp is not None:
                self.log_debug("Ignored premature client disconnection.")

        # The first change: nothing of this request outlives it (see the module's docstring).
        request = resp = message = payload = writer = coro = request_handler = None  # type: ignore[assignment]

        if not _keep_alive(self, keepalive_timeout):
            break

    # remove handler, close transport if no handlers left
    if not self._force_close:
        self._task_handler = None
        if self.transport is not None:
            self.transport.close()


def data_received(self: web.RequestHandler, data: bytes) -> None:
    """aiohttp's, but for a poll's head that comes alone while aiohttp's parser is between requests: the
    connection's poll lane reads it and it is queued for `start` as aiohttp's own queues a parsed request.

    Between requests means that the parser holds nothing of a request: a new connection's, or after it
    has read, in one call, exactly one request whose head ended that call's data, with no body to come,
    and had nothing else queued (so it was not paused with a tail). Every other case leaves the rest of
    the connection's data to it until it is between requests again."""
    if self._force_close or self._close:  # as aiohttp's: a closing connection reads no more
        return
    if not data:  # aiohttp's own call on resuming, for what its parser held back; between requests, none
        web.RequestHandler.data_received(self, data)
        return
    between_requests: bool = self.between_requests  # type: ignore[attr-defined]
    if between_requests and self._payload_parser is None and not self._upgraded:
        poll = self.poll_lane.read(data)  # type: ignore[attr-defined]
        if poll is not None:
            self._request_count += 1
            self._messages.append((poll, EMPTY_PAYLOAD))  # type: ignore[arg-type]
            waiter = self._waiter
            if waiter is not None and not waiter.done():
                waiter.set_result(None)
            if not self._buffer_paused and len(self._messages) >= self._max_msg_queue_size:
                self._pause_reading_for_buffer()
            return
    count = self._request_count
    web.RequestHandler.data_received(self, data)
    queued = self._messages
    self.between_requests = (  # type: ignore[attr-defined]
        self._request_count == count + 1  # it read one request, the only one queued
        and len(queued) == 1
        and not isinstance(queued[0][0], _ErrInfo)
        and queued[0][1] is EMPTY_PAYLOAD
        and not self._upgraded
        and data.endswith(b"\r\n\r\n")
    )


def _keep_alive(self: web.RequestHandler, keepalive_timeout: float) -> bool:
    """After a request: arm the keep-alive timer and go on, or False to end the connection (aiohttp's
    code, moved out of `start` for the poll lane's answers too)."""
    if self._keepalive and not self._close and not self._force_close:
        # start keep-alive timer
        close_time = self._loop.time() + keepalive_timeout
        self._next_keepalive_close_time = close_time
        if self._keepalive_handle is None:
            self._keepalive_handle = self._loop.call_at(close_time, self._process_keepalive)
        return True
    return False
