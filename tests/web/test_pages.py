"""The archive's pages: /games for browsers and programs, /game/<n> replays, /player/<nick> profiles."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from server.app import STORE_KEY, create_app
from server.config import Settings
from server.engine.board import BLACK, WHITE
from server.engine.game import Result
from server.engine.replay import replay_record
from server.engine.sgf import GameRecord, read_record
from server.engine.steps import steps_of
from server.hub.persistence import FinishedGame
from server.store.store import Store
from server.web import pages
from server.web.archive import prefers_html
from server.web.headers import CLIENT_POLICY
from server.web.pages import Replays
from tests.store.test_accounts import registered_id

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sgf"
CAPTURING = "kropla_zagram302058.sgf"  # 20x20 territory: the first dot is captured at move 70
BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8"


def finished(blue: str, red: str, *, record: GameRecord | None = None, rated: bool = False) -> FinishedGame:
    return FinishedGame(
        uid=1,
        record=record or GameRecord(width=10, height=10),
        blue=blue,
        red=red,
        game_type="2020t0..a.R.n...." if rated else "1010s0..a.F.n....",
        result=Result(BLACK, "R"),
        rated=rated,
        tournament=None,
        game_index=0,
        journal_seq=1,
    )


async def archive(store: Store, *games: FinishedGame) -> None:
    for game in games:
        store.writer.archive(game, lambda *_: None)
    await store.writer.flush()


@pytest.mark.parametrize(
    ("accept", "html"),
    [
        (BROWSER, True),
        ("text/html", True),
        ("application/json", False),
        ("*/*", False),
        ("", False),
        ("application/json, text/html;q=0.5", False),
        ("text/*;q=0.9, application/json;q=0.8", True),
        ("text/html;q=oops, */*", False),
    ],
)
def test_html_only_when_the_request_ranks_it_above_json(accept: str, html: bool) -> None:
    assert prefers_html(accept) is html


async def test_games_is_a_page_for_browsers_and_json_for_programs(client: TestClient) -> None:
    await archive(client.app[STORE_KEY], finished("*Ala", "*Bob"))

    page = await client.get("/games", headers={"Accept": BROWSER})
    program = await client.get("/games")
    explicit = await client.get("/games.json", headers={"Accept": BROWSER})

    assert page.content_type == "text/html"
    body = await page.text()
    assert 'src="assets/' in body and "/games.js" in body and 'href="assets/' in body
    assert program.content_type == explicit.content_type == "application/json"
    assert [game["blue"] for game in await program.json()] == ["*Ala"]
    assert await explicit.json() == await program.json()
    assert (await client.get("/games.html")).status == 404  # a page only at its own address


async def test_the_list_is_paged_and_filtered_by_player(client: TestClient) -> None:
    store = client.app[STORE_KEY]
    await store.accounts.register("Ala", registered_id("Ala", "pw"), "", "en")
    await archive(store, *(finished("Ala" if n % 3 == 0 else "*Gus", "*Cyd") for n in range(1, 8)))

    async def numbers(**query: str) -> list[int]:
        response = await client.get("/games.json", params=query)
        assert response.status == 200
        return [game["number"] for game in await response.json()]

    assert await numbers() == [7, 6, 5, 4, 3, 2, 1]
    assert await numbers(limit="3") == [7, 6, 5]
    assert await numbers(limit="3", before="5") == [4, 3, 2]
    assert await numbers(limit="3", before="2") == [1]
    assert await numbers(nick="ala") == [6, 3]  # an account's games, its nick written in any case
    assert await numbers(nick="*Gus", before="5") == [4, 2, 1]
    assert await numbers(nick="") == [7, 6, 5, 4, 3, 2, 1]  # the filter form sent empty


@pytest.mark.parametrize(
    ("query", "word"),
    [
        ({"before": "0"}, "before"),
        ({"before": "x"}, "before"),
        ({"limit": "501"}, "limit"),
        ({"nick": "a/b"}, "nick"),
    ],
)
async def test_bad_list_parameters_get_400(client: TestClient, query: dict, word: str) -> None:
    for path in ("/games", "/games.json"):
        response = await client.get(path, params=query)
        assert response.status == 400
        assert word in (await response.json())["error"]


async def test_the_replay_has_the_engines_captures_at_the_right_move(client: TestClient) -> None:
    text = (FIXTURES / CAPTURING).read_text()
    record = read_record(text)
    await archive(client.app[STORE_KEY], finished("*Ala", "*Bob", record=record))

    replay = await (await client.get("/game/1.json")).json()

    assert (replay["width"], replay["height"], replay["variant"]) == (20, 20, "terr")
    assert (replay["blue"], replay["red"], replay["result"]) == ("*Ala", "*Bob", "B+R")
    moves = replay["moves"]
    assert len(moves) == len(record.moves)
    assert [move["dot"] for move in moves[:3]] == [move.value[:2] for move in record.moves[:3]]
    first_capture = next(number for number, move in enumerate(moves, 1) if move["taken"])
    assert first_capture == 70
    for count in (first_capture - 1, first_capture, len(moves)):  # the record cut after `count` moves
        cut = read_record(text)
        cut.moves = cut.moves[:count]
        cut.black_territory = cut.white_territory = None
        assert tuple(moves[count - 1]["score"]) == replay_record(cut).captured
    captured: set[str] = set()
    for move in moves:  # the dots dimmed on the page are the dots the scores count
        captured = (captured | set(move["taken"])) - set(move["freed"])
        assert len(captured) == sum(move["score"])
    taken_at_70 = moves[69]["taken"]
    assert taken_at_70 and all(point not in {m["dot"] for m in moves[69:]} for point in taken_at_70)


async def test_game_pages_and_answers_for_missing_or_bad_numbers(client: TestClient) -> None:
    await archive(client.app[STORE_KEY], finished("*Ala", "*Bob"))

    page = await client.get("/game/1")
    missing_page = await client.get("/game/99")
    missing = await client.get("/game/99.json")
    bad = await client.get("/game/abc.json")

    assert page.status == 200 and page.content_type == "text/html"
    assert 'src="../assets/' in await page.text()
    assert missing_page.status == 404 and "game.js" in await missing_page.text()  # its script says why
    assert (missing.status, (await missing.json())["error"]) == (404, "There is no game number 99.")
    assert bad.status == 400 and "number" in (await bad.json())["error"]


async def test_a_players_rating_history_results_and_games(client: TestClient) -> None:
    store = client.app[STORE_KEY]
    for nick in ("Ala", "Bob"):
        await store.accounts.register(nick, registered_id(nick, "pw"), "", "en")
    await archive(
        store,
        finished("Ala", "Bob", rated=True),
        finished("Ala", "*Gus", rated=True),  # against a guest: not rated
        finished("Bob", "Ala", rated=True),
        finished("Ala", "Bob"),
    )

    ala = await (await client.get("/player/ala.json")).json()
    guest = await (await client.get("/player/*Gus.json")).json()

    assert (ala["nick"], ala["registered"], ala["wins"], ala["draws"], ala["losses"]) == (
        "Ala",
        True,
        1,
        0,
        1,
    )  # blue wins each
    assert [point["game"] for point in ala["ratings"]] == [1, 3]
    assert ala["ratings"][-1]["rating"] == ala["rating"] and ala["deviation"] > 0
    assert [game["number"] for game in ala["games"]] == [4, 3, 2, 1]
    assert guest == {"nick": "*Gus", "registered": False, "games": [guest["games"][0]]}
    assert guest["games"][0]["number"] == 2


async def test_unknown_or_bad_players_get_404_and_400(client: TestClient) -> None:
    nobody = await client.get("/player/Nobody.json")
    nobody_page = await client.get("/player/Nobody")
    bad = await client.get("/player/no!body.json")

    assert nobody.status == 404 and "Nobody" in (await nobody.json())["error"]
    assert nobody_page.status == 404 and "player.js" in await nobody_page.text()
    assert bad.status == 400 and "nick" in (await bad.json())["error"]


async def test_the_four_results_read_back_as_stored(client: TestClient) -> None:
    game = finished("*Ala", "*Bob")
    game.result = Result(WHITE, "T")
    await archive(client.app[STORE_KEY], game)
    assert (await (await client.get("/game/1.json")).json())["result"] == "W+T"


async def test_an_operators_client_has_the_json_but_not_the_pages(
    aiohttp_client: AiohttpClient, settings: Settings, tmp_path: Path
) -> None:
    folder = tmp_path / "client"
    folder.mkdir()
    (folder / "index.html").write_text("<html>zagram client</html>")
    client = await aiohttp_client(create_app(dataclasses.replace(settings, static_dir=folder)))
    await archive(client.app[STORE_KEY], finished("*Ala", "*Bob"))

    listed = await client.get("/games", headers={"Accept": BROWSER})
    page = await client.get("/game/1")
    replay = await client.get("/game/1.json")

    assert listed.content_type == "application/json" and len(await listed.json()) == 1
    assert page.status == 404 and "/game/1.json" in await page.text()
    assert replay.status == 200 and (await replay.json())["number"] == 1


async def test_a_replay_is_computed_once_however_often_it_is_asked(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flood of /game/<n>.json (200 a second from one address are allowed) replayed the record with
    the engine every time; an archived record never changes, so once is enough."""
    await archive(
        client.app[STORE_KEY],
        finished("*Ala", "*Bob", record=read_record((FIXTURES / CAPTURING).read_text())),
    )
    replayed = []
    monkeypatch.setattr(pages, "steps_of", lambda sgf: replayed.append(sgf) or steps_of(sgf))
    answers = [await (await client.get("/game/1.json")).json() for _ in range(20)]
    assert len(replayed) == 1 and all(answer == answers[0] for answer in answers)
    assert len(answers[0]["moves"]) > 69


async def test_a_deleted_players_nick_leaves_the_replay_too(client: TestClient) -> None:
    """`kropki-server user delete` rewrites the archived game in the database, from another process: the
    replay kept in memory named the player until a restart."""
    store = client.app[STORE_KEY]
    await store.accounts.register("Alice", registered_id("Alice", "pw"), "", "en")
    await archive(store, finished("Alice", "*Bob"))
    before = await (await client.get("/game/1.json")).json()
    assert before["blue"] == "Alice"

    await store.accounts.delete("Alice")
    listed = await (await client.get("/games.json")).json()
    replay = await (await client.get("/game/1.json")).json()
    assert replay["blue"] == listed[0]["blue"] == "deleted1"
    assert replay == {**before, "blue": "deleted1"}


def test_the_kept_replays_stay_within_their_bytes() -> None:
    replays = Replays(limit=100)
    for number in range(1, 6):
        replays.keep(number, b"x" * 30)
    assert replays.size <= 100 and replays.get(1) is None and replays.get(5) == b"x" * 30
    replays.get(3)  # asked lately: kept before the older ones
    replays.keep(6, b"y" * 30)
    assert replays.get(3) is not None and replays.get(4) is None


async def test_every_page_of_the_built_in_client_has_its_content_security_policy(client: TestClient) -> None:
    """Found or not (a 404 page still shows, its script says why), and none of the JSON."""
    await archive(client.app[STORE_KEY], finished("*Ala", "*Bob"))
    pages = ["/", "/index.html", "/game/1", "/game/99", "/game/abc", "/player/*Ala", "/player/Nobody"]
    pages += ["/tournament/Cup/standings"]
    for path in pages:
        page = await client.get(path)
        assert page.content_type == "text/html", path
        assert page.headers.getall("Content-Security-Policy") == [CLIENT_POLICY], path
    listed = await client.get("/games", headers={"Accept": BROWSER})
    assert listed.headers.getall("Content-Security-Policy") == [CLIENT_POLICY]
    for path in ("/games", "/game/1.json", "/player/*Ala.json"):
        assert "Content-Security-Policy" not in (await client.get(path)).headers, path
