"""`/push` (server/web/push.py): the stream over a WebSocket, beside the polls of the same session."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import signal
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import WSMsgType, web
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.app import create_app
from server.config import Settings
from server.hub.bus import LOBBY_WAKE_EVERY, PUSHED_LOBBY_WAKE_EVERY
from server.hub.model import Origin
from server.hub.stream import Poll
from server.protocol.codec import encode_client_text
from server.web import push as push_module
from server.web.common import STORE_KEY
from server.web.push import HEARTBEAT, KEEP_ALIVE, KEEP_ALIVE_SPREAD, LOG_IN_AGAIN, PUSHES_KEY, REFUSED
from tests.conftest import served
from tests.store.breakers import Breaker, breaker_for, until
from tests.test_restart import Server
from tests.web.test_connections import guarded
from tests.web.test_games import Players, diamond, errors
from tests.web.test_stream import chat_texts, state_of
from tests.web.zagram import Reply, parse_reply

FRAME_WAIT = 10.0  # seconds a test waits for a frame the server owes it
HANDSHAKE = {
    "Upgrade": "websocket",
    "Connection": "Upgrade",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Version": "13",
}


class Pushed:
    """One push connection, read as a client does: frames in order, each a reply."""

    def __init__(self, socket_: aiohttp.ClientWebSocketResponse) -> None:
        self.socket = socket_
        self.replies: list[Reply] = []
        self.commands: list[str] = []

    async def frame(self, seconds: float = FRAME_WAIT) -> str:
        message = await self.socket.receive(timeout=seconds)
        assert message.type is WSMsgType.TEXT, message
        return message.data

    async def reply(self, seconds: float = FRAME_WAIT) -> Reply:
        reply = parse_reply(await self.frame(seconds))
        if self.replies:
            assert reply.first == self.replies[-1].last, "each frame starts where the one before ended"
        self.replies.append(reply)
        return reply

    async def until(self, seen: Callable[[Reply], bool], seconds: float = FRAME_WAIT) -> Reply:
        """Replies until one for which `seen(reply)` holds."""
        while True:
            reply = await self.reply(seconds)
            if seen(reply):
                return reply

    async def send(self, kind: str, table: str | int, text: str = "") -> int:
        """A command as msgFromClient numbers it; every command not yet acknowledged goes again."""
        number = len(self.commands) + 1
        self.commands.append(f"{kind}{number}.{table}.{text}")
        acknowledged = self.replies[-1].processed if self.replies else 0
        await self.socket.send_str("/".join(self.commands[acknowledged:]))
        return number

    def lines(self, table: int, prefix: str = "") -> list[str]:
        return [line for reply in self.replies for line in reply.lines(table, prefix)]


@asynccontextmanager
async def pushed(client: TestClient, secret: str, msg_no: str, co: str = "getMsg") -> AsyncIterator[Pushed]:
    socket_ = await client.ws_connect(f"/push?co={co}&idGracza={secret}&msgNo={msg_no}")
    try:
        yield Pushed(socket_)
    finally:
        await socket_.close()


async def test_frames_carry_a_polls_lines_in_order_and_commands_are_acknowledged_with_k(
    game: Players,
) -> None:
    """Red plays from a push connection while blue polls: every move reaches red as it happens, in
    the order a poll from the same msgNo reads them, and red's commands count in k."""
    uid, blue, red = await game.start("0808stanF0.0.0")
    start = red.seen
    async with pushed(game.client, red.secret, str(start)) as push:
        push.commands = list(red.commands)  # numbered on from its polls' (the invitation's answer)
        await push.reply()  # nothing new: what a poll would say now
        for player, where in diamond(blue, red):
            if player is red:
                number = await push.send("s", uid, where)
                acknowledged = await push.until(lambda reply, number=number: reply.processed >= number)
                assert acknowledged.processed == number
            else:
                player.send("s", uid, where)
                assert not errors(await player.poll(), uid)
                await push.until(lambda reply, where=where: any(where in line for line in reply.lines(uid)))
        pushed_moves = push.lines(uid, "sa")
    polled = await red.poll(msg_no=str(start))
    assert pushed_moves == polled.lines(uid, "sa")
    assert pushed_moves == [
        f"sa;{node}" for node in ("B[cb]", "W[cc]", "B[bc]", "W[hh]", "B[dc]", "W[hg]")
    ] + ["sa;B[cd.cddccbbccd]"]
    assert game.room(uid).game.captured(1) == 1


async def test_the_same_session_polls_and_pushes_at_once(game: Players) -> None:
    """MultiPoints polls while the browser pushes, with one id: each reads the whole stream."""
    async with pushed(game.client, game.bob.secret, str(game.bob.seen)) as push:
        await push.reply()
        game.ala.say(0, "hello both")
        await game.ala.poll()
        game.timers.advance(PUSHED_LOBBY_WAKE_EVERY)  # a push connection's lobby news: at most this often
        heard = await push.until(lambda reply: bool(chat_texts(reply.lines(0))))
        assert [text for _, _, text in chat_texts(heard.lines(0))] == ["hello both"]
        polled = await game.bob.poll()
        assert [text for _, _, text in chat_texts(polled.lines(0))] == ["hello both"]


async def test_quiet_waits_are_spread_so_that_connections_fall_out_of_step(
    game: Players, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lobby wake starts thousands of connections' waits at once; with equal waits they stayed in
    step, and every 20 s their keep-alive polls came as one burst (docs/performance.md). Each quiet wait
    is KEEP_ALIVE spread by KEEP_ALIVE_SPREAD."""
    waits: list[float] = []
    poll = game.hub.poll

    async def noting(asked: Poll, *args: object) -> str:
        waits.append(asked.wait)
        return await poll(asked, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(game.hub, "poll", noting)
    async with contextlib.AsyncExitStack() as connections:
        for guest in (game.ala, game.bob, game.eve) * 3:
            push = await connections.enter_async_context(pushed(game.client, guest.secret, str(guest.seen)))
            await push.reply()
        while len([wait for wait in waits if wait]) < 9:
            await asyncio.sleep(0.01)
    quiet = [wait for wait in waits if wait]
    low, high = (KEEP_ALIVE * factor for factor in KEEP_ALIVE_SPREAD)
    assert all(low <= wait <= high for wait in quiet) and len(set(quiet)) > 1, quiet


async def test_each_connection_pings_on_its_own_beat(game: Players, monkeypatch: pytest.MonkeyPatch) -> None:
    """Connections opened together pinged together: 10,000 opened within ten seconds made 1,100 pings a
    second for nine seconds every 30 s, and the moves beside them reached their opponents late."""
    beats: list[float] = []

    class Noting(web.WebSocketResponse):
        def __init__(self, *, heartbeat: float, **options: Any) -> None:
            beats.append(heartbeat)
            super().__init__(heartbeat=heartbeat, **options)

    monkeypatch.setattr(push_module.web, "WebSocketResponse", Noting)
    for guest in (game.ala, game.bob, game.eve):
        async with pushed(game.client, guest.secret, str(guest.seen)) as push:
            await push.reply()
    low, high = (HEARTBEAT * factor for factor in KEEP_ALIVE_SPREAD)
    assert len(beats) == 3 and all(low <= beat <= high for beat in beats) and len(set(beats)) == 3, beats


async def test_an_open_connection_keeps_its_session_however_long_its_quiet_wait(game: Players) -> None:
    """A push connection's quiet poll waits longer than a session's time-out may (KEEP_ALIVE): its
    session is never timed out while it waits (docs/protocol.md, "Heartbeats")."""
    async with pushed(game.client, game.bob.secret, str(game.bob.seen)) as push:
        await push.reply()
        await asyncio.sleep(0.1)  # its next poll waits
        game.timers.advance(game.hub.poll_timeout + 1)
        game.hub.sweep()
        assert set(game.hub.by_nick) == {"*bob"}  # Ala and Eve stopped polling: out
        assert not push.socket.closed


async def test_lobby_news_is_paced_for_a_push_connection_and_its_games_are_not(game: Players) -> None:
    """While players keep logging in, each lobby wake is a frame to every push connection: they come
    at most every PUSHED_LOBBY_WAKE_EVERY (a 1-s long poll's pace would be twice a 2-s poller's
    replies), while a move at the player's own table comes at once."""
    uid, blue, red = await game.start("0808stanF0.0.0")
    async with pushed(game.client, red.secret, str(red.seen)) as push:
        await push.reply()
        game.timers.advance(PUSHED_LOBBY_WAKE_EVERY)  # the game's start in the lobby comes, paced
        while True:  # ... in a frame or two
            try:
                await push.reply(seconds=0.3)
            except TimeoutError:
                break
        game.timers.advance(PUSHED_LOBBY_WAKE_EVERY)  # a period with no lobby news: the next is alone
        game.eve.say(0, "first")
        await game.eve.poll()
        await push.until(lambda reply: bool(chat_texts(reply.lines(0))))  # a lone event: at once
        game.eve.say(0, "second")
        await game.eve.poll()
        game.timers.advance(LOBBY_WAKE_EVERY)  # a long poll would be woken now; the push waits on
        with pytest.raises(TimeoutError):
            await push.reply(seconds=0.3)
        blue.send("s", uid, "dd")
        assert not errors(await blue.poll(), uid)
        moved = await push.until(lambda reply: bool(reply.lines(uid, "sa")))  # its own table: at once
        assert [text for _, _, text in chat_texts(push.lines(0))] == ["first", "second"]
        assert moved.lines(uid, "sa")
        game.eve.say(0, "third")
        await game.eve.poll()
        with pytest.raises(TimeoutError):
            await push.reply(seconds=0.3)
        game.timers.advance(PUSHED_LOBBY_WAKE_EVERY)
        await push.until(lambda reply: bool(chat_texts(reply.lines(0))))
        assert [text for _, _, text in chat_texts(push.lines(0))] == ["first", "second", "third"]


async def test_a_connection_keeps_no_frame_with_news_only_a_quiet_one_to_compare(game: Players) -> None:
    """A quiet reply goes only when it differs from the last one sent, so the last quiet lines are kept;
    a frame with news is never kept: after a busy lobby each connection held its last frame, a whole
    lobby's state for many, 3 GB with 5,000 connections (docs/performance.md, "push against polling")."""
    async with pushed(game.client, game.bob.secret, "0") as push:
        first = await push.reply()
        assert any(line.startswith("pr") for line in first.lines(0))  # the whole state: news
        (connection,) = game.client.app[PUSHES_KEY].open
        assert connection.last_sent == (first.processed, None)
        game.ala.send("v", 0, "s.*Bob.0808stanF0.0.0")
        await game.ala.poll()
        invited = await push.until(lambda reply: bool(reply.lines(0, "vg")))
        assert connection.last_sent is not None and connection.last_sent[1] is not None
        assert "vg*Ala" in connection.last_sent[1] and invited.lines(0, "vg")


async def test_two_push_connections_of_one_session_both_get_its_private_lines_at_once(game: Players) -> None:
    """Two tabs of the built-in client share a session and each pushes: a private line wakes both. A
    session had one slot for its waiting reader, so the tab that connected first got its private lines
    only with its next lobby news or keep-alive, up to 20 s later."""
    async with pushed(game.client, game.bob.secret, str(game.bob.seen)) as first:
        await first.reply()
        async with pushed(game.client, game.bob.secret, str(game.bob.seen)) as second:
            await second.reply()
            await asyncio.sleep(0.1)  # both wait now
            game.ala.say("_*Bob", "to both tabs")
            await game.ala.poll()
            for push in (first, second):  # no clock advanced: a private line is never paced
                heard = await push.until(lambda reply: "to both tabs" in "/".join(reply.lines(0)), seconds=2)
                assert heard


async def test_a_command_is_acknowledged_only_once_stored(
    quick_retries: None, game: Players, settings: Settings
) -> None:
    """k in a frame tells the client not to send those commands again: a chat line taken while
    storage fails comes back with k only once it is written, pushed without the client asking."""
    breaker: Breaker = breaker_for(settings.db_url)
    store = game.client.app[STORE_KEY]
    async with pushed(game.client, game.ala.secret, str(game.ala.seen)) as push:
        before = await push.reply()
        await breaker.break_storage()
        try:
            number = await push.send("c", 0, encode_client_text("written later"))
            not_yet = await push.reply()  # the line is in the live lobby; its write waits for storage
            assert not_yet.processed == before.processed < number
            await until(lambda: store.writer.storage_failure is not None)
        finally:
            await breaker.mend()
        await until(lambda: store.writer.storage_failure is None)
        stored = await push.until(lambda reply: reply.processed >= number)
        assert stored.processed == number
    lobby = [text for _, _, text in chat_texts((await game.bob.poll(msg_no="0")).lines(0))]
    assert lobby.count("written later") == 1


async def test_bad_input_is_refused_clearly_and_changes_nothing(game: Players) -> None:
    client = game.client
    for query, answer in (
        ("co=getMsg&idGracza=ala123", "err.missing.msgNo"),
        ("co=getMsg&idGracza=ala123&msgNo=x", "err.badMsgNo"),
        ("co=zmienStol&idGracza=ala123&msgNo=0", "err.unknownCo"),
    ):
        response = await client.get(
            f"/push?{query}",
            headers=HANDSHAKE,
        )
        assert (response.status, await response.text()) == (200, answer)
    plain = await client.get("/push?co=getMsg&idGracza=ala123&msgNo=0")
    assert await plain.text() == "err.notWebSocket"
    async with pushed(client, game.ala.secret, str(game.ala.seen)) as push:
        await push.reply()
        before = state_of(game.hub)
        await push.socket.send_str("x" * 7_000)
        assert await push.frame() == "err.tooLong"
        assert state_of(game.hub) == before
        await push.socket.send_str("c1.0." + "y" * 400)  # a chat line too long: refused in words
        await push.until(lambda reply: reply.processed == 1)  # the refusal may come in a frame before
        refusals = [text for _, kind, text in chat_texts(push.lines(0)) if kind == "e"]
        assert [text.split(" (")[0] for text in refusals] == ["Message too long"], push.replies


async def test_a_binary_frame_closes_the_connection_with_1003_and_changes_nothing(game: Players) -> None:
    """The protocol is text; a client that sends bytes is told so by the close, not left talking to no one."""
    async with pushed(game.client, game.ala.secret, str(game.ala.seen)) as push:
        await push.reply()
        before = state_of(game.hub)
        await push.socket.send_bytes(b"c1.0.hi")
        closing = await push.socket.receive(FRAME_WAIT)
        assert (closing.type, closing.data) == (WSMsgType.CLOSE, aiohttp.WSCloseCode.UNSUPPORTED_DATA)
        assert state_of(game.hub) == before
    metrics = await (await game.client.get("/metrics")).text()
    assert re.search(r'^kropki_push_closed_total\{reason="binary"\} 1\.0$', metrics, re.M), metrics


async def test_an_id_with_no_session_gets_sd_and_the_close_that_says_log_in_again(game: Players) -> None:
    async with pushed(game.client, "nobody00", "0") as push:
        assert (await push.reply()).status == "sd"
        closed = await push.socket.receive(timeout=FRAME_WAIT)
        assert closed.type is WSMsgType.CLOSE and push.socket.close_code == LOG_IN_AGAIN


async def test_whole_states_are_limited_as_for_polls(game: Players) -> None:
    """An id may have three whole states at once, then one every ten seconds (clients.py): the fourth
    connection from msgNo=0 gets the refusal a poll would get, and the close that says why."""
    for _ in range(2):  # the first of the three was the fixture's first poll
        async with pushed(game.client, game.ala.secret, "0") as push:
            assert (await push.reply()).status == "ok"
    async with pushed(game.client, game.ala.secret, "0") as push:
        assert await push.frame() == "err.tooFast"
        closed = await push.socket.receive(timeout=FRAME_WAIT)
        assert closed.type is WSMsgType.CLOSE and push.socket.close_code == REFUSED


async def test_a_reader_too_slow_is_closed_and_resumes_from_its_msgno(game: Players) -> None:
    """A client that reads nothing: its frame cannot be written, the connection is aborted after
    `send_timeout`, and the same client resumes from its last msgNo."""
    hub, pushes = game.hub, game.client.app[PUSHES_KEY]
    pushes.send_timeout, pushes.send_buffer = 0.5, 4096
    for n in range(3_900):  # a lobby whose whole state is larger than the sockets' buffers
        hub.guest_login(f"crowd{n:04d}", f"*Crowd{n}", "en", Origin(f"10.0.{n // 250}.{n % 250}", True))
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.setblocking(False)
    server = game.client.server
    loop = asyncio.get_running_loop()
    await loop.sock_connect(raw, (server.host, server.port))
    head = "".join(f"{name}: {value}\r\n" for name, value in HANDSHAKE.items())
    request = f"GET /push?co=getMsg&idGracza=ala123&msgNo=0 HTTP/1.1\r\nHost: test\r\n{head}\r\n"
    await loop.sock_sendall(raw, request.encode())
    try:
        await until(lambda: bool(pushes.open))
        await until(lambda: not pushes.open, seconds=10)
        metrics = await (await game.client.get("/metrics")).text()
        assert re.search(r'^kropki_push_closed_total\{reason="slow"\} 1\.0$', metrics, re.M), metrics
    finally:
        raw.close()
    async with pushed(game.client, game.ala.secret, str(game.ala.seen)) as push:
        assert (await push.reply()).status == "ok"


def masked_frame(opcode: int, payload: bytes) -> bytes:
    """A client's frame (RFC 6455: a client masks its frames), of at most 125 bytes."""
    mask = b"\x01\x02\x03\x04"
    return (
        bytes([0x80 | opcode, 0x80 | len(payload)])
        + mask
        + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    )


async def flooded_with_pings(settings: Settings, pings: int) -> None:
    """A client that floods pings and reads nothing: its push connection and its socket both go."""
    app = create_app(settings)
    pushes = app[PUSHES_KEY]
    pushes.send_timeout, pushes.send_buffer = 0.5, 4096
    async with guarded(app, cap=10) as served:
        raw = socket.socket()
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.setblocking(False)
        loop = asyncio.get_running_loop()
        await loop.sock_connect(raw, ("127.0.0.1", served.port))
        head = "".join(f"{name}: {value}\r\n" for name, value in HANDSHAKE.items())
        request = f"GET /push?co=getMsg&msgNo=0 HTTP/1.1\r\nHost: test\r\n{head}\r\n"
        await loop.sock_sendall(raw, request.encode())
        try:
            await until(lambda: bool(pushes.open))
            flood = bytearray(masked_frame(0x9, b"p" * 125) * pings)  # their pongs fill every buffer
            with contextlib.suppress(BlockingIOError):
                while flood:
                    del flood[: raw.send(flood[:65536])]
            await until(lambda: not pushes.open and not served.guard.open, seconds=10)
        finally:
            raw.close()


@pytest.mark.parametrize("pings", [2_000, 40_000])  # 2,000: the handler ends; 40,000: it waits in aiohttp
@pytest.mark.parametrize("loop_factory", ["asyncio", "uvloop"])
def test_a_client_that_floods_pings_and_reads_nothing_is_let_go(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, loop_factory: str, pings: int
) -> None:
    """aiohttp answers each ping, and a client that reads none of it fills the socket; once aiohttp's
    heartbeat closed the connection, the close waited to flush it for ever (a helper's audit held ten
    such connections open past a cap of 8, on `serve`). After a small flood the handler ended and left
    its socket open, uncounted at the cap; after a large one aiohttp's answer to a ping waited on the
    full socket, and the handler stayed too. Now both go within send_timeout (and a sweep)."""
    monkeypatch.setattr(push_module, "HEARTBEAT", 0.4)  # its pong is late after about 0.2 s
    factory = (
        asyncio.new_event_loop if loop_factory == "asyncio" else pytest.importorskip("uvloop").new_event_loop
    )
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(flooded_with_pings(settings, pings))


async def test_a_clean_stop_closes_with_1001_and_the_client_resumes_after_the_restart(tmp_path: Path) -> None:
    server = Server(tmp_path)
    ala = f"{server.base}/a.kropki?idGracza=ala123"
    async with aiohttp.ClientSession() as http:
        with server.running(migrate=True):
            assert await (await http.get(f"{ala}&co=guestLogin&opis=*Ala&lang=en")).text() == ""
            first = parse_reply(await (await http.get(f"{ala}&co=getMsg&msgNo=0")).text())
            seen = first.last
            socket_ = await http.ws_connect(f"{server.base}/push?co=getMsg&idGracza=ala123&msgNo={seen}")
            push = Pushed(socket_)
            await push.reply()
            number = await push.send("c", 0, encode_client_text("before the stop"))
            await push.until(lambda reply: reply.processed >= number)
            seen = push.replies[-1].last
            stopping = asyncio.create_task(asyncio.to_thread(server.stop, signal.SIGTERM))
            closed = await socket_.receive(timeout=FRAME_WAIT)
            while closed.type is WSMsgType.TEXT:  # what is new goes out first: the stop's lines
                closed = await socket_.receive(timeout=FRAME_WAIT)
            assert closed.type in (WSMsgType.CLOSE, WSMsgType.CLOSED), closed
            assert socket_.close_code == 1001
            assert await stopping == 0
        with server.running():
            socket_ = await http.ws_connect(f"{server.base}/push?co=getMsg&idGracza=ala123&msgNo={seen}")
            again = Pushed(socket_)
            again.commands = push.commands  # numbered on from before the stop, as a client keeps them
            back = await again.reply()
            # the session came back: the whole state, newer than anything before the stop
            assert back.status == "ok" and back.last > seen
            assert any("*Ala" in line for line in back.lines(0)), back
            number = await again.send("c", 0, encode_client_text("after the restart"))
            assert (await again.until(lambda reply: reply.processed >= number)).processed == number
            await socket_.close()
        assert "Traceback" not in server.log(), server.log()


async def test_a_clean_stop_goes_on_when_a_push_connection_ends_in_that_instant(game: Players) -> None:
    """A connection that ends while the stop waits for its writer (its handler cancels the writer) does
    not cut the stop short. Before, the writer's cancellation came out of the app's shutdown, and its
    clean-up (the store's last writes, the sessions' heartbeat) did not run: 3 of 80 browser tests' clean
    stops on 2026-12-01."""
    async with pushed(game.client, game.bob.secret, str(game.bob.seen)) as push:
        await push.reply()
        pushes = game.client.app[PUSHES_KEY]
        (connection,) = pushes.open
        stopping = asyncio.create_task(pushes.close_all())
        await asyncio.sleep(0)  # the stop now waits for the writer to send what is new and close
        assert connection.writer is not None and not connection.writer.done()
        connection.writer.cancel()  # as the connection's handler does when the connection ends
        await stopping


async def test_the_connection_cap_ends_a_push_connection_to_make_room(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """A push connection counts as an open connection; at the cap it is ended as a long poll is, when
    no idle or slow connection is left to close: with 1013, after what was new."""
    client = await served(aiohttp_client, dataclasses.replace(settings, max_connections=1))
    assert await (await client.get("/a.kropki?co=guestLogin&idGracza=ala123&opis=*Ala")).text() == ""
    async with pushed(client, "ala123", "0") as push:  # the login's keep-alive connection makes room
        assert (await push.reply()).status == "ok"
        healthy = await client.get("/healthz")  # a new connection: only the push connection can go
        assert healthy.status == 200
        closed = await push.socket.receive(timeout=FRAME_WAIT)
        while closed.type is WSMsgType.TEXT:  # what the last poll says goes out first
            closed = await push.socket.receive(timeout=FRAME_WAIT)
        assert closed.type is WSMsgType.CLOSE and push.socket.close_code == 1013
    metrics = await (await client.get("/metrics")).text()
    assert re.search(r'^kropki_push_closed_total\{reason="cap"\} 1\.0$', metrics, re.M), metrics
