"""When a game is rated (docs/ratings.md), end to end on the real app: the dots that count towards the
24 (STOP's yes, starting crosses and handicap dots no), agreed results, a deleted account's games, and
the registrations an address may make (the limit between one player and many accounts)."""

from __future__ import annotations

import dataclasses

from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.app import STORE_KEY
from server.config import Settings
from server.engine.rating import INITIAL, rate_game, shown
from server.hub.absences import AWAY_AFTER, CLAIM_AFTER
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from server.hub.saved import SWEEP_EVERY
from server.protocol.codec import decode_server_text
from server.store.store import Store
from server.web.auth import REGISTRATIONS_A_DAY
from server.web.common import HUB_KEY
from tests.conftest import served
from tests.store.test_accounts import registered_id
from tests.web.test_archive import pair, ratings
from tests.web.test_auth import Clock, auth, auth_from, proxied_client
from tests.web.test_bots import act, new_bot, open_feed
from tests.web.test_stream import chat_texts
from tests.web.zagram import Zagram

CROSSES = "1616s0.4.a.R.n...."  # 16x16 ranked, four crosses (8 dots of each colour), the inviter blue
HANDICAP = "1616s0.H5.a.R.n...."  # five blue handicap dots, red first
NO_TERRITORY = "1616n0.4.a.R.n...."  # noT4: STOP places the opponent's dots round one's own


async def played(client: TestClient, blue: Zagram, red: Zagram, game_type: str, dots: int) -> int:
    """A game blue invites red to and red accepts, with `dots` dots placed (`placed`)."""
    blue.send("v", 0, f"s.{red.nick}.{game_type}")
    await blue.poll()
    red.send("v", 0, "a")
    uid = max((await red.poll()).sections)
    await blue.poll()
    await placed(client, uid, blue, red, dots)
    return uid


async def placed(client: TestClient, uid: int, blue: Zagram, red: Zagram, dots: int) -> None:
    """`dots` dots by whoever is on move, blue's along the top edge and red's along the bottom one:
    nothing enclosed, nothing near the starting dots."""
    game = client.app[HUB_KEY].tables[uid].room.game
    columns = {1: 0, 2: 0}
    for _ in range(dots):
        colour = game.to_move
        player, row = (blue, "a") if colour == 1 else (red, "p")
        player.send("s", uid, chr(ord("a") + columns[colour]) + row)
        columns[colour] += 1
        await player.poll()
    assert game.dots_placed() == dots


async def resigned(client: TestClient, player: Zagram, uid: int) -> str:
    """The player resigns; the table's rating line once the game is archived."""
    assert await player.get(co="propose", idGracza=player.secret, table=str(uid), proposal="resign") == ""
    await client.app[STORE_KEY].writer.flush()
    return said(client, uid)[-1]


async def agreed(client: TestClient, uid: int, proposer: Zagram, accepter: Zagram, proposal: str) -> None:
    """`proposal` made and accepted (`ok1` + it), and the game's archive written."""
    proposer.send("u", uid, proposal)
    await proposer.poll()
    accepter.send("u", uid, f"ok1{proposal}")
    await accepter.poll()
    await client.app[STORE_KEY].writer.flush()


def said(client: TestClient, uid: int) -> list[str]:
    """The table's server lines about ratings, as their code and text."""
    lines = [decode_server_text(line) for line in client.app[HUB_KEY].tables[uid].chat.lines()]
    return [line.split(".", 2)[2] for line in lines if "..rated." in line or "..unrated" in line]


async def test_starting_crosses_and_handicap_dots_do_not_count_towards_the_24(client: TestClient) -> None:
    alice, bob = await pair(client, "Alice", "Bob")
    crosses = await played(client, alice, bob, CROSSES, 23)  # 31 dots on the board
    assert await resigned(client, bob, crosses) == "unratedShort.Not rated: fewer than 24 dots were placed."
    carol, dan = await pair(client, "Carol", "Dan")  # two games a player: 20 requests a second each
    handicap = await played(client, carol, dan, HANDICAP, 23)  # 28 dots on the board
    assert await resigned(client, dan, handicap) == "unratedShort.Not rated: fewer than 24 dots were placed."
    assert await ratings(client, "Alice", "Bob", "Carol", "Dan") == [(1500, 0, 0, 0)] * 4

    crosses = await played(client, alice, bob, CROSSES, 24)
    assert (await resigned(client, bob, crosses)).startswith("rated.Ratings: Alice 1500 → ")
    assert [wins for _, wins, _, _ in await ratings(client, "Alice", "Bob")] == [1, 0]


async def test_dots_placed_by_stop_count_towards_the_24(client: TestClient) -> None:
    alice, bob = await pair(client, "Alice", "Bob")
    uid = await played(client, alice, bob, NO_TERRITORY, 20)
    game = client.app[HUB_KEY].tables[uid].room.game
    assert game.to_move == 1
    assert await alice.get(co="stopMove", idGracza=alice.secret, stol=str(uid)) == ""
    assert game.dots_placed() >= 24, "STOP put Bob's dots round Alice's ungrounded crosses"
    assert await bob.get(co="stopMove", idGracza=bob.secret, stol=str(uid)) == ""  # the game ends
    await client.app[STORE_KEY].writer.flush()

    assert game.result is not None and game.result.reason == "score"
    assert said(client, uid)[-1].startswith("rated.Ratings: ")
    listed = await (await client.get("/games", params={"nick": "Alice"})).json()
    assert listed[0]["rated"] is True


async def test_an_agreed_draw_is_rated_half_a_point_each_and_an_agreed_drop_is_not(
    client: TestClient,
) -> None:
    alice, bob = await pair(client, "Alice", "Bob")
    winner = await played(client, alice, bob, CROSSES, 24)
    await resigned(client, bob, winner)  # Alice 1662, Bob 1338: a draw between them moves both
    drawn = await played(client, alice, bob, CROSSES, 24)
    await agreed(client, drawn, alice, bob, "draw")

    alice_won, bob_lost = rate_game(INITIAL, INITIAL, 1.0)
    alice_drew, bob_drew = rate_game(alice_won, bob_lost, 0.5)
    assert await ratings(client, "Alice", "Bob") == [(shown(alice_drew), 1, 1, 0), (shown(bob_drew), 0, 1, 1)]
    assert shown(alice_drew) < shown(alice_won) and shown(bob_drew) > shown(bob_lost)
    assert said(client, drawn)[-1].startswith(
        f"rated.Ratings: Alice {shown(alice_won)} → {shown(alice_drew)}"
    )

    carol, dan = await pair(client, "Carol", "Dan")
    dropped = await played(client, carol, dan, CROSSES, 24)
    await agreed(client, dropped, carol, dan, "drop")
    assert said(client, dropped)[-1] == "unratedCancelled.Not rated: the game was cancelled."
    assert await ratings(client, "Carol", "Dan") == [(1500, 0, 0, 0)] * 2


async def test_a_deleted_accounts_rated_games_leave_the_opponents_rating_and_history(
    client: TestClient,
) -> None:
    alice, bob = await pair(client, "Alice", "Bob")
    uid = await played(client, alice, bob, CROSSES, 24)
    await resigned(client, bob, uid)
    assert client.app[HUB_KEY].logout(bob.secret)  # an account is deleted once its player has left
    await client.app[STORE_KEY].writer.flush()
    (alice_before, *_), _ = await ratings(client, "Alice", "Bob")

    assert await client.app[STORE_KEY].accounts.delete("Bob") == 1
    assert await ratings(client, "Alice") == [(alice_before, 1, 0, 0)]
    page = await (await client.get("/player/Alice.json")).json()
    assert [point["game"] for point in page["ratings"]] == [1]
    listed = await (await client.get("/games", params={"nick": "Alice"})).json()
    assert (listed[0]["red"], listed[0]["rated"]) == ("deleted2", True)  # Bob was account 2
    assert await (await client.get("/games", params={"nick": "Bob"})).json() == []


async def test_an_address_registers_ten_accounts_an_hour(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """docs/operations.md: one player's many accounts are bounded by the registrations of an address."""
    client = await proxied_client(aiohttp_client, dataclasses.replace(settings, unlimited=()), Clock())
    answers = [
        await auth_from(
            client,
            "10.7.0.1",
            co="rejestruj",
            opisGracza=f"Farm{n}",
            idGracza=registered_id(f"Farm{n}", "pw"),
        )
        for n in range(11)
    ]
    assert answers == ["ok.zarejestrowalem."] * 10 + ["nieOk.tooManyRegistrations"]
    assert await client.app[STORE_KEY].accounts.profile("Farm10") is None


async def test_a_ranked_tournament_game_is_rated_as_any(client: TestClient) -> None:
    alice, bob = await pair(client, "Alice", "Bob")
    key = await client.app[STORE_KEY].tournaments.add_key("cup-bot", "Autumn Cup", False)
    set_up = {"co": "setUpTable", "key": key, "gameType": "1616s0..s.R.n....", "pl1": "Alice", "pl2": "Bob"}
    answer = await (await client.get("/a.kropki", params=set_up | {"tourn": "Autumn Cup"})).text()
    uid = int(answer[3:])
    for player in (alice, bob):
        await player.poll()
    await placed(client, uid, alice, bob, 24)
    loser = alice if client.app[HUB_KEY].tables[uid].room.red == "Alice" else bob

    assert (await resigned(client, loser, uid)).startswith("rated.Ratings: ")
    listed = await (await client.get("/games", params={"nick": "Alice"})).json()
    assert (listed[0]["tournament"], listed[0]["rated"]) == ("Autumn Cup", True)


async def test_two_bots_play_rated_games(client: TestClient) -> None:
    """docs/bots.md: two bots may always play rated games against each other (a bot and a person only
    with --bots-rated, tests/web/test_bots.py)."""
    tokens = {nick: await new_bot(client, nick) for nick in ("Robo", "Mech")}
    feeds = {nick: await open_feed(client, token) for nick, token in tokens.items()}
    assert await act(client, tokens["Robo"], "invite/Mech", gameType="1616s0..a.R.n....") == (
        200,
        {"ok": True},
    )
    await feeds["Mech"].next("invitation")
    assert await act(client, tokens["Mech"], "invitation/accept") == (200, {"ok": True})
    uid = (await feeds["Robo"].next("gameFull"))["table"]
    for n in range(24):  # Robo (blue, the inviter) along the top edge, Mech along the bottom one
        nick, y = ("Robo", 0) if n % 2 == 0 else ("Mech", 15)
        assert await act(client, tokens[nick], f"game/{uid}/move/{n // 2}/{y}") == (200, {"ok": True})
    assert await act(client, tokens["Mech"], f"game/{uid}/resign") == (200, {"ok": True})
    await feeds["Robo"].next("archived")

    robo, mech = rate_game(INITIAL, INITIAL, 1.0)
    assert await ratings(client, "Robo", "Mech") == [(shown(robo), 1, 0, 0), (shown(mech), 0, 0, 1)]


async def test_a_win_claimed_against_a_player_who_left_is_rated_as_a_resignation(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """docs/ratings.md, "A player who left": the claim is `B+R`, rated under the usual rules."""
    timers = ManualTimers()
    hub = Hub(timers=timers)
    client = await served(aiohttp_client, settings, hub)
    alice, bob = await pair(client, "Alice", "Bob")
    uid = await played(client, alice, bob, CROSSES, 24)
    waited = 0.0
    while waited <= AWAY_AFTER + CLAIM_AFTER:  # Bob polls no more; Alice does, and the sweep runs
        timers.advance(SWEEP_EVERY)
        waited += SWEEP_EVERY
        await alice.poll()
        hub.sweep()
    alice.send("u", uid, "claim")
    await alice.poll()
    await client.app[STORE_KEY].writer.flush()

    assert str(hub.tables[uid].room.game.result) == "B+R"
    assert said(client, uid)[-1].startswith("rated.Ratings: Alice 1500 → ")
    assert [wins for _, wins, _, _ in await ratings(client, "Alice", "Bob")] == [1, 0]


async def test_a_game_whose_end_was_stored_without_its_rating_is_rated_once_after_a_restart(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """The writer may commit a game's last journal entry in one batch and its archive (with the rating
    change) in the next: a crash between them leaves the end stored and the rating not. The restart
    archives and rates it, once (server/hub/restore.py)."""
    client = await served(aiohttp_client, settings)
    alice, bob = await pair(client, "Alice", "Bob")
    uid = await played(client, alice, bob, CROSSES, 24)
    await client.close()
    # what a crash just after Bob's resignation leaves
    store = await Store.open(settings.db_url, id_hash_cost=settings.id_hash_cost)
    journals, _ = await store.writer.load_journal()
    store.writer.journal(uid, journals[uid][-1][0] + 1, "propose", {"p": 2, "text": "resign"})
    await store.writer.flush()
    await store.close()

    for _ in range(2):  # restarted, and restarted again: rated once
        client = await served(aiohttp_client, settings)
        await client.app[STORE_KEY].writer.flush()
        alice_won, bob_lost = rate_game(INITIAL, INITIAL, 1.0)
        assert await ratings(client, "Alice", "Bob") == [
            (shown(alice_won), 1, 0, 0),
            (shown(bob_lost), 0, 0, 1),
        ]
        listed = await (await client.get("/games", params={"nick": "Alice"})).json()
        assert [(game["number"], game["result"], game["rated"]) for game in listed] == [(1, "B+R", True)]
        await client.close()


async def test_a_renamed_player_online_logs_in_again_and_plays_on(client: TestClient) -> None:
    """A login again with the session's id goes on with the session (docs/protocol.md). After an admin's
    rename it was refused `nieOk.idInUse` ("logged in with another nick", the nick the player typed):
    a reloaded built-in client logged the player out, leaving their game, and MultiPoints started again
    exited (found by a helper's audit). Another account's login with the same id is still refused."""
    alice, bob = await pair(client, "Alice", "Bob")
    uid = await played(client, alice, bob, CROSSES, 24)
    await client.app[STORE_KEY].accounts.rename("Bob", "Robert")

    assert await auth(client, co="loguj", opisGracza="Bob", idGracza=bob.secret) == "ok.zalogowanyNaSerwer."
    bob.commands, bob.acknowledged = [], 0  # a client logged in again numbers its commands from 1
    assert [player.nick for player in client.app[HUB_KEY].players.values()] == ["Alice", "Bob"]
    # an account registered with the id of Bob's session: not his, so not his session
    assert await auth(client, co="rejestruj", opisGracza="Eve", idGracza=bob.secret) == "nieOk.idInUse"
    bob.say(uid, "still here")
    assert ("Bob", "W3", "still here") in chat_texts((await bob.poll()).lines(uid))
    assert (await resigned(client, bob, uid)).startswith("rated.")


async def test_a_game_ending_after_its_players_account_was_renamed_is_rated(client: TestClient) -> None:
    """docs/operations.md: a renamed player online keeps the old nick until the next login. Their game
    was archived as a guest's (unrated, "both players need an account") before."""
    alice, bob = await pair(client, "Alice", "Bob")
    uid = await played(client, alice, bob, CROSSES, 24)
    await client.app[STORE_KEY].accounts.rename("Bob", "Robert")
    line = await resigned(client, bob, uid)

    alice_won, bob_lost = rate_game(INITIAL, INITIAL, 1.0)
    assert await ratings(client, "Alice", "Robert") == [
        (shown(alice_won), 1, 0, 0),
        (shown(bob_lost), 0, 0, 1),
    ]
    gain, loss = shown(alice_won) - 1500, shown(bob_lost) - 1500
    change = f"Alice 1500 → {shown(alice_won)} ({gain:+d}), Bob 1500 → {shown(bob_lost)} ({loss:+d})"
    assert line == f"rated.Ratings: {change}."  # the nicks the game was played under
    (game,) = await (await client.get("/games", params={"nick": "Robert"})).json()
    assert (game["red"], game["rated"]) == ("Bob", True)


async def test_a_network_registers_a_bounded_number_of_accounts_a_day(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """An account is kept for good, with up to 100 players it ignores: 12.7 KB on SQLite (benchmarks/abuse.py
    --only rows). The hour's bound alone let a network register 960 a day (12 MB); a day has its own."""
    clock = Clock()
    client = await proxied_client(aiohttp_client, dataclasses.replace(settings, unlimited=()), clock)
    answers = []
    for hour in range(4):
        for n in range(40):  # the hour's bound: 10 an address, 40 a network
            nick = f"Farm{hour}x{n}"
            address = f"10.7.0.{hour * 4 + n // 10 + 1}"  # ever new addresses of one network
            answers.append(
                await auth_from(
                    client, address, co="rejestruj", opisGracza=nick, idGracza=registered_id(nick, "pw")
                )
            )
        clock.now += 3600
    refused = "nieOk.tooManyRegistrations"  # the others: registered (logged in, or refused for the 40 online)
    made = REGISTRATIONS_A_DAY[0] * settings.network_factor
    assert [answer == refused for answer in answers] == [False] * made + [True] * (160 - made)
    assert await client.app[STORE_KEY].accounts.profile("Farm3x39") is None
    clock.now += 24 * 3600
    nick = "Farm4x0"
    answer = await auth_from(
        client, "10.7.0.99", co="rejestruj", opisGracza=nick, idGracza=registered_id(nick, "pw")
    )
    assert answer != refused  # a day on (its network's 40 players online keep it from logging in)
    assert await client.app[STORE_KEY].accounts.profile(nick) is not None
