"""The poll lane (server/web/polllane.py): polls answered without aiohttp's request and response, byte for
byte as aiohttp answers them through the route, and every other request left to aiohttp."""

from __future__ import annotations

import asyncio
import gc
import logging
import re
import zlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest
from aiohttp import web
from aiohttp.http_parser import RawRequestMessage
from hypothesis import event, example, given
from hypothesis import settings as examples
from hypothesis import strategies as st
from yarl import URL

from server.app import create_app
from server.config import Settings
from server.web import requestloop
from server.web.accesslog import SUMMARIES_KEY, RedactingAccessLogger
from server.web.clients import LIMITS_KEY
from server.web.common import HUB_KEY
from server.web.connections import (
    KEEPALIVE_TIMEOUT,
    ConnectionGuard,
    GuardedAppRunner,
    GuardedRequestHandler,
)
from server.web.limits import TokenBuckets
from server.web.metrics import METRICS_KEY
from server.web.polllane import POLL_ANSWER_KEY, PollLane, PollRequest, first_values
from tests.web.zagram import parse_reply

pytestmark = pytest.mark.skipif(not requestloop.READS, reason="the lane rides on the copied request loop")


class KeptAlive:
    """One keep-alive connection to the served app, its requests written as given, and its end on the
    server's side (`served`)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, guard: ConnectionGuard):
        self.reader, self.writer, self.guard = reader, writer, guard

    @property
    def served(self) -> GuardedRequestHandler:
        (connection,) = self.guard.open  # the test's other connections are closed by then
        return connection

    async def until(self, condition: Callable[[GuardedRequestHandler], object]) -> None:
        """Wait (5 s at most) until the server's end of the connection is as the test needs it."""
        async with asyncio.timeout(5):
            while not condition(self.served):
                await asyncio.sleep(0.005)

    async def reply(self) -> bytes:
        """The next reply, its head and body as they came."""
        async with asyncio.timeout(5):
            head = await self.reader.readuntil(b"\r\n\r\n")
            if head.startswith(b"HTTP/1.1 100 "):  # `Expect: 100-continue` is answered first
                head = await self.reader.readuntil(b"\r\n\r\n")
            length = re.search(rb"\r\nContent-Length: (\d+)\r\n", head)
            assert length is not None, head
            return head + await self.reader.readexactly(int(length.group(1)))

    async def exchange(self, request: bytes) -> bytes:
        self.writer.write(request)
        return await self.reply()


@asynccontextmanager
async def kept_alive(lane: Lane) -> AsyncIterator[KeptAlive]:
    reader, writer = await asyncio.open_connection("127.0.0.1", lane.port)
    try:
        yield KeptAlive(reader, writer, lane.runner.server.guard)  # type: ignore[union-attr]
    finally:
        writer.transport.abort()


class Lane:
    """A served app whose poll lane can be counted and switched off for new connections."""

    def __init__(self, runner: GuardedAppRunner, port: int) -> None:
        self.runner, self.port = runner, port
        self.lane: PollLane | None = runner.server.poll_lane  # type: ignore[union-attr]
        assert self.lane is not None
        self.taken = 0
        self.read = 0  # heads the lane read itself (PollLane.read), not aiohttp's parser
        answer, read = self.lane.answer, self.lane.read

        async def counted(*args: object) -> bool:
            self.taken += 1
            return await answer(*args)  # type: ignore[arg-type]

        def counted_read(data: bytes) -> PollRequest | None:
            poll = read(data)
            self.read += poll is not None
            return poll

        self.lane.answer = counted  # type: ignore[method-assign]
        self.lane.read = counted_read  # type: ignore[method-assign]

    def use_lane(self, on: bool) -> None:
        self.runner.server.poll_lane = self.lane if on else None  # type: ignore[union-attr]

    async def exchange(self, request: bytes) -> bytes:
        """`request` on a connection of its own; the whole reply (head and body) as it came."""
        async with kept_alive(self) as connection:
            return await connection.exchange(request)

    async def both_ways(self, request: bytes) -> tuple[bytes, bytes]:
        """The reply by the lane, then by aiohttp, each checked to have gone the way it was meant to."""
        taken = self.taken
        by_lane = await self.exchange(request)
        assert self.taken == taken + 1, "the lane did not take it"
        self.use_lane(False)
        try:
            by_aiohttp = await self.exchange(request)
        finally:
            self.use_lane(True)
        assert self.taken == taken + 1
        return by_lane, by_aiohttp


@asynccontextmanager
async def served(settings: Settings) -> AsyncIterator[Lane]:
    app = create_app(settings)
    runner = GuardedAppRunner(
        app,
        ConnectionGuard(100, app[METRICS_KEY]),
        access_log_class=RedactingAccessLogger,
        keepalive_timeout=KEEPALIVE_TIMEOUT,
    )
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        yield Lane(runner, runner.addresses[0][1])
    finally:
        if runner.server is not None:  # not stopped by the test itself
            await runner.cleanup()


def get(target: str, *headers: str, version: str = "1.1") -> bytes:
    lines = [f"GET {target} HTTP/{version}", *headers]
    if version == "1.1":
        lines.append("Host: kropki")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def held_poll(lane: Lane, target: str) -> asyncio.StreamWriter:
    """A long poll sent on a connection of its own, once the server holds it; its connection's writer."""
    guard = lane.runner.server.guard  # type: ignore[union-attr]
    _, writer = await asyncio.open_connection("127.0.0.1", lane.port)
    writer.write(get(target))
    for _ in range(200):
        if guard.polls:
            return writer
        await asyncio.sleep(0.01)
    raise AssertionError("the long poll never started")


def without_date(reply: bytes) -> bytes:
    return re.sub(rb"\r\nDate: [^\r]+\r\n", b"\r\nDate: -\r\n", reply)


async def log_in(lane: Lane, secret: str, nick: str) -> int:
    """A guest logged in over HTTP; the j of its first whole state (so that later polls are quiet)."""
    login = await lane.exchange(get(f"/a.kropki?co=guestLogin&idGracza={secret}&opis={nick}"))
    assert login.endswith(b"\r\n\r\n")  # an empty body: logged in
    reply = await lane.exchange(get(f"/a.kropki?co=getMsg&idGracza={secret}&msgNo=0"))
    return parse_reply(reply.split(b"\r\n\r\n", 1)[1].decode()).last


async def test_polls_by_the_lane_are_byte_for_byte_aiohttps(settings: Settings) -> None:
    async with served(settings) as lane:
        seen = await log_in(lane, "laneAla1", "%2AAla")
        quiet = f"/a.kropki?co=getMsg&idGracza=laneAla1&msgNo={seen}&msgFromClient=x"
        cases = [
            get(quiet),
            get(quiet.replace("getMsg", "getBMsg")),
            get(quiet, "Connection: keep-alive", version="1.0"),
            get(quiet, version="1.0"),  # closed after the answer
            get(quiet, "Connection: close"),
            get(quiet, "X-Forwarded-For: 10.1.2.3"),  # not a trusted proxy: ignored both ways
            get("/a.kropki?co=getMsg&idGracza=laneAla1&msgNo=seven"),  # refused by the codec
            get("/a.kropki?co=getMsg&idGracza=laneAla1&msgNo=0&wait=-1"),  # refused: a bad wait
            get(f"/a.kropki?co=getMsg&playerId=laneAla1&msgNo={seen}&wait=0.05"),  # held, nothing new
            # a parameter given twice counts with its first value; names and values percent-decoded
            get(f"/a.kropki?co=getMsg&co=getBMsg&idGracza=lane%41la1&idGracza=laneBob1&msgNo={seen}&msgNo=0"),
            get(f"/a.kropki?co=getMsg&idGracza=laneAla1&%6DsgNo={seen}&msgFromClient=%78"),
            get(f"/a.kropki?co=getMsg&idGracza=laneAla1&msgNo={seen}#msgNo=0"),  # a fragment is not the query
        ]
        read, by_lanes_reader = lane.read, []
        for request in cases:
            by_lane, by_aiohttp = await lane.both_ways(request)
            assert without_date(by_lane) == without_date(by_aiohttp), request
            by_lanes_reader.append(without_date(by_lane))
        assert lane.read == read + len(cases)  # every head read by the lane, not aiohttp's parser
        lane.runner.server.reads_polls = False  # type: ignore[union-attr]  # the lane, of aiohttp's parse
        assert [without_date(await lane.exchange(request)) for request in cases] == by_lanes_reader
        assert lane.read == read + len(cases)
        lane.runner.server.reads_polls = True  # type: ignore[union-attr]
        assert b"\r\nConnection: close\r\n" in (await lane.both_ways(cases[4]))[0]
        assert b"\r\nConnection: keep-alive\r\n" in (await lane.both_ways(cases[2]))[0]


async def test_a_whole_lobby_is_compressed_as_aiohttp_compresses_it(settings: Settings) -> None:
    async with served(settings) as lane:
        hub = lane.runner.app[HUB_KEY]
        for number in range(90):  # a lobby listing them is well over the 1 kB worth compressing
            hub.guest_login(f"lobby{number}", f"*Guest{number}", "en")
        for secret, encoding, coding in (
            ("laneBob1", "gzip, deflate, br", b"deflate"),  # aiohttp takes deflate when both are offered
            ("laneCid1", "gzip", b"gzip"),
        ):
            await log_in(lane, secret, f"%2A{secret[4:7]}")
            whole = f"/a.kropki?co=getMsg&idGracza={secret}&msgNo=0"
            by_lane, by_aiohttp = await lane.both_ways(get(whole, f"Accept-Encoding: {encoding}"))
            assert without_date(by_lane) == without_date(by_aiohttp)
            head, body = by_lane.split(b"\r\n\r\n", 1)
            assert b"\r\nContent-Encoding: " + coding + b"\r\n" in head
            text = zlib.decompress(body, 31 if coding == b"gzip" else 15).decode()
            assert text.startswith("ok/") and "*Guest89" in text
        hub.guest_login("laneDee1", "*Dee", "en")  # each id gets 3 whole states at once: a new one
        plain = await lane.exchange(get("/a.kropki?co=getMsg&idGracza=laneDee1&msgNo=0"))
        assert b"Content-Encoding" not in plain and b"*Guest89" in plain  # not asked for: not compressed


async def test_the_limits_refuse_by_the_lane_as_by_the_route(settings: Settings) -> None:
    async with served(settings) as lane:
        seen = await log_in(lane, "laneDan1", "%2ADan")
        poll = get(f"/a.kropki?co=getMsg&idGracza=laneDan1&msgNo={seen}")
        replies = [await lane.exchange(poll) for _ in range(45)]  # 40 at once per id, then 20 a second
        refused = [reply for reply in replies if reply.endswith(b"\r\n\r\nerr.tooFast")]
        assert refused and b"\r\nCache-Control: no-store\r\n" in refused[0]
        assert b"\r\nX-Content-Type-Options: nosniff\r\n" in refused[0]
        counts = lane.runner.app[METRICS_KEY].registry.get_sample_value(
            "kropki_reply_seconds_count", {"endpoint": "/a.kropki:getMsg"}
        )
        assert counts == 46  # every poll timed in /metrics, the whole state's and the refused ones too
        lane.runner.app[LIMITS_KEY].per_id = TokenBuckets(0.0, 0.0)  # refuses every request with an id
        by_lane, by_aiohttp = await lane.both_ways(poll)  # aiohttp's: the front door's refusal
        assert by_lane.endswith(b"\r\n\r\nerr.tooFast")
        assert without_date(by_lane) == without_date(by_aiohttp)


async def test_everything_but_a_plain_poll_goes_to_aiohttp(settings: Settings) -> None:
    async with served(settings) as lane:
        seen = await log_in(lane, "laneEve1", "%2AEve")
        taken, read = lane.taken, lane.read
        poll = f"/a.kropki?co=getMsg&idGracza=laneEve1&msgNo={seen}"
        others = [
            (f"HEAD {poll} HTTP/1.1\r\nHost: k\r\n\r\n".encode(), None),
            (f"POST {poll} HTTP/1.1\r\nHost: k\r\nContent-Length: 0\r\n\r\n".encode(), b" 405 "),
            (f"GET {poll} HTTP/1.1\r\nHost: k\r\nContent-Length: 1\r\n\r\nx".encode(), b" 200 "),  # a body
            (get(poll, "Expect: 100-continue"), b" 200 "),
            (get(poll, "Connection: Upgrade", "Upgrade: websocket"), b" 200 "),
            (get(poll.replace("/a.kropki", "/a.kropki/")), b" 404 "),
            (get("/a.kropki?co=zmienStol&idGracza=laneEve1&newTable=0"), b" 200 "),
            (get("/a.kropki?idGracza=laneEve1"), b" 200 "),  # no co: err.unknownCo
            (get(f"/a.kropki#?{poll.split('?')[1]}"), b" 404 "),  # the path is /a.kropki# (aiohttp's split)
            (get(f"http://kropki{poll}"), b" 200 "),  # the absolute form, which clients do not send
            (f"GET {poll} HTTP/1.1\r\n\r\n".encode(), b" 400 "),  # HTTP/1.1 needs a Host
            (get(poll, "Host: again"), b" 400 "),  # aiohttp takes one Host only
        ]
        for request, status in others:
            if status is None:  # HEAD: a head and no body
                reader, writer = await asyncio.open_connection("127.0.0.1", lane.port)
                writer.write(request)
                assert (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)).startswith(b"HTTP/1.1 200 ")
                writer.transport.abort()
                continue
            assert status in (await lane.exchange(request)).split(b"\r\n", 1)[0], request
        assert lane.taken == taken
        assert lane.read == read


@given(st.text(alphabet="ab=&%+#?;2F4é\x00\udcff ", max_size=40))
def test_the_lane_reads_a_query_as_aiohttps_request_query(raw_query: str) -> None:
    query = URL.build(path="/a.kropki", query_string=raw_query, encoded=True).query
    assert first_values(raw_query) == {name: query[name] for name in query}


async def test_a_refused_poll_is_counted_as_the_route_counts_it(settings: Settings, caplog) -> None:
    """A refused poll writes no line of its own (server/web/accesslog.py, RequestSummaries): by the lane
    and by aiohttp alike it is counted with its network's, under its answer."""
    caplog.set_level(logging.INFO, logger="aiohttp.access")
    async with served(settings) as lane:
        refused = get("/a.kropki?co=getMsg&idGracza=laneHal1&msgNo=seven&wait=0.1")
        await lane.both_ways(refused)
        counted = lane.runner.app[SUMMARIES_KEY].networks["127.0.0.0/24"]
        assert counted.left_out == 2 and list(counted.answers.values()) == [2]
        assert not [record for record in caplog.records if "target=" in record.getMessage()]


async def test_a_held_poll_keeps_nothing_of_aiohttps_message(settings: Settings) -> None:
    """The collector walks every poll held across a collection: the lane's poll lets aiohttp's parsed
    message go before it waits (PollRequest; the connection's parser keeps its URL and header lists)."""
    async with served(settings) as lane:
        seen = await log_in(lane, "laneIda1", "%2AIda")
        writer = await held_poll(lane, f"/a.kropki?co=getMsg&idGracza=laneIda1&msgNo={seen}&wait=5")
        messages = [held for held in gc.get_objects() if isinstance(held, RawRequestMessage)]
        assert not [message for message in messages if message.path.startswith("/a.kropki")]
        assert [held for held in gc.get_objects() if isinstance(held, PollRequest)]
        writer.transport.abort()


async def test_a_long_poll_whose_client_left_ends_quietly(settings: Settings, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    async with served(settings) as lane:
        seen = await log_in(lane, "laneFay1", "%2AFay")
        guard = lane.runner.server.guard  # type: ignore[union-attr]
        writer = await held_poll(lane, f"/a.kropki?co=getMsg&idGracza=laneFay1&msgNo={seen}&wait=0.3")
        writer.transport.abort()
        await asyncio.sleep(0.6)  # its wait is over; nothing to write to
        assert not guard.open and not guard.idle
        again = await lane.exchange(get(f"/a.kropki?co=getMsg&idGracza=laneFay1&msgNo={seen}"))
        assert again.startswith(b"HTTP/1.1 200 ") and b"\r\n\r\nok/" in again
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]


async def test_a_graceful_stop_answers_a_long_poll_of_the_lane(settings: Settings) -> None:
    async with served(settings) as lane:
        seen = await log_in(lane, "laneGus1", "%2AGus")
        reader, writer = await asyncio.open_connection("127.0.0.1", lane.port)
        writer.write(get(f"/a.kropki?co=getMsg&idGracza=laneGus1&msgNo={seen}&wait=30"))
        await asyncio.sleep(0.2)
        stopping = asyncio.create_task(lane.runner.cleanup())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        assert head.startswith(b"HTTP/1.1 200 ")
        await asyncio.wait_for(stopping, 30)
        writer.transport.abort()


def test_an_app_without_a_poll_answer_or_with_another_access_log_has_no_lane(settings: Settings) -> None:
    app = create_app(settings)
    assert PollLane.for_app(app, RedactingAccessLogger) is not None
    assert PollLane.for_app(app, None) is not None  # no access log at all
    assert PollLane.for_app(app, web.AccessLogger) is None  # it would not know how to log a poll
    del app[POLL_ANSWER_KEY]
    assert PollLane.for_app(app, RedactingAccessLogger) is None


def body_of(reply: bytes) -> bytes:
    assert reply.startswith(b"HTTP/1.1 200 "), reply
    return reply.split(b"\r\n\r\n", 1)[1]


async def test_a_connection_comes_back_to_the_lanes_reader_after_aiohttp_read_its_requests(
    settings: Settings,
) -> None:
    """Clients log in and poll on one connection: after a request aiohttp's parser read, the lane reads
    the polls again once that parser is between requests, whatever the request before was."""
    async with served(settings) as lane, kept_alive(lane) as connection:
        login = get("/a.kropki?co=guestLogin&idGracza=laneJoe1&opis=%2AJoe")
        assert body_of(await connection.exchange(login)) == b""  # a login: aiohttp's parser
        whole = get("/a.kropki?co=getMsg&idGracza=laneJoe1&msgNo=0")
        seen = parse_reply(body_of(await connection.exchange(whole)).decode()).last
        quiet = get(f"/a.kropki?co=getMsg&idGracza=laneJoe1&msgNo={seen}")
        assert lane.read == 1  # the first poll after the login: the lane's

        with_a_body = f"GET /a.kropki?co=getMsg&idGracza=laneJoe1&msgNo={seen} HTTP/1.1\r\nHost: k\r\n"
        with_a_body += "Content-Length: 4\r\n\r\nabcd"
        assert body_of(await connection.exchange(with_a_body.encode())).startswith(b"ok/")
        assert body_of(await connection.exchange(quiet)).startswith(b"ok/")  # the parser's again
        assert lane.read == 1
        assert body_of(await connection.exchange(quiet)).startswith(b"ok/")  # and now the lane's
        assert lane.read == 2

        connection.writer.write(quiet[:20])  # a head in two pieces
        await connection.until(lambda served: served in connection.guard.arriving)
        assert body_of(await connection.exchange(quiet[20:])).startswith(b"ok/")
        assert lane.read == 2
        assert body_of(await connection.exchange(quiet)).startswith(b"ok/")
        assert lane.read == 3

        upgrade = get(f"/a.kropki?co=getMsg&idGracza=laneJoe1&msgNo={seen}", "Upgrade: websocket")
        assert body_of(await connection.exchange(upgrade)).startswith(b"ok/")  # aiohttp's parser's
        assert lane.read == 3
        assert body_of(await connection.exchange(quiet)).startswith(b"ok/")  # it ended between requests
        assert lane.read == 4


async def test_polls_in_one_piece_or_behind_a_held_poll_are_answered_in_order(settings: Settings) -> None:
    async with served(settings) as lane, kept_alive(lane) as connection:
        seen = await log_in(lane, "laneKit1", "%2AKit")
        quiet = get(f"/a.kropki?co=getMsg&idGracza=laneKit1&msgNo={seen}")
        whole = get("/a.kropki?co=getMsg&idGracza=laneKit1&msgNo=0")
        connection.writer.write(quiet + whole)  # two heads in one piece: aiohttp's parser reads them
        first, second = body_of(await connection.reply()), body_of(await connection.reply())
        assert b"*Kit" not in first and b"*Kit" in second  # the whole state names its player
        read = lane.read

        held = get(f"/a.kropki?co=getMsg&idGracza=laneKit1&msgNo={seen}&wait=0.4")
        connection.writer.write(held)
        await connection.until(lambda served: served in connection.guard.polls)
        connection.writer.write(whole)  # while the held one waits: it is answered after it
        first, second = body_of(await connection.reply()), body_of(await connection.reply())
        assert b"*Kit" not in first and b"*Kit" in second
        assert lane.read == read + 1  # the held one by aiohttp's parser (after two heads), the next not


# Heads as real clients send a poll: MultiPoints and roboCup, both through Java's URL connection
# (roboCup's Utils.getLinkContent is `Source.fromURL(url, "UTF-8")`), the zagram page in a browser
# (Chromium), an organiser's script on Python's urllib, and this project's load generator
# (benchmarks/stream.py).
CLIENTS_HEADS = [
    "User-Agent: Java/21.0.5\r\nHost: kropki.example:8080\r\n"
    "Accept: text/html, image/gif, image/jpeg, *; q=.2, */*; q=.2\r\nConnection: keep-alive\r\n",
    "Host: kropki.example\r\nConnection: keep-alive\r\n"
    'sec-ch-ua: "Chromium";v="131", "Not_A Brand";v="24"\r\nsec-ch-ua-mobile: ?0\r\n'
    "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)"
    ' Chrome/131.0.0.0 Safari/537.36\r\nsec-ch-ua-platform: "Linux"\r\nAccept: */*\r\n'
    "Sec-Fetch-Site: same-origin\r\nSec-Fetch-Mode: cors\r\nSec-Fetch-Dest: empty\r\n"
    "Referer: http://kropki.example/\r\nAccept-Encoding: gzip, deflate, br, zstd\r\n"
    "Accept-Language: pl-PL,pl;q=0.9,en;q=0.8\r\nCookie: lang=pl\r\n",
    "Accept-Encoding: identity\r\nHost: kropki.example\r\nUser-Agent: Python-urllib/3.11\r\n"
    "Connection: close\r\n",
    "Host: 127.0.0.1:8080\r\n",
]


def _parsed(lane: PollLane, head: bytes) -> tuple[PollRequest | None, PollRequest | None]:
    """The poll the lane reads from `head` itself, and the one it takes of aiohttp's parse of it (None if
    that parser refuses it or reads anything but exactly one request, without a body)."""
    loop = asyncio.new_event_loop()
    try:
        connection = web.Server(lambda request: web.Response(), loop=loop)()  # aiohttp's parser, as set up
        try:
            messages, _, _ = connection._parser.feed_data(head)
        except Exception:
            return lane.read(head), None
        if len(messages) != 1:
            return lane.read(head), None
        return lane.read(head), lane.takes(*messages[0])
    finally:
        loop.close()


def _as_read(poll: PollRequest) -> tuple[object, ...]:
    """What is read of a poll; aiohttp's parser spells the names of the headers it knows its own way."""
    headers = [(name.lower(), value) for name, value in poll.headers.items()]
    return poll.query, poll.co, headers, poll.target, poll.version, poll.should_close


@pytest.mark.parametrize("headers", CLIENTS_HEADS)
def test_the_lane_reads_the_polls_real_clients_send_as_aiohttp_reads_them(headers: str) -> None:
    lane = PollLane(web.Application(), answer=None)  # type: ignore[arg-type]  # it only reads here
    target = "/a.kropki?co=getMsg&idGracza=p0123456789&msgNo=17.3&msgFromClient=%2Fm17%2F5%2F7&wait=20"
    read, by_aiohttp = _parsed(lane, f"GET {target} HTTP/1.1\r\n{headers}\r\n".encode())
    assert read is not None and by_aiohttp is not None
    assert _as_read(read) == _as_read(by_aiohttp)


_NAMES = ["Host", "host", "User-Agent", "Accept-Encoding", "Connection", "X-Forwarded-For", "Content-Length"]
_NAMES += ["Proxy-Connection", "proxy-connection"]
_NAMES += ["Transfer-Encoding", "Expect", "Upgrade", "Sec-WebSocket-Key1", "Content-Type", "X-é", "X A", ""]
_VALUES = ["k", "close", "Keep-Alive", "keep-alive, Upgrade", "0", "chunked", "100-continue", "gzip, br", ""]
_HEADER = st.tuples(
    st.sampled_from(_NAMES),
    st.sampled_from([": ", ":", " : ", ":\t"]),
    st.one_of(st.sampled_from(_VALUES), st.text(alphabet=" \t:,aZ\x00\x7fé\r\n", max_size=6)),
)
_PLAIN_HEADER = st.tuples(  # as clients send them, so that the lane has many heads to read
    st.sampled_from(["Accept", "Accept-Encoding", "Referer", "X-A", "user-agent"]),
    st.sampled_from([": ", ":", ":  "]),
    st.sampled_from(
        ["*/*", "gzip, deflate", "keep-alive", "Close", "http://k/?a=b", "  spaced\t", "", '"q"']
    ),
)


@pytest.mark.parametrize("version", ["1.1", "1.0"])
@pytest.mark.parametrize(
    "headers",
    [
        "Proxy-Connection: close",
        "Proxy-Connection: keep-alive",
        "Proxy-Connection: Close, x",
        "Connection: keep-alive\r\nProxy-Connection: close",
        "Proxy-Connection: keep-alive\r\nConnection: close",
    ],
)
def test_a_proxy_connection_is_read_as_aiohttp_reads_it(version: str, headers: str) -> None:
    """llhttp, aiohttp's parser, takes `Proxy-Connection` for a `Connection` (close, keep-alive): a poll
    that has one is read as aiohttp reads it, or left to aiohttp."""
    lane = PollLane(web.Application(), answer=None)  # type: ignore[arg-type]  # it only reads here
    head = f"GET /a.kropki?co=getMsg&a HTTP/{version}\r\nHost: k\r\n{headers}\r\n\r\n"
    read, by_aiohttp = _parsed(lane, head.encode())
    assert by_aiohttp is not None
    assert read is None or _as_read(read) == _as_read(by_aiohttp)


@examples(max_examples=400, deadline=None)
@example("GET", "/a.kropki?co=getMsg&a", "1.1", "Host: k", "", [("Proxy-Connection", ": ", "close")], "")
@example("GET", "/a.kropki?co=getMsg&a", "1.1", "Host: k", "", [("user-agent", ": ", "a")] * 2, "")
@example("GET", "/a.kropki?co=getMsg&a", "1.1", "Host: k", "", [("Host", ":", "k")], "")
@example("GET", "/a.kropki?co=getMsg&a", "1.0", "", "", [("X-A", ":", "\x7f")], "")
@given(
    method=st.sampled_from(["GET"] * 8 + ["HEAD", "get"]),
    target=st.one_of(
        st.builds(
            "/a.kropki?co={}&{}".format,
            st.sampled_from(["getMsg"] * 4 + ["getBMsg"] * 4 + ["zmienStol", "getmsg"]),
            st.one_of(
                *[st.text(alphabet='&=%#?+a"<{', max_size=10)] * 4,
                st.text(alphabet="= é\x7f\x00", max_size=3),
            ),
        ),
        st.sampled_from(["/a.kropki", "/a.kropki/?co=getMsg", "http://k/a.kropki?co=getMsg"]),
    ),
    version=st.sampled_from(["1.1"] * 6 + ["1.0"] * 2 + ["1.2", "2.0"]),
    host=st.sampled_from(["Host: k", "Host: k", "host:k:80", ""]),
    connection=st.sampled_from(
        ["", "", "Connection: keep-alive", "connection:Close", "Connection: keep-alive, x"]
    ),
    headers=st.lists(st.one_of(*[_PLAIN_HEADER] * 6, _HEADER), max_size=4),
    after=st.sampled_from([""] * 8 + ["\r\n", "GET / HTTP/1.1\r\n", "x"]),
)
def test_whatever_head_the_lane_reads_it_reads_as_aiohttp_reads_it(
    method: str,
    target: str,
    version: str,
    host: str,
    connection: str,
    headers: list[tuple[str, str, str]],
    after: str,
) -> None:
    """The lane reads only a poll that aiohttp's parser reads as exactly that poll and nothing else."""
    lane = PollLane(web.Application(), answer=None)  # type: ignore[arg-type]  # it only reads here
    lines = [f"{method} {target} HTTP/{version}", *(name + colon + value for name, colon, value in headers)]
    lines[1:1] = [header for header in (host, connection) if header]
    read, by_aiohttp = _parsed(lane, ("\r\n".join(lines) + "\r\n\r\n" + after).encode())
    event("read by the lane" if read is not None else "left to aiohttp's parser")
    if read is not None:
        assert by_aiohttp is not None
        assert _as_read(read) == _as_read(by_aiohttp)


@given(
    co=st.sampled_from(["getMsg", "getBMsg"]),
    rest=st.text(alphabet='&=%#?+a"<{/7', max_size=12),
    version=st.sampled_from(["1.1", "1.0"]),
    connection=st.sampled_from(["", "Connection: keep-alive", "connection:Close"]),
    headers=st.lists(_PLAIN_HEADER, max_size=6, unique_by=lambda header: header[0].lower()),
)
def test_the_lane_reads_every_plain_poll_itself(
    co: str, rest: str, version: str, connection: str, headers: list[tuple[str, str, str]]
) -> None:
    """Not only the clients' own heads: any poll in the characters and headers clients use."""
    lane = PollLane(web.Application(), answer=None)  # type: ignore[arg-type]  # it only reads here
    lines = [f"GET /a.kropki?co={co}&{rest} HTTP/{version}", "Host: k", connection]
    lines += [name + colon + value for name, colon, value in headers]
    read, by_aiohttp = _parsed(lane, ("\r\n".join(line for line in lines if line) + "\r\n\r\n").encode())
    assert read is not None and by_aiohttp is not None
    assert _as_read(read) == _as_read(by_aiohttp)


async def test_polls_piling_up_behind_a_held_one_stop_the_connections_reading(settings: Settings) -> None:
    """A client that sends poll after poll, each on its own, without reading the replies: the lane queues
    them as aiohttp queues what its parser reads, and stops reading the connection at aiohttp's limit."""
    async with served(settings) as lane:
        seen = await log_in(lane, "laneLeo1", "%2ALeo")
        held = get(f"/a.kropki?co=getMsg&idGracza=laneLeo1&msgNo={seen}&wait=5")
        read = lane.read
        async with kept_alive(lane) as connection:
            connection.writer.write(held)
            await connection.until(lambda served: served in connection.guard.polls)
            for number in range(1, 50):
                connection.writer.write(held)
                if number <= 32:  # each on its own, queued behind the held one
                    await connection.until(lambda served, number=number: len(served._messages) == number)
            await asyncio.sleep(0.2)
            assert connection.served._buffer_paused
            assert len(connection.served._messages) == 32  # aiohttp's MAX_MSG_QUEUE_SIZE: no more read
            assert lane.read == read + 33


async def test_a_body_that_is_a_polls_head_is_never_read_as_a_poll(settings: Settings) -> None:
    """The lane reads a head only while aiohttp's parser is between requests: a request's body, however
    it looks and whenever it comes, is that request's (no request smuggled in a body)."""
    async with served(settings) as lane, kept_alive(lane) as connection:
        seen = await log_in(lane, "laneMia1", "%2AMia")
        quiet = get(f"/a.kropki?co=getMsg&idGracza=laneMia1&msgNo={seen}")
        smuggled = get("/a.kropki?co=getMsg&idGracza=laneMia1&msgNo=0&msgFromClient=c1.0.hello")
        with_a_body = f"GET /a.kropki?co=getMsg&idGracza=laneMia1&msgNo={seen} HTTP/1.1\r\nHost: k\r\n"
        with_a_body += f"Content-Length: {len(smuggled)}\r\n\r\n"
        read = lane.read
        assert body_of(await connection.exchange(with_a_body.encode())).startswith(b"ok/")  # answered at once
        connection.writer.write(smuggled)  # the body, after the reply: aiohttp reads it and lets it go
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(connection.reader.read(1), 0.3)  # no second reply
        assert lane.read == read
        assert b"*Mia" not in body_of(await connection.exchange(quiet))  # not the smuggled whole state
