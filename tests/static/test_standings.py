"""An organiser's round in Chromium, against the server (tests/static/served.py): a table set up for two
players in the built-in client and cancelled mid-game (both see it on the game screen, on a desktop and on a
phone), and the tournament's standings page at both sizes, element sizes and texts, never pixels."""

from __future__ import annotations

import urllib.request
from pathlib import Path
from urllib.parse import quote, urlencode

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.static.served import ServerInThread
from tests.static.test_client import Player
from tests.test_cli import run_cli
from tests.test_restart import Guest

CUP = "Autumn Cup"


class Organiser:
    """An organiser's script: a key made with the admin command, and plain GETs."""

    def __init__(self, serving: ServerInThread) -> None:
        self.server = serving
        made = run_cli("tournament-key", "--db", serving.db_url, "add", "cup-bot", "--tournament", CUP)
        assert made.returncode == 0, made.stderr
        self.key = made.stdout.split()[-1]

    def get(self, **params: str) -> str:
        query = urlencode({**params, "key": self.key})
        with urllib.request.urlopen(f"{self.server.base}/a.kropki?{query}", timeout=10) as response:
            return response.read().decode()

    def set_up(self, first: str, second: str) -> int:
        answer = self.get(
            co="setUpTable", gameType="1010stanF0.600.5", pl1=first, pl2=second, tourn=CUP, tRound="1"
        )
        assert answer.startswith("ok."), answer
        return int(answer[3:])


def no_sideways_scroll(page: Page) -> None:
    width = page.evaluate("document.documentElement.clientWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    for selector in ("#standings", "#games"):
        box = page.locator(selector).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, (selector, box, width)


def test_a_cancelled_game_ends_on_both_game_screens_and_the_standings_page_fits_both_sizes(
    browser: Browser,
    server: ServerInThread,
    tmp_path: Path,
) -> None:
    organiser = Organiser(server)
    ala, bob = Player(browser, server), Player(browser, server, phone=True)
    ala.log_in("Ala")
    bob.log_in("Bob")
    mistaken = organiser.set_up("*Ala", "*Bob")
    for player in (ala, bob):  # seated at once, as for any set-up table
        expect(player.page.locator("#blue-name")).to_have_text("*Ala")
        expect(player.page.locator("#red-name")).to_have_text("*Bob")
    ala.play("bc")
    bob.play("cc")

    assert organiser.get(co="cancelTable", table=str(mistaken)) == "ok"
    for player in (ala, bob):
        expect(player.page.locator("#turn")).to_have_text("Game over: cancelled")
        player.page.screenshot(path=tmp_path / f"cancelled-{'phone' if player is bob else 'desktop'}.png")
        expect(player.page.locator("#notice")).to_have_text(
            "The organiser cancelled this game: it does not count."
        )
        expect(player.page.locator("#notice")).to_be_visible()
        player.sees_chat("The organiser cancelled this game: it does not count.")
        expect(player.page.locator('[data-propose="resign"]')).to_be_hidden()
        player.sees_dot("bc")  # the board stays as it was
    assert organiser.get(co="cancelTable", table=str(mistaken)) == "err.alreadyCancelled"

    cid, dan = Guest(server, "cid12345", "*Cid"), Guest(server, "dan12345", "*Dan")
    cid.login()
    dan.login()
    finished = organiser.set_up("*Cid", "*Dan")
    cid.ok(co="propose", table=str(finished), proposal="resign")  # Dan (red) wins
    playing = organiser.set_up("*Eve", "*Fay")

    for player in (ala, bob):
        page = player.context.new_page()
        page.goto(f"{server.base}/tournament/{quote(CUP)}/standings")
        expect(page.locator("#title")).to_have_text(f"{CUP}: standings")
        rows = page.locator("#standings tbody tr")
        expect(rows).to_have_count(4)  # Ala and Bob's only game was cancelled: they are not listed
        # each cell's own text (a player's games in progress are a line of their own in the games cell)
        cells = rows.evaluate_all(
            "rows => rows.map((row) => [...row.cells].map((c) => c.firstChild.textContent))"
        )
        assert cells == [
            ["1", "*Dan", "1", "1", "0", "0"],
            ["2", "*Cid", "0", "1", "1", "0"],
            ["3", "*Eve", "0", "0", "0", "0"],
            ["3", "*Fay", "0", "0", "0", "0"],
        ]
        expect(rows.nth(2).locator(".playing")).to_have_text("+1 playing")
        games = page.locator("#games li")
        expect(games).to_have_count(3)
        expect(page.locator(f'#games li[data-table="{mistaken}"] .outcome')).to_have_text(
            "cancelled by the organiser"
        )
        expect(page.locator(f'#games li[data-table="{finished}"] .outcome')).to_have_text(
            "*Dan wins by resignation"
        )
        expect(page.locator(f'#games li[data-table="{playing}"] .outcome')).to_have_text(
            "in progress, 0 moves"
        )
        sgf = page.locator(f'#games li[data-table="{finished}"] a.sgf')
        expect(sgf).to_be_visible()
        record = page.request.get(sgf.evaluate("link => link.href"))
        assert record.ok and "RE[W+R]" in record.text() and "EV[Autumn Cup]" in record.text()
        game_page = page.locator(f'#games li[data-table="{finished}"] a.game')  # results link their pages
        number = sgf.evaluate("link => link.href").rsplit("/", 1)[1]
        assert game_page.evaluate("link => link.href").endswith(f"/game/{number}")
        winner = page.locator("#standings tbody tr .who a").first
        assert winner.evaluate("link => link.href").endswith("/player/*Dan")  # encodeURIComponent keeps *
        for selector in ("#standings", "#games", "#results-json", "#all-games"):
            expect(page.locator(selector)).to_be_visible()
        no_sideways_scroll(page)
        name_cell = page.locator("#standings tbody tr .who").first.bounding_box()
        assert name_cell is not None and name_cell["width"] >= 40  # the nick has room, not squeezed
        results = page.request.get(page.locator("#results-json").evaluate("link => link.href"))
        assert results.ok and results.json()["tournament"] == CUP

        page.screenshot(
            path=tmp_path / f"standings-{'phone' if player is bob else 'desktop'}.png", full_page=True
        )
        page.select_option("#language", "pl")
        expect(page.locator("#title")).to_have_text(f"{CUP}: klasyfikacja")
        expect(page.locator("#standings thead th").nth(2)).to_have_text("Pkt")
        no_sideways_scroll(page)
        page.select_option("#language", "en")  # the choice is remembered: the client's own page too
        page.close()

    phone_box = bob.context.pages[0].viewport_size
    assert phone_box == {"width": 390, "height": 844}
    ala.close()
    bob.close()


@pytest.mark.parametrize(
    "name",
    [
        "Nothing",
        # decodes to no UTF-8: the page's script stopped at its first line, the page stayed blank
        "%E0%A4",
    ],
)
def test_the_standings_page_of_a_tournament_that_has_no_table_says_so(
    browser: Browser, server: ServerInThread, name: str
) -> None:
    player = Player(browser, server, phone=True)
    page = player.context.new_page()
    page.goto(f"{server.base}/tournament/{name}/standings")
    expect(page.locator("#notice")).to_have_text(f"No tables were set up for the tournament {name}.")
    expect(page.locator("#standings")).to_be_hidden()
    player.close()


def test_a_team_tables_players_each_link_their_own_page(
    browser: Browser,
    server: ServerInThread,
) -> None:
    organiser = Organiser(server)
    answer = organiser.get(
        co="setUpTable",
        gameType="1010stanF0.600.5",
        pl1="*Gus",
        pl2="*Hal",
        pl3="*Ivy",
        pl4="*Jo",
        sayHiTimes="0.0.0.0",
        tourn=CUP,
        tRound="1",
    )
    assert answer.startswith("ok."), answer
    page = Player(browser, server).context.new_page()
    page.goto(f"{server.base}/tournament/{quote(CUP)}/standings")
    blue = page.locator("#games li .players a.blue")
    expect(blue).to_have_count(2)  # the team "*Gus, *Ivy": a link each, not one link to no page
    hrefs = blue.evaluate_all("links => links.map((link) => link.href)")
    assert [href.rsplit("/", 1)[1] for href in hrefs] == ["*Gus", "*Ivy"]
