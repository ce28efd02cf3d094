"""A rating change shown at a game's end (issue 47, item 4; docs/ratings.md), in Debian's Chromium at 1280x900
and on a 390x844 touch phone, against the server (tests/static/served.py): two registered players play a
ranked game of two dots, resigned (both tables say it was not rated, and why), then one of 24 dots, the
phone's placed by two taps, resigned too (both tables say the ratings before and after, the numbers those of
the server's /player/<nick>.json); the phone reads both lines again in Polish, and the player page marks one
game rated and the other not, with the reason."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

from tests.static.served import ServerInThread
from tests.static.test_client import Player

LETTERS = "abcdefghij"  # a 10x10 board's columns and rows in SGF
# Dots two points apart, blue's on the top rows and red's on the bottom ones: nothing can be enclosed,
# so all 24 are placed (docs/ratings.md: fewer leave the ratings as they are).
BLUE_DOTS = [x + y for y in "ace" for x in "acegi"][:12]
RED_DOTS = [x + y for y in "jhf" for x in "acegi"][:12]
SHORT = "Not rated: fewer than 24 dots were placed."
SHORT_IN_POLISH = "Bez rankingu: postawiono mniej niż 24 kropki."


def tap_twice(player: Player, point: str) -> None:
    """A dot placed as on a phone: a tap aims at the point, a second tap on it plays there."""
    page = player.page
    expect(page.locator("#turn")).to_have_text("Your move")
    target = f'#board [data-point="{point}"]'
    page.tap(target)
    column, row = LETTERS.index(point[0]) + 1, LETTERS.index(point[1]) + 1
    expect(page.locator("#aim-at")).to_contain_text(f"Aimed at {column}, {row}:")
    expect(page.locator(f'#board [data-dot="{point}"]')).to_have_count(0)
    page.tap(target)
    player.sees_dot(point)


def server_lines(player: Player, text: str) -> Any:
    """The table's server lines that end with `text` (each starts with its time)."""
    return player.page.locator("#chat-lines li.server").filter(has_text=re.compile(re.escape(text) + "$"))


def account(player: Player, server: ServerInThread, nick: str) -> dict[str, Any]:
    answer = player.page.request.get(f"{server.base}/player/{nick}.json")
    assert answer.ok
    return answer.json()


def test_a_short_ranked_game_says_why_it_was_not_rated_and_a_rated_one_shows_the_change(
    players: tuple[Player, Player], server: ServerInThread
) -> None:
    ala, bob = players  # Ala at 1280x900, Bob on the phone
    ala.log_in("Ala", "ala's secret", register=True)
    bob.log_in("Bob", "bob's secret", register=True)
    expect(ala.page.locator('#players li[data-nick="Bob"]')).to_have_count(1)
    ala.set_new_game(size="10x10")  # Ala blue
    ala.page.select_option("#kind", "R")
    ala.page.click('#players li[data-nick="Bob"] .invite')
    expect(bob.page.locator("#invitation")).to_contain_text("Ala invites you: 10×10 standard, ranked game")
    bob.accept()

    ala.play("aa")  # game 1: two dots, then Ala resigns
    bob.sees_dot("aa")
    tap_twice(bob, "aj")
    ala.sees_dot("aj")
    ala.resign()
    for player in (ala, bob):
        expect(player.page.locator("#turn")).to_have_text("Game over: Bob wins by resignation")
        expect(server_lines(player, SHORT)).to_have_count(1)
    before = {nick: account(ala, server, nick) for nick in ("Ala", "Bob")}
    assert [before[nick]["ratings"] for nick in before] == [[], []]  # game 1 changed nothing

    bob.page.click('[data-propose="new"]')  # game 2 at the same table: Bob blue
    expect(ala.page.locator("#proposal")).to_contain_text("Bob proposes")
    ala.page.click("#accept-proposal")
    for player in (ala, bob):
        expect(player.page.locator("#blue-name")).to_have_text("Bob")
        expect(player.page.locator("#board [data-dot]")).to_have_count(0)
    for blue_dot, red_dot in zip(BLUE_DOTS, RED_DOTS, strict=True):
        tap_twice(bob, blue_dot)
        ala.sees_dot(blue_dot)
        ala.play(red_dot)
        bob.sees_dot(red_dot)
    ala.resign()
    for player in (ala, bob):
        expect(player.page.locator("#turn")).to_have_text("Game over: Bob wins by resignation")
        expect(server_lines(player, "Game saved as number 2.")).to_have_count(1)

    after = {nick: account(ala, server, nick) for nick in ("Ala", "Bob")}
    was = {nick: before[nick]["rating"] for nick in before}
    now = {nick: after[nick]["rating"] for nick in after}
    assert now["Bob"] > was["Bob"] and now["Ala"] < was["Ala"]  # the winner up, the loser down
    for nick in after:  # game 2 is each one's only rated game, and left them at their rating now
        assert [(point["game"], point["rating"]) for point in after[nick]["ratings"]] == [(2, now[nick])]
    shown = {nick: f"{nick} {was[nick]} → {now[nick]} ({now[nick] - was[nick]:+d})" for nick in now}
    rated = f"Ratings: {shown['Bob']}, {shown['Ala']}."  # blue first, as the server says it
    for player in (ala, bob):
        expect(server_lines(player, rated)).to_have_count(1)
        expect(server_lines(player, SHORT)).to_have_count(1)  # game 1's line, and no other

    bob.page.select_option("#language", "pl")  # read again from the codes, not shown as sent
    in_polish = rated.replace("Ratings:", "Rankingi:")
    expect(server_lines(bob, in_polish)).to_have_count(1)
    expect(server_lines(bob, SHORT_IN_POLISH)).to_have_count(1)
    bob.page.select_option("#language", "en")  # the player page opens in the language chosen here

    page = bob.context.new_page()  # Bob's player page, on the phone
    page.goto(f"{server.base}/player/Bob")
    expect(page.locator("body[data-ready]")).to_have_count(1)
    expect(page.locator("#rating")).to_have_text(str(now["Bob"]))
    expect(page.locator("#no-rated")).to_be_hidden()
    expect(page.locator("#rating-graph .rating-point")).to_have_count(1)
    rows = page.locator("#game-list li")
    expect(rows).to_have_count(2)
    expect(rows.filter(has_text="#2").locator(".rated")).to_have_text("Rated.")
    expect(rows.filter(has_text="#1").locator(".rated")).to_have_text(SHORT)
    page.close()
