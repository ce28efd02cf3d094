"""Creating, joining and leaving the tournaments the server runs, over HTTP: every refusal is one clear
answer that changes nothing, and the list and the results show what was done."""

from __future__ import annotations

import dataclasses
import logging
import time

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.config import Settings
from server.hub.limits import ENTRIES_PER_ADDRESS, NETWORK_FACTOR
from server.logs import OneLineFormatter
from server.web.common import STORE_KEY
from tests.clients.robocup import game_settings
from tests.conftest import served
from tests.director.bots import GAME_TYPE, director_of
from tests.web.test_auth import auth, register, registered_id
from tests.web.test_moderation import from_address
from tests.web.zagram import Zagram

CUP = "Winter Cup"


async def create(client: TestClient, **params: str) -> str:
    query = {"co": "createTournament", "gameType": GAME_TYPE, "kind": "swiss", "rounds": "5", **params}
    query.setdefault("start", str(int(time.time()) + 3600))
    response = await client.get("/a.kropki", params=query)
    assert response.status == 200
    return await response.text()


@pytest.fixture
async def key(client: TestClient) -> str:
    return await client.app[STORE_KEY].tournaments.add_key("cup-bot", None, False)


async def listed(client: TestClient) -> list[dict]:
    return (await (await client.get("/tournaments.json")).json())["tournaments"]


@pytest.mark.parametrize(
    ("params", "answer"),
    [
        ({"key": "nope"}, "err.badKey"),
        ({"tourn": ""}, "err.missing.tourn"),
        ({"tourn": "x"}, "err.badTourn"),
        ({"tourn": "a/b"}, "err.badTourn"),
        ({"tourn": "n" * 101}, "err.badTourn"),
        ({"tourn": ".."}, "err.badTourn"),  # its address would be / (tests/web/test_tournament.py)
        ({"kind": "knockout"}, "err.badKind"),
        ({"rounds": ""}, "err.missing.rounds"),
        ({"rounds": "0"}, "err.bad.rounds"),
        ({"rounds": "21"}, "err.bad.rounds"),
        ({"rounds": "3.5"}, "err.bad.rounds"),
        ({"kind": "arena"}, "err.missing.minutes"),
        ({"kind": "arena", "minutes": "4"}, "err.bad.minutes"),
        ({"start": "2026-12-01T18:00"}, "err.badStart"),
        ({"start": "tomorrow"}, "err.badStart"),
        ({"start": "1000"}, "err.badStart"),
        ({"start": str(int(time.time()) + 400 * 24 * 3600)}, "err.badStart"),
        ({"start": "0001-01-01T00:00:00+14:00"}, "err.badStart"),  # before year 1 in UTC: was err.internal
        ({"start": "9999-12-31T23:59:59-14:00"}, "err.badStart"),
        ({"start": "999999999999"}, "err.badStart"),
        ({"minRating": "1600", "maxRating": "1500"}, "err.badRatings"),
        ({"minRating": "-5"}, "err.bad.minRating"),
        ({"sayHi": "601"}, "err.bad.sayHi"),
        ({"gameType": "nonsense"}, "err.badGameType"),
        ({"gameType": game_settings(10, 10, infinite_time=True)}, "err.untimed"),
    ],
)
async def test_a_bad_creation_is_refused_and_creates_nothing(
    client: TestClient, key: str, params: dict[str, str], answer: str
) -> None:
    assert await create(client, **{"key": key, "tourn": CUP, **params}) == answer
    assert await listed(client) == []


async def test_a_name_that_holds_a_line_separator_stays_on_its_log_line(
    client: TestClient, key: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A name may hold U+2028 (a line separator, not a control character). Before, the log wrote it as
    it was, inside the quotes: a reader that breaks lines on it (Python's splitlines, many viewers) saw
    the rest of the name as a line of its own, which could be made to look like any other event."""
    caplog.set_level(logging.INFO)
    fake = "\u20282026-12-01 10:00:00,000 level=ERROR logger=server.store.writer storage failing"
    assert await create(client, key=key, tourn="Cup" + fake) == "ok"

    formatter = OneLineFormatter()
    lines = [formatter.format(record) for record in caplog.records if record.name.startswith("server.")]
    created = [line for line in lines if "tournament created" in line]
    assert len(created) == 1 and "Cup\\u20282026-12-01" in created[0]
    assert all(len(line.splitlines()) == 1 for line in lines)


async def test_calling_off_is_refused_without_the_right_key_and_changes_nothing(
    client: TestClient, key: str
) -> None:
    assert await create(client, key=key, tourn=CUP) == "ok"
    limited = await client.app[STORE_KEY].tournaments.add_key("league-bot", "League", False)

    async def cancel(**params: str) -> str:
        return await (await client.get("/a.kropki", params={"co": "cancelTournament", **params})).text()

    assert await cancel(tourn=CUP) == "err.missing.key"
    assert await cancel(key="nope", tourn=CUP) == "err.badKey"
    assert await cancel(key=key) == "err.missing.tourn"
    assert await cancel(key=key, tourn="Nowhere") == "err.noSuchTournament"
    assert await cancel(key=limited, tourn=CUP) == "err.keyNotForTournament"
    assert [t["state"] for t in await listed(client)] == ["registering"]
    assert await cancel(key=key, tourn=CUP) == "ok"
    assert [t["state"] for t in await listed(client)] == ["cancelled"]


async def test_a_key_limited_to_a_tournament_creates_only_that_one(client: TestClient) -> None:
    limited = await client.app[STORE_KEY].tournaments.add_key("league-bot", "League", True)
    assert await create(client, key=limited, tourn=CUP) == "err.keyNotForTournament"
    assert await create(client, key=limited, tourn="League") == "ok"
    (league,) = await listed(client)
    assert league["name"] == "League" and league["registeredOnly"], "the key's registered-only holds"


async def test_a_name_is_one_tournament_hosted_or_set_up(client: TestClient, key: str) -> None:
    assert await create(client, key=key, tourn=CUP) == "ok"
    assert await create(client, key=key, tourn=CUP, kind="arena", minutes="30") == "err.nameTaken"
    setup = {
        "co": "setUpTable",
        "key": key,
        "gameType": GAME_TYPE,
        "pl1": "*A",
        "pl2": "*B",
        "tourn": "Old Cup",
    }
    assert (await (await client.get("/a.kropki", params=setup)).text()).startswith("ok.")
    await client.app[STORE_KEY].writer.flush()
    assert await create(client, key=key, tourn="Old Cup") == "err.nameTaken"
    setup["tourn"] = CUP  # and no table of an organiser's script in a tournament the server pairs
    assert await (await client.get("/a.kropki", params=setup)).text() == "err.hostedTournament"


async def test_a_moderator_creates_without_a_key(client: TestClient) -> None:
    await register(client, "Mod")
    await client.app[STORE_KEY].accounts.set_role("Mod", "moderator", "test")
    moderator = Zagram(client, registered_id("Mod", "pw"), "Mod")
    assert (await auth(client, co="loguj", opisGracza="Mod", idGracza=moderator.secret)).startswith("ok.")
    await moderator.poll()
    guest = Zagram(client, "gus1", "*Gus")
    assert await guest.login() == ""
    assert await create(client, idGracza=guest.secret, tourn=CUP) == "err.missing.key"
    assert await create(client, idGracza=moderator.secret, tourn=CUP) == "ok"
    (cup,) = await listed(client)
    assert cup["state"] == "registering" and cup["players"] == []


async def test_joining_and_leaving(client: TestClient, key: str) -> None:
    assert await create(client, key=key, tourn=CUP) == "ok"
    ala = Zagram(client, "ala123", "*Ala")
    assert await ala.login() == ""

    async def ask(co: str, **params: str) -> str:
        return await (await client.get("/a.kropki", params={"co": co, **params})).text()

    assert await ask("joinTournament", idGracza=ala.secret) == "err.missing.tourn"
    assert await ask("joinTournament", tourn=CUP) == "err.missing.idGracza"
    assert await ask("joinTournament", idGracza="stranger1", tourn=CUP) == "err.notLoggedIn"
    assert await ask("joinTournament", idGracza=ala.secret, tourn="Nowhere") == "err.noSuchTournament"
    assert await ask("leaveTournament", idGracza=ala.secret, tourn=CUP) == "err.notRegistered"
    assert await ask("joinTournament", idGracza=ala.secret, tourn=CUP) == "ok"
    assert await ask("joinTournament", idGracza=ala.secret, tourn=CUP) == "err.alreadyRegistered"
    (cup,) = await listed(client)
    assert cup["players"] == ["*Ala"]
    assert await ask("leaveTournament", idGracza=ala.secret, tourn=CUP) == "ok"
    (cup,) = await listed(client)
    assert cup["players"] == [] and cup["withdrawn"] == ["*Ala"]
    assert await ask("joinTournament", idGracza=ala.secret, tourn=CUP) == "ok", "back again"
    results = await (await client.get(f"/tournament/{CUP}")).json()
    assert results["tables"] == [] and results["hosted"]["players"] == ["*Ala"]
    assert results["hosted"]["standings"][0]["player"] == "*Ala"
    page = await client.get(f"/tournament/{CUP}/standings")
    assert page.status == 200


async def test_rating_limits_keep_guests_and_players_out_of_range(client: TestClient, key: str) -> None:
    assert await create(client, key=key, tourn=CUP, minRating="1600") == "ok"
    assert await create(client, key=key, tourn="Open", maxRating="1400") == "ok"
    await register(client, "Alice")
    alice = Zagram(client, registered_id("Alice", "pw"), "Alice")
    await alice.poll()
    gus = Zagram(client, "gus2", "*Gus")
    assert await gus.login() == ""

    async def join(who: Zagram, name: str) -> str:
        return await (
            await client.get(
                "/a.kropki", params={"co": "joinTournament", "idGracza": who.secret, "tourn": name}
            )
        ).text()

    assert await join(gus, CUP) == "err.registeredOnly"
    assert await join(alice, CUP) == "err.ratingTooLow"  # a new account's 1500
    assert await join(alice, "Open") == "err.ratingTooHigh"
    assert all(t["players"] == [] for t in await listed(client))


@pytest.mark.parametrize("limit", ["minRating", "maxRating"])
async def test_a_limit_of_0_keeps_guests_out_too(client: TestClient, key: str, limit: str) -> None:
    assert await create(client, key=key, tourn=CUP, **{limit: "0"}) == "ok"
    await register(client, "Alice")
    alice = Zagram(client, registered_id("Alice", "pw"), "Alice")
    await alice.poll()
    gus = Zagram(client, "gus2", "*Gus")
    assert await gus.login() == ""

    async def join(who: Zagram) -> str:
        query = {"co": "joinTournament", "idGracza": who.secret, "tourn": CUP}
        return await (await client.get("/a.kropki", params=query)).text()

    alice_joins = "ok" if limit == "minRating" else "err.ratingTooHigh"  # a new account's 1500
    assert (await join(alice), await join(gus)) == (alice_joins, "err.registeredOnly")
    (cup,) = await listed(client)
    assert cup["players"] == (["Alice"] if limit == "minRating" else [])


async def test_the_key_and_the_ids_stay_out_of_the_logs(
    client: TestClient, key: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    ala = Zagram(client, "ala456", "*Ala")
    assert await ala.login() == ""
    assert await create(client, key=key, tourn=CUP) == "ok"
    await client.get("/a.kropki", params={"co": "joinTournament", "idGracza": ala.secret, "tourn": CUP})
    await director_of(client).settled()
    assert CUP in caplog.text
    assert key not in caplog.text and ala.secret not in caplog.text


async def test_the_guests_of_one_address_and_network_make_a_bounded_number_of_entries_an_hour(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """Every entry is kept with its tournament for good, and a guest is free to make: one address's guests,
    a new nick every 2 seconds as the guest logins allow, kept 43,200 entries a day in one tournament (176
    bytes each on SQLite: 7.6 MB a day), one network's four times as many (benchmarks/abuse.py --only
    rows). An entry a guest makes again under the same nick is no new row, and is not counted."""
    client = await served(aiohttp_client, dataclasses.replace(settings, trusted_proxies=("127.0.0.1",)))
    key = await client.app[STORE_KEY].tournaments.add_key("cup-bot", None, False)
    assert await create(client, key=key, tourn=CUP) == "ok"

    async def join(host: int, number: int, co: str = "joinTournament") -> str:
        guest = from_address(client, f"gus{host}x{number}", f"*Gus{host}x{number}", f"198.51.100.{host}")
        if await guest.login() != "":
            await guest.get(co="usunGracza", idGracza=guest.secret)
            assert await guest.login() == ""
        answer = await guest.get(co=co, idGracza=guest.secret, tourn=CUP)
        await guest.get(co="usunGracza", idGracza=guest.secret)  # a new guest, a new nick
        return answer

    for host in range(1, NETWORK_FACTOR + 1):
        assert [await join(host, n) for n in range(ENTRIES_PER_ADDRESS)] == ["ok"] * ENTRIES_PER_ADDRESS
        assert await join(host, 0, "leaveTournament") == "ok"
        assert await join(host, 0) == "ok", "back under the same nick: no new row"
        told = await join(host, ENTRIES_PER_ADDRESS)
        assert told == "err.entryFlood"
    assert await join(NETWORK_FACTOR + 1, 0) == "err.entryFlood", "the network's bound"
    (cup,) = await listed(client)
    assert len(cup["players"]) == ENTRIES_PER_ADDRESS * NETWORK_FACTOR
