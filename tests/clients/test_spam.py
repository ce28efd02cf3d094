"""MultiPoints refused for spam (issue 46.7 and 46.8): the refusal is a server chat line it shows, in
the lobby or at the table where the line was written, never a protocol error.

What MultiPoints shows of such a line (vn971/multipoints, ServerZagram.java, handleMessage): a `ca`
line without a `-` in its nick goes to the window of the section it came in, nick and all (here the
server's empty nick):

    gui.chatReceived(server,
        currentRoom, nick, chatMessage, time);

tests/clients/multipoints.py keeps that branch as `lobby_chat` and a game tab's `chat`.
"""

from __future__ import annotations

import random

from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.limits import Caps
from server.hub.sentences import CATALOGUE
from tests.clients.conversation import log_in, poll
from tests.clients.test_multipoints import CLEAN, Lobby
from tests.conftest import served


async def test_multipoints_shows_each_spam_refusal_as_a_server_line(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    hub = Hub(timers=ManualTimers(), rng=random.Random(3), caps=Caps(banned_words=("gold",)))
    lobby = Lobby(await served(aiohttp_client, settings, hub), hub)
    for mp in (lobby.ala, lobby.bob, lobby.eve):
        await log_in(lobby.client, mp)  # in Russian, as MultiPoints always logs in
    await lobby.round()
    uid, ala, bob = await lobby.start(CLEAN)

    ala.send_chat("0", "cheap GOLD")
    ala.send_chat(uid, "g0ld here")
    ala.send_private("*Bob", "gold for you")
    for n in range(3):
        ala.send_chat("0", f"see example.com/{n}")
    for _ in range(4):
        ala.send_private("*Eve", "hello")
    await lobby.round()

    russian = CATALOGUE["bannedWord"]["ru"]
    refused = [text for nick, text in ala.lobby_chat if nick == ""]
    assert refused == [russian, russian, CATALOGUE["tooManyLinks"]["ru"], CATALOGUE["repeatedLine"]["ru"]]
    assert [(nick, text) for nick, text, _ in ala.tabs[uid].chat if nick == ""] == [("", russian)]
    assert not ala.failures and not ala.disposed and ala.raw == []
    assert [text for _, text in bob.lobby_chat] == ["see example.com/0", "see example.com/1"]
    assert bob.private == [] and bob.tabs[uid].chat == []
    assert [text for _, _, text in lobby.eve.private] == ["hello"] * 3
    await poll(lobby.client, ala)
    assert not ala.disposed
