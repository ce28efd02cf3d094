"""The archive's pages (/games, /game/<n>, /player/<nick>) in Debian's Chromium at a desktop's and a phone's
size, against the server (tests/static/served.py) whose database tests/static/archive.py filled first."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from server.config import Settings
from tests.static.archive import Archive, fill
from tests.static.served import ServerInThread
from tests.static.test_client import Player, new_context
from tests.static.test_keyboard import tab_round, tab_to, unnamed_controls

SIZES = {"desktop": False, "phone": True}


@pytest.fixture
def archive(settings: Settings) -> Archive:
    return fill(settings.db_url)


@pytest.fixture
def server(settings: Settings, archive: Archive) -> Iterator[ServerInThread]:
    with ServerInThread(settings.db_url).running() as running:
        yield running


@pytest.fixture(params=SIZES)
def page(request: pytest.FixtureRequest, browser: Browser, server: ServerInThread) -> Iterator[Page]:
    phone = SIZES[request.param]
    size = {"width": 390, "height": 844} if phone else {"width": 1280, "height": 900}
    context = new_context(browser, viewport=size, is_mobile=phone, has_touch=phone)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert errors == []


def visit(page: Page, server: ServerInThread, address: str) -> None:
    page.goto(server.base + address)
    expect(page.locator("body[data-ready]")).to_have_count(1)


def fits_the_width(page: Page) -> None:
    """No horizontal scroll: nothing is wider than the window."""
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_the_list_pages_back_and_filters_by_player(
    page: Page, server: ServerInThread, archive: Archive
) -> None:
    visit(page, server, "/games")
    rows = page.locator("#game-list li")
    expect(rows).to_have_count(30)
    expect(rows.first).to_contain_text(f"#{archive.games}")
    fits_the_width(page)
    page.click("#older")
    expect(rows).to_have_count(archive.games - 30)
    expect(rows.last).to_contain_text("#1")
    expect(page.locator("#older")).to_be_hidden()
    page.click("#newest")
    expect(rows).to_have_count(30)

    page.fill("#filter-nick", "Ala")
    page.click("#filter button[type=submit]")
    expect(page.locator("#heading")).to_have_text("Games of Ala")
    expect(rows).to_have_count(archive.rated["Ala"])
    for text in rows.all_inner_texts():
        assert "Ala" in text
    page.fill("#filter-nick", "no/body")
    page.click("#filter button[type=submit]")
    expect(page.locator("#notice")).to_contain_text("nick= must be a player's nick")


def test_a_game_replays_by_buttons_and_keys_with_captures_at_their_move(
    page: Page, server: ServerInThread, archive: Archive
) -> None:
    visit(page, server, "/game/1")
    counter, captured = page.locator("#move-counter"), page.locator("#board .dot.captured")
    expect(counter).to_have_text("Move 110 of 110")  # the end first
    board = page.locator("#board").bounding_box()
    assert board is not None and board["width"] >= (300 if page.viewport_size["width"] < 500 else 600)
    fits_the_width(page)
    page.click("#first")
    expect(counter).to_have_text("Move 0 of 110")
    expect(page.locator("#board .dot")).to_have_count(0)
    expect(page.locator("#first")).to_be_disabled()
    page.click("#next")
    page.click("#next")
    expect(page.locator("#board .dot")).to_have_count(2)
    page.click("#previous")
    expect(counter).to_have_text("Move 1 of 110")

    before = archive.first_capture - 1
    page.click(f'#move-list [data-move="{before}"] button')
    expect(counter).to_have_text(f"Move {before} of 110")
    expect(captured).to_have_count(0)
    expect(page.locator(".realm")).to_have_count(0)
    page.keyboard.press("ArrowRight")  # the capturing move
    expect(counter).to_have_text(f"Move {archive.first_capture} of 110")
    expect(captured).to_have_count(1)
    expect(page.locator(".realm-2")).to_have_count(1)
    expect(page.locator("#red-score")).to_have_text("1")
    expect(page.locator(f'#move-list [data-move="{archive.first_capture}"] button')).to_have_attribute(
        "aria-current", "step"
    )
    page.keyboard.press("ArrowLeft")
    expect(captured).to_have_count(0)
    expect(page.locator("#red-score")).to_have_text("0")
    page.keyboard.press("End")
    expect(counter).to_have_text("Move 110 of 110")
    page.keyboard.press("Home")
    expect(counter).to_have_text("Move 0 of 110")

    expect(page.locator("#result")).to_have_text("Bob wins by 5")
    expect(page.locator("#sgf")).to_have_attribute("href", "../sgf/1")
    expect(page.locator("#analyse")).to_have_attribute("href", "../?analyse=1")
    page.click("#blue-name")
    expect(page.locator("#heading")).to_have_text("Ala")


def test_a_game_replays_by_keyboard_alone_and_each_move_is_heard(
    browser: Browser, server: ServerInThread, archive: Archive
) -> None:
    """Tab to the buttons (their focus seen), Enter on them, arrows in the move list (one Tab stop, the
    current move's); the live region says each move; a button at its end keeps the focus; the fields of
    the header keep their own keys."""
    page = new_context(browser, viewport={"width": 1280, "height": 900}).new_page()
    visit(page, server, "/game/1")
    counter, heard = page.locator("#move-counter"), page.locator("#announcer")
    expect(heard).to_have_attribute("aria-live", "polite")
    assert unnamed_controls(page) == []
    expect(page.get_by_role("img", name="Board 20 × 20")).to_be_visible()

    first = page.get_by_role("button", name="First")
    tab_to(page, first)
    assert first.evaluate("(button) => getComputedStyle(button).outlineStyle") != "none"  # the focus is seen
    page.keyboard.press("Enter")
    expect(counter).to_have_text("Move 0 of 110")
    expect(heard).to_have_text("Move 0 of 110")
    forward = page.get_by_role("button", name="Next")
    tab_to(page, forward)
    page.keyboard.press("Enter")
    page.keyboard.press("Space")
    expect(heard).to_have_text(re.compile(r"^Move 2 of 110: 2\. red \d+:\d+$"))

    page.keyboard.press("End")
    page.keyboard.press("ArrowLeft")
    expect(counter).to_have_text("Move 109 of 110")
    page.keyboard.press("Enter")  # the last move: Next can go no further, and keeps the focus
    expect(counter).to_have_text("Move 110 of 110")
    expect(forward).to_be_disabled()
    expect(forward).to_be_focused()
    page.keyboard.press("Shift+Tab")
    expect(page.get_by_role("button", name="Previous")).to_be_focused()

    current = page.locator('#move-list [aria-current="step"]')
    tab_to(page, current)  # the list is one stop: its current move
    expect(current).to_have_text(re.compile(r"^110\. "))
    page.keyboard.press("ArrowUp")
    expect(page.locator("#move-list button:focus")).to_have_text(re.compile(r"^109\. "))
    expect(heard).to_contain_text("Move 109 of 110: 109. ")
    page.keyboard.press("Tab")  # out of the list, not on to its next move
    assert page.evaluate("!document.querySelector('#move-list').contains(document.activeElement)")

    rounds = tab_round(page)
    assert len(rounds) < 30, rounds  # a round of the page by Tab, not one stop per move

    language = page.locator("#language")
    tab_to(page, language)
    page.keyboard.press("End")  # the select's own key: its last language, not the game's last move
    expect(language).to_have_value("ua")
    page.keyboard.press("Home")
    expect(language).to_have_value("en")
    expect(counter).to_have_text("Move 109 of 110")

    page.select_option("#language", "pl")
    expect(page.get_by_role("img", name="Plansza 20 × 20")).to_be_visible()
    tab_to(page, page.get_by_role("button", name="Dalej"))
    page.keyboard.press("Enter")
    expect(heard).to_contain_text("Ruch 110 z 110: 110. ")
    page.context.close()


def test_the_player_page_has_a_point_per_rated_game(
    page: Page, server: ServerInThread, archive: Archive
) -> None:
    visit(page, server, "/player/Ala")
    expect(page.locator("#heading")).to_have_text("Ala")
    expect(page.locator("#rating-graph .rating-point")).to_have_count(archive.rated["Ala"])
    expect(page.locator("#record")).to_contain_text("won")
    graph = page.locator("#rating-graph").bounding_box()
    assert graph is not None and graph["width"] >= 300
    fits_the_width(page)
    games = page.locator("#game-list li")
    expect(games).to_have_count(archive.rated["Ala"])
    expect(games.locator(".rated").first).to_have_text("Rated.")  # issue 47: rated or not, and why
    games.last.locator("a").first.click()  # the oldest: game 1
    expect(page.locator("#heading")).to_have_text("Game 1")

    visit(page, server, "/player/*Gus")  # a guest: games only
    expect(page.locator("#guest")).to_be_visible()
    expect(page.locator("#rating-graph")).to_be_hidden()
    expect(page.locator("#game-list li")).to_have_count(20)
    expect(page.locator("#game-list li .rated").first).to_have_text("")  # a free game needs no reason
    page.goto(f"{server.base}/player/Nobody")
    expect(page.locator("#notice")).to_have_text(
        "There is no player with this nick: no account and no archived game has it."
    )


def test_an_address_whose_nick_is_no_text_says_it_names_no_player(page: Page, server: ServerInThread) -> None:
    """`%E0%A4` decodes to no UTF-8: the page's script stopped at its first line, and the page stayed
    without its texts or notice (the fixture also fails on the script's error)."""
    visit(page, server, "/player/%E0%A4")
    expect(page.locator("#notice")).to_contain_text("A player's address is /player/<nick>")


def test_lobby_nicks_open_player_pages_and_a_game_continues_on_an_analysis_table(
    browser: Browser,
    server: ServerInThread,
) -> None:
    ala, bob = Player(browser, server), Player(browser, server, phone=True)
    ala.log_in("Ala")
    bob.log_in("Bob")
    link = ala.page.locator('#players li[data-nick="*Bob"] a.nick')
    expect(link).to_have_attribute("target", "_blank")  # a game in progress stays open
    with ala.page.context.expect_page() as opened:
        link.click()
    profile = opened.value
    expect(profile.locator("#heading")).to_have_text("*Bob")
    expect(profile.locator("#game-list li")).to_have_count(10)
    profile.close()

    bob.page.goto(f"{server.base}/?analyse=1")  # the game page's link, in a tab already logged in
    expect(bob.page.locator("#turn")).to_have_text("Analysis: the next dot is blue")
    expect(bob.page.locator("#board .dot")).to_have_count(110)
    ala.page.goto(f"{server.base}/?analyse=999")  # a number the archive does not have: said in words
    expect(ala.page.locator("#notice")).to_have_text("There is no game with this number.")
    ala.close()
    bob.close()
