"""How a bot's feed ends (docs/bots.md, "The event feed"): a feed its bot stopped reading is closed
and can be opened again, and a replaced token ends its feed at once; over real sockets, the real app
and database."""

from __future__ import annotations

import asyncio
import logging
import re
import socket

import pytest
from aiohttp.test_utils import TestClient

from server.hub.model import Origin
from server.protocol.seeks import CancelSeek, PostSeek, parse_range
from server.web import botstreams
from server.web.bots import STREAMS_KEY
from server.web.common import HUB_KEY, STORE_KEY
from tests.store.breakers import until
from tests.web.test_bots import EVENT_WAIT, FREE_GAME, new_bot, open_feed

GUESTS = 100  # each of whose seeks is a line of every bot's feed
ROUNDS = 9  # of a seek posted and cancelled by every guest: a guest may post 10 a minute


async def stuck_feed(client: TestClient, token: str) -> socket.socket:
    """The bot's feed over a socket with a small receive buffer, which its bot never reads."""
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(raw, (client.server.host, client.server.port))
    request = f"GET /api/bot/stream HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {token}\r\n\r\n"
    await loop.sock_sendall(raw, request.encode())
    await until(lambda: bool(client.app[STREAMS_KEY].open))
    return raw


async def feeds_not_read(client: TestClient) -> float:
    """`kropki_bot_feeds_not_read_total` as /metrics shows it."""
    metrics = await (await client.get("/metrics")).text()
    found = re.search(r"^kropki_bot_feeds_not_read_total (\S+)$", metrics, re.M)
    assert found is not None, metrics
    return float(found[1])


async def test_a_feed_its_bot_stops_reading_is_closed_and_the_bot_opens_it_again(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, the feed's write waited on a reader that had stopped for as long as its connection
    lived, after the kernel had taken up to 4 MB of it (benchmarks/botstreams.py); now a write its
    reader does not take within SEND_TIMEOUT closes the feed, with a log line that names the bot by
    its nick only, counted in /metrics, and the bot's next feed starts from the present."""
    monkeypatch.setattr(botstreams, "SEND_TIMEOUT", 0.5)
    monkeypatch.setattr(botstreams, "SEND_BUFFER", 4096)
    caplog.set_level(logging.INFO)
    token = await new_bot(client, "Robo")
    hub, streams = client.app[HUB_KEY], client.app[STREAMS_KEY]
    assert await feeds_not_read(client) == 0.0  # shown before the first
    guests = [f"g{n:07d}" for n in range(GUESTS)]
    for n, secret in enumerate(guests):
        hub.guest_login(secret, f"*G{n}", "en", Origin(f"10.1.0.{n}", True))
    raw = await stuck_feed(client, token)
    try:
        for _ in range(ROUNDS):  # the lobby's seeks come and go; every one is a line of the feed
            numbers = [hub.seek(secret, PostSeek(FREE_GAME, parse_range("", ""))) for secret in guests]
            await asyncio.sleep(0.2)
            for secret, number in zip(guests, numbers, strict=True):
                assert number is not None
                hub.seek(secret, CancelSeek(number))
            await asyncio.sleep(0.2)
            if not streams.open:
                break
        await until(lambda: not streams.open, seconds=EVENT_WAIT)
    finally:
        raw.close()
    closed = [record.getMessage() for record in caplog.records if "not read" in record.getMessage()]
    assert len(closed) == 1 and "nick=Robo" in closed[0], closed
    assert await feeds_not_read(client) == 1.0
    assert token not in caplog.text and not any(secret in caplog.text for secret in hub.players)
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]

    number = hub.seek(guests[0], PostSeek(FREE_GAME, parse_range("", "")))
    feed = await open_feed(client, token)
    assert (await feed.next("seek"))["id"] == number


async def test_a_replaced_token_ends_its_feed_at_once(client: TestClient) -> None:
    """Before, the feed asked the store whether its token still named the bot once every 20 s, after
    a poll had ended: a token an admin replaced (`kropki-server bot token`) kept its feed up to 40 s."""
    token = await new_bot(client, "Robo")
    feed = await open_feed(client, token)
    await client.app[STORE_KEY].bots.issue_token("Robo")
    ended = await feed.next("error")
    assert ended == {"type": "error", "code": "badToken", "message": "The token was replaced."}
    async with asyncio.timeout(EVENT_WAIT):
        assert await feed.response.content.read() == b""
    assert not client.app[STREAMS_KEY].open
