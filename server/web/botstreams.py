"""The bot API's open event feeds (docs/bots.md), one per bot: a newer feed of the same bot ends the
older, the server's stop ends them all, a replaced token ends its feeds within TOKENS_EVERY, and each
feed's last event says why (server/web/bots.py). A feed its bot does not read is closed (`send`)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from socket import SO_SNDBUF, SOL_SOCKET

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter

from server.protocol.botfeed import Event
from server.web.common import STORE_KEY, read_every

# Why a feed ends, in its last event (`error`); a bot opens the feed again after `stopping` and `moved`
FEED_ENDS = {
    "replaced": "A newer feed of this bot was opened: this one ends.",
    "stopping": "The server is stopping: open the feed again in a moment.",
    "moved": "The bot's session moved to another server of the cluster: open the feed again.",
    "badToken": "The token was replaced.",
}
# Seconds between two looks at whether the open feeds' tokens still name their bots (one query for all):
# a token an admin replaced (`kropki-server bot token`, another process) ends its feed within this
TOKENS_EVERY = 2.0
# Seconds a write of the feed may wait for its reader before the feed counts as not read and is closed
SEND_TIMEOUT = 10.0
# The kernel's send buffer of a feed's connection, in bytes: fixed (no autotuning to megabytes: 4 MB of a
# feed nobody read sat there, benchmarks/botstreams.py), so that a reader that stopped is found soon
SEND_BUFFER = 64 * 1024
DRAIN_CHECK_EVERY = 0.05  # seconds between the looks at a write the socket has not taken whole


def feed_ended(code: str) -> Event:
    return {"type": "error", "code": code, "message": FEED_ENDS[code]}


class NotRead(Exception):
    """The feed's reader took nothing for SEND_TIMEOUT: it stopped reading, or its network did."""


class Feeding:
    """One open feed: ended by a newer feed of the same bot, its token replaced or the server's stop,
    which also wakes the long poll it is in. Each poll waits on a future of its own (the bus wakes a
    poll by giving its future a result, so a future serves one poll only)."""

    def __init__(self, token: str) -> None:
        self.token = token  # a secret: never logged
        self.ended: str | None = None  # why, a code of FEED_ENDS
        self.waiting: asyncio.Future[None] | None = None

    def __repr__(self) -> str:
        return f"Feeding(ended={self.ended!r})"

    def next_wait(self) -> asyncio.Future[None]:
        self.waiting = asyncio.get_running_loop().create_future()
        return self.waiting

    def end(self, why: str) -> None:
        self.ended = why
        if self.waiting is not None and not self.waiting.done():
            self.waiting.set_result(None)


class BotStreams:
    """The open event feeds, one per bot: a newer one ends the older, and a stop ends them all."""

    def __init__(self) -> None:
        self.open: dict[str, Feeding] = {}
        self.not_read: Counter | None = None

    def count(self, metrics_registry: CollectorRegistry) -> None:
        """Show the feeds closed as not read in /metrics: nothing else says how often bots stop reading."""
        self.not_read = Counter(
            "kropki_bot_feeds_not_read",
            f"Bot event feeds closed because their bot read nothing for {SEND_TIMEOUT:g} s",
            registry=metrics_registry,
        )

    def closed_not_read(self) -> None:
        if self.not_read is not None:
            self.not_read.inc()

    def start(self, secret: str, token: str) -> Feeding:
        """A feed of the bot whose session is `secret` (the same through a rename), named by `token`."""
        older = self.open.get(secret)
        if older is not None:
            older.end("replaced")
        feeding = self.open[secret] = Feeding(token)
        return feeding

    def finish(self, secret: str, feeding: Feeding) -> None:
        if self.open.get(secret) is feeding:
            del self.open[secret]

    def end_all(self) -> None:
        for feeding in self.open.values():
            feeding.end("stopping")


STREAMS_KEY = web.AppKey("bot_streams", BotStreams)


def limit_send_buffer(request: web.Request) -> None:
    transport = request.transport
    endpoint = transport.get_extra_info("socket") if transport is not None else None
    if endpoint is not None:
        endpoint.setsockopt(SOL_SOCKET, SO_SNDBUF, SEND_BUFFER)


async def send(request: web.Request, response: web.StreamResponse, body: bytes) -> None:
    """`body` written, and all of it in the kernel's buffer, or NotRead after SEND_TIMEOUT. Before, a
    write waited on a reader that had stopped for as long as its connection lived, with up to 4 MB of
    the feed in the kernel's buffer first."""
    try:
        async with asyncio.timeout(SEND_TIMEOUT):
            await response.write(body)
            transport = request.transport
            while transport is not None and transport.get_write_buffer_size() and not transport.is_closing():
                await asyncio.sleep(DRAIN_CHECK_EVERY)
    except TimeoutError:
        raise NotRead from None


async def watch_tokens(app: web.Application) -> AsyncIterator[None]:
    """Every TOKENS_EVERY, the feeds whose tokens no longer name their bots end (`badToken`); while
    storage is down the feeds go on, and are looked at again later."""
    async with read_every(TOKENS_EVERY, functools.partial(end_replaced, app), "check the bots' tokens"):
        yield


async def end_replaced(app: web.Application) -> None:
    feeds = list(app[STREAMS_KEY].open.values())
    if not feeds:
        return
    valid = await app[STORE_KEY].bots.still_valid_among([feed.token for feed in feeds])
    for feed in feeds:
        if feed.token not in valid and feed.ended is None:
            feed.end("badToken")
