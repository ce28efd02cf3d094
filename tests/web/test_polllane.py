"""The poll lane (server/web/polllane.py): polls answered without aiohttp's request and response, byte for
byte as aiohttp answers them through the route, and every other request left to aiohttp."""

from __future__ import annotations

import asyncio
import gc
import logging
import re
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from aiohttp import web
from aiohttp.http_parser import RawRequestMessage
from hypothesis import given
from hypothesis import strategies as st
from yarl import URL

from server.app import create_app
from server.config import Settings
from server.web import requestloop
from server.web.accesslog import RedactingAccessLogger
from server.web.clients import LIMITS_KEY
from server.web.common import HUB_KEY
from server.web.connections import KEEPALIVE_TIMEOUT, ConnectionGuard, GuardedAppRunner
from server.web.limits import TokenBuckets
from server.web.metrics import METRICS_KEY
from server.web.polllane import POLL_ANSWER_KEY, PollLane, PollRequest, first_values
from tests.web.zagram import parse_reply

pytestmark = pytest.mark.skipif(not requestloop.APPLIES, reason="the lane rides on the copied request loop")


class Lane:
    """A served app whose poll lane can be counted and switched off for new connections."""

    def __init__(self, runner: GuardedAppRunner, port: int) -> None:
        self.runner, self.port = runner, port
        self.lane: PollLane | None = runner.server.poll_lane  # type: ignore[union-attr]
        assert self.lane is not None
        self.taken = 0
        answer = self.lane.answer

        async def counted(*args: object) -> bool:
            self.taken += 1
            return await answer(*args)  # type: ignore[arg-type]

        self.lane.answer = counted  # type: ignore[method-assign]

    def use_lane(self, on: bool) -> None:
        self.runner.server.poll_lane = self.lane if on else None  # type: ignore[union-attr]

    async def exchange(self, request: bytes) -> bytes:
        """`request` on a connection of its own; the whole reply (head and body) as it came."""
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        try:
            writer.write(request)
            async with asyncio.timeout(5):
                head = await reader.readuntil(b"\r\n\r\n")
                if head.startswith(b"HTTP/1.1 100 "):  # `Expect: 100-continue` is answered first
                    head = await reader.readuntil(b"\r\n\r\n")
                length = re.search(rb"\r\nContent-Length: (\d+)\r\n", head)
                assert length is not None, head
                return head + await reader.readexactly(int(length.group(1)))
        finally:
            writer.transport.abort()

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
        for request in cases:
            by_lane, by_aiohttp = await lane.both_ways(request)
            assert without_date(by_lane) == without_date(by_aiohttp), request
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
        lane.runner.app[LIMITS_KEY]["id"] = TokenBuckets(0.0, 0.0)  # refuses every request with an id
        by_lane, by_aiohttp = await lane.both_ways(poll)  # aiohttp's: the front door's refusal
        assert by_lane.endswith(b"\r\n\r\nerr.tooFast")
        assert without_date(by_lane) == without_date(by_aiohttp)


async def test_everything_but_a_plain_poll_goes_to_aiohttp(settings: Settings) -> None:
    async with served(settings) as lane:
        seen = await log_in(lane, "laneEve1", "%2AEve")
        taken = lane.taken
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


@given(st.text(alphabet="ab=&%+#?;2F4é\x00\udcff ", max_size=40))
def test_the_lane_reads_a_query_as_aiohttps_request_query(raw_query: str) -> None:
    query = URL.build(path="/a.kropki", query_string=raw_query, encoded=True).query
    assert first_values(raw_query) == {name: query[name] for name in query}


async def test_a_logged_poll_gets_the_access_line_of_the_route(settings: Settings, caplog) -> None:
    caplog.set_level(logging.INFO, logger="aiohttp.access")
    async with served(settings) as lane:
        refused = get("/a.kropki?co=getMsg&idGracza=laneHal1&msgNo=seven&wait=0.1")  # a refusal is logged
        await lane.both_ways(refused)
        by_lane, by_aiohttp = [
            re.sub(r"ms=[0-9.]+", "ms=-", record.getMessage())
            for record in caplog.records
            if record.name == "aiohttp.access" and "target=" in record.getMessage()
        ]
        assert by_lane == by_aiohttp
        assert "idGracza=***" in by_lane and "laneHal1" not in by_lane


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
