"""A push connection (/push, server/web/push.py) flooded with valid command frames: each frame is one
request for the per-id and per-address limits (docs/operations.md, "Abuse limits"), so the excess is
answered `err.tooFast` and does nothing, the stream goes on, and other players are served meanwhile."""

from __future__ import annotations

import asyncio
import re

from aiohttp import WSMsgType
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.protocol.codec import encode_client_text
from server.web.push import FLOOD_REFUSALS, REFUSED
from tests.web.test_limits import limited_client
from tests.web.test_push import FRAME_WAIT, Pushed
from tests.web.test_stream import chat_texts
from tests.web.zagram import Zagram, parse_reply

FLOOD = 30  # command frames sent without waiting for an answer
ALA_AT, BOB_AT = "203.0.113.7", "198.51.100.9"  # behind the trusted proxy (the loopback address)


async def flooded(client: TestClient, ala: Zagram, bob: Zagram) -> tuple[Pushed, list[str], list[str]]:
    """Ala, on a push connection, sends FLOOD frames at once, each a chat line of its own, while Bob
    polls; the frames the server answered `err.tooFast` and the chat lines Bob read meanwhile."""
    for player in (ala, bob):
        assert await player.login() == ""
        await player.poll()
    headers = ala.headers
    socket_ = await client.ws_connect(
        f"/push?co=getMsg&idGracza={ala.secret}&msgNo={ala.seen}", headers=headers
    )
    push = Pushed(socket_)
    await push.reply()

    async def flood() -> None:
        for n in range(1, FLOOD + 1):
            await push.socket.send_str(f"c{n}.0.{encode_client_text(f'flood {n}')}")

    async def bob_polls() -> list[str]:
        seen = []
        for _ in range(5):
            reply = await bob.poll()
            assert reply.status == "ok"
            seen += [text for nick, _, text in chat_texts(reply.lines(0)) if nick == "*Ala"]
            await asyncio.sleep(0.01)
        return seen

    _, read_by_bob = await asyncio.gather(flood(), bob_polls())
    refused: list[str] = []
    async with asyncio.timeout(FRAME_WAIT):
        while len(refused) + (push.replies[-1].processed if push.replies else 0) < FLOOD:
            frame = await push.frame()
            if frame.startswith("err."):
                refused.append(frame)
            else:
                push.replies.append(parse_reply(frame))
    return push, refused, read_by_bob


async def check_the_flood(client: TestClient, ala: Zagram, bob: Zagram, taken: int) -> None:
    push, refused, read_by_bob = await flooded(client, ala, bob)
    assert refused == ["err.tooFast"] * (FLOOD - taken)
    assert push.replies[-1].processed == taken  # k counts the frames taken, and no other
    bob_lines = read_by_bob + [
        text for nick, _, text in chat_texts((await bob.poll()).lines(0)) if nick == "*Ala"
    ]
    assert bob_lines == [f"flood {n}" for n in range(1, taken + 1)]  # the refused frames did nothing

    bob.say(0, "still there?")  # the stream goes on: Bob's line reaches Ala's push connection
    assert (await bob.poll()).status == "ok"
    heard = await push.until(
        lambda reply: any(text == "still there?" for _, _, text in chat_texts(reply.lines(0)))
    )
    assert heard.status == "ok" and not push.socket.closed
    await push.socket.close()


async def test_a_flood_over_the_per_id_limit_is_refused_frame_by_frame(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await limited_client(aiohttp_client, settings, per_id=10, trusted_proxies=("127.0.0.1",))
    ala, bob = Zagram(client, "ala123", "*Ala"), Zagram(client, "bob456", "*Bob")
    ala.headers, bob.headers = {"X-Forwarded-For": ALA_AT}, {"X-Forwarded-For": BOB_AT}
    # Ala's id took 3 of its 10: the login, a poll and the connection's upgrade; each frame takes one
    await check_the_flood(client, ala, bob, taken=7)


async def test_a_flood_over_the_per_address_limit_is_refused_and_other_addresses_are_served(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await limited_client(aiohttp_client, settings, per_address=12, trusted_proxies=("127.0.0.1",))
    ala, bob = Zagram(client, "ala123", "*Ala"), Zagram(client, "bob456", "*Bob")
    ala.headers, bob.headers = {"X-Forwarded-For": ALA_AT}, {"X-Forwarded-For": BOB_AT}
    # Ala's address took 3 of its 12 as her id did; Bob, at another address, is not slowed down
    await check_the_flood(client, ala, bob, taken=9)


async def test_pings_count_as_requests_and_a_client_that_goes_on_after_refusals_is_let_go(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """Each frame, however small, costs the server a refusal's work: one connection's flood of them took a
    core and put a p99 of 0.2-0.9 s on other players' polls. Pings are answered while the limits allow."""
    client = await limited_client(aiohttp_client, settings, per_id=10, trusted_proxies=("127.0.0.1",))
    ala = Zagram(client, "ala123", "*Ala")
    ala.headers = {"X-Forwarded-For": ALA_AT}
    assert await ala.login() == ""
    await ala.poll()
    socket_ = await client.ws_connect(
        f"/push?co=getMsg&idGracza={ala.secret}&msgNo={ala.seen}", headers=ala.headers, autoping=False
    )
    push = Pushed(socket_)
    await push.reply()
    frames: list[tuple[WSMsgType, object]] = []
    async with asyncio.timeout(FRAME_WAIT):
        for _ in range(7):  # the id's 10 less the login, the poll and the upgrade
            await socket_.ping(b"p")
            frames.append(((answer := await socket_.receive()).type, answer.data))
        for _ in range(FLOOD_REFUSALS + 10):
            await socket_.ping(b"p")
        while (answer := await socket_.receive()).type is WSMsgType.TEXT:
            frames.append((answer.type, answer.data))
    assert frames == [(WSMsgType.PONG, b"p")] * 7 + [(WSMsgType.TEXT, "err.tooFast")] * FLOOD_REFUSALS
    assert (answer.type, answer.data) == (WSMsgType.CLOSE, REFUSED)
    metrics = await (await client.get("/metrics")).text()
    assert re.search(r'^kropki_push_closed_total\{reason="flood"\} 1\.0$', metrics, re.M), metrics
