"""A bot's action is done only if its token still names the bot when the hub does it (docs/bots.md,
"Tokens"): a token an admin replaces (`kropki-server bot token`, another process) stops working at
once, even for a request that was already past its first look at the token; over a real socket, the
real app and database."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlencode

from aiohttp.test_utils import TestClient

from server.web.common import HUB_KEY, STORE_KEY
from tests.store.breakers import until
from tests.web.test_bots import FREE_GAME, new_bot


async def test_an_action_whose_body_came_after_its_token_was_replaced_is_refused(client: TestClient) -> None:
    """The token was looked up when the request's headers came, and the action read its body after: a
    body that came slowly let an invitation (or a chat line, an acceptance) of a replaced token through."""
    hub = client.app[HUB_KEY]
    token = await new_bot(client, "Robo")
    hub.guest_login("alaAla11", "*Ala", "en")
    body = urlencode({"gameType": FREE_GAME}).encode()
    reader, writer = await asyncio.open_connection(client.server.host, client.server.port)
    try:
        writer.write(
            b"POST /api/bot/invite/*Ala HTTP/1.1\r\nHost: test\r\nConnection: close\r\n"
            + f"Authorization: Bearer {token}\r\nContent-Length: {len(body)}\r\n".encode()
            + b"Content-Type: application/x-www-form-urlencoded\r\n\r\n"
            + body[:5]
        )
        await writer.drain()
        # past the token's look-up: the bot's session is logged in, and the action waits for its body
        await until(lambda: any(player.nick == "Robo" for player in hub.players.values()))
        await client.app[STORE_KEY].bots.issue_token("Robo")
        writer.write(body[5:])
        await writer.drain()
        head, _, answer = (await asyncio.wait_for(reader.read(), 10.0)).partition(b"\r\n\r\n")
    finally:
        writer.close()

    assert head.startswith(b"HTTP/1.1 401 "), head
    assert json.loads(answer)["error"] == "badToken"
    assert not hub.invites.invitations
