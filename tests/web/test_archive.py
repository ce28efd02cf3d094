"""Finished games in the archive: numbers, downloads, lists by nick, and the ratings they change; live
and archived records marking their bots (docs/bots.md)."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from urllib.parse import quote

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.app import STORE_KEY
from server.config import Settings
from server.engine.gametype import parse_game_type
from server.engine.replay import main as replay_main
from server.engine.sgf import read_record
from server.protocol.codec import decode_server_text
from server.web.common import HUB_KEY
from tests.conftest import POSTGRES, served
from tests.store.breakers import PostgresProxy
from tests.store.test_accounts import registered_id
from tests.web.test_auth import register
from tests.web.test_bots import FREE_GAME, act, new_bot, open_feed
from tests.web.test_games import play
from tests.web.zagram import Zagram

BOARD = "1616stanr0.0.0"  # 16x16, ranked, the inviter starts


async def pair(client: TestClient, first: str, second: str) -> tuple[Zagram, Zagram]:
    """Two logged-in players (registered unless the nick starts with *)."""
    players = []
    for nick in (first, second):
        if nick.startswith("*"):
            player = Zagram(client, nick[1:4].lower() + "123", nick)
            assert await player.login() == ""
        else:
            assert await register(client, nick) == "ok.zarejestrowalem."
            player = Zagram(client, registered_id(nick, "pw"), nick)
        await player.poll()
        players.append(player)
    return players[0], players[1]


async def game_of(blue: Zagram, red: Zagram, dots: int, game_type: str = BOARD) -> int:
    """Blue invites red; `dots` dots along two far-apart edges (nothing enclosed); red resigns."""
    blue.send("v", 0, f"s.{red.nick}.{game_type}")
    await blue.poll()
    red.send("v", 0, "a")
    uid = max((await red.poll()).sections)
    await blue.poll()
    moves = []
    for n in range(dots):
        player, row = (blue, "a") if n % 2 == 0 else (red, "p")
        moves.append((player, chr(ord("a") + n // 2) + row))
    await play(uid, *moves)
    assert await red.get(co="propose", idGracza=red.secret, table=str(uid), proposal="resign") == ""
    return uid


async def ratings(client: TestClient, *nicks: str) -> list[tuple[int, int, int, int]]:
    found = []
    for nick in nicks:
        profile = await client.app[STORE_KEY].accounts.profile(nick)
        assert profile is not None
        found.append((round(profile.rating.rating), profile.wins, profile.draws, profile.losses))
    return found


async def test_a_ranked_game_of_24_dots_changes_ratings_and_the_i_lines(client: TestClient) -> None:
    alice, bob = await pair(client, "Alice", "Bob")

    uid = await game_of(alice, bob, 24)
    lobby = await alice.poll()

    (alice_rating, *alice_results), (bob_rating, *bob_results) = await ratings(client, "Alice", "Bob")
    assert alice_rating > 1500 > bob_rating
    assert alice_results == [1, 0, 0] and bob_results == [0, 0, 1]
    assert f"iAlice..F.en.{alice_rating}.1.0.0." in lobby.lines(0, "i")
    assert f"iBob..F.en.{bob_rating}.0.0.1." in lobby.lines(0, "i")
    assert f"x{uid}.1.B+R.1" in lobby.lines(0, "x")  # blue on move after 24 dots; number 1
    record = read_record(await (await client.get("/sgf/1")).text())
    assert (record.black_name, record.white_name) == ("Alice", "Bob")
    assert (record.black_rating, record.white_rating) == ("1500", "1500")  # as they were before the game
    # issue 47: nobody saw a rating change at a game's end; now both players' table says it
    table = (await bob.poll()).lines(uid, "c")
    gained, lost = alice_rating - 1500, bob_rating - 1500
    change = f"Alice 1500 → {alice_rating} (+{gained}), Bob 1500 → {bob_rating} ({lost})"
    assert any(decode_server_text(line).endswith(f"..rated.Ratings: {change}.") for line in table), table


async def test_23_dots_guests_and_free_games_leave_ratings_alone(client: TestClient) -> None:
    alice, bob = await pair(client, "Alice", "Bob")
    await game_of(alice, bob, 23)
    await game_of(alice, bob, 30, "1616stanF0.0.0")
    guest, carol = await pair(client, "*Gus", "Carol")
    await game_of(carol, guest, 30)

    assert await ratings(client, "Alice", "Bob", "Carol") == [(1500, 0, 0, 0)] * 3
    listed = await (await client.get("/games", params={"nick": "Alice"})).json()
    assert [(g["number"], g["rated"]) for g in listed] == [(2, False), (1, False)]
    # issue 47: why, on the player page's list and at the table when the game ended
    assert [g.get("unrated") for g in listed] == [None, "short"]  # a free game needs no reason
    carols = await (await client.get("/games", params={"nick": "Carol"})).json()
    assert carols[0]["unrated"] == "account"
    await client.app[STORE_KEY].writer.flush()
    said = {uid: "/".join(table.chat.lines()) for uid, table in client.app[HUB_KEY].tables.items()}
    assert "..unratedShort.Not rated: fewer than 24 dots were placed." in said[1]
    assert "..unratedFree.Not rated: a free game." in said[2]
    assert "..unratedAccount.Not rated: both players need an account." in said[3]
    assert all(g["finished"].endswith("+00:00") for g in listed)
    guest_games = await (await client.get("/games", params={"nick": "*Gus"})).json()
    assert [(g["blue"], g["red"]) for g in guest_games] == [("Carol", "*Gus")]


async def test_a_downloaded_record_replays_to_the_same_result(client: TestClient, tmp_path) -> None:
    alice, bob = await pair(client, "*Ala", "*Bob")
    await game_of(alice, bob, 9, "1616stanr0.60.5")

    response = await client.get("/sgf/1")
    assert response.status == 200
    assert response.content_type == "application/x-go-sgf"
    assert response.headers["Content-Disposition"] == 'attachment; filename="kropki-1.sgf"'
    path = tmp_path / "game.sgf"
    path.write_text(await response.text())
    out = io.StringIO()

    assert replay_main([str(path)], out=out) == 0
    assert "B+R" in out.getvalue()  # red resigned
    record = read_record(path.read_text())
    assert len(record.moves) == 9 and record.main_time == "60" and record.moves[0].time_left is not None


async def test_bad_archive_requests_get_clear_answers(client: TestClient) -> None:
    missing = await client.get("/sgf/99")
    not_a_number = await client.get("/sgf/abc")
    bad_nick = await client.get("/games", params={"nick": "no/such nick!"})
    bad_limit = await client.get("/games", params={"nick": "Alice", "limit": "0"})
    nobody = await client.get("/games", params={"nick": "Nobody"})

    assert (missing.status, await missing.text()) == (404, "There is no game number 99.\n")
    assert not_a_number.status == 404
    assert bad_nick.status == 400 and "nick" in (await bad_nick.json())["error"]
    assert bad_limit.status == 400 and "limit" in (await bad_limit.json())["error"]
    assert (nobody.status, await nobody.json()) == (200, [])


async def test_a_team_game_is_unrated_and_listed_under_each_of_its_players(client: TestClient) -> None:
    alice, bob = await pair(client, "Alice", "*Bob")
    cid, dan = await pair(client, "*Cid", "*Dan")
    hub = client.app[HUB_KEY]
    ranked = parse_game_type("1616stanR0.0.0")
    uid = hub.set_up_table(ranked, "Alice", "*Bob", (0, 0, 0, 0), None, None, {}, more=["*Cid", "*Dan"])
    for player in (alice, bob, cid, dan):
        await player.poll()
    team_turns = [alice, bob, cid, dan]
    await play(
        uid, *((team_turns[n % 4], chr(ord("a") + n // 2) + ("a" if n % 2 == 0 else "p")) for n in range(26))
    )
    for player in (bob, dan):
        assert await player.get(co="propose", idGracza=player.secret, table=str(uid), proposal="resign") == ""
    await hub.persistence.flush()

    assert await ratings(client, "Alice") == [(1500, 0, 0, 0)]  # 26 dots of a ranked type: still unrated
    record = read_record(await (await client.get("/sgf/1")).text())
    assert (record.black_name, record.white_name, record.result) == ("Alice, *Cid", "*Bob, *Dan", "B+R")
    assert len(record.moves) == 26  # one move a node
    for nick in ("Alice", "*Bob", "*Cid", "*Dan"):
        listed = await (await client.get("/games.json", params={"nick": nick})).json()
        assert [(game["number"], game["blue"], game["red"], game["rated"]) for game in listed] == [
            (1, "Alice, *Cid", "*Bob, *Dan", False)
        ]
        assert listed[0]["players"] == ["Alice", "*Bob", "*Cid", "*Dan"]
        assert (await client.get(f"/player/{quote(nick)}.json")).status == 200
    assert (await (await client.get("/game/1.json")).json())["players"] == ["Alice", "*Bob", "*Cid", "*Dan"]
    assert await (await client.get("/games.json", params={"nick": "*Eve"})).json() == []


async def test_a_live_record_marks_its_bot_as_the_archived_one_does(client: TestClient) -> None:
    token = await new_bot(client, "Robo")
    feed = await open_feed(client, token)
    ala = Zagram(client, "ala123", "*Ala")
    assert await ala.login() == ""
    ala.send("v", 0, f"s.Robo.{FREE_GAME}")  # the inviter is blue
    await ala.poll()
    await feed.next("invitation")
    assert await act(client, token, "invitation/accept") == (200, {"ok": True})
    uid = (await feed.next("gameFull"))["table"]
    await ala.poll()
    ala.send("s", uid, "cc")
    await ala.poll()

    live = read_record(await (await client.get(f"/table/{uid}.sgf")).text())
    assert (live.black_name, live.white_name, live.comment) == ("*Ala", "Robo", "W is a bot: Robo")
    assert await ala.get(co="propose", idGracza=ala.secret, table=str(uid), proposal="resign") == ""
    number = (await feed.next("archived"))["number"]
    archived = read_record(await (await client.get(f"/sgf/{number}")).text())
    assert archived.comment == live.comment
    assert (await (await client.get(f"/game/{number}.json")).json())["bots"] == ["Robo"]
    assert [game.get("bots") for game in await (await client.get("/games.json")).json()] == [["Robo"]]


@pytest.mark.skipif(not POSTGRES, reason="PostgreSQL: set KROPKI_TEST_DB (scripts/with-postgres)")
async def test_a_live_record_is_503_while_the_database_cannot_be_read_and_200_once_it_is_back(
    aiohttp_client: AiohttpClient, settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Its bots are asked of the store at every request: with the database gone (PostgreSQL through a
    proxy the test cuts; SQLite's reads go on under its write lock, WAL) the answer is 503, never 500,
    with no traceback logged, and the record again once the database is back."""
    proxy = PostgresProxy(tmp_path / "pg", settings.db_url)
    await proxy.start()
    try:
        client = await served(aiohttp_client, dataclasses.replace(settings, db_url=proxy.url))
        token = await new_bot(client, "Robo")
        feed = await open_feed(client, token)
        ala = Zagram(client, "ala123", "*Ala")
        assert await ala.login() == ""
        ala.send("v", 0, f"s.Robo.{FREE_GAME}")
        await ala.poll()
        await feed.next("invitation")
        assert await act(client, token, "invitation/accept") == (200, {"ok": True})
        uid = (await feed.next("gameFull"))["table"]
        await proxy.break_storage()
        gone = await client.get(f"/table/{uid}.sgf")
        assert (gone.status, await gone.text()) == (503, "The database cannot be reached now: try again.\n")
        assert not [record for record in caplog.records if record.exc_info]
        await proxy.mend()
        back = await client.get(f"/table/{uid}.sgf")
        assert back.status == 200 and read_record(await back.text()).comment == "W is a bot: Robo"
        await client.close()
    finally:
        await proxy.close()


@pytest.mark.skipif(not POSTGRES, reason="PostgreSQL: set KROPKI_TEST_DB (scripts/with-postgres)")
async def test_the_archive_is_503_while_the_database_cannot_be_read_and_answers_once_it_is_back(
    aiohttp_client: AiohttpClient, settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every page that reads the archive (a record, the list, a game's replay and its page) answers 503
    while the database cannot be reached, never 500 and with no traceback logged, and as usual once it
    is back. Before, each answered 500 (found in a fresh-clone run: a pooled connection that the
    breaker had ended, read right after storage was mended)."""
    proxy = PostgresProxy(tmp_path / "pg", settings.db_url)
    await proxy.start()
    pages = ("/sgf/1", "/sgf/1.sgf", "/games.json", "/game/1.json", "/game/1")
    try:
        client = await served(aiohttp_client, dataclasses.replace(settings, db_url=proxy.url))
        assert (await client.get("/games.json")).status == 200  # a connection in the pool
        await proxy.break_storage()
        for page in pages:
            gone = await client.get(page, headers={"Accept": "text/html"})
            assert (page, gone.status) == (page, 503)
            assert await gone.text() == "The database cannot be reached now: try again.\n"
        assert not [record for record in caplog.records if record.exc_info]
        await proxy.mend()
        answers = [(await client.get(page, headers={"Accept": "text/html"})).status for page in pages]
        assert answers == [404, 404, 200, 404, 404]  # no game 1 yet; the list, empty
        await client.close()
    finally:
        await proxy.close()


async def test_a_team_games_bots_are_marked_live_and_archived(client: TestClient) -> None:
    """Team one is Alice and the bot Droid, team two the bot Robo and *Dan (sides 1, 3 and 2, 4)."""
    alice, dan = await pair(client, "Alice", "*Dan")
    robo, droid = await new_bot(client, "Robo"), await new_bot(client, "Droid")
    feeds = [await open_feed(client, token) for token in (robo, droid)]
    hub = client.app[HUB_KEY]
    free = parse_game_type("1616stanF0.0.0")
    uid = hub.set_up_table(free, "Alice", "Robo", (0, 0, 0, 0), None, None, {}, more=["Droid", "*Dan"])
    for feed in feeds:
        await feed.next("gameFull", table=uid)
    for player in (alice, dan):
        await player.poll()
    await play(uid, (alice, "aa"))
    assert await act(client, robo, f"game/{uid}/move/0/15") == (200, {"ok": True})
    assert await act(client, droid, f"game/{uid}/move/1/0") == (200, {"ok": True})
    await play(uid, (dan, "bp"))

    live = read_record(await (await client.get(f"/table/{uid}.sgf")).text())
    assert (live.black_name, live.white_name) == ("Alice, Droid", "Robo, *Dan")
    assert live.comment == "W is a bot: Robo\nB is a bot: Droid"
    assert await act(client, robo, f"game/{uid}/resign") == (200, {"ok": True})
    assert await dan.get(co="propose", idGracza=dan.secret, table=str(uid), proposal="resign") == ""
    await hub.persistence.flush()

    archived = read_record(await (await client.get("/sgf/1")).text())
    assert (archived.result, archived.comment) == ("B+R", live.comment)
    game = await (await client.get("/game/1.json")).json()
    assert (game["players"], game["bots"]) == (["Alice", "Robo", "Droid", "*Dan"], ["Robo", "Droid"])
