"""An engine's answers through the bot API (docs/bots.md) when the server refuses them or the thing
answered is gone: an invitation it may not accept, a proposition gone with a whole state sent again;
over real HTTP, the real app and database, with the example bot and bot-play."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from pytest_aiohttp import AiohttpClient

from examples.random_bot import Api, answer_invitation
from server.botplayer import AiBot, BotApi
from server.config import Settings
from server.hub.hub import Hub
from server.hub.limits import Caps
from server.web.common import HUB_KEY
from tests.clients.conversation import log_in, poll
from tests.clients.multipoints import MultiPoints
from tests.conftest import served
from tests.web.test_bots import FREE_GAME, act, new_bot, open_feed


def _answering(bot: str, server: str, token: str) -> Any:
    """The bot's way of answering an invitation event, blocking (run it in a thread)."""
    if bot == "example":
        return lambda event: answer_invitation(Api(server, token), event)
    return AiBot(BotApi(server, token), 1, seed=1).take


@pytest.mark.parametrize("bot", ["example", "bot-play"])
async def test_an_invitation_the_bot_may_not_accept_is_declined_not_left_pending(
    aiohttp_client: AiohttpClient, settings: Settings, bot: str
) -> None:
    """A bot at its most unfinished games accepts an invitation and is refused `tooManyGames`. Before,
    both bots left it there: the inviter waited for an answer that never came, and every other player's
    invitation to the bot was refused `busy` ("answering another invitation") until the inviter gave up."""
    limited = dataclasses.replace(settings, unlimited=())  # the tests' address has no limits otherwise
    client = await served(aiohttp_client, limited, Hub(caps=Caps(games_per_player=1)))
    token = await new_bot(client, "Robo")
    feed = await open_feed(client, token)
    bob, ala = MultiPoints("*Bob", "222222"), MultiPoints("*Ala", "111111")
    cid = MultiPoints("*Cid", "333333")
    for mp in (bob, ala, cid):
        await log_in(client, mp)
    bob.invite("Robo", FREE_GAME)
    await poll(client, bob)
    await feed.next("invitation", **{"from": "*Bob"})
    assert await act(client, token, "invitation/accept") == (200, {"ok": True})
    await feed.next("gameFull")  # the bot's one unfinished game

    ala.invite("Robo", FREE_GAME)
    await poll(client, ala)
    invitation = await feed.next("invitation", **{"from": "*Ala"})
    server = str(client.server.make_url("/")).rstrip("/")
    await asyncio.to_thread(_answering(bot, server, token), invitation)

    await feed.next("invitationGone", **{"from": "*Ala"})
    hub = client.app[HUB_KEY]
    assert hub.invitations == {}
    cid.invite("Robo", FREE_GAME)  # the bot is free to be asked again
    await poll(client, cid)
    await feed.next("invitation", **{"from": "*Cid"})
