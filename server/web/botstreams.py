"""The bot API's open event feeds (docs/bots.md), one per bot: a newer feed of the same bot ends the
older, the server's stop ends them all, and each feed's last event says why (server/web/bots.py)."""

from __future__ import annotations

import asyncio

from aiohttp import web

from server.protocol.botfeed import Event

# Why a feed ends, in its last event (`error`); a bot opens the feed again after `stopping` and `moved`
FEED_ENDS = {
    "replaced": "A newer feed of this bot was opened: this one ends.",
    "stopping": "The server is stopping: open the feed again in a moment.",
    "moved": "The bot's session moved to another server of the cluster: open the feed again.",
}


def feed_ended(code: str) -> Event:
    return {"type": "error", "code": code, "message": FEED_ENDS[code]}


class Feeding:
    """One open feed: ended by a newer feed of the same bot or by the server's stop, which also wakes
    the long poll it is in. Each poll waits on a future of its own (the bus wakes a poll by giving its
    future a result, so a future serves one poll only)."""

    def __init__(self) -> None:
        self.ended: str | None = None  # why, a code of FEED_ENDS
        self.waiting: asyncio.Future[None] | None = None

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

    def start(self, secret: str) -> Feeding:
        """A feed of the bot whose session is `secret` (the same through a rename)."""
        older = self.open.get(secret)
        if older is not None:
            older.end("replaced")
        feeding = self.open[secret] = Feeding()
        return feeding

    def finish(self, secret: str, feeding: Feeding) -> None:
        if self.open.get(secret) is feeding:
            del self.open[secret]

    def end_all(self) -> None:
        for feeding in self.open.values():
            feeding.end("stopping")


STREAMS_KEY = web.AppKey("bot_streams", BotStreams)
