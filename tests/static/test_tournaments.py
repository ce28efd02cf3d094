"""A tournament the server runs, in Chromium against the server (tests/static/served.py): an organiser's
script creates an arena, two players join it from the lobby (one on a phone), the server pairs them at its
start and seats them, one resigns, and the standings page ranks them by the arena's points."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote, urlencode

from playwright.sync_api import Browser, expect

from tests.static.served import ServerInThread
from tests.static.test_client import Player
from tests.test_cli import run_cli

ARENA = "Evening Arena"
START_IN = 8  # seconds: both players join before the start


def test_two_players_join_an_arena_in_the_lobby_play_and_see_its_standings(
    browser: Browser,
    server: ServerInThread,
    tmp_path: Path,
) -> None:
    made = run_cli("tournament-key", "--db", server.db_url, "add", "arena-bot")
    assert made.returncode == 0, made.stderr
    query = {
        "co": "createTournament",
        "key": made.stdout.split()[-1],
        "tourn": ARENA,
        "kind": "arena",
        "minutes": "5",
        "gameType": "1010stanF0.600.5",
        "start": str(int(time.time()) + START_IN),
        "sayHi": "0",
    }
    with urllib.request.urlopen(f"{server.base}/a.kropki?{urlencode(query)}", timeout=10) as response:
        assert response.read().decode() == "ok"

    ala, bob = Player(browser, server), Player(browser, server, phone=True)
    ala.log_in("Ala")
    bob.log_in("Bob")
    for player in (ala, bob):
        row = player.page.locator(f'#hosted li[data-tournament="{ARENA}"]')
        expect(row).to_contain_text("arena, 5 minutes")
        expect(row).to_contain_text("starts")
        row.locator("button.join-tournament").click()
        expect(row.locator("button.leave-tournament")).to_have_text("Withdraw")
    last_to_join = bob.page.locator(f'#hosted li[data-tournament="{ARENA}"]')
    expect(last_to_join).to_contain_text("players: 2")
    bob.page.screenshot(path=tmp_path / "lobby-tournaments-phone.png")

    # the arena starts and pairs them within a wave: both are seated at the same table
    for player in (ala, bob):
        expect(player.page.locator("#event-label")).to_contain_text(ARENA, timeout=(START_IN + 15) * 1000)
    blue = ala.page.locator("#blue-name").inner_text()
    assert {blue, ala.page.locator("#red-name").inner_text()} == {"*Ala", "*Bob"}
    first, second = (ala, bob) if blue == "*Ala" else (bob, ala)
    first.play("bb")
    second.play("cc")
    ala.resign()
    expect(bob.page.locator("#turn")).to_contain_text("Game over", timeout=10_000)

    standings = f"{server.base}/tournament/{quote(ARENA, safe='')}/standings"
    with urllib.request.urlopen(f"{standings}.json", timeout=10) as response:
        rows = json.loads(response.read())["standings"]
    assert [(row["player"], row["points"], row["games"]) for row in rows] == [("*Bob", 2, 1), ("*Ala", 0, 1)]
    page = ala.context.new_page()
    page.goto(standings)
    expect(page.locator("#hosted-summary")).to_contain_text("arena, 5 minutes")
    expect(page.locator("#standings thead")).to_contain_text("Wins")
    expect(page.locator("#standings tbody tr").first).to_contain_text("*Bob")
    expect(page.locator("#rules")).to_contain_text("A win is 2 points")
    page.screenshot(path=tmp_path / "arena-standings.png")
    assert not ala.errors and not bob.errors, ala.errors + bob.errors
