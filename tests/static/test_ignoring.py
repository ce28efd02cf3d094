"""Ignoring a player from the built-in client (docs/client.md, "Ignoring"), in Debian's Chromium against the
server (tests/static/served.py): from the player's row, their lobby chat and private messages are no longer
shown, the list of the ignored says who, and stopping shows what they say next."""

from __future__ import annotations

from playwright.sync_api import Browser, expect

from tests.static.served import ServerInThread
from tests.static.test_client import Player


def test_ignore_a_player_from_their_row_and_stop_again(browser: Browser, server: ServerInThread) -> None:
    ala, bob, cyd = Player(browser, server), Player(browser, server, phone=True), Player(browser, server)
    for player, nick in ((ala, "Ala"), (bob, "Bob"), (cyd, "Cyd")):
        player.log_in(nick)
    expect(ala.page.locator('#players li[data-nick="*Bob"]')).to_have_count(1)
    expect(ala.page.locator("#ignored-heading")).to_be_hidden()
    bob.say("bob before")
    ala.sees_chat("bob before")

    ala.page.click('#players li[data-nick="*Bob"] .ignore')
    expect(ala.page.locator('#ignored li[data-nick="*Bob"]')).to_have_count(1)
    expect(ala.page.locator("#ignored-heading")).to_have_text("Ignored players")
    expect(ala.page.locator('#players li[data-nick="*Bob"] .ignore')).to_have_text("Stop ignoring")
    expect(ala.page.locator("#chat-lines")).not_to_contain_text("bob before")  # from view too

    bob.say("bob while ignored")
    bob.page.click('#players li[data-nick="*Ala"] .message')
    bob.page.fill("#chat-text", "bob in private")
    bob.page.click("#chat-form button")
    expect(bob.page.locator("#notice")).to_have_text("That player does not accept your private messages.")
    cyd.say("cyd after bob")  # after Bob's lines: once Ala reads it, she has had his
    ala.sees_chat("cyd after bob")
    expect(ala.page.locator("#chat-lines")).not_to_contain_text("bob while ignored")
    expect(ala.page.locator('#chat-tabs [data-chat="p*Bob"]')).to_have_count(0)

    ala.page.click('#ignored li[data-nick="*Bob"] .unignore')
    expect(ala.page.locator("#ignored-heading")).to_be_hidden()
    expect(ala.page.locator('#players li[data-nick="*Bob"] .ignore')).to_have_text("Ignore")
    bob.page.fill("#chat-text", "bob in private again")
    bob.page.click("#chat-form button")
    expect(bob.page.locator("#chat-text")).to_have_value("")
    bob.page.click('#chat-tabs [data-chat="0"]')
    bob.say("bob heard again")
    ala.sees_chat("bob heard again")
    expect(ala.page.locator("#chat-lines")).not_to_contain_text("bob while ignored")  # never came
    ala.page.click('#chat-tabs [data-chat="p*Bob"]')
    ala.sees_chat("bob in private again")
    for player in (ala, bob, cyd):
        player.close()
