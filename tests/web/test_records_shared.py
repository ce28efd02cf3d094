"""A tournament's records (`/tournament/<name>.sgf.zip`) are zipped once and shared by every request until
a game is added, read from the store a page at a time, and one tournament's at a time: before, every
request read every record of the tournament and zipped them, anyone could ask in a loop, and each
request held the whole zip and every record until it was sent."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import threading
import zipfile
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from server.app import STORE_KEY
from server.store.tournaments import Tournaments
from server.web import tournament
from server.web.shared import BUILD_RATIO, CHECK_SECONDS, SHARED_ANSWERS_KEY
from server.web.tournament import TOURNAMENTS_KEY
from tests.web.test_pages import archive, finished
from tests.web.test_push import FRAME_WAIT
from tests.web.test_shared_answers import Clock


async def archived(client: TestClient, tournament_name: str, games: int) -> None:
    game = dataclasses.replace(finished("*Ala", "*Bob"), tournament=tournament_name)
    await archive(client.app[STORE_KEY], *[game] * games)


def record_reads(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """(tournament, after) of each page of records the real store was asked for."""
    store: Tournaments = client.app[TOURNAMENTS_KEY]
    read = store.records
    asked: list[tuple[str, int]] = []

    async def records(name: str, after: int = 0, limit: int = tournament.RECORDS_PAGE) -> Any:
        asked.append((name, after))
        return await read(name, after, limit)

    monkeypatch.setattr(store, "records", records)
    return asked


async def names(client: TestClient, tournament_name: str) -> list[str]:
    bundle = await client.get(f"/tournament/{tournament_name}.sgf.zip")
    assert bundle.status == 200 and bundle.content_type == "application/zip"
    return zipfile.ZipFile(io.BytesIO(await bundle.read())).namelist()


async def test_many_requests_at_once_zip_the_records_once_a_page_at_a_time(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tournament, "RECORDS_PAGE", 2)
    await archived(client, "Cup", 5)
    asked = record_reads(client, monkeypatch)

    bundles = await asyncio.gather(*(client.get("/tournament/Cup.sgf.zip") for _ in range(30)))

    bodies = {await bundle.read() for bundle in bundles}
    assert [bundle.status for bundle in bundles] == [200] * 30 and len(bodies) == 1
    assert len(zipfile.ZipFile(io.BytesIO(bodies.pop())).namelist()) == 5
    numbers = sorted(game.number for game in await client.app[STORE_KEY].games.recent(None, 5))
    assert asked == [("Cup", 0), ("Cup", numbers[1]), ("Cup", numbers[3])]  # before: 30 whole reads
    etag = bundles[0].headers["ETag"]
    again = await client.get("/tournament/Cup.sgf.zip", headers={"If-None-Match": etag})
    assert again.status == 304 and len(asked) == 3


async def test_a_game_archived_later_is_in_the_next_zip(client: TestClient) -> None:
    clock = Clock()
    client.app[SHARED_ANSWERS_KEY].clock = clock
    await archived(client, "Cup", 2)
    assert len(await names(client, "Cup")) == 2
    await archived(client, "Cup", 1)  # a game at one of its tables after the tournament's: no table changes
    assert len(await names(client, "Cup")) == 2  # shared until it is checked again
    clock.now += max(CHECK_SECONDS, BUILD_RATIO * 60)
    assert len(await names(client, "Cup")) == 3


async def test_an_unknown_tournament_is_404_and_keeps_nothing(client: TestClient) -> None:
    for n in range(10):
        answer = await client.get(f"/tournament/Nowhere {n}.sgf.zip")
        assert answer.status == 404 and "Nowhere" in (await answer.json())["error"]
    assert len(client.app[SHARED_ANSWERS_KEY]) == 0


async def test_two_tournaments_records_are_zipped_one_after_the_other(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each zip is held whole while it is made (tens of MB for a day's arena): one at a time, whatever
    the number of tournaments asked for at once."""
    await archived(client, "Cup", 1)
    await archived(client, "Bowl", 1)
    asked = record_reads(client, monkeypatch)
    zipping, go_on = threading.Event(), threading.Event()
    write = zipfile.ZipFile.writestr

    def held_write(archive: zipfile.ZipFile, name: str, data: str) -> None:
        zipping.set()
        go_on.wait(FRAME_WAIT)
        write(archive, name, data)

    monkeypatch.setattr(zipfile.ZipFile, "writestr", held_write)
    cup = asyncio.create_task(client.get("/tournament/Cup.sgf.zip"))
    await asyncio.to_thread(zipping.wait, FRAME_WAIT)
    bowl = asyncio.create_task(client.get("/tournament/Bowl.sgf.zip"))
    assert (await client.get("/healthz")).status == 200  # the loop goes on while a zip is made
    assert [name for name, _ in asked] == ["Cup"]  # before: both read and zipped at once
    go_on.set()
    assert (await cup).status == 200 and (await bowl).status == 200
    assert [name for name, _ in asked] == ["Cup", "Bowl"]
