"""A tournament's public answers are built once and shared (server/web/shared.py): a flood of requests
costs one build, unknown names keep nothing, and a finished game still shows in the next answer."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from server.engine.gametype import parse_game_type
from server.store.tournaments import Tournaments
from server.web import tournament
from server.web.shared import BUILD_RATIO, CHECK_SECONDS, SHARED_ANSWERS_KEY, Built, SharedAnswers
from server.web.tournament import TOURNAMENTS_KEY
from tests.web.test_tournament import Organiser, organiser, seated  # noqa: F401 (the fixture)
from tests.web.zagram import Zagram

STANDINGS = "/tournament/Autumn Cup/standings.json"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(organiser: Organiser) -> Clock:  # noqa: F811
    """The shared answers' clock, moved by the test."""
    ticking = Clock()
    organiser.client.app[SHARED_ANSWERS_KEY].clock = ticking
    return ticking


def count_reads(organiser: Organiser, monkeypatch: pytest.MonkeyPatch) -> list[str]:  # noqa: F811
    """The names whose tables the store was asked for (the real store answers)."""
    store: Tournaments = organiser.client.app[TOURNAMENTS_KEY]
    read = store.tables
    asked: list[str] = []

    async def tables(name: str, since: int | None = None) -> Any:
        asked.append(name)
        return await read(name, since)

    monkeypatch.setattr(store, "tables", tables)
    return asked


async def test_many_requests_at_once_cost_one_read_of_the_tournament(
    organiser: Organiser,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert (await organiser.set_up(pl1="*Ala", pl2="*Bob")).startswith("ok.")
    await organiser.hub.persistence.flush()
    asked = count_reads(organiser, monkeypatch)

    answers = await asyncio.gather(*(organiser.client.get(STANDINGS) for _ in range(50)))

    bodies = {await answer.read() for answer in answers}
    assert [answer.status for answer in answers] == [200] * 50 and len(bodies) == 1
    assert asked == ["Autumn Cup"]  # before: one whole read a request, 50


async def test_an_unknown_name_is_answered_404_and_keeps_nothing(organiser: Organiser) -> None:  # noqa: F811
    for n in range(20):
        answer = await organiser.client.get(f"/tournament/Nowhere {n}/standings.json")
        assert answer.status == 404
        assert (await organiser.client.get(f"/tournament/Nowhere {n}")).status == 404
        assert (await organiser.client.get(f"/tournament/Nowhere {n}/standings")).status == 404
    assert len(organiser.client.app[SHARED_ANSWERS_KEY]) == 0


async def test_a_finished_game_shows_in_the_next_answer(organiser: Organiser, clock: Clock) -> None:  # noqa: F811
    client = organiser.client
    ala, bob = Zagram(client, "ala12345", "*Ala"), Zagram(client, "bob12345", "*Bob")
    uid = await seated(organiser, ala, bob)
    await organiser.hub.persistence.flush()
    assert [e["state"] for e in (await (await client.get(STANDINGS)).json())["tables"]] == ["playing"]
    clock.now += BUILD_RATIO  # however long the first build took,
    assert (await client.get(STANDINGS)).status == 200  # and checked with the store again

    bob.send("u", uid, "resign")
    await bob.poll()
    shown = await (await client.get(STANDINGS)).json()  # the same second: the hub's part is checked

    assert [(e["state"], e["result"]) for e in shown["tables"]] == [("finished", "B+R")]
    assert [row["points"] for row in shown["standings"]] == [1.0, 0.0]


async def test_a_table_set_up_elsewhere_shows_within_the_second(
    organiser: Organiser,  # noqa: F811
    clock: Clock,
) -> None:
    """A table the hub set up without this app's handler (another member, the director) is in the store
    only: seen at the next check of its count of changes."""
    client = organiser.client
    assert (await organiser.set_up(pl1="*Ala", pl2="*Bob")).startswith("ok.")
    await organiser.hub.persistence.flush()
    assert len((await (await client.get(STANDINGS)).json())["tables"]) == 1
    clock.now += BUILD_RATIO
    assert (await client.get(STANDINGS)).status == 200  # checked with the store again
    organiser.hub.set_up_table(
        parse_game_type("0808stanF0.60.5"), "*Cid", "*Dan", [30, 30], "Autumn Cup", "3", {}
    )
    await organiser.hub.persistence.flush()

    assert len((await (await client.get(STANDINGS)).json())["tables"]) == 1  # checked within the second
    clock.now += CHECK_SECONDS
    assert len((await (await client.get(STANDINGS)).json())["tables"]) == 2


async def test_the_etag_is_answered_304_and_gzip_is_sent_as_kept(organiser: Organiser) -> None:  # noqa: F811
    assert (await organiser.set_up(pl1="*Ala", pl2="*Bob")).startswith("ok.")
    await organiser.hub.persistence.flush()
    client = organiser.client
    first = await client.get("/tournament/Autumn Cup", headers={"Accept-Encoding": "identity"})
    etag = first.headers["ETag"]

    again = await client.get("/tournament/Autumn Cup", headers={"If-None-Match": etag})
    zipped = await client.get("/tournament/Autumn Cup", headers={"Accept-Encoding": "gzip"})

    assert first.status == 200 and first.headers["Cache-Control"] == "no-cache"
    assert again.status == 304 and await again.read() == b""
    assert zipped.headers["Content-Encoding"] == "gzip" and zipped.headers["ETag"] == etag
    assert await zipped.json() == await first.json()


async def test_standings_list_the_newest_tables_and_those_played(
    organiser: Organiser,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tournament, "STANDINGS_TABLES", 2)
    client = organiser.client
    ala, bob = Zagram(client, "ala12345", "*Ala"), Zagram(client, "bob12345", "*Bob")
    playing = await seated(organiser, ala, bob)  # the oldest, still played
    ended = [int((await organiser.set_up(pl1=f"*X{n}", pl2=f"*Y{n}"))[3:]) for n in range(3)]
    for uid in ended:
        assert await organiser_cancel(organiser, uid) == "ok"
    await organiser.hub.persistence.flush()

    shown = await (await client.get(STANDINGS)).json()
    listed = await (await client.get("/tournament/Autumn Cup")).json()

    assert [e["table"] for e in shown["tables"]] == [playing, *ended[-2:]]
    assert shown["tablesLeftOut"] == 1 and len(listed["tables"]) == 4  # the results list them all


async def organiser_cancel(organiser: Organiser, uid: int) -> str:  # noqa: F811
    query = {"co": "cancelTable", "key": organiser.key, "table": str(uid)}
    return await (await organiser.client.get("/a.kropki", params=query)).text()


# --- the cache itself ------------------------------------------------------------------------------


async def test_a_big_answer_is_built_again_no_sooner_than_its_ratio() -> None:
    clock = Clock()
    answers = SharedAnswers(clock)
    version, builds = [0], []

    async def read() -> int:
        return version[0]

    async def build() -> Built:
        clock.now += 2.0  # a build of 2 s
        builds.append(clock.now)
        return Built({"built": len(builds)})

    await answers.get("big", read, build)
    version[0] += 1
    clock.now += CHECK_SECONDS
    held = await answers.get("big", read, build)
    clock.now += 2.0 * BUILD_RATIO
    rebuilt = await answers.get("big", read, build)

    assert held is not None and held.body == b'{"built": 1}'
    assert rebuilt is not None and rebuilt.body == b'{"built": 2}' and len(builds) == 2


async def test_the_least_recently_asked_for_go_first() -> None:
    answers = SharedAnswers(Clock(), most_answers=2)

    async def read() -> int:
        return 0

    async def build() -> Built:
        return Built({"answer": True})

    for key in ("a", "b", "a", "c"):
        await answers.get(key, read, build)

    assert len(answers) == 2
    answers.changed("a", "b")  # b is gone: nothing to mark
    builds = answers.builds
    await answers.get("a", read, build)
    assert answers.builds == builds + 1  # kept, and built again once marked changed


async def test_every_change_made_here_shows_in_the_next_answer() -> None:
    """Two players joining one after the other: the second's own next read shows them too (the client
    reads tournaments.json at once after a join to show its Withdraw button, then every 30 s only); a
    fresh-clone run's browser test saw the answer of the first join."""
    clock = Clock()
    answers = SharedAnswers(clock)
    joined: list[str] = []

    async def read() -> object:
        return object()  # as /tournaments.json: no count of changes

    async def build() -> Built:
        clock.now += 0.05
        return Built({"players": list(joined)})

    await answers.get("listing", read, build)
    for nick in ("*Ala", "*Bob"):
        joined.append(nick)
        answers.changed("listing")
        answer = await answers.get("listing", read, build)
        assert answer is not None and json.loads(answer.body) == {"players": joined}


async def test_a_change_during_a_build_is_not_answered_by_that_build() -> None:
    """A request after a change waits for a build begun after it, not for one the change came during."""
    answers = SharedAnswers(Clock())
    joined: list[str] = []
    building = asyncio.Event()
    go_on = asyncio.Event()

    async def read() -> object:
        return object()

    async def build() -> Built:
        seen = list(joined)
        building.set()
        await go_on.wait()
        return Built({"players": seen})

    first = asyncio.create_task(answers.get("listing", read, build))
    await building.wait()
    joined.append("*Bob")
    answers.changed("listing")
    second = asyncio.create_task(answers.get("listing", read, build))
    await asyncio.sleep(0)
    go_on.set()
    assert (await first) is not None
    answer = await second
    assert answer is not None and answer.body == b'{"players": ["*Bob"]}'
    kept = await answers.get("listing", read, build)
    assert kept is not None and kept.body == b'{"players": ["*Bob"]}'  # the older build did not overwrite it
