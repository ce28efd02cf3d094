"""An engine's answers through the bot API (docs/bots.md) when the server refuses them or the thing
answered is gone: an invitation it may not accept, a proposition gone with a whole state sent again;
over real HTTP, the real app and database, with the example bot and bot-play."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from examples.random_bot import Api, answer_invitation
from server.botplayer import AiBot, BotApi
from server.config import Settings
from server.hub.hub import Hub
from server.hub.limits import Caps
from server.web import bots, botstreams
from server.web.common import HUB_KEY, STORE_KEY
from tests.clients.conversation import get, log_in, poll
from tests.clients.multipoints import MultiPoints
from tests.conftest import POSTGRES, served
from tests.store.breakers import PostgresProxy, breaker_for, until
from tests.web.test_bots import EVENT_WAIT, FREE_GAME, RATED_GAME, act, invited_bot, new_bot, open_feed
from tests.web.test_bots_feed import robo_on_side_3_and_a_draw_proposed


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


@pytest.mark.usefixtures("quick_retries")
async def test_a_proposition_taken_back_with_the_play_storage_lost_is_told_gone(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """When storage fails, the play it did not take is taken back and the table's whole state is sent
    again, here without *Ala's draw proposition (it was never stored). Before, the feed's gameFull came
    without a `proposalGone`: an engine that thinks before it answers kept the proposition pending, and
    its late answer was refused."""
    client = await served(aiohttp_client, settings)
    token, feed, ala = await invited_bot(client)
    await feed.next("invitation")
    assert await act(client, token, "invitation/accept") == (200, {"ok": True})
    table = (await feed.next("gameFull"))["table"]
    await poll(client, ala)
    ala.make_move(str(table), 5, 5)
    await poll(client, ala)
    await feed.next("move", colour="blue")
    hub = client.app[HUB_KEY]
    await hub.persistence.flush()  # the move is stored: it stays

    breaker = breaker_for(settings.db_url)
    await breaker.hold()  # from here on nothing is stored; the server does not know it yet
    try:
        ala.propose(str(table), "draw")
        proposing = asyncio.create_task(get(client, ala.url()))  # her reply waits for her write
        await feed.next("proposal", table=table, what="draw")
        await breaker.break_storage()
        await proposing
        full = await feed.next("gameFull", table=table)  # taken back: the game as it was stored
        assert len(full["moves"]) == 1
        told = [event["type"] for event in feed.events if event["type"].startswith("proposal")]
        assert told == ["proposal", "proposalGone"]  # gone before the table's whole state
    finally:
        await breaker.mend()
    await until(lambda: client.app[STORE_KEY].writer.storage_failure is None)
    status, body = await act(client, token, f"game/{table}/answer/draw/accept")
    assert (status, body["error"]) == (400, "noProposal") and "no draw proposition" in body["message"]


async def test_a_second_agreement_to_a_team_proposition_is_refused_clearly(client: TestClient) -> None:
    """docs/teams.md: a proposition at a team table waits for every other player. Before, a bot agreeing
    again to one it had agreed to was answered 200 and nothing happened, as if its answer counted."""
    token, feed, _, _, uid = await robo_on_side_3_and_a_draw_proposed(client)
    hub = client.app[HUB_KEY]
    await feed.next("proposal", table=uid)
    assert await act(client, token, f"game/{uid}/answer/draw/accept") == (200, {"ok": True})
    room = hub.tables[uid].room
    assert room is not None
    before = (room.proposal, set(room.agreed), len(room.game_entries))
    status, body = await act(client, token, f"game/{uid}/answer/draw/accept")
    assert (status, body["error"]) == (400, "noProposal")
    assert "agreed already" in body["message"] and "*Bob" in body["message"]
    assert (room.proposal, set(room.agreed), len(room.game_entries)) == before


async def test_a_bot_withdraws_its_own_proposition_and_only_its_own(client: TestClient) -> None:
    """A person's client withdraws its proposition (zagram's `cancel<side><what>`). Before, the bot API
    had no way to: `decline` of its own was refused as the other player's to answer."""
    token, feed, ala = await invited_bot(client)
    await feed.next("invitation")
    assert await act(client, token, "invitation/accept") == (200, {"ok": True})
    table = (await feed.next("gameFull"))["table"]
    assert await act(client, token, f"game/{table}/propose/draw") == (200, {"ok": True})
    await feed.next("proposal", table=table, by="red", what="draw")

    assert await act(client, token, f"game/{table}/answer/draw/cancel") == (200, {"ok": True})
    await feed.next("proposalGone", table=table)
    room = client.app[HUB_KEY].tables[table].room
    assert room is not None and room.proposal is None and room.game.result is None
    await poll(client, ala)
    ala.propose(str(table), "draw")
    await poll(client, ala)
    await feed.next("proposal", table=table, by="blue")
    status, body = await act(client, token, f"game/{table}/answer/draw/cancel")  # *Ala's: not the bot's
    assert (status, body["error"]) == (400, "noProposal") and room.proposal == (1, "draw")


@pytest.mark.parametrize("bot", ["example", "bot-play"])
async def test_with_rated_the_bots_accept_a_rated_invitation_and_decline_it_without(
    client: TestClient, bot: str
) -> None:
    """Two bots may always play rated games, and a bot and a person may under --bots-rated
    (docs/bots.md); both bots declined every rated invitation, so the server's own AI as a bot never
    played one. `--rated` accepts them (the server refuses those the bot may not play)."""
    token = await new_bot(client, "Robo")
    feed = await open_feed(client, token)
    other = await new_bot(client, "Robo2")
    server = str(client.server.make_url("/")).rstrip("/")
    hub = client.app[HUB_KEY]
    for rated in (False, True):
        assert await act(client, other, "invite/Robo", gameType=RATED_GAME) == (200, {"ok": True})
        invitation = await feed.next("invitation", **{"from": "Robo2"})
        assert invitation["rated"]
        if bot == "example":
            await asyncio.to_thread(answer_invitation, Api(server, token), invitation, rated)
        else:
            await asyncio.to_thread(AiBot(BotApi(server, token), 1, seed=1, rated=rated).take, invitation)
        if not rated:
            await feed.next("invitationGone", **{"from": "Robo2"})
            assert not any(table.room is not None for table in hub.tables.values())
    full = await feed.next("gameFull")
    assert (full["blue"], full["red"], full["gameType"]) == ("Robo2", "Robo", invitation["gameType"])


@pytest.mark.skipif(not POSTGRES, reason="PostgreSQL: set KROPKI_TEST_DB (scripts/with-postgres)")
async def test_a_feed_stays_open_while_the_database_is_gone_and_logs_no_traceback(
    aiohttp_client: AiohttpClient,
    settings: Settings,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every TOKENS_EVERY the server asks the store whether its feeds' tokens still name their bots.
    Before, while PostgreSQL was gone that question's error escaped the feed's handler: every bot's feed
    broke with an ERROR and a traceback in the log (an outage is no bug), and the bots came back to 503s."""
    monkeypatch.setattr(bots, "KEEP_ALIVE_SECONDS", 0.3)
    monkeypatch.setattr(botstreams, "TOKENS_EVERY", 0.3)
    proxy = PostgresProxy(tmp_path / "pg", settings.db_url)
    await proxy.start()
    try:
        client = await served(aiohttp_client, dataclasses.replace(settings, db_url=proxy.url))
        token = await new_bot(client, "Robo")
        feed = await open_feed(client, token)
        await proxy.break_storage()
        async with asyncio.timeout(EVENT_WAIT):
            for _ in range(8):  # keep-alive lines, through several checks of the token
                assert await feed.response.content.readline() == b"\n"
        hub = client.app[HUB_KEY]
        (secret,) = [secret for secret, player in hub.players.items() if player.nick == "Robo"]
        hub.logout(secret)  # its session gone: logging in again needs the database, so the feed ends
        async with asyncio.timeout(EVENT_WAIT):
            while line := await feed.response.content.readline():  # no `error`: the bots open it again
                assert line == b"\n"
        await proxy.mend()
        feed = await open_feed(client, token)
        await client.app[STORE_KEY].bots.issue_token("Robo")  # replaced: the next check ends the feed
        assert (await feed.next("error"))["code"] == "badToken"
        assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
        await client.close()
    finally:
        await proxy.close()


@pytest.mark.parametrize("bot", ["example", "bot-play"])
async def test_an_answer_to_an_invitation_gone_meanwhile_is_not_given_to_the_next_one(
    client: TestClient, bot: str
) -> None:
    """`invitation/accept` answers the invitation pending now. *Ala's invitation, read by the bot, was
    cancelled and *Cid's, of territory rules the bot never plays, came before the bot's accept: the
    accept opened *Cid's game, where the bot never moved. The bots name whose invitation they answer
    (`from`), and an answer to one that is no longer pending is refused `noInvitation`."""
    token, feed, ala = await invited_bot(client)
    invitation = await feed.next("invitation", **{"from": "*Ala"})
    hub = client.app[HUB_KEY]
    hub.answer_invitation(ala.secret, "c")  # *Ala cancels it
    cid = MultiPoints("*Cid", "333333")
    await log_in(client, cid)
    cid.invite("Robo", "2020t0.0.a.F.a.180.15._SRATP_sratp.")
    await poll(client, cid)
    await feed.next("invitation", **{"from": "*Cid"})

    server = str(client.server.make_url("/")).rstrip("/")
    await asyncio.to_thread(_answering(bot, server, token), invitation)  # the answer to *Ala's, late
    assert not any(table.room is not None for table in hub.tables.values())
    assert [invitation.inviter.nick for invitation in hub.invitations.values()] == ["*Cid"]
    status, body = await act(client, token, "invitation/decline", **{"from": "*Ala"})
    assert (status, body["error"]) == (400, "noInvitation") and "*Ala" in body["message"]
    assert await act(client, token, "invitation/decline", **{"from": "*Cid"}) == (200, {"ok": True})
    assert hub.invitations == {}
