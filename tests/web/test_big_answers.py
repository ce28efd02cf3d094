"""A big public answer (a whole tournament's tables, megabytes) to clients that do not read it: each
connection holds a slice of it, not a copy, and one that takes nothing for long is closed."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
from datetime import UTC, datetime

import pytest
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import create_async_engine

from server.app import create_app
from server.config import Settings
from server.store.models import TournamentTable
from server.web import assets
from tests.web.test_connections import Raw, Served, guarded

NAME = "Marathon"
TABLES = 25_000  # about 6 MB of JSON: more than the kernel takes into a socket's send buffer
READERS = 6


async def filled(settings: Settings) -> None:
    """The tournament's tables straight into the database: setting them up one by one would take minutes."""
    engine = create_async_engine(settings.db_url)
    created = datetime(2026, 12, 2, tzinfo=UTC)
    rows = [
        {
            "uid": uid,
            "tournament": NAME,
            "round": None,
            "created_at": created,
            "blue": f"player{uid % 150}",
            "red": f"player{(uid + 7) % 150}",
            "game_type": "20x20",
            "result": "B+R",
            "game_number": uid,
            "moves": 60,
        }
        for uid in range(1, TABLES + 1)
    ]
    try:
        async with engine.begin() as connection:
            await connection.execute(insert(TournamentTable), rows)
    finally:
        await engine.dispose()


async def not_reading(served: Served, target: str, gzipped: bool = False) -> Raw:
    """A client that asks for `target` and reads nothing, with a receive buffer as small as it gets."""
    endpoint = socket.socket()
    endpoint.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    endpoint.setblocking(False)
    await asyncio.get_running_loop().sock_connect(endpoint, ("127.0.0.1", served.port))
    reader, writer = await asyncio.open_connection(sock=endpoint)
    client = Raw(reader, writer)
    served.clients.append(client)
    accept = "Accept-Encoding: gzip\r\n" if gzipped else ""
    writer.write(f"GET {target} HTTP/1.1\r\nHost: kropki\r\n{accept}\r\n".encode())
    return client


def length(head: str) -> int:
    lengths = [line for line in head.lower().split("\r\n") if line.startswith("content-length:")]
    return int(lengths[0].split(":")[1])


async def whole_body(client: Raw) -> bytes:
    return await client.reader.readexactly(length((await client.reader.readuntil(b"\r\n\r\n")).decode()))


def buffered(served: Served) -> int:
    """The bytes the server's connections hold that their sockets have not taken."""
    return sum(connection.get_write_buffer_size() for connection in served.guard.open)


# gzipped (0.4 MB) the kernel takes it all, before as now: that run checks that a sliced answer is whole
@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
async def test_readers_who_do_not_read_hold_a_slice_of_the_answer_each(
    settings: Settings, gzipped: bool
) -> None:
    await filled(settings)
    async with guarded(create_app(settings), 100) as served:
        whole = await served.connect()
        whole.send(f"/tournament/{NAME}")
        status, headers, body = await whole.answer(timeout=30)  # its build first: seconds under load
        assert status == 200 and len(json.loads(body)["tables"]) == TABLES
        size = int(headers["content-length"])
        whole.writer.write(f"HEAD /tournament/{NAME} HTTP/1.1\r\nHost: kropki\r\n\r\n".encode())
        head = (await whole.reader.readuntil(b"\r\n\r\n")).decode().lower()
        assert f"content-length: {size}\r\n" in head  # and no body: the next answer follows at once
        assert (await whole.request("/healthz"))[0] == 200
        stalled = [await not_reading(served, f"/tournament/{NAME}", gzipped) for _ in range(READERS)]
        await asyncio.sleep(1.0)  # every answer begun, and the sockets full

        # before: the whole answer less what the kernel took for each, 16 MB for the plain six
        assert buffered(served) <= READERS * 3 * assets.SLICE  # the transport pauses past a slice

        for client in stalled:  # a reader that begins to read gets the whole answer
            received = await whole_body(client)
            text = gzip.decompress(received) if gzipped else received
            assert json.loads(text)["tables"][-1]["table"] == TABLES


async def test_a_reader_who_takes_nothing_for_long_is_closed(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(assets, "SLICE_TIMEOUT", 0.5)
    await filled(settings)
    async with guarded(create_app(settings), 100) as served:
        stalled = await not_reading(served, f"/tournament/{NAME}")
        await served.settled(lambda guard: len(guard.open) == 1)
        deadline = asyncio.get_running_loop().time() + 30  # the answer's build first: seconds under load
        while served.guard.open:  # before: open (and holding the answer) for as long as the client
            assert asyncio.get_running_loop().time() < deadline, "still open"
            await asyncio.sleep(0.05)
        assert buffered(served) == 0
        head, _, body = (await stalled.reader.read()).partition(b"\r\n\r\n")  # what it took, and the close
        assert len(body) < length(head.decode())
