"""Abuse limits: each answered with a short, clear reply, and nothing else changes."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.app import create_app
from server.config import Settings
from server.hub.hub import Hub
from server.hub.limits import CHAT_LINES_PER_MINUTE, INVITATIONS_PER_MINUTE, SAME_LINE_PER_MINUTE, Caps
from server.hub.model import Origin
from server.web import auth, clients, common, limits
from server.web.archive import GAMES_KEY
from server.web.common import DIRECTOR_KEY, HUB_KEY, STORE_KEY
from server.web.limits import LoginGuard, NetworkBuckets, TokenBuckets
from server.web.tournament import COLD_READS
from tests.web.test_hosted import create
from tests.web.test_stream import chat_texts
from tests.web.zagram import Zagram, parse_reply


async def limited_client(
    aiohttp_client: AiohttpClient,
    settings: Settings,
    *,
    per_id: int = 1000,
    per_address: int = 1000,
    whole_states_per_id: int = 1000,
    whole_states_per_address: int = 1000,
    store_reads_per_address: int = 1000,
    store_reads: int = 1000,
    **changes,
) -> TestClient:
    """The real app with the loopback address not exempt, and small buckets (no refill) to reach."""
    fields = {**settings.__dict__, "unlimited": (), **changes}
    app = create_app(Settings(**fields))
    factor = fields["network_factor"]
    app[clients.LIMITS_KEY] = clients.RequestLimits(
        TokenBuckets(1e-9, per_id),
        NetworkBuckets(1e-9, per_address, factor),
        NetworkBuckets(1e-9, 3, factor),
        TokenBuckets(1e-9, whole_states_per_id),
        NetworkBuckets(1e-9, whole_states_per_address, factor),
        NetworkBuckets(1e-9, store_reads_per_address, factor),
        TokenBuckets(1e-9, store_reads),
    )
    return await aiohttp_client(app)


def calls_of(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[tuple[object, ...]]:
    """Each call of the coroutine method `owner.name` from now on, by its arguments: the looks in the
    store a test's requests made."""
    calls = []
    method = getattr(owner, name)

    async def counted(*args: object) -> object:
        calls.append(args)
        return await method(*args)

    monkeypatch.setattr(owner, name, counted)
    return calls


def at(address: str) -> Origin:
    """A client at `address`, its own host and network."""
    return Origin(address, False, address)


async def test_a_player_who_asks_too_fast_is_told_so_and_the_refused_poll_does_nothing(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await limited_client(aiohttp_client, settings, per_id=3)
    ala = Zagram(client, "ala123", "*Ala")
    assert await ala.login() == ""  # 1
    await ala.poll()  # 2
    await ala.poll()  # 3

    ala.say(0, "hello")
    refused = await ala.get(playerId=ala.secret, co="getMsg", msgNo="0", msgFromClient="c1.0.hello")
    other = Zagram(client, "bob456", "*Bob")

    assert refused == "err.tooFast"
    assert client.app[HUB_KEY].lobby.chat.lines() == []
    assert await other.login() == ""  # another player is not slowed down by it


async def test_an_address_is_limited_and_only_trusted_proxies_name_the_client(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    direct = await limited_client(aiohttp_client, settings, per_address=2)
    assert [(await direct.get("/healthz")).status for _ in range(2)] == [200, 200]
    spoofed = await direct.get("/healthz", headers={"X-Forwarded-For": "198.51.100.9"})
    json_refusal = await direct.get("/games?nick=Alice")
    protocol = await direct.get("/a.kropki?co=getMsg&msgNo=0")
    accounts = await direct.get("/auth.py?co=dajPref&opisGracza=Alice")
    assert spoofed.status == 429  # an untrusted peer's X-Forwarded-For counts for nothing
    assert (json_refusal.status, json_refusal.headers["Retry-After"]) == (429, "1")
    assert (protocol.status, await protocol.text()) == (200, "err.tooFast")
    assert await accounts.text() == "nieOk.tooFast"
    await direct.close()  # one server per database

    proxied = await limited_client(aiohttp_client, settings, per_address=2, trusted_proxies=("127.0.0.1",))
    first = [
        (await proxied.get("/healthz", headers={"X-Forwarded-For": "203.0.113.7"})).status for _ in range(3)
    ]
    second = await proxied.get("/healthz", headers={"X-Forwarded-For": "203.0.113.7, 198.51.100.9"})
    assert first == [200, 200, 429]
    assert second.status == 200  # the nearest untrusted address is another client


async def test_guest_logins_per_address(aiohttp_client: AiohttpClient, settings: Settings) -> None:
    client = await limited_client(aiohttp_client, settings)
    answers = [await Zagram(client, f"id{n}", f"*Guest{n}").login() for n in range(4)]

    assert answers == ["", "", "", "err.tooManyLogins"]
    assert "*Guest3" not in {player.nick for player in client.app[HUB_KEY].players.values()}


async def test_chat_flood_and_repeated_lines(client: TestClient) -> None:
    ala = Zagram(client, "ala123", "*Ala")
    await ala.login()
    for _ in range(SAME_LINE_PER_MINUTE + 1):
        ala.say(0, "buy gold")
    repeated = await ala.poll()
    for n in range(CHAT_LINES_PER_MINUTE):
        ala.say(0, f"line {n}")
    flooded = await ala.poll()

    said = [text for nick, _, text in chat_texts(repeated.lines(0) + flooded.lines(0)) if nick == "*Ala"]
    errors = [text for nick, kind, text in chat_texts(repeated.lines(0) + flooded.lines(0)) if kind == "e"]
    assert said.count("buy gold") == SAME_LINE_PER_MINUTE
    assert len(said) == CHAT_LINES_PER_MINUTE  # 3 + 17 lines in the minute, the rest refused
    assert errors[0] == "The same line again: it was not sent."
    assert errors[-1] == f"At most {CHAT_LINES_PER_MINUTE} chat lines a minute; please wait a little."


async def test_invitations_per_minute(client: TestClient) -> None:
    ala, bob = Zagram(client, "ala123", "*Ala"), Zagram(client, "bob456", "*Bob")
    for guest in (ala, bob):
        await guest.login()
    for _ in range(INVITATIONS_PER_MINUTE + 1):
        ala.send("v", 0, "s.*Bob.0808stanF0.0.0")
    reply = await ala.poll()

    errors = [text for _, kind, text in chat_texts(reply.lines(0)) if kind == "e"]
    assert errors == [f"At most {INVITATIONS_PER_MINUTE} invitations a minute; please wait a little."]


async def test_the_server_says_no_before_it_is_too_full(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await aiohttp_client(
        create_app(settings, Hub(caps=Caps(players=3, tables=1, registered_share=0)))
    )
    ala, bob, cid = (Zagram(client, f"{n}123", f"*{n}") for n in ("Ala", "Bob", "Cid"))
    for guest in (ala, bob, cid):
        assert await guest.login() == ""
    assert await Zagram(client, "dan123", "*Dan").login() == "err.serverFull"
    for inviter, invitee in ((ala, bob), (cid, bob)):
        inviter.send("v", 0, f"s.{invitee.nick}.0808stanF0.0.0")
        await inviter.poll()
        invitee.send("v", 0, "a")
        reply = await invitee.poll()

    hub = client.app[HUB_KEY]
    assert len(hub.tables) == 2  # the lobby and one game table
    assert any("No more game tables" in text for _, _, text in chat_texts(reply.lines(0)))
    assert hub.incoming[hub.by_nick["*bob"]].inviter.nick == "*Cid"  # still there to accept later


async def test_an_unlimited_address_still_limits_each_player(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await limited_client(aiohttp_client, settings, per_id=2, per_address=1, unlimited=("127.0.0.1",))
    ala = Zagram(client, "ala123", "*Ala")

    answers = [await ala.login(), await ala.login(), await ala.login()]
    others = [await Zagram(client, f"id{n}", f"*Guest{n}").login() for n in range(5)]

    assert answers == ["", "", "err.tooFast"]
    assert others == [""] * 5  # neither the address limit nor the guest-login limit applies to it


def test_buckets_over_the_size_limit_are_swept_once_per_refill_time(monkeypatch) -> None:
    monkeypatch.setattr(limits, "MAX_ADDRESSES", 10)
    now = [0.0]
    buckets = TokenBuckets(20, 40, clock=lambda: now[0])  # refilled after 2 s
    sweeps = []
    sweep = buckets._forget_full
    monkeypatch.setattr(buckets, "_forget_full", lambda when: (sweeps.append(when), sweep(when)))
    now[0] = 2.0
    for key in range(100):  # 100 keys in the same second: all busy, more than the limit
        assert buckets.take(f"id{key}")
    assert sweeps == [2.0]  # once, not once per request
    now[0] = 3.5
    assert buckets.take("late")
    assert sweeps == [2.0]
    now[0] = 4.0
    assert buckets.take("later")
    assert sweeps == [2.0, 4.0]
    assert len(buckets._buckets) == 2  # the 100 had refilled and were forgotten


def test_an_accounts_waits_double_up_to_the_longest_and_are_forgotten_after_a_quiet_day() -> None:
    now = [0.0]
    guard = LoginGuard(
        per_address=1000, window=900, per_account=5, longest_wait=900, factor=1, clock=lambda: now[0]
    )
    waits = []
    for n in range(20):
        now[0] += guard.wait("alice", at(f"192.0.2.{n}"))
        assert guard.admit("alice", at(f"192.0.2.{n}"))  # a wrong id each time: never given back
        waits.append(guard.wait("alice", at("192.0.2.200")))

    assert waits == [0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512] + [900] * 6
    now[0] += limits.FORGET_FAILURES - 1
    assert guard.wait("alice", at("192.0.2.200")) == 0  # the wait is over, but the count is kept...
    assert guard.admit("alice", at("192.0.2.200"))
    assert guard.wait("alice", at("192.0.2.200")) == 900
    now[0] += limits.FORGET_FAILURES
    assert guard.admit("bob", at("192.0.2.1"))  # ...until a whole day passes without a failure
    assert guard.wait("alice", at("192.0.2.200")) == 0
    assert guard.admit("alice", at("192.0.2.200"))
    assert guard.wait("alice", at("192.0.2.200")) == 0  # one failure: five free again


def test_the_login_guards_tables_are_bounded(monkeypatch) -> None:
    monkeypatch.setattr(limits, "MAX_ACCOUNTS", 100)
    monkeypatch.setattr(limits, "MAX_KNOWN", 50)
    now = [0.0]
    guard = LoginGuard(
        per_address=10**9, window=900, per_account=5, longest_wait=900, factor=1, clock=lambda: now[0]
    )
    guard.remember("alice", at("198.51.100.7"))
    for _ in range(5):
        guard.admit("alice", at("203.0.113.1"))

    for n in range(10_000):  # made-up nicks, and logins to many accounts
        now[0] += 0.001
        guard.admit(f"nick{n}", at("203.0.113.2"))
        guard.remember(f"nick{n}", at("203.0.113.2"))

    assert len(guard._failures) == 100 and len(guard._known) == 50
    assert guard.wait("alice", at("203.0.113.1")) == 0  # the oldest went first


def test_an_address_known_to_an_account_is_forgotten_thirty_days_after_its_last_login() -> None:
    now = [0.0]
    guard = LoginGuard(
        per_address=10, window=900, per_account=5, longest_wait=900, factor=1, clock=lambda: now[0]
    )
    guard.remember("alice", at("198.51.100.7"))

    now[0] = limits.REMEMBER_ADDRESS - 0.25
    for n in range(5):
        assert guard.admit("alice", at(f"203.0.113.{n}"))  # the account waits a second from now
    assert not guard.admit("alice", at("203.0.113.9"))
    assert guard.admit("alice", at("198.51.100.7"))  # known: the strangers' failures do not hold it
    guard.give_back("alice", at("198.51.100.7"))  # a server error: neither a failure nor a login
    now[0] = limits.REMEMBER_ADDRESS + 0.5
    assert not guard.admit("alice", at("198.51.100.7"))  # a stranger now: it waits like the others


async def test_one_address_fills_only_its_share_of_player_slots(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await limited_client(
        aiohttp_client,
        settings,
        trusted_proxies=("127.0.0.1",),
        players_per_address=3,
        unlimited=("192.0.2.50",),
    )
    client.app[clients.LIMITS_KEY].guest_logins = NetworkBuckets(1e-9, 1000, 4)

    async def login(n: int, address: str) -> str:
        query = f"/a.kropki?co=guestLogin&idGracza=id{n}x{n}&opis=*P{n}&lang=en"
        return await (await client.get(query, headers={"X-Forwarded-For": address})).text()

    answers = [await login(n, "203.0.113.7") for n in range(5)]
    assert answers == ["", "", "", "err.tooManyPlayers", "err.tooManyPlayers"]
    assert await login(10, "198.51.100.9") == ""  # another address is not held up
    assert [await login(20 + n, "192.0.2.50") for n in range(5)] == [""] * 5  # an unlimited address
    hub = client.app[HUB_KEY]
    assert hub.logout("id0x0")
    assert await login(30, "203.0.113.7") == ""  # a slot freed by a logout is free again
    assert hub.players["id30x30"].unlimited is False


async def test_guests_leave_a_share_of_slots_to_registered_players(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    hub = Hub(caps=Caps(players=10, tables=5, registered_share=20))
    client = await aiohttp_client(create_app(settings, hub))
    guests = [Zagram(client, f"guest{n}x", f"*G{n}") for n in range(9)]
    answers = [await guest.login() for guest in guests]
    assert answers == [""] * 8 + ["err.serverFull"]  # 8 of 10 slots for guests

    body = await (
        await client.get("/auth.py?co=rejestruj&opisGracza=Ala&idGracza=secret12345&lang=en")
    ).text()
    assert body.startswith("ok"), body  # a registered player still gets in
    assert "Ala" in [player.nick for player in hub.players.values()]


async def test_one_player_holds_a_bounded_number_of_games_and_analysis_tables(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    hub = Hub(caps=Caps(games_per_player=2, analysis_per_player=1))
    client = await aiohttp_client(create_app(Settings(**{**settings.__dict__, "unlimited": ()}), hub))
    ala = Zagram(client, "ala123", "*Ala")
    others = [Zagram(client, f"opp{n}xx", f"*O{n}") for n in range(3)]
    for player in (ala, *others):
        assert await player.login() == ""
    refusals = []
    for other in others:
        ala.send("v", 0, f"s.{other.nick}.0808stanF0.0.0")
        refusals += [text for _, kind, text in chat_texts((await ala.poll()).lines(0)) if kind == "e"]
        other.send("v", 0, "a")
        await other.poll()
    for _ in range(2):
        ala.send("v", 0, "s.*Ala.1010s0..a.a.n...c___SUsuen*Ala.")
        refusals += [text for _, kind, text in chat_texts((await ala.poll()).lines(0)) if kind == "e"]

    kinds = [table.room.game_type.kind.name for table in hub.tables.values() if table.room is not None]
    assert sorted(kinds) == ["ANALYSIS", "FREE", "FREE"]
    assert refusals == [
        "*Ala has 2 unfinished games already (at most 2).",
        "*Ala has 1 analysis tables open already (at most 1).",
    ]


async def test_whole_states_are_limited_per_id_and_per_address_and_news_is_not(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    client = await limited_client(aiohttp_client, settings, whole_states_per_id=3, whole_states_per_address=6)
    ala = Zagram(client, "ala123", "*Ala")
    assert await ala.login() == ""

    answers = [await ala.get(co="getMsg", playerId=ala.secret, msgNo="0") for _ in range(3)]
    # the fourth carries a chat line: refused, it changes nothing (no line, k stays)
    answers.append(await ala.get(co="getMsg", playerId=ala.secret, msgNo="0", msgFromClient="c1.0.refused"))
    assert [answer.split("/")[0] for answer in answers] == ["ok", "ok", "ok", "err.tooFast"]
    ala.seen = parse_reply(answers[0]).last
    news = await ala.get(co="getMsg", playerId=ala.secret, msgNo=str(ala.seen))
    assert parse_reply(news).processed == 0 and "refused" not in news
    for _ in range(5):
        assert (await ala.poll()).status == "ok"  # news since a covered msgNo: never limited
    anonymous = [await ala.get(co="getBMsg", msgNo="0") for _ in range(4)]
    # the address's 6: Ala's four asks (the refused one too), then two anonymous readers'
    assert [answer.split("/")[0] for answer in anonymous] == ["sd", "sd", "err.tooFast", "err.tooFast"]
    assert client.app[HUB_KEY].lobby_states_built <= 2


def test_many_replies_of_one_text_share_one_encoded_body() -> None:
    text = "sd/m0.5.0/q0/" + "i*Guest..F.en/" * 5000 + "end"
    assert common.text_response(text).body is common.text_response(text).body


async def tournament_set_up(client: TestClient, headers: dict[str, str]) -> str:
    """A tournament of one table, set up by an organiser's script; its standings.json's address."""
    key = await client.app[STORE_KEY].tournaments.add_key("cup-bot", "Autumn Cup", False)
    query = {"co": "setUpTable", "key": key, "gameType": "2020stanF0.60.5", "tourn": "Autumn Cup"}
    answer = await client.get("/a.kropki", params=query | {"pl1": "*A", "pl2": "*B"}, headers=headers)
    assert (await answer.text()).startswith("ok.")
    return "/tournament/Autumn Cup/standings.json"


async def test_public_answers_nothing_keeps_are_limited_per_address_and_kept_ones_are_not(
    aiohttp_client: AiohttpClient, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Made-up tournament names from one address: each a look in the store (before: as many as the
    address's 200 requests a second, a whole core). Past its share the address is answered 429 without
    a look; the tournament it read before is still answered, and another address is not held back."""
    client = await limited_client(  # and one read for the organiser's key
        aiohttp_client, settings, store_reads_per_address=3 * COLD_READS + 1, trusted_proxies=("127.0.0.1",)
    )
    troll, other = {"X-Forwarded-For": "203.0.113.7"}, {"X-Forwarded-For": "198.51.100.9"}
    standings = await tournament_set_up(client, troll)
    assert (await client.get(standings, headers=troll)).status == 200
    looks = calls_of(monkeypatch, client.app[STORE_KEY].tournaments, "changes")

    made_up = [await client.get(f"/tournament/Made-up {n}", headers=troll) for n in range(4)]
    records = await client.get("/tournament/Made-up 5.sgf.zip", headers=troll)
    page = await client.get("/tournament/Made-up 6/standings", headers=troll)

    assert [response.status for response in made_up] == [404, 404, 429, 429]  # the first standings counted
    assert (records.status, page.status, made_up[-1].headers["Retry-After"]) == (429, 429, "1")
    assert len(looks) == 2
    assert (await client.get(standings, headers=troll)).status == 200  # kept: no look in the store
    assert (await client.get("/tournament/Made-up 7", headers=other)).status == 404


async def test_public_answers_nothing_keeps_are_limited_for_the_whole_server(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """Made-up names from many networks, each within its own share: the server as a whole looks in the
    store no more than STORE_READS allows, and answers the rest 503 at once."""
    client = await limited_client(
        aiohttp_client, settings, store_reads=3 * COLD_READS, trusted_proxies=("127.0.0.1",)
    )
    statuses = [
        (await client.get(f"/tournament/Made-up {n}", headers={"X-Forwarded-For": f"203.0.{n}.7"})).status
        for n in range(5)
    ]
    assert statuses == [404, 404, 404, 503, 503]


async def test_the_archives_reads_are_counted_by_what_they_read(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """A list of 500 games read 15-21 ms of CPU from the store (10 reads), a player's page 5 (3), an SGF
    1.4 (1): one address within its 200 requests a second kept several cores busy. Each is counted in
    reads; past the address's share it is answered 429 before it reads, and another address is not."""
    client = await limited_client(
        aiohttp_client, settings, store_reads_per_address=15, trusted_proxies=("127.0.0.1",)
    )
    troll, other = {"X-Forwarded-For": "203.0.113.7"}, {"X-Forwarded-For": "198.51.100.9"}
    answers = [
        await client.get("/games.json?limit=500", headers=troll),  # 10 reads
        await client.get("/player/Ala.json", headers=troll),  # 3
        await client.get("/sgf/7", headers=troll),  # 1
        await client.get("/game/7.json", headers=troll),  # 2: one too many
        await client.get("/sgf/8", headers=troll),  # 1
        await client.get("/games.json", headers=troll),  # 1: none left
        await client.get("/sgf/9", headers=other),
    ]

    assert [answer.status for answer in answers] == [200, 404, 404, 429, 404, 429, 404]
    assert answers[3].headers["Retry-After"] == "1"


async def test_a_profiles_look_ups_are_counted_as_reads_and_a_nick_no_account_can_have_is_not_looked_up(
    aiohttp_client: AiohttpClient, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`dajPref` and `dajOpis` each read the store, 1.5-1.8 ms of CPU: made-up nicks from one address kept
    a core busy. Each costs a read; past the address's share the answer is /auth.py's `nieOk.tooFast`
    without a look, and another address is not held back. A guest's or an invalid nick is answered
    without a look, and costs nothing."""
    client = await limited_client(
        aiohttp_client, settings, store_reads_per_address=2, trusted_proxies=("127.0.0.1",)
    )
    troll, other = {"X-Forwarded-For": "203.0.113.7"}, {"X-Forwarded-For": "198.51.100.9"}
    looks = calls_of(monkeypatch, client.app[auth.ACCOUNTS_KEY], "profile")

    async def ask(co: str, nick: str, headers: dict[str, str]) -> str:
        response = await client.get("/auth.py", params={"co": co, "opisGracza": nick}, headers=headers)
        assert response.status == 200
        return await response.text()

    free = [await ask("dajPref", nick, troll) for nick in ("*guest", "", "two  spaces", "x" * 21)]
    counted_ones = [await ask(co, f"Made{n}", troll) for n, co in enumerate(["dajPref", "dajOpis"] * 2)]

    assert free == ["ok.."] * 4
    assert counted_ones == ["ok..", "", "nieOk.tooFast", "nieOk.tooFast"]
    assert len(looks) == 2
    assert await ask("dajOpis", "Made9", other) == ""
    assert len(looks) == 3


async def test_made_up_bot_tokens_count_as_reads_and_a_bot_known_is_not_held_back(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """Each bot request looks its token up in the store: a made-up one cost 1.7 ms of CPU, a third of a
    core at one address's 200 requests a second. A token not known to name a bot counts as a read; past
    the address's share, or the server's, it is refused before the look-up (429, 503). A token known to
    name a bot (here: since its first request) is looked up whatever the floods, and one replaced since
    counts again."""
    client = await limited_client(
        aiohttp_client, settings, store_reads_per_address=3, store_reads=5, trusted_proxies=("127.0.0.1",)
    )
    troll, bot = {"X-Forwarded-For": "203.0.113.7"}, {"X-Forwarded-For": "198.51.100.9"}
    bots = client.app[STORE_KEY].bots
    token = await bots.create("Robo")

    async def account(token: str, where: dict[str, str]) -> tuple[int, str]:
        response = await client.get("/api/bot/account", headers={"Authorization": f"Bearer {token}", **where})
        return response.status, (await response.json()).get("error", "")

    assert await account(token, bot) == (200, "")  # its first look-up: one read
    made_up = [await account(f"madeUp{n}", troll) for n in range(4)]
    assert made_up == [(401, "badToken")] * 3 + [(429, "tooFast")]
    others = [await account(f"madeUp{n}", {"X-Forwarded-For": f"192.0.2.{n}"}) for n in range(2)]
    assert others == [(401, "badToken"), (503, "tooFast")]  # the server's 5 reads used up
    busy = await client.get("/api/bot/account", headers={"Authorization": "Bearer madeUp", **troll})
    assert (busy.status, busy.headers["Retry-After"]) == (429, "1")
    assert [await account(token, bot) for _ in range(3)] == [(200, "")] * 3

    replaced = await bots.issue_token("Robo")
    assert await account(token, bot) == (401, "badToken")  # looked up: known to name a bot until now
    assert await account(token, bot) == (503, "tooFast")  # no longer
    assert await account(replaced, bot) == (503, "tooFast")


async def test_analyses_of_archived_games_count_their_reads_of_the_archive(
    aiohttp_client: AiohttpClient, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An invitation to analyse an archived game (`SGFz<n>`) reads its record before the hub looks at
    anything else: a guest asking for games that do not exist read the archive at each request. Each
    counts a read; past the address's share the answer is `err.tooFast` without a read."""
    client = await limited_client(
        aiohttp_client, settings, store_reads_per_address=2, trusted_proxies=("127.0.0.1",)
    )
    ala = Zagram(client, "ala123", "*Ala")
    ala.headers = {"X-Forwarded-For": "203.0.113.7"}
    await ala.login()
    reads = calls_of(monkeypatch, client.app[GAMES_KEY], "sgf")

    answers = [
        await ala.get(
            idGracza=ala.secret,
            co="zapraszam",
            whom="*Ala",
            gameType=f"1010s0.SGFz{n}.a.a.n...c___SUsuen*Ala.",
        )
        for n in range(1, 4)
    ]
    empty = await ala.get(
        idGracza=ala.secret, co="zapraszam", whom="*Ala", gameType="1010s0..a.a.n...c___SUsuen*Ala."
    )

    assert answers == ["err.noSuchGame", "err.noSuchGame", "err.tooFast"]
    assert len(reads) == 2
    assert empty == ""  # an analysis of an empty board reads nothing


async def test_made_up_organisers_keys_count_as_reads_and_a_key_known_is_not_held_back(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """setUpTable, cancelTable and the hosted tournaments' requests look their key up in the store
    before anything else, and anyone may send one: a made-up key's look-up cost 1.6 ms of CPU. A key not
    known to be right counts as a read (`err.tooFast` past the share, without a look-up); the organiser's
    script, whose key is known since its first request (added after the start), goes on whatever the
    flood; a key revoked since counts again."""
    client = await limited_client(
        aiohttp_client, settings, store_reads_per_address=2, store_reads=4, trusted_proxies=("127.0.0.1",)
    )
    tournaments = client.app[STORE_KEY].tournaments
    key = await tournaments.add_key("cup-bot", "Autumn Cup", False)
    troll, script = {"X-Forwarded-For": "203.0.113.7"}, {"X-Forwarded-For": "198.51.100.9"}

    async def cancel(key: str, headers: dict[str, str]) -> str:
        query = {"co": "cancelTable", "key": key, "table": "99"}
        return await (await client.get("/a.kropki", params=query, headers=headers)).text()

    async def create(key: str, headers: dict[str, str]) -> str:
        query = {"co": "createTournament", "key": key, "tourn": "Made-up Cup", "kind": "arena"}
        return await (await client.get("/a.kropki", params=query, headers=headers)).text()

    assert await cancel(key, script) == "err.noSuchTable"  # the key's first look-up: one read
    flood = [await cancel("madeUp1", troll), await create("madeUp2", troll), await cancel("madeUp3", troll)]
    assert flood == ["err.badKey", "err.badKey", "err.tooFast"]
    elsewhere = [await cancel("madeUp4", {"X-Forwarded-For": f"192.0.2.{n}"}) for n in range(2)]
    assert elsewhere == ["err.badKey", "err.tooFast"]  # the server's 4 reads used up
    assert [await cancel(key, script) for _ in range(3)] == ["err.noSuchTable"] * 3

    assert await tournaments.revoke("cup-bot")
    assert await cancel(key, script) == "err.badKey"  # looked up: known to be right until now
    assert await cancel(key, script) == "err.tooFast"  # no longer


async def test_a_players_joins_and_leaves_count_as_reads(
    aiohttp_client: AiohttpClient, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """joinTournament and leaveTournament read the tournament and its entries whether or not they do
    anything (6.6-7.1 ms of CPU at 150 entries): a logged-in guest repeating one, or sending made-up names,
    kept the store busy as fast as its id's requests went. Each counts a read; past the address's share
    the answer is `err.tooFast` and the director is not asked; another address is not held back."""
    client = await limited_client(
        aiohttp_client, settings, store_reads_per_address=3, trusted_proxies=("127.0.0.1",)
    )
    key = await client.app[STORE_KEY].tournaments.add_key("cup-bot", None, False)
    assert await create(client, key=key, tourn="Winter Cup") == "ok"
    troll, ala = Zagram(client, "troll1", "*Troll"), Zagram(client, "ala123", "*Ala")
    troll.headers, ala.headers = {"X-Forwarded-For": "203.0.113.7"}, {"X-Forwarded-For": "198.51.100.9"}
    for guest in (troll, ala):
        await guest.login()
    looks = calls_of(monkeypatch, client.app[DIRECTOR_KEY].hosted, "get")

    async def ask(guest: Zagram, co: str, name: str = "Winter Cup") -> str:
        return await guest.get(idGracza=guest.secret, co=co, tourn=name)

    flood = [
        await ask(troll, "joinTournament"),
        await ask(troll, "joinTournament"),
        await ask(troll, "leaveTournament", "Made-up Cup"),
        await ask(troll, "leaveTournament"),
    ]
    assert flood == ["ok", "err.alreadyRegistered", "err.noSuchTournament", "err.tooFast"]
    assert len(looks) == 3
    assert await ask(ala, "joinTournament") == "ok"
    assert len(looks) == 4


async def test_the_keys_and_tokens_in_the_store_are_known_to_be_right_from_the_start(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """A restart forgets which keys and tokens were right, and a flood of made-up ones may use up every
    read meanwhile: the organisers' keys not revoked and the bots' tokens are read from the store at the
    start, so that their holders' first requests are served whatever the flood. A revoked key is not."""
    first = await aiohttp_client(create_app(settings))
    store = first.app[STORE_KEY]
    key = await store.tournaments.add_key("cup-bot", None, False)
    old = await store.tournaments.add_key("old-bot", None, False)
    assert await store.tournaments.revoke("old-bot")
    token = await store.bots.create("Robo")
    await first.close()  # one server per database
    client = await limited_client(aiohttp_client, settings, store_reads_per_address=0, store_reads=0)

    async def cancel(key: str) -> str:
        query = {"co": "cancelTable", "key": key, "table": "99"}
        return await (await client.get("/a.kropki", params=query)).text()

    account = await client.get("/api/bot/account", headers={"Authorization": f"Bearer {token}"})
    assert (account.status, (await account.json())["nick"]) == (200, "Robo")
    assert [await cancel(key), await cancel(old), await cancel("madeUp")] == [
        "err.noSuchTable",
        "err.tooFast",
        "err.tooFast",
    ]
