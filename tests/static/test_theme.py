"""Dark mode (issue 47, item 5) in Debian's Chromium against the server (tests/static/served.py): the client
follows the system's prefers-color-scheme (Playwright emulates it), the header's switch (auto, light, dark)
overrides it and is remembered after a reload, the board stays readable in both (blue and red dots, realms,
the last move's ring, against the board's own colour), and the archive's pages follow the same choice."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.static.served import ServerInThread
from tests.static.test_client import Player, play_until_the_ring, start_game

LIGHT_PAPER, DARK_PAPER = (251, 250, 245), (21, 23, 27)  # client.css --paper in each theme
READABLE = 3.0  # WCAG's contrast for graphics (1.4.11): a dot, a ring, a realm's edge against the board


def colour(text: str) -> tuple[int, int, int]:
    found = re.fullmatch(r"rgba?\((\d+), (\d+), (\d+)(?:, [\d.]+)?\)", text)
    assert found, text
    return int(found[1]), int(found[2]), int(found[3])


def luminance(rgb: tuple[float, float, float]) -> float:
    def linear(channel: float) -> float:
        channel /= 255
        return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4

    red, green, blue = (linear(channel) for channel in rgb)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    lighter, darker = sorted((luminance(a), luminance(b)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def computed(page: Page, selector: str, what: str) -> tuple[int, int, int]:
    return colour(page.evaluate(f"getComputedStyle(document.querySelector('{selector}')).{what}"))


def paper(page: Page) -> tuple[int, int, int]:
    return computed(page, "html", "backgroundColor")


def the_board_reads_well(page: Page) -> None:
    """Each mark on the board against the board's colour, and the two colours apart from each other."""
    board = computed(page, "#board", "backgroundColor")
    blue, red = computed(page, "#board .dot-1", "fill"), computed(page, "#board .dot-2", "fill")
    assert blue[2] > blue[0] and red[0] > red[2]  # still blue and red
    for mark in (
        blue,
        red,
        computed(page, "#board .last", "stroke"),
        computed(page, "#board .realm-1", "stroke"),
    ):
        assert contrast(mark, board) >= READABLE, (mark, board)
    assert contrast(computed(page, "#board .coordinate", "fill"), board) >= READABLE
    opacity = float(page.evaluate("getComputedStyle(document.querySelector('#board .realm-1')).fillOpacity"))
    realm = tuple(opacity * mark + (1 - opacity) * ground for mark, ground in zip(blue, board, strict=True))
    assert contrast(realm, board) >= 1.3  # a realm's inside is a tint the eye tells from the board
    text, ground = computed(page, "body", "color"), paper(page)
    assert contrast(text, ground) >= 7  # the page's text


def choose(page: Page, theme: str) -> None:
    page.select_option("#theme", theme)


def is_dark(page: Page) -> None:
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    assert paper(page) == DARK_PAPER


def is_light(page: Page) -> None:
    expect(page.locator("html")).to_have_attribute("data-theme", "light")
    assert paper(page) == LIGHT_PAPER


def test_the_client_follows_the_system_and_the_switch_overrides_it_after_a_reload(
    players: tuple[Player, Player],
) -> None:
    ala, bob = players  # Ala at 1280x900 on a dark system, Bob on a phone on a light one
    ala.page.emulate_media(color_scheme="dark")
    is_dark(ala.page)  # at once, before logging in
    is_light(bob.page)
    start_game(ala, bob)
    play_until_the_ring(ala, bob)
    ala.play("cd")  # a capture: a realm, a dimmed dot, the last move ringed
    for player in (ala, bob):
        expect(player.page.locator("#board polygon.realm-1")).to_have_count(1)
        the_board_reads_well(player.page)
    is_dark(ala.page)
    is_light(bob.page)
    expect(ala.page.locator("#theme")).to_have_value("auto")
    expect(ala.page.locator("#theme option")).to_have_text(["Auto", "Light", "Dark"])

    choose(ala.page, "light")  # the player's choice over the system's
    is_light(ala.page)
    the_board_reads_well(ala.page)
    choose(bob.page, "dark")
    is_dark(bob.page)
    the_board_reads_well(bob.page)
    for player in (ala, bob):
        player.page.reload()
        expect(player.page.locator("#blue-name")).to_have_text("*Ala")  # the same session, the same game
    is_light(ala.page)
    expect(ala.page.locator("#theme")).to_have_value("light")
    is_dark(bob.page)
    expect(bob.page.locator("#theme")).to_have_value("dark")

    choose(ala.page, "auto")  # back to the system's, which is dark
    is_dark(ala.page)
    ala.page.emulate_media(color_scheme="light")  # the system turns light: the page follows at once
    is_light(ala.page)
    bob.page.select_option("#language", "pl")
    expect(bob.page.locator("#theme option")).to_have_text(["Auto", "Jasne", "Ciemne"])


def test_the_archive_pages_follow_the_same_choice(
    players: tuple[Player, Player], server: ServerInThread
) -> None:
    ala, bob = players
    start_game(ala, bob)
    ala.play("ee")
    bob.play("ff")
    ala.resign()
    expect(bob.page.locator("#sgf")).to_be_visible()  # archived as game 1
    choose(bob.page, "dark")
    page = bob.context.new_page()  # the same browser: the choice is in its localStorage
    for address in ("/games", "/game/1", "/player/*Ala"):
        page.goto(server.base + address)
        expect(page.locator("body[data-ready]")).to_have_count(1)
        is_dark(page)
        expect(page.locator("#theme")).to_have_value("dark")
    page.goto(server.base + "/game/1")  # the board of the replay, dark as the client's
    expect(page.locator("body[data-ready]")).to_have_count(1)
    blue, board = computed(page, "#board .dot-1", "fill"), computed(page, "#board", "backgroundColor")
    assert contrast(blue, board) >= READABLE and board == computed(bob.page, "#board", "backgroundColor")
    choose(page, "light")  # chosen on an archive page: the client's tab follows
    is_light(page)
    is_light(bob.page)
    expect(bob.page.locator("#theme")).to_have_value("light")
    page.close()
