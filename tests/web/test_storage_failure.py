"""A database that stops taking writes, over the wire, with real failing storage (a SQLite file whose
write lock another connection holds, or a PostgreSQL database turned read-only): nothing that is not
stored is answered as done, the game waits with its clocks standing still, /readyz and /metrics say so,
the log says it once, and everything goes on by itself when storage is back."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time

import pytest
from sqlalchemy import select

from server.config import Settings
from server.store import writer
from server.store.models import JournalEntry
from server.web.common import STORE_KEY
from tests.store.breakers import Breaker, breaker_for, until
from tests.web.test_games import Players, errors
from tests.web.test_stream import chat_texts

GAME_TYPE = "0808stanF0.300.0"  # 300 s each, no increment
FAILING = "storage failing"
BACK = "storage back"
# a locked write gives up quickly, and is retried often: many retries within a short test
pytestmark = pytest.mark.usefixtures("quick_retries")


@pytest.fixture
def breaker(settings: Settings) -> Breaker:
    return breaker_for(settings.db_url)


async def http_move(game: Players, player_secret: str, uid: int, where: str) -> str:
    response = await game.client.get(
        "/a.kropki",
        params={"co": "graczStawiaKropke", "idGracza": player_secret, "table": str(uid), "where": where},
    )
    assert response.status == 200
    return await response.text()


async def stored_moves(game: Players, uid: int) -> list[str]:
    store = game.client.app[STORE_KEY]
    async with store.engine.connect() as connection:
        rows = await connection.execute(
            select(JournalEntry.data)
            .where(JournalEntry.uid == uid, JournalEntry.kind == "move")
            .order_by(JournalEntry.seq)
        )
        return [json.loads(data)["w"] for (data,) in rows]


def lines_of(caplog: pytest.LogCaptureFixture, words: str) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.getMessage().startswith(words)]


async def test_nothing_unstored_is_acknowledged_and_play_goes_on_when_storage_is_back(
    game: Players, breaker: Breaker, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    store = game.client.app[STORE_KEY]
    uid, blue, red = await game.start(GAME_TYPE)
    room = game.room(uid)
    assert await http_move(game, blue.secret, uid, "aa") == ""
    assert await stored_moves(game, uid) == ["aa"]

    await breaker.break_storage()
    # The writer learns of the failure only from this move's own write: the move is not stored, so the
    # player is not told it was taken, and it is taken back (tests/web/test_take_back.py).
    assert await http_move(game, red.secret, uid, "hh") == "err.storage"
    assert store.writer.storage_failure is not None
    room = game.room(uid)
    assert len(room.game.moves) == 1 and room.game.to_move == 2
    # From then on nothing that would need a write changes anything: refused before it is made.
    assert await http_move(game, red.secret, uid, "hh") == "err.storage"
    assert len(room.game.moves) == 1
    chat = await game.client.get(
        "/a.kropki", params={"co": "dodajWpis", "idGracza": blue.secret, "table": "0", "newMsgs": "hello"}
    )
    assert await chat.text() == "err.storage"
    # A command inside a poll: the poll is answered, the refusal is an error line, k stays put.
    await red.poll()  # the table taken back: one reply without it, then its whole state
    before = await red.poll()
    number = red.send("s", uid, "hh")
    refused = await red.poll()
    assert refused.processed == before.processed < number
    assert any("cannot save" in line for line in errors(refused, uid))
    assert len(room.game.moves) == 1
    again = await red.poll()  # the resent command is not applied (nor refused) twice
    assert again.processed == before.processed and not errors(again, uid)
    # The clocks stand still: no one runs out of time while no one can move.
    clocks = room.flags()
    assert re.fullmatch(r"f2_p\d+\.p\d+", clocks), clocks
    game.timers.advance(10_000)
    assert room.game.result is None and room.flags() == clocks
    # Probes and metrics say so; logins and polls go on.
    ready = await game.client.get("/readyz")
    body = await ready.json()
    assert ready.status == 503 and body["status"] == "unready"
    failing = re.fullmatch(r"storage failing since \S+: (.*)", body["reason"])
    assert failing and breaker.gives(failing[1]), body
    metrics = await (await game.client.get("/metrics")).text()
    assert "kropki_storage_failing 1.0" in metrics
    queued = float(re.search(r"^kropki_writes_queued (\S+)$", metrics, re.M)[1])  # type: ignore[index]
    assert queued >= 2
    late = type(blue)(game.client, "zed000", "*Zed")
    assert await late.login() == ""
    assert (await late.poll()).status == "ok"
    await asyncio.sleep(1.0)  # many retries, many requests: still one line in the log
    for _ in range(5):
        assert await http_move(game, red.secret, uid, "hh") == "err.storage"
    assert len(lines_of(caplog, FAILING)) == 1 and lines_of(caplog, FAILING)[0].levelno == logging.WARNING
    assert not lines_of(caplog, BACK)

    await breaker.mend()
    await until(lambda: store.writer.storage_failure is None)
    assert len(lines_of(caplog, BACK)) == 1 and len(lines_of(caplog, FAILING)) == 1
    assert (await game.client.get("/readyz")).status == 200
    assert "kropki_storage_failing 0.0" in await (await game.client.get("/metrics")).text()
    # The move queued just before the failure was taken back: it is never written; k catches up.
    assert await stored_moves(game, uid) == ["aa"]
    caught_up = await red.poll()
    assert caught_up.processed == number
    # The clocks go on from where they stood, and the game goes on.
    assert re.fullmatch(r"f2_\d+\.\d+", room.flags()), room.flags()
    game.timers.advance(5)
    assert room.clock is not None and room.clock.left(2) == pytest.approx(300 - 5, abs=0.01)
    assert await http_move(game, red.secret, uid, "hh") == ""
    assert await http_move(game, blue.secret, uid, "ca") == ""
    assert await stored_moves(game, uid) == ["aa", "hh", "ca"]
    assert chat_texts((await red.poll()).lines(uid)) is not None


async def test_a_player_trying_again_finds_storage_back_without_waiting_out_the_writers_back_off(
    game: Players, breaker: Breaker, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While nobody asks, the writer tries storage again after waits that double up to RETRY_MOST (10 s
    in a server). A player's action refused for want of storage has it tried at once (at most every
    RETRY_FIRST), so once storage is back the player's next try goes in, however long the outage was.
    Before, it was refused until the writer's wait ran out: up to 10 s more of a game standing still."""
    monkeypatch.setattr(writer, "RETRY_FIRST", 0.05)
    monkeypatch.setattr(writer, "RETRY_MOST", 30.0)
    caplog.set_level(logging.DEBUG, logger="server.store.writer")
    store = game.client.app[STORE_KEY]
    uid, blue, red = await game.start(GAME_TYPE)
    assert await http_move(game, blue.secret, uid, "aa") == ""
    await breaker.break_storage()
    assert await http_move(game, red.secret, uid, "hh") == "err.storage"
    # Nobody plays for a while: the writer's waits grow, 0.05 s, 0.1, ... and now 3.2.
    await until(lambda: len(lines_of(caplog, "write failed again")) >= 7)
    await breaker.mend()
    mended = time.monotonic()
    while (answer := await http_move(game, red.secret, uid, "hh")) == "err.storage":
        await asyncio.sleep(0.05)
    assert answer == ""
    assert time.monotonic() - mended < 1.5
    assert store.writer.storage_failure is None
    assert await stored_moves(game, uid) == ["aa", "hh"]


async def test_a_poll_whose_commands_are_not_stored_does_not_count_them_as_processed(
    game: Players, breaker: Breaker
) -> None:
    """k in `m<i>.<j>.<k>` tells the client not to send those commands again: a chat line accepted just
    before storage failed is not acknowledged until it is stored."""
    store = game.client.app[STORE_KEY]
    await game.ala.poll()
    await breaker.break_storage()
    number = game.ala.say(0, "written later")
    reply = await game.ala.poll()  # the line is in the live lobby, its write waits for storage
    assert reply.processed < number
    assert store.writer.storage_failure is not None
    await breaker.mend()
    await until(lambda: store.writer.storage_failure is None)
    reply = await game.ala.poll()
    assert reply.processed == number
    lobby = [text for _, _, text in chat_texts((await game.bob.poll(msg_no="0")).lines(0))]
    assert lobby.count("written later") == 1  # the resent command was not applied twice


async def test_an_account_cannot_be_made_while_storage_fails_and_no_trace_is_logged(
    game: Players, breaker: Breaker, caplog: pytest.LogCaptureFixture
) -> None:
    await breaker.break_storage()
    try:
        response = await game.client.get(
            "/auth.py",
            params={"co": "rejestruj", "opisGracza": "Carol", "idGracza": "CarolSecret1", "email": "v"},
        )
        assert await response.text() == "nieOk.storage"
    finally:
        await breaker.mend()
    assert not [record for record in caplog.records if record.getMessage().startswith("request failed")]
    response = await game.client.get(
        "/auth.py",
        params={"co": "rejestruj", "opisGracza": "Carol", "idGracza": "CarolSecret1", "email": "v"},
    )
    assert await response.text() == "ok.zarejestrowalem."
