"""A team game in the built-in client (docs/teams.md), in Debian's Chromium against the server
(tests/static/served.py): four players in four pages, the team invitation from the "New game" form, both teams
at the table with the player on move marked, "Your move" only for that player, a proposition the whole table
decides, and the game over when the last player of a team resigns."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import Browser, expect

from tests.static.served import ServerInThread
from tests.static.test_client import Player


@pytest.fixture
def four(browser: Browser, server: ServerInThread) -> Iterator[list[Player]]:
    people = [Player(browser, server, phone=nick == "Dan") for nick in ("Ala", "Bob", "Cid", "Dan")]
    for person, nick in zip(people, ("Ala", "Bob", "Cid", "Dan"), strict=True):
        person.log_in(nick)
    yield people
    for person in people:
        person.close()


def test_two_against_two_from_the_invitation_to_the_last_resignation(
    four: list[Player], server: ServerInThread, tmp_path: Path
) -> None:
    ala, bob, cid, dan = four
    expect(ala.page.locator('#players li[data-nick="*Dan"]')).to_have_count(1)
    ala.set_new_game()  # 10x10, standard, the inviter's team blue
    ala.page.fill("#team-mates", "*Cid")
    ala.page.fill("#opponents", "*Bob, *Dan")
    ala.page.click("#invite-team")
    expect(ala.page.locator("#invitation")).to_contain_text("You invited the teams *Ala, *Cid – *Bob, *Dan")
    for person in (bob, cid, dan):
        expect(person.page.locator("#invitation")).to_contain_text("*Ala invites you to a team game")
    cid.accept()
    expect(cid.page.locator("#invitation .waiting")).to_have_text("Waiting for: *Bob, *Dan")
    expect(cid.page.locator("#accept-invitation")).to_have_count(0)
    expect(ala.page.locator("#invitation .waiting")).to_have_text("Waiting for: *Bob, *Dan")
    bob.accept()
    dan.accept()

    for person in four:
        expect(person.page.locator("#blue-name")).to_have_text("*Ala, *Cid")
        expect(person.page.locator("#red-name")).to_have_text("*Bob, *Dan")
        expect(person.page.locator("#blue-name a.turn")).to_have_text("*Ala")
    for person in (bob, cid, dan):
        expect(person.page.locator("#turn")).to_have_text("*Ala to move")

    for person, point, nxt in (
        (ala, "bb", "*Bob"),
        (bob, "ii", "*Cid"),
        (cid, "bc", "*Dan"),
        (dan, "ij", "*Ala"),
    ):
        if person is dan:  # a phone: the first tap aims, the second places
            expect(dan.page.locator("#turn")).to_have_text("Your move")
            dan.page.locator(f'#board [data-point="{point}"]').tap()
            dan.page.locator(f'#board [data-point="{point}"]').tap()
        else:
            person.play(point)
        for other in four:
            other.sees_dot(point)
            expect(other.page.locator("#game-head a.turn")).to_have_text(nxt)
    expect(ala.page.locator("#turn")).to_have_text("Your move")
    cid.page.click('#board [data-point="dd"]')  # not *Cid's turn: the client sends nothing
    expect(cid.page.locator('#board [data-dot="dd"]')).to_have_count(0)

    bob.page.click('[data-propose="drop"]')
    bob.page.click('[data-propose="drop"]')  # asked once, then done
    expect(dan.page.locator("#proposal")).to_contain_text("*Bob proposes: cancel the game")
    ala.page.click("#accept-proposal")
    expect(cid.page.locator("#proposal")).to_contain_text("agreed so far: *Ala")
    expect(ala.page.locator("#accept-proposal")).to_have_count(0)
    cid.page.click("#reject-proposal")
    for person in four:
        expect(person.page.locator("#proposal")).to_be_hidden()
        person.sees_chat("*Cid declined to cancel the game.")

    bob.resign()  # *Bob is out: *Dan plays on for team two
    expect(bob.page.locator("#turn")).to_have_text("Watching · *Ala to move")
    dan.sees_chat("*Bob resigned and left the game.")
    ala.play("cc")
    expect(dan.page.locator("#turn")).to_have_text("Your move")
    dan.resign()
    for person in (ala, cid):
        expect(person.page.locator("#turn")).to_have_text("Game over: *Ala, *Cid wins by resignation")
    for person in (bob, dan):  # out of the game: they watch its end
        expect(person.page.locator("#turn")).to_have_text(
            "Watching · Game over: *Ala, *Cid wins by resignation"
        )
    record = ala.page.request.get(ala.page.locator("#sgf").evaluate("link => link.href"))
    assert record.ok and "PB[*Ala, *Cid]PW[*Bob, *Dan]" in record.text() and "RE[B+R]" in record.text()
    ala.screenshot(tmp_path, "ala")

    archive = cid.page  # the archive lists the game under each player, with a link to each
    archive.goto(f"{server.base}/player/{quote('*Dan')}")
    expect(archive.locator("#game-list .game-row .players a.nick")).to_have_text(
        ["*Ala", "*Cid", "*Bob", "*Dan"]
    )
    archive.goto(f"{server.base}/game/1")
    expect(archive.locator("#red-name a")).to_have_text(["*Bob", "*Dan"])
    archive.locator("#red-name a", has_text="*Dan").click()
    expect(archive.locator("#heading")).to_have_text("*Dan")
