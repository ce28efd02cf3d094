"""The SGF the server writes reads back as it was meant, by our reader and by an independent one
(sgfmill's SGF grammar, which knows nothing of GM[40]): a tournament's name and round holding SGF's
special characters, in `/sgf/<n>`, in the tournament's zip and in a live table's record."""

from __future__ import annotations

import io
import random
import zipfile

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient
from sgfmill import sgf_grammar

from server.app import STORE_KEY
from server.config import Settings
from server.engine.sgf import GameRecord, read_record
from server.hub.clock import ManualTimers
from server.hub.hub import Hub
from tests.conftest import served
from tests.web.zagram import Zagram

NAME = "Cup ]\\: [x] \\]"  # a tournament name may hold anything but '/' and control characters
ROUND = "1 ]\\:"
MOVES = ["aa", "hh", "ab", "hg", "ac"]


def independent_reading(sgf: str) -> dict[str, object]:
    """What sgfmill reads in a record: the root's names and every move of the main line, in order."""
    game = sgf_grammar.parse_sgf_game(sgf.encode())
    root, *nodes = sgf_grammar.main_sequence_iter(game)

    def text(props: dict[str, list[bytes]], ident: str) -> str:
        return sgf_grammar.text_value(props[ident][0]).decode()

    return {
        "names": [text(root, ident) for ident in ("PB", "PW", "EV", "RO")],
        "moves": [(colour, text(node, colour)) for node in nodes for colour in "BW" if colour in node],
    }


def our_reading(record: GameRecord) -> dict[str, object]:
    return {
        "names": [record.black_name, record.white_name, record.event, record.round],
        "moves": [(move.colour, move.value) for move in record.moves],
    }


@pytest.fixture
def hub() -> Hub:
    return Hub(timers=ManualTimers(), rng=random.Random(5))


@pytest.fixture
async def client(aiohttp_client: AiohttpClient, settings: Settings, hub: Hub) -> TestClient:
    return await served(aiohttp_client, settings, hub)


async def test_a_tournament_name_with_sgf_special_characters_reads_back_the_same_everywhere(
    client: TestClient, hub: Hub
) -> None:
    key = await client.app[STORE_KEY].tournaments.add_key("cup-bot", NAME, False)
    ala, bob = Zagram(client, "ala123", "*Ala"), Zagram(client, "bob456", "*Bob")
    for guest in (ala, bob):
        assert await guest.login() == ""
        await guest.poll()
    answer = await ala.client.get(
        "/a.kropki",
        params={
            "co": "setUpTable",
            "key": key,
            "gameType": "0808stanF0.60.5",
            "sayHiTimes": "30.30",
            "tourn": NAME,
            "tRound": ROUND,
            "pl1": "*Ala",
            "pl2": "*Bob",
        },
    )
    uid = int((await answer.text()).removeprefix("ok."))
    for guest in (ala, bob):
        await guest.poll()
    for number, where in enumerate(MOVES):
        player = (ala, bob)[number % 2]
        player.send("s", uid, where)
        await player.poll()
    expected = {
        "names": ["*Ala", "*Bob", NAME, ROUND],
        "moves": [("BW"[number % 2], where) for number, where in enumerate(MOVES)],
    }

    live = await (await client.get(f"/table/{uid}.sgf")).text()
    assert our_reading(read_record(live)) == expected == independent_reading(live)

    bob.send("u", uid, "resign")
    await bob.poll()
    await hub.persistence.flush()
    [game] = await (await client.get("/games.json")).json()
    archived = await (await client.get(game["sgf"])).text()
    assert our_reading(read_record(archived)) == expected == independent_reading(archived)
    assert read_record(archived).result == "B+R"

    bundle = await client.get(f"/tournament/{NAME}.sgf.zip")
    assert bundle.status == 200
    bundle_file = zipfile.ZipFile(io.BytesIO(await bundle.read()))
    [entry] = bundle_file.namelist()
    assert bundle_file.read(entry).decode() == archived
