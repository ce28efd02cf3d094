"""A bot in the built-in client, in Debian's Chromium: marked in the lobby, at its table, on its page and on
its archived game's page, and playing a person through the bot API (examples/random_bot.py in a thread,
against tests/static/served.py's server)."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from examples.random_bot import Api, play
from tests.static.served import ServerInThread
from tests.static.test_client import Player
from tests.test_cli import run_cli


@pytest.fixture
def bot(server: ServerInThread) -> Iterator[str]:
    """`kropki-server bot create RoboBot` on the running server's database, and the example bot
    playing as it until its first game is archived."""
    made = run_cli("bot", "create", "RoboBot", "--db", server.db_url)
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    player = threading.Thread(
        target=play, args=(Api(server.base, token), 1, None, random.Random(3)), daemon=True
    )
    player.start()
    yield "RoboBot"
    player.join(timeout=5)


def test_a_person_sees_the_bot_marked_and_plays_it(
    browser: Browser, server: ServerInThread, bot: str
) -> None:
    ala = Player(browser, server)
    ala.log_in("Ala")
    row = ala.page.locator(f'#players li[data-nick="{bot}"]')
    expect(row).to_contain_text(f"{bot} [bot]")
    ala.set_new_game(crosses="0")  # not Player.invite: the bot accepts before the invitation shows
    row.locator(".invite").click()
    expect(ala.page.locator("#red-name")).to_have_text(f"{bot} [bot]")  # at the table too
    expect(ala.page.locator("#tables li", has_text=f"*Ala – {bot} [bot]")).to_have_count(1)
    ala.play("ee")
    expect(ala.page.locator("#board [data-dot]")).to_have_count(2)  # the bot answered
    ala.resign()
    ala.sees_chat("RoboBot won by resignation.")
    ala.sees_chat("Game saved as number 1.")

    page = ala.context.new_page()
    page.goto(f"{server.base}/player/{bot}")
    expect(page.locator("#heading")).to_have_text(f"{bot} [bot]")
    expect(page.locator("#game-list .game-row .players")).to_have_text(f"*Ala – {bot} [bot]")
    page.goto(f"{server.base}/game/1")
    expect(page.locator("#red-name")).to_have_text(f"{bot} [bot]")
    expect(page.locator("#blue-name")).to_have_text("*Ala")
    ala.close()
