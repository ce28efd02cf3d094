"""The bot API (docs/bots.md) against the real app and database: a bot playing a whole game against a
polling MultiPoints (the line-by-line port of ServerZagram.java) and against another bot (the example
bot and the server's AI as an external bot, over real HTTP), its refusals, and its token kept out of
every log."""

from __future__ import annotations

import asyncio
import functools
import io
import json
import logging
import random
import re
import sys
from typing import Any

import pytest
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient
from sqlalchemy import update

from examples.random_bot import Api, Game, move, play
from server.botplayer import AiBot, BotApi, position_of
from server.config import Settings
from server.engine.gametype import parse_game_type
from server.hub.hub import Hub
from server.hub.limits import Caps
from server.store import idhash
from server.store.models import User
from server.web.accesslog import install_malformed_request_filter
from server.web.bots import STREAMS_KEY
from server.web.clients import LIMITS_KEY, WHOLE_STATES_PER_ID
from server.web.common import HUB_KEY, STORE_KEY
from server.web.limits import TokenBuckets
from server.web.metrics import METRICS_KEY
from tests.clients.conversation import engine_dots, log_in, poll
from tests.clients.multipoints import MultiPoints
from tests.conftest import served
from tests.store.breakers import breaker_for, until
from tests.store.test_accounts import held_checks, registered_id
from tests.web.test_auth import register
from tests.web.test_moderation import moderate, moderator

# ServerZagram.getGameTypeString(20, 20, 180, 15, false / true, CLEAN): the inviter (`a`) is blue
FREE_GAME = "2020n0.0.a.F.a.180.15._SRATP_sratp."
RATED_GAME = "2020n0.0.a.R.a.180.15._SRATP_sratp."
# blue surrounds red's dot at (3, 3) with (3, 2), (2, 3), (4, 3), (3, 4); MultiPoints counts from 1
CAPTURE = [(2, 3), (3, 3), (3, 2), (3, 17), (4, 3), (5, 17), (3, 4)]
EVENT_WAIT = 10.0


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def new_bot(client: TestClient, nick: str) -> str:
    return await client.app[STORE_KEY].bots.create(nick)


async def act(client: TestClient, token: str, path: str, **fields: str) -> tuple[int, dict[str, Any]]:
    response = await client.post(f"/api/bot/{path}", data=fields or None, headers=bearer(token))
    assert response.headers["Cache-Control"] == "no-store"
    return response.status, await response.json()


class Feed:
    """A bot's event feed, read line by line as a bot reads it."""

    def __init__(self, response: ClientResponse) -> None:
        self.response = response
        self.events: list[dict[str, Any]] = []

    async def next(self, kind: str, **fields: Any) -> dict[str, Any]:
        async with asyncio.timeout(EVENT_WAIT):
            while True:
                line = await self.response.content.readline()
                if not line:
                    raise EOFError(f"the feed ended before a {kind} event: {self.events}")
                if not line.strip():
                    continue
                event = json.loads(line)
                self.events.append(event)
                if event["type"] == kind and all(event.get(key) == value for key, value in fields.items()):
                    return event


async def open_feed(client: TestClient, token: str) -> Feed:
    response = await client.get("/api/bot/stream", headers=bearer(token))
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("application/x-ndjson")
    return Feed(response)


async def accepted_game(
    client: TestClient, inviter: MultiPoints, invitee: MultiPoints, game_type: str
) -> int:
    """`inviter`'s invitation of `invitee`, accepted: the number of their table (the newest)."""
    inviter.invite(invitee.my_name, game_type)
    await poll(client, inviter)
    await poll(client, invitee)
    invitee.accept_invite()
    await poll(client, invitee)
    return max(uid for uid, table in client.app[HUB_KEY].tables.items() if table.room is not None)


async def invited_bot(client: TestClient, game_type: str = FREE_GAME) -> tuple[str, Feed, MultiPoints]:
    """Bot Robo with its feed open, and *Ala (MultiPoints) having invited it to a game (a free one)."""
    token = await new_bot(client, "Robo")
    feed = await open_feed(client, token)
    ala = MultiPoints("*Ala", "111111")
    await log_in(client, ala)
    ala.invite("Robo", game_type)
    await poll(client, ala)
    return token, feed, ala


async def at_a_game(client: TestClient) -> tuple[str, Feed, MultiPoints, dict[str, Any]]:
    """Robo (red) at a free game with *Ala, who has played her first dot (e6): its token, its feed
    (read up to the game's whole state), *Ala and that whole state."""
    token, feed, ala = await invited_bot(client)
    await feed.next("invitation")
    await act(client, token, "invitation/accept")
    full = await feed.next("gameFull")
    await poll(client, ala)
    ala.make_move(str(full["table"]), 5, 5)
    await poll(client, ala)
    return token, feed, ala, full


async def test_a_bot_plays_a_whole_game_against_multipoints(client: TestClient) -> None:
    """MultiPoints sees the bot's moves as any player's, through the `sa` branch of
    ServerZagram.handleMessage (`gui.makedMove(server, currentRoom, message.startsWith("sr"),
    stringToCoordinates(propertyValue).x, stringToCoordinates(propertyValue).y, isWhite, !isWhite)`),
    and the bot sees MultiPoints' moves, clocks, chat, the end and the archive number in its feed."""
    token = await new_bot(client, "Robo")
    feed = await open_feed(client, token)
    ala = MultiPoints("*Ala", "111111")
    await log_in(client, ala)
    await poll(client, ala)
    assert "Robo" in ala.lobby

    ala.invite("Robo", FREE_GAME)
    await poll(client, ala)
    invitation = await feed.next("invitation", **{"from": "*Ala"})
    assert (invitation["width"], invitation["height"], invitation["rated"]) == (20, 20, False)
    assert await act(client, token, "invitation/accept") == (200, {"ok": True})
    full = await feed.next("gameFull")
    table, room = full["table"], client.app[HUB_KEY].tables[full["table"]].room
    assert (full["blue"], full["red"], full["colour"], full["moves"]) == ("*Ala", "Robo", "red", [])
    await poll(client, ala)
    assert str(table) in ala.tabs

    for i, (x, y) in enumerate(CAPTURE):
        if i % 2 == 0:  # Ala, blue, from MultiPoints
            ala.make_move(str(table), x, y)
            await poll(client, ala)
            move = await feed.next("move", colour="blue")
            assert (move["x"], move["y"]) == (x - 1, y - 1) and move["seconds"] > 170
            clock = await feed.next("clock")
            assert clock["toMove"] == "red" and clock["blue"] > 170 and clock["red"] > 170
        else:  # the bot, red, counting from 0
            assert await act(client, token, f"game/{table}/move/{x - 1}/{y - 1}") == (200, {"ok": True})
            await feed.next("move", colour="red", x=x - 1, y=y - 1)
            await poll(client, ala)
    assert room is not None and room.game.score(1) == 1  # blue captured the bot's dot
    assert ala.tabs[str(table)].dots == engine_dots(room) and not ala.tabs[str(table)].refused

    assert await act(client, token, f"game/{table}/chat", text="gg / well played") == (200, {"ok": True})
    await poll(client, ala)
    assert ("Robo", "gg / well played", "W3") in ala.tabs[str(table)].chat
    ala.propose(str(table), "resign")
    await poll(client, ala)
    assert (await feed.next("gameEnd"))["result"] == "W+R"
    number = (await feed.next("archived"))["number"]
    record = await client.app[STORE_KEY].games.sgf(number)
    assert record is not None and "W is a bot: Robo" in record and "B is a bot" not in record
    page = await (await client.get("/player/Robo.json")).json()
    assert page["bot"] is True


async def test_the_bot_flag_in_i_lines_parses_as_multipoints_reads_it(client: TestClient) -> None:
    """ServerZagram.handlePlayerInfo: `String status = (dotSplitted[2].matches(".*(N|b).*") ? "" :
    "free")`, then the rating and results by index: the bot's `R` flag leaves it free and every field
    read."""
    token = await new_bot(client, "Robo")
    await open_feed(client, token)
    ala = MultiPoints("*Ala", "111111")
    await log_in(client, ala)
    await poll(client, ala)
    assert ala.users["Robo"][2] == "FR"
    info = ala.user_info["Robo"]
    assert (info.status, info.rating, info.wins, info.draws, info.losses) == ("en (free)", 1500, 0, 0, 0)
    assert ala.users["*Ala"][2] == "FJ"  # people are unmarked (MultiPoints' own `i0nJa`)


async def test_two_bots_play_a_whole_game_over_http_the_example_against_the_servers_ai(
    client: TestClient,
) -> None:
    server = str(client.server.make_url("/")).rstrip("/")
    random_token, ai_token = await new_bot(client, "RandomBot"), await new_bot(client, "AiBot")
    hub = client.app[HUB_KEY]
    ai = asyncio.create_task(asyncio.to_thread(AiBot(BotApi(server, ai_token), 1, seed=5).run, 1))
    async with asyncio.timeout(EVENT_WAIT):
        while hub.roster.online("AiBot") is None:
            await asyncio.sleep(0.05)
    example = asyncio.to_thread(play, Api(server, random_token), 1, "AiBot", random.Random(7))
    async with asyncio.timeout(240):
        assert await example == 1
        assert await ai == 1
    games = await client.app[STORE_KEY].games.recent("AiBot", 5)
    # played to a full board: a score, not a resignation or the clock
    assert len(games) == 1 and re.fullmatch(r"[BW]\+[0-9.]+|0", games[0].result or "")
    record = await client.app[STORE_KEY].games.sgf(games[0].number)
    assert record is not None and "B is a bot: RandomBot" in record and "W is a bot: AiBot" in record


async def test_refusals_are_clear_and_change_nothing(client: TestClient) -> None:
    token = await new_bot(client, "Robo")
    assert (await client.get("/api/bot/stream")).status == 401
    status, body = await act(client, "not-a-token", "invitation/accept")
    assert (status, body["error"]) == (401, "badToken")
    missing = await client.post("/api/bot/invitation/accept")
    assert missing.status == 401 and "Bearer" in missing.headers["WWW-Authenticate"]

    ala = MultiPoints("*Ala", "111111")
    bob = MultiPoints("*Bob", "222222")
    for mp in (ala, bob):
        await log_in(client, mp)
        await poll(client, mp)
    theirs = await accepted_game(client, ala, bob, FREE_GAME)
    status, body = await act(client, token, f"game/{theirs}/move/5/5")
    assert (status, body["error"]) == (400, "notPlayer")
    status, body = await act(client, token, "invitation/accept")
    assert (status, body["error"]) == (400, "noInvitation") and body["message"]
    status, body = await act(client, token, "game/x/resign")
    assert (status, body["error"]) == (400, "badTable")
    status, body = await act(client, token, "game/1/propose/win")
    assert (status, body["error"]) == (400, "badProposal")
    status, body = await act(client, token, "invite/*Ala")
    assert (status, body["error"]) == (400, "badRequest")
    form = {**bearer(token), "Content-Type": "application/x-www-form-urlencoded"}
    huge = await client.post(
        "/api/bot/game/1/chat", data=io.BytesIO(b"text=" + b"x" * 2_000_000), headers=form
    )
    assert huge.status == 413 and (await huge.json())["error"] == "tooLong"
    broken = await client.post(
        "/api/bot/game/1/chat", data=b"{", headers={**bearer(token), "Content-Type": "application/json"}
    )
    assert broken.status == 400 and (await broken.json())["error"] == "badRequest"
    nested = b'{"text": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"  # deeper than json's recursion: was a 503
    deep = await client.post(
        "/api/bot/game/1/chat", data=nested, headers={**bearer(token), "Content-Type": "application/json"}
    )
    assert deep.status == 400 and (await deep.json())["error"] == "badRequest"

    # an illegal move: the point is taken
    assert await act(client, token, "invite/*Ala", gameType=FREE_GAME) == (200, {"ok": True})
    await poll(client, ala)
    ala.accept_invite()
    await poll(client, ala)
    table = max(uid for uid, table in client.app[HUB_KEY].tables.items() if table.room is not None)
    assert await act(client, token, f"game/{table}/move/0/0") == (200, {"ok": True})  # the bot is blue
    room = client.app[HUB_KEY].tables[table].room
    assert room is not None
    # not its turn: a code of its own, for the point may be free (illegalMove said it was not)
    status, body = await act(client, token, f"game/{table}/move/5/5")
    assert (status, body["error"]) == (400, "notYourTurn") and "not your move" in body["message"]
    assert len(room.game.moves) == 1
    ala.make_move(str(table), 2, 2)
    await poll(client, ala)
    moves = len(room.game.moves)
    status, body = await act(client, token, f"game/{table}/move/1/1")
    assert (status, body["error"]) == (400, "illegalMove") and len(room.game.moves) == moves
    status, body = await act(client, token, f"game/{table}/move/99/0")
    assert (status, body["error"]) == (400, "illegalMove") and len(room.game.moves) == moves


async def test_text_that_is_not_utf8_is_refused_and_never_reaches_the_stream(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    """JSON may carry a lone surrogate ("\\udc80"), which no UTF-8 reply can hold. Before, a bot's lobby
    chat line with one was said and journalled, and every poll of the lobby answered HTTP 500 from then
    on, after a restart too. A token or a charset that cannot be read was a 503 and an ERROR."""
    token = await new_bot(client, "Robo")
    json_body = {**bearer(token), "Content-Type": "application/json"}
    for body in (b'{"text": "hi \\udc80"}', b'{"text": "\\ud83d"}'):
        refused = await client.post("/api/bot/game/0/chat", data=body, headers=json_body)
        assert refused.status == 400 and (await refused.json())["error"] == "badRequest"
    upgrade = {"Content-Type": "application/json"}
    refused = await client.post(
        "/api/bot/upgrade", data=b'{"nick": "Eve", "id": "s\\udcffpass123"}', headers=upgrade
    )
    assert refused.status == 400 and (await refused.json())["error"] == "badRequest"
    bogus = {**bearer(token), "Content-Type": "application/json; charset=bogus"}
    refused = await client.post("/api/bot/game/0/chat", data=b'{"text": "hi"}', headers=bogus)
    assert refused.status == 400 and (await refused.json())["error"] == "badRequest"
    # a header of bytes that are no UTF-8, as a broken client may send it
    reader, writer = await asyncio.open_connection(client.host, client.port)
    writer.write(b"GET /api/bot/account HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer abc\xff\xfe\r\n\r\n")
    assert (await reader.readline()).startswith(b"HTTP/1.1 401 ")
    writer.close()
    await writer.wait_closed()
    assert await act(client, token, "game/0/chat", text="still here") == (200, {"ok": True})
    anonymous = await client.get("/a.kropki?co=getMsg&msgNo=0")
    assert anonymous.status == 200 and "still here" in await anonymous.text()
    assert "ERROR" not in caplog.text


@pytest.mark.parametrize("path", ["upgrade", "game/0/chat"])
async def test_a_body_that_cannot_be_decoded_is_refused_and_is_no_failure(
    client: TestClient, caplog: pytest.LogCaptureFixture, path: str
) -> None:
    """A body its Content-Encoding does not decode is the client's mistake. Before, it was answered 503
    `internal`, written at ERROR with its trace and counted in kropki_failures_total, the count of the
    server's bugs that an operator alerts on: anyone could raise it at will."""
    install_malformed_request_filter()  # as `serve` does: aiohttp's own record of the body is a warning
    token = await new_bot(client, "Robo")
    garbled = {
        **bearer(token),
        "Content-Type": "application/x-www-form-urlencoded",
        "Content-Encoding": "gzip",
    }
    refused = await client.post(f"/api/bot/{path}", data=b"nick=Eve&id=SECRET4242&text=hi", headers=garbled)

    assert refused.status == 400 and (await refused.json())["error"] == "badRequest"
    metrics = client.app[METRICS_KEY].registry
    assert metrics.get_sample_value("kropki_failures_total") == 0
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert "SECRET4242" not in caplog.text


async def test_the_example_bot_keeps_a_free_point_refused_as_not_its_turn(client: TestClient) -> None:
    """The chaos run with bots: a bot whose feed lagged sent moves before its turn; each was refused
    `illegalMove`, which the example bot takes for a point inside a realm and never tries again. The
    board's last free point was one of them, and its game stood still until its clock ran out. Refused
    `notYourTurn`, it waits for its feed and keeps the point."""
    token, feed, _ = await invited_bot(client)
    await feed.next("invitation")
    await act(client, token, "invitation/accept")
    full = await feed.next("gameFull")
    game = Game(full)  # *Ala is blue and on move
    requests = []
    api = Api(str(client.server.make_url("/")), token)
    posting = api.post

    def counted(path: str, **fields: str) -> dict[str, Any]:
        requests.append(path)
        return posting(path, **fields)

    api.post = counted  # type: ignore[method-assign]
    await asyncio.to_thread(move, api, full["table"], game, random.Random(1))
    assert len(requests) == 1 and game.closed == set()


def test_a_bot_that_moved_waits_for_its_move_in_the_feed_before_it_moves_again() -> None:
    """The chaos run with bots: a bot's move refused `storage` went again and was taken; the feed then
    gave the `clock` sent when the clocks went on, still on the bot's move (the feed is read between
    requests), and the bot moved again: the point of its move, not on its board yet, refused as taken
    (12 in a run). A bot whose move was taken waits for that move's event."""
    full = {"width": 10, "height": 10, "colour": "blue", "setup": [], "moves": [], "gameType": "1010n0"}
    blue = {"type": "clock", "toMove": "blue"}
    game, position = Game(full), position_of(full)
    assert position is not None
    assert game.on_move(blue)
    game.played, position.played = (3, 3), (3, 3)  # as move() and AiBot._play note a move taken
    assert not game.on_move(blue) and position.played
    moved = {"type": "move", "colour": "blue", "x": 3, "y": 3}
    game.play(moved)
    position.take(moved)
    assert game.played is None and position.played is None
    assert game.on_move(blue)


async def test_a_bot_and_a_person_play_unrated_only_by_default(client: TestClient) -> None:
    token = await new_bot(client, "Robo")
    ala = MultiPoints("*Ala", "111111")
    await log_in(client, ala)
    await poll(client, ala)
    status, body = await act(client, token, "invite/*Ala", gameType=RATED_GAME)
    assert (status, body["error"]) == (400, "botUnrated")
    assert client.app[HUB_KEY].invitations == {}
    ala.invite("Robo", RATED_GAME)  # the person inviting: the same refusal, in MultiPoints' lobby chat
    await poll(client, ala)
    await poll(client, ala)
    assert client.app[HUB_KEY].invitations == {}
    assert any("нерейтинговые" in text for nick, text in ala.lobby_chat if nick == "")  # lang=ru
    other = await new_bot(client, "Robo2")
    await open_feed(client, other)
    assert await act(client, token, "invite/Robo2", gameType=RATED_GAME) == (200, {"ok": True})


async def test_with_bots_rated_a_bot_and_a_person_may_play_rated(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await served(aiohttp_client, settings, Hub(caps=Caps(bots_rated=True)))
    token = await new_bot(client, "Robo")
    lee = MultiPoints("*Lee", "333333")
    await log_in(client, lee)
    await poll(client, lee)
    assert await act(client, token, "invite/*Lee", gameType=RATED_GAME) == (200, {"ok": True})


async def test_a_banned_bot_is_told_why_and_its_feed_ends(client: TestClient) -> None:
    token = await new_bot(client, "Robo")
    feed = await open_feed(client, token)
    mod = await moderator(client)
    assert await moderate(mod, what="ban", whom="Robo", reason="spam bot") == "ok"
    error = await feed.next("error")
    assert (error["code"], error["detail"]) == ("banned", "forGood.spam bot")
    status, body = await act(client, token, "invite/Mod", gameType=FREE_GAME)
    assert (status, body["error"], body["detail"]) == (400, "banned", "forGood.spam bot")


async def test_a_bot_renamed_by_an_admin_plays_on_at_its_game(client: TestClient) -> None:
    """A renamed player's live session goes on under the old nick (docs/operations.md, "Accounts"). A
    bot's session was found by an id made from its nick: after `user rename`, its next move was
    refused `notPlayer` and a second session of the account, under the new nick, joined the lobby
    beside the first; the bot lost its game on time (found by a helper's audit)."""
    token, feed, ala = await invited_bot(client)
    await feed.next("invitation", **{"from": "*Ala"})
    assert await act(client, token, "invitation/accept") == (200, {"ok": True})
    table = (await feed.next("gameFull"))["table"]
    await poll(client, ala)
    ala.make_move(str(table), 2, 3)
    await poll(client, ala)
    await feed.next("move", colour="blue")

    await client.app[STORE_KEY].accounts.rename("Robo", "Robot")  # what `kropki-server user rename` does
    assert await act(client, token, f"game/{table}/move/2/2") == (200, {"ok": True})
    await feed.next("move", colour="red", x=2, y=2)
    assert sorted(player.nick for player in client.app[HUB_KEY].players.values()) == ["*Ala", "Robo"]
    feed.response.close()


async def test_a_rotated_token_stops_working_and_a_player_without_games_becomes_a_bot(
    client: TestClient,
) -> None:
    bots = client.app[STORE_KEY].bots
    old = await new_bot(client, "Robo")
    new = await bots.issue_token("Robo")
    assert (await client.get("/api/bot/account", headers=bearer(old))).status == 401
    account = await (await client.get("/api/bot/account", headers=bearer(new))).json()
    assert account["nick"] == "Robo" and account["bot"] is True

    assert await register(client, "Engine") == "ok.zarejestrowalem."
    wrong = await client.post("/api/bot/upgrade", data={"nick": "Engine", "id": "wrongwrong1"})
    assert wrong.status == 403 and (await wrong.json())["error"] == "wrongNickOrId"
    assert client.app[HUB_KEY].logout(registered_id("Engine", "pw"))  # registering logged it in
    right = await client.post(
        "/api/bot/upgrade", data={"nick": "Engine", "id": registered_id("Engine", "pw")}
    )
    assert right.status == 200
    token = (await right.json())["token"]
    assert (await (await client.get("/api/bot/account", headers=bearer(token))).json())["nick"] == "Engine"

    assert await register(client, "Veteran") == "ok.zarejestrowalem."
    async with client.app[STORE_KEY].engine.begin() as connection:
        await connection.execute(update(User).where(User.nick == "Veteran").values(wins=1))
    played = await client.post(
        "/api/bot/upgrade", data={"nick": "Veteran", "id": registered_id("Veteran", "pw")}
    )
    assert played.status == 409 and (await played.json())["error"] == "hasPlayed"


async def test_an_account_logged_in_or_at_an_unfinished_game_does_not_become_a_bot(
    client: TestClient,
) -> None:
    """Before, a player upgraded their account in the middle of a rated game against a person: the game
    went on rated, and the archive named the person who played it a bot (`B is a bot: Engine`). A
    session logged in before the upgrade, not marked, could start more such games."""
    for nick in ("Engine", "Alice"):
        assert await register(client, nick) == "ok.zarejestrowalem."  # and logged in
    engine, alice = (MultiPoints(nick, registered_id(nick, "pw")) for nick in ("Engine", "Alice"))
    upgrade = {"nick": "Engine", "id": engine.secret}
    online = await client.post("/api/bot/upgrade", data=upgrade)
    assert online.status == 409 and (await online.json())["error"] == "inPlay"
    for mp in (engine, alice):
        await poll(client, mp)
    table = await accepted_game(client, engine, alice, RATED_GAME)
    hub = client.app[HUB_KEY]
    engine.make_move(str(table), 3, 3)
    await poll(client, engine)
    assert hub.logout(engine.secret)  # its game waits for it

    playing = await client.post("/api/bot/upgrade", data=upgrade)
    assert playing.status == 409 and (await playing.json())["error"] == "inPlay"
    assert (await client.app[STORE_KEY].accounts.profile("Engine")).bot is False  # type: ignore[union-attr]


async def test_an_upgrade_while_the_id_hashes_are_flooded_is_refused_at_once_and_counts_no_failure(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert await register(client, "Engine") == "ok.zarejestrowalem."
    hashing = client.app[STORE_KEY].hashing
    gate, _ = held_checks(monkeypatch)
    flood = [asyncio.create_task(hashing.check_async(f"guess{n}", None)) for n in range(idhash.HASH_THREADS)]
    await until(lambda: hashing.free == 0)  # every thread held by a guess
    hashing.seconds = 2 * idhash.MOST_WAIT * idhash.HASH_THREADS  # as if each took that long: none may wait

    answers = [
        await client.post("/api/bot/upgrade", data={"nick": "Engine", "id": registered_id("Engine", "pw")})
        for _ in range(6)
    ]
    gate.set()
    await asyncio.gather(*flood)

    assert [(answer.status, (await answer.json())["error"]) for answer in answers] == [(429, "tooFast")] * 6
    wrong = await client.post("/api/bot/upgrade", data={"nick": "Engine", "id": "wrongwrong1"})
    assert wrong.status == 403  # not tooManyFailedLogins: the six counted as no failed attempt


async def test_the_token_is_never_in_a_log(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    token, feed, ala = await invited_bot(client)
    await feed.next("invitation")
    await act(client, token, "invitation/accept")
    table = (await feed.next("gameFull"))["table"]
    await act(client, token, f"game/{table}/move/0/0")  # not its turn: refused
    await act(client, token, f"game/{table}/chat", text="hello")
    await client.get("/api/bot/account", headers=bearer(token + "x"))
    assert await register(client, "Engine") == "ok.zarejestrowalem."
    assert client.app[HUB_KEY].logout(registered_id("Engine", "pw"))  # registering logged it in
    upgraded = await client.post(
        "/api/bot/upgrade", data={"nick": "Engine", "id": registered_id("Engine", "pw")}
    )
    upgraded_token = (await upgraded.json())["token"]
    feed.response.close()
    await asyncio.sleep(0.1)

    async def failing(found: str, **_: object) -> None:
        raise RuntimeError(f"a bug that shows the token {found}")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(client.app[STORE_KEY].bots, "account", failing)
        assert (await client.get("/api/bot/account", headers=bearer(token))).status == 503
    assert "a bug that shows the token ***" in caplog.text
    assert caplog.records and token not in caplog.text and upgraded_token not in caplog.text
    assert "target=/api/bot/upgrade status=200" in caplog.text  # the access log wrote its line
    assert "Robo" in caplog.text  # the log does say who


async def test_a_newer_feed_ends_the_older_and_both_start_from_the_present(client: TestClient) -> None:
    token, first, _ = await invited_bot(client)
    await first.next("invitation")
    second = await open_feed(client, token)
    assert (await first.next("error"))["code"] == "replaced"  # said why: the bot must not open it again
    async with asyncio.timeout(EVENT_WAIT):
        assert await first.response.content.read() == b""  # ended, with nothing more in it
    assert (await second.next("invitation"))["from"] == "*Ala"  # the pending invitation, again


@pytest.mark.parametrize("bot_api", [Api, BotApi], ids=["example", "bot-play"])
async def test_a_feed_opened_too_often_is_refused_and_the_bots_open_it_after_retry_after(
    client: TestClient, bot_api: type[Api] | type[BotApi], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every feed begins with the lobby's whole state. Before, one token could open feeds as fast as it
    liked (a helper's audit: 10 in 1.8 s, each a 90 KB whole state), past the limit a poll has."""
    token = await new_bot(client, "Robo")
    for _ in range(3):
        (await open_feed(client, token)).response.close()
    refused = await client.get("/api/bot/stream", headers=bearer(token))
    assert refused.status == 429, "opened a fourth time"  # before reading a body that may never end
    assert (await refused.json())["error"] == "tooFast" and refused.headers["Retry-After"] == "10"
    ala = MultiPoints("*Ala", "111111")
    await log_in(client, ala)
    ala.invite("Robo", FREE_GAME)  # Robo is online: its feeds logged it in
    await poll(client, ala)
    waited: list[float] = []

    def sleep(seconds: float) -> None:  # no waiting: the limit is as it is 10 s later
        waited.append(seconds)
        client.app[LIMITS_KEY].whole_states_per_id = TokenBuckets(*WHOLE_STATES_PER_ID)

    monkeypatch.setattr(sys.modules[bot_api.__module__].time, "sleep", sleep)
    events = bot_api(str(client.server.make_url("/")), token).events()
    async with asyncio.timeout(EVENT_WAIT):
        first = await asyncio.to_thread(next, events, None)  # type: ignore[arg-type]
    assert waited == [10.0]  # refused once, and waited what Retry-After said
    assert first is not None and first["type"] == "invitation"


@pytest.mark.parametrize("bot_api", [Api, BotApi], ids=["example", "bot-play"])
async def test_the_example_and_bot_play_open_the_feed_again_when_it_ends_for_a_restart(
    client: TestClient, bot_api: type[Api] | type[BotApi]
) -> None:
    """The feed ended without a word at a server's stop, and both bots stopped with it (a restart, or
    the `moved` of a cluster, left the bot gone). They open it again after `stopping` and `moved`,
    and stop at any other end: `replaced` by a newer feed, which another copy of the bot opened."""
    token, _, _ = await invited_bot(client)
    events = bot_api(str(client.server.make_url("/")), token).events()

    async def following() -> dict[str, Any] | None:
        async with asyncio.timeout(EVENT_WAIT):
            return await asyncio.to_thread(next, events, None)  # type: ignore[arg-type]

    first = await following()  # the test's own feed was replaced by the bot's: the present again
    assert first is not None and (first["type"], first["from"]) == ("invitation", "*Ala")
    client.app[STREAMS_KEY].end_all()  # as the server does when it stops
    client.app[LIMITS_KEY].whole_states_per_id = TokenBuckets(*WHOLE_STATES_PER_ID)  # and starts afresh
    again = await following()  # after `stopping`, from a feed opened again at once
    assert again is not None and (again["type"], again["from"]) == ("invitation", "*Ala")
    assert len(client.app[STREAMS_KEY].open) == 1  # open again

    await open_feed(client, token)  # another copy of the bot
    replaced = await following()
    assert replaced is not None and replaced["code"] == "replaced"
    assert await following() is None  # and the bot stops


NGINX_502 = (  # nginx's own page, as it answers while no member of a cluster can take a request
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
)


@pytest.mark.parametrize("bot_api", [Api, BotApi], ids=["example", "bot-play"])
async def test_the_example_and_bot_play_answer_unanswered_to_a_proxy_s_error_page_or_no_connection(
    aiohttp_server: Any, unused_tcp_port: int, bot_api: type[Api] | type[BotApi]
) -> None:
    """The chaos run with bots: when a member of a cluster died, nginx answered a bot's move with its
    502 page (it sends a POST to no other member: it may have been done) and four of eight example bots
    stopped on that page's HTML (JSONDecodeError). An action with no answer from the server is the error
    `unanswered`; the bot plays on, and its feed says whether it was done."""

    async def bad_gateway(request: web.Request) -> web.Response:
        return web.Response(status=502, text=NGINX_502, content_type="text/html")

    proxy = web.Application()
    proxy.router.add_post("/api/bot/game/{table}/move/{x}/{y}", bad_gateway)
    server = await aiohttp_server(proxy)
    answer = await asyncio.to_thread(
        bot_api(str(server.make_url("/")), "token").post, "/api/bot/game/7/move/1/2"
    )
    assert answer == {"error": "unanswered", "message": "HTTP 502, not from the server"}
    nobody = bot_api(f"http://127.0.0.1:{unused_tcp_port}", "token")  # nothing listens there
    answer = await asyncio.to_thread(nobody.post, "/api/bot/game/7/move/1/2")
    assert answer["error"] == "unanswered" and answer["message"]


@pytest.mark.usefixtures("quick_retries")
@pytest.mark.parametrize("bot", ["example", "bot-play"])
async def test_a_bot_s_move_refused_while_storage_fails_is_sent_again_and_played_once_it_is_back(
    aiohttp_client: AiohttpClient, settings: Settings, bot: str
) -> None:
    """The chaos run with bots: a bot's move while PostgreSQL restarted was answered 503 `storage`, and
    the example bot waited for its feed to call for a move again. Nothing did: its clock ran out and
    the game with it. The move was not made (the clocks stand still meanwhile), so both bots send it
    again a second later until it is taken."""
    client = await served(aiohttp_client, settings)
    token, feed, ala, full = await at_a_game(client)
    table = full["table"]
    moved = await feed.next("move", colour="blue")
    url = str(client.server.make_url("/"))
    if bot == "example":
        game = Game(full)
        game.play(moved)
        playing = functools.partial(move, Api(url, token), table, game, random.Random(1))
    else:
        position = position_of(full)
        assert position is not None
        position.take(moved)
        free = position.board().index((10, 10))
        playing = functools.partial(AiBot(BotApi(url, token), level=1, seed=1).move, table, position, free)

    def moves() -> list[int]:  # the players of the moves made, in the room as it is now (a take-back
        room = client.app[HUB_KEY].tables[table].room  # restores the table in a new room)
        assert room is not None
        return [made.player for made in room.game.moves]

    breaker = breaker_for(settings.db_url)
    await breaker.break_storage()
    try:
        moving = asyncio.create_task(asyncio.to_thread(playing))
        await until(lambda: client.app[STORE_KEY].writer.storage_failure is not None)
        await asyncio.sleep(1.5)  # made, not stored, taken back; then refused `storage` at once
        assert moves() == [1]
    finally:
        await breaker.mend()
    async with asyncio.timeout(EVENT_WAIT):
        await moving
    assert moves() == [1, 2]


async def test_a_bot_plays_on_after_a_restart_from_its_feed_s_whole_state(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """The bot's session and game are journalled as a player's: after a restart its next request
    claims the session again, and the feed's first events are the game's whole state."""
    client = await served(aiohttp_client, settings)
    token, feed, ala, full = await at_a_game(client)
    table = full["table"]
    await feed.next("move", colour="blue")
    feed.response.close()
    await client.close()

    client = await served(aiohttp_client, settings)
    feed = await open_feed(client, token)
    full = await feed.next("gameFull", table=table)
    assert full["moves"] == [{"colour": "blue", "x": 4, "y": 4, "seconds": full["moves"][0]["seconds"]}]
    assert (await feed.next("clock", table=table))["toMove"] == "red"
    assert await act(client, token, f"game/{table}/move/9/9") == (200, {"ok": True})
    room = client.app[HUB_KEY].tables[table].room
    assert room is not None and [move.point for move in room.game.moves] == [(4, 4), (9, 9)]


async def test_a_muted_bot_s_chat_is_refused_with_until_when_and_why(client: TestClient) -> None:
    token, _, _ = await invited_bot(client)
    assert await act(client, token, "invitation/accept") == (200, {"ok": True})
    table = max(uid for uid, table in client.app[HUB_KEY].tables.items() if table.room is not None)
    mod = await moderator(client)
    assert await moderate(mod, what="mute", whom="Robo", reason="rude", **{"for": "2h"}) == "ok"
    status, body = await act(client, token, f"game/{table}/chat", text="you lose")
    assert (status, body["error"]) == (400, "muted") and "(rude)" in body["message"]
    assert all(entry.text != "you lose" for entry in client.app[HUB_KEY].tables[table].chat.entries)


async def test_a_bot_on_side_3_of_a_team_game_is_told_its_turn_and_moves(client: TestClient) -> None:
    """docs/teams.md, docs/bots.md: at a team table a colour is a whole team's, so the feed's clock names
    the side on move too. Before, it said `toMove: "3"` on the bot's turn: neither the example bot nor
    bot-play ever moved as side 3, and their team's clock ran out; as side 1 they would have moved on
    *Cid's turn as well."""
    token = await new_bot(client, "Robo")
    feed = await open_feed(client, token)
    players = [MultiPoints(nick, secret) for nick, secret in (("*Ala", "111111"), ("*Bob", "222222"))]
    for mp in players:
        await log_in(client, mp)
    hub = client.app[HUB_KEY]
    uid = hub.set_up_table(
        parse_game_type(FREE_GAME), "*Ala", "*Bob", (0,) * 4, None, None, {}, more=["Robo", "*Dan"]
    )
    full = await feed.next("gameFull", table=uid)
    game, position = Game(full), position_of(full)
    assert (full["colour"], full["side"]) == ("blue", 3) and position is not None and position.side == 3
    assert not game.on_move(await feed.next("clock", table=uid))  # *Ala's turn

    for mp, (x, y) in zip(players, ((3, 3), (9, 9)), strict=True):
        mp.make_move(str(uid), x, y)
        await poll(client, mp)
    clock = await feed.next("clock", table=uid, side=3)

    assert clock["toMove"] == "blue" and game.on_move(clock)
    assert await act(client, token, f"game/{uid}/move/5/5") == (200, {"ok": True})
    clock = await feed.next("clock", table=uid, side=4)
    assert clock["toMove"] == "red" and not game.on_move(clock)
