"""Driving the ported clients against the real app in-process (aiohttp's test client)."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from yarl import URL

from server.hub.room import Room
from tests.clients.multipoints import MultiPoints, encode
from tests.clients.robocup import RoboCupReader


async def get(client: TestClient, path_and_query: str) -> str:
    """A request sent as the Java client writes it (already encoded: yarl must not touch it)."""
    response = await client.get(URL(path_and_query, encoded=True))
    assert response.status == 200
    return await response.text()


async def log_in(client: TestClient, mp: MultiPoints) -> None:
    """ServerZagram.connect for a guest: guestLogin, then changeLang (answers are not checked there
    beyond `equals("")`)."""
    answer = await get(
        client, f"/a.kropki?co=guestLogin&idGracza={mp.secret}&opis={encode(mp.my_name)}&lang=ru"
    )
    assert answer == ""
    await get(client, f"/a.kropki?idGracza={mp.secret}&co=changeLang&na=ru")


async def poll(client: TestClient, mp: MultiPoints) -> str:
    """One turn of ThreadMain.run; the parse failures MultiPoints would print are test failures."""
    body = await get(client, mp.url())
    mp.handle_text(body)
    assert not mp.failures, mp.failures
    return body


async def read(client: TestClient, reader: RoboCupReader) -> str:
    body = await get(client, "/a.kropki?" + "&".join(f"{k}={v}" for k, v in reader.query().items()))
    reader.handle_response(body)
    return body


def engine_dots(room: Room) -> dict[tuple[int, int], bool]:
    """The table's dots as MultiPoints numbers them (1-based), red = True: start dots and moves."""
    dots = {(x + 1, y + 1): False for x, y in room.game.setup.black}
    dots |= {(x + 1, y + 1): True for x, y in room.game.setup.white}
    for move in room.game.moves:
        if move.point is not None:
            dots[(move.point[0] + 1, move.point[1] + 1)] = move.player == 2
    return dots
