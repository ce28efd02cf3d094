"""aiohttp's connection loop as `serve` runs it: an answered request is freed, not kept by its connection."""

from __future__ import annotations

import gc
import weakref

import aiohttp
import pytest
from aiohttp import web

from server.hub.hub import Hub
from server.web import requestloop
from server.web.connections import GuardedRequestHandler
from server.web.metrics import METRICS_KEY, Metrics
from tests.web.test_connections import guarded

NOT_COPIED = (
    f"aiohttp {aiohttp.__version__}'s RequestHandler.start is not the one in server/web/requestloop.py: copy "
    "it, make the marked change again and put its version and hash in COPIED_FROM_VERSION and COPIED_FROM"
)


def test_the_copy_serves_where_aiohttp_is_the_one_it_was_copied_from() -> None:
    assert requestloop.APPLIES or aiohttp.__version__ != requestloop.COPIED_FROM_VERSION
    expected = requestloop.start if requestloop.APPLIES else web.RequestHandler.start
    assert GuardedRequestHandler.start is expected


def test_the_lane_reads_polls_where_aiohttp_queues_requests_as_it_was_written_against() -> None:
    assert requestloop.READS or aiohttp.__version__ != requestloop.COPIED_FROM_VERSION, (
        f"aiohttp {aiohttp.__version__}'s RequestHandler.data_received changed: check "
        "requestloop.data_received against it and put its hash in READS_AS"
    )


@pytest.mark.skipif(not requestloop.APPLIES, reason=NOT_COPIED)
async def test_an_answered_request_is_freed_while_its_connection_stays_open() -> None:
    """By its reference count, at once: with the collector off, nothing else would free it."""
    seen: list[weakref.ref[web.BaseRequest]] = []

    async def remember(request: web.Request) -> web.Response:
        seen.append(weakref.ref(request))
        return web.Response(text="noted")

    app = web.Application()
    app.router.add_get("/remember", remember)
    app[METRICS_KEY] = Metrics(Hub(), {})
    gc.disable()
    try:
        async with guarded(app, cap=10) as served:
            client = await served.connect()
            for _ in range(2):
                assert (await client.request("/remember"))[2] == "noted"
                await served.settled(lambda guard: len(guard.idle) == 1)  # answered, kept alive
                assert seen[-1]() is None
            assert not await client.closed(timeout=0.1)
    finally:
        gc.enable()
