"""A registered player's "No private messages from guests" in the built-in client (docs/client.md), in
Debian's Chromium against the server (tests/static/served.py): ticked, a guest's private message is
refused as an ignored writer's is, a registered player's still comes; a guest has no such box."""

from __future__ import annotations

from playwright.sync_api import Browser, expect

from tests.static.served import ServerInThread
from tests.static.test_client import Player


def write_to(writer: Player, nick: str, text: str) -> None:
    writer.page.click(f'#players li[data-nick="{nick}"] .message')
    writer.page.fill("#chat-text", text)
    writer.page.click("#chat-form button")


def test_a_registered_player_refuses_guests_private_messages(
    browser: Browser, server: ServerInThread
) -> None:
    bob, ala, carol = Player(browser, server), Player(browser, server, phone=True), Player(browser, server)
    bob.log_in("Bob", "secret", register=True)
    carol.log_in("Carol", "secret", register=True)
    ala.log_in("Ala")
    switch = bob.page.locator("#guest-privates")
    expect(bob.page.locator("#guest-privates-switch")).to_contain_text("No private messages from guests")
    expect(switch).not_to_be_checked()
    expect(ala.page.locator("#guest-privates-switch")).to_be_hidden()

    switch.check()
    expect(switch).to_be_checked()
    write_to(ala, "Bob", "cheap gold")
    expect(ala.page.locator("#notice")).to_have_text("That player does not accept your private messages.")
    write_to(carol, "Bob", "a game?")
    bob.page.click('#chat-tabs [data-chat="pCarol"]')
    bob.sees_chat("a game?")
    expect(bob.page.locator('#chat-tabs [data-chat="p*Ala"]')).to_have_count(0)

    switch.uncheck()
    expect(switch).not_to_be_checked()
    ala.page.fill("#chat-text", "hello again")
    ala.page.click("#chat-form button")
    expect(ala.page.locator("#chat-text")).to_have_value("")
    bob.page.click('#chat-tabs [data-chat="p*Ala"]')
    bob.sees_chat("hello again")
    for player in (bob, ala, carol):
        player.close()
