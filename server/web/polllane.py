"""The poll lane: getMsg and getBMsg answered without aiohttp's request and response objects (issue 19.2).

Nearly every request is a poll: every client sends one a second, and moves travel inside them. For each,
aiohttp builds a request, a task to run it in, a response with its headers and a writer, and walks its
finish and its access log. Measured on this project's 2-core machine, both on uvloop and aiohttp's own
parser, 7,200 requests a second: aiohttp's hello-world took 48-56% of a core, a bare asyncio protocol
answering the same 12-14% (docs/operations.md). So the connection's loop (requestloop.py) hands the
polls it recognises here, with the message aiohttp's parser made, and this answers them as the route
would: the same limits, the same answer (kropki.poll), the reply times in /metrics, the same access log,
and the reply byte for byte as aiohttp writes it (tests/web/test_polllane.py compares the two).
Anything else (another `co`, a HEAD, a body, `Expect`, an upgrade) goes the usual way.

Like requestloop.py, it reads and sets the connection's private state that aiohttp's own request
handling does (`_request_in_progress` and `_handler_waiter`, which a graceful stop waits on, and
`_logging_enabled`); it runs only inside that copied loop, so only with the aiohttp it was copied from.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Awaitable, Callable, Container
from typing import Protocol, cast
from urllib.parse import unquote

from aiohttp import hdrs, web
from aiohttp.compression_utils import ZLibCompressor
from aiohttp.helpers import rfc822_formatted_time
from aiohttp.http import SERVER_SOFTWARE, HttpVersion, HttpVersion10, HttpVersion11
from aiohttp.http_parser import SINGLETON_HEADERS, RawRequestMessage
from aiohttp.streams import EMPTY_PAYLOAD, StreamReader
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from server.web.accesslog import POLLS, RedactingAccessLogger
from server.web.clients import Asker, refused
from server.web.common import encoded
from server.web.headers import TEXT_HEADERS, worth_compressing
from server.web.metrics import METRICS_KEY

PATH = "/a.kropki"
PollAnswer = Callable[[Asker, str], Awaitable[str]]
POLL_ANSWER_KEY = web.AppKey("poll_answer", PollAnswer)  # set by the app: kropki.poll
# aiohttp's header lines of text_response's headers, in its order; Content-Length, Date, Server follow
TEXT_HEAD = "".join(f"{name}: {value}\r\n" for name, value in TEXT_HEADERS.items())
CODINGS = ("deflate", "gzip")  # as aiohttp picks one from Accept-Encoding: the first it finds
# A poll's head as PollLane.read reads it: a GET of PATH with a query, in HTTP/1.1 or 1.0, then lines of a
# header's name (a token), a colon and a value of visible ASCII, spaces and tabs, then the blank line and
# nothing after it. In the request target and the values, aiohttp's parser takes every one of these
# characters; in a name it takes no other.
_POLL_HEAD = re.compile(
    rb"GET (/a\.kropki\?[!-~]*) HTTP/1\.([01])\r\n((?:[!#$%&'*+.^_`|~0-9A-Za-z-]+:[\t -~]*\r\n)*)\r\n"
)
MAX_HEAD = 8190  # bytes: aiohttp's limit on the request line and on each header line
MAX_HEADERS = 32  # header lines the lane reads (aiohttp takes 128); aiohttp reads a head with more
# headers that make a body, an upgrade or a 100-continue, or that aiohttp refuses; and Proxy-Connection,
# which llhttp (aiohttp's parser) takes for a second Connection header: its close or keep-alive counts
_LEFT_TO_AIOHTTP = frozenset(
    {"content-length", "transfer-encoding", "expect", "upgrade", "sec-websocket-key1", "proxy-connection"}
)
_SINGLETONS = frozenset(name.lower() for name in SINGLETON_HEADERS)  # aiohttp refuses one sent twice


class Guard(Protocol):
    """The connection guard (connections.py), as the lane tells it about a poll."""

    @property
    def closing(self) -> Container[web.RequestHandler]: ...

    def answered(self, connection: web.RequestHandler) -> None: ...


class PollRequest:
    """A poll the lane answers: what the limits, the poll's answer (clients.Asker), its reply and its
    access line read of the request.

    Only this outlives the parse, with what the connection's parser keeps of the last request it read
    until it reads another (its URL, header tuples and lists; on a connection whose polls the lane reads
    itself, PollLane.read, that is the login's). aiohttp's message is let go before the poll waits, the
    URL is never asked for its query (which it would keep: a multidict, a list and a tuple a parameter),
    and the query is a dict of strings, which the collector does not track. Every poll held across a
    collection is walked by it once (server/gcschedule.py): under 2,000 games that walk took 6-10% of a core,
    at about 34 objects a poll (issue 19.2)."""

    __slots__ = ("app", "co", "headers", "query", "remote", "should_close", "target", "version")
    path = PATH

    def __init__(
        self,
        app: web.Application,
        query: dict[str, str],
        co: str,
        headers: CIMultiDictProxy[str],
        target: str,
        version: HttpVersion,
        should_close: bool,
    ) -> None:
        self.app, self.query, self.co, self.headers = app, query, co, headers
        self.target = target  # the request target as sent: only a logged poll reads it again
        self.version, self.should_close = version, should_close
        self.remote: str | None = None  # set when it is answered, from the connection


class PollLane:
    def __init__(self, app: web.Application, answer: PollAnswer) -> None:
        self.app = app
        self.answer_poll = answer
        self.metrics = app.get(METRICS_KEY)

    @classmethod
    def for_app(cls, app: web.Application, access_log_class: type | None) -> PollLane | None:
        """The lane for an app that names its poll answer, logging with the access log it knows; else None."""
        answer = app.get(POLL_ANSWER_KEY)
        if answer is None or (
            access_log_class is not None and not issubclass(access_log_class, RedactingAccessLogger)
        ):
            return None
        return cls(app, answer)

    def takes(self, message: RawRequestMessage, payload: StreamReader) -> PollRequest | None:
        """A poll this lane answers; None for any other request.

        It reads the target as sent, never aiohttp's URL of it: the connection's parser keeps its last
        request's URL until the next request, and a URL asked for its query keeps that too, as a
        multidict, a list and a tuple a parameter (see PollRequest)."""
        if (
            message.method != hdrs.METH_GET
            or payload is not EMPTY_PAYLOAD  # a body, even on a GET: aiohttp reads or drains it
            or message.upgrade
            or (message.version != HttpVersion11 and message.version != HttpVersion10)
            or hdrs.EXPECT in message.headers
        ):
            return None
        path, raw_query = split_target(message.path)
        if path != PATH:  # the origin form only, as clients send it: an absolute one is aiohttp's
            return None
        query = first_values(raw_query)
        co = query.get("co")
        if co not in POLLS:
            return None
        return PollRequest(
            self.app, query, co, message.headers, message.path, message.version, message.should_close
        )

    def read(self, data: bytes) -> PollRequest | None:
        """The poll whose head is the whole of `data`, read without aiohttp's parser; None for anything
        else, which that parser then reads (requestloop.data_received).

        Nearly every request is a poll, sent alone, and its head comes in one piece. For each, aiohttp's
        parser makes a URL, header tuples and lists and a message, of which a poll keeps a few strings:
        aiohttp's data_received, the parser in it, took about a sixth of the event loop's time under
        2,000 games (issue 19.2). This reads only what aiohttp reads as the same request, and leaves to
        aiohttp anything it might read otherwise or refuse: a request line or header line in other
        characters than _POLL_HEAD's, a header that makes a body, an upgrade or a 100-continue, a second
        of a header aiohttp takes once, a Connection other than keep-alive or close, a Proxy-Connection
        (llhttp reads it as a Connection; clients send it only to proxies), HTTP/1.1 without a Host, more
        than MAX_HEADERS headers, a head over MAX_HEAD bytes. tests/web/test_polllane.py checks that both
        read every head the lane reads in the same way."""
        if len(data) > MAX_HEAD:
            return None
        head = _POLL_HEAD.fullmatch(data)
        if head is None:
            return None
        target = head[1].decode("ascii")
        query = first_values(split_target(target)[1])
        co = query.get("co")
        if co not in POLLS:
            return None
        headers: CIMultiDict[str] = CIMultiDict()
        connection = ""
        lines = head[3].decode("ascii").split("\r\n")[:-1]  # each ends with CRLF: the last piece is empty
        if len(lines) > MAX_HEADERS:
            return None
        for line in lines:
            name, _, value = line.partition(":")
            value = value.strip(" \t")
            lowered = name.lower()
            if lowered in _LEFT_TO_AIOHTTP or (lowered in _SINGLETONS and name in headers):
                return None
            if lowered == "connection":  # once, keep-alive or close
                if connection:
                    return None
                connection = value.lower()
                if connection not in ("keep-alive", "close"):
                    return None
            headers.add(name, value)
        if head[2] == b"1":
            if hdrs.HOST not in headers:  # aiohttp refuses an HTTP/1.1 request without one
                return None
            version, should_close = HttpVersion11, connection == "close"
        else:
            version, should_close = HttpVersion10, connection != "keep-alive"
        return PollRequest(self.app, query, co, CIMultiDictProxy(headers), target, version, should_close)

    async def answer(self, connection: web.RequestHandler, request: PollRequest, guard: Guard) -> bool:
        """Answer the poll on `connection`, then tell the guard; whether the connection stays open (not
        if the guard is closing it)."""
        started = time.perf_counter()
        co = request.co
        peer = connection.peername
        remote = None if peer is None else str(peer[0]) if isinstance(peer, (list, tuple)) else str(peer)
        request.remote = remote
        # as aiohttp's _handle_request: a graceful stop waits for the request in progress
        connection._request_in_progress = True
        try:
            why = refused(request)
            text = why if why is not None else await self.answer_poll(request, co)
        finally:
            connection._request_in_progress = False
            if connection._handler_waiter is not None:
                connection._handler_waiter.set_result(None)
            if self.metrics is not None:
                self.metrics.observe_command(PATH, co, time.perf_counter() - started)
        body = encoded(text)
        keep_alive = not request.should_close and connection not in guard.closing
        reply = _reply(request, body, keep_alive)
        transport = connection.transport
        if transport is not None:  # None: the client went away meanwhile
            transport.write(reply)
        if connection._logging_enabled:
            log = cast(RedactingAccessLogger, connection.access_logger)
            duration = time.perf_counter() - started
            log.request_done(
                request, hdrs.METH_GET, URL(request.target, encoded=True), 200, body, len(reply), duration
            )
        guard.answered(connection)
        return keep_alive


def split_target(target: str) -> tuple[str, str]:
    """An origin-form target's path and raw query string, split as aiohttp's parser splits it for its URL
    (a fragment, which clients do not send, left out)."""
    query_at = target.find("?")
    if query_at == -1:
        fragment_at = target.find("#")
        return (target if fragment_at == -1 else target[:fragment_at]), ""
    fragment_at = target.find("#", query_at + 1)
    return target[:query_at], target[query_at + 1 : None if fragment_at == -1 else fragment_at]


def first_values(raw_query: str) -> dict[str, str]:
    """The query's parameters, each with its first value as `MultiDictProxy.get` and `[]` read aiohttp's
    `request.query`, decoded as yarl decodes it: as `parse_qsl(keep_blank_values=True)` (yarl's own
    words), whose steps these are, but that only a name or value with a percent sign is unquoted (half
    the time of parse_qsl for a poll carrying moves, whose slashes are sent as %2F)."""
    values: dict[str, str] = {}
    for pair in raw_query.replace("+", " ").split("&"):
        if pair:
            name, _, value = pair.partition("=")
            if "%" in name:
                name = unquote(name, errors="replace")
            if "%" in value:
                value = unquote(value, errors="replace")
            values.setdefault(name, value)
    return values


def _reply(request: PollRequest, body: bytes, keep_alive: bool) -> bytes:
    """The reply as aiohttp writes text_response's (with headers.finish's compression)."""
    version = request.version
    coding = ""
    if worth_compressing(body, request.headers):
        accepted = request.headers[hdrs.ACCEPT_ENCODING].lower()
        coding = next(name for name in CODINGS if name in accepted)
        body = _compressed(body, coding)
    head = [f"HTTP/{version.major}.{version.minor} 200 OK\r\n", TEXT_HEAD, f"Content-Length: {len(body)}\r\n"]
    if coding:
        head.append(f"Content-Encoding: {coding}\r\n")
    head.append(f"Date: {rfc822_formatted_time()}\r\nServer: {SERVER_SOFTWARE}\r\n")
    if keep_alive:
        if version == HttpVersion10:
            head.append("Connection: keep-alive\r\n")
    elif version == HttpVersion11:
        head.append("Connection: close\r\n")
    head.append("\r\n")
    return "".join(head).encode() + body


@functools.lru_cache(maxsize=8)
def _compressed(body: bytes, coding: str) -> bytes:
    """Compressed as aiohttp compresses a response's body; many readers share the lobby's whole state."""
    compressor = ZLibCompressor(encoding=coding)
    return compressor.compress_sync(body) + compressor.flush()
