"""The built-in client when the server takes back a move it could not save (server/hub/takeback.py), in
Debian's Chromium against a real `serve` whose SQLite file fills its disk: the table leaves one reply
and comes back whole, so both boards drop the dot, and the server's line says why in each reader's
language."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.static.test_client import Player, start_game
from tests.store.breakers import fill, small_disk
from tests.test_restart import Server


@pytest.fixture
def server_on_a_small_disk(tmp_path: Path) -> Iterator[tuple[Server, Path]]:
    with small_disk(tmp_path / "disk", "8m") as disk:
        server = Server(tmp_path, f"sqlite+aiosqlite:///{disk / 'kropki.sqlite3'}")
        with server.running(migrate=True):
            yield server, disk


def ready(server: Server, seconds: float = 30.0) -> None:
    """Until /readyz says storage takes writes again (it is tried again after 1 s, then 2, 4...)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(f"{server.base}/readyz", timeout=5) as response:
                if response.status == 200:
                    return
        except urllib.error.HTTPError:
            pass
        assert time.monotonic() < deadline, "storage did not come back"
        time.sleep(0.2)


def stored(server: Server, seconds: float = 15.0) -> None:
    """Until every write the server was handed is stored (/metrics: kropki_writes_queued 0)."""
    deadline = time.monotonic() + seconds
    while True:
        with urllib.request.urlopen(f"{server.base}/metrics", timeout=5) as response:
            if "\nkropki_writes_queued 0.0\n" in response.read().decode():
                return
        assert time.monotonic() < deadline, "writes still queued"
        time.sleep(0.1)


def played_on_a_full_disk(server: Server, disk: Path, ala: Player, point: str) -> Path:
    """Ala plays `point` once the disk is full, so that the move's own write is the one storage refuses
    (the filler is returned); the move is answered `err.storage` either way (the client's notice). Should
    another write find the disk full first (the sessions' heartbeat, every 5 s), storage is failing
    before the move comes, which is then refused before it changes anything, and nothing is taken
    back: the disk is given back and she plays again. Red once in a fresh-clone make test without the wait
    and the retry, the chat empty: most likely Bob's language change was stored after the disk filled."""
    chat, notice = ala.page.locator("#chat-lines"), ala.page.locator("#notice")
    for _ in range(3):
        stored(server)
        filler = fill(disk)
        ala.page.click(f'#board [data-point="{point}"]')
        expect(notice).to_contain_text("cannot save anything")
        deadline = time.monotonic() + 5  # the line follows the refused write at once
        while time.monotonic() < deadline:
            if "taken back" in chat.inner_text():
                return filler
            time.sleep(0.1)
        filler.unlink()
        ready(server)
        notice.click()  # read: it goes
    raise AssertionError("every move was refused before the disk filled behind it")


def test_a_move_the_server_could_not_save_leaves_both_boards_with_a_line_saying_why(
    browser: Browser, server_on_a_small_disk: tuple[Server, Path], tmp_path: Path
) -> None:
    server, disk = server_on_a_small_disk
    ala, bob = Player(browser, server), Player(browser, server, phone=True)
    start_game(ala, bob)
    ala.play("bc")
    bob.sees_dot("bc")
    bob.play("cc")
    ala.sees_dot("cc")
    with bob.page.expect_response(lambda response: "co=changeLang" in response.url):
        bob.page.select_option("#language", "pl")

    filler = played_on_a_full_disk(server, disk, ala, "cb")
    ala.sees_chat("The server could not save what was last played here, so it was taken back")
    bob.sees_chat("Serwer nie mógł zapisać ostatnio zagranych ruchów, więc je cofnięto")
    for player in (ala, bob):
        expect(player.page.locator('#board [data-dot="cb"]')).to_have_count(0)
        player.sees_dot("bc")
        player.sees_dot("cc")
    expect(ala.page.locator("#turn")).to_have_text("Your move")

    filler.unlink()  # storage is back: the game goes on from the stored position
    ready(server)
    ala.play("cb")
    bob.sees_dot("cb")
    ala.screenshot(tmp_path, "ala")
    bob.screenshot(tmp_path, "bob")
    ala.close()
    bob.close()
